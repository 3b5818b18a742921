//! The stateless era's edges: the log level each request asks for, resource subscriptions
//! carried by `subscriptions/listen`, and the errors a server may answer any request with
//! (`-32021` missing capability, `-32022` unsupported version).

use serde_json::{json, Value};

use super::modern::{drain_sent, error, modern_pair, result, sent, started};
use crate::connection::protocol::vocabulary::calls::McpCall;
use crate::connection::protocol::vocabulary::events::{Diagnostic, Event};
use crate::connection::protocol::{
    CallError, CallId, CallOptions, ClientConfig, ClientError, ServerNotification,
};
use crate::jsonrpc::{Message, RawJson};
use crate::test_support::*;
use crate::types::ClientCapabilities;

/// The log messages the client reported, as (level, text).
fn logs(p: &Pair) -> Vec<(String, String)> {
    p.events
        .iter()
        .filter_map(|e| match e {
            Event::Notification(ServerNotification::Log(m)) => Some((
                m.level.clone(),
                m.data.as_str().unwrap_or_default().to_owned(),
            )),
            _ => None,
        })
        .collect()
}

fn slow_call(p: &mut Pair) {
    let now = p.now;
    let c = p
        .client
        .call(
            now,
            &McpCall::call_tool("slow", Some(json!({"steps": 1, "interval_ms": 10}))),
            CallOptions::default(),
        )
        .unwrap();
    p.finish(c).unwrap();
}

const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

