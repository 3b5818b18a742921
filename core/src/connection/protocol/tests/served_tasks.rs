//! Tasks the client runs for the server (2025-11-25): the test plays the server by hand and
//! asserts what the client wrote. A task-augmented request is answered at once with the task
//! and surfaced as any request; `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`
//! follow it; the application's answer is its outcome; the store is bounded, and everything
//! ends with the connection.

use std::time::Duration;

use serde_json::{json, Value};

use crate::connection::protocol::vocabulary::events::{Diagnostic, Event};
use crate::connection::protocol::{ClientConfig, ClientError, ServerRequest};
use crate::connection::McpCall;
use crate::jsonrpc::{ErrorObject, Id, Message, RawJson};
use crate::rpc::{Limits, Responded};
use crate::server::DemoConfig;

use crate::test_support::*;

/// What the wall clock read when each test's client was made: 2025-11-25T10:00:00Z.
const WALL: u64 = 1_764_064_800_000;
const RELATED: &str = "io.modelcontextprotocol/related-task";

/// A handshake-era client that declares elicitation and sampling with tasks, past a handshake
/// the test played, its wall clock set.
fn client_with(capabilities: crate::types::ClientCapabilities, limits: Limits) -> Pair {
    let config = ClientConfig {
        capabilities,
        limits,
        ..legacy()
    };
    let mut p = Pair::with_config(config, DemoConfig::default());
    p.client.set_wall_clock(p.now, WALL);
    let init = out(&mut p);
    assert_eq!(init[0]["method"], "initialize");
    let answer = json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"}});
    p.feed(&Message::result(Id::Num(0), RawJson::new(&answer).unwrap()));
    assert_eq!(out(&mut p)[0]["method"], "notifications/initialized");
    assert!(p.client.is_ready());
    p.take_events();
    p
}

fn client() -> Pair {
    client_with(caps_all().with_tasks(), Limits::default())
}

/// Every message the client wrote since the last look, as JSON.
fn out(p: &mut Pair) -> Vec<Value> {
    std::iter::from_fn(|| p.poll_written_line())
        .map(|line| serde_json::from_str(&line).unwrap())
        .collect()
}

/// The server sends request `id`; what the client wrote in answer.
fn ask(p: &mut Pair, id: i64, method: &'static str, params: Value) -> Vec<Value> {
    let params = RawJson::new(&params).unwrap();
    p.feed(&Message::request(id, method, Some(params)));
    out(p)
}

/// An elicitation that asks to run as a task.
fn elicitation(ttl: u64) -> Value {
    json!({"mode": "form", "message": "Your name?", "task": {"ttl": ttl},
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}})
}

fn accepted(name: &str) -> RawJson {
    RawJson::new(&json!({"action": "accept", "content": {"name": name}})).unwrap()
}

/// The one message written: its `result`.
fn only_result(written: &[Value], id: i64) -> &Value {
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(written[0]["id"], id, "{written:?}");
    &written[0]["result"]
}

/// The one message written: its error code.
fn only_error(written: &[Value], id: i64) -> i64 {
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(written[0]["id"], id, "{written:?}");
    written[0]["error"]["code"].as_i64().expect("an error")
}

fn get(p: &mut Pair, id: i64, task: &str) -> Vec<Value> {
    ask(p, id, "tasks/get", json!({"taskId": task}))
}

fn later(p: &mut Pair, ms: u64) {
    p.now += Duration::from_millis(ms);
    let now = p.now;
    p.client.handle_timeout(now);
}

#[test]
fn a_task_augmented_elicitation_is_answered_at_once_with_its_task_then_surfaced() {
    let mut p = client();
    let written = ask(&mut p, 7, "elicitation/create", elicitation(60_000));
    let created = only_result(&written, 7);
    assert_eq!(
        created["task"],
        json!({"taskId": "task-1", "status": "working",
            "createdAt": "2025-11-25T10:00:00.000Z", "lastUpdatedAt": "2025-11-25T10:00:00.000Z",
            "ttl": 60_000, "pollInterval": 1000})
    );
    // The application sees the request as any other, under the server's id.
    let events = p.take_events();
    let [Event::ServerRequest(ServerRequest::Elicitation { id, params, .. })] = &events[..] else {
        panic!("{events:?}")
    };
    assert_eq!(*id, Id::Num(7));
    assert_eq!(params["message"], "Your name?");
    // A second task has its own id; a TTL past the longest granted is cut to an hour.
    let written = ask(&mut p, 8, "elicitation/create", elicitation(u64::MAX));
    let task = &only_result(&written, 8)["task"];
    assert_eq!(task["taskId"], "task-2");
    assert_eq!(task["ttl"], 3_600_000);
}

