//! Hints where a person is stuck: `http://` to a TLS port ("is it https?"), `https://` to a
//! plain port ("is it plain http?"), `--http2-prior-knowledge` to an HTTP/1.1 server ("does it
//! speak h2c?"), a relative redirect shown resolved, an HTML error page shown by its title,
//! certificate dates as dates, an unknown issuer naming `--cacert`, a `--cacert` file with no
//! certificate a usage error, `watch` refused with -32601, and an elicitation a server cannot
//! make in the stateless era.
//!
//! The servers: small stand-ins on 127.0.0.1 that answer every connection with fixed bytes
//! (a TLS alert, an HTTP/1.1 `400`), the scripted fault server, and (peers) the Python server
//! over TLS with generated certificates and in plain HTTP.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::peers::{python_http, skipped};
use common::{assert_contains, stderr, stdout_and_stderr, temp, BIN};
use mcpwire_tests::fault_http::{FaultServer, Rule};
use mcpwire_tests::tls::{python_https, TlsCerts};

/// Runs `mcpwire ARGS` with stdin closed and no proxy from the environment.
fn run(args: &[&str]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).stdin(Stdio::null());
    for var in [
        "http_proxy",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ] {
        cmd.env_remove(var);
    }
    cmd.output().expect("the binary runs")
}

/// A fatal TLS alert record (handshake_failure), as a TLS server sends one.
const TLS_ALERT: &[u8] = &[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28];

/// What an HTTP/1.1 server answers to bytes it cannot read as a request.
const HTTP_400: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// A stand-in on a free port of 127.0.0.1: each connection's first bytes are read, `answer`
/// says what to write back (nothing: the connection is closed at once), then it is closed.
/// Returns the port. The listener lives until the test process ends.
fn stand_in(answer: fn(&[u8]) -> &'static [u8]) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || {
                let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
                let mut first = [0u8; 4096];
                let n = conn.read(&mut first).unwrap_or(0);
                let _ = conn.write_all(answer(&first[..n]));
                // Let the answer go out before the close.
                std::thread::sleep(Duration::from_millis(50));
            });
        }
    });
    port
}

#[test]
fn http_to_a_tls_port_asks_whether_it_is_https() {
    // A TLS server that answers a plain HTTP request with an alert (as rustls-based servers
    // do), and one that closes it without a word but answers a ClientHello (as OpenSSL-based
    // ones do).
    let alert = stand_in(|_| TLS_ALERT);
    let silent = stand_in(|first| match first.first() {
        Some(0x16) => TLS_ALERT,
        _ => b"",
    });
    for port in [alert, silent] {
        let url = format!("http://127.0.0.1:{port}/mcp");
        let o = run(&["--http", &url, "info"]);
        assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
        let err = stderr(&o);
        assert_contains(
            &err,
            &format!(
                "is it https? The server speaks TLS on this port: https://127.0.0.1:{port}/mcp"
            ),
        );
        // A TLS server reads no plain HTTP: nothing "may have run".
        assert!(!err.contains("may have"), "{err}");
    }
    // Nothing listening: no such hint.
    let o = run(&["--http", "http://127.0.0.1:1/mcp", "info"]);
    assert!(!stderr(&o).contains("is it https"), "{}", stderr(&o));
}

