//! The stateless era (2026-07-28) and era detection, in memory: the client core against the
//! demo server (which speaks both eras) and against scripted servers for each way a probe can
//! go.

use crate::connection::protocol::vocabulary::events::Event;
use crate::connection::protocol::{
    CallError, CallOptions, ChosenEra, ClientConfig, ClientError, Era, ServerNotification,
    ServerRequest,
};
use crate::connection::McpCall;
use crate::jsonrpc::{ErrorObject, Id, Message, RawJson};
use crate::rpc::LocalError;
use crate::server::DemoConfig;
use crate::types::{ClientCapabilities, ListToolsResult};
use serde_json::{json, Value};

use crate::test_support::*;

pub(super) fn auto(caps: ClientCapabilities) -> ClientConfig {
    ClientConfig {
        capabilities: caps,
        ..ClientConfig::default()
    }
}

/// A pair that went through detection against the demo server.
pub(super) fn modern_pair(caps: ClientCapabilities) -> Pair {
    let mut p = Pair::with_config(auto(caps), DemoConfig::default());
    p.drive();
    assert!(p.client.is_ready(), "{:?}", p.events);
    p.wire.clear();
    p.events.clear();
    p.frames.clear();
    p
}

/// The JSON of every message the client sent.
pub(super) fn sent(p: &Pair) -> Vec<Value> {
    p.frames
        .iter()
        .filter(|(from_client, _)| *from_client)
        .map(|(_, f)| serde_json::from_str(f).unwrap())
        .collect()
}

fn answer_elicitations(p: &mut Pair, name: &str) -> usize {
    let requests: Vec<_> = p
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ServerRequest(ServerRequest::Elicitation { id, .. }) => Some(id.clone()),
            _ => None,
        })
        .collect();
    p.events.retain(|e| !matches!(e, Event::ServerRequest(_)));
    for id in &requests {
        let answer = json!({"action": "accept", "content": {"name": name, "color": name}});
        p.client
            .respond(p.now, id, Ok(RawJson::new(&answer).unwrap()))
            .unwrap();
        p.drain();
    }
    requests.len()
}

#[test]
fn auto_detects_a_modern_server_with_one_probe() {
    let mut p = Pair::with_config(auto(caps_all()), DemoConfig::default());
    p.drive();
    assert_eq!(p.wire, ["C→S server/discover #0", "S→C result #0"]);
    assert_eq!(p.client.era(), Some(ChosenEra::Stateless));
    let Event::Ready { server: info, .. } = &p.events[0] else {
        panic!("{:?}", p.events)
    };
    assert_eq!(info.protocol_version, "2026-07-28");
    assert_eq!(info.server_info.name, "mcpwire-demo");
    assert!(info.capabilities.tools.is_some());
    assert!(info.instructions.is_some());
    // The probe carried the three _meta keys.
    let probe = &sent(&p)[0];
    let meta = &probe["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"]["elicitation"],
        json!({"form": {}})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "mcpwire"
    );
}

#[test]
fn every_request_carries_meta_and_results_are_complete() {
    let mut p = modern_pair(caps_all());
    let now = p.now;
    let c = p
        .client
        .call(now, &McpCall::list_tools(), CallOptions::default())
        .unwrap();
    let list: ListToolsResult = p.finish(c).unwrap().parse().unwrap();
    let served = crate::server::demo::tools();
    assert_eq!(list.tools.len(), served.as_array().unwrap().len());
    let c = p
        .client
        .call(
            now,
            &McpCall::call_tool("add", Some(json!({"a": 1, "b": 2}))),
            CallOptions::default(),
        )
        .unwrap();
    let v: Value = p.finish(c).unwrap().parse().unwrap();
    assert_eq!(v["resultType"], "complete");
    assert_eq!(v["structuredContent"]["sum"], 3);
    let opts = CallOptions {
        progress: true,
        ..CallOptions::default()
    };
    let c = p
        .client
        .call(
            now,
            &McpCall::call_tool("slow", Some(json!({"steps": 2, "interval_ms": 10}))),
            opts,
        )
        .unwrap();
    p.finish(c).unwrap();
    let progress = p
        .events
        .iter()
        .filter(|e| matches!(e, Event::Progress { .. }))
        .count();
    assert_eq!(progress, 2);
    for m in sent(&p) {
        let meta = &m["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
            "{m}"
        );
        assert!(
            meta["io.modelcontextprotocol/clientCapabilities"].is_object(),
            "{m}"
        );
        assert!(
            meta["io.modelcontextprotocol/clientInfo"].is_object(),
            "{m}"
        );
    }
    // The progress call kept its token beside the era's keys.
    let slow = sent(&p)
        .into_iter()
        .find(|m| m["params"]["name"] == "slow")
        .unwrap();
    assert!(slow["params"]["_meta"]["progressToken"].is_number());
}

