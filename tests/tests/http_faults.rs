//! Streamable HTTP (handshake era) through real sockets: the public `Client` against the scripted
//! fault server, one scenario per way an exchange can go, each asserting the typed outcome and
//! what went over the wire.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcpwire::core::error::{HttpError, HttpErrorKind};
use mcpwire::core::CallError;
use mcpwire::core::LocalError;
use mcpwire::{
    CallOptions, ChosenEra, Client, ConnectOptions, Error, ServerConfig, ServerNotification,
};
use mcpwire_tests::fault_http::{FaultServer, Framing, Matcher, Recorded, Rule};
use mcpwire_tests::scenario::{
    call_within, connect_handshake, handshake_rules, tool_result, HANDSHAKE_INIT,
};
use mcpwire_tests::ways::Way;
use serde_json::json;

/// The memory test reads the process's peak resident size, which every client in this binary
/// adds to (and the allocator's per-thread arenas with it): it runs alone, the others beside
/// each other.
static MEMORY: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Runs a scenario beside the others (not beside the memory test).
fn run<T>(f: impl std::future::Future<Output = T>) -> T {
    let _beside = MEMORY.read().unwrap_or_else(|e| e.into_inner());
    mcpwire_tests::scenario::run(f)
}

/// Runs a scenario with nothing else of this binary running.
fn run_alone<T>(f: impl std::future::Future<Output = T>) -> T {
    let _alone = MEMORY.write().unwrap_or_else(|e| e.into_inner());
    mcpwire_tests::scenario::run(f)
}

const SESSION: &str = "sess-1";
const VERSION: &str = "2025-11-25";

/// The handshake (initialize with a session, 202 for notifications), the optional GET answered
/// `get`, and DELETE answered 200.
fn base(get: u16) -> Vec<Rule> {
    handshake_rules(SESSION, get)
}

/// The scenario's rules first, then the base with no standalone stream (405).
fn script(scenario: Vec<Rule>) -> Vec<Rule> {
    scenario.into_iter().chain(base(405)).collect()
}

async fn connect(server: &FaultServer) -> Client {
    connect_to(&ServerConfig::http(server.url())).await
}

/// Connects in the handshake era: the scripted servers here are of that era (the probe of
/// `Era::Auto` is tested on its own).
async fn connect_to(config: &ServerConfig) -> Client {
    connect_handshake(config, ConnectOptions::default()).await
}

/// A call with a short per-call timeout, so that a driver that loses track fails fast.
async fn call(client: &Client, tool: &str) -> Result<mcpwire::CallToolResult, Error> {
    call_within(client, tool, Duration::from_secs(10)).await
}

fn http_error(e: &Error) -> &HttpError {
    match e {
        Error::Call(CallError::Local(LocalError::Http(h))) => h,
        other => panic!("expected LocalError::Http, got {other:?}"),
    }
}

fn posts_of<'a>(reqs: &'a [Recorded], method: &str) -> Vec<&'a Recorded> {
    reqs.iter()
        .filter(|r| r.rpc_method().as_deref() == Some(method))
        .collect()
}

/// After a failed call the connection lives on: another call is answered.
async fn still_works(client: &Client) {
    let r = call(client, "add").await.expect("the connection lives on");
    assert_eq!(r.text(), "ok");
}

fn ok_rule() -> Rule {
    Rule::post("tools/call")
        .tool("add")
        .json(200, &tool_result("ok"))
}

#[test]
fn handshake_sends_the_session_and_version_after_initialize() {
    let tools = r#"{"jsonrpc":"2.0","id":{{id}},"result":{"tools":[{"name":"add","inputSchema":{"type":"object"}}]}}"#;
    let server = FaultServer::start(script(vec![Rule::post("tools/list").json(200, tools)]));
    let mut config = ServerConfig::http(server.url());
    if let ServerConfig::Http(h) = &mut config {
        h.headers.insert("X-Fault-Test".into(), "yes".into());
    }
    run(async {
        let client = connect_to(&config).await;
        let info = client.server_info().expect("ready");
        assert_eq!(info.protocol_version, VERSION);
        assert_eq!(info.server_info.name, "fault");
        assert_eq!(client.era(), Some(ChosenEra::Handshake));
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name, "add");
        // The standalone GET opens beside the first call; it is awaited before the close,
        // which would otherwise abort it when it is slower to connect than the call.
        assert!(
            server
                .wait_for(&Matcher::get(), Duration::from_secs(5))
                .is_some(),
            "no GET: {:?}",
            server.log()
        );
        client.close().await;
    });
    assert!(
        server
            .wait_for(&Matcher::delete(), Duration::from_secs(2))
            .is_some(),
        "no DELETE: {:?}",
        server.log()
    );
    let reqs = server.requests();
    let init = &reqs[0];
    assert_eq!(init.describe(), "POST initialize #0", "{:?}", server.log());
    let accept = init.header("accept").unwrap_or_default();
    assert!(
        accept.contains("application/json") && accept.contains("text/event-stream"),
        "{accept}"
    );
    assert_eq!(init.header("content-type"), Some("application/json"));
    assert_eq!(init.header("mcp-session-id"), None);
    assert_eq!(init.header("mcp-protocol-version"), None);
    for r in &reqs {
        assert_eq!(r.header("x-fault-test"), Some("yes"), "{}", r.describe());
        assert_eq!(r.target, "/mcp");
    }
    for r in &reqs[1..] {
        assert_eq!(
            r.header_all("mcp-session-id"),
            [SESSION],
            "{}",
            r.describe()
        );
        assert_eq!(
            r.header_all("mcp-protocol-version"),
            [VERSION],
            "{}",
            r.describe()
        );
    }
    let log = server.log();
    for expected in [
        "POST notifications/initialized",
        "GET",
        "POST tools/list #1",
        "DELETE",
    ] {
        assert_eq!(
            log.iter().filter(|l| *l == expected).count(),
            1,
            "{expected}: {log:?}"
        );
    }
    assert_eq!(log.last().map(String::as_str), Some("DELETE"), "{log:?}");
    let get = reqs.iter().find(|r| r.method == "GET").unwrap();
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    for post in reqs.iter().filter(|r| r.method == "POST") {
        let accept = post.header("accept").unwrap_or_default();
        assert!(
            accept.contains("application/json") && accept.contains("text/event-stream"),
            "{}: {accept}",
            post.describe()
        );
    }
    assert!(server.unmatched().is_empty(), "{:?}", server.notes());
}

