//! The 2024-11-05 HTTP+SSE transport in memory: one GET stream whose `endpoint` event names
//! where to POST; answers on the stream; its loss ends what was pending; found by `Era::Auto`
//! after Streamable HTTP's `initialize` is refused.

use super::*;

use mcpwire_core::{Closed, HttpKind};

fn sse_endpoint() -> HttpConfig {
    let mut c = endpoint();
    c.kind = mcpwire_core::config::HttpKind::Sse;
    c
}

fn pinned() -> H {
    H::with(sse_endpoint(), HttpOptions::default())
}

/// Opens the stream: 200, an event stream, the `endpoint` event with `data`.
fn open_stream(h: &mut H, data: &str) -> ExchangeId {
    let get = h.find("GET");
    h.c.handle_http(
        h.now,
        get,
        HttpInput::Head {
            status: 200,
            headers: &[("content-type".into(), "text/event-stream".into())],
        },
    )
    .unwrap();
    h.c.handle_http(
        h.now,
        get,
        HttpInput::Body(format!("event: endpoint\ndata: {data}\n\n").as_bytes()),
    )
    .unwrap();
    h.pump();
    get
}

/// A message from the server on the stream.
fn on_stream(h: &mut H, get: ExchangeId, message: Value) {
    h.c.handle_http(
        h.now,
        get,
        HttpInput::Body(format!("event: message\ndata: {message}\n\n").as_bytes()),
    )
    .unwrap();
    h.pump();
}

fn init_result(id: Id) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2024-11-05",
        "capabilities": {"tools": {}}, "serverInfo": {"name": "old", "version": "1"}}})
}

/// A pinned connection whose `initialize` was answered: its stream, and the POST of
/// `notifications/initialized`, not answered yet.
fn initialized() -> (H, ExchangeId, ExchangeId) {
    initialized_from(pinned())
}

/// [`initialized`] for the pinned connection `h`, just made.
fn initialized_from(mut h: H) -> (H, ExchangeId, ExchangeId) {
    let get = open_stream(&mut h, "/message?sessionId=abc");
    let init = h.find("POST initialize");
    let id = h.request_id(init);
    h.accepted(init);
    on_stream(&mut h, get, init_result(id));
    assert!(h.c.is_ready(), "{:?}", h.events);
    let n = h.find("POST notifications/initialized");
    (h, get, n)
}

/// A pinned connection, ready.
fn ready() -> (H, ExchangeId) {
    let (mut h, get, n) = initialized();
    h.accepted(n);
    h.log.clear();
    h.events.clear();
    (h, get)
}

/// As over Streamable HTTP: a request made while `notifications/initialized` is being POSTed
/// waits for that POST's acceptance, so the server has taken it first.
#[test]
fn the_first_request_waits_until_the_initialized_notification_is_accepted() {
    let (mut h, get, n) = initialized();
    let call = h.call("x", CallOptions::default());
    assert!(
        !h.log.iter().any(|l| l.starts_with("POST tools/call")),
        "{:?}",
        h.log
    );
    h.accepted(n);
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.accepted(post);
    on_stream(
        &mut h,
        get,
        serde_json::from_str(&result_line(call.0)).unwrap(),
    );
    assert!(matches!(h.outcome(call), Some(Ok(_))), "{:?}", h.events);
}

#[test]
fn pinned_the_stream_comes_first_and_messages_go_to_its_endpoint() {
    let mut h = pinned();
    assert_eq!(h.log, ["GET"], "no POST before the endpoint");
    let get = h.find("GET");
    assert_eq!(h.request(get).header("accept"), Some("text/event-stream"));
    assert_eq!(h.c.http_transport(), Some(HttpKind::Sse));
    let get = open_stream(&mut h, "/message?sessionId=abc");
    let init = h.find("POST initialize");
    assert_eq!(
        h.request(init).url,
        "http://127.0.0.1:1/message?sessionId=abc"
    );
    assert_eq!(h.request(init).header("mcp-session-id"), None);
    let id = h.request_id(init);
    h.accepted(init);
    on_stream(&mut h, get, init_result(id));
    assert!(h.c.is_ready());
    assert_eq!(h.c.era(), Some(mcpwire_core::ChosenEra::Handshake));
    assert_eq!(h.c.server().unwrap().protocol_version, "2024-11-05");
    assert!(h.log.iter().any(|l| l == "POST notifications/initialized"));
    // No standalone GET, no DELETE in this transport.
    assert_eq!(h.log.iter().filter(|l| l.starts_with("GET")).count(), 1);
}

