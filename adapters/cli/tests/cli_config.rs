//! `mcpwire --config FILE [--server NAME]`: a server from a host's configuration file, run as
//! a subprocess against the built-in demo server.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

fn mcpwire(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpwire"));
    cmd.args(args).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Writes `servers` (the value of `mcpServers`) as a Claude Code project file; `{BIN}` stands
/// for this build's `mcpwire`.
fn config(servers: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "mcpwire-cli-config-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = serde_json::to_string(env!("CARGO_BIN_EXE_mcpwire")).unwrap();
    let path = dir.join(".mcp.json");
    let body = format!("{{\"mcpServers\": {}}}", servers.replace("\"{BIN}\"", &bin));
    std::fs::write(&path, body).unwrap();
    path
}

#[test]
fn the_only_server_of_a_file_is_used_with_its_variables_expanded() {
    let path = config(r#"{"demo": {"command": "{BIN}", "args": ["${DEMO_COMMAND}"]}}"#);
    let o = mcpwire(
        &["--config", path.to_str().unwrap(), "tools"],
        &[("DEMO_COMMAND", "serve-demo")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with("NAME"), "{out}");
    assert!(out.contains("echo"), "{out}");
}

#[test]
fn server_picks_one_of_several_and_the_files_era_applies() {
    let path = config(
        r#"{
            "modern": {"command": "{BIN}", "args": ["serve-demo"], "protocolEra": "modern"},
            "legacy": {"command": "{BIN}", "args": ["serve-demo"], "protocolEra": "legacy"}
        }"#,
    );
    let file = path.to_str().unwrap();
    let o = mcpwire(&["--config", file, "info"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("several servers; choose one with --server: modern, legacy"),
        "{}",
        text(&o.stderr)
    );
    let o = mcpwire(&["--config", file, "--server", "legacy", "info"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("era:          handshake"));
    let o = mcpwire(&["--config", file, "--server", "modern", "info"], &[]);
    assert!(text(&o.stdout).contains("era:          stateless"));
    let o = mcpwire(
        &[
            "--config",
            file,
            "--server",
            "legacy",
            "--era",
            "stateless",
            "info",
        ],
        &[],
    );
    assert!(
        text(&o.stdout).contains("era:          stateless"),
        "--era wins over the file"
    );
    let o = mcpwire(&["--config", file, "--server", "nope", "info"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no server named `nope`"));
}

#[test]
fn configuration_errors_are_usage_errors_that_print_no_value() {
    let path = config(
        r#"{"remote": {"type": "http", "url": "http://127.0.0.1:9/mcp",
            "headers": {"Authorization": "Bearer ${MCPWIRE_TEST_UNSET_TOKEN}"}}}"#,
    );
    let o = mcpwire(&["--config", path.to_str().unwrap(), "tools"], &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains(
            "`headers.Authorization` refers to `${MCPWIRE_TEST_UNSET_TOKEN}`, which is not set"
        ),
        "{err}"
    );
    let o = mcpwire(&["--config", "/no/such/file.json", "tools"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("cannot read"));
    let o = mcpwire(
        &["--config", path.to_str().unwrap(), "--stdio", "x", "tools"],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "--config and --stdio conflict");
}

#[test]
fn inputs_need_a_terminal_and_verbose_output_hides_secrets() {
    let dir = config("{}").parent().unwrap().to_owned();
    let vscode = dir.join(".vscode");
    std::fs::create_dir_all(&vscode).unwrap();
    let bin = serde_json::to_string(env!("CARGO_BIN_EXE_mcpwire")).unwrap();
    std::fs::write(
        vscode.join("mcp.json"),
        format!(
            r#"{{"inputs": [{{"type": "promptString", "id": "key", "password": true}}],
                "servers": {{"demo": {{"command": {bin}, "args": ["serve-demo", "${{input:key}}"]}}}}}}"#
        ),
    )
    .unwrap();
    let file = vscode.join("mcp.json");
    let o = mcpwire(&["--config", file.to_str().unwrap(), "tools"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("the input `key` was not given: stdin is not a terminal"),
        "{}",
        text(&o.stderr)
    );
    let path = config(
        r#"{"demo": {"command": "{BIN}", "args": ["serve-demo"], "env": {"TOKEN": "${DEMO_SECRET}"}, "extra": 1}}"#,
    );
    let o = mcpwire(
        &["--config", path.to_str().unwrap(), "-v", "tools"],
        &[("DEMO_SECRET", "SECRET-value")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("read as Claude Code's file (by its name)"),
        "{err}"
    );
    assert!(err.contains("`extra` is not used by mcpwire"), "{err}");
    assert!(err.contains("· demo: stdio `"), "{err}");
    assert!(!err.contains("SECRET-value"), "{err}");
}