#[test]
fn json_responses_results_and_errors() {
    let server = FaultServer::start(script(vec![
        Rule::post("tools/call").tool("bad").json(
            200,
            r#"{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32602,"message":"bad arguments","data":{"field":"a"}}}"#,
        ),
        Rule::post("tools/call")
            .tool("charset")
            .head(200, &[("Content-Type", "application/json; charset=utf-8")])
            .body(tool_result("with charset")),
        ok_rule(),
    ]));
    run(async {
        let client = connect(&server).await;
        still_works(&client).await;
        let err = call(&client, "bad").await.unwrap_err();
        let e = err.server_error().unwrap_or_else(|| panic!("{err:?}"));
        assert_eq!(e.code, -32602);
        assert_eq!(e.message, "bad arguments");
        let r = call(&client, "charset").await.unwrap();
        assert_eq!(r.text(), "with charset");
        still_works(&client).await;
        client.close().await;
    });
    assert!(server.unmatched().is_empty(), "{:?}", server.notes());
}

/// The SSE body of a call: a comment, a priming event, a progress notification (echoing the
/// progress token) and the result (with a two-byte character), lines ended by `eol`.
fn sse_body(eol: &str, text: &str) -> Vec<u8> {
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{{/params/_meta/progressToken}},"progress":1,"total":2,"message":"half"}}"#;
    format!(
        ": keep-alive{eol}id: ev-1{eol}data: {eol}{eol}event: message{eol}id: ev-2{eol}data: {progress}{eol}{eol}id: ev-3{eol}data: {}{eol}{eol}",
        tool_result(text)
    )
    .into_bytes()
}

/// Cuts `body` every `every` bytes and after every CR, so that pieces end inside lines, between
/// a CR and its LF, and inside a UTF-8 character. Placeholders are kept whole.
fn split(body: &[u8], every: usize) -> Vec<Vec<u8>> {
    let mut pieces = Vec::new();
    let mut cur = Vec::new();
    let mut in_placeholder = false;
    for (i, &b) in body.iter().enumerate() {
        cur.push(b);
        if body[i..].starts_with(b"{{") {
            in_placeholder = true;
        }
        if in_placeholder {
            if cur.ends_with(b"}}") {
                in_placeholder = false;
            } else {
                continue;
            }
        }
        if b == b'\r' || cur.len() >= every {
            pieces.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        pieces.push(cur);
    }
    pieces
}

#[test]
fn sse_responses_in_any_split_and_line_ending() {
    let cases = [("lf", "\n"), ("crlf", "\r\n"), ("cr", "\r")];
    let mut rules = Vec::new();
    for (name, eol) in cases {
        let text = format!("{name} ü");
        let pieces = split(&sse_body(eol, &text), 7);
        rules.push(
            Rule::post("tools/call")
                .tool(name)
                .sse(&pieces, Duration::from_millis(2)),
        );
    }
    // Notifications before the initialize response, on an SSE answer to initialize.
    let log = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"before init"}}"#;
    rules.push(Rule::post("initialize").once().sse_with(
        &[("Mcp-Session-Id", SESSION)],
        &[
            format!("data: {log}\n\n"),
            format!("data: {HANDSHAKE_INIT}\n\n"),
        ],
        Duration::from_millis(5),
    ));
    let server = FaultServer::start(script(rules));
    run(async {
        let client = connect(&server).await;
        let mut notifications = client.notifications();
        for (name, _) in cases {
            let seen = Arc::new(AtomicUsize::new(0));
            let s = seen.clone();
            let opts = CallOptions::default()
                .timeout(Duration::from_secs(10))
                .on_progress(move |p| {
                    assert_eq!((p.progress, p.total), (1.0, Some(2.0)));
                    assert_eq!(p.message.as_deref(), Some("half"));
                    s.fetch_add(1, Ordering::SeqCst);
                });
            let r = client
                .call_tool_with(name, json!({}), opts)
                .await
                .unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert_eq!(r.text(), format!("{name} ü"));
            assert_eq!(seen.load(Ordering::SeqCst), 1, "{name}: progress");
        }
        let n = notifications.next().await.expect("the early notification");
        let ServerNotification::Log(l) = n else {
            panic!("{n:?}")
        };
        assert_eq!(l.data, "before init");
        client.close().await;
    });
    // Nothing was resumed: each stream carried its answer.
    assert!(
        server
            .log()
            .iter()
            .all(|l| !l.starts_with("GET last-event-id")),
        "{:?}",
        server.log()
    );
    assert!(server.unmatched().is_empty(), "{:?}", server.notes());
}

