//! Errors a person can act on: each way an HTTP exchange fails, through real sockets, ends with
//! its typed kind, words that say what happened, and the URL without its credentials. One
//! scenario per row of the failure table in the HTTP guide (adapters/docs/http.md).

use std::net::TcpListener;
use std::time::Duration;

use mcpwire::core::error::{HttpError, HttpErrorKind};
use mcpwire::core::{CallError, LocalError};
use mcpwire::{Client, ConnectOptions, Diagnostic, Era, Error, Event, ServerConfig};
use mcpwire_tests::fault_http::{FaultServer, Framing, Rule};
use mcpwire_tests::scenario::{call_within, connect_handshake, handshake_rules, run, tool_result};

const SESSION: &str = "sess-1";
/// Credentials in the URL that no message may show.
const SECRET_USER: &str = "alice:pa55word@";
const SECRET_QUERY: &str = "?token=s3cret";

/// The scenario's rules, then a handshake-era server with no standalone stream.
fn script(scenario: Vec<Rule>) -> Vec<Rule> {
    scenario
        .into_iter()
        .chain(handshake_rules(SESSION, 405))
        .chain([Rule::post("tools/call")
            .tool("fine")
            .json(200, &tool_result("ok"))])
        .collect()
}

/// The server's URL with credentials in it (user info and a secret query parameter).
fn secret_url(server: &FaultServer) -> String {
    let url = server.url();
    let url = url.replacen("http://", &format!("http://{SECRET_USER}"), 1);
    format!("{url}{SECRET_QUERY}")
}

fn options() -> ConnectOptions {
    ConnectOptions {
        era: Era::Handshake,
        ..ConnectOptions::default()
    }
}

async fn connect(server: &FaultServer, options: ConnectOptions) -> Client {
    connect_handshake(&ServerConfig::http(secret_url(server)), options).await
}

async fn call(client: &Client, tool: &str) -> Result<mcpwire::CallToolResult, Error> {
    call_within(client, tool, Duration::from_secs(10)).await
}