#[test]
fn calls_and_server_requests_go_by_id_over_the_one_stream() {
    let (mut h, get) = ready();
    let a = h.call("a", CallOptions::default());
    let b = h.call("b", CallOptions::default());
    let posts = [
        h.find(&format!("POST tools/call #{}", a.0)),
        h.find(&format!("POST tools/call #{}", b.0)),
    ];
    for post in posts {
        h.accepted(post);
    }
    // Answers in the other order, and a server request between them.
    on_stream(
        &mut h,
        get,
        serde_json::from_str(&result_line(b.0)).unwrap(),
    );
    on_stream(
        &mut h,
        get,
        json!({"jsonrpc": "2.0", "id": "srv-1", "method": "elicitation/create",
            "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}}),
    );
    on_stream(
        &mut h,
        get,
        serde_json::from_str(&result_line(a.0)).unwrap(),
    );
    assert!(matches!(h.outcome(a), Some(Ok(_))));
    assert!(matches!(h.outcome(b), Some(Ok(_))));
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, Event::ServerRequest(ServerRequest::Elicitation { .. }))));
    let now = h.now;
    let answer = RawJson::new(&json!({"action": "decline"})).unwrap();
    h.c.respond(now, &Id::Str("srv-1".into()), Ok(answer))
        .unwrap();
    h.pump();
    let post = h.find("POST response");
    assert_eq!(
        h.request(post).url,
        "http://127.0.0.1:1/message?sessionId=abc"
    );
}

#[test]
fn an_endpoint_on_another_origin_is_refused() {
    let mut h = pinned();
    open_stream(&mut h, "http://evil.example:80/message");
    assert!(!h.log.iter().any(|l| l.starts_with("POST")), "{:?}", h.log);
    let reason = h
        .events
        .iter()
        .find_map(|e| match e {
            Event::HandshakeFailed(CallError::Local(LocalError::Closed(Closed { reason }))) => {
                Some(reason.to_string())
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("{:?}", h.events));
    assert!(reason.contains("origin"), "{reason}");
    assert!(h.c.is_closed());
}

#[test]
fn the_stream_s_loss_ends_pending_calls_as_maybe_run_and_the_connection() {
    let (mut h, get) = ready();
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    h.accepted(post);
    h.c.handle_http(h.now, get, HttpInput::Failure("connection reset".into()))
        .unwrap();
    h.open.remove(&get);
    h.pump();
    assert!(maybe_executed(h.outcome(call)), "{:?}", h.events);
    assert!(h.events.iter().any(|e| matches!(e, Event::Closed(_))));
    assert!(h.c.is_closed());
    assert!(!h.log.iter().any(|l| l.starts_with("GET")), "no reconnect");
}

#[test]
fn an_endpoint_that_never_comes_times_the_connect_out() {
    let mut h = pinned();
    let get = h.find("GET");
    h.c.handle_http(
        h.now,
        get,
        HttpInput::Head {
            status: 200,
            headers: &[("content-type".into(), "text/event-stream".into())],
        },
    )
    .unwrap();
    h.c.handle_http(h.now, get, HttpInput::Body(b": waiting\n\n"))
        .unwrap();
    h.pump();
    h.advance_to_next_deadline();
    assert!(h.aborted.contains(&get));
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, Event::HandshakeFailed(_))),
        "{:?}",
        h.events
    );
    assert!(h.c.is_closed());
}