#[test]
fn a_log_level_goes_in_each_requests_meta_and_no_set_level_is_sent() {
    let mut p = modern_pair(caps_all());
    let now = p.now;
    let set = McpCall::set_log_level("info");
    let c = p.client.call(now, &set, CallOptions::default()).unwrap();
    // Nothing was sent for it, and it ended at once.
    assert_eq!(p.poll_written_line(), None);
    assert_eq!(p.finish(c).unwrap().get(), "{}");
    assert_eq!(p.client.request_log_level(), Some("info"));
    slow_call(&mut p);
    assert_eq!(logs(&p), [("info".into(), "step 1 of 1 done".into())]);
    let calls: Vec<Value> = sent(&p)
        .into_iter()
        .filter(|m| m["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["params"]["_meta"][LOG_LEVEL], "info");
    assert!(sent(&p).iter().all(|m| m["method"] != "logging/setLevel"));
    // A lower level later: the next request asks for it.
    p.events.clear();
    let c = p
        .client
        .call(
            now,
            &McpCall::set_log_level("debug"),
            CallOptions::default(),
        )
        .unwrap();
    p.finish(c).unwrap();
    slow_call(&mut p);
    assert_eq!(logs(&p).len(), 2, "{:?}", p.events);
}

#[test]
fn without_a_level_no_request_asks_for_logs() {
    let mut p = modern_pair(caps_all());
    slow_call(&mut p);
    assert_eq!(logs(&p), []);
    for m in sent(&p) {
        assert!(m["params"]["_meta"].get(LOG_LEVEL).is_none(), "{m}");
    }
}

#[test]
fn a_level_the_protocol_does_not_know_is_refused_before_anything_is_sent() {
    let mut p = modern_pair(caps_all());
    let now = p.now;
    let e = p
        .client
        .call(now, &McpCall::set_log_level("loud"), CallOptions::default())
        .unwrap_err();
    assert!(matches!(e, ClientError::InvalidArgument(_)), "{e:?}");
    assert_eq!(p.poll_written_line(), None);
    assert_eq!(p.client.request_log_level(), None);
}

fn notifications(p: &mut Pair) -> Vec<ServerNotification> {
    p.take_notifications()
}

fn updated(p: &mut Pair, uri: &str) {
    let now = p.now;
    p.server.notify(
        now,
        "notifications/resources/updated",
        Some(json!({ "uri": uri })),
    );
    p.drive();
}

#[test]
fn a_resource_subscription_is_carried_by_a_listen_and_ends_with_it() {
    let mut p = modern_pair(caps_all());
    let now = p.now;
    let uri = "demo://echo/hello";
    let sub = McpCall::subscribe_resource(uri);
    let c = p.client.call(now, &sub, CallOptions::default()).unwrap();
    assert_eq!(p.finish(c).unwrap().get(), "{}");
    let listens: Vec<Value> = sent(&p)
        .into_iter()
        .filter(|m| m["method"] == "subscriptions/listen")
        .collect();
    assert_eq!(listens.len(), 1);
    assert_eq!(
        listens[0]["params"]["notifications"],
        json!({"resourceSubscriptions": [uri]})
    );
    assert!(sent(&p)
        .iter()
        .all(|m| m["method"] != "resources/subscribe"));
    // The acknowledgement is the connection's own; the update arrives as in the handshake era.
    assert_eq!(notifications(&mut p), []);
    updated(&mut p, uri);
    updated(&mut p, "demo://echo/other");
    assert_eq!(
        notifications(&mut p),
        [ServerNotification::ResourceUpdated { uri: uri.into() }]
    );
    // Unsubscribing ends the listen, at once and without a word to the application.
    let unsub = McpCall::unsubscribe_resource(uri);
    let c = p.client.call(now, &unsub, CallOptions::default()).unwrap();
    assert_eq!(p.finish(c).unwrap().get(), "{}");
    p.drive();
    assert_eq!(p.server.subscriptions(), 0);
    updated(&mut p, uri);
    assert_eq!(notifications(&mut p), []);
    let done = p
        .events
        .iter()
        .filter(|e| matches!(e, Event::CallDone { .. }))
        .count();
    assert_eq!(done, 2, "only the two calls ended: {:?}", p.events);
}

#[test]
fn a_subscription_the_server_leaves_out_is_declined_and_its_listen_ended() {
    let mut p = modern_pair(caps_all());
    let now = p.now;
    let sub = McpCall::subscribe_resource("file:///not/the/demos");
    let c = p.client.call(now, &sub, CallOptions::default()).unwrap();
    let e = p.finish(c).unwrap_err();
    assert!(matches!(e, CallError::Declined(_)), "{e:?}");
    p.drive();
    assert_eq!(p.server.subscriptions(), 0);
}

#[test]
fn a_subscription_the_server_ends_is_reported_once() {
    let mut p = modern_pair(caps_all());
    let now = p.now;
    let uri = "demo://echo/x";
    let c = p
        .client
        .call(
            now,
            &McpCall::subscribe_resource(uri),
            CallOptions::default(),
        )
        .unwrap();
    p.finish(c).unwrap();
    p.server.end_subscriptions(now);
    p.drive();
    let ended: Vec<_> = p
        .events
        .iter()
        .filter(|e| matches!(e, Event::Diagnostic(Diagnostic::SubscriptionEnded { .. })))
        .collect();
    assert_eq!(ended.len(), 1, "{:?}", p.events);
    // Subscribing again opens a new listen.
    let c = p
        .client
        .call(
            now,
            &McpCall::subscribe_resource(uri),
            CallOptions::default(),
        )
        .unwrap();
    p.finish(c).unwrap();
    assert_eq!(p.server.subscriptions(), 1);
}

#[test]
fn resource_subscriptions_still_need_the_servers_subscribe_capability() {
    let mut c = super::modern::modern_scripted();
    let now = c.now;
    let e = c
        .client
        .call(
            now,
            &McpCall::subscribe_resource("demo://x"),
            CallOptions::default(),
        )
        .unwrap_err();
    assert!(matches!(e, ClientError::NotSupported(_)), "{e:?}");
}

/// A scripted stateless-era server's client: `declared` on every request, `on_demand` when asked.
fn scripted(declared: ClientCapabilities, on_demand: ClientCapabilities) -> Pair {
    let mut c = started(ClientConfig {
        capabilities: declared,
        capabilities_on_demand: on_demand,
        ..ClientConfig::default()
    });
    drain_sent(&mut c);
    c.feed(&result(
        0,
        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
               "capabilities": {"tools": {}, "prompts": {}}}),
    ));
    assert!(c.client.is_ready());
    c.take_events();
    c
}

/// The requests the client wrote since the last look, as JSON.
fn written(c: &mut Pair) -> Vec<Value> {
    std::iter::from_fn(|| c.poll_written_line())
        .map(|l| serde_json::from_str(&l).unwrap())
        .collect()
}

