//! A configuration file's headers are checked as they are read: a header HTTP cannot carry
//! (a name that is not a token, a control or non-ASCII character in a value, whether written
//! or expanded from a variable) or one the HTTP client sets itself (the framing headers,
//! `Host`) is a `ConfigError::Header` naming the file, the server, the field and the header,
//! and never the value.

use std::collections::BTreeMap;

use mcpwire::core::header::HeaderError;
use mcpwire::hosts::{ConfigError, Host, Loader};

fn loader(env: &[(&str, &str)]) -> Loader {
    let env: BTreeMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Loader::new(std::env::temp_dir(), env)
}

/// The error of loading `text` as `host`'s file, which must be a header's.
fn header_error(
    text: &str,
    host: Host,
    env: &[(&str, &str)],
) -> (String, String, Box<HeaderError>) {
    let file = match host {
        Host::Codex => "config.toml",
        _ => ".mcp.json",
    };
    match loader(env).load_str(text, file, Some(host)) {
        Err(ConfigError::Header {
            server,
            field,
            error,
            ..
        }) => (server, field, error),
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn headers_a_request_cannot_carry_are_refused_naming_them() {
    for (headers, name, reserved) in [
        (r#"{"Content-Length": "5"}"#, "Content-Length", true),
        (
            r#"{"transfer-encoding": "chunked"}"#,
            "transfer-encoding",
            true,
        ),
        (r#"{"Host": "example.com"}"#, "Host", true),
        (r#"{"Connection": "close"}"#, "Connection", true),
        (r#"{"X-Name": "café"}"#, "X-Name", false),
        (r#"{"X-Name": "a\r\nX-Injected: 1"}"#, "X-Name", false),
        (r#"{"X Team": "a"}"#, "X Team", false),
    ] {
        let text = format!(
            r#"{{"mcpServers": {{"remote": {{"type": "http", "url": "https://h.example/mcp", "headers": {headers}}}}}}}"#
        );
        let (server, field, error) = header_error(&text, Host::ClaudeCode, &[]);
        assert_eq!((server.as_str(), field.as_str()), ("remote", "headers"));
        assert_eq!(error.name(), name);
        assert_eq!(
            matches!(*error, HeaderError::Reserved { .. }),
            reserved,
            "{error}"
        );
    }
}

#[test]
fn an_expanded_value_is_checked_and_never_shown() {
    let text = r#"{"mcpServers": {"remote": {"type": "http", "url": "https://h.example/mcp",
        "headers": {"Authorization": "Bearer ${TOKEN}"}}}}"#;
    let secret = "SECRET\r\nX-Injected: 1";
    let e = match loader(&[("TOKEN", secret)]).load_str(text, ".mcp.json", Some(Host::ClaudeCode)) {
        Err(e) => e,
        Ok(loaded) => panic!("loaded: {loaded:?}"),
    };
    let shown = e.to_string();
    assert!(shown.contains("server `remote`: `headers`: the value of header Authorization"));
    assert!(
        !shown.contains("SECRET") && !shown.contains('\r'),
        "{shown}"
    );
    assert_eq!(e.server(), Some("remote"));
    // The same value from a clean variable loads.
    let loaded = loader(&[("TOKEN", "abc")])
        .load_str(text, ".mcp.json", Some(Host::ClaudeCode))
        .unwrap();
    assert!(loaded.get("remote").is_some());
}

#[test]
fn a_server_with_a_bad_header_fails_alone_when_failures_are_isolated() {
    let text = r#"{"mcpServers": {
        "bad": {"type": "sse", "url": "https://h.example/sse", "headers": {"Upgrade": "h2c"}},
        "good": {"type": "http", "url": "https://h.example/mcp", "headers": {"X-Team": "a b"}}
    }}"#;
    let loaded = loader(&[])
        .isolate_failures()
        .load_str(text, ".mcp.json", Some(Host::ClaudeCode))
        .unwrap();
    assert!(loaded.get("good").is_some());
    assert_eq!(loaded.failed.len(), 1, "{:?}", loaded.failed);
    assert_eq!(loaded.failed[0].server(), Some("bad"));
    assert!(
        matches!(&loaded.failed[0], ConfigError::Header { error, .. } if error.name() == "Upgrade")
    );
}

#[test]
fn codex_headers_from_every_key_are_checked() {
    let (_, field, error) = header_error(
        "[mcp_servers.remote]\nurl = \"https://h.example/mcp\"\nhttp_headers = { \"Expect\" = \"100-continue\" }\n",
        Host::Codex,
        &[],
    );
    assert_eq!((field.as_str(), error.name()), ("http_headers", "Expect"));
    let (_, field, error) = header_error(
        "[mcp_servers.remote]\nurl = \"https://h.example/mcp\"\nenv_http_headers = { \"X-Key\" = \"KEY\" }\n",
        Host::Codex,
        &[("KEY", "caf\u{e9}")],
    );
    assert_eq!(
        (field.as_str(), error.name()),
        ("env_http_headers", "X-Key")
    );
    let (_, field, error) = header_error(
        "[mcp_servers.remote]\nurl = \"https://h.example/mcp\"\nbearer_token_env_var = \"TOKEN\"\n",
        Host::Codex,
        &[("TOKEN", "tok\nen")],
    );
    assert_eq!(
        (field.as_str(), error.name()),
        ("bearer_token_env_var", "Authorization")
    );
}

/// An HTTP server's URL is checked as it is read, written or expanded from a variable: one
/// that is not `http://` or `https://` with a host is a `ConfigError::Url` naming the file's
/// server, the field and the URL; with failures isolated, that server fails alone.
#[test]
fn a_url_that_is_not_http_is_refused_naming_it() {
    use mcpwire::core::config::UrlProblem;
    let load = |text: &str, file: &str, host: Host, env: &[(&str, &str)]| {
        loader(env).load_str(text, file, Some(host))
    };
    for (url, problem) in [
        ("127.0.0.1:8000/mcp", UrlProblem::NoScheme),
        ("ftp://h.example/mcp", UrlProblem::Scheme("ftp".into())),
        (
            "http://h.example/mcp ",
            UrlProblem::Character {
                character: ' ',
                at: 20,
            },
        ),
    ] {
        let text = serde_json::json!({"mcpServers": {"remote": {"type": "http", "url": url}}});
        match load(&text.to_string(), ".mcp.json", Host::ClaudeCode, &[]) {
            Err(ConfigError::Url {
                server,
                field,
                error,
                ..
            }) => {
                assert_eq!((server.as_str(), field.as_str()), ("remote", "url"));
                assert_eq!(error.problem, problem, "{url:?}");
                assert!(error.to_string().contains(&format!("`{url}`")), "{error}");
            }
            other => panic!("{url:?}: {other:?}"),
        }
    }
    // Expanded from a variable, in a VS Code file, and from Codex's `url`.
    let text = r#"{"servers": {"remote": {"type": "http", "url": "${env:BASE}/mcp"}}}"#;
    let e = load(
        text,
        "mcp.json",
        Host::VsCode,
        &[("BASE", "localhost:8000")],
    )
    .unwrap_err();
    assert!(
        matches!(&e, ConfigError::Url { error, .. } if error.problem == UrlProblem::NoScheme),
        "{e:?}"
    );
    let text = "[mcp_servers.remote]\nurl = \"htp://h.example/mcp\"\n";
    let e = load(text, "config.toml", Host::Codex, &[]).unwrap_err();
    assert!(matches!(&e, ConfigError::Url { .. }), "{e:?}");
    assert!(e.to_string().contains("`htp`"), "{e}");
    // Failures isolated: the good server loads.
    let text = r#"{"mcpServers": {
        "bad": {"type": "http", "url": "h.example/mcp"},
        "good": {"type": "http", "url": "https://h.example/mcp"}
    }}"#;
    let loaded = loader(&[])
        .isolate_failures()
        .load_str(text, ".mcp.json", Some(Host::ClaudeCode))
        .unwrap();
    assert!(loaded.get("good").is_some());
    assert_eq!(loaded.failed.len(), 1, "{:?}", loaded.failed);
    assert_eq!(loaded.failed[0].server(), Some("bad"));
}