#[test]
fn a_refused_post_fails_its_call_only() {
    let (mut h, _get) = ready();
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    h.answer(post, 500, &[("Content-Type", "text/plain")], &[b"boom"]);
    let Some(Err(CallError::Local(LocalError::Http(e)))) = h.outcome(call) else {
        panic!("{:?}", h.events)
    };
    assert_eq!(e.status, Some(500));
    assert!(e.body_excerpt.contains("boom"));
    assert!(!h.c.is_closed());
}

#[test]
fn auto_finds_it_when_streamable_http_is_refused() {
    let mut h = H::in_era(Era::Auto);
    let probe = h.find("POST server/discover");
    h.answer(
        probe,
        404,
        &[("Content-Type", "text/html")],
        &[b"Cannot POST /sse"],
    );
    let init = h.find("POST initialize");
    h.answer(
        init,
        404,
        &[("Content-Type", "text/html")],
        &[b"Cannot POST /sse"],
    );
    assert_eq!(h.c.http_transport(), Some(HttpKind::Sse));
    assert_eq!(
        h.log,
        ["POST server/discover #0", "POST initialize #1", "GET"]
    );
    let get = open_stream(&mut h, "/message?sessionId=1");
    let init = h.find("POST initialize");
    let id = h.request_id(init);
    assert_ne!(id, Id::Num(1), "the handshake starts again");
    h.accepted(init);
    on_stream(&mut h, get, init_result(id));
    assert!(h.c.is_ready(), "{:?}", h.events);
    assert_eq!(h.c.era(), Some(mcpwire_core::ChosenEra::Handshake));
    assert!(!h
        .events
        .iter()
        .any(|e| matches!(e, Event::HandshakeFailed(_))));
}

fn auto() -> H {
    let mut h = H::in_era(Era::Auto);
    let probe = h.find("POST server/discover");
    h.answer(
        probe,
        404,
        &[("Content-Type", "text/plain")],
        &[b"Not Found"],
    );
    h
}

#[test]
fn a_json_rpc_refusal_of_initialize_is_an_answer_not_a_sign_of_the_old_transport() {
    let mut h = auto();
    let init = h.find("POST initialize");
    let body = br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#;
    h.answer(init, 400, &[("Content-Type", "application/json")], &[body]);
    assert!(!h.log.iter().any(|l| l == "GET"), "{:?}", h.log);
    assert_eq!(h.c.http_transport(), Some(HttpKind::Streamable));
    let failed = h.events.iter().find_map(|e| match e {
        Event::HandshakeFailed(CallError::Local(LocalError::Http(e))) => Some(e.status),
        _ => None,
    });
    assert_eq!(failed, Some(Some(400)), "{:?}", h.events);
}

