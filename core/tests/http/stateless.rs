//! The stateless era over HTTP, and era detection over HTTP, in memory: the probe and how each
//! answer to it is judged; self-contained POSTs with the request-metadata headers; refusals
//! delivered as answers; streams never resumed; cancellation by closing the stream.

use super::*;

const DISCOVER: &str = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern","version":"1"}},"ttlMs":0}"#;

fn params_of(h: &H, x: ExchangeId) -> Value {
    let v: Value = serde_json::from_slice(&h.request(x).body).unwrap();
    v["params"].clone()
}

/// A connection that detected a 2026-07-28 server.
fn modern() -> H {
    let mut h = H::in_era(Era::Auto);
    let probe = h.find("POST server/discover");
    let id = h.request_id(probe);
    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{DISCOVER}}}"#);
    h.answer(
        probe,
        200,
        &[("Content-Type", "application/json")],
        &[body.as_bytes()],
    );
    assert!(h.c.is_ready(), "{:?}", h.events);
    assert_eq!(h.c.era(), Some(mcpwire_core::ChosenEra::Stateless));
    h.log.clear();
    h.sessions.clear();
    h.events.clear();
    h
}

#[test]
fn the_probe_goes_first_with_the_modern_headers_and_an_answer_means_the_stateless_era() {
    let h = H::in_era(Era::Auto);
    assert_eq!(h.log, ["POST server/discover #0"]);
    let probe = h.find("POST server/discover");
    let r = h.request(probe);
    assert_eq!(r.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(r.header("mcp-method"), Some("server/discover"));
    assert_eq!(r.header("mcp-session-id"), None);
    assert_eq!(
        r.header("accept"),
        Some("application/json, text/event-stream")
    );
    let meta = &params_of(&h, probe)["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    let mut h = modern();
    let call = h.call("get_weather", CallOptions::default());
    let post = h.find("POST tools/call");
    let r = h.request(post);
    assert_eq!(r.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(r.header("mcp-method"), Some("tools/call"));
    assert_eq!(r.header("mcp-name"), Some("get_weather"));
    assert_eq!(r.header("mcp-session-id"), None);
    let meta = &params_of(&h, post)["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
    h.json(post, serde_json::from_str(&result_line(call.0)).unwrap());
    assert!(matches!(h.outcome(call), Some(Ok(_))), "{:?}", h.events);
    // No GET stream, no DELETE in this era.
    h.c.close(h.now);
    h.pump();
    assert_eq!(h.log, ["POST tools/call #1"], "{:?}", h.log);
    assert!(h.c.is_finished());
}

#[test]
fn an_older_server_refusing_the_probe_gets_the_handshake() {
    let refusals: [(u16, &str, &[u8]); 5] = [
        (404, "text/html", b"<html>Not Found</html>"),
        (405, "text/plain", b""),
        (400, "application/json", br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#),
        (400, "application/json", br#"{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"Invalid request parameters"}}"#),
        (404, "application/json", br#"{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}"#),
    ];
    for (status, ct, body) in refusals {
        let mut h = H::in_era(Era::Auto);
        let probe = h.find("POST server/discover");
        h.answer(probe, status, &[("Content-Type", ct)], &[body]);
        assert_eq!(
            h.log,
            ["POST server/discover #0", "POST initialize #1"],
            "{status} {ct}: {:?}",
            h.events
        );
        let init = h.find("POST initialize");
        assert_eq!(h.request(init).header("mcp-method"), None);
        h.renewed(init, "sess-1");
        assert!(h.c.is_ready());
        assert_eq!(h.c.era(), Some(mcpwire_core::ChosenEra::Handshake));
        assert!(
            h.log.iter().any(|l| l == "GET"),
            "the handshake era's GET stream"
        );
    }
}

/// Loses the open exchange that `what` names after its request may have reached the server:
/// it went on a reused connection the server had closed, and no byte of an answer came.
fn lose(h: &mut H, what: &str) {
    let x = h.find(what);
    let stale = mcpwire_core::error::ExchangeFailure::new(
        mcpwire_core::error::HttpErrorKind::StaleConnection,
        "the request went on a reused connection and the server had closed it",
    );
    h.c.handle_http(h.now, x, HttpInput::Failure(stale))
        .unwrap();
    h.open.remove(&x);
    h.pump();
}

/// The probe and `initialize` change nothing on a server: one lost after it may have reached
/// the server (a connection the server was closing) goes once more, with a new id; a second
/// loss of the same request fails the start, saying it was sent twice. An answer that came but
/// cannot be read is no loss of that kind: the start ends on it.
#[test]
fn a_lost_probe_or_initialize_goes_once_more_and_a_second_loss_fails() {
    let mut h = H::in_era(Era::Auto);
    lose(&mut h, "POST server/discover");
    let probe = h.find("POST server/discover");
    h.answer(probe, 404, &[("Content-Type", "text/plain")], &[b"no"]);
    lose(&mut h, "POST initialize");
    let init = h.find("POST initialize");
    h.renewed(init, "sess-1");
    assert!(h.c.is_ready(), "{:?}", h.events);
    assert_eq!(
        h.log[..4],
        [
            "POST server/discover #0",
            "POST server/discover #1",
            "POST initialize #2",
            "POST initialize #3"
        ],
        "{:?}",
        h.log
    );
    assert!(
        !h.events
            .iter()
            .any(|e| matches!(e, Event::HandshakeFailed(_))),
        "{:?}",
        h.events
    );

    for what in ["POST server/discover", "POST initialize"] {
        let mut h = H::in_era(Era::Auto);
        if what == "POST initialize" {
            let probe = h.find("POST server/discover");
            h.answer(probe, 405, &[], &[]);
        }
        lose(&mut h, what);
        lose(&mut h, what);
        assert_eq!(h.log.iter().filter(|l| l.starts_with(what)).count(), 2);
        let failed = h.events.iter().find_map(|e| match e {
            Event::HandshakeFailed(CallError::Local(LocalError::MaybeExecuted {
                reason, ..
            })) => Some(reason.to_string()),
            _ => None,
        });
        let failed = failed.unwrap_or_else(|| panic!("{what}: {:?}", h.events));
        assert!(failed.contains("already sent a second time"), "{failed}");
        assert!(h.c.is_closed());
    }

    let mut h = H::in_era(Era::Auto);
    let probe = h.find("POST server/discover");
    h.answer(probe, 405, &[], &[]);
    let init = h.find("POST initialize");
    let unreadable = mcpwire_core::error::ExchangeFailure::new(
        mcpwire_core::error::HttpErrorKind::HeadCutShort,
        "the response head is over the limit",
    );
    h.c.handle_http(h.now, init, HttpInput::Failure(unreadable))
        .unwrap();
    h.open.remove(&init);
    h.pump();
    assert_eq!(
        h.log
            .iter()
            .filter(|l| l.starts_with("POST initialize"))
            .count(),
        1,
        "{:?}",
        h.log
    );
    assert!(h.c.is_closed(), "{:?}", h.events);
}

#[test]
fn auth_failures_server_failures_and_silence_are_not_signs_of_the_era() {
    for status in [401u16, 403, 500, 503] {
        let mut h = H::in_era(Era::Auto);
        let probe = h.find("POST server/discover");
        let body = br#"{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"no"}}"#;
        h.answer(
            probe,
            status,
            &[("Content-Type", "application/json")],
            &[body],
        );
        assert!(
            !h.log.iter().any(|l| l.starts_with("POST initialize")),
            "{status}: {:?}",
            h.log
        );
        let failed = h.events.iter().find_map(|e| match e {
            Event::HandshakeFailed(CallError::Local(LocalError::Http(e))) => Some(e.status),
            _ => None,
        });
        assert_eq!(failed, Some(Some(status)), "{:?}", h.events);
        assert!(h.c.is_closed());
    }
    let mut h = H::in_era(Era::Auto);
    h.advance_to_next_deadline();
    assert!(
        !h.log.iter().any(|l| l.starts_with("POST initialize")),
        "no fallback on silence over HTTP: {:?}",
        h.log
    );
    assert!(h.events.iter().any(|e| matches!(
        e,
        Event::HandshakeFailed(CallError::Local(LocalError::Timeout { .. }))
    )));
}

#[test]
fn pinned_to_the_stateless_era_an_older_server_is_an_error() {
    let mut h = H::in_era(Era::Stateless);
    let probe = h.find("POST server/discover");
    h.answer(probe, 404, &[("Content-Type", "text/plain")], &[b"no"]);
    assert!(!h.log.iter().any(|l| l.starts_with("POST initialize")));
    assert!(h.c.is_closed());
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, Event::HandshakeFailed(_))));
}

#[test]
fn a_modern_error_with_a_400_is_the_answer() {
    let mut h = modern();
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"missing _meta"}}}}"#,
        call.0
    );
    h.answer(
        post,
        400,
        &[("Content-Type", "application/json")],
        &[body.as_bytes()],
    );
    let Some(Err(CallError::Server(e))) = h.outcome(call) else {
        panic!("{:?}", h.events)
    };
    assert_eq!(e.code, -32602);
    // A 400 that is not an answer is an HTTP error.
    let call = h.call("x", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.answer(post, 400, &[("Content-Type", "text/plain")], &[b"bad"]);
    let Some(Err(CallError::Local(LocalError::Http(e)))) = h.outcome(call) else {
        panic!("{:?}", h.events)
    };
    assert_eq!(e.status, Some(400));
}