#[test]
fn http_to_a_python_tls_server_asks_whether_it_is_https() {
    if skipped("http_to_a_python_tls_server_asks_whether_it_is_https") {
        return;
    }
    let certs = TlsCerts::generate();
    let server = python_https(&certs, "server", None);
    let url = server.url().replace("https://", "http://");
    let o = run(&["--http", &url, "info"]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
    assert_contains(
        &stderr(&o),
        &format!(
            "is it https? The server speaks TLS on this port: {}",
            server.url()
        ),
    );
}

#[test]
fn https_to_a_plain_port_asks_whether_it_is_plain_http() {
    let port = stand_in(|_| HTTP_400);
    let o = run(&["--http", &format!("https://127.0.0.1:{port}/mcp"), "info"]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
    let err = stderr(&o);
    assert_contains(&err, "the server does not speak TLS on this port");
    assert_contains(
        &err,
        "it answered the TLS handshake with \"HTTP/1.1 400 Bad Request\"",
    );
    assert_contains(
        &err,
        &format!("is it plain http? Try http://127.0.0.1:{port}/mcp"),
    );
    // A URL without a port keeps the port it went to.
    if !skipped("https_to_a_plain_port_asks_whether_it_is_plain_http (Python)") {
        let server = python_http("http");
        let https = server.url().replace("http://", "https://");
        let o = run(&["--http", &https, "tools"]);
        assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
        assert_contains(
            &stderr(&o),
            &format!("is it plain http? Try {}", server.url()),
        );
    }
}

#[test]
fn h2_prior_knowledge_to_an_http1_server_asks_whether_it_speaks_h2c() {
    let port = stand_in(|_| HTTP_400);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let o = run(&["--http", &url, "--http2-prior-knowledge", "info"]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
    let err = stderr(&o);
    assert_contains(&err, "does it speak h2c?");
    // In this program's words.
    assert_contains(&err, "without --http2-prior-knowledge, HTTP/1.1 is spoken");
    assert!(!err.contains("Http2PriorKnowledge"), "{err}");
    if !skipped("h2_prior_knowledge_to_an_http1_server_asks_whether_it_speaks_h2c (Python)") {
        let server = python_http("http");
        let o = run(&["--http", server.url(), "--http2-prior-knowledge", "tools"]);
        assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
        assert_contains(&stderr(&o), "does it speak h2c?");
        // Without the flag, the same server answers.
        let o = run(&["--http", server.url(), "tools"]);
        assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    }
}

#[test]
fn a_redirect_is_shown_resolved_and_an_html_page_by_its_title() {
    let server = FaultServer::start(vec![
        Rule::post("initialize").head(307, &[("Location", "../v2/mcp?x=1")]),
        Rule::any().status(405),
    ]);
    let url = format!("{}/mcp", server.url().trim_end_matches("/mcp"));
    let o = run(&[
        "--http",
        &format!("{url}/old"),
        "--era",
        "handshake",
        "info",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
    let resolved = format!("{}/v2/mcp?x=1", url.trim_end_matches("/mcp"));
    assert_contains(
        &stderr(&o),
        &format!("(to {resolved}; redirects are not followed)"),
    );

    // nginx's plain-HTTP-to-an-HTTPS-port page: its title, and the hint it gives.
    let page = "<html>\r\n<head><title>400 The plain HTTP request was sent to HTTPS port</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<center>The plain HTTP request was sent to HTTPS port</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
    let server = FaultServer::start(vec![Rule::any().status_with(
        400,
        &[("Content-Type", "text/html")],
        page,
    )]);
    let o = run(&["--http", &server.url(), "--era", "handshake", "info"]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
    let err = stderr(&o);
    assert_contains(
        &err,
        ": 400 The plain HTTP request was sent to HTTPS port; is it https?",
    );
    assert_contains(&err, &server.url().replace("http://", "https://"));
    assert!(!err.contains("<center>"), "{err}");

    // A load balancer's error page.
    let page = "<!DOCTYPE html>\n<html><head>\n  <title>502   Bad &amp; Gateway</title>\n</head><body>upstream gone</body></html>";
    let server = FaultServer::start(vec![Rule::any().status_with(
        502,
        &[("Content-Type", "text/html; charset=utf-8")],
        page,
    )]);
    let o = run(&["--http", &server.url(), "--era", "handshake", "info"]);
    let err = stderr(&o);
    assert_contains(&err, ": 502 Bad & Gateway");
    assert!(
        !err.contains("DOCTYPE") && !err.contains("upstream"),
        "{err}"
    );
}

#[test]
fn a_cacert_with_no_pem_certificate_is_a_usage_error_naming_it() {
    let dir = temp("cacert");
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not a certificate\n").unwrap();
    let der = dir.join("ca.der");
    std::fs::write(&der, [0x30, 0x82, 0x01, 0x0a, 0x02, 0x01]).unwrap();
    for (file, words) in [
        (&text, "holds no PEM certificate"),
        (&der, "it looks like DER"),
    ] {
        let file = file.display().to_string();
        for url in ["https://127.0.0.1:1/mcp", "http://127.0.0.1:1/mcp"] {
            let o = run(&["--http", url, "--cacert", &file, "tools"]);
            assert_eq!(o.status.code(), Some(2), "{}", stdout_and_stderr(&o));
            let err = stderr(&o);
            assert_contains(&err, &format!("--cacert {file}: "));
            assert_contains(&err, words);
        }
    }
    let missing = dir.join("missing.pem").display().to_string();
    let o = run(&[
        "--http",
        "https://127.0.0.1:1/mcp",
        "--cacert",
        &missing,
        "tools",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout_and_stderr(&o));
    assert_contains(&stderr(&o), &format!("--cacert {missing}: cannot be read"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn certificates_are_told_with_dates_and_an_unknown_issuer_names_cacert() {
    if skipped("certificates_are_told_with_dates_and_an_unknown_issuer_names_cacert") {
        return;
    }
    let certs = TlsCerts::generate();
    let ca = certs.ca().display().to_string();

    let server = python_https(&certs, "server", None);
    let o = run(&["--http", server.url(), "tools"]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
    let err = stderr(&o);
    assert_contains(&err, "unknown issuer");
    assert_contains(&err, "trust its CA with --cacert FILE");
    assert!(!err.contains("extra_ca_files"), "{err}");

    let date = |text: &str, after: &str| {
        let at = text
            .find(after)
            .unwrap_or_else(|| panic!("{after:?} is missing from:\n{text}"));
        let rest = &text[at + after.len()..];
        // YYYY-MM-DD HH:MM:SS UTC
        let shape: String = rest
            .chars()
            .take(23)
            .map(|c| if c.is_ascii_digit() { '9' } else { c })
            .collect();
        assert_eq!(shape, "9999-99-99 99:99:99 UTC", "{text}");
    };
    let expired = python_https(&certs, "expired", None);
    let o = run(&["--http", expired.url(), "--cacert", &ca, "tools"]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
    let err = stderr(&o);
    assert_contains(&err, "the server's certificate has expired");
    date(&err, "not valid after ");
    date(&err, "it is now ");
    assert!(!err.contains("(UNIX)"), "{err}");

    let early = python_https(&certs, "notyetvalid", None);
    let o = run(&["--http", early.url(), "--cacert", &ca, "tools"]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
    let err = stderr(&o);
    assert_contains(&err, "the server's certificate is not valid yet");
    date(&err, "not valid before ");
    date(&err, "it is now ");
}

const DISCOVER: &str = r#"{"jsonrpc":"2.0","id":{{id}},"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern","version":"1"}},"ttlMs":0}}"#;

#[test]
fn watch_refused_with_method_not_found_names_the_method_and_the_era() {
    let server = FaultServer::start(vec![
        Rule::post("server/discover").json(200, DISCOVER),
        Rule::post("subscriptions/listen").json(
            200,
            r#"{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32601,"message":"Method not found"}}"#,
        ),
    ]);
    let o = run(&["--http", &server.url(), "watch", "--for", "5"]);
    assert_eq!(o.status.code(), Some(4), "{}", stdout_and_stderr(&o));
    let err = stderr(&o);
    assert_contains(&err, "does not offer subscriptions/listen");
    assert_contains(&err, "-32601");
    assert_contains(&err, "try --era handshake");
    // --json keeps the server's error as it came.
    let o = run(&["--http", &server.url(), "watch", "--for", "5", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["code"], -32601);
}

#[test]
fn an_elicitation_a_stateless_server_cannot_make_suggests_the_handshake_era() {
    const TOOLS: &str = r#"{"jsonrpc":"2.0","id":{{id}},"result":{"resultType":"complete","tools":[{"name":"confirm","inputSchema":{"type":"object"}}]}}"#;
    // FastMCP 4's words, as a tool's error result and as a JSON-RPC error.
    const WORDS: &str =
        "elicitation via server-initiated requests is unavailable on 2026-07-28 connections";
    let as_result = format!(
        r#"{{"jsonrpc":"2.0","id":{{{{id}}}},"result":{{"resultType":"complete","isError":true,"content":[{{"type":"text","text":"Error calling tool 'confirm': {WORDS}"}}]}}}}"#
    );
    let as_error = format!(
        r#"{{"jsonrpc":"2.0","id":{{{{id}}}},"error":{{"code":-32603,"message":"{WORDS}"}}}}"#
    );
    for (answer, code) in [(as_result, 1), (as_error, 4)] {
        let server = FaultServer::start(vec![
            Rule::post("server/discover").json(200, DISCOVER),
            Rule::post("tools/list").json(200, TOOLS),
            Rule::post("tools/call").json(200, &answer),
        ]);
        let o = run(&["--http", &server.url(), "call", "confirm"]);
        assert_eq!(o.status.code(), Some(code), "{}", stdout_and_stderr(&o));
        let err = stderr(&o);
        assert_contains(&err, "stateless era (2026-07-28)");
        assert_contains(&err, "try --era handshake");
    }
    // In the handshake era the same words get no such hint.
    let server = FaultServer::start(vec![
        Rule::post("initialize").json_with(
            200,
            &[("Mcp-Session-Id", "s-1")],
            r#"{"jsonrpc":"2.0","id":{{id}},"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"older","version":"1"}}}"#,
        ),
        Rule::notifications().status(202),
        Rule::get().status(405),
        Rule::post("tools/list").json(200, TOOLS),
        Rule::post("tools/call").json(
            200,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{{{{id}}}},"error":{{"code":-32603,"message":"{WORDS}"}}}}"#
            ),
        ),
        Rule::delete().status(200),
    ]);
    let o = run(&[
        "--http",
        &server.url(),
        "--era",
        "handshake",
        "call",
        "confirm",
    ]);
    assert_eq!(o.status.code(), Some(4), "{}", stdout_and_stderr(&o));
    assert!(!stderr(&o).contains("--era handshake"), "{}", stderr(&o));
}