#[test]
fn when_neither_transport_is_there_the_error_is_the_refusal_of_initialize() {
    let mut h = auto();
    let init = h.find("POST initialize");
    h.answer(
        init,
        404,
        &[("Content-Type", "text/html")],
        &[b"Cannot POST /mcp"],
    );
    let get = h.find("GET");
    h.answer(
        get,
        404,
        &[("Content-Type", "text/html")],
        &[b"Cannot GET /mcp"],
    );
    let e = h
        .events
        .iter()
        .find_map(|e| match e {
            Event::HandshakeFailed(CallError::Local(LocalError::Http(e))) => Some(e.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{:?}", h.events));
    assert_eq!(e.status, Some(404));
    assert!(e.body_excerpt.contains("Cannot POST"), "{e:?}");
    assert!(e.reason.contains("no HTTP+SSE transport"), "{e:?}");
    assert!(h.c.is_closed());
}

// ----- defects a review found (each failed before its fix) -----

#[test]
fn an_endpoint_that_is_not_a_url_ends_everything() {
    let mut h = pinned();
    let get = open_stream(&mut h, "://nowhere");
    let now = h.now;
    h.c.close(now);
    h.pump();
    assert!(h.aborted.contains(&get));
    assert!(h.c.is_finished());
    assert_eq!(h.c.poll_timeout(), None);
}

#[test]
fn a_post_that_fails_after_its_2xx_loses_nothing() {
    let (mut h, get) = ready();
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Head {
            status: 202,
            headers: &[],
        },
    )
    .unwrap();
    h.c.handle_http(h.now, post, HttpInput::Failure("connection reset".into()))
        .unwrap();
    h.open.remove(&post);
    h.pump();
    assert_eq!(h.outcome(call), None, "taken: the answer is to come");
    on_stream(
        &mut h,
        get,
        serde_json::from_str(&result_line(call.0)).unwrap(),
    );
    assert!(matches!(h.outcome(call), Some(Ok(_))), "{:?}", h.events);
}

#[test]
fn a_ping_in_flight_when_the_connection_moves_ends() {
    let mut h = H::new();
    let now = h.now;
    let ping =
        h.c.call(
            now,
            &McpCall::ping(),
            CallOptions {
                timeout: Duration::MAX,
                ..CallOptions::default()
            },
        )
        .unwrap();
    h.pump();
    let init = h.find("POST initialize");
    h.answer(
        init,
        405,
        &[("Content-Type", "text/plain")],
        &[b"Method Not Allowed"],
    );
    open_stream(&mut h, "/m");
    assert!(h.outcome(ping).is_some(), "{:?}", h.events);
    assert_eq!(h.c.pending_requests(), 1, "only the new initialize");
}

#[test]
fn a_404_in_the_session_renews_it_whatever_its_body_says() {
    // A 404 to a POST that carried the session means the server forgot the session (the
    // specification's MUST), even when its JSON body is an error carrying the request's own id:
    // taking that as the call's answer left every later call failing "session not found".
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32001,"message":"session expired"}}}}"#,
        call.0
    );
    h.answer(
        post,
        404,
        &[("Content-Type", "application/json")],
        &[body.as_bytes()],
    );
    assert_eq!(h.outcome(call), None, "not an answer: {:?}", h.events);
    let init = h.find("POST initialize");
    assert_eq!(h.request(init).header("mcp-session-id"), None);
    h.renewed(init, "sess-2");
    // Not processed: sent once more, in the new session, and answered there.
    let again = h.find(&format!("POST tools/call #{}", call.0));
    assert_ne!(again, post);
    assert_eq!(h.request(again).header("mcp-session-id"), Some("sess-2"));
    h.json(again, serde_json::from_str(&result_line(call.0)).unwrap());
    assert!(matches!(h.outcome(call), Some(Ok(_))), "{:?}", h.events);
    assert_eq!(h.c.session(), Some("sess-2"));
}

const STEP_UP: &str = r#"Bearer scope="mcp:write", error="insufficient_scope""#;

/// A pinned connection that authorizes when refused.
fn pinned_authorizing() -> H {
    let options = HttpOptions {
        authorization: true,
        ..HttpOptions::default()
    };
    H::with(sse_endpoint(), options)
}

#[test]
fn a_refused_stream_waits_for_the_token_then_opens_with_it() {
    let mut h = pinned_authorizing();
    let get = h.find("GET");
    h.answer(get, 401, &[("WWW-Authenticate", CHALLENGE)], &[b"no"]);
    assert!(h.aborted.contains(&get));
    let asked = refusals(&h);
    assert_eq!(asked.len(), 1, "{:?}", h.events);
    assert_eq!(asked[0].status, 401);
    assert_eq!(asked[0].challenges, [CHALLENGE]);
    assert!(!h.c.is_closed(), "{:?}", h.events);
    // The time to sign in is not the endpoint's: nothing times out meanwhile.
    h.now += std::time::Duration::from_secs(120);
    h.c.handle_timeout(h.now);
    h.pump();
    assert!(!h.c.is_closed(), "{:?}", h.events);
    assert_eq!(h.log, ["GET"]);

    h.c.handle_authorization(h.now, AuthorizationInput::Token("tok-1"))
        .unwrap();
    h.pump();
    assert_eq!(h.log, ["GET", "GET"]);
    let get = h.find("GET");
    assert_eq!(h.request(get).header("authorization"), Some("Bearer tok-1"));
    let get = open_stream(&mut h, "/message?sessionId=abc");
    let init = h.find("POST initialize");
    assert_eq!(
        h.request(init).header("authorization"),
        Some("Bearer tok-1")
    );
    let id = h.request_id(init);
    h.accepted(init);
    on_stream(&mut h, get, init_result(id));
    assert!(h.c.is_ready(), "{:?}", h.events);
}