#[test]
fn a_stateless_stream_is_never_resumed_and_a_lost_call_may_have_run() {
    let mut h = modern();
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Head {
            status: 200,
            headers: &[("content-type".into(), "text/event-stream".into())],
        },
    )
    .unwrap();
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Body(b"id: ev-1\nretry: 10\ndata: \n\n"),
    )
    .unwrap();
    h.c.handle_http(h.now, post, HttpInput::Failure("connection reset".into()))
        .unwrap();
    h.open.remove(&post);
    h.pump();
    assert!(maybe_executed(h.outcome(call)), "{:?}", h.events);
    assert!(h
        .c
        .poll_timeout()
        .is_none_or(|t| t > h.now + Duration::from_secs(1)));
    assert!(!h.log.iter().any(|l| l.starts_with("GET")), "{:?}", h.log);
    // A read is re-issued once, with a new id.
    let now = h.now;
    let list =
        h.c.call(now, &McpCall::list_tools(), CallOptions::default())
            .unwrap();
    h.pump();
    let post = h.find("POST tools/list");
    let first = h.request_id(post);
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Head {
            status: 200,
            headers: &[("content-type".into(), "text/event-stream".into())],
        },
    )
    .unwrap();
    h.c.handle_http(h.now, post, HttpInput::End).unwrap();
    h.open.remove(&post);
    h.pump();
    let again = h.find("POST tools/list");
    assert_ne!(h.request_id(again), first);
    // Told as an event (for traces), with why the first was lost; the caller sees only the end.
    let reissued: Vec<&str> = (h.events.iter())
        .filter_map(|e| match e {
            Event::CallReissued { call, reason } if *call == list => Some(&**reason),
            _ => None,
        })
        .collect();
    assert_eq!(reissued.len(), 1, "{:?}", h.events);
    assert!(!reissued[0].is_empty());
    let id = h.request_id(again);
    h.json(
        again,
        json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [], "ttlMs": 0}}),
    );
    assert!(matches!(h.outcome(list), Some(Ok(_))), "{:?}", h.events);
}