#[test]
fn an_error_response_on_sse_is_final_while_the_stream_stays_open() {
    let server = FaultServer::start(script(vec![
        Rule::post("tools/call")
            .tool("err")
            .head_chunked(200, &[("Content-Type", "text/event-stream")])
            .body("data: {\"jsonrpc\":\"2.0\",\"id\":{{id}},\"error\":{\"code\":-32000,\"message\":\"nope\"}}\n\n")
            .silent(),
        Rule::post("tools/call")
            .tool("res")
            .head_chunked(200, &[("Content-Type", "text/event-stream")])
            .body(format!("data: {}\n\n", tool_result("early")))
            .silent(),
        ok_rule(),
    ]));
    run(async {
        let client = connect(&server).await;
        let err = call(&client, "err").await.unwrap_err();
        assert_eq!(err.server_error().map(|e| e.code), Some(-32000), "{err:?}");
        let r = call(&client, "res").await.unwrap();
        assert_eq!(r.text(), "early");
        still_works(&client).await;
        client.close().await;
    });
}

#[test]
fn a_refused_get_means_no_standalone_stream_and_the_connection_lives_on() {
    for status in [405u16, 404, 400] {
        let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"no GET here"}}"#;
        let rules = vec![
            Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", SESSION)], HANDSHAKE_INIT),
            Rule::notifications().status(202),
            Rule::get().json(status, body),
            Rule::delete().status(200),
            ok_rule(),
        ];
        let server = FaultServer::start(rules);
        run(async {
            let client = connect(&server).await;
            assert!(
                server
                    .wait_for(&Matcher::get(), Duration::from_secs(5))
                    .is_some(),
                "{status}: no GET"
            );
            still_works(&client).await;
            mcpwire_tests::scenario::sleep(Duration::from_millis(300)).await;
            still_works(&client).await;
            client.close().await;
        });
        let reqs = server.requests();
        let log = server.log();
        assert_eq!(
            reqs.iter().filter(|r| r.method == "GET").count(),
            1,
            "{status}: the refused GET was retried: {log:?}"
        );
        assert_eq!(
            posts_of(&reqs, "initialize").len(),
            1,
            "{status}: a refused GET is not an expired session: {log:?}"
        );
        assert!(server.unmatched().is_empty(), "{:?}", server.notes());
    }
}

#[test]
fn an_unexpected_content_type_fails_that_call_only() {
    let server = FaultServer::start(script(vec![
        Rule::post("tools/call")
            .tool("html")
            .head(200, &[("Content-Type", "text/html")])
            .body("<html>hi</html>"),
        ok_rule(),
    ]));
    run(async {
        let client = connect(&server).await;
        let err = call(&client, "html").await.unwrap_err();
        let e = http_error(&err);
        assert_eq!(e.status, Some(200), "{e:?}");
        assert_eq!(e.content_type.as_deref(), Some("text/html"), "{e:?}");
        assert!(e.reason.contains("content type"), "{e:?}");
        still_works(&client).await;
        client.close().await;
    });
}

#[test]
fn a_500_carries_the_body_excerpt() {
    let long = format!("boom: the tool exploded {}", "x".repeat(2000));
    let server = FaultServer::start(script(vec![
        Rule::post("tools/call").tool("boom").status_with(
            500,
            &[("Content-Type", "text/plain")],
            &long,
        ),
        ok_rule(),
    ]));
    run(async {
        let client = connect(&server).await;
        let err = call(&client, "boom").await.unwrap_err();
        let e = http_error(&err);
        assert_eq!(e.status, Some(500));
        assert!(
            e.body_excerpt.starts_with("boom: the tool exploded"),
            "{e:?}"
        );
        assert!(
            e.body_excerpt.len() <= 512,
            "the excerpt is bounded: {}",
            e.body_excerpt.len()
        );
        assert!(err.to_string().contains("HTTP 500"), "{err}");
        still_works(&client).await;
        client.close().await;
    });
}

