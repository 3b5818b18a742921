//! The `mcpwire` binary against real third-party servers: server-everything over stdio and our
//! Python server (pinned `mcp` SDK) over Streamable HTTP. The peers are installed by the test
//! command; a missing peer fails the test unless `MCPWIRE_SKIP_PEERS=1`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers")
}

fn skipped(test: &str) -> bool {
    let skip = std::env::var_os("MCPWIRE_SKIP_PEERS").is_some_and(|v| v == "1");
    if skip {
        eprintln!("{test}: skipped because MCPWIRE_SKIP_PEERS=1");
    }
    skip
}

fn mcpwire(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpwire"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn everything() -> String {
    let entry = peers().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.exists(),
        "server-everything is missing: run `npm ci` in tests/peers (or MCPWIRE_SKIP_PEERS=1)"
    );
    format!("node {} stdio", entry.display())
}

#[test]
fn every_command_against_server_everything_over_stdio() {
    if skipped("every_command_against_server_everything_over_stdio") {
        return;
    }
    let server = everything();
    let o = mcpwire(&["--stdio", &server, "info", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
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
        out(&o).lines().any(|l| l.starts_with("echo ")),
        "{}",
        out(&o)
    );

    let o = mcpwire(&["--stdio", &server, "call", "echo", "message=hello"]);
    assert_eq!(out(&o), "Echo: hello\n", "{}", err(&o));
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
    assert!(out(&o).contains("Name: Ann"), "{}", out(&o));
    let o = mcpwire(&[
        "--stdio",
        &server,
        "call",
        "trigger-long-running-operation",
        "duration=1",
        "steps=2",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(err(&o).contains("progress 2/2"), "{}", err(&o));
    // A tool the server does not list is refused before any call (this server would report
    // it as an isError result): a usage error naming the tools it lists.
    let o = mcpwire(&["--stdio", &server, "call", "no-such-tool"]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(
        err(&o).contains("no tool named no-such-tool"),
        "{}",
        err(&o)
    );
    assert!(err(&o).contains("get-sum"), "{}", err(&o));
}

/// Our Python server over HTTP on a free loopback port; killed when dropped.
struct Python {
    child: Child,
    url: String,
}

impl Drop for Python {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python_http() -> Python {
    let python = peers().join("pyvenv/bin/python");
    assert!(
        python.exists(),
        "the Python peer is missing: run tests/peers/install-python.sh (or MCPWIRE_SKIP_PEERS=1)"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(python)
        .arg(peers().join("py_server.py"))
        .args(["http", "--port", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("Uvicorn running on") {
                let _ = tx.send(());
            }
        }
    });
    let start = Instant::now();
    rx.recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("the Python server did not start in {:?}", start.elapsed()));
    Python {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

#[test]
fn the_cli_over_streamable_http_against_the_python_server() {
    if skipped("the_cli_over_streamable_http_against_the_python_server") {
        return;
    }
    let py = python_http();
    // Detected: the Python SDK server speaks 2026-07-28; pinned, the handshake era works too.
    let o = mcpwire(&["--http", &py.url, "info"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains("era:          stateless"), "{}", out(&o));
    assert!(out(&o).contains("protocol:     2026-07-28"), "{}", out(&o));
    assert!(out(&o).contains("mcpwire-py-server"));
    let o = mcpwire(&["--http", &py.url, "--era", "handshake", "info"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains("protocol:     2025-11-25"), "{}", out(&o));
    for era in ["auto", "handshake"] {
        let o = mcpwire(&[
            "--http",
            &py.url,
            "--era",
            era,
            "call",
            "greet",
            "--answer",
            r#"{"name":"Ada"}"#,
        ]);
        assert_eq!(out(&o), "Hello, Ada!\n", "{era}: {}", err(&o));
    }
    let o = mcpwire(&["--http", &py.url, "call", "add", "a=2", "b=40"]);
    assert_eq!(out(&o), "42\n", "{}", err(&o));
    let o = mcpwire(&[
        "--http",
        &py.url,
        "call",
        "greet",
        "--answer",
        r#"{"name":"Ada"}"#,
    ]);
    assert_eq!(out(&o), "Hello, Ada!\n", "{}", err(&o));
    // The token goes on the wire but never on the screen, not even with --verbose.
    let o = Command::new(env!("CARGO_BIN_EXE_mcpwire"))
        .args([
            "--verbose",
            "--http",
            &py.url,
            "--bearer-env",
            "MCPWIRE_TEST_TOKEN",
        ])
        .args(["--header", "X-Trace: abc", "call", "add", "a=1", "b=1"])
        .env("MCPWIRE_TEST_TOKEN", "sekrit-token-value")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out(&o), "2\n", "{}", err(&o));
    assert!(err(&o).contains("→ {"), "the frames are shown: {}", err(&o));
    assert!(!err(&o).contains("sekrit-token-value") && !out(&o).contains("sekrit"));
    let o = mcpwire(&["--http", "http://127.0.0.1:1/mcp", "info"]);
    assert_eq!(o.status.code(), Some(3), "{}", err(&o));
    assert_eq!(err(&o).lines().count(), 1, "{}", err(&o));
}

#[test]
fn sampling_answered_with_the_flag_or_declined_saying_how() {
    if skipped("sampling_answered_with_the_flag_or_declined_saying_how") {
        return;
    }
    let server = everything();
    let call = ["call", "trigger-sampling-request", "prompt=hi"];
    let mut args = vec!["--stdio", &server];
    args.extend(call);
    let mut answered = args.clone();
    answered.extend(["--sampling-answer", "forty-two"]);
    let o = mcpwire(&answered);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains(r#""text": "forty-two""#), "{}", out(&o));
    assert!(out(&o).contains(r#""model": "mcpwire-cli""#), "{}", out(&o));
    let o = mcpwire(&args);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(out(&o).contains("--sampling-answer TEXT"), "{}", out(&o));
    assert!(
        err(&o).contains("declined (answer with --sampling-answer TEXT)"),
        "{}",
        err(&o)
    );
}