#[test]
fn cancelling_closes_the_stream_and_posts_nothing() {
    let mut h = modern();
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    let now = h.now;
    h.c.cancel(now, call, Some("stop".into())).unwrap();
    h.pump();
    assert!(h.aborted.contains(&post), "{:?}", h.aborted);
    assert_eq!(h.log, ["POST tools/call #1"], "no notification POSTed");
    assert!(matches!(
        h.outcome(call),
        Some(Err(CallError::Local(LocalError::Cancelled { .. })))
    ));
}

#[test]
fn an_unsupported_version_on_the_probe_sends_it_again_to_learn_the_server() {
    let mut h = H::in_era(Era::Auto);
    let probe = h.find("POST server/discover");
    let body = r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"1900-01-01"}}}"#;
    h.answer(
        probe,
        400,
        &[("Content-Type", "application/json")],
        &[body.as_bytes()],
    );
    assert!(!h.c.is_ready());
    let again = h.find("POST server/discover");
    assert_eq!(
        h.request(again).header("mcp-protocol-version"),
        Some("2026-07-28")
    );
    let id = h.request_id(again);
    // The server's identity in the result itself (some servers put it there).
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"supportedVersions":["2026-07-28"],"capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"plain","version":"2"}}}}}}"#
    );
    h.answer(
        again,
        200,
        &[("Content-Type", "application/json")],
        &[body.as_bytes()],
    );
    assert!(h.c.is_ready(), "{:?}", h.events);
    let server = h.c.server().unwrap();
    assert_eq!(server.server_info.name, "plain");
    assert!(server.capabilities.tools.is_some());
    assert_eq!(
        h.log,
        ["POST server/discover #0", "POST server/discover #1"]
    );
}

