//! The `mcpwire` binary against real third-party servers: server-everything over stdio and our
//! Python server (pinned `mcp` SDK) over Streamable HTTP. The peers are installed by the test
//! command; a missing peer fails the test unless `MCPWIRE_SKIP_PEERS=1`.

mod common;

use std::process::{Command, Stdio};

use serde_json::Value;

use common::peers::{everything_stdio, python_http, skipped};
use common::{assert_contains, mcpwire, stderr, stdout, BIN};

#[test]
fn every_command_against_server_everything_over_stdio() {
    if skipped("every_command_against_server_everything_over_stdio") {
        return;
    }
    let server = everything_stdio();
    let o = mcpwire(&["--stdio", &server, "info", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["era"], "handshake", "it speaks only the handshake era");
    assert_eq!(v["serverInfo"]["name"], "mcp-servers/everything");
    assert!(v["instructions"].as_str().is_some_and(|s| !s.is_empty()));

    let o = mcpwire(&["--stdio", &server, "tools", "--json"]);
    let tools: Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"get-sum"),
        "{names:?}"
    );
    let o = mcpwire(&["--stdio", &server, "tools"]);
    assert!(
        stdout(&o).lines().any(|l| l.starts_with("echo ")),
        "{}",
        stdout(&o)
    );

    let o = mcpwire(&["--stdio", &server, "call", "echo", "message=hello"]);
    assert_eq!(stdout(&o), "Echo: hello\n", "{}", stderr(&o));
    let o = mcpwire(&[
        "--stdio", &server, "call", "get-sum", "a=2", "b=40", "--json",
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["content"][0]["text"].as_str().unwrap().contains("42"),
        "{v}"
    );
    let o = mcpwire(&[
        "--stdio",
        &server,
        "call",
        "trigger-elicitation-request",
        "--answer",
        r#"{"name":"Ann"}"#,
    ]);
    assert_contains(&stdout(&o), "Name: Ann");
    let o = mcpwire(&[
        "--stdio",
        &server,
        "call",
        "trigger-long-running-operation",
        "duration=1",
        "steps=2",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_contains(&stderr(&o), "progress 2/2");
    // A tool the server does not list is refused before any call (this server would report
    // it as an isError result): a usage error naming the tools it lists.
    let o = mcpwire(&["--stdio", &server, "call", "no-such-tool"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_contains(&stderr(&o), "no tool named no-such-tool");
    assert_contains(&stderr(&o), "get-sum");
}

#[test]
fn the_cli_over_streamable_http_against_the_python_server() {
    if skipped("the_cli_over_streamable_http_against_the_python_server") {
        return;
    }
    let py = python_http("http");
    // Detected: the Python SDK server speaks 2026-07-28; pinned, the handshake era works too.
    let o = mcpwire(&["--http", py.url(), "info"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stdout(&o), "era:          stateless");
    assert_contains(&stdout(&o), "protocol:     2026-07-28");
    assert!(stdout(&o).contains("mcpwire-py-server"));
    let o = mcpwire(&["--http", py.url(), "--era", "handshake", "info"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stdout(&o), "protocol:     2025-11-25");
    for era in ["auto", "handshake"] {
        let o = mcpwire(&[
            "--http",
            py.url(),
            "--era",
            era,
            "call",
            "greet",
            "--answer",
            r#"{"name":"Ada"}"#,
        ]);
        assert_eq!(stdout(&o), "Hello, Ada!\n", "{era}: {}", stderr(&o));
    }
    let o = mcpwire(&["--http", py.url(), "call", "add", "a=2", "b=40"]);
    assert_eq!(stdout(&o), "42\n", "{}", stderr(&o));
    let o = mcpwire(&[
        "--http",
        py.url(),
        "call",
        "greet",
        "--answer",
        r#"{"name":"Ada"}"#,
    ]);
    assert_eq!(stdout(&o), "Hello, Ada!\n", "{}", stderr(&o));
    // The token goes on the wire but never on the screen, not even with --verbose.
    let o = Command::new(BIN)
        .args([
            "--verbose",
            "--http",
            py.url(),
            "--bearer-env",
            "MCPWIRE_TEST_TOKEN",
        ])
        .args(["--header", "X-Trace: abc", "call", "add", "a=1", "b=1"])
        .env("MCPWIRE_TEST_TOKEN", "sekrit-token-value")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "2\n", "{}", stderr(&o));
    assert!(
        stderr(&o).contains("→ {"),
        "the frames are shown: {}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("sekrit-token-value") && !stdout(&o).contains("sekrit"));
    let o = mcpwire(&["--http", "http://127.0.0.1:1/mcp", "info"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn sampling_answered_with_the_flag_or_declined_saying_how() {
    if skipped("sampling_answered_with_the_flag_or_declined_saying_how") {
        return;
    }
    let server = everything_stdio();
    let call = ["call", "trigger-sampling-request", "prompt=hi"];
    let mut args = vec!["--stdio", &server];
    args.extend(call);
    let mut answered = args.clone();
    answered.extend(["--sampling-answer", "forty-two"]);
    let o = mcpwire(&answered);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stdout(&o), r#""text": "forty-two""#);
    assert_contains(&stdout(&o), r#""model": "mcpwire-cli""#);
    let o = mcpwire(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert_contains(&stdout(&o), "--sampling-answer TEXT");
    assert_contains(&stderr(&o), "declined (answer with --sampling-answer TEXT)");
}
