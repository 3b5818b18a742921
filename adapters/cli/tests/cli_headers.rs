//! A user's headers that HTTP cannot carry, or that the HTTP client sets itself (the framing
//! headers, `Host`), are refused before any request is sent: from `--header`, from
//! `--bearer-env`, and from a configuration file's `headers` (and Codex's `http_headers`), each
//! with a usage error (exit 2) naming the header. A server that records connections sees none.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{assert_contains, mcpwire_env, temp, text};

/// A server on 127.0.0.1 that counts the connections made to it and answers each with a 500.
fn recording_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            count.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(
                b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    (url, seen)
}

/// Asserts that `err` names the header `name` ("the header X", "the value of header X", "the
/// header name X").
#[track_caller]
fn assert_names(err: &str, name: &str) {
    assert!(
        [format!("header {name} "), format!("header name {name} ")]
            .iter()
            .any(|n| err.contains(n.as_str())),
        "{name:?} is not named in:\n{err}"
    );
}

/// Runs `mcpwire --proxy "" ARGS tools` (never through the environment's proxy).
fn run(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut all = vec!["--proxy", ""];
    all.extend_from_slice(args);
    all.push("tools");
    let o = mcpwire_env(&all, env);
    (o.status.code(), text(&o.stderr))
}

#[test]
fn a_header_flag_that_cannot_be_sent_is_refused_before_any_request() {
    let (url, seen) = recording_server();
    for (header, names, says) in [
        ("Content-Length: 5", "Content-Length", "cannot be set"),
        ("Host: x", "Host", "set by the URL"),
        ("X-Name: café", "X-Name", "U+00E9"),
        (
            "transfer-encoding: chunked",
            "transfer-encoding",
            "cannot be set",
        ),
        ("Connection: close", "Connection", "cannot be set"),
        ("X Team: a", "X Team", "not valid"),
        ("X-Bell: a\u{7}b", "X-Bell", "control character"),
    ] {
        let (code, err) = run(&["--http", &url, "--header", header], &[]);
        assert_eq!(code, Some(2), "{header}: {err}");
        assert_names(&err, names);
        assert_contains(&err, says);
        assert_contains(&err, "--header");
        // The message never carries the raw non-ASCII or control character.
        assert!(!err.contains('é') && !err.contains('\u{7}'), "{err}");
    }
    assert_eq!(seen.load(Ordering::SeqCst), 0, "no request was sent");

    // A header it can send goes out (the server answers 500).
    let (code, err) = run(&["--http", &url, "--header", "X-Team: a b"], &[]);
    assert_ne!(code, Some(2), "{err}");
    assert!(seen.load(Ordering::SeqCst) > 0, "the request went out");
}

#[test]
fn a_bearer_token_that_cannot_be_sent_is_refused_without_showing_it() {
    let (url, seen) = recording_server();
    let token = "s3cret\u{e9}token";
    let (code, err) = run(
        &["--http", &url, "--bearer-env", "MCPWIRE_TEST_TOKEN"],
        &[("MCPWIRE_TEST_TOKEN", token)],
    );
    assert_eq!(code, Some(2), "{err}");
    assert_contains(&err, "--bearer-env MCPWIRE_TEST_TOKEN");
    assert_names(&err, "Authorization");
    assert!(!err.contains("s3cret"), "{err}");
    assert_eq!(seen.load(Ordering::SeqCst), 0, "no request was sent");
}

/// Writes `servers` (the value of `mcpServers`) as a Claude Code project file.
fn config(servers: &str) -> PathBuf {
    let path = temp("headers").join(".mcp.json");
    std::fs::write(&path, format!("{{\"mcpServers\": {servers}}}")).unwrap();
    path
}

#[test]
fn a_config_files_header_that_cannot_be_sent_is_refused_before_any_request() {
    let (url, seen) = recording_server();
    for (headers, names, says) in [
        (
            r#"{"Content-Length": "5"}"#,
            "Content-Length",
            "cannot be set",
        ),
        (r#"{"Host": "x"}"#, "Host", "set by the URL"),
        (r#"{"X-Name": "café"}"#, "X-Name", "U+00E9"),
        (
            r#"{"X-Name": "a\r\nX-Injected: 1"}"#,
            "X-Name",
            "control character",
        ),
        (r#"{"Expect": "100-continue"}"#, "Expect", "cannot be set"),
    ] {
        let path = config(&format!(
            r#"{{"remote": {{"type": "http", "url": "{url}", "headers": {headers}}}}}"#
        ));
        let (code, err) = run(&["--config", path.to_str().unwrap()], &[]);
        assert_eq!(code, Some(2), "{headers}: {err}");
        assert_contains(&err, "server `remote`: `headers`: ");
        assert_names(&err, names);
        assert_contains(&err, says);
        // Chosen by name, the same.
        let (code, err) = run(
            &["--config", path.to_str().unwrap(), "--server", "remote"],
            &[],
        );
        assert_eq!(code, Some(2), "{headers}: {err}");
        assert_names(&err, names);
    }
    // Codex's `http_headers` too.
    let dir = temp("headers-codex");
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!(
            "[mcp_servers.remote]\nurl = \"{url}\"\nhttp_headers = {{ \"Upgrade\" = \"h2c\" }}\n"
        ),
    )
    .unwrap();
    let (code, err) = run(&["--config", path.to_str().unwrap()], &[]);
    assert_eq!(code, Some(2), "{err}");
    assert_contains(&err, "`http_headers`: the header Upgrade cannot be set");
    assert_eq!(seen.load(Ordering::SeqCst), 0, "no request was sent");
}

/// A token the server refuses (`401`) is named as refused, with where it came from: the
/// environment variable `--bearer-env` read it from, or `--header`; never the token itself.
#[test]
fn a_refused_token_says_where_it_came_from() {
    use mcpwire_tests::fault_http::{FaultServer, Rule};
    let server = FaultServer::start(vec![Rule::any().status_with(
        401,
        &[
            ("WWW-Authenticate", r#"Bearer error="invalid_token""#),
            ("Content-Type", "application/json"),
        ],
        r#"{"error":"invalid_token"}"#,
    )]);
    let url = server.url();
    let (code, err) = run(
        &["--http", &url, "--bearer-env", "MY_TOKEN"],
        &[("MY_TOKEN", "s3cret-token")],
    );
    assert_eq!(code, Some(3), "{err}");
    assert_contains(
        &err,
        "the server refused the token (--bearer-env MY_TOKEN: the token read from that \
         environment variable); it says invalid_token",
    );
    let (code, err) = run(
        &[
            "--http",
            &url,
            "--header",
            "Authorization: Bearer s3cret-token",
        ],
        &[],
    );
    assert_eq!(code, Some(3), "{err}");
    assert_contains(
        &err,
        "the server refused the token (the Authorization header given with --header)",
    );
    assert!(!err.contains("s3cret"), "{err}");
}
