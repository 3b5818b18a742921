//! Tool calls the connection holds until the tools are listed (list-before-call in the
//! handshake era, the arguments' check) and the schema policy (feature `schemas`): each held
//! call is sent under the call it already is, or ends exactly once (the list failed, it was
//! cancelled, it timed out, the connection closed), and the connection's own list reaches no
//! caller.

use std::time::Duration;

use serde_json::{json, Value};

use crate::connection::protocol::vocabulary::events::Event;
use crate::connection::protocol::{CallError, CallId, CallOptions};
use crate::connection::McpCall;
use crate::jsonrpc::{ErrorObject, Id, Message, RawJson};
use crate::rpc::LocalError;

use crate::test_support::*;

/// Every message the client wrote and no server read yet.
fn written(p: &mut Pair) -> Vec<Message> {
    std::iter::from_fn(|| p.poll_written()).collect()
}

/// The one request the client wrote: its method and id.
fn one_request(p: &mut Pair) -> (String, Id) {
    let sent = written(p);
    assert_eq!(sent.len(), 1, "{sent:?}");
    match &sent[0] {
        Message::Request(r) => (r.method.to_string(), r.id.clone()),
        other => panic!("{other:?}"),
    }
}

/// The outcomes the client reported, by call.
fn done(p: &mut Pair) -> Vec<(CallId, Result<RawJson, CallError>)> {
    p.take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::CallDone { call, outcome } => Some((call, outcome)),
            _ => None,
        })
        .collect()
}

/// A handshake-era pair against the demo, which runs tool calls as tasks: its first tool call
/// is held for the tools' list. The test plays the server from here.
fn held_echo(opts: CallOptions) -> (Pair, CallId, Id) {
    let mut p = Pair::ready();
    let now = p.now;
    let echo = Some(json!({"message": "hi"}));
    let call = p
        .client
        .call(now, &McpCall::call_tool("echo", echo), opts)
        .unwrap();
    let (method, list) = one_request(&mut p);
    assert_eq!(method, "tools/list", "the list goes first, alone");
    (p, call, list)
}

fn id_num(id: &Id) -> i64 {
    match id {
        Id::Num(n) => *n,
        other => panic!("{other:?}"),
    }
}

fn raw(v: Value) -> RawJson {
    RawJson::new(&v).unwrap()
}

fn tools() -> RawJson {
    raw(json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}))
}

#[test]
fn a_held_call_is_sent_under_its_own_call_once_the_tools_are_listed() {
    let (mut p, call, list) = held_echo(CallOptions::default());
    assert!(done(&mut p).is_empty());
    p.feed(&Message::result(list, tools()));
    let (method, id) = one_request(&mut p);
    assert_eq!(method, "tools/call");
    assert_ne!(
        id,
        Id::Num(call.0),
        "the call keeps its id; the request has its own"
    );
    assert!(
        done(&mut p).is_empty(),
        "the connection's list reaches no caller"
    );
    p.feed(&Message::result(id, raw(json!({"content": []}))));
    let ended = done(&mut p);
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert_eq!(ended[0].0, call);
    assert!(ended[0].1.is_ok());
}

#[test]
fn a_list_that_fails_ends_the_held_call_with_its_error_and_nothing_is_sent() {
    let (mut p, call, list) = held_echo(CallOptions::default());
    let error = ErrorObject::new(-32603, "no list today");
    p.feed(&Message::error(Some(list), error.clone()));
    assert_eq!(done(&mut p), [(call, Err(CallError::Server(error)))]);
    assert!(written(&mut p).is_empty(), "no tools/call");
}

#[test]
fn the_connection_s_own_list_is_no_call_to_cancel() {
    let (mut p, call, list) = held_echo(CallOptions::default());
    let Id::Num(n) = list else { panic!() };
    let now = p.now;
    assert!(p.client.cancel(now, CallId(n), None).is_err());
    assert!(written(&mut p).is_empty(), "nothing told the server");
    p.feed(&Message::result(Id::Num(n), tools()));
    let (method, _) = one_request(&mut p);
    assert_eq!(method, "tools/call", "the held call goes on");
    assert!(done(&mut p).iter().all(|(c, _)| *c == call));
}

