//! `info` says why: the era and why it was chosen (answered `server/discover`, refused the
//! probe with a JSON-RPC error code or an HTTP status, pinned, unanswered), the transport, for HTTP the version
//! spoken and the proxy in use. And `--verbose` in order: a server started again after the era
//! probe is told before the new process's frames (also when the new process fails too), and
//! over HTTP the probe's refusal comes before `→ initialize`.
//!
//! The servers: the built-in demo server (both eras, and `serve-demo --handshake-only`), the
//! scripted fault server playing an older Streamable HTTP server, the loopback test proxy,
//! shell stand-ins that exit on the probe, and (a peer) the Python server under Hypercorn for
//! HTTP/2.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::peers::skipped;
use common::{assert_contains, stderr, stdout, stdout_and_stderr, temp, BIN};
use mcpwire_tests::fault_http::{FaultServer, Rule};
use mcpwire_tests::proxy::Proxy;

const INIT: &str = r#"{"jsonrpc":"2.0","id":{{id}},"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"older","version":"1"}}}"#;

/// Runs `mcpwire ARGS` with stdin closed, no proxy from the environment, and `env` added.
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).stdin(Stdio::null());
    for var in [
        "http_proxy",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
        "no_proxy",
        "NO_PROXY",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the binary runs")
}

/// An older Streamable HTTP server: the probe refused with `status`, then the handshake.
fn older_server(status: u16) -> FaultServer {
    FaultServer::start(vec![
        Rule::post("server/discover").status_with(
            status,
            &[("Content-Type", "text/plain")],
            "no such method",
        ),
        Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", "s-1")], INIT),
        Rule::notifications().status(202),
        Rule::get().status(405),
        Rule::post("ping").json(200, r#"{"jsonrpc":"2.0","id":{{id}},"result":{}}"#),
        Rule::delete().status(200),
    ])
}

/// The line of `out` that starts with `label`.
fn line<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} line in:\n{out}"))
}

