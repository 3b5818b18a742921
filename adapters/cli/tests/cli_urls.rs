//! A server URL that is not `http://` or `https://` with a host is a usage error (exit 2) naming
//! the URL and what is wrong with it, from `--http` and from a host's file's `url`, before any
//! request: a server that records connections sees none.

mod common;

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{assert_contains, mcpwire, stdout, temp, text};

/// A listener on 127.0.0.1 that counts the connections made to it; its `host:port`.
fn counting_listener() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let here = listener.local_addr().unwrap().to_string();
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            if conn.is_ok() {
                count.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    (here, seen)
}

/// The bad URLs at `here` and what the error must say of each.
fn cases(here: &str) -> Vec<(String, &'static str)> {
    vec![
        (format!("{here}/mcp"), "it has no scheme: write http://"),
        (
            format!("htp://{here}/mcp"),
            "its scheme `htp` is neither http nor https",
        ),
        (
            format!("ftp://{here}/mcp"),
            "its scheme `ftp` is neither http nor https",
        ),
        (format!("http://{here}/mcp "), "it ends with a space"),
        ("http:///mcp".to_owned(), "it names no host"),
    ]
}

#[test]
fn an_http_flag_whose_url_is_not_http_is_a_usage_error_naming_it() {
    let (here, seen) = counting_listener();
    for (url, says) in cases(&here) {
        let o = mcpwire(&["--proxy", "", "--http", &url, "tools"]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{url:?}: {err}");
        assert_contains(&err, &format!("--http: `{url}` cannot be a server's URL"));
        assert_contains(&err, says);
        // `--json` says the same, as a usage error.
        let o = mcpwire(&["--proxy", "", "--http", &url, "tools", "--json"]);
        assert_eq!(o.status.code(), Some(2), "{url:?}");
        let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(json["error"]["kind"], "usage", "{json}");
        assert!(
            json["error"]["message"].as_str().unwrap().contains(says),
            "{json}"
        );
    }
    assert_eq!(seen.load(Ordering::SeqCst), 0, "no request was sent");
}

/// Writes `servers` (the value of `mcpServers`) as a Claude Code project file.
fn config(servers: &str) -> PathBuf {
    let path = temp("urls").join(".mcp.json");
    std::fs::write(&path, format!("{{\"mcpServers\": {servers}}}")).unwrap();
    path
}

#[test]
fn a_host_files_url_that_is_not_http_is_a_usage_error_naming_it() {
    let (here, seen) = counting_listener();
    for (url, says) in cases(&here) {
        let servers = serde_json::json!({"remote": {"type": "http", "url": url}});
        let path = config(&servers.to_string());
        let path = path.to_str().unwrap();
        for args in [
            vec!["--proxy", "", "--config", path, "tools"],
            vec![
                "--proxy", "", "--config", path, "--server", "remote", "tools",
            ],
        ] {
            let o = mcpwire(&args);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{url:?}: {err}");
            assert_contains(&err, "server `remote`: `url`: ");
            assert_contains(&err, &format!("`{url}` cannot be a server's URL"));
            assert_contains(&err, says);
        }
    }
    assert_eq!(seen.load(Ordering::SeqCst), 0, "no request was sent");
}
