//! The stateless era's edges: the log level each request asks for, resource subscriptions
//! carried by `subscriptions/listen`, and the errors a server may answer any request with
//! (`-32021` missing capability, `-32022` unsupported version).

use serde_json::{json, Value};

use super::modern::{modern_pair, sent};
use crate::connection::protocol::calls::McpCall;
use crate::connection::protocol::events::{Diagnostic, Event};
use crate::connection::protocol::{CallError, CallOptions, ClientError, ServerNotification};
use crate::test_support::*;

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
        .call_tool(
            now,
            "slow",
            Some(json!({"steps": 1, "interval_ms": 10})),
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
