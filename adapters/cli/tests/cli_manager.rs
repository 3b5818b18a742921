//! `mcpwire --config FILE` with several servers, run by the Manager: `servers` tells each
//! one's state, `tools` lists them all under qualified names, `call server__tool` (or
//! `server/tool`) routes. Two demo servers (one speaking only the handshake era), one that
//! cannot be spawned and one that exits at once with words on its stderr. The binary runs with
//! `HOME` and the cache in a temporary directory.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use common::{assert_contains, temp, text, with_bin, BIN};

/// A Claude Desktop file with `servers` (the value of `mcpServers`); `{BIN}` stands for this
/// build's `mcpwire`.
fn config(servers: &str) -> PathBuf {
    let path = temp("manager-file").join("claude_desktop_config.json");
    let body = format!("{{\"mcpServers\": {}}}", with_bin(servers));
    std::fs::write(&path, body).unwrap();
    path
}

/// The four servers: `a` (both eras), `b` (the handshake era only), `c` (cannot be spawned),
/// `d` (exits with words on its stderr).
fn four() -> PathBuf {
    config(
        r#"{
            "a": {"command": "{BIN}", "args": ["serve-demo"]},
            "b": {"command": "{BIN}", "args": ["serve-demo", "--handshake-only"]},
            "c": {"command": "/nonexistent/mcp-server", "args": []},
            "d": {"command": "sh", "args": ["-c", "echo starting >&2; echo 'no API key' >&2; exit 1"]}
        }"#,
    )
}

/// Runs `mcpwire --config FILE ARGS…` with a fresh home and cache.
fn mcpwire(file: &std::path::Path, args: &[&str]) -> Output {
    let home = temp("manager-home");
    Command::new(BIN)
        .arg("--config")
        .arg(file)
        .args(args)
        .stdin(Stdio::null())
        .env("HOME", &home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .output()
        .expect("the binary runs")
}

/// The line of `out` that starts with `name` and a space.
fn row<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no line for {name}:\n{out}"))
}