#[test]
fn the_capability_is_declared_for_the_handled_kinds_in_the_handshake_only() {
    let caps = caps_all().with_tasks();
    let config = ClientConfig {
        capabilities: caps.clone(),
        ..legacy()
    };
    let mut p = Pair::with_config(config, DemoConfig::default());
    let init = out(&mut p);
    assert_eq!(
        init[0]["params"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {
            "elicitation": {"create": {}}, "sampling": {"createMessage": {}}}})
    );
    // The stateless era has no requests from the server: no tasks capability in its `_meta`.
    let mut p = Pair::with_config(
        ClientConfig {
            capabilities: caps,
            ..ClientConfig::default()
        },
        DemoConfig::default(),
    );
    let probe = out(&mut p);
    let declared = &probe[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert!(declared["elicitation"].is_object(), "{probe:?}");
    assert!(declared.get("tasks").is_none(), "{probe:?}");
}

#[test]
fn tasks_get_tells_working_then_completed_and_the_server_is_told_of_the_change() {
    let mut p = client();
    ask(&mut p, 7, "elicitation/create", elicitation(60_000));
    p.take_events();
    let working = get(&mut p, 20, "task-1");
    assert_eq!(only_result(&working, 20)["status"], "working");
    later(&mut p, 1_500);
    let now = p.now;
    let r = p.client.respond(now, &Id::Num(7), Ok(accepted("Ada")));
    assert_eq!(r, Ok(Responded::TaskResult));
    // The answer itself is not sent: the status change is.
    let written = out(&mut p);
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(written[0]["method"], "notifications/tasks/status");
    let status = &written[0]["params"];
    assert_eq!(status["taskId"], "task-1");
    assert_eq!(status["status"], "completed");
    assert_eq!(status["lastUpdatedAt"], "2025-11-25T10:00:01.500Z");
    assert_eq!(status["createdAt"], "2025-11-25T10:00:00.000Z");
    assert!(
        status.get("_meta").is_none(),
        "no related-task on the notification"
    );
    let done = get(&mut p, 21, "task-1");
    assert_eq!(only_result(&done, 21)["status"], "completed");
    // An answer is given once.
    let again = p.client.respond(now, &Id::Num(7), Ok(accepted("Bob")));
    assert!(again.is_err(), "{again:?}");
    assert_eq!(out(&mut p), Vec::<Value>::new());
}

#[test]
fn tasks_result_waits_for_the_answer_then_gives_it_tagged_with_its_task() {
    let mut p = client();
    ask(&mut p, 7, "elicitation/create", elicitation(60_000));
    // Working: the request waits; nothing is written.
    assert_eq!(
        ask(&mut p, 30, "tasks/result", json!({"taskId": "task-1"})),
        Vec::<Value>::new()
    );
    later(&mut p, 500);
    assert_eq!(out(&mut p), Vec::<Value>::new());
    let now = p.now;
    p.client
        .respond(now, &Id::Num(7), Ok(accepted("Ada")))
        .unwrap();
    let written = out(&mut p);
    let methods: Vec<_> = written.iter().map(|m| m["method"].clone()).collect();
    assert_eq!(methods, [json!("notifications/tasks/status"), Value::Null]);
    assert_eq!(written[1]["id"], 30);
    assert_eq!(
        written[1]["result"],
        json!({"action": "accept", "content": {"name": "Ada"},
            "_meta": {RELATED: {"taskId": "task-1"}}})
    );
    // Asked again, it answers at once with the same.
    let again = ask(&mut p, 31, "tasks/result", json!({"taskId": "task-1"}));
    assert_eq!(only_result(&again, 31), &written[1]["result"]);
}

