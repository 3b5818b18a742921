//! Client connection ↔ demo-server core, joined in memory under a simulated clock that jumps to
//! the next deadline. No sockets, no sleeping. Every message crosses as JSONL bytes over the
//! connection's stdio machine, and each flow is asserted as a transcript of what went on the
//! wire.

use std::time::Duration;

use crate::connection::protocol::vocabulary::events::{Diagnostic, Event};
use crate::connection::protocol::{
    CallError, CallOptions, ClientError, ServerNotification, ServerRequest,
};
use crate::connection::McpCall;
use crate::jsonrpc::{ErrorObject, Id, Message, RawJson};
use crate::rpc::{Deadline, EndedAs, LocalError, ResponseFor};
use crate::server::DemoConfig;
use crate::types::{fill_from_defaults, ClientCapabilities, ListToolsResult};
use serde_json::{json, Value};

use crate::test_support::*;

#[test]
fn handshake_transcript() {
    let mut p = Pair::new(caps_all(), DemoConfig::default());
    // `initialize` has gone out; until it is answered only ping may go. (A connection starts as
    // it is made: calls before the start, and a second start, are tested on the protocol, in
    // `handshake.rs`.)
    p.drain();
    assert_eq!(
        p.client
            .call(p.now, &McpCall::list_tools(), CallOptions::default())
            .unwrap_err(),
        ClientError::NotReady
    );
    assert_eq!(
        p.client
            .call(
                p.now,
                &McpCall::request("tools/list", None),
                CallOptions::default()
            )
            .unwrap_err(),
        ClientError::NotReady
    );
    p.drive();
    assert_eq!(
        p.wire,
        [
            "C→S initialize #0",
            "S→C result #0",
            "C→S notifications/initialized",
        ]
    );
    let Event::Ready { server: init, .. } = &p.events[0] else {
        panic!("{:?}", p.events)
    };
    assert_eq!(init.protocol_version, "2025-11-25");
    assert_eq!(init.server_info.name, "mcpwire-demo");
    assert!(init.instructions.is_some());
    assert_eq!(p.server.protocol_version(), Some("2025-11-25"));
}

/// Every message the client wrote and no server read yet.
fn written(c: &mut Pair) -> Vec<Message> {
    std::iter::from_fn(|| c.poll_written()).collect()
}

/// Feeds the client the server's answer to `initialize` by hand.
fn scripted_handshake(answer: Value) -> (Pair, Vec<Event>, Vec<Message>) {
    let mut c = Pair::with_config(legacy(), DemoConfig::default());
    let mut sent = written(&mut c);
    c.feed(&Message::result(Id::Num(0), RawJson::new(&answer).unwrap()));
    sent.extend(written(&mut c));
    let events = c.take_events();
    (c, events, sent)
}

