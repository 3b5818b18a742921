//! The stateless era's edges: the log level each request asks for, resource subscriptions
//! carried by `subscriptions/listen`, and the errors a server may answer any request with
//! (`-32021` missing capability, `-32022` unsupported version).

use serde_json::{json, Value};

use super::modern::{modern_pair, sent};
use crate::connection::protocol::calls::McpCall;
use crate::connection::protocol::events::Event;
use crate::connection::protocol::{CallOptions, ClientError, ServerNotification};
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