/// A tools/call answer for `tool`, once: a JSON head promising 400 bytes, then only the first
/// few of them.
fn partial_json_body(tool: &str) -> Rule {
    Rule::post("tools/call")
        .tool(tool)
        .once()
        .head_with(
            200,
            &[("Content-Type", "application/json")],
            Framing::FixedLength(400),
        )
        .body(r#"{"jsonrpc":"2.0","#)
}

/// A tool to call, and the check of the error its call ends with.
type FailingCall<'a> = (&'a str, &'a dyn Fn(&Error));

/// Calls each tool on one new connection of `server`: each call fails, and its check looks at
/// the error. A call that follows goes through on the same client (each failure was that
/// call's only), then the client closes.
fn failed_calls(server: &FaultServer, options: ConnectOptions, calls: &[FailingCall<'_>]) {
    run(async {
        let client = connect(server, options).await;
        for (tool, check) in calls {
            let e = call(&client, tool).await.expect_err(tool);
            check(&e);
        }
        assert_eq!(call(&client, "fine").await.unwrap().text(), "ok");
        client.close().await;
    });
}

/// No credential of the URL shows in `text`.
fn no_secrets(text: &str) {
    for secret in ["pa55word", "alice", "s3cret"] {
        assert!(!text.contains(secret), "a credential shows: {text}");
    }
}

fn http_error(e: &Error) -> &HttpError {
    let h = match e {
        Error::Call(CallError::Local(LocalError::Http(h))) => h,
        Error::Handshake {
            error: CallError::Local(LocalError::Http(h)),
            ..
        } => h,
        other => panic!("expected an HTTP error, got {other:?}"),
    };
    assert!(h.url.starts_with("http://127.0.0.1:"), "{}", h.url);
    assert!(h.url.contains("token=***"), "{}", h.url);
    no_secrets(&h.to_string());
    no_secrets(&format!("{h:?}"));
    h
}

/// The reason of a call that may have run (its exchange failed after the request went), and
/// the kind of the HTTP failure that lost it.
fn may_have_run(e: &Error) -> (String, HttpErrorKind) {
    match e {
        Error::MaybeExecuted {
            reason,
            http: Some(h),
            ..
        } => {
            no_secrets(reason);
            no_secrets(&format!("{h:?}"));
            assert!(h.url.contains("token=***"), "{}", h.url);
            (reason.to_string(), h.kind.clone())
        }
        other => panic!("expected MaybeExecuted with its HTTP failure, got {other:?}"),
    }
}

#[test]
fn connection_refused_names_the_url_and_says_nothing_listens() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://{SECRET_USER}127.0.0.1:{port}/mcp{SECRET_QUERY}");
    run(async {
        for era in [Era::Auto, Era::Handshake] {
            let options = ConnectOptions {
                era,
                ..ConnectOptions::default()
            };
            let e = mcpwire_tests::scenario::connect(&ServerConfig::http(url.clone()), options)
                .await
                .expect_err("nothing listens");
            let h = http_error(&e);
            assert_eq!(h.kind, HttpErrorKind::ConnectionRefused, "{era:?}: {h}");
            assert_eq!(h.status, None);
            assert!(h.to_string().contains("refused"), "{h}");
        }
    });
}

#[test]
fn a_name_that_does_not_resolve_says_so() {
    run(async {
        let url = "http://mcpwire-test.invalid/mcp";
        let e = mcpwire_tests::scenario::connect(&ServerConfig::http(url), options())
            .await
            .expect_err("no such host");
        let h = match &e {
            Error::Handshake {
                error: CallError::Local(LocalError::Http(h)),
                ..
            } => h,
            other => panic!("expected an HTTP error, got {other:?}"),
        };
        assert_eq!(h.kind, HttpErrorKind::NameResolution, "{h}");
        assert!(h.to_string().contains("does not resolve"), "{h}");
        assert_eq!(h.url, url);
    });
}

#[test]
fn an_error_status_keeps_its_status_and_body_excerpt() {
    let server = FaultServer::start(script(vec![Rule::post("tools/call")
        .tool("boom")
        .status_with(502, &[("Content-Type", "text/plain")], "upstream exploded")]));
    failed_calls(
        &server,
        options(),
        &[("boom", &|e| {
            let h = http_error(e);
            assert_eq!(h.kind, HttpErrorKind::Status);
            assert_eq!(h.status, Some(502));
            assert_eq!(h.body_excerpt, "upstream exploded");
            assert!(
                h.to_string().starts_with("HTTP 502 from http://127.0.0.1:"),
                "{h}"
            );
        })],
    );
}

#[test]
fn a_redirect_is_not_followed_and_its_location_is_shown() {
    let server = FaultServer::start(script(vec![Rule::post("tools/call")
        .tool("moved")
        .status_with(
            307,
            &[(
                "Location",
                "https://bob:hunter2@elsewhere.example/mcp?api_key=k",
            )],
            "",
        )]));
    failed_calls(
        &server,
        options(),
        &[("moved", &|e| {
            let h = http_error(e);
            assert_eq!(
                h.kind,
                HttpErrorKind::Redirect {
                    location: Some("https://elsewhere.example/mcp?api_key=***".into())
                }
            );
            let text = h.to_string();
            assert!(
                text.contains(
                    "to https://elsewhere.example/mcp?api_key=***; redirects are not followed"
                ),
                "{text}"
            );
            assert!(!text.contains("hunter2"), "{text}");
            // Not followed: the one tools/call went to our server only.
            let calls = server
                .requests()
                .iter()
                .filter(|r| r.rpc_method().as_deref() == Some("tools/call"))
                .count();
            assert_eq!(calls, 1);
        })],
    );
}

#[test]
fn a_body_that_is_not_what_its_content_type_says() {
    let server = FaultServer::start(script(vec![
        Rule::post("tools/call")
            .tool("liar")
            .json(200, "<html>not json</html>"),
        Rule::post("tools/call").tool("blob").status_with(
            200,
            &[("Content-Type", "application/octet-stream")],
            "xx",
        ),
    ]));
    failed_calls(
        &server,
        options(),
        &[
            ("liar", &|e| {
                let h = http_error(e);
                assert_eq!(h.kind, HttpErrorKind::BadBody, "{h}");
                assert_eq!(h.body_excerpt, "<html>not json</html>");
            }),
            ("blob", &|e| {
                let h = http_error(e);
                assert_eq!(h.kind, HttpErrorKind::ContentType, "{h}");
                assert!(h.to_string().contains("application/octet-stream"), "{h}");
            }),
        ],
    );
}

#[test]
fn a_head_cut_short_may_have_run_and_says_where_it_broke() {
    let server = FaultServer::start(script(vec![Rule::post("tools/call")
        .tool("half")
        .once()
        .raw("HTTP/1.1 2")
        .close()]));
    failed_calls(
        &server,
        options(),
        &[("half", &|e| {
            let (reason, kind) = may_have_run(e);
            // libcurl (this URL has credentials) counts no byte of a partial status line: to it
            // a reused connection that gave "HTTP/1.1 2" gave nothing, a stale connection.
            assert!(
                matches!(
                    kind,
                    HttpErrorKind::HeadCutShort | HttpErrorKind::StaleConnection
                ),
                "{reason}"
            );
            assert!(
                [
                    "before the response head",
                    "without a response",
                    "before any response"
                ]
                .iter()
                .any(|w| reason.contains(w)),
                "{reason}"
            );
            assert!(reason.contains("http://127.0.0.1:"), "{reason}");
        })],
    );
}

#[test]
fn a_body_reset_midway_may_have_run() {
    let server = FaultServer::start(script(vec![partial_json_body("reset").close()]));
    failed_calls(
        &server,
        options(),
        &[("reset", &|e| {
            let (reason, kind) = may_have_run(e);
            assert_eq!(kind, HttpErrorKind::BodyCutShort, "{reason}");
            assert!(reason.contains("the body was cut short"), "{reason}");
            assert!(reason.contains("http://127.0.0.1:"), "{reason}");
        })],
    );
}

#[test]
fn a_body_whose_bytes_stop_ends_at_the_idle_timeout() {
    let server = FaultServer::start(script(vec![partial_json_body("stall").silent()]));
    let mut options = options();
    options.http.body_idle_timeout = Some(Duration::from_millis(300));
    failed_calls(
        &server,
        options,
        &[("stall", &|e| {
            // The call's own deadline (10 s) did not end it: the body's idle timeout did.
            let (reason, kind) = may_have_run(e);
            assert_eq!(kind, HttpErrorKind::BodyTimeout, "{reason}");
            assert!(reason.contains("no body bytes within 300ms"), "{reason}");
        })],
    );
}

#[test]
fn a_notification_with_no_response_head_ends_at_the_head_timeout() {
    // The first notification (`notifications/initialized`) gets no answer at all.
    let server = FaultServer::start(script(vec![Rule::notifications().once().silent()]));
    let mut options = options();
    options.http.head_timeout = Some(Duration::from_millis(300));
    run(async {
        let client = connect(&server, options).await;
        let mut events = client.events();
        let note = loop {
            match events.next().await.expect("an event") {
                Event::Diagnostic(Diagnostic::Http(note)) if note.contains("head") => break note,
                _ => continue,
            }
        };
        assert!(note.contains("no response head within 300ms"), "{note}");
        no_secrets(&note);
        assert_eq!(call(&client, "fine").await.unwrap().text(), "ok");
        client.close().await;
    });
}

/// A URL that is not `http://` or `https://` with a host fails `connect` at once with a typed
/// error naming the URL and the rule, before any IO: nothing connects to the port it names
/// (before, a missing scheme failed as "invalid format", `htp://` and `ftp://` as "may have
/// been executed … not HTTP", a trailing space as "invalid uri character"). The Manager holds
/// such a server as failed at once and never starts it.
// On smol alone: the URL is refused before any runtime is asked for a socket, a timer or a task.
#[test]
fn a_url_that_is_not_http_is_refused_before_any_io() {
    use mcpwire::core::config::UrlProblem;
    use mcpwire::core::ClientError;
    use mcpwire::manager::{CacheLocation, Manager, ManagerOptions, ServerState};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            if conn.is_ok() {
                count.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    let here = format!("127.0.0.1:{port}");
    let cases = [
        (format!("{here}/mcp"), UrlProblem::NoScheme, "no scheme"),
        (
            format!("htp://{here}/mcp"),
            UrlProblem::Scheme("htp".into()),
            "neither http nor https",
        ),
        (
            format!("ftp://{here}/mcp"),
            UrlProblem::Scheme("ftp".into()),
            "neither http nor https",
        ),
        (
            format!("http://{here}/mcp "),
            UrlProblem::Character {
                character: ' ',
                at: here.len() + 11,
            },
            "ends with a space",
        ),
        (format!("http://:{port}/mcp"), UrlProblem::NoHost, "no host"),
    ];
    for (url, problem, says) in cases {
        let err = match mcpwire::connect(&ServerConfig::http(&url), options()) {
            Err(e) => e,
            Ok(_) => panic!("{url:?} was accepted"),
        };
        let Error::Client(ClientError::Url(e)) = &err else {
            panic!("{url:?}: {err:?}")
        };
        assert_eq!(e.problem, problem, "{url:?}");
        let text = err.to_string();
        assert!(text.contains(&format!("`{url}`")), "{text}");
        assert!(text.contains(says), "{text}");

        let mut manager_options = ManagerOptions::default();
        manager_options.cache = CacheLocation::MemoryOnly;
        let manager = Manager::new(manager_options);
        manager.add("bad", ServerConfig::http(&url));
        match manager.state("bad") {
            Some(ServerState::Failed { reason, .. }) => {
                assert!(reason.contains(says), "{reason}")
            }
            other => panic!("{url:?}: {other:?}"),
        }
        assert!(manager.restart("bad").is_err(), "never started");
    }
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(seen.load(Ordering::SeqCst), 0, "nothing was sent");
}

/// A `401` to a request that carried the configuration's token says the server refused that
/// token, where it came from, and what the challenge says; without a token of the
/// configuration it stays the status.
#[test]
fn a_refused_token_of_the_configuration_is_named_as_such() {
    let challenge = r#"Bearer error="invalid_token", error_description="The token expired""#;
    let refusal = || {
        Rule::post("initialize")
            .header("authorization", "Bearer stale")
            .head(
                401,
                &[
                    ("WWW-Authenticate", challenge),
                    ("Content-Type", "application/json"),
                ],
            )
            .body(r#"{"error":"invalid_token"}"#)
    };
    let server = FaultServer::start(script(vec![refusal()]));
    let mut config = mcpwire::core::config::HttpConfig {
        kind: mcpwire::core::config::HttpKind::Streamable,
        url: secret_url(&server),
        headers: [("Authorization".to_owned(), "Bearer stale".to_owned())].into(),
        extra: Default::default(),
    };
    run(async {
        let e = mcpwire_tests::scenario::connect(&ServerConfig::Http(config.clone()), options())
            .await
            .expect_err("refused");
        let h = http_error(&e);
        assert_eq!(h.status, Some(401));
        let text = h.to_string();
        assert!(
            text.contains(
                "the server refused the token (the Authorization header of the server's \
                 configuration); it says invalid_token (The token expired)"
            ),
            "{text}"
        );
        assert!(!text.contains("stale"), "the token shows: {text}");
        // The 2024-11-05 transport, pinned, says the same of its stream's GET.
        config.kind = mcpwire::core::config::HttpKind::Sse;
        let sse = FaultServer::start(vec![Rule::get()
            .header("authorization", "Bearer stale")
            .head(401, &[("WWW-Authenticate", challenge)])]);
        config.url = sse.url();
        let e = mcpwire_tests::scenario::connect(&ServerConfig::Http(config), options())
            .await
            .expect_err("refused");
        let text = e.to_string();
        assert!(
            text.contains("the server refused the token (")
                && text.contains("it says invalid_token"),
            "{text}"
        );
    });
}

/// A pinned 2024-11-05 transport that does not start says which transport, and what failed:
/// its stream's GET refused, cut short, or naming no endpoint in time.
#[test]
fn a_pinned_http_sse_transport_that_does_not_start_says_what_failed() {
    let cases: [(Rule, u64, &str); 3] = [
        (
            Rule::get().status_with(404, &[("Content-Type", "text/plain")], "nothing here"),
            5,
            "its event stream's GET got HTTP 404 (unexpected status)",
        ),
        (
            Rule::get().close(),
            5,
            "its event stream failed before naming the endpoint",
        ),
        (
            Rule::get().sse(&[": hello\n\n"], Duration::ZERO).silent(),
            1,
            "its event stream named no endpoint within 1 s",
        ),
    ];
    for (rule, secs, words) in cases {
        let server = FaultServer::start(vec![rule]);
        let config = ServerConfig::Http(mcpwire::core::config::HttpConfig {
            kind: mcpwire::core::config::HttpKind::Sse,
            url: server.url(),
            headers: Default::default(),
            extra: Default::default(),
        });
        let options = ConnectOptions {
            init_timeout: Duration::from_secs(secs),
            ..options()
        };
        run(async {
            let e = mcpwire_tests::scenario::connect(&config, options)
                .await
                .expect_err("no transport");
            let text = e.to_string();
            assert!(
                text.contains(&format!(
                    "the HTTP+SSE transport (2024-11-05) at {} did not start: {words}",
                    server.url()
                )),
                "{text}"
            );
            assert!(!text.contains("no HTTP+SSE transport"), "{text}");
        });
    }
}

/// libcurl's failures read as mcpwire's own client's: a body shorter than its
/// `Content-Length` when the server closes (in clear, over TLS with and without the server's
/// TLS close) is "the body was cut short: the connection closed before the end of the body" on
/// both, of the kind `BodyCutShort`, at once (libcurl's reader loses what came with a close
/// without `close_notify`, its documented difference); a response head over the limits is "the
/// response head is over …" on both, never libcurl's "unknown error".
#[test]
fn libcurl_failures_read_as_the_native_clients() {
    use mcpwire_tests::tls_front::TlsFront;
    let short_body = || {
        Rule::post("tools/call")
            .tool("short")
            .head_with(
                200,
                &[("Content-Type", "application/json")],
                Framing::FixedLength(100_000),
            )
            .body(tool_result("ok"))
            .close()
    };
    let huge_head = || {
        Rule::post("tools/call")
            .tool("huge")
            .raw(format!(
                "HTTP/1.1 200 OK\r\nX-Filler: {}\r\nContent-Length: 2\r\n\r\n{{}}",
                "x".repeat(400 * 1024)
            ))
            .close()
    };
    for (way, libcurl) in [
        ("clear", false),
        ("clear", true),
        ("tls", false),
        ("tls", true),
        ("tls-without-close-notify", false),
        ("tls-without-close-notify", true),
    ] {
        let server = FaultServer::start(script(vec![short_body(), huge_head()]));
        let url = match way {
            "clear" => server.url(),
            "tls" => TlsFront::start(server.addr()).url(),
            _ => TlsFront::without_close_notify(server.addr()).url(),
        };
        let mut options = options();
        options.http_client.http1_via_libcurl = libcurl;
        options.http_client.tls.danger_accept_invalid_certificates = true;
        options.http_client.proxy = mcpwire::ProxySetting::Direct;
        run(async {
            let client = connect_handshake(&ServerConfig::http(url), options).await;
            let e = call(&client, "short").await.expect_err("cut short");
            let (reason, kind) = may_have_run_anywhere(&e);
            if libcurl && way == "tls-without-close-notify" {
                // The documented difference (`http1_via_libcurl`): libcurl's TLS reader drops
                // what came with a close without `close_notify`, the head included when it
                // came in the same read as the close (which depends on the timing: a head
                // read before it is kept, and the body is cut short). The outcome is the same
                // either way: it may have run.
                assert!(
                    matches!(
                        kind,
                        HttpErrorKind::HeadCutShort | HttpErrorKind::BodyCutShort
                    ),
                    "{e}"
                );
            } else {
                assert_eq!(
                    kind,
                    HttpErrorKind::BodyCutShort,
                    "{way} libcurl={libcurl}: {e}"
                );
                assert!(
                    reason.contains(
                        "the body was cut short: the connection closed before the end of the body"
                    ),
                    "{way} libcurl={libcurl}: {reason}"
                );
            }
            let e = call(&client, "huge").await.expect_err("too large");
            let text = e.to_string();
            assert!(
                text.contains("the response head is over") && !text.contains("unknown error"),
                "{way} libcurl={libcurl}: {text}"
            );
            client.close().await;
        });
    }
}

/// [`maybe_executed`] for a URL without the test's credentials.
fn may_have_run_anywhere(e: &Error) -> (String, HttpErrorKind) {
    match e {
        Error::MaybeExecuted {
            reason,
            http: Some(h),
            ..
        } => (reason.to_string(), h.kind.clone()),
        other => panic!("expected MaybeExecuted with its HTTP failure, got {other:?}"),
    }
}