#[test]
fn no_ping_in_the_stateless_era() {
    let mut p = modern_pair(caps_all());
    assert!(matches!(
        p.client
            .call(p.now, &McpCall::ping(), CallOptions::default()),
        Err(ClientError::NotSupported(_))
    ));
}

#[test]
fn input_required_round_trip_echoes_request_state_byte_for_byte() {
    let mut p = modern_pair(caps_all());
    let call = p
        .client
        .call(
            p.now,
            &McpCall::call_tool("ask", None),
            CallOptions::default(),
        )
        .unwrap();
    p.drive();
    // The input request is surfaced as the same event the handshake era uses.
    assert_eq!(answer_elicitations(&mut p, "Ada"), 1);
    let result = p.finish(call).unwrap();
    let v: Value = result.parse().unwrap();
    assert_eq!(v["content"][0]["text"], "hello, Ada");
    assert_eq!(
        p.wire,
        [
            "C→S tools/call #1",
            "S→C result #1",
            "C→S tools/call #2",
            "S→C result #2"
        ]
    );
    let first = &p.frames[0].1;
    let retry = &p.frames[2].1;
    // The server's state holds an escape; it comes back exactly as sent.
    assert!(p.frames[1]
        .1
        .contains(r#""requestState":"ask:round-1:\u00e9""#));
    assert!(
        retry.contains(r#""requestState":"ask:round-1:\u00e9""#),
        "{retry}"
    );
    let first: Value = serde_json::from_str(first).unwrap();
    let retry: Value = serde_json::from_str(retry).unwrap();
    assert_ne!(first["id"], retry["id"], "each round has a new id");
    assert_eq!(retry["params"]["name"], first["params"]["name"]);
    assert_eq!(
        retry["params"]["inputResponses"]["name"]["action"],
        "accept"
    );
    assert!(retry["params"]["inputResponses"]["name"]
        .get("resultType")
        .is_none());
}

#[test]
fn two_rounds_of_input() {
    let mut p = modern_pair(caps_all());
    let call = p
        .client
        .call(
            p.now,
            &McpCall::call_tool("survey", None),
            CallOptions::default(),
        )
        .unwrap();
    p.drive();
    assert_eq!(answer_elicitations(&mut p, "Ada"), 1);
    p.drive();
    assert_eq!(answer_elicitations(&mut p, "green"), 1);
    let v: Value = p.finish(call).unwrap().parse().unwrap();
    assert_eq!(v["content"][0]["text"], "Ada likes green");
    assert_eq!(p.wire.len(), 6);
}

#[test]
fn input_never_leaks_into_another_request() {
    let mut p = modern_pair(caps_all());
    let ask = p
        .client
        .call(
            p.now,
            &McpCall::call_tool("ask", None),
            CallOptions::default(),
        )
        .unwrap();
    p.drive();
    // While the ask waits for its input, another call goes out clean.
    let echo = p
        .client
        .call(
            p.now,
            &McpCall::call_tool("echo", Some(json!({"message": "x"}))),
            CallOptions::default(),
        )
        .unwrap();
    p.finish(echo).unwrap();
    answer_elicitations(&mut p, "Ada");
    p.finish(ask).unwrap();
    for m in sent(&p) {
        if m["params"]["name"] != "ask" || m["params"].get("inputResponses").is_none() {
            assert!(m["params"].get("inputResponses").is_none(), "{m}");
            assert!(m["params"].get("requestState").is_none(), "{m}");
        }
    }
}

#[test]
fn a_call_waiting_for_input_can_be_cancelled() {
    let mut p = modern_pair(caps_all());
    let call = p
        .client
        .call(
            p.now,
            &McpCall::call_tool("ask", None),
            CallOptions::default(),
        )
        .unwrap();
    p.drive();
    p.client.cancel(p.now, call, None).unwrap();
    assert!(matches!(
        p.finish(call),
        Err(CallError::Local(LocalError::Cancelled { .. }))
    ));
}

#[test]
fn a_missing_capability_is_named_with_the_servers_error() {
    let mut p = modern_pair(ClientCapabilities::default());
    let call = p
        .client
        .call(
            p.now,
            &McpCall::call_tool("ask", None),
            CallOptions::default(),
        )
        .unwrap();
    assert!(matches!(
        p.finish(call),
        Err(CallError::MissingCapability {
            error: ErrorObject { code: -32021, .. },
            ..
        })
    ));
}

#[test]
fn a_subscription_has_no_deadline_whatever_its_options_say() {
    let mut p = modern_pair(caps_all());
    let short = CallOptions {
        timeout: std::time::Duration::from_millis(5),
        ..CallOptions::default()
    };
    let listen = McpCall::listen(json!({"toolsListChanged": true}));
    let sub = p.client.call(p.now, &listen, short.clone()).unwrap();
    assert_eq!(
        p.client.call_deadline(sub),
        None,
        "no deadline for a subscription"
    );
    // A request made by hand keeps the deadline it was given.
    let by_hand = McpCall::request(
        "subscriptions/listen",
        listen.params().map(|m| m.into_owned()),
    );
    let other = p.client.call(p.now, &by_hand, short).unwrap();
    assert!(p.client.call_deadline(other).is_some());
}

#[test]
fn subscriptions_listen_ack_tagged_notifications_and_both_ends() {
    let mut p = modern_pair(caps_all());
    let sub = p
        .client
        .call(
            p.now,
            &McpCall::listen(json!({"toolsListChanged": true, "resourceSubscriptions": []})),
            CallOptions::default(),
        )
        .unwrap();
    p.drive();
    p.server
        .notify(p.now, "notifications/tools/list_changed", None);
    p.server
        .notify(p.now, "notifications/prompts/list_changed", None);
    p.drive();
    let n: Vec<_> = p.take_notifications();
    assert_eq!(
        n,
        [
            ServerNotification::SubscriptionAcknowledged {
                subscription: sub,
                notifications: json!({"toolsListChanged": true})
            },
            ServerNotification::ForSubscription {
                subscription: sub,
                notification: Box::new(ServerNotification::ToolsListChanged)
            },
        ],
        "only what was asked for, tagged with the listen id"
    );
    // Ended by us: notifications/cancelled on stdio.
    p.client.cancel(p.now, sub, None).unwrap();
    p.drive();
    assert_eq!(p.server.subscriptions(), 0);
    assert!(p.wire.last().unwrap().contains("notifications/cancelled"));

    // Ended by the server with a success response.
    let sub = p
        .client
        .call(
            p.now,
            &McpCall::listen(json!({"toolsListChanged": true})),
            CallOptions::default(),
        )
        .unwrap();
    p.drive();
    p.server.end_subscriptions(p.now);
    assert!(p.finish(sub).is_ok());

    // Ended by the server with notifications/cancelled.
    let sub = p
        .client
        .call(
            p.now,
            &McpCall::listen(json!({"toolsListChanged": true})),
            CallOptions::default(),
        )
        .unwrap();
    p.drive();
    let cancel = Message::notification(
        "notifications/cancelled",
        Some(RawJson::new(&json!({"requestId": sub.0, "reason": "shutting down"})).unwrap()),
    );
    p.feed(&cancel);
    assert!(matches!(
        p.finish(sub),
        Err(CallError::Local(LocalError::CancelledByPeer { .. }))
    ));
}

// ----- scripted servers -----

/// A client connection started with `config`, facing no server: the tests play it.
pub(super) fn started(config: ClientConfig) -> Pair {
    Pair::with_config(config, DemoConfig::default())
}

/// The signatures of the messages the client wrote since last asked.
pub(super) fn drain_sent(c: &mut Pair) -> Vec<String> {
    std::iter::from_fn(|| c.poll_written())
        .map(|m| sig(&m))
        .collect()
}

pub(super) fn error(id: i64, code: i64, data: Option<Value>) -> Message {
    Message::error(
        Some(Id::Num(id)),
        ErrorObject {
            code,
            message: "no".into(),
            data: data.map(|d| RawJson::new(&d).unwrap()),
        },
    )
}

pub(super) fn result(id: i64, v: Value) -> Message {
    Message::result(Id::Num(id), RawJson::new(&v).unwrap())
}

#[test]
fn a_legacy_server_answering_any_error_gets_the_handshake_on_the_same_process() {
    for code in [-32601, -32602, -32600, -32000] {
        let mut c = started(ClientConfig::default());
        assert_eq!(drain_sent(&mut c), ["server/discover #0"]);
        c.feed(&error(0, code, None));
        assert_eq!(drain_sent(&mut c), ["initialize #1"], "code {code}");
        c.feed(&result(1, json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}})),
        );
        assert_eq!(drain_sent(&mut c), ["notifications/initialized"]);
        assert_eq!(c.client.era(), Some(ChosenEra::Handshake));
        assert!(c.client.is_ready());
    }
}