#[test]
fn a_401_carries_the_parsed_challenge() {
    let challenge = r#"Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp", scope="files:read files:write", error="invalid_token""#;
    let server = FaultServer::start(script(vec![
        Rule::post("tools/call")
            .tool("secret")
            .head(
                401,
                &[
                    ("WWW-Authenticate", challenge),
                    ("Content-Type", "application/json"),
                ],
            )
            .body(r#"{"error":"invalid_token"}"#),
        ok_rule(),
    ]));
    run(async {
        let client = connect(&server).await;
        let err = call(&client, "secret").await.unwrap_err();
        let e = http_error(&err);
        assert_eq!(e.status, Some(401));
        let c = e
            .challenge
            .as_ref()
            .unwrap_or_else(|| panic!("no challenge: {e:?}"));
        assert_eq!(c.scheme, "Bearer");
        assert_eq!(c.param("scope"), Some("files:read files:write"));
        assert_eq!(c.param("error"), Some("invalid_token"));
        assert_eq!(
            c.param("resource_metadata"),
            Some("http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp")
        );
        still_works(&client).await;
        client.close().await;
    });
}

#[test]
fn a_json_body_holding_a_notification_fails_the_call_at_once() {
    let server = FaultServer::start(script(vec![
        Rule::post("tools/call").tool("chatty").json(
            200,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}"#,
        ),
        ok_rule(),
    ]));
    run(async {
        let client = connect(&server).await;
        let mut notifications = client.notifications();
        let start = Instant::now();
        let err = call(&client, "chatty").await.unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(5), "it waited");
        let e = http_error(&err);
        assert_eq!(e.status, Some(200));
        assert!(e.reason.contains("no response"), "{e:?}");
        // The notification itself was delivered.
        let n = notifications.next().await.unwrap();
        assert!(
            matches!(&n, ServerNotification::Log(l) if l.data == "hi"),
            "{n:?}"
        );
        still_works(&client).await;
        client.close().await;
    });
}

#[test]
fn session_expiry_makes_a_new_session_and_sends_the_call_once_more() {
    // In clear, over TLS on both stacks, and through a proxy's tunnel.
    for way in Way::ALL {
        eprintln!("{way:?}");
        let expired =
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#;
        let server = FaultServer::start(vec![
            Rule::post("initialize").once().json_with(
                200,
                &[("Mcp-Session-Id", "sess-1")],
                HANDSHAKE_INIT,
            ),
            Rule::post("initialize").json_with(
                200,
                &[("Mcp-Session-Id", "sess-2")],
                HANDSHAKE_INIT,
            ),
            Rule::post("tools/call")
                .header("mcp-session-id", "sess-1")
                .json(404, expired),
            Rule::post("tools/call")
                .header("mcp-session-id", "sess-2")
                .json(200, &tool_result("on the new session")),
            Rule::notifications().status(202),
            Rule::get().status(405),
            Rule::delete().status(200),
        ]);
        let (config, options, _proxy) = way.reach(&server);
        run(async {
            let client = connect_handshake(&config, options).await;
            let r = call(&client, "add").await.unwrap();
            assert_eq!(r.text(), "on the new session");
            client.close().await;
        });
        let reqs = server.requests();
        let log = server.log();
        let inits = posts_of(&reqs, "initialize");
        assert_eq!(inits.len(), 2, "{log:?}");
        assert_eq!(inits[1].header("mcp-session-id"), None, "{log:?}");
        let calls = posts_of(&reqs, "tools/call");
        assert_eq!(calls.len(), 2, "sent once more, not more: {log:?}");
        assert_eq!(calls[0].header("mcp-session-id"), Some("sess-1"));
        assert_eq!(calls[1].header("mcp-session-id"), Some("sess-2"));
        assert_eq!(calls[1].header("mcp-protocol-version"), Some(VERSION));
        assert_eq!(
            calls[0].rpc_id(),
            calls[1].rpc_id(),
            "the same request: {log:?}"
        );
        assert!(
            calls[0].seq < inits[1].seq && inits[1].seq < calls[1].seq,
            "{log:?}"
        );
        // One `notifications/initialized` per session. Each POST has its exchange, so they may
        // arrive in either order (the first one's connection can be slower than the renewal).
        let initialized = posts_of(&reqs, "notifications/initialized");
        assert_eq!(initialized.len(), 2, "{log:?}");
        let mut sessions: Vec<_> = initialized
            .iter()
            .map(|r| r.header("mcp-session-id"))
            .collect();
        sessions.sort();
        assert_eq!(sessions, [Some("sess-1"), Some("sess-2")], "{log:?}");
        if let Some(del) = server.wait_for(&Matcher::delete(), Duration::from_secs(2)) {
            assert_eq!(del.header("mcp-session-id"), Some("sess-2"));
        } else {
            panic!("no DELETE: {log:?}");
        }
        assert!(server.unmatched().is_empty(), "{:?}", server.notes());
    }
}