#[test]
fn older_handshake_versions_are_accepted() {
    for v in ["2025-06-18", "2025-03-26", "2024-11-05"] {
        let (c, events, sent) = scripted_handshake(
            json!({"protocolVersion": v, "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
        );
        assert!(c.client.is_ready(), "{v}: {events:?}");
        assert_eq!(c.client.server().unwrap().protocol_version, v);
        assert_eq!(
            sent.iter().map(sig).collect::<Vec<_>>(),
            ["initialize #0", "notifications/initialized"]
        );
    }
}

#[test]
fn an_unknown_version_fails_the_handshake_clearly() {
    let (c, events, sent) = scripted_handshake(
        json!({"protocolVersion": "2026-07-28", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
    );
    assert!(c.client.is_closed());
    let Event::HandshakeFailed(CallError::InvalidResult(why)) = &events[0] else {
        panic!("{events:?}")
    };
    assert!(why.contains("\"2026-07-28\""), "{why}");
    assert!(matches!(events.last(), Some(Event::Closed(_))));
    // No `initialized` was sent, and nothing more can be.
    assert_eq!(sent.len(), 1);
    let mut c = c;
    assert!(c
        .client
        .call(c.now, &McpCall::ping(), CallOptions::default())
        .is_err());
}

#[test]
fn listing_with_several_pages_gathers_every_tool() {
    let demo = DemoConfig {
        page_size: 2,
        ..DemoConfig::default()
    };
    let mut p = Pair::ready_with(caps_all(), demo);
    let call = p
        .client
        .call(p.now, &McpCall::list_tools(), CallOptions::default())
        .unwrap();
    let result = p.finish(call).unwrap();
    let list: ListToolsResult = result.parse().unwrap();
    let names: Vec<_> = list.tools.iter().map(|t| t.name.as_str()).collect();
    let all = crate::server::demo::tools();
    let served: Vec<_> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, served);
    assert_eq!(
        &names[..7],
        ["echo", "add", "slow", "ask", "survey", "fail", "big"]
    );
    // Two tools a page: one request a page, each with the next id.
    let pages = served.len().div_ceil(2);
    let expected: Vec<String> = (1..=pages)
        .flat_map(|n| [format!("C→S tools/list #{n}"), format!("S→C result #{n}")])
        .collect();
    assert_eq!(p.wire, expected);
}

#[test]
fn a_later_page_s_request_id_is_no_call_to_cancel() {
    let (mut c, _, _) = scripted_handshake(
        json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}),
    );
    let now = c.now;
    let call = c
        .client
        .call(now, &McpCall::list_tools(), CallOptions::default())
        .unwrap();
    let _ = written(&mut c);
    let first = json!({"tools": [], "nextCursor": "c"});
    c.feed(&Message::result(
        Id::Num(call.0),
        RawJson::new(&first).unwrap(),
    ));
    let sent = written(&mut c);
    assert_eq!(sent.iter().map(sig).collect::<Vec<_>>(), ["tools/list #2"]);
    // Request 2 carries the call's second page, but no call has id 2: misuse, nothing changes.
    let not_a_call = crate::connection::protocol::CallId(2);
    assert_eq!(
        c.client.cancel(now, not_a_call, None),
        Err(ClientError::UnknownCall(not_a_call))
    );
    assert_eq!(c.poll_written(), None, "no cancellation went out");
    assert_eq!(c.take_events(), [], "the list goes on");
    // The call itself is cancelled through its own id, whichever page is in flight.
    c.client.cancel(now, call, None).unwrap();
    let sent = written(&mut c);
    assert_eq!(
        sent.iter().map(sig).collect::<Vec<_>>(),
        ["notifications/cancelled"]
    );
}

#[test]
fn an_empty_string_cursor_continues_the_list() {
    let (mut c, _, _) = scripted_handshake(
        json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}),
    );
    let call = c
        .client
        .call(c.now, &McpCall::list_tools(), CallOptions::default())
        .unwrap();
    let page = |c: &mut Pair, id: i64, body: Value| {
        c.feed(&Message::result(Id::Num(id), RawJson::new(&body).unwrap()))
    };
    let sent = written(&mut c);
    assert_eq!(sent.iter().map(sig).collect::<Vec<_>>(), ["tools/list #1"]);
    page(
        &mut c,
        1,
        json!({"tools": [{"name": "a", "inputSchema": {}}], "nextCursor": ""}),
    );
    let sent = written(&mut c);
    let Message::Request(r) = &sent[0] else {
        panic!()
    };
    assert_eq!(r.params.as_ref().unwrap().get(), r#"{"cursor":""}"#);
    page(
        &mut c,
        2,
        json!({"tools": [{"name": "b", "inputSchema": {}}]}),
    );
    let events = c.take_events();
    let Event::CallDone {
        call: done,
        outcome: Ok(all),
    } = &events[0]
    else {
        panic!("{events:?}")
    };
    assert_eq!(*done, call);
    let list: ListToolsResult = all.parse().unwrap();
    assert_eq!(list.tools.len(), 2);
}