#[test]
fn a_refused_post_is_parked_and_goes_again_with_its_own_id_and_what_followed_it_waits() {
    let (mut h, get, n) = initialized_from(pinned_authorizing());
    h.accepted(n);
    h.log.clear();
    h.events.clear();

    let call = h.call("x", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.answer(post, 403, &[("WWW-Authenticate", STEP_UP)], &[b"scope"]);
    let asked = refusals(&h);
    assert_eq!(asked.len(), 1);
    assert!(asked[0].is_step_up());
    let later = h.call("y", CallOptions::default());
    assert_eq!(h.log.len(), 1, "nothing goes while waiting: {:?}", h.log);
    h.c.handle_authorization(h.now, AuthorizationInput::Token("tok-2"))
        .unwrap();
    h.pump();
    let again = h.find(&format!("POST tools/call #{}", call.0));
    assert_ne!(again, post);
    assert_eq!(
        h.request(again).header("authorization"),
        Some("Bearer tok-2")
    );
    let next = h.find(&format!("POST tools/call #{}", later.0));
    h.accepted(again);
    h.accepted(next);
    on_stream(
        &mut h,
        get,
        serde_json::from_str(&result_line(call.0)).unwrap(),
    );
    on_stream(
        &mut h,
        get,
        serde_json::from_str(&result_line(later.0)).unwrap(),
    );
    assert!(matches!(h.outcome(call), Some(Ok(_))), "{:?}", h.events);
    assert!(matches!(h.outcome(later), Some(Ok(_))), "{:?}", h.events);
    assert_eq!(refusals(&h).len(), 1, "asked once");
}

#[test]
fn a_failed_authorization_ends_what_waited_and_a_stream_that_waited_ends_the_connection() {
    let (mut h, _get, n) = initialized_from(pinned_authorizing());
    h.accepted(n);
    let call = h.call("x", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.answer(post, 401, &[("WWW-Authenticate", CHALLENGE)], &[]);
    h.c.handle_authorization(
        h.now,
        AuthorizationInput::Failed("the user closed the page"),
    )
    .unwrap();
    h.pump();
    let Some(Err(CallError::Local(LocalError::Http(e)))) = h.outcome(call) else {
        panic!("{:?}", h.events)
    };
    assert_eq!(e.kind, mcpwire_core::error::HttpErrorKind::Unauthorized);
    assert!(e.reason.contains("the user closed the page"), "{e}");
    assert!(!h.c.is_closed(), "the connection lives on");

    let mut h = pinned_authorizing();
    let get = h.find("GET");
    h.answer(get, 401, &[("WWW-Authenticate", CHALLENGE)], &[]);
    h.c.handle_authorization(h.now, AuthorizationInput::Failed("no browser"))
        .unwrap();
    h.pump();
    assert!(h.c.is_closed());
    let failed = h.events.iter().any(|e| {
        matches!(e, Event::HandshakeFailed(CallError::Local(LocalError::Http(e)))
            if e.kind == mcpwire_core::error::HttpErrorKind::Unauthorized)
    });
    assert!(failed, "{:?}", h.events);
}

#[test]
fn without_authorization_a_refused_stream_ends_the_connection_as_before() {
    let mut h = pinned();
    let get = h.find("GET");
    h.answer(get, 401, &[("WWW-Authenticate", CHALLENGE)], &[]);
    assert!(refusals(&h).is_empty());
    assert!(h.c.is_closed(), "{:?}", h.events);
}
