//! `mcpwire --config FILE [--server NAME]`: a server from a host's configuration file, run as
//! a subprocess against the built-in demo server.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::{assert_contains, mcpwire, mcpwire_env, temp, text, with_bin, BIN};

/// Writes `servers` (the value of `mcpServers`) as a Claude Code project file; `{BIN}` stands
/// for this build's `mcpwire`.
fn config(servers: &str) -> PathBuf {
    let path = temp("config").join(".mcp.json");
    let body = format!("{{\"mcpServers\": {}}}", with_bin(servers));
    std::fs::write(&path, body).unwrap();
    path
}

#[test]
fn the_only_server_of_a_file_is_used_with_its_variables_expanded() {
    let path = config(r#"{"demo": {"command": "{BIN}", "args": ["${DEMO_COMMAND}"]}}"#);
    let o = mcpwire_env(
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
    let o = mcpwire_env(&["--config", file, "info"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(
        &text(&o.stderr),
        "several servers; choose one with --server: modern, legacy",
    );
    let o = mcpwire_env(&["--config", file, "--server", "legacy", "info"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("era:          handshake"));
    let o = mcpwire_env(&["--config", file, "--server", "modern", "info"], &[]);
    assert!(text(&o.stdout).contains("era:          stateless"));
    let o = mcpwire_env(
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
    let o = mcpwire_env(&["--config", file, "--server", "nope", "info"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no server named `nope`"));
}

#[test]
fn configuration_errors_are_usage_errors_that_print_no_value() {
    let path = config(
        r#"{"remote": {"type": "http", "url": "http://127.0.0.1:9/mcp",
            "headers": {"Authorization": "Bearer ${MCPWIRE_TEST_UNSET_TOKEN}"}}}"#,
    );
    let o = mcpwire_env(&["--config", path.to_str().unwrap(), "tools"], &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains(
            "`headers.Authorization` refers to `${MCPWIRE_TEST_UNSET_TOKEN}`, which is not set"
        ),
        "{err}"
    );
    let o = mcpwire_env(&["--config", "/no/such/file.json", "tools"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("cannot read"));
    let o = mcpwire_env(
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
    let bin = serde_json::to_string(BIN).unwrap();
    std::fs::write(
        vscode.join("mcp.json"),
        format!(
            r#"{{"inputs": [{{"type": "promptString", "id": "key", "password": true}}],
                "servers": {{"demo": {{"command": {bin}, "args": ["serve-demo", "${{input:key}}"]}}}}}}"#
        ),
    )
    .unwrap();
    let file = vscode.join("mcp.json");
    let o = mcpwire_env(&["--config", file.to_str().unwrap(), "tools"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(
        &text(&o.stderr),
        "the input `key` was not given: stdin is not a terminal",
    );
    let path = config(
        r#"{"demo": {"command": "{BIN}", "args": ["serve-demo"], "env": {"TOKEN": "${DEMO_SECRET}"}, "extra": 1}}"#,
    );
    let o = mcpwire_env(
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

/// One host's file: where it goes (under the project directory, or the home directory for
/// `~/…`), its text (`{BIN}` stands for this build's `mcpwire` as a JSON string, `{PROJECT}`
/// for the project directory), the server to run, what `--verbose` says it is read as, and
/// the era the server is spoken to in.
struct HostFile {
    path: &'static str,
    text: &'static str,
    server: &'static str,
    read_as: &'static str,
    era: &'static str,
}

const HOST_FILES: &[HostFile] = &[
    HostFile {
        path: "~/.config/Claude/claude_desktop_config.json",
        text: r#"{"mcpServers": {"demo": {"command": {BIN}, "args": ["serve-demo"]}}}"#,
        server: "demo",
        read_as: "Claude Desktop's file",
        era: "stateless",
    },
    HostFile {
        path: ".mcp.json",
        text: r#"{"mcpServers": {"demo": {"type": "stdio", "command": "${MCPWIRE_TEST_BIN}",
                  "args": ["${MCPWIRE_TEST_UNSET:-serve-demo}"]}}}"#,
        server: "demo",
        read_as: "Claude Code's file",
        era: "stateless",
    },
    HostFile {
        // The user's file, with this project's own servers under `projects`.
        path: "~/.claude.json",
        text: r#"{"projects": {"{PROJECT}": {"mcpServers": {
                      "local": {"command": {BIN}, "args": ["serve-demo"]}}}},
                  "mcpServers": {"user": {"command": "no-such-command"}}}"#,
        server: "local",
        read_as: "Claude Code's file",
        era: "stateless",
    },
    HostFile {
        path: ".cursor/mcp.json",
        text: r#"{"mcpServers": {"demo": {"command": "${env:MCPWIRE_TEST_BIN}",
                  "args": ["serve-demo"], "env": {"HOME_WAS": "${userHome}"}}}}"#,
        server: "demo",
        read_as: "Cursor's file",
        era: "stateless",
    },
    HostFile {
        path: ".vscode/mcp.json",
        text: r#"{"inputs": [], "servers": {"demo": {"type": "stdio",
                  "command": "${env:MCPWIRE_TEST_BIN}", "args": ["serve-demo"],
                  "cwd": "${workspaceFolder}"}}}"#,
        server: "demo",
        read_as: "VS Code's file",
        era: "stateless",
    },
    HostFile {
        path: "~/.copilot/mcp-config.json",
        text: r#"{"mcpServers": {"demo": {"type": "local", "command": {BIN},
                  "args": ["serve-demo"], "tools": ["*"]}}}"#,
        server: "demo",
        read_as: "Copilot's file",
        era: "stateless",
    },
    HostFile {
        path: "~/.codeium/windsurf/mcp_config.json",
        text: r#"{"mcpServers": {"demo": {"command": "${env:MCPWIRE_TEST_BIN}",
                  "args": ["serve-demo"]}}}"#,
        server: "demo",
        read_as: "Windsurf's file",
        era: "stateless",
    },
    HostFile {
        // Zed's current form, and its older `command` object.
        path: ".zed/settings.json",
        text: r#"{"theme": "One Dark", "context_servers": {
                  "demo": {"source": "custom", "command": {BIN}, "args": ["serve-demo"]},
                  "older": {"command": {"path": {BIN}, "args": ["serve-demo"]}}}}"#,
        server: "demo",
        read_as: "Zed's file",
        era: "stateless",
    },
    HostFile {
        path: ".zed/settings.json",
        text: r#"{"context_servers": {
                  "older": {"command": {"path": {BIN}, "args": ["serve-demo"], "env": {}}}}}"#,
        server: "older",
        read_as: "Zed's file",
        era: "stateless",
    },
    HostFile {
        path: ".codex/config.toml",
        text: "model = \"o3\"\n\n[mcp_servers.demo]\ncommand = {BIN}\nargs = [\"serve-demo\"]\n\
               startup_timeout_sec = 20\n",
        server: "demo",
        read_as: "Codex's file",
        era: "stateless",
    },
    HostFile {
        path: ".gemini/settings.json",
        text: r#"{"mcpServers": {"demo": {"command": "${MCPWIRE_TEST_BIN}", "args": ["serve-demo"],
                  "env": {"DEMO_HOME": "$HOME"}, "timeout": 20000}}}"#,
        server: "demo",
        read_as: "Gemini CLI's file",
        era: "stateless",
    },
    HostFile {
        path: "~/.mcp-inspector/mcp.json",
        text: r#"{"mcpServers": {"demo": {"command": {BIN}, "args": ["serve-demo"],
                  "protocolEra": "legacy", "connectionTimeout": 20000}}}"#,
        server: "demo",
        read_as: "the MCP Inspector's file",
        // Its `protocolEra` holds.
        era: "handshake",
    },
    HostFile {
        path: "~/.config/mcp/mcp.json",
        text: r#"{"mcpServers": {"demo": {"command": "${MCPWIRE_TEST_BIN}",
                  "args": ["serve-demo"]}}}"#,
        server: "demo",
        read_as: "a generic mcpServers file",
        era: "stateless",
    },
];

