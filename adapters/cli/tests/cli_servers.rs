//! `--server NAME` found in a host's usual places, `mcpwire servers`, and the timeouts a
//! configuration file sets for its server. The binary runs with `HOME` set to a temporary
//! directory and the current directory set to another: the real home is never read.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{assert_contains, text, with_bin, BIN};

/// A new empty folder for this file's tests.
fn temp(tag: &str) -> PathBuf {
    common::temp(&format!("servers-{tag}"))
}

/// Runs `mcpwire` with `home` as the home directory and an empty current directory.
fn mcpwire(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .stdin(Stdio::null())
        .current_dir(temp("cwd"))
        .env("HOME", home);
    for var in ["CODEX_HOME", "XDG_CONFIG_HOME", "APPDATA", "USERPROFILE"] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the binary runs")
}

/// A home directory holding `~/.codex/config.toml` with `body`; `{BIN}` stands for this
/// build's `mcpwire`.
fn codex_home(body: &str) -> PathBuf {
    let home = temp("home");
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::write(home.join(".codex/config.toml"), with_bin(body)).unwrap();
    home
}

/// A handshake-era server as a shell script that answers the handshake and never a request;
/// it ends at the end of its input.
fn mute_script() -> PathBuf {
    let script = temp("mute").join("mute.sh");
    let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"mute","version":"1"}}}"#;
    std::fs::write(
        &script,
        format!("read l\ncat <<'EOF'\n{init}\nEOF\nwhile read l; do :; done\n"),
    )
    .unwrap();
    script
}