#[test]
fn unsupported_version_with_only_old_versions_means_the_handshake_at_one_of_them() {
    let mut c = started(ClientConfig::default());
    drain_sent(&mut c);
    c.feed(&error(
        0,
        -32022,
        Some(json!({"supported": ["2025-03-26"], "requested": "2026-07-28"})),
    ));
    let Some(Message::Request(init)) = c.poll_written() else {
        panic!()
    };
    let p: Value = init.params_as().unwrap();
    assert_eq!(p["protocolVersion"], "2025-03-26");
}

#[test]
fn pinned_eras() {
    // Legacy: no probe.
    let mut c = started(ClientConfig {
        era: Era::Handshake,
        ..ClientConfig::default()
    });
    assert_eq!(drain_sent(&mut c), ["initialize #0"]);
    // Modern against a legacy server: a clear failure, no fallback.
    let mut c = started(ClientConfig {
        era: Era::Stateless,
        ..ClientConfig::default()
    });
    drain_sent(&mut c);
    c.feed(&error(0, -32601, None));
    let ev = c.take_events();
    assert!(
        matches!(ev[0], Event::HandshakeFailed(CallError::Server(_))),
        "{ev:?}"
    );
    assert!(c.client.is_closed());
    assert!(drain_sent(&mut c).is_empty());
}