/// A page that gives a cursor an earlier page gave ends the list there: the items of the pages
/// read, and a diagnostic saying why (the pages would repeat for ever).
#[test]
fn a_repeated_cursor_ends_the_list_with_a_diagnostic() {
    let (mut c, _, _) = scripted_handshake(
        json!({"protocolVersion": "2025-11-25", "capabilities": {"prompts": {}}, "serverInfo": {"name": "s", "version": "1"}}),
    );
    let call = c
        .client
        .call(
            c.now,
            &crate::McpCall::list_prompts(),
            CallOptions::default(),
        )
        .unwrap();
    let page = |c: &mut Pair, id: i64, body: Value| {
        c.feed(&Message::result(Id::Num(id), RawJson::new(&body).unwrap()))
    };
    let _ = written(&mut c);
    page(
        &mut c,
        1,
        json!({"prompts": [{"name": "a"}], "nextCursor": "x"}),
    );
    let _ = written(&mut c);
    page(
        &mut c,
        2,
        json!({"prompts": [{"name": "b"}], "nextCursor": "y"}),
    );
    let _ = written(&mut c);
    // Back to a cursor of page 1: no third request.
    page(
        &mut c,
        3,
        json!({"prompts": [{"name": "c"}], "nextCursor": "x"}),
    );
    assert_eq!(written(&mut c).len(), 0, "no page asked again");
    let events = c.take_events();
    let cut = events.iter().find_map(|e| match e {
        Event::Diagnostic(Diagnostic::ListCut {
            method,
            pages,
            reason,
        }) => Some((method.as_str(), *pages, reason.as_str())),
        _ => None,
    });
    let (method, pages, reason) = cut.expect("a diagnostic");
    assert_eq!((method, pages), ("prompts/list", 3));
    assert!(
        reason.contains("page 3 gave a cursor an earlier page gave"),
        "{reason}"
    );
    let all = events.iter().find_map(|e| match e {
        Event::CallDone {
            call: done,
            outcome: Ok(all),
        } if *done == call => Some(all.parse::<Value>().unwrap()),
        _ => None,
    });
    let names: Vec<String> = all.expect("the list")["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
}

/// A list whose every page gives a new cursor ends after `MAX_PAGES` pages, with the items
/// read and a diagnostic.
#[test]
fn a_list_that_never_ends_is_ended_at_the_page_cap() {
    let (mut c, _, _) = scripted_handshake(
        json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}),
    );
    let call = c
        .client
        .call(c.now, &McpCall::list_tools(), CallOptions::default())
        .unwrap();
    let _ = written(&mut c);
    let max = crate::MAX_PAGES as i64;
    for n in 1..=max {
        let body = json!({"tools": [{"name": format!("t{n}"), "inputSchema": {}}],
                          "nextCursor": format!("c{n}")});
        c.feed(&Message::result(Id::Num(n), RawJson::new(&body).unwrap()));
        let sent = written(&mut c);
        assert_eq!(sent.len(), usize::from(n < max), "page {n}");
    }
    let events = c.take_events();
    assert!(
        events.iter().any(|e| matches!(e,
            Event::Diagnostic(Diagnostic::ListCut { method, pages, reason })
                if method == "tools/list" && *pages == crate::MAX_PAGES
                    && reason.contains("did not end after"))),
        "{:?}",
        events
            .iter()
            .filter(|e| !matches!(e, Event::CallDone { .. }))
            .collect::<Vec<_>>()
    );
    let listed = events.iter().find_map(|e| match e {
        Event::CallDone {
            call: done,
            outcome: Ok(all),
        } if *done == call => Some(all.parse::<ListToolsResult>().unwrap()),
        _ => None,
    });
    assert_eq!(listed.expect("the list").tools.len(), crate::MAX_PAGES);
}