#[test]
fn server_name_alone_is_found_in_the_home_directory() {
    let home = codex_home("[mcp_servers.demo]\ncommand = \"{BIN}\"\nargs = [\"serve-demo\"]\n");
    let o = mcpwire(&home, &["--server", "demo", "--verbose", "tools"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_contains(&text(&o.stdout), "add");
    let said = text(&o.stderr);
    assert!(
        said.contains("demo: from")
            && said.contains(".codex/config.toml")
            && said.contains("Codex"),
        "{said}"
    );
    assert!(said.contains("· demo: stdio `"), "{said}");
    // A name that is nowhere: a usage error naming what there is.
    let o = mcpwire(&home, &["--server", "other", "tools"], &[]);
    assert_eq!(o.status.code(), Some(2));
    let said = text(&o.stderr);
    assert!(
        said.contains("`other`") && said.contains("found: demo"),
        "{said}"
    );
    // With nothing configured at all.
    let o = mcpwire(&temp("empty"), &["--server", "demo", "tools"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&text(&o.stderr), "none was found");
    // --server names a configured server; it does not go with --stdio.
    let o = mcpwire(&home, &["--server", "demo", "--stdio", "x", "tools"], &[]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn servers_lists_a_file_and_the_usual_places_without_secrets() {
    let dir = temp("file");
    let file = dir.join(".mcp.json");
    std::fs::write(
        &file,
        r#"{"mcpServers": {
            "remote": {"type": "http", "url": "https://user:pw@example.com/mcp?key=${SECRET_Q}",
                       "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "local": {"command": "run-it", "args": ["--token", "${TOKEN}"], "disabled": true}
        }}"#,
    )
    .unwrap();
    let env = [("SECRET_Q", "s3cretq"), ("TOKEN", "t0kenvalue")];
    let file_arg = file.to_str().unwrap();
    let o = mcpwire(
        &temp("empty"),
        &["servers", "--no-connect", "--config", file_arg],
        &env,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for secret in ["s3cretq", "t0kenvalue", "pw@"] {
        assert!(!out.contains(secret), "{secret} printed: {out}");
    }
    assert!(
        out.contains("remote") && out.contains("example.com/mcp"),
        "{out}"
    );
    assert!(out.contains("run-it --token ***"), "{out}");
    let o = mcpwire(
        &temp("empty"),
        &["servers", "--no-connect", "--config", file_arg, "--json"],
        &env,
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let servers = v["servers"].as_array().unwrap();
    let local = servers.iter().find(|s| s["name"] == "local").unwrap();
    assert_eq!(local["enabled"], false);
    assert_eq!(local["transport"], "stdio");
    assert_eq!(local["host"], "Claude Code");
    let remote = servers.iter().find(|s| s["name"] == "remote").unwrap();
    assert_eq!(remote["era"], "auto");
    assert!(!v.to_string().contains("t0kenvalue"));
    // Without --config: the home directory's hosts.
    let home = codex_home("[mcp_servers.demo]\ncommand = \"{BIN}\"\nargs = [\"serve-demo\"]\n");
    let o = mcpwire(&home, &["servers", "--json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["servers"][0]["name"], "demo", "{v}");
    assert_eq!(v["servers"][0]["host"], "Codex", "{v}");
}

#[test]
fn the_file_s_timeouts_hold_unless_timeout_is_given() {
    let mute = serde_json::to_string(mute_script().to_str().unwrap()).unwrap();
    let home = codex_home(&format!(
        "[mcp_servers.mute]\ncommand = \"sh\"\nargs = [{mute}]\ntool_timeout_sec = 0.3\n\n\
         [mcp_servers.silent]\ncommand = \"sh\"\nargs = [\"-c\", \"sleep 20\"]\n\
         startup_timeout_sec = 0.3\n"
    ));
    let ping = ["--server", "mute", "--era", "handshake", "ping"];
    let started = Instant::now();
    let o = mcpwire(&home, &ping, &[]);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    assert!(started.elapsed() < Duration::from_secs(5));
    // The same with the file given by --config.
    let file = home.join(".codex/config.toml");
    let started = Instant::now();
    let args = ["--config", file.to_str().unwrap(), "--server", "mute"];
    let o = mcpwire(
        &home,
        &[&args[..], &["--era", "handshake", "ping"]].concat(),
        &[],
    );
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    assert!(started.elapsed() < Duration::from_secs(5));
    // --timeout wins over the file's.
    let started = Instant::now();
    let o = mcpwire(&home, &[&ping[..], &["--timeout", "2"]].concat(), &[]);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    assert!(started.elapsed() >= Duration::from_secs(2));
    // The startup timeout bounds the handshake.
    let started = Instant::now();
    let o = mcpwire(
        &home,
        &["--server", "silent", "--era", "handshake", "info"],
        &[],
    );
    assert_ne!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_server_from_a_file_that_fails_is_named_without_its_secrets() {
    let dir = temp("secret-fails");
    let file = dir.join(".mcp.json");
    std::fs::write(
        &file,
        r#"{"mcpServers": {"local": {"command": "/nonexistent/run-it", "args": ["--token", "${TOKEN}"]}}}"#,
    )
    .unwrap();
    let file_arg = file.to_str().unwrap();
    let o = mcpwire(
        &temp("empty"),
        &["--config", file_arg, "tools"],
        &[("TOKEN", "t0kenvalue")],
    );
    assert_ne!(o.status.code(), Some(0));
    let said = text(&o.stderr);
    assert!(
        !said.contains("t0kenvalue"),
        "the secret was printed: {said}"
    );
    assert!(said.contains("/nonexistent/run-it --token ***"), "{said}");
}

/// `--server NAME servers` lists that server alone (with --config or without, started or
/// not), a name that is nowhere is a usage error naming what there is, and with no host's
/// file at all `servers` says where it looked instead of printing an empty table.
#[test]
fn servers_keeps_to_server_name_and_says_where_it_looked_when_there_is_nothing() {
    let home = codex_home(
        "[mcp_servers.one]\ncommand = \"{BIN}\"\nargs = [\"serve-demo\"]\n\n\
         [mcp_servers.two]\ncommand = \"{BIN}\"\nargs = [\"serve-demo\"]\n",
    );
    let file = home.join(".codex/config.toml");
    let file_arg = file.to_str().unwrap();
    let names = |o: &Output| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", text(&o.stderr)));
        let rows = v["servers"].as_array().unwrap();
        rows.iter()
            .map(|r| r["name"].as_str().unwrap().to_owned())
            .collect()
    };
    for args in [
        &["--server", "two", "servers", "--json"][..],
        &["--server", "two", "servers", "--no-connect", "--json"][..],
        &[
            "--config",
            file_arg,
            "--server",
            "two",
            "servers",
            "--no-connect",
            "--json",
        ][..],
    ] {
        let o = mcpwire(&home, args, &[]);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
        assert_eq!(names(&o), ["two"], "{args:?}");
    }
    let o = mcpwire(&home, &["--server", "three", "servers"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_contains(&text(&o.stderr), "no server named `three`");
    assert_contains(&text(&o.stderr), "found: one, two");
    // Nothing anywhere: where it looked, each file with its host.
    let empty = temp("nothing");
    let o = mcpwire(&empty, &["servers"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "");
    let said = text(&o.stderr);
    assert_contains(&said, "no host's configuration file was found; looked for:");
    assert_contains(
        &said,
        &format!("{} (Codex)", empty.join(".codex/config.toml").display()),
    );
    assert_contains(&said, "/.vscode/mcp.json (VS Code)");
    let o = mcpwire(&empty, &["servers", "--json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let looked = v["lookedFor"].as_array().expect("lookedFor");
    assert!(
        looked.iter().any(|p| p["host"] == "Cursor"
            && p["file"] == empty.join(".cursor/mcp.json").to_str().unwrap()),
        "{v}"
    );
}