#[test]
fn priming_retry_and_a_closed_stream_resume_with_last_event_id() {
    // In clear, over TLS on both stacks, and through a proxy's tunnel.
    for way in Way::ALL {
        eprintln!("{way:?}");
        let server = FaultServer::start(script(vec![
        Rule::post("tools/call").tool("resume").once().sse(
            &["id: ev-1\r\ndata: \r\nretry: 300\r\n\r\n"],
            Duration::ZERO,
        ),
        Rule::get()
            .header("last-event-id", "ev-1")
            .once()
            .sse(
                &[
                    "id: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":{{id:tools/call}},\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}}\n\n",
                ],
                Duration::ZERO,
            ),
    ]));
        let (config, options, _proxy) = way.reach(&server);
        run(async {
            let client = connect_handshake(&config, options).await;
            let r = call(&client, "resume").await.unwrap();
            assert_eq!(r.text(), "resumed");
            client.close().await;
        });
        let reqs = server.requests();
        let post = posts_of(&reqs, "tools/call")[0];
        let resume = reqs
            .iter()
            .find(|r| r.method == "GET" && r.header("last-event-id").is_some())
            .unwrap_or_else(|| panic!("no resume: {:?}", server.log()));
        assert_eq!(resume.header("last-event-id"), Some("ev-1"));
        assert_eq!(resume.header("mcp-session-id"), Some(SESSION));
        assert_eq!(resume.header("mcp-protocol-version"), Some(VERSION));
        assert_eq!(resume.header("accept"), Some("text/event-stream"));
        let waited = resume.at.duration_since(post.at);
        eprintln!("resume came {waited:?} after the POST (retry: 300 ms)");
        assert!(
            waited >= Duration::from_millis(300),
            "retry not honoured: {waited:?}"
        );
        assert!(waited < Duration::from_secs(3), "{waited:?}");
        assert_eq!(
            reqs.iter()
                .filter(|r| r.header("last-event-id").is_some())
                .count(),
            1,
            "{:?}",
            server.log()
        );
        assert!(server.unmatched().is_empty(), "{:?}", server.notes());
    }
}