#[test]
fn tool_marks_become_headers_and_tools_with_bad_marks_are_left_out() {
    let mut h = modern();
    let now = h.now;
    let list =
        h.c.call(now, &McpCall::list_tools(), CallOptions::default())
            .unwrap();
    h.pump();
    let post = h.find("POST tools/list");
    let id = h.request_id(post);
    h.json(
        post,
        json!({"jsonrpc": "2.0", "id": id, "result": {"ttlMs": 0, "tools": [
            {"name": "valid_tool", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "verbose": {"type": "boolean", "x-mcp-header": "Verbose"}}}},
            {"name": "bad_tool", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "number", "x-mcp-header": "A"}}}}]}}),
    );
    let Some(Ok(listed)) = h.outcome(list) else {
        panic!("{:?}", h.events)
    };
    let listed: Value = serde_json::from_str(listed.get()).unwrap();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["valid_tool"]);
    assert!(h.events.iter().any(|e| matches!(e,
        Event::Diagnostic(Diagnostic::ToolDropped { tool, .. }) if tool == "bad_tool")));
    let now = h.now;
    let args = json!({"region": "us-west1", "verbose": null});
    h.c.call(
        now,
        &McpCall::call_tool("valid_tool", Some(args)),
        CallOptions::default(),
    )
    .unwrap();
    h.pump();
    let post = h.find("POST tools/call");
    let r = h.request(post);
    assert_eq!(r.header("mcp-param-region"), Some("us-west1"));
    assert_eq!(r.header("mcp-param-verbose"), None, "null sends no header");
}

#[test]
fn a_listed_tool_s_schema_reaches_the_caller_exactly_as_sent() {
    let mut h = modern();
    let now = h.now;
    let list =
        h.c.call(now, &McpCall::list_tools(), CallOptions::default())
            .unwrap();
    h.pump();
    let schema = r#"{"type":"object","properties":{"z":{"type":"integer","maximum":123456789012345678901234567890},"a":{"$ref":"https://example.com/s.json"}},"$defs":{"x":{"$anchor":"x"}}}"#;
    for page in 0..2 {
        let post = h.find("POST tools/list");
        let id = h.request_id(post);
        let cursor = if page == 0 {
            r#","nextCursor":"p2""#
        } else {
            ""
        };
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"t{page}","inputSchema":{schema}}}]{cursor}}}}}"#
        );
        h.answer(
            post,
            200,
            &[("Content-Type", "application/json")],
            &[body.as_bytes()],
        );
    }
    let Some(Ok(all)) = h.outcome(list) else {
        panic!("{:?}", h.events)
    };
    assert_eq!(all.get().matches(schema).count(), 2, "{}", all.get());
}