#[test]
fn a_file_of_every_host_s_format_runs_its_server() {
    let root = config("{}").parent().unwrap().to_owned();
    let bin = serde_json::to_string(BIN).unwrap();
    let mut failures = Vec::new();
    for (i, f) in HOST_FILES.iter().enumerate() {
        // Each file in a directory of its own, so that no other host's file is beside it.
        let base = root.join(format!("case-{i}"));
        let path = match f.path.strip_prefix("~/") {
            Some(rest) => base.join("home").join(rest),
            None => base.join("project").join(f.path),
        };
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let project = base.join("project");
        std::fs::create_dir_all(&project).unwrap();
        let body = f
            .text
            .replace("{BIN}", &bin)
            .replace("{PROJECT}", project.to_str().unwrap());
        std::fs::write(&path, body).unwrap();
        let file = path.to_str().unwrap();
        let run = |args: &[&str]| {
            Command::new(BIN)
                .args(args)
                .current_dir(&project)
                .env("HOME", base.join("home"))
                .env("MCPWIRE_TEST_BIN", BIN)
                .env_remove("MCPWIRE_TEST_UNSET")
                .stdin(Stdio::null())
                .output()
                .expect("the binary runs")
        };
        // `servers` lists it…
        let o = run(&["servers", "--no-connect", "--json", "--config", file]);
        let listed = serde_json::from_slice::<serde_json::Value>(&o.stdout)
            .ok()
            .and_then(|v| v["servers"].as_array().cloned())
            .is_some_and(|l| l.iter().any(|s| s["name"] == f.server));
        if !listed {
            failures.push(format!(
                "{} ({}): `servers` does not list {}:\n{}{}",
                f.path,
                f.read_as,
                f.server,
                text(&o.stdout),
                text(&o.stderr)
            ));
        }
        // …and `--server NAME` runs it.
        let o = run(&["-v", "--config", file, "--server", f.server, "tools"]);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        let read_as = format!(": read as {} (by its name)\n", f.read_as);
        let era = format!("· ready: {} era", f.era);
        let listed = ["echo ", "add ", "ask "]
            .iter()
            .all(|t| out.lines().any(|l| l.starts_with(t)));
        if o.status.code() != Some(0) || !listed || !err.contains(&read_as) || !err.contains(&era) {
            failures.push(format!(
                "{} ({}, --server {}): exit {:?}\n{out}{err}",
                f.path,
                f.read_as,
                f.server,
                o.status.code()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The stand-in server whose tool `env` answers the names of its environment's variables.
const ENV_SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/env_server.py");

/// The names of the variables the server at `file` (its server `env`) was started with.
fn server_env(file: &std::path::Path, env: &[(&str, &str)]) -> Vec<String> {
    let o = mcpwire_env(
        &[
            "--config",
            file.to_str().unwrap(),
            "--server",
            "env",
            "call",
            "env",
        ],
        env,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    text(&o.stdout).lines().map(str::to_owned).collect()
}

/// The Python interpreter itself, not a wrapper script in front of it that would set
/// variables of its own (pyenv's shims do).
fn python() -> String {
    let o = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    text(&o.stdout).trim().to_owned()
}

#[test]
fn a_server_from_a_codex_file_gets_codexs_variables_its_env_vars_and_its_env_only() {
    let path = temp("codex-env").join("config.toml");
    let python = python();
    std::fs::write(
        &path,
        format!(
            "[mcp_servers.env]\ncommand = {python:?}\nargs = [{ENV_SERVER:?}]\n\
             env_vars = [\"PASSED_THROUGH\"]\nenv = {{ OWN = \"mine\" }}\n"
        ),
    )
    .unwrap();
    let names = server_env(
        &path,
        &[("PASSED_THROUGH", "1"), ("NOT_FOR_SERVERS", "secret")],
    );
    for name in ["PATH", "HOME", "PASSED_THROUGH", "OWN"] {
        assert!(names.iter().any(|n| n == name), "{name} missing: {names:?}");
    }
    assert!(!names.iter().any(|n| n == "NOT_FOR_SERVERS"), "{names:?}");
    // Nothing beyond Codex's list, the names in `env_vars` and the server's `env` (and
    // `LC_CTYPE`, which Python sets itself under the C locale).
    let allowed: Vec<&str> = mcpwire::hosts::CODEX_ENV_VARS
        .iter()
        .copied()
        .chain(["PASSED_THROUGH", "OWN", "LC_CTYPE"])
        .collect();
    for name in &names {
        assert!(allowed.contains(&name.as_str()), "{name} passed: {names:?}");
    }
}

#[test]
fn a_vs_code_null_in_env_removes_the_variable_and_the_rest_is_inherited() {
    let path = temp("vscode-env").join("mcp.json");
    std::fs::write(
        &path,
        format!(
            r#"{{"servers": {{"env": {{"type": "stdio", "command": {:?}, "args": [{ENV_SERVER:?}],
                "env": {{"REMOVED": null, "OWN": "mine"}}}}}}}}"#,
            python()
        ),
    )
    .unwrap();
    let names = server_env(&path, &[("REMOVED", "1"), ("INHERITED", "2")]);
    for name in ["INHERITED", "OWN", "PATH"] {
        assert!(names.iter().any(|n| n == name), "{name} missing: {names:?}");
    }
    assert!(!names.iter().any(|n| n == "REMOVED"), "{names:?}");
}