#[test]
fn servers_tells_each_state_era_transport_and_failure() {
    let file = four();
    let o = mcpwire(&file, &["servers"]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.starts_with("NAME  STATE"), "{out}");
    let words = |name: &str| row(&out, name).split_whitespace().collect::<Vec<_>>();
    assert_eq!(
        words("a")[..4],
        ["a", "ready", "stateless", "stdio"],
        "{out}"
    );
    assert_eq!(
        words("b")[..4],
        ["b", "ready", "handshake", "stdio"],
        "{out}"
    );
    let tools: usize = words("a")[4].parse().expect("a tool count");
    assert!(tools >= 3, "{out}");
    assert!(
        row(&out, "c").contains("failed") && row(&out, "c").contains("cannot start"),
        "{out}"
    );
    assert!(row(&out, "d").contains("failed"), "{out}");
    // The end of d's stderr, under its reason (once: not inside the reason too).
    assert!(out.contains("stderr: no API key"), "{out}");
    assert_eq!(out.matches("stderr: no API key").count(), 1, "{out}");
    assert!(!out.contains("; stderr:"), "{out}");

    let o = mcpwire(&file, &["servers", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let list = v.as_array().expect("an array");
    assert_eq!(list.len(), 4, "{v}");
    let get = |name: &str| list.iter().find(|s| s["name"] == name).unwrap();
    assert_eq!(get("a")["state"], "ready");
    assert_eq!(get("a")["era"], "stateless");
    assert_eq!(get("a")["transport"], "stdio");
    assert!(get("a")["tools"].as_u64().unwrap() >= 3);
    assert_eq!(get("b")["era"], "handshake");
    assert_eq!(get("c")["state"], "failed");
    assert!(get("c")["reason"]
        .as_str()
        .unwrap()
        .contains("cannot start"));
    assert_eq!(get("d")["stderrTail"], "starting\nno API key");
}

#[test]
fn tools_lists_every_ready_server_by_qualified_name() {
    let file = four();
    let o = mcpwire(&file, &["tools"]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    // The failed servers are told, and the others still answer: exit 0.
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.starts_with("NAME "), "{out}");
    for (name, server) in [("a__add", "a"), ("b__add", "b"), ("b__echo", "b")] {
        let words: Vec<&str> = row(&out, name).split_whitespace().collect();
        assert_eq!(words[1], server, "{out}");
    }
    assert!(!out.contains("c__") && !out.contains("d__"), "{out}");
    assert!(err.contains("mcpwire: c is failed: cannot start"), "{err}");
    assert!(err.contains("d stderr: no API key"), "{err}");

    let o = mcpwire(&file, &["tools", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let add = v
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["qualified"] == "b__add")
        .expect("b__add");
    assert_eq!(add["server"], "b");
    assert_eq!(add["name"], "add");
    assert!(add["description"].is_string(), "{add}");

    // One tool in detail, under the name it is called by.
    let o = mcpwire(&file, &["tools", "a/add"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).starts_with("a__add\n"),
        "{}",
        text(&o.stdout)
    );

    // No server answers: the connect exit code.
    let broken = config(
        r#"{"c": {"command": "/nonexistent/mcp-server"},
            "d": {"command": "sh", "args": ["-c", "exit 1"]}}"#,
    );
    let o = mcpwire(&broken, &["tools"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
}

#[test]
fn call_routes_by_qualified_name_or_server_slash_tool() {
    let file = four();
    let o = mcpwire(&file, &["call", "a__add", "a=2", "b=40"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "42");
    let o = mcpwire(&file, &["call", "b/add", "a=1", "b=1"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "2");
    // An unknown name: a usage error naming the close ones.
    let o = mcpwire(&file, &["call", "a__ad", "a=1", "b=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(
        &text(&o.stderr),
        "no tool named a__ad (did you mean a__add?)",
    );
    let o = mcpwire(&file, &["call", "add", "a=1", "b=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&text(&o.stderr), "did you mean a__add or b__add?");
    // A server that is not ready: its state and reason.
    let o = mcpwire(&file, &["call", "d__add", "a=1", "b=1"]);
    assert_eq!(o.status.code(), Some(3));
    let err = text(&o.stderr);
    assert!(
        err.contains("d is failed: ") && err.contains("d stderr: no API key"),
        "{err}"
    );
}

#[test]
fn a_call_waits_for_its_own_server_only() {
    let file = config(
        r#"{"a": {"command": "{BIN}", "args": ["serve-demo"]},
            "mute": {"command": "sh", "args": ["-c", "sleep 20"]}}"#,
    );
    let started = std::time::Instant::now();
    let o = mcpwire(&file, &["call", "a/add", "a=2", "b=3"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "5");
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    // The start-up timeout is --timeout: the mute server fails within it.
    let o = mcpwire(&file, &["--timeout", "0.5", "servers"]);
    let out = text(&o.stdout);
    // Its start-up timeout ran out: the Manager's own deadline, or the connection's.
    let mute = row(&out, "mute");
    assert!(
        mute.contains("not ready within") || mute.contains("no answer to server/discover within"),
        "{out}"
    );
}

#[test]
fn one_enabled_server_keeps_the_single_server_commands() {
    let file = config(
        r#"{"a": {"command": "{BIN}", "args": ["serve-demo"]},
            "off": {"command": "/nonexistent/mcp-server", "disabled": true}}"#,
    );
    let o = mcpwire(&file, &["tools"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.lines().any(|l| l.starts_with("add ")), "{out}");
    assert!(!out.contains("a__"), "{out}");
    // `servers` still starts it, and holds the disabled one as such.
    let o = mcpwire(&file, &["servers"]);
    let out = text(&o.stdout);
    assert!(row(&out, "a").contains("ready"), "{out}");
    assert!(row(&out, "off").contains("disabled"), "{out}");
    // --no-connect starts nothing: what the file holds.
    let o = mcpwire(&file, &["servers", "--no-connect"]);
    let out = text(&o.stdout);
    assert!(out.starts_with("NAME  HOST"), "{out}");
    assert!(
        row(&out, "off").contains("/nonexistent/mcp-server"),
        "{out}"
    );
}
