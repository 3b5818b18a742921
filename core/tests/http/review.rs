//! Regression tests for defects a review of the session and stateless code found (the HTTP+SSE
//! ones are in `sse.rs`, with that transport's harness):
//! each failed before its fix.

use super::*;

fn long() -> CallOptions {
    CallOptions {
        timeout: Duration::from_secs(300),
        ..CallOptions::default()
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
    h.c.handle_http(h.now, post, HttpInput::Unsent("connection refused".into()))
        .unwrap();
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
    h.c.handle_http(h.now, pb, HttpInput::Unsent("connection refused".into()))
        .unwrap();
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
    h.c.handle_http(
        h.now,
        init_a,
        HttpInput::Head {
            status: 200,
            headers: &headers,
        },
    )
    .unwrap();
    h.pump();
    assert_eq!(h.c.session(), Some("sess-B"));
}

#[test]
fn answers_to_an_old_session_s_requests_are_not_kept_for_the_new_one() {
    let mut h = H::ready(405);
    let streaming = h.call("slow", long());
    let stream = h.find("POST tools/call");
    h.c.handle_http(
        h.now,
        stream,
        HttpInput::Head {
            status: 200,
            headers: &[("content-type".into(), "text/event-stream".into())],
        },
    )
    .unwrap();
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
        h.c.handle_http(
            h.now,
            stream,
            HttpInput::Body(format!("data: {ping}\n\n").as_bytes()),
        )
        .unwrap();
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
    let mut h = H::in_era(Era::Auto);
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
        Some(mcpwire_core::HttpKind::Streamable)
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