#[test]
fn a_files_tool_filter_holds_for_tools_and_call_on_one_server() {
    let path = temp("filter").join(".gemini").join("settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        with_bin(
            r#"{"mcpServers": {"demo": {"command": "{BIN}", "args": ["serve-demo"],
                "excludeTools": ["echo"]}}}"#,
        ),
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let o = mcpwire(&["--config", file, "--server", "demo", "tools"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with("NAME"), "{out}");
    assert!(
        !out.lines().any(|l| l.starts_with("echo ")),
        "echo is filtered out: {out}"
    );
    let o = mcpwire(&[
        "--config", file, "--server", "demo", "call", "echo", "text=hi",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert_contains(&text(&o.stderr), "does not allow its tool echo");
}

/// `${workspaceFolder}` is the folder the file belongs to as an absolute path, however
/// `--config` names the file: from within the project (`.vscode/mcp.json`), from its parent,
/// or through `..`. VS Code's file and Cursor's alike.
#[test]
fn the_workspace_folder_is_absolute_whatever_path_names_the_file() {
    let dir = temp("workspace");
    let project = dir.join("proj");
    std::fs::create_dir_all(project.join("sub")).unwrap();
    // The server is a script in the project, run by its path from `${workspaceFolder}`.
    let script = format!("exec {} serve-demo\n", serde_json::to_string(BIN).unwrap());
    std::fs::write(project.join("run.sh"), script).unwrap();
    let server = r#"{"command": "sh", "args": ["${workspaceFolder}/run.sh"]}"#;
    for (folder, body) in [
        (".vscode", format!(r#"{{"servers": {{"demo": {server}}}}}"#)),
        (
            ".cursor",
            format!(r#"{{"mcpServers": {{"demo": {server}}}}}"#),
        ),
    ] {
        std::fs::create_dir_all(project.join(folder)).unwrap();
        std::fs::write(project.join(folder).join("mcp.json"), body).unwrap();
        let file = format!("{folder}/mcp.json");
        for (cwd, config) in [
            (project.clone(), file.clone()),
            (dir.clone(), format!("proj/{file}")),
            (project.join("sub"), format!("../{file}")),
        ] {
            let run = |args: &[&str]| {
                Command::new(BIN)
                    .args(["--config", &config])
                    .args(args)
                    .current_dir(&cwd)
                    .stdin(Stdio::null())
                    .output()
                    .unwrap()
            };
            let o = run(&["servers", "--no-connect", "--json"]);
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let wanted = format!("sh {}/run.sh", project.display());
            assert_eq!(v["servers"][0]["target"], wanted.as_str(), "{config}");
            let o = run(&["tools"]);
            assert_eq!(o.status.code(), Some(0), "{config}: {}", text(&o.stderr));
            assert_contains(&text(&o.stdout), "echo");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