#[test]
fn a_subscription_is_a_long_lived_post_whose_stream_carries_its_notifications() {
    let mut h = modern();
    let now = h.now;
    let sub =
        h.c.call(
            now,
            &McpCall::listen(json!({"toolsListChanged": true})),
            CallOptions::default(),
        )
        .unwrap();
    h.pump();
    let post = h.find("POST subscriptions/listen");
    assert_eq!(
        h.request(post).header("mcp-method"),
        Some("subscriptions/listen")
    );
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Head {
            status: 200,
            headers: &[("content-type".into(), "text/event-stream".into())],
        },
    )
    .unwrap();
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {"toolsListChanged": true},
            "_meta": {"io.modelcontextprotocol/subscriptionId": sub.0}}});
    let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": sub.0}}});
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Body(format!(": keep-alive\n\ndata: {ack}\n\ndata: {changed}\n\n").as_bytes()),
    )
    .unwrap();
    h.pump();
    let subs: Vec<&Event> = h
        .events
        .iter()
        .filter(|e| matches!(e, Event::Notification(_)))
        .collect();
    assert_eq!(subs.len(), 2, "{:?}", h.events);
    assert!(matches!(
        subs[1],
        Event::Notification(ServerNotification::ForSubscription { subscription, .. }) if *subscription == sub
    ));
    // Ended by us: the stream is closed, nothing is POSTed.
    let now = h.now;
    h.c.cancel(now, sub, None).unwrap();
    h.pump();
    assert!(h.aborted.contains(&post));
    assert_eq!(h.log, ["POST subscriptions/listen #1"]);
}

#[test]
fn a_header_mismatch_lists_the_tools_again_and_sends_the_call_once_more() {
    let mut h = modern();
    let tools = |id: Id, mark: &str| {
        json!({"jsonrpc": "2.0", "id": id, "result": {"ttlMs": 0, "tools": [
            {"name": "t", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": mark}}}}]}})
    };
    let now = h.now;
    h.c.call(now, &McpCall::list_tools(), CallOptions::default())
        .unwrap();
    h.pump();
    let post = h.find("POST tools/list");
    let id = h.request_id(post);
    h.json(post, tools(id, "Old"));
    for round in 0..2 {
        let now = h.now;
        let call =
            h.c.call(
                now,
                &McpCall::call_tool("t", Some(json!({"region": "eu"}))),
                CallOptions::default(),
            )
            .unwrap();
        h.pump();
        let post = h.find(&format!("POST tools/call #{}", call.0));
        let first = if round == 0 {
            "mcp-param-old"
        } else {
            "mcp-param-region"
        };
        assert_eq!(h.request(post).header(first), Some("eu"));
        let mismatch = format!(
            r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32020,"message":"Header mismatch"}}}}"#,
            call.0
        );
        h.answer(
            post,
            400,
            &[("Content-Type", "application/json")],
            &[mismatch.as_bytes()],
        );
        assert_eq!(h.outcome(call), None, "waits for the list");
        // The tools are listed again: the server renamed the header.
        let list = h.find("POST tools/list");
        let id = h.request_id(list);
        h.json(list, tools(id, if round == 0 { "Region" } else { "Old" }));
        let again = h.find("POST tools/call");
        assert_ne!(h.request_id(again), Id::Num(call.0), "a new id");
        if round == 0 {
            assert_eq!(h.request(again).header("mcp-param-region"), Some("eu"));
            let id = h.request_id(again);
            h.json(
                again,
                json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}),
            );
            assert!(matches!(h.outcome(call), Some(Ok(_))), "{:?}", h.events);
        } else {
            // A second mismatch ends the call with the server's error.
            let id = h.request_id(again);
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32020,"message":"Header mismatch"}}}}"#
            );
            h.answer(
                again,
                400,
                &[("Content-Type", "application/json")],
                &[body.as_bytes()],
            );
            let Some(Err(CallError::Server(e))) = h.outcome(call) else {
                panic!("{:?}", h.events)
            };
            assert_eq!(e.code, -32020);
        }
    }
}

#[test]
fn a_missing_capability_is_a_typed_error_naming_it() {
    let mut h = modern();
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32021,"message":"Missing required client capability","data":{{"requiredCapabilities":{{"sampling":{{}}}}}}}}}}"#,
        call.0
    );
    h.answer(
        post,
        400,
        &[("Content-Type", "application/json")],
        &[body.as_bytes()],
    );
    let Some(Err(e @ CallError::MissingCapability { required, .. })) = h.outcome(call) else {
        panic!("{:?}", h.events)
    };
    assert_eq!(required, "sampling");
    assert!(e.to_string().contains("sampling"), "{e}");
}