#[test]
fn a_handler_s_error_fails_the_task_and_is_what_tasks_result_returns() {
    let mut p = client();
    let sampling = json!({"messages": [{"role": "user",
        "content": {"type": "text", "text": "hi"}}], "maxTokens": 5, "task": {}});
    let written = ask(&mut p, 7, "sampling/createMessage", sampling);
    // No TTL asked for: ten minutes.
    assert_eq!(only_result(&written, 7)["task"]["ttl"], 600_000);
    let events = p.take_events();
    assert!(
        matches!(
            &events[..],
            [Event::ServerRequest(ServerRequest::Sampling { .. })]
        ),
        "{events:?}"
    );
    let now = p.now;
    let refusal = ErrorObject::new(-1, "the user rejected the sampling");
    p.client
        .respond(now, &Id::Num(7), Err(refusal.clone()))
        .unwrap();
    let written = out(&mut p);
    assert_eq!(written[0]["params"]["status"], "failed");
    assert_eq!(
        written[0]["params"]["statusMessage"],
        "the user rejected the sampling"
    );
    let result = ask(&mut p, 8, "tasks/result", json!({"taskId": "task-1"}));
    assert_eq!(only_error(&result, 8), -1);
    assert_eq!(
        result[0]["error"]["message"],
        "the user rejected the sampling"
    );
    let failed = get(&mut p, 9, "task-1");
    assert_eq!(only_result(&failed, 9)["status"], "failed");
}