pub(super) fn modern_scripted() -> Pair {
    let mut c = started(auto(ClientCapabilities {
        elicitation: Some(json!({})),
        ..ClientCapabilities::default()
    }));
    drain_sent(&mut c);
    c.feed(&result(
        0,
        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                          "capabilities": {"tools": {}}}),
    ));
    assert!(c.client.is_ready());
    c.take_events();
    c
}

#[test]
fn request_state_is_left_out_when_none_was_given_and_state_only_rounds_retry_at_once() {
    let mut c = modern_scripted();
    let now = c.now;
    let call = c
        .client
        .call(now, &McpCall::call_tool("t", None), CallOptions::default())
        .unwrap();
    drain_sent(&mut c);
    // A state-only round (load shedding): retry at once, with the state and no inputs.
    c.feed(&result(
        1,
        json!({"resultType": "input_required", "requestState": "s1"}),
    ));
    let Some(Message::Request(r)) = c.poll_written() else {
        panic!()
    };
    let p: Value = r.params_as().unwrap();
    assert_eq!(p["requestState"], "s1");
    assert!(p.get("inputResponses").is_none());
    // A round with inputs and no state.
    c.feed(&result(2, json!({"resultType": "input_required", "inputRequests": {
            "k": {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": {}}}}})),
    );
    let ev = c.take_events();
    // Each round told first: the state-only one with no requests, then this one's.
    let Event::ServerRequest(ServerRequest::Elicitation { id, .. }) = &ev[2] else {
        panic!("{ev:?}")
    };
    assert!(
        matches!(&ev[0], Event::InputRequired { call: d, round: 1, requests } if *d == call && requests.is_empty()),
        "{ev:?}"
    );
    assert!(
        matches!(&ev[1], Event::InputRequired { call: d, round: 2, requests } if *d == call && requests == std::slice::from_ref(id)),
        "{ev:?}"
    );
    c.client
        .respond(
            now,
            id,
            Ok(RawJson::new(&json!({"action": "decline"})).unwrap()),
        )
        .unwrap();
    let Some(Message::Request(r)) = c.poll_written() else {
        panic!()
    };
    let p: Value = r.params_as().unwrap();
    assert!(p.get("requestState").is_none(), "{p}");
    assert_eq!(p["inputResponses"]["k"], json!({"action": "decline"}));
    // A missing resultType is complete.
    c.feed(&result(3, json!({"content": []})));
    let ev = c.take_events();
    assert!(
        matches!(&ev[0], Event::CallDone { call: done, outcome: Ok(_) } if *done == call),
        "{ev:?}"
    );
}

#[test]
fn a_round_sends_the_callers_params_and_meta_again_with_a_fresh_progress_token() {
    let mut c = modern_scripted();
    let now = c.now;
    let params = json!({"name": "t", "arguments": {"n": 1, "s": "é"},
                        "_meta": {"example.com/trace": "abc"}});
    let Value::Object(params) = params else {
        unreachable!()
    };
    let opts = CallOptions {
        progress: true,
        ..CallOptions::default()
    };
    c.client
        .call(now, &McpCall::request("tools/call", Some(params)), opts)
        .unwrap();
    let Some(Message::Request(first)) = c.poll_written() else {
        panic!()
    };
    let first: Value = first.params_as().unwrap();
    drain_sent(&mut c);
    c.feed(&result(
        1,
        json!({"resultType": "input_required", "requestState": "s1"}),
    ));
    let Some(Message::Request(retry)) = c.poll_written() else {
        panic!()
    };
    let retry: Value = retry.params_as().unwrap();
    assert_eq!(retry["name"], "t");
    assert_eq!(retry["arguments"], json!({"n": 1, "s": "é"}));
    assert_eq!(retry["requestState"], "s1");
    let (m1, m2) = (&first["_meta"], &retry["_meta"]);
    assert_eq!(m2["example.com/trace"], "abc", "{retry}");
    assert_eq!(
        m2["io.modelcontextprotocol/protocolVersion"],
        m1["io.modelcontextprotocol/protocolVersion"]
    );
    assert_eq!(
        m2["io.modelcontextprotocol/clientCapabilities"],
        m1["io.modelcontextprotocol/clientCapabilities"]
    );
    assert!(m1["progressToken"].is_number() && m2["progressToken"].is_number());
    assert_ne!(
        m1["progressToken"], m2["progressToken"],
        "a token per request"
    );
    assert_eq!(m1.as_object().unwrap().len(), m2.as_object().unwrap().len());
}

#[test]
fn an_unknown_result_type_is_a_typed_error_and_rounds_are_capped() {
    let mut c = modern_scripted();
    let now = c.now;
    let call = c
        .client
        .call(now, &McpCall::call_tool("t", None), CallOptions::default())
        .unwrap();
    drain_sent(&mut c);
    c.feed(&result(1, json!({"resultType": "task", "taskId": "x"})));
    let ev = c.take_events();
    assert!(
        matches!(&ev[0], Event::CallDone { call: d, outcome: Err(CallError::InvalidResult(why)) } if *d == call && why.contains("task")),
        "{ev:?}"
    );
    // A server that asks forever.
    let call = c
        .client
        .call(now, &McpCall::call_tool("t", None), CallOptions::default())
        .unwrap();
    for _ in 0..100 {
        let Some(Message::Request(r)) = c.poll_written() else {
            break;
        };
        let id = r.id.as_i64().unwrap();
        c.feed(&result(
            id,
            json!({"resultType": "input_required", "requestState": "again"}),
        ));
    }
    let ev = c.take_events();
    // Each round allowed is told; the one past the cap ends the call.
    let rounds: Vec<u32> = (ev.iter())
        .filter_map(|e| match e {
            Event::InputRequired { call: d, round, .. } if *d == call => Some(*round),
            _ => None,
        })
        .collect();
    assert_eq!(rounds, (1..=16).collect::<Vec<u32>>(), "{ev:?}");
    assert!(
        matches!(ev.last(), Some(Event::CallDone { call: d, outcome: Err(CallError::InvalidResult(why)) }) if *d == call && why.contains("16")),
        "{ev:?}"
    );
}

#[test]
fn an_input_request_the_client_did_not_declare_fails_the_call() {
    let mut c = modern_scripted();
    let now = c.now;
    let call = c
        .client
        .call(now, &McpCall::call_tool("t", None), CallOptions::default())
        .unwrap();
    drain_sent(&mut c);
    c.feed(&result(1, json!({"resultType": "input_required", "inputRequests": {
            "s": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}}})),
    );
    let ev = c.take_events();
    assert!(
        matches!(&ev[0], Event::CallDone { call: d, outcome: Err(CallError::InvalidResult(_)) } if *d == call),
        "{ev:?}"
    );
}

#[test]
fn cache_hints_of_list_pages_are_exposed() {
    let mut c = modern_scripted();
    let now = c.now;
    let call = c
        .client
        .call(now, &McpCall::list_tools(), CallOptions::default())
        .unwrap();
    drain_sent(&mut c);
    c.feed(&result(1, json!({"resultType": "complete", "tools": [], "nextCursor": "", "ttlMs": 5000, "cacheScope": "public"})),
    );
    drain_sent(&mut c);
    c.feed(&result(
        2,
        json!({"resultType": "complete", "tools": [], "ttlMs": 2000, "cacheScope": "private"}),
    ));
    let ev = c.take_events();
    let Event::CallDone {
        call: d,
        outcome: Ok(all),
    } = &ev[0]
    else {
        panic!("{ev:?}")
    };
    assert_eq!(*d, call);
    let v: Value = all.parse().unwrap();
    assert_eq!(v["ttlMs"], 2000);
    assert_eq!(v["cacheScope"], "private");
}
