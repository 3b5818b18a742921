//! Regression tests for defects a review of the session, stateless and HTTP+SSE code found:
//! each failed before its fix.

use super::*;

fn long() -> CallOptions {
    CallOptions {
        timeout: Duration::from_secs(300),
        ..CallOptions::default()
    }
}

fn id_in(h: &H, x: ExchangeId) -> Id {
    match mcpwire_core::jsonrpc::parse(&h.request(x).body) {
        Ok(Parsed::Single(Message::Request(r))) => r.id,
        other => panic!("not a request: {other:?}"),
    }
}

#[test]
fn a_cancelled_request_reported_unsent_is_not_posted_again() {
    let mut h = H::ready(405);
    let call = h.call("charge_card", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    let now = h.now;
    h.c.cancel(now, call, None).unwrap();
    h.pump();
    h.c.handle_unsent(h.now, post, "connection refused");
    h.open.remove(&post);
    h.pump();
    let line = format!("POST tools/call #{}", call.0);
    assert_eq!(
        h.log.iter().filter(|l| **l == line).count(),
        1,
        "{:?}",
        h.log
    );
}

#[test]
fn a_request_reported_unsent_during_a_renewal_waits_for_the_new_session() {
    let mut h = H::ready(405);
    let a = h.call("a", long());
    let b = h.call("b", long());
    let pa = h.find(&format!("POST tools/call #{}", a.0));
    let pb = h.find(&format!("POST tools/call #{}", b.0));
    h.answer(pa, 404, &[("Content-Type", "application/json")], &[EXPIRED]);
    let before = h.log.len();
    h.c.handle_unsent(h.now, pb, "connection refused");
    h.open.remove(&pb);
    h.pump();
    let line = format!("POST tools/call #{}", b.0);
    assert!(!h.log[before..].contains(&line), "{:?}", h.log);
    let init = h.find("POST initialize");
    h.renewed(init, "sess-2");
    let again = h.find(&line);
    assert_eq!(h.request(again).header("mcp-session-id"), Some("sess-2"));
}

#[test]
fn a_late_head_of_an_initialize_given_up_does_not_replace_the_session() {
    let mut h = H::ready(405);
    let call = h.call("x", long());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.answer(
        post,
        404,
        &[("Content-Type", "application/json")],
        &[EXPIRED],
    );
    let init_a = h.find("POST initialize");
    h.advance_to_next_deadline();
    let init_b = h.find("POST initialize");
    assert_ne!(init_a, init_b);
    h.renewed(init_b, "sess-B");
    let headers = [
        ("Content-Type".to_string(), "application/json".to_string()),
        ("Mcp-Session-Id".to_string(), "sess-A".to_string()),
    ];
    h.c.handle_head(h.now, init_a, 200, &headers);
    h.pump();
    assert_eq!(h.c.session(), Some("sess-B"));
}

#[test]
fn answers_to_an_old_session_s_requests_are_not_kept_for_the_new_one() {
    let mut h = H::ready(405);
    let streaming = h.call("slow", long());
    let stream = h.find("POST tools/call");
    h.c.handle_head(
        h.now,
        stream,
        200,
        &[("content-type".into(), "text/event-stream".into())],
    );
    h.pump();
    let call = h.call("x", long());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.answer(
        post,
        404,
        &[("Content-Type", "application/json")],
        &[EXPIRED],
    );
    // The old session's stream carries 100 pings while the renewal runs.
    for i in 0..100 {
        let ping = json!({"jsonrpc": "2.0", "id": format!("p{i}"), "method": "ping"});
        h.c.handle_body(h.now, stream, format!("data: {ping}\n\n").as_bytes());
        h.pump();
    }
    let init = h.find("POST initialize");
    h.renewed(init, "sess-2");
    assert!(
        !h.log.iter().any(|l| l.starts_with("POST response")),
        "{:?}",
        h.log
    );
    assert_eq!(h.outcome(streaming), None);
}

#[test]
fn a_long_json_rpc_refusal_of_initialize_does_not_move_to_http_sse() {
    let config = ClientConfig {
        capabilities: caps(),
        ..ClientConfig::default()
    };
    let mut h = H::connect(config, endpoint(), HttpOptions::default());
    let probe = h.find("POST server/discover");
    h.answer(probe, 404, &[("Content-Type", "text/plain")], &[b"no"]);
    let init = h.find("POST initialize");
    let long_message = "x".repeat(600);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32602,"message":"{long_message}"}}}}"#
    );
    h.answer(
        init,
        400,
        &[("Content-Type", "application/json")],
        &[body.as_bytes()],
    );
    assert!(!h.log.iter().any(|l| l == "GET"), "{:?}", h.log);
    assert_eq!(
        h.c.http_transport(),
        Some(mcpwire_core::HttpTransportKind::Streamable)
    );
}