#[test]
fn tasks_list_pages_every_task_oldest_first_and_refuses_a_bad_cursor() {
    let mut p = client();
    for id in 100..140 {
        ask(&mut p, id, "elicitation/create", elicitation(60_000));
    }
    let first = ask(&mut p, 1, "tasks/list", json!({}));
    let page = only_result(&first, 1);
    let ids: Vec<_> = page["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 32);
    assert_eq!(ids[0], "task-1");
    assert_eq!(ids[31], "task-32");
    let cursor = page["nextCursor"].as_str().expect("more").to_owned();
    let second = ask(&mut p, 2, "tasks/list", json!({"cursor": cursor}));
    let page = only_result(&second, 2);
    assert_eq!(page["tasks"].as_array().unwrap().len(), 8);
    assert_eq!(page["tasks"][0]["taskId"], "task-33");
    assert!(page.get("nextCursor").is_none(), "{page}");
    for bad in [json!("x"), json!("999"), json!("01"), json!(5)] {
        let refused = ask(&mut p, 3, "tasks/list", json!({"cursor": bad}));
        assert_eq!(only_error(&refused, 3), -32602, "{bad}");
    }
    // No params at all: the first page.
    p.feed(&Message::request(4, "tasks/list", None));
    assert_eq!(only_result(&out(&mut p), 4)["tasks"][0]["taskId"], "task-1");
}

#[test]
fn tasks_cancel_ends_the_task_once_and_the_handler_s_late_answer_is_dropped() {
    let mut p = client();
    ask(&mut p, 7, "elicitation/create", elicitation(60_000));
    p.take_events();
    assert_eq!(
        ask(&mut p, 8, "tasks/result", json!({"taskId": "task-1"})),
        Vec::<Value>::new()
    );
    let written = ask(&mut p, 9, "tasks/cancel", json!({"taskId": "task-1"}));
    // The status changes before the answer; the waiting `tasks/result` has no result to give.
    assert_eq!(written.len(), 3, "{written:?}");
    assert_eq!(written[0]["method"], "notifications/tasks/status");
    assert_eq!(written[0]["params"]["status"], "cancelled");
    assert_eq!(written[1]["id"], 8);
    assert!(written[1]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("cancelled"));
    assert_eq!(written[2]["id"], 9);
    assert_eq!(written[2]["result"]["status"], "cancelled");
    assert_eq!(written[2]["result"]["taskId"], "task-1");
    // The application is told its answer is no longer wanted.
    let events = p.take_events();
    let [Event::ServerRequestCancelled { id, reason }] = &events[..] else {
        panic!("{events:?}")
    };
    assert_eq!(*id, Id::Num(7));
    assert!(reason.as_deref().unwrap().contains("task-1"));
    // Its late answer is accepted and dropped: nothing is written, the task stays cancelled.
    let now = p.now;
    let late = p.client.respond(now, &Id::Num(7), Ok(accepted("Ada")));
    assert_eq!(late, Ok(Responded::SuppressedAfterCancel));
    assert_eq!(out(&mut p), Vec::<Value>::new());
    assert_eq!(
        only_result(&get(&mut p, 10, "task-1"), 10)["status"],
        "cancelled"
    );
    // A task that has ended cannot be cancelled.
    let again = ask(&mut p, 11, "tasks/cancel", json!({"taskId": "task-1"}));
    assert_eq!(only_error(&again, 11), -32602);
    assert!(again[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("terminal"));
}

#[test]
fn an_unknown_task_id_is_invalid_params() {
    let mut p = client();
    ask(&mut p, 7, "elicitation/create", elicitation(60_000));
    let mut id = 20;
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        for params in [
            json!({"taskId": "task-2"}),
            json!({"taskId": "task-01"}),
            json!({"taskId": "nope"}),
            json!({"taskId": 1}),
            json!({}),
        ] {
            id += 1;
            let refused = ask(&mut p, id, method, params.clone());
            assert_eq!(only_error(&refused, id), -32602, "{method} {params}");
        }
    }
    // The task itself is untouched.
    assert_eq!(
        only_result(&get(&mut p, 40, "task-1"), 40)["status"],
        "working"
    );
}

#[test]
fn past_the_cap_a_task_is_refused_and_the_application_never_sees_it() {
    let limits = Limits {
        max_served_tasks: 2,
        ..Limits::default()
    };
    let mut p = client_with(caps_all().with_tasks(), limits);
    ask(&mut p, 1, "elicitation/create", elicitation(60_000));
    ask(&mut p, 2, "elicitation/create", elicitation(60_000));
    p.take_events();
    let refused = ask(&mut p, 3, "elicitation/create", elicitation(60_000));
    assert_eq!(only_error(&refused, 3), -32603);
    assert!(refused[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("at most 2"));
    let events = p.take_events();
    let [Event::Diagnostic(Diagnostic::RefusedServerRequest { id, .. })] = &events[..] else {
        panic!("{events:?}")
    };
    assert_eq!(*id, Id::Num(3));
    // A task that ended and whose result was fetched makes room; one still working does not.
    let now = p.now;
    p.client
        .respond(now, &Id::Num(1), Ok(accepted("Ada")))
        .unwrap();
    out(&mut p);
    let refused = ask(&mut p, 4, "elicitation/create", elicitation(60_000));
    assert_eq!(only_error(&refused, 4), -32603, "not fetched yet");
    ask(&mut p, 5, "tasks/result", json!({"taskId": "task-1"}));
    let made = ask(&mut p, 6, "elicitation/create", elicitation(60_000));
    assert_eq!(only_result(&made, 6)["task"]["taskId"], "task-3");
    let gone = get(&mut p, 7, "task-1");
    assert_eq!(only_error(&gone, 7), -32602);
    // A cancelled task makes room too, once the application's answer no longer is owed.
    ask(&mut p, 8, "tasks/cancel", json!({"taskId": "task-2"}));
    let refused = ask(&mut p, 9, "elicitation/create", elicitation(60_000));
    assert_eq!(only_error(&refused, 9), -32603, "its answer still owed");
    let late = p.client.respond(now, &Id::Num(2), Ok(accepted("Bob")));
    assert_eq!(late, Ok(Responded::SuppressedAfterCancel));
    let made = ask(&mut p, 10, "elicitation/create", elicitation(60_000));
    assert_eq!(only_result(&made, 10)["task"]["taskId"], "task-4");
}

#[test]
fn a_task_past_its_ttl_is_deleted_and_its_answer_dropped() {
    let mut p = client();
    // Shorter than the shortest granted: one second.
    let written = ask(&mut p, 7, "elicitation/create", elicitation(10));
    assert_eq!(only_result(&written, 7)["task"]["ttl"], 1000);
    ask(&mut p, 8, "tasks/result", json!({"taskId": "task-1"}));
    p.take_events();
    let deadline = p.client.poll_timeout().expect("the task's end");
    assert_eq!(deadline, p.t0 + Duration::from_secs(1));
    later(&mut p, 1_000);
    assert!(p.client.poll_timeout().is_none_or(|t| t > p.now));
    let written = out(&mut p);
    assert_eq!(only_error(&written, 8), -32602);
    let events = p.take_events();
    assert!(
        matches!(
            &events[..],
            [Event::ServerRequestCancelled { id: Id::Num(7), .. }]
        ),
        "{events:?}"
    );
    assert_eq!(only_error(&get(&mut p, 9, "task-1"), 9), -32602);
    let now = p.now;
    let late = p.client.respond(now, &Id::Num(7), Ok(accepted("Ada")));
    assert_eq!(late, Ok(Responded::SuppressedAfterCancel));
    assert_eq!(out(&mut p), Vec::<Value>::new());
}

#[test]
fn the_connection_closing_with_tasks_live_ends_them_without_a_word() {
    let mut p = client();
    ask(&mut p, 7, "elicitation/create", elicitation(60_000));
    ask(&mut p, 8, "tasks/result", json!({"taskId": "task-1"}));
    p.take_events();
    let now = p.now;
    p.client.close(now);
    assert_eq!(out(&mut p), Vec::<Value>::new());
    let events = p.take_events();
    assert!(
        matches!(events.last(), Some(Event::Closed(_))),
        "{events:?}"
    );
    // The task's deadline went with it.
    assert!(p
        .client
        .poll_timeout()
        .is_none_or(|t| t < now + Duration::from_secs(60)));
    let late = p.client.respond(now, &Id::Num(7), Ok(accepted("Ada")));
    assert!(matches!(late, Err(ClientError::Closed(_))), "{late:?}");
    assert_eq!(out(&mut p), Vec::<Value>::new());
}

#[test]
fn without_the_tasks_capability_a_task_augmented_request_runs_plainly() {
    let mut p = client_with(caps_all(), Limits::default());
    assert_eq!(
        ask(&mut p, 7, "elicitation/create", elicitation(60_000)),
        Vec::<Value>::new()
    );
    let events = p.take_events();
    assert!(
        matches!(&events[..], [Event::ServerRequest(_)]),
        "{events:?}"
    );
    let now = p.now;
    let r = p.client.respond(now, &Id::Num(7), Ok(accepted("Ada")));
    assert_eq!(r, Ok(Responded::Sent));
    assert_eq!(only_result(&out(&mut p), 7)["action"], "accept");
    assert_eq!(only_error(&get(&mut p, 8, "task-1"), 8), -32601);
}

#[test]
fn an_id_the_application_still_owes_for_a_task_is_refused_for_a_new_request() {
    let mut p = client();
    ask(&mut p, 7, "elicitation/create", elicitation(60_000));
    p.take_events();
    let plain = json!({"mode": "form", "message": "again?", "requestedSchema": {}});
    let refused = ask(&mut p, 7, "elicitation/create", plain.clone());
    assert_eq!(only_error(&refused, 7), -32600);
    let events = p.take_events();
    assert!(matches!(&events[..], [Event::Diagnostic(_)]), "{events:?}");
    // Once answered, the id is free again.
    let now = p.now;
    p.client
        .respond(now, &Id::Num(7), Ok(accepted("Ada")))
        .unwrap();
    out(&mut p);
    assert_eq!(
        ask(&mut p, 7, "elicitation/create", plain),
        Vec::<Value>::new()
    );
    assert!(matches!(&p.take_events()[..], [Event::ServerRequest(_)]));
}

#[test]
fn a_cancelled_tasks_result_request_is_forgotten_and_never_answered() {
    let mut p = client();
    ask(&mut p, 7, "elicitation/create", elicitation(60_000));
    ask(&mut p, 8, "tasks/result", json!({"taskId": "task-1"}));
    p.take_events();
    let cancel = RawJson::new(&json!({"requestId": 8, "reason": "gave up"})).unwrap();
    p.feed(&Message::notification(
        "notifications/cancelled",
        Some(cancel),
    ));
    // Not the application's: it never saw request 8.
    assert_eq!(p.take_events(), []);
    let now = p.now;
    p.client
        .respond(now, &Id::Num(7), Ok(accepted("Ada")))
        .unwrap();
    let written = out(&mut p);
    assert_eq!(written.len(), 1, "only the status: {written:?}");
    assert_eq!(written[0]["method"], "notifications/tasks/status");
}

/// A pair with the demo server, past its handshake and its tools listed, whose client declares
/// `caps`.
fn with_demo(caps: crate::types::ClientCapabilities) -> Pair {
    let mut p = Pair::new(caps, DemoConfig::default());
    p.client.set_wall_clock(p.now, WALL);
    p.drive();
    assert!(p.client.is_ready(), "{:?}", p.events);
    p.wire.clear();
    p.events.clear();
    p.listed()
}

/// The demo server's elicitation, once the client surfaced it.
fn demo_asked(p: &mut Pair) -> Id {
    p.run_until(|p| {
        p.events
            .iter()
            .any(|e| matches!(e, Event::ServerRequest(_)))
    });
    let asked: Vec<_> = p
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ServerRequest(ServerRequest::Elicitation { id, params, .. }) => {
                Some((id.clone(), params.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(asked.len(), 1, "{:?}", p.events);
    assert_eq!(asked[0].1["task"], json!({"ttl": 60_000}));
    asked[0].0.clone()
}

#[test]
fn the_demo_s_ask_task_follows_the_task_it_asked_for_to_the_user_s_answer() {
    let mut p = with_demo(caps_all().with_tasks());
    let now = p.now;
    let call = p
        .client
        .call(
            now,
            &McpCall::call_tool("ask-task", Some(json!({}))),
            Default::default(),
        )
        .unwrap();
    let asked = demo_asked(&mut p);
    // The client answered with the task at once; the server looked at it and now waits for its
    // result.
    assert_eq!(
        p.wire,
        [
            "C→S tools/call #2",
            "S→C elicitation/create #0",
            "C→S result #0",
            "S→C tasks/get #1",
            "C→S result #1",
            "S→C tasks/result #2",
        ]
    );
    p.wire.clear();
    p.now += Duration::from_secs(3);
    let now = p.now;
    let r = p.client.respond(now, &asked, Ok(accepted("Ada")));
    assert_eq!(r, Ok(Responded::TaskResult));
    let result = p.finish(call).expect("the tool's result");
    assert_eq!(
        text_of(&result),
        "hello, Ada (asked through task task-1, working when looked at)"
    );
    assert_eq!(
        p.wire,
        [
            "C→S notifications/tasks/status",
            "C→S result #2",
            "S→C result #2"
        ]
    );
}

#[test]
fn cancelling_the_demo_s_ask_task_cancels_the_task_and_the_late_answer_is_dropped() {
    let mut p = with_demo(caps_all().with_tasks());
    let now = p.now;
    let call = p
        .client
        .call(
            now,
            &McpCall::call_tool("ask-task", Some(json!({}))),
            Default::default(),
        )
        .unwrap();
    let asked = demo_asked(&mut p);
    p.wire.clear();
    let now = p.now;
    p.client
        .cancel(now, call, Some("changed my mind".into()))
        .unwrap();
    p.drive();
    assert_eq!(
        p.wire,
        [
            "C→S notifications/cancelled",
            "S→C tasks/cancel #3",
            "C→S notifications/tasks/status",
            "C→S error -32603 #2",
            "C→S result #3",
        ]
    );
    assert!(
        p.events.iter().any(|e| matches!(
            e,
            Event::ServerRequestCancelled { id, .. } if *id == asked
        )),
        "{:?}",
        p.events
    );
    p.wire.clear();
    let now = p.now;
    let late = p.client.respond(now, &asked, Ok(accepted("Ada")));
    assert_eq!(late, Ok(Responded::SuppressedAfterCancel));
    p.drive();
    assert_eq!(p.wire, Vec::<String>::new());
    assert_eq!(p.server.running_tasks(), 0);
}

#[test]
fn the_demo_s_ask_task_needs_a_client_that_runs_elicitations_as_tasks() {
    let mut p = with_demo(caps_all());
    let now = p.now;
    let call = p
        .client
        .call(
            now,
            &McpCall::call_tool("ask-task", Some(json!({}))),
            Default::default(),
        )
        .unwrap();
    let result = p.finish(call).expect("an isError result");
    assert!(text_of(&result).contains("runs elicitations as tasks"));
    assert_eq!(p.wire, ["C→S tools/call #2", "S→C result #2"]);
}