#[test]
fn a_silent_server_times_the_call_out_and_nothing_hangs() {
    let server = FaultServer::start(script(vec![
        Rule::post("tools/call").tool("mute").silent(),
        Rule::post("tools/call")
            .tool("mute-after-head")
            .head_chunked(200, &[("Content-Type", "text/event-stream")])
            .silent(),
        ok_rule(),
    ]));
    run(async {
        let client = connect(&server).await;
        for tool in ["mute", "mute-after-head"] {
            let start = Instant::now();
            let err = client
                .call_tool_with(
                    tool,
                    json!({}),
                    CallOptions::default().timeout(Duration::from_millis(300)),
                )
                .await
                .unwrap_err();
            let took = start.elapsed();
            assert!(err.is_timeout(), "{tool}: {err:?}");
            assert!(took >= Duration::from_millis(300), "{tool}: {took:?}");
            assert!(took < Duration::from_secs(3), "{tool}: {took:?}");
            // The cancellation went out for that request.
            let id = server
                .matching(&Matcher::post("tools/call").tool(tool))
                .first()
                .and_then(Recorded::rpc_id)
                .unwrap();
            let cancel = Matcher::post("notifications/cancelled").field("/params/requestId", id);
            assert!(
                server.wait_for(&cancel, Duration::from_secs(3)).is_some(),
                "{tool}: no cancel: {:?}",
                server.log()
            );
            still_works(&client).await;
        }
        let start = Instant::now();
        client.close().await;
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "close took {:?}",
            start.elapsed()
        );
    });
    // Closing let go of the silent exchanges.
    let deadline = Instant::now() + Duration::from_secs(3);
    while server
        .notes()
        .iter()
        .filter(|n| n.contains("closed while the server was silent"))
        .count()
        < 2
    {
        assert!(
            Instant::now() < deadline,
            "the silent exchanges were not let go: {:?}",
            server.notes()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(server.unmatched().is_empty(), "{:?}", server.notes());
}

#[test]
fn a_close_in_the_middle_of_the_head_fails_that_call() {
    let server = FaultServer::start(script(vec![
        // Inside the status line.
        Rule::post("tools/call")
            .tool("cut-status")
            .raw("HTTP/1.1 20")
            .close(),
        // After the status line, inside a header line.
        Rule::post("tools/call")
            .tool("cut-header")
            .raw("HTTP/1.1 200 OK\r\nContent-Type: appli")
            .close(),
        ok_rule(),
    ]));
    run(async {
        let client = connect(&server).await;
        // The request went out and no head came back: it may have run (at most once).
        let err = call(&client, "cut-status").await.unwrap_err();
        eprintln!("close inside the status line: {err:?}");
        assert!(maybe_executed(&err), "{err:?}");
        still_works(&client).await;

        // A head cut inside a header line is no head: the request went out, so the call may
        // have run. (libcurl, with `http1_via_libcurl` on, takes such a close for the end of a
        // head with no body, as the curl tool does, and the call fails on the missing content
        // type instead: typed either way, and only that call.)
        let err = call(&client, "cut-header").await.unwrap_err();
        eprintln!("close inside a header line: {err:?}");
        assert!(maybe_executed(&err), "{err:?}");
        let Error::MaybeExecuted { http: Some(e), .. } = &err else {
            panic!("no HTTP details: {err:?}")
        };
        assert_eq!(e.kind, HttpErrorKind::HeadCutShort, "{e:?}");
        assert!(
            e.reason.contains("in the middle of the response head"),
            "{e:?}"
        );
        // The server closed that connection after the cut head. A pool that still took it for
        // the next request would see that request lost: at most once reports it as maybe
        // executed (the server's log shows it was not) rather than sending it again behind the
        // caller's back; the call after it goes through.
        match call(&client, "add").await {
            Ok(r) => assert_eq!(r.text(), "ok"),
            Err(e) => assert!(maybe_executed(&e), "{e:?}"),
        }
        still_works(&client).await;
        client.close().await;
    });
    // How often each was sent is the subject of the next test.
}

/// Whether a call ended as "may have been executed" (at most once).
fn maybe_executed(e: &Error) -> bool {
    e.maybe_executed()
}

#[test]
fn a_call_is_sent_once_when_the_server_closes_without_answering() {
    let server = FaultServer::start(script(vec![
        Rule::post("tools/call").tool("vanish").close(),
        ok_rule(),
    ]));
    run(async {
        let client = connect(&server).await;
        // Idle keep-alive connections are in the pool now: the next POST reuses one.
        still_works(&client).await;
        still_works(&client).await;
        let err = call(&client, "vanish").await.unwrap_err();
        assert!(maybe_executed(&err), "{err:?}");
        assert!(
            err.to_string().contains("may have run; not repeated"),
            "{err}"
        );
        still_works(&client).await;
        client.close().await;
    });
    // The server read the request and then closed: it may have acted on it. A tools/call is
    // not idempotent, so it must not go out again on its own (RFC 9112, section 9.3.1).
    let sent = server.matching(&Matcher::post("tools/call").tool("vanish"));
    let connections: Vec<usize> = sent.iter().map(|r| r.connection).collect();
    assert_eq!(
        sent.len(),
        1,
        "the same tools/call went out {} times, on connections {connections:?}: {:?}",
        sent.len(),
        server.log()
    );
}

#[test]
fn the_caller_reissues_a_call_that_may_have_run_in_one_call() {
    let server = FaultServer::start(script(vec![
        Rule::post("tools/call").tool("charge").once().close(),
        Rule::post("tools/call")
            .tool("charge")
            .json(200, &tool_result("charged")),
        ok_rule(),
    ]));
    run(async {
        let client = connect(&server).await;
        still_works(&client).await;
        let err = call(&client, "charge").await.unwrap_err();
        assert!(err.maybe_executed(), "{err:?}");
        // The caller's choice: the same call again, as a new request.
        let again = client.reissue(&err).await.unwrap();
        let r: mcpwire::CallToolResult = again.parse().unwrap();
        assert_eq!(r.text(), "charged");
        // Other errors are given back as they are.
        let closed = Error::Closed(mcpwire_core::Closed::new("gone"));
        assert_eq!(client.reissue(&closed).await.unwrap_err(), closed);
        client.close().await;
    });
    let sent = server.matching(&Matcher::post("tools/call").tool("charge"));
    assert_eq!(sent.len(), 2, "{:?}", server.log());
    assert_ne!(sent[0].rpc_id(), sent[1].rpc_id(), "a new id");
}

#[test]
fn a_notification_queued_before_close_goes_before_the_delete() {
    // Connecting and closing at once: `notifications/initialized` was queued when the
    // handshake ended, and the close must not drop it (the session's DELETE comes after it).
    for _ in 0..10 {
        let server = FaultServer::start(script(vec![ok_rule()]));
        run(async {
            let client = connect(&server).await;
            client.close().await;
        });
        let log = server.log();
        let initialized = log
            .iter()
            .position(|l| l.contains("notifications/initialized"));
        let delete = log.iter().position(|l| l.starts_with("DELETE"));
        assert!(
            initialized.is_some() && delete.is_some() && initialized < delete,
            "{log:?}"
        );
    }
}

/// How many times each at-most-once scenario runs: a few in the test command, many with
/// `MCPWIRE_STRESS=1`.
fn repetitions() -> usize {
    match std::env::var_os("MCPWIRE_STRESS") {
        Some(_) => 200,
        None => 5,
    }
}

#[test]
fn lost_after_sending_every_method_arrives_once_and_reads_are_reissued_once() {
    for way in Way::ALL {
        eprintln!("{way:?}");
        lost_after_sending_every_method(way);
    }
}

/// [`lost_after_sending_every_method_arrives_once_and_reads_are_reissued_once`], one way.
fn lost_after_sending_every_method(way: Way) {
    const INIT_ALL: &str = r#"{"jsonrpc":"2.0","id":{{id}},"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{},"prompts":{}},"serverInfo":{"name":"fault","version":"1"}}}"#;
    const LIST: &str = r#"{"jsonrpc":"2.0","id":{{id}},"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}"#;
    const READ: &str =
        r#"{"jsonrpc":"2.0","id":{{id}},"result":{"contents":[{"uri":"demo://x","text":"x"}]}}"#;
    const PROMPT: &str = r#"{"jsonrpc":"2.0","id":{{id}},"result":{"messages":[]}}"#;
    const PONG: &str = r#"{"jsonrpc":"2.0","id":{{id}},"result":{}}"#;
    let mut table = Vec::new();
    for _ in 0..repetitions() {
        // Each method: its first POST is read and the connection closed without a byte; a
        // second one (a read's re-issue) is answered.
        let server = FaultServer::start(vec![
            Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", SESSION)], INIT_ALL),
            Rule::notifications().status(202),
            Rule::get().status(405),
            Rule::delete().status(200),
            Rule::post("tools/call").tool("vanish").close(),
            Rule::post("tools/list").once().close(),
            Rule::post("tools/list").json(200, LIST),
            Rule::post("resources/read").once().close(),
            Rule::post("resources/read").json(200, READ),
            Rule::post("prompts/get").once().close(),
            Rule::post("prompts/get").json(200, PROMPT),
            Rule::post("ping").once().close(),
            Rule::post("ping").json(200, PONG),
            ok_rule(),
        ]);
        let (config, options, _proxy) = way.reach(&server);
        run(async {
            let client = connect_handshake(&config, options).await;
            still_works(&client).await;
            let err = call(&client, "vanish").await.unwrap_err();
            assert!(maybe_executed(&err), "{err:?}");
            assert_eq!(client.list_tools().await.unwrap().len(), 1);
            client.read_resource("demo://x").await.unwrap();
            client.get_prompt("p", None).await.unwrap();
            client.ping().await.unwrap();
            still_works(&client).await;
            client.close().await;
        });
        for (method, expected) in [
            ("tools/call", 1),
            ("tools/list", 2),
            ("resources/read", 2),
            ("prompts/get", 2),
            ("ping", 2),
        ] {
            let mut sent = server.matching(&Matcher::post(method));
            if method == "tools/call" {
                sent.retain(|r| r.json().is_some_and(|j| j["params"]["name"] == "vanish"));
            }
            assert_eq!(sent.len(), expected, "{method}: {:?}", server.log());
            // A re-issue is a new request: a new id.
            let ids: std::collections::HashSet<String> =
                sent.iter().map(|r| format!("{:?}", r.rpc_id())).collect();
            assert_eq!(ids.len(), sent.len(), "{method}: ids reused");
            table.push((method, sent.len()));
        }
    }
    // How often each method arrived how many times, over the repetitions.
    let mut tally = std::collections::BTreeMap::new();
    for arrival in table {
        *tally.entry(arrival).or_insert(0) += 1;
    }
    eprintln!(
        "{way:?}: (method, arrivals) → repetitions, over {}: {tally:?}",
        repetitions()
    );
}

#[test]
fn a_close_in_the_middle_of_the_body() {
    let sse = [("Content-Type", "text/event-stream")];
    let server = FaultServer::start(script(vec![
        // A JSON body shorter than its length.
        Rule::post("tools/call")
            .tool("cut-json")
            .head_with(200, &[("Content-Type", "application/json")], Framing::FixedLength(200))
            .body(r#"{"jsonrpc":"2.0","id":{{id}},"res"#)
            .close(),
        // An SSE stream cut inside an event, with no event id to resume from.
        Rule::post("tools/call")
            .tool("cut-sse")
            .head_chunked(200, &sse)
            .body("data: {\"jsonrpc\":\"2.0\",\"id\":{{id}},\"res")
            .close(),
        // An SSE stream cut after an event id: resumed.
        Rule::post("tools/call")
            .tool("cut-sse-resumable")
            .head_chunked(200, &sse)
            .body("id: ev-9\nretry: 200\ndata: \n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notif")
            .close(),
        Rule::get().header("last-event-id", "ev-9").once().sse(
            &["id: ev-10\ndata: {\"jsonrpc\":\"2.0\",\"id\":{{id:tools/call}},\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"after the cut\"}]}}\n\n"],
            Duration::ZERO,
        ),
        ok_rule(),
    ]));
    run(async {
        let client = connect(&server).await;
        // The server answered 200 and its body was cut: the call ran, its result is lost.
        let err = call(&client, "cut-json").await.unwrap_err();
        assert!(maybe_executed(&err), "{err:?}");
        assert!(err.to_string().contains("HTTP 200"), "{err}");
        eprintln!("close mid-body (JSON): {err}");
        still_works(&client).await;

        let err = call(&client, "cut-sse").await.unwrap_err();
        assert!(maybe_executed(&err), "{err:?}");
        still_works(&client).await;

        let r = call(&client, "cut-sse-resumable").await.unwrap();
        assert_eq!(r.text(), "after the cut");
        client.close().await;
    });
    let log = server.log();
    assert_eq!(
        log.iter()
            .filter(|l| l.starts_with("GET last-event-id"))
            .count(),
        1,
        "{log:?}"
    );
    assert!(server.unmatched().is_empty(), "{:?}", server.notes());
}

/// Peak resident memory of this process, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[test]
fn an_endless_event_keeps_the_client_bounded() {
    const MIB: u64 = 1024 * 1024;
    let sse = [("Content-Type", "text/event-stream")];
    let server = FaultServer::start(script(vec![
        // A data line that never ends; the server gives up after a while and closes.
        Rule::post("tools/call")
            .tool("endless")
            .head_chunked(200, &sse)
            .body("data: ")
            .endless(64 * 1024, Duration::from_secs(8), 64 * MIB)
            .close(),
        // An event over the cap, then the answer: the big event is dropped, the answer arrives.
        Rule::post("tools/call")
            .tool("oversize")
            .head_chunked(200, &sse)
            .body("id: 1\ndata: ")
            .endless(64 * 1024, Duration::from_secs(20), 20 * MIB)
            .body(format!(
                "\n\nid: 2\ndata: {}\n\n",
                tool_result("after the big one")
            )),
        ok_rule(),
    ]));
    run_alone(async {
        let client = connect(&server).await;
        let before = peak_rss();
        let start = Instant::now();
        let err = client
            .call_tool_with(
                "endless",
                json!({}),
                CallOptions::default().timeout(Duration::from_secs(30)),
            )
            .await
            .unwrap_err();
        let sent = server.endless_bytes();
        let grew = peak_rss().saturating_sub(before);
        eprintln!(
            "endless event: {} MiB sent in {:?}, peak memory grew {} MiB, outcome: {err}",
            sent / MIB,
            start.elapsed(),
            grew / MIB
        );
        assert!(maybe_executed(&err), "{err:?}");
        // The cap on one event is 16 MiB: a client that held the whole event would grow by
        // at least what was sent.
        assert!(
            sent >= 48 * MIB,
            "the event never grew well past the cap: {sent} bytes"
        );
        assert!(
            grew < 32 * MIB,
            "memory grew {grew} bytes for a {sent}-byte event"
        );
        still_works(&client).await;
        let r = client
            .call_tool_with(
                "oversize",
                json!({}),
                CallOptions::default().timeout(Duration::from_secs(40)),
            )
            .await
            .unwrap();
        assert_eq!(r.text(), "after the big one");
        client.close().await;
    });
}

/// A `notifications/initialized` the server never answers: the wait behind it and the callers'
/// own waits are one budget. The first request to time out behind it ends never sent; every
/// request queued behind it afterwards ends at once, never sent, with the same kind (a timeout
/// of the wait), saying how long the server was waited for; nothing reaches the server; and the
/// close does not wait for the notification again (the session's DELETE goes at once).
#[test]
fn the_wait_for_notifications_initialized_and_the_calls_are_one_budget() {
    let server = FaultServer::start(vec![
        Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", SESSION)], HANDSHAKE_INIT),
        Rule::notifications().silent(),
        Rule::get().status(405),
        Rule::delete().status(200),
    ]);
    let limit = Duration::from_millis(800);
    let not_sent_as_timeout = |e: &Error| match e {
        Error::Call(CallError::Local(LocalError::NotSent {
            which: Some(_),
            reason,
        })) => reason.to_string(),
        other => panic!("expected NotSent with its deadline, got {other:?}"),
    };
    run(async {
        let client = connect(&server).await;
        let started = Instant::now();
        let listed = client
            .list_tools_with(CallOptions::default().timeout(limit))
            .await
            .expect_err("held behind the notification");
        assert!(listed.is_timeout(), "{listed:?}");
        let first = not_sent_as_timeout(&listed);
        assert!(
            first.contains("waited for the server to answer notifications/initialized"),
            "{first}"
        );
        // The call that follows does not wait a second budget: it ends at once.
        let called = call_within(&client, "add", limit)
            .await
            .expect_err("held behind the notification");
        let waited = started.elapsed();
        assert!(called.is_timeout(), "{called:?}");
        let second = not_sent_as_timeout(&called);
        assert!(
            second.contains(
                "the server has not answered notifications/initialized: tools/list waited \
                 for it for 800 ms (its timeout)"
            ),
            "{second}"
        );
        assert!(
            waited < limit * 2,
            "the two requests waited {waited:?}: one budget is {limit:?}"
        );
        client.close().await;
    });
    // The close sent the session's DELETE at once, not after the notification's grace.
    assert!(
        server
            .wait_for(&Matcher::delete(), Duration::from_secs(1))
            .is_some(),
        "{:?}",
        server.log()
    );
    let log = server.log();
    assert!(
        !log.iter().any(|l| l.contains("tools/")),
        "a request that was told it was never sent reached the server: {log:?}"
    );
}