fn elicitation() -> ClientCapabilities {
    ClientCapabilities::default().with_elicitation(false)
}

fn missing(id: i64, required: Value) -> Message {
    error(
        id,
        -32021,
        Some(json!({ "requiredCapabilities": required })),
    )
}

fn call_echo(c: &mut Pair) -> CallId {
    let now = c.now;
    c.client
        .call(
            now,
            &McpCall::call_tool("echo", Some(json!({"message": "hi"}))),
            CallOptions::default(),
        )
        .unwrap()
}

fn outcome(c: &mut Pair, call: CallId) -> Option<Result<RawJson, CallError>> {
    c.take_events().into_iter().find_map(|e| match e {
        Event::CallDone { call: d, outcome } if d == call => Some(outcome),
        _ => None,
    })
}

const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

#[test]
fn a_capability_on_demand_is_declared_when_the_server_needs_it_and_the_request_sent_once_more() {
    let mut c = scripted(ClientCapabilities::default(), elicitation());
    let call = call_echo(&mut c);
    let first = written(&mut c);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0]["params"]["_meta"][CAPS].get("elicitation"), None);
    let id = first[0]["id"].as_i64().unwrap();
    c.feed(&missing(id, json!({"elicitation": {}})));
    let again = written(&mut c);
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!(again[0]["method"], "tools/call");
    assert_ne!(again[0]["id"], first[0]["id"]);
    assert_eq!(again[0]["params"]["arguments"], json!({"message": "hi"}));
    assert_eq!(
        again[0]["params"]["_meta"][CAPS]["elicitation"],
        json!({"form": {}})
    );
    assert_eq!(outcome(&mut c, call), None, "the caller sees nothing of it");
    // The call's input rounds declare it too, and its input requests are served.
    let id2 = again[0]["id"].as_i64().unwrap();
    c.feed(&result(
        id2,
        json!({"resultType": "input_required", "inputRequests": {"q": {"method": "elicitation/create",
            "params": {"mode": "form", "message": "name?", "requestedSchema": {"type": "object"}}}}}),
    ));
    let asked = c.take_events();
    let Some(Event::ServerRequest(request)) = asked.get(1) else {
        panic!("{asked:?}")
    };
    assert!(
        matches!(&asked[0], Event::InputRequired { call: d, round: 1, .. } if *d == call),
        "the round is told first: {asked:?}"
    );
    let now = c.now;
    let answer = RawJson::new(&json!({"action": "decline"})).unwrap();
    c.client.respond(now, request.id(), Ok(answer)).unwrap();
    let round = written(&mut c);
    assert_eq!(
        round[0]["params"]["_meta"][CAPS]["elicitation"],
        json!({"form": {}})
    );
    let id3 = round[0]["id"].as_i64().unwrap();
    c.feed(&result(id3, json!({"content": []})));
    assert!(outcome(&mut c, call).unwrap().is_ok());
    // Another call declares only what is declared on every request.
    call_echo(&mut c);
    let next = written(&mut c);
    assert_eq!(next[0]["params"]["_meta"][CAPS].get("elicitation"), None);
}

#[test]
fn a_capability_this_client_cannot_serve_ends_the_call_as_missing() {
    // Sampling is not served; nothing on demand at all; a second refusal of the same request.
    let cases = [
        (elicitation(), json!({"sampling": {}})),
        (ClientCapabilities::default(), json!({"elicitation": {}})),
        (elicitation(), json!({"elicitation": {"url": {}}})),
    ];
    for (on_demand, required) in cases {
        let mut c = scripted(ClientCapabilities::default(), on_demand);
        let call = call_echo(&mut c);
        let id = written(&mut c)[0]["id"].as_i64().unwrap();
        c.feed(&missing(id, required.clone()));
        assert_eq!(written(&mut c), Vec::<Value>::new(), "{required}");
        let e = outcome(&mut c, call).unwrap().unwrap_err();
        assert!(matches!(e, CallError::MissingCapability { .. }), "{e:?}");
    }
    let mut c = scripted(ClientCapabilities::default(), elicitation());
    let call = call_echo(&mut c);
    let id = written(&mut c)[0]["id"].as_i64().unwrap();
    c.feed(&missing(id, json!({"elicitation": {}})));
    let id = written(&mut c)[0]["id"].as_i64().unwrap();
    c.feed(&missing(id, json!({"elicitation": {}})));
    assert_eq!(written(&mut c), Vec::<Value>::new());
    let e = outcome(&mut c, call).unwrap().unwrap_err();
    assert!(matches!(e, CallError::MissingCapability { .. }), "{e:?}");
}