#[test]
fn info_says_why_the_era_was_chosen_over_stdio() {
    // The demo server answers the probe.
    let o = run(&["info"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    let out = stdout(&o);
    assert_eq!(
        line(&out, "era:"),
        "era:          stateless (answered server/discover)"
    );
    assert_eq!(line(&out, "transport:"), "transport:    stdio");
    // Over stdio there is no HTTP version and no proxy.
    assert!(!out.contains("http:") && !out.contains("proxy:"), "{out}");

    // Pinned.
    let o = run(&["--era", "handshake", "info"], &[]);
    assert_eq!(
        line(&stdout(&o), "era:"),
        "era:          handshake (pinned)"
    );
    let o = run(&["--era", "stateless", "info"], &[]);
    assert_eq!(
        line(&stdout(&o), "era:"),
        "era:          stateless (pinned)"
    );

    // A server older than 2026-07-28 refuses the probe as an unknown method.
    let older = format!("{BIN} serve-demo --handshake-only");
    let o = run(&["--stdio", &older, "info"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    assert_eq!(
        line(&stdout(&o), "era:"),
        "era:          handshake (refused the probe with JSON-RPC error code -32601)"
    );
    let o = run(&["--stdio", &older, "info", "--json"], &[]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["era"], "handshake");
    assert_eq!(
        v["eraReason"],
        "refused the probe with JSON-RPC error code -32601"
    );
    assert_eq!(v["transport"], "stdio");
    assert_eq!(v["httpVersion"], serde_json::Value::Null);
    assert_eq!(v["proxy"], serde_json::Value::Null);
}

/// A refusal of the probe is told by its JSON-RPC error code as such, whatever the code (`0`
/// is one): never a bare number.
#[test]
fn a_refused_probe_is_told_by_its_json_rpc_error_code() {
    let server = FaultServer::start(vec![
        Rule::post("server/discover").json(
            200,
            r#"{"jsonrpc":"2.0","id":{{id}},"error":{"code":0,"message":"unknown"}}"#,
        ),
        Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", "s-1")], INIT),
        Rule::notifications().status(202),
        Rule::get().status(405),
        Rule::delete().status(200),
    ]);
    let o = run(&["--http", &server.url(), "info"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    assert_eq!(
        line(&stdout(&o), "era:"),
        "era:          handshake (refused the probe with JSON-RPC error code 0)"
    );
}

#[test]
fn info_says_why_the_era_was_chosen_the_http_version_and_the_proxy() {
    let server = older_server(405);
    let url = server.url();
    let o = run(&["--http", &url, "info"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    let out = stdout(&o);
    assert_eq!(
        line(&out, "era:"),
        "era:          handshake (refused the probe with HTTP 405)"
    );
    assert_eq!(line(&out, "transport:"), "transport:    streamable-http");
    assert_eq!(line(&out, "http:"), "http:         HTTP/1.1");
    assert_eq!(line(&out, "proxy:"), "proxy:        none");

    // Through an explicit proxy (its credentials never shown), and through one from the
    // environment, named with its variable.
    let proxy = Proxy::requiring("alice:s3cret");
    let with_credentials = proxy.url().replace("http://", "http://alice:s3cret@");
    let o = run(&["--http", &url, "--proxy", &with_credentials, "info"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    let out = stdout(&o);
    assert_eq!(
        line(&out, "proxy:"),
        format!("proxy:        {}", proxy.url())
    );
    assert!(!stdout_and_stderr(&o).contains("s3cret"), "{out}");
    let o = run(
        &["--http", &url, "info", "--json"],
        &[("http_proxy", &with_credentials)],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["proxy"],
        format!("{} (from the environment variable http_proxy)", proxy.url())
    );
    assert_eq!(v["eraReason"], "refused the probe with HTTP 405");
    assert_eq!(v["httpVersion"], "HTTP/1.1");
    assert!(proxy.counts().requests >= 2, "{:?}", proxy.counts());
}

#[test]
fn info_says_http2_when_it_is_asked_for_and_the_server_speaks_it() {
    if skipped("info_says_http2_when_it_is_asked_for_and_the_server_speaks_it") {
        return;
    }
    let server = mcpwire_tests::h2::python_h2(true, &[]);
    let ca = server.ca_file().expect("a TLS server");
    let ca = ca.display().to_string();
    // HTTP/2 is asked for (HTTP/1.1 is the default, even to a server that offers HTTP/2).
    let o = run(&["--http", server.url(), "--cacert", &ca, "info"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    assert_eq!(line(&stdout(&o), "http:"), "http:         HTTP/1.1");
    let o = run(
        &["--http", server.url(), "--cacert", &ca, "--http2", "info"],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    let out = stdout(&o);
    assert_eq!(line(&out, "http:"), "http:         HTTP/2");
    assert_eq!(
        line(&out, "era:"),
        "era:          stateless (answered server/discover)"
    );
}

/// `--http2` to an HTTPS server whose TLS agrees only HTTP/1.1 (the fault server behind a TLS
/// front that offers no ALPN): HTTP/1.1 is spoken, as curl does, and `info` says so; no HTTP/2
/// preface reaches the server.
#[test]
fn info_says_http1_when_http2_is_asked_of_a_server_that_does_not_agree_it() {
    let server = older_server(405);
    let front = mcpwire_tests::tls_front::TlsFront::start(server.addr());
    let url = front.url();
    let args = [
        "--http",
        &url,
        "--danger-accept-invalid-certificates",
        "--http2",
    ];
    let o = run(&[&args[..], &["info"]].concat(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    assert_eq!(
        line(&stdout(&o), "http:"),
        "http:         HTTP/1.1 (HTTP/2 was asked for; the server did not agree it)"
    );
    let o = run(&[&args[..], &["info", "--json"]].concat(), &[]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["httpVersion"], "HTTP/1.1");
    // With --verbose, the diagnostic says it as it happens.
    let o = run(&[&args[..], &["--verbose", "info"]].concat(), &[]);
    assert_contains(
        &stderr(&o),
        "HTTP/2 was asked for, but the server's TLS did not agree h2 (ALPN): HTTP/1.1 is spoken",
    );
    assert!(
        !server.log().iter().any(|l| l.starts_with("PRI")),
        "{:?}",
        server.log()
    );
}

/// A shell stand-in that writes a log line on stdout (so it counts as started), then exits when
/// the first request comes: the era probe. With `marker`, only its first run does so (the file
/// is made then); later runs answer `initialize` and stay.
fn exits_on_the_probe(dir: &Path, marker: Option<&Path>) -> String {
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"second","version":"1"}}}"#;
    let first_run_only = match marker {
        Some(m) => format!(
            "if [ -f '{m}' ]; then read line; echo '{answer}'; while read line; do :; done; exit 0; fi\ntouch '{m}'\n",
            m = m.display()
        ),
        None => String::new(),
    };
    let script = format!(
        "#!/bin/sh\necho '{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":\"up\"}}}}'\n{first_run_only}read line\nexit 1\n"
    );
    let path = dir.join(if marker.is_some() {
        "once.sh"
    } else {
        "always.sh"
    });
    std::fs::write(&path, script).unwrap();
    let status = Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    assert!(status.success());
    path.display().to_string()
}

/// The index of the first line of `text` that holds `part`.
fn at(text: &str, part: &str) -> usize {
    text.lines()
        .position(|l| l.contains(part))
        .unwrap_or_else(|| panic!("{part:?} is missing from:\n{text}"))
}

#[test]
fn verbose_tells_a_restart_before_the_new_process_s_frames() {
    let dir = temp("restart");
    let marker = dir.join("started-once");
    let once = exits_on_the_probe(&dir, Some(&marker));
    let o = run(&["--stdio", &once, "-v", "info"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    let err = stderr(&o);
    let restart = at(&err, "· restarting the server:");
    assert_contains(&err, "it did not answer the era probe (server/discover)");
    assert!(
        at(&err, "\"method\":\"server/discover\"") < restart
            && restart < at(&err, "\"method\":\"initialize\""),
        "{err}"
    );
    assert_eq!(err.matches("restarting the server").count(), 1, "{err}");
    assert_eq!(
        line(&stdout(&o), "era:"),
        "era:          handshake (did not answer the probe; started again for initialize)"
    );

    // The new process fails too: the restart is told all the same, before its frames.
    let always = exits_on_the_probe(&dir, None);
    let o = run(&["--stdio", &always, "-v", "info"], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
    let err = stderr(&o);
    let restart = at(&err, "· restarting the server:");
    assert!(restart < at(&err, "\"method\":\"initialize\""), "{err}");
    assert_contains(&err, "handshake failed");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verbose_over_http_shows_the_probe_s_refusal_before_initialize() {
    for status in [404u16, 405] {
        let server = older_server(status);
        let o = run(&["--http", &server.url(), "-v", "ping"], &[]);
        assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
        let err = stderr(&o);
        let probe = at(&err, "\"method\":\"server/discover\"");
        let refusal = at(&err, &format!("⇠ {status} text/plain (POST)"));
        let initialize = at(&err, "\"method\":\"initialize\"");
        assert!(probe < refusal && refusal < initialize, "{err}");
    }
}