#[test]
fn a_method_named_at_run_time_still_gets_its_input_rounds() {
    let mut h = modern();
    let now = h.now;
    let mut p = serde_json::Map::new();
    p.insert("name".into(), json!("t"));
    p.insert("arguments".into(), json!({}));
    let method = String::from("tools/call");
    let call =
        h.c.call(
            now,
            &McpCall::request(method, Some(p)),
            CallOptions::default(),
        )
        .unwrap();
    h.pump();
    let post = h.find("POST tools/call");
    let id = h.request_id(post);
    h.json(
        post,
        json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "input_required",
            "inputRequests": {"a": {"method": "elicitation/create", "params": {"mode": "form",
                "message": "?", "requestedSchema": {"type": "object", "properties": {}}}}}}}),
    );
    assert!(h.outcome(call).is_none(), "{:?}", h.outcome(call));
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, Event::ServerRequest(ServerRequest::Elicitation { .. }))));
}

#[test]
fn a_call_waiting_for_the_tools_to_be_listed_again_keeps_its_own_timeout() {
    let mut h = modern();
    let now = h.now;
    let short = CallOptions {
        timeout: Duration::from_secs(1),
        ..CallOptions::default()
    };
    let call =
        h.c.call(now, &McpCall::call_tool("t", Some(json!({}))), short)
            .unwrap();
    h.pump();
    let post = h.find("POST tools/call");
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32020,"message":"Header mismatch"}}}}"#,
        call.0
    );
    h.answer(
        post,
        400,
        &[("Content-Type", "application/json")],
        &[body.as_bytes()],
    );
    let list = h.find("POST tools/list");
    assert_eq!(h.outcome(call), None);
    // The list never answers; the call ends at its own deadline, not the list's.
    let start = h.now;
    h.advance_to_next_deadline();
    assert!(h.now - start <= Duration::from_secs(1));
    assert!(matches!(
        h.outcome(call),
        Some(Err(CallError::Local(LocalError::Timeout { .. })))
    ));
    // No call waits for the list any more: it is cancelled, which in this era is its
    // exchange closed.
    assert!(h.aborted.contains(&list), "{:?}", h.log);
}

#[test]
fn a_task_is_polled_with_its_id_as_mcp_name_and_cancelled_without_notifications_cancelled() {
    let mut h = modern();
    let call = h.call("build", CallOptions::default());
    let post = h.find("POST tools/call");
    let id = h.request_id(post);
    let task = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"task","taskId":"job/42 é","status":"working","createdAt":"a","lastUpdatedAt":"b","ttlMs":null,"pollIntervalMs":100}}}}"#
    );
    h.answer(
        post,
        200,
        &[("Content-Type", "application/json")],
        &[task.as_bytes()],
    );
    assert!(h.outcome(call).is_none(), "{:?}", h.events);
    h.advance_to_next_deadline();
    let get = h.find("POST tasks/get");
    let r = h.request(get);
    assert_eq!(r.header("mcp-method"), Some("tasks/get"));
    // A value that is not plain ASCII goes base64-encoded, as every Mcp-Name does.
    assert_eq!(r.header("mcp-name"), Some("=?base64?am9iLzQyIMOp?="));
    assert_eq!(params_of(&h, get)["taskId"], "job/42 é");
    let done = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"resultType":"complete","taskId":"job/42 é","status":"working","createdAt":"a","lastUpdatedAt":"b","ttlMs":null}}}}"#,
        h.request_id(get)
    );
    h.answer(
        get,
        200,
        &[("Content-Type", "application/json")],
        &[done.as_bytes()],
    );
    h.c.cancel(h.now, call, None).unwrap();
    h.pump();
    let cancel = h.find("POST tasks/cancel");
    assert_eq!(
        h.request(cancel).header("mcp-name"),
        Some("=?base64?am9iLzQyIMOp?=")
    );
    assert!(
        !h.log.iter().any(|l| l.contains("notifications/cancelled")),
        "{:?}",
        h.log
    );
    assert!(matches!(h.outcome(call), Some(Err(_))));
}