#[test]
fn a_held_call_cancelled_ends_once_and_is_never_sent() {
    let (mut p, call, list) = held_echo(CallOptions::default());
    let now = p.now;
    p.client.cancel(now, call, Some("enough".into())).unwrap();
    let ended = done(&mut p);
    assert!(
        matches!(&ended[..], [(c, Err(CallError::Local(LocalError::Cancelled { .. })))] if *c == call),
        "{ended:?}"
    );
    // No call waits for the list any more: it is cancelled too.
    let told = written(&mut p);
    assert!(
        matches!(&told[..], [Message::Notification(n)]
            if n.method == "notifications/cancelled" && n.params.as_ref().unwrap().get().contains(&format!("\"requestId\":{}", id_num(&list)))),
        "{told:?}"
    );
    p.feed(&Message::result(list, tools()));
    assert!(written(&mut p).is_empty(), "the cancelled call is not sent");
    assert!(done(&mut p).is_empty(), "and does not end twice");
}

#[test]
fn a_held_call_times_out_on_its_own_clock_once() {
    // (The list it waited for is cancelled then: no call waits for it.)
    let opts = CallOptions::default().timeout(Duration::from_secs(2));
    let (mut p, call, list) = held_echo(opts);
    p.now += Duration::from_secs(2);
    let now = p.now;
    p.client.handle_timeout(now);
    let ended = done(&mut p);
    let timeouts: Vec<_> = ended.iter().filter(|(c, _)| *c == call).collect();
    assert_eq!(timeouts.len(), 1, "{ended:?}");
    assert!(
        matches!(&timeouts[0].1, Err(CallError::Local(LocalError::Timeout { method, .. })) if method == "tools/call"),
        "{ended:?}"
    );
    // The list, late, sends nothing more.
    let _ = written(&mut p);
    p.feed(&Message::result(list, tools()));
    assert!(
        written(&mut p)
            .iter()
            .all(|m| !matches!(m, Message::Request(r) if r.method == "tools/call")),
        "a call that timed out is never sent"
    );
}

#[test]
fn closing_ends_a_held_call_once() {
    let (mut p, call, _) = held_echo(CallOptions::default());
    let now = p.now;
    p.client.close(now);
    let ended: Vec<_> = done(&mut p)
        .into_iter()
        .filter(|(c, _)| *c == call)
        .collect();
    assert!(
        matches!(
            &ended[..],
            [(_, Err(CallError::Local(LocalError::Closed(_))))]
        ),
        "{ended:?}"
    );
}

#[test]
fn two_calls_share_one_list() {
    let (mut p, first, list) = held_echo(CallOptions::default());
    let now = p.now;
    let second = p
        .client
        .call(
            now,
            &McpCall::call_tool("echo", Some(json!({"message": "again"}))),
            CallOptions::default(),
        )
        .unwrap();
    assert!(written(&mut p).is_empty(), "no second list");
    p.feed(&Message::result(list, tools()));
    let calls = written(&mut p);
    assert_eq!(calls.len(), 2, "{calls:?}");
    for m in calls {
        let Message::Request(r) = m else { panic!() };
        p.feed(&Message::result(r.id, raw(json!({"content": []}))));
    }
    let mut ended: Vec<_> = done(&mut p)
        .into_iter()
        .map(|(c, o)| (c, o.is_ok()))
        .collect();
    ended.sort();
    assert_eq!(ended, [(first, true), (second, true)]);
}

#[cfg(feature = "schemas")]
mod schemas {
    use super::*;
    use crate::schema::{SchemaKind, SchemaViolation};
    use crate::server::DemoConfig;

    /// A stateless-era pair against the demo: no list is needed before a call.
    fn modern() -> Pair {
        let mut p = Pair::with_config(
            crate::ClientConfig {
                capabilities: caps_all(),
                ..crate::ClientConfig::default()
            },
            DemoConfig::default(),
        );
        p.drive();
        assert!(p.client.is_ready());
        p.frames.clear();
        p
    }