#[test]
fn a_list_refused_for_a_capability_on_demand_is_sent_once_more_too() {
    let mut c = scripted(ClientCapabilities::default(), elicitation());
    let now = c.now;
    let call = c
        .client
        .call(now, &McpCall::list_prompts(), CallOptions::default())
        .unwrap();
    let id = written(&mut c)[0]["id"].as_i64().unwrap();
    c.feed(&missing(id, json!({"elicitation": {"form": {}}})));
    let again = written(&mut c);
    assert_eq!(again[0]["method"], "prompts/list");
    let id = again[0]["id"].as_i64().unwrap();
    c.feed(&result(id, json!({"prompts": []})));
    assert!(outcome(&mut c, call).unwrap().is_ok());
}

fn unsupported(id: i64, supported: &[&str]) -> Message {
    error(
        id,
        -32022,
        Some(json!({"supported": supported, "requested": "2026-07-28"})),
    )
}

#[test]
fn an_unsupported_version_still_listed_sends_the_request_once_more_and_never_loops() {
    let mut c = scripted(ClientCapabilities::default(), ClientCapabilities::default());
    let call = call_echo(&mut c);
    let id = written(&mut c)[0]["id"].as_i64().unwrap();
    c.feed(&unsupported(id, &["2026-07-28", "2025-11-25"]));
    let again = written(&mut c);
    assert_eq!(again.len(), 1);
    assert_eq!(
        again[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    let id = again[0]["id"].as_i64().unwrap();
    assert_eq!(outcome(&mut c, call), None);
    c.feed(&unsupported(id, &["2026-07-28", "2025-11-25"]));
    assert_eq!(written(&mut c), Vec::<Value>::new());
    let e = outcome(&mut c, call).unwrap().unwrap_err();
    assert!(
        matches!(&e, CallError::Server(e) if e.code == -32022),
        "{e:?}"
    );
    assert!(!c.client.is_closed());
    // Each request has its own once.
    let call = call_echo(&mut c);
    let id = written(&mut c)[0]["id"].as_i64().unwrap();
    c.feed(&unsupported(id, &["2026-07-28"]));
    let id = written(&mut c)[0]["id"].as_i64().unwrap();
    c.feed(&result(id, json!({"content": []})));
    assert!(outcome(&mut c, call).unwrap().is_ok());
}

#[test]
fn a_server_left_with_only_handshake_versions_closes_the_connection_with_a_typed_error() {
    let mut c = scripted(ClientCapabilities::default(), ClientCapabilities::default());
    let call = call_echo(&mut c);
    let other = call_echo(&mut c);
    let sent = written(&mut c);
    let id = sent[0]["id"].as_i64().unwrap();
    c.feed(&unsupported(id, &["2025-11-25", "2025-06-18"]));
    assert_eq!(
        written(&mut c),
        Vec::<Value>::new(),
        "no initialize mid-connection"
    );
    let events = c.take_events();
    let ended = |which: CallId| {
        events.iter().find_map(|e| match e {
            Event::CallDone { call, outcome } if *call == which => Some(outcome.clone()),
            _ => None,
        })
    };
    let e = ended(call).unwrap().unwrap_err();
    let CallError::VersionChanged { supported, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(supported, &["2025-11-25", "2025-06-18"]);
    assert!(
        e.to_string()
            .contains("now speaks only 2025-11-25, 2025-06-18"),
        "{e}"
    );
    let e = ended(other).unwrap().unwrap_err();
    assert!(e.to_string().contains("now speaks only"), "{e}");
    let left = events
        .iter()
        .position(|e| matches!(e, Event::EraLeft { .. }));
    let closed = events.iter().position(|e| matches!(e, Event::Closed(_)));
    assert!(left.is_some() && left < closed, "{events:?}");
    assert!(c.client.is_closed());
}