#[test]
fn configured_headers_never_repeat_ours_nor_bring_a_session_to_the_stateless_era() {
    let mut server = endpoint();
    for (k, v) in [
        ("Mcp-Method", "forged"),
        ("mcp-name", "forged"),
        ("Mcp-Param-Region", "forged"),
        ("Mcp-Session-Id", "configured"),
    ] {
        server.headers.insert(k.into(), v.into());
    }
    let config = ClientConfig {
        capabilities: caps(),
        era: Era::Stateless,
        ..ClientConfig::default()
    };
    let h = H::connect(config, server, HttpOptions::default());
    let probe = h.find("POST server/discover");
    let r = h.request(probe);
    let count = |name: &str| {
        r.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .count()
    };
    assert_eq!(count("mcp-method"), 1);
    assert_eq!(r.header("mcp-method"), Some("server/discover"));
    assert_eq!(count("mcp-name"), 0);
    assert_eq!(count("mcp-param-region"), 0);
    assert_eq!(count("mcp-session-id"), 0);
}

// ----- HTTP+SSE -----

fn sse_server() -> HttpConfig {
    let mut c = endpoint();
    c.kind = mcpwire_core::config::HttpKind::Sse;
    c
}

#[test]
fn sse_an_endpoint_that_is_not_a_url_ends_everything() {
    let mut h = H::with(sse_server(), HttpOptions::default());
    let get = h.find("GET");
    h.c.handle_head(
        h.now,
        get,
        200,
        &[("content-type".into(), "text/event-stream".into())],
    );
    h.c.handle_body(h.now, get, b"event: endpoint\ndata: ://nowhere\n\n");
    h.pump();
    let now = h.now;
    h.c.close(now);
    h.pump();
    assert!(h.aborted.contains(&get));
    assert!(h.c.is_finished());
    assert_eq!(h.c.poll_timeout(), None);
}

#[test]
fn sse_a_post_that_fails_after_its_2xx_loses_nothing() {
    let mut h = H::with(sse_server(), HttpOptions::default());
    let get = h.find("GET");
    h.c.handle_head(
        h.now,
        get,
        200,
        &[("content-type".into(), "text/event-stream".into())],
    );
    h.c.handle_body(h.now, get, b"event: endpoint\ndata: /m\n\n");
    h.pump();
    let init = h.find("POST initialize");
    let id = id_in(&h, init);
    h.accepted(init);
    let result = json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2024-11-05",
        "capabilities": {"tools": {}}, "serverInfo": {"name": "old", "version": "1"}}});
    h.c.handle_body(h.now, get, format!("data: {result}\n\n").as_bytes());
    h.pump();
    let n = h.find("POST notifications/initialized");
    h.accepted(n);
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    h.c.handle_head(h.now, post, 202, &[]);
    h.c.handle_failure(h.now, post, "connection reset");
    h.open.remove(&post);
    h.pump();
    assert_eq!(h.outcome(call), None, "taken: the answer is to come");
    h.c.handle_body(
        h.now,
        get,
        format!("data: {}\n\n", result_line(call.0)).as_bytes(),
    );
    h.pump();
    assert!(matches!(h.outcome(call), Some(Ok(_))), "{:?}", h.events);
}

#[test]
fn sse_a_ping_in_flight_when_the_connection_moves_ends() {
    let mut h = H::new();
    let now = h.now;
    let ping =
        h.c.ping(
            now,
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
    let get = h.find("GET");
    h.c.handle_head(
        h.now,
        get,
        200,
        &[("content-type".into(), "text/event-stream".into())],
    );
    h.c.handle_body(h.now, get, b"event: endpoint\ndata: /m\n\n");
    h.pump();
    assert!(h.outcome(ping).is_some(), "{:?}", h.events);
    assert_eq!(h.c.pending_requests(), 1, "only the new initialize");
}

#[test]
fn a_404_answering_the_request_itself_is_its_answer_not_an_expired_session() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32601,"message":"Method not found"}}}}"#,
        call.0
    );
    h.answer(
        post,
        404,
        &[("Content-Type", "application/json")],
        &[body.as_bytes()],
    );
    let Some(Err(CallError::Server(e))) = h.outcome(call) else {
        panic!("{:?}", h.events)
    };
    assert_eq!(e.code, -32601);
    assert!(
        !h.log.iter().any(|l| l.starts_with("POST initialize")),
        "{:?}",
        h.log
    );
    assert_eq!(h.c.session(), Some("sess-1"));
    // A 404 with "session not found" (id null) is still an expired session.
    let call = h.call("y", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.answer(
        post,
        404,
        &[("Content-Type", "application/json")],
        &[EXPIRED],
    );
    assert!(
        h.log.iter().any(|l| l.starts_with("POST initialize")),
        "{:?}",
        h.log
    );
}