    fn tool_calls(p: &Pair) -> usize {
        let sent = p.frames.iter().filter(|(c, _)| *c);
        sent.filter(|(_, f)| f.contains("\"tools/call\"")).count()
    }

    fn call(p: &mut Pair, tool: &str, args: Value, opts: CallOptions) -> CallId {
        let now = p.now;
        p.client
            .call(now, &McpCall::call_tool(tool, Some(args)), opts)
            .unwrap()
    }

    #[test]
    fn arguments_asked_to_be_checked_are_refused_before_anything_is_sent() {
        let mut p = modern();
        let opts = CallOptions::default().check_arguments();
        // No list yet: the tools are listed first, then the call is refused.
        let c = call(&mut p, "forecast", json!({"town": "Oslo"}), opts.clone());
        let refused = p.finish(c);
        assert!(
            matches!(&refused, Err(CallError::Schema { error, result: None })
                if error.kind == SchemaKind::Input && error.tool == "forecast"),
            "{refused:?}"
        );
        assert_eq!(tool_calls(&p), 0);
        // Known now: refused at once, nothing sent, not even a list.
        p.frames.clear();
        let c = call(&mut p, "forecast", json!({"town": "Oslo"}), opts.clone());
        p.drain();
        assert!(matches!(p.done(c), Some(Err(CallError::Schema { .. }))));
        p.drive();
        assert!(p.frames.iter().all(|(client, _)| !client), "{:?}", p.frames);
        // Good arguments go.
        let c = call(&mut p, "forecast", json!({"city": "Oslo"}), opts);
        assert!(p.finish(c).is_ok());
        assert_eq!(tool_calls(&p), 1);
    }

    #[test]
    fn a_result_that_breaks_the_output_schema_is_a_typed_error_with_the_result() {
        let mut p = modern();
        // Before any list nothing is known: the result comes as sent.
        let wrong = json!({"city": "Oslo", "break": "type"});
        let c = call(&mut p, "forecast", wrong.clone(), CallOptions::default());
        assert!(p.finish(c).is_ok());
        let list = p
            .client
            .call(p.now, &McpCall::list_tools(), CallOptions::default())
            .unwrap();
        p.finish(list).unwrap();
        let c = call(&mut p, "forecast", wrong.clone(), CallOptions::default());
        let Err(CallError::Schema { error, result }) = p.finish(c) else {
            panic!("{:?}", p.events)
        };
        assert_eq!(error.kind, SchemaKind::Output);
        assert!(matches!(error.violation, SchemaViolation::DoesNotMatch(_)));
        assert!(result.unwrap().get().contains("warm"), "the result is kept");
        let missing = json!({"city": "Oslo", "break": "missing"});
        let c = call(&mut p, "forecast", missing, CallOptions::default());
        assert!(matches!(p.finish(c), Err(CallError::Schema { error, .. })
            if error.violation == SchemaViolation::MissingStructuredContent));
        // `add` declares a schema too, and meets it.
        let c = call(
            &mut p,
            "add",
            json!({"a": 1, "b": 2}),
            CallOptions::default(),
        );
        assert!(p.finish(c).is_ok());
        // The tools changed: nothing is checked until they are listed again (here through a
        // subscription, the stateless era's way to hear of it).
        let now = p.now;
        let listen = p
            .client
            .call(
                now,
                &McpCall::listen(json!({"toolsListChanged": true})),
                CallOptions::default(),
            )
            .unwrap();
        p.drive();
        p.server
            .notify(p.now, "notifications/tools/list_changed", None);
        p.drive();
        assert!(p.client.tool_schemas().is_none(), "{:?}", p.wire);
        let c = call(&mut p, "forecast", wrong, CallOptions::default());
        assert!(p.finish(c).is_ok());
        assert!(p.done(listen).is_none());
    }
}