#[test]
fn a_call_with_progress() {
    let mut p = Pair::ready_listed();
    let opts = CallOptions {
        progress: true,
        ..CallOptions::default()
    };
    let call = p
        .client
        .call(
            p.now,
            &McpCall::call_tool("slow", Some(json!({"steps": 3, "interval_ms": 100}))),
            opts,
        )
        .unwrap();
    let result = p.finish(call).unwrap();
    assert_eq!(text_of(&result), "done after 3 steps");
    let progress: Vec<_> = p
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Progress { call: c, progress } if *c == call => {
                Some((progress.progress, progress.total))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        progress,
        [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );
    assert_eq!(p.ms(), 300, "three steps of 100 ms on the simulated clock");
    assert_eq!(
        p.wire,
        [
            "C→S tools/call #2",
            "S→C notifications/progress",
            "S→C notifications/progress",
            "S→C notifications/progress",
            "S→C result #2",
        ]
    );
}

#[test]
fn an_elicitation_answered_in_the_middle_of_a_call() {
    let mut p = Pair::ready_listed();
    let call = p
        .client
        .call(
            p.now,
            &McpCall::call_tool("ask", None),
            CallOptions::default(),
        )
        .unwrap();
    p.drive();
    let request = p
        .events
        .iter()
        .find_map(|e| match e {
            Event::ServerRequest(r @ ServerRequest::Elicitation { .. }) => Some(r.clone()),
            _ => None,
        })
        .expect("the elicitation is surfaced at once, while the call is pending");
    assert!(p.done(call).is_none());
    let ServerRequest::Elicitation { id, params, .. } = request else {
        unreachable!()
    };
    // Answer from the schema's defaults.
    let content = fill_from_defaults(&params["requestedSchema"]).unwrap();
    assert_eq!(content["name"], "world");
    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    p.client
        .respond(p.now, &id, Ok(RawJson::new(&answer).unwrap()))
        .unwrap();
    p.drain();
    // Exactly once.
    assert!(p
        .client
        .respond(p.now, &id, Ok(RawJson::new(&answer).unwrap()))
        .is_err());
    let result = p.finish(call).unwrap();
    assert_eq!(text_of(&result), "hello, Ada");
    assert_eq!(
        p.wire,
        [
            "C→S tools/call #2",
            "S→C elicitation/create #0",
            "C→S result #0",
            "S→C result #2",
        ]
    );
}

#[test]
fn an_undeclared_capability_is_refused_with_the_prescribed_error() {
    let mut p = Pair::ready_with(ClientCapabilities::default(), DemoConfig::default()).listed();
    let call = p
        .client
        .call(
            p.now,
            &McpCall::call_tool("ask", None),
            CallOptions::default(),
        )
        .unwrap();
    let result = p.finish(call).unwrap();
    let v: Value = result.parse().unwrap();
    assert_eq!(v["isError"], true, "an isError result is a result");
    assert!(
        p.events.iter().any(|e| matches!(e,
        Event::Diagnostic(Diagnostic::RefusedServerRequest { error, .. }) if error.code == -32602))
    );
    assert_eq!(
        p.wire,
        [
            "C→S tools/call #2",
            "S→C elicitation/create #0",
            "C→S error -32602 #0",
            "S→C result #2",
        ]
    );
}

#[test]
fn a_cancel_crossing_the_response_is_reported_not_delivered() {
    let mut p = Pair::ready_listed();
    let call = p
        .client
        .call(
            p.now,
            &McpCall::call_tool("echo", Some(json!({"message": "hi"}))),
            CallOptions::default(),
        )
        .unwrap();
    // The request reaches the server, which answers; the answer is still on its way when the
    // client cancels.
    let request = p.poll_written().unwrap();
    p.server.handle_message(p.now, request);
    let response = p.server.poll_transmit().unwrap();
    p.client
        .cancel(p.now, call, Some("user pressed stop".into()))
        .unwrap();
    p.feed(&response);
    p.drive();
    let outcome = p.finish(call);
    assert!(matches!(
        outcome,
        Err(CallError::Local(LocalError::Cancelled { .. }))
    ));
    assert!(p.events.iter().any(|e| matches!(
        e,
        Event::Diagnostic(Diagnostic::UnmatchedResponse {
            status: ResponseFor::Ended(EndedAs::Cancelled),
            ..
        })
    )));
    assert_eq!(p.wire, ["C→S notifications/cancelled"]);
    // Cancelling again is misuse.
    assert_eq!(
        p.client.cancel(p.now, call, None),
        Err(ClientError::UnknownCall(call))
    );
}

#[test]
fn a_timeout_cancels_on_the_wire_and_the_server_stops() {
    let mut p = Pair::ready_listed();
    let opts = CallOptions {
        timeout: Duration::from_secs(1),
        ..CallOptions::default()
    };
    let call = p
        .client
        .call(
            p.now,
            &McpCall::call_tool("slow", Some(json!({"steps": 100, "interval_ms": 100}))),
            opts,
        )
        .unwrap();
    let outcome = p.finish(call);
    assert_eq!(
        outcome,
        Err(CallError::Local(LocalError::Timeout {
            which: Deadline::Idle,
            despite_progress: false,
            method: "tools/call".into(),
            after: Duration::from_secs(1),
        }))
    );
    assert_eq!(p.ms(), 1000);
    p.drive();
    assert_eq!(p.wire, ["C→S tools/call #2", "C→S notifications/cancelled"]);
    assert_eq!(
        p.server.running_tasks(),
        0,
        "the server honoured the cancel"
    );
}

#[test]
fn progress_resets_the_idle_timeout_only_when_asked_and_max_total_holds() {
    let mut p = Pair::ready();
    let opts = CallOptions {
        timeout: Duration::from_millis(250),
        reset_on_progress: true,
        progress: true,
        max_total: Some(Duration::from_millis(1050)),
        ..CallOptions::default()
    };
    let call = p
        .client
        .call(
            p.now,
            &McpCall::call_tool("slow", Some(json!({"steps": 100, "interval_ms": 100}))),
            opts,
        )
        .unwrap();
    assert_eq!(
        p.finish(call),
        Err(CallError::Local(LocalError::Timeout {
            which: Deadline::Total,
            despite_progress: false,
            method: "tools/call".into(),
            after: Duration::from_millis(1050),
        }))
    );
    assert_eq!(p.ms(), 1050);
}

#[test]
fn a_ping_each_way() {
    let mut p = Pair::ready();
    let call = p
        .client
        .call(p.now, &McpCall::ping(), CallOptions::default())
        .unwrap();
    assert_eq!(p.finish(call).unwrap().get(), "{}");
    p.server.ping(p.now);
    p.drive();
    assert_eq!(
        p.wire,
        [
            "C→S ping #1",
            "S→C result #1",
            "S→C ping #0",
            "C→S result #0"
        ]
    );
    // The server's ping, answered by the connection itself, is told (for its span).
    let pinged: Vec<&Event> = (p.events.iter())
        .filter(|e| matches!(e, Event::ServerPinged { .. }))
        .collect();
    let want = Event::ServerPinged {
        id: Id::Num(0),
        meta: None,
    };
    assert_eq!(pinged, [&want]);
}

/// A server's ping is answered at once, and told with the trace context its `_meta` carried
/// (string ids and a ping before the handshake included); a ping whose params are no object
/// is still answered, told with no `_meta`.
#[test]
fn a_servers_ping_is_told_with_its_meta() {
    let mut c = Pair::with_config(legacy(), DemoConfig::default());
    let _ = written(&mut c);
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let params = json!({"_meta": {"traceparent": traceparent}});
    let params = RawJson::new(&params).unwrap();
    c.feed(&Message::request("p1", "ping", Some(params)));
    c.feed(&Message::request(
        7,
        "ping",
        Some(RawJson::new(&json!([1])).unwrap()),
    ));
    let answers: Vec<String> = written(&mut c)
        .iter()
        .map(|m| serde_json::to_string(m).unwrap())
        .collect();
    assert_eq!(
        answers,
        [
            r#"{"jsonrpc":"2.0","id":"p1","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#
        ]
    );
    let mut meta = serde_json::Map::new();
    meta.insert("traceparent".into(), json!(traceparent));
    assert_eq!(
        c.take_events(),
        [
            Event::ServerPinged {
                id: Id::Str("p1".into()),
                meta: Some(meta),
            },
            Event::ServerPinged {
                id: Id::Num(7),
                meta: None,
            },
        ]
    );
}

#[test]
fn prompts_and_resources() {
    let mut p = Pair::ready();
    let now = p.now;
    let c = p
        .client
        .call(now, &McpCall::list_prompts(), CallOptions::default())
        .unwrap();
    let v: Value = p.finish(c).unwrap().parse().unwrap();
    assert_eq!(v["prompts"][0]["name"], "greet");
    let mut args = serde_json::Map::new();
    args.insert("name".into(), json!("Ada"));
    let c = p
        .client
        .call(
            now,
            &McpCall::get_prompt("greet", Some(args)),
            CallOptions::default(),
        )
        .unwrap();
    let v: Value = p.finish(c).unwrap().parse().unwrap();
    assert_eq!(v["messages"][0]["content"]["text"], "Say hello to Ada.");
    let c = p
        .client
        .call(now, &McpCall::list_resources(), CallOptions::default())
        .unwrap();
    let v: Value = p.finish(c).unwrap().parse().unwrap();
    assert_eq!(v["resources"][0]["uri"], "demo://readme");
    let c = p
        .client
        .call(
            now,
            &McpCall::list_resource_templates(),
            CallOptions::default(),
        )
        .unwrap();
    let v: Value = p.finish(c).unwrap().parse().unwrap();
    assert_eq!(
        v["resourceTemplates"][0]["uriTemplate"],
        "demo://echo/{text}"
    );
    let c = p
        .client
        .call(
            now,
            &McpCall::read_resource("demo://echo/hi"),
            CallOptions::default(),
        )
        .unwrap();
    let v: Value = p.finish(c).unwrap().parse().unwrap();
    assert_eq!(v["contents"][0]["text"], "hi");
    let c = p
        .client
        .call(
            now,
            &McpCall::read_resource("demo://nothing"),
            CallOptions::default(),
        )
        .unwrap();
    assert!(matches!(
        p.finish(c),
        Err(CallError::Server(ErrorObject { code: -32002, .. }))
    ));
}

#[test]
fn tool_results_error_results_and_server_errors() {
    let mut p = Pair::ready();
    let now = p.now;
    let c = p
        .client
        .call(
            now,
            &McpCall::call_tool("add", Some(json!({"a": 2, "b": 40}))),
            CallOptions::default(),
        )
        .unwrap();
    let v: Value = p.finish(c).unwrap().parse().unwrap();
    assert_eq!(v["structuredContent"]["sum"], 42);
    let c = p
        .client
        .call(
            now,
            &McpCall::call_tool("fail", None),
            CallOptions::default(),
        )
        .unwrap();
    let v: Value = p.finish(c).unwrap().parse().unwrap();
    assert_eq!(v["isError"], true);
    let c = p
        .client
        .call(
            now,
            &McpCall::call_tool("nope", None),
            CallOptions::default(),
        )
        .unwrap();
    assert!(matches!(
        p.finish(c),
        Err(CallError::Server(ErrorObject { code: -32602, .. }))
    ));
    let c = p
        .client
        .call(
            now,
            &McpCall::call_tool("big", Some(json!({"mib": 2}))),
            CallOptions::default(),
        )
        .unwrap();
    assert_eq!(text_of(&p.finish(c).unwrap()).len(), 2 << 20);
}

#[test]
fn list_changed_and_logs_are_surfaced() {
    let mut p = Pair::ready();
    p.server
        .notify(p.now, "notifications/tools/list_changed", None);
    p.server.notify(
        p.now,
        "notifications/message",
        Some(json!({"level": "info", "data": "hello"})),
    );
    p.drive();
    let n: Vec<_> = p.take_notifications();
    assert_eq!(n[0], ServerNotification::ToolsListChanged);
    let ServerNotification::Log(log) = &n[1] else {
        panic!("{n:?}")
    };
    assert_eq!((log.level.as_str(), &log.data), ("info", &json!("hello")));
}

#[test]
fn ids_are_unique_across_every_kind_of_request() {
    let mut p = Pair::ready_listed();
    let now = p.now;
    let opts = CallOptions::default;
    let mut ids = Vec::new();
    ids.push(p.client.call(now, &McpCall::ping(), opts()).unwrap().0);
    p.drain();
    ids.push(
        p.client
            .call(now, &McpCall::list_tools(), opts())
            .unwrap()
            .0,
    );
    p.drain();
    let echo = Some(json!({"message": "x"}));
    ids.push(
        p.client
            .call(now, &McpCall::call_tool("echo", echo), opts())
            .unwrap()
            .0,
    );
    p.drain();
    ids.push(
        p.client
            .call(now, &McpCall::list_prompts(), opts())
            .unwrap()
            .0,
    );
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(
        ids,
        [2, 3, 4, 5],
        "0 went to initialize, 1 to the tools' list"
    );
}
