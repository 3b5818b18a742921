//! Tasks, in memory against the demo server: the 2026-07-28 extension (a task answered to a
//! `tools/call`, polled with `tasks/get`, its input given with `tasks/update`, cancelled with
//! `tasks/cancel`) and the 2025-11-25 utility (task mode for a tool that requires it, polled,
//! its result fetched with `tasks/result`).

use crate::connection::McpCall;
use crate::types::TASKS_EXTENSION;
use serde_json::{json, Value};

use crate::connection::protocol::vocabulary::events::Event;
use crate::connection::protocol::{
    CallError, CallOptions, ClientConfig, ServerRequest, TaskStatus,
};
use crate::jsonrpc::RawJson;
use crate::rpc::LocalError;
use crate::server::DemoConfig;

use super::modern::sent;
use crate::test_support::*;

/// A pair past its handshake (or detection) with `config`, its transcript cleared.
fn ready(config: ClientConfig) -> Pair {
    let mut p = Pair::with_config(config, DemoConfig::default());
    p.drive();
    assert!(p.client.is_ready(), "{:?}", p.events);
    p.wire.clear();
    p.events.clear();
    p.frames.clear();
    p
}

fn modern() -> Pair {
    ready(ClientConfig {
        capabilities: caps_all(),
        ..ClientConfig::default()
    })
}

fn handshake() -> Pair {
    ready(ClientConfig {
        capabilities: caps_all(),
        ..legacy()
    })
}

fn methods(p: &Pair) -> Vec<String> {
    sent(p)
        .iter()
        .filter_map(|m| m["method"].as_str().map(str::to_owned))
        .collect()
}

fn statuses(p: &Pair) -> Vec<TaskStatus> {
    p.events
        .iter()
        .filter_map(|e| match e {
            Event::TaskStatus { status, .. } => Some(status.clone()),
            _ => None,
        })
        .collect()
}

/// Runs the pair until the client surfaces a server request (an input the task asks for).
fn until_asked(p: &mut Pair) {
    p.run_until(|p| {
        p.events
            .iter()
            .any(|e| matches!(e, Event::ServerRequest(_)))
    });
}

fn call(
    p: &mut Pair,
    tool: &str,
    args: Value,
    opts: CallOptions,
) -> crate::connection::protocol::CallId {
    let now = p.now;
    p.client
        .call(now, &McpCall::call_tool(tool, Some(args)), opts)
        .unwrap()
}

#[test]
fn a_task_answer_is_polled_to_its_result_and_the_call_ends_once() {
    let mut p = modern();
    let c = call(&mut p, "build", json!({"ms": 300}), CallOptions::default());
    let result = p.finish(c).expect("the task's result");
    assert_eq!(text_of(&result), "build: done after 300 ms");
    let all = methods(&p);
    assert_eq!(all[0], "tools/call");
    assert!(all[1..].iter().all(|m| m == "tasks/get"), "{all:?}");
    // Polled at the interval the server suggests (50 ms) over 300 ms: a handful of times.
    assert!((5..=8).contains(&(all.len() - 1)), "{all:?}");
    for m in &sent(&p)[1..] {
        assert_eq!(m["params"]["taskId"], "task-1");
    }
    // The extension is declared in every request.
    let caps = &sent(&p)[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert_eq!(caps["extensions"][TASKS_EXTENSION], json!({}));
    // The caller was told the task began and how it ended.
    let told = statuses(&p);
    assert_eq!(told.first().map(|s| s.status.as_str()), Some("working"));
    assert_eq!(told[0].task_id, "task-1");
}

#[test]
fn a_task_asking_for_input_surfaces_it_once_and_answers_with_tasks_update() {
    let mut p = modern();
    let c = call(
        &mut p,
        "approve",
        json!({"ms": 200}),
        CallOptions::default(),
    );
    until_asked(&mut p);
    let asks: Vec<_> = p
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ServerRequest(ServerRequest::Elicitation { id, params, .. }) => {
                Some((id.clone(), params.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].1["message"], "Approve the change?");
    let answer = json!({"action": "accept", "content": {"approve": true}});
    let now = p.now;
    p.client
        .respond(now, &asks[0].0, Ok(RawJson::new(&answer).unwrap()))
        .unwrap();
    let result = p.finish(c).expect("approved");
    assert_eq!(text_of(&result), "approve: done after 200 ms");
    let update: Vec<Value> = sent(&p)
        .into_iter()
        .filter(|m| m["method"] == "tasks/update")
        .collect();
    assert_eq!(update.len(), 1);
    assert_eq!(update[0]["params"]["taskId"], "task-1");
    assert_eq!(update[0]["params"]["inputResponses"]["approval"], answer);
    // Each key once over the task's life, however many polls saw it.
    let asked = p
        .events
        .iter()
        .filter(|e| matches!(e, Event::ServerRequest(_)))
        .count();
    assert_eq!(asked, 1);
    assert!(statuses(&p).iter().any(|s| s.status == "input_required"));
    // Each change is counted, and told as a progress step in words.
    let told = statuses(&p);
    let changes: Vec<u32> = told.iter().map(|s| s.changes).collect();
    assert_eq!(changes, (1..=told.len() as u32).collect::<Vec<_>>());
    let step = told[1].as_progress();
    assert_eq!(step.progress, 2.0);
    assert_eq!(
        step.message.as_deref(),
        Some("task task-1: input_required (approve (200 ms))")
    );
}

#[test]
fn a_task_asking_for_input_the_client_did_not_declare_is_cancelled_and_its_call_ends() {
    // No elicitation declared: `approve`'s question is one this client refuses.
    let mut p = ready(ClientConfig {
        capabilities: crate::types::ClientCapabilities {
            sampling: Some(json!({})),
            ..Default::default()
        },
        ..ClientConfig::default()
    });
    let c = call(
        &mut p,
        "approve",
        json!({"ms": 200}),
        CallOptions::default(),
    );
    let outcome = p.finish(c);
    let Err(CallError::InvalidResult(why)) = &outcome else {
        panic!("{outcome:?}")
    };
    assert!(why.contains("did not declare"), "{why}");
    assert!(!p
        .events
        .iter()
        .any(|e| matches!(e, Event::ServerRequest(_))));
    // The task is not left waiting for an answer that will never come.
    p.drive();
    let cancels: Vec<Value> = sent(&p)
        .into_iter()
        .filter(|m| m["method"] == "tasks/cancel")
        .collect();
    assert_eq!(cancels.len(), 1, "{:?}", methods(&p));
    assert_eq!(cancels[0]["params"]["taskId"], "task-1");
}

#[test]
fn a_failed_task_ends_with_its_error_and_a_cancelled_call_cancels_its_task() {
    let mut p = modern();
    let c = call(&mut p, "doomed", json!({"ms": 100}), CallOptions::default());
    match p.finish(c) {
        Err(CallError::Server(e)) => assert!(e.message.contains("failed"), "{e:?}"),
        other => panic!("{other:?}"),
    }

    let c = call(&mut p, "build", json!({"ms": 5000}), CallOptions::default());
    p.run_until(|p| methods(p).iter().filter(|m| *m == "tasks/get").count() >= 2);
    let now = p.now;
    p.client.cancel(now, c, Some("enough".into())).unwrap();
    p.drive();
    assert!(matches!(
        p.done(c),
        Some(Err(CallError::Local(LocalError::Cancelled { .. })))
    ));
    let all = methods(&p);
    assert_eq!(all.last().map(String::as_str), Some("tasks/cancel"));
    assert!(
        !all.iter().any(|m| m == "notifications/cancelled"),
        "{all:?}"
    );
    // No poll after the cancel.
    let polls = all.iter().filter(|m| *m == "tasks/get").count();
    p.now += std::time::Duration::from_secs(1);
    let now = p.now;
    p.client.handle_timeout(now);
    p.drive();
    assert_eq!(
        methods(&p).iter().filter(|m| *m == "tasks/get").count(),
        polls
    );
}

#[test]
fn a_task_past_the_call_s_overall_limit_ends_typed_and_is_cancelled() {
    let mut p = modern();
    let opts = CallOptions {
        max_total: Some(std::time::Duration::from_millis(400)),
        ..CallOptions::default()
    };
    let c = call(&mut p, "build", json!({"ms": 5000}), opts);
    match p.finish(c) {
        Err(CallError::Task {
            task_id, reason, ..
        }) => {
            assert_eq!(task_id, "task-1");
            assert!(reason.contains("time limit"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(methods(&p).last().map(String::as_str), Some("tasks/cancel"));
    assert!(p.ms() < 1000, "ended at {} ms", p.ms());
}

#[test]
fn a_tool_that_requires_a_task_goes_in_task_mode_once_listed_and_its_result_is_fetched() {
    let mut p = handshake();
    let now = p.now;
    let listed = p
        .client
        .call(now, &McpCall::list_tools(), CallOptions::default())
        .unwrap();
    p.finish(listed).unwrap();
    p.frames.clear();
    let c = call(&mut p, "build", json!({"ms": 200}), CallOptions::default());
    let result = p.finish(c).expect("the task's result");
    assert_eq!(text_of(&result), "build: done after 200 ms");
    let msgs = sent(&p);
    assert_eq!(msgs[0]["method"], "tools/call");
    assert_eq!(msgs[0]["params"]["task"], json!({}));
    let all = methods(&p);
    assert!(all.iter().any(|m| m == "tasks/get"), "{all:?}");
    assert_eq!(all.last().map(String::as_str), Some("tasks/result"));
    // A tool that takes a task or not is called plainly.
    let c = call(&mut p, "crawl", json!({}), CallOptions::default());
    let result = p.finish(c).unwrap();
    assert_eq!(text_of(&result), "crawl: done at once (no task)");
}

#[test]
fn a_handshake_era_task_asks_for_input_while_its_result_is_awaited() {
    let mut p = handshake();
    let now = p.now;
    let listed = p
        .client
        .call(now, &McpCall::list_tools(), CallOptions::default())
        .unwrap();
    p.finish(listed).unwrap();
    let c = call(
        &mut p,
        "approve",
        json!({"ms": 200}),
        CallOptions::default(),
    );
    until_asked(&mut p);
    let id = p
        .events
        .iter()
        .find_map(|e| match e {
            Event::ServerRequest(r) => Some(r.id().clone()),
            _ => None,
        })
        .unwrap();
    let answer = json!({"action": "accept", "content": {"approve": false}});
    let now = p.now;
    p.client
        .respond(now, &id, Ok(RawJson::new(&answer).unwrap()))
        .unwrap();
    match p.finish(c) {
        Err(CallError::Server(e)) => assert!(e.message.contains("not approved"), "{e:?}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_tool_call_made_by_hand_goes_the_typed_way_into_task_mode() {
    // `McpCall::request("tools/call", …)` is the same call as `McpCall::call_tool`: with no
    // tools' list yet, the connection lists the tools, then calls the tool that requires task
    // mode in task mode (a request sent as it was built would be refused by this server).
    let mut p = handshake();
    let now = p.now;
    let params = serde_json::Map::from_iter([("name".to_owned(), json!("build"))]);
    let c = p.client.call(
        now,
        &McpCall::request("tools/call", Some(params)),
        CallOptions::default(),
    );
    let result = p.finish(c.unwrap()).expect("the task's result");
    assert_eq!(text_of(&result), "build: done after 300 ms");
    assert_eq!(methods(&p)[..2], ["tools/list", "tools/call"]);
}

#[test]
fn a_tool_call_waits_for_the_tools_list_only_where_it_decides_task_mode() {
    // Handshake era, a server that runs tool calls as tasks, no list yet: the connection lists
    // the tools first, then calls the tool that requires task mode in task mode.
    let mut p = handshake();
    let c = call(&mut p, "build", json!({}), CallOptions::default());
    let result = p.finish(c).expect("the task's result");
    assert_eq!(text_of(&result), "build: done after 300 ms");
    let order = methods(&p);
    assert_eq!(order[..2], ["tools/list", "tools/call"], "{order:?}");
    let request = sent(&p)
        .into_iter()
        .find(|m| m["method"] == "tools/call")
        .unwrap();
    assert_eq!(request["params"]["task"], json!({}), "called in task mode");
    // The connection's own list reaches no caller.
    assert!(!p
        .events
        .iter()
        .any(|e| matches!(e, Event::CallDone { call, .. } if *call != c)));

    // Listed once: the next call goes at once.
    p.frames.clear();
    let c = call(&mut p, "build", json!({}), CallOptions::default());
    p.finish(c).unwrap();
    assert_eq!(methods(&p)[0], "tools/call");

    // The stateless era never waits for it.
    let mut m = modern();
    let c = call(
        &mut m,
        "echo",
        json!({"message": "x"}),
        CallOptions::default(),
    );
    m.finish(c).unwrap();
    assert_eq!(methods(&m)[0], "tools/call");
}

#[test]
fn a_pushed_status_ends_the_call_without_waiting_for_the_next_poll() {
    use crate::jsonrpc::{Message, Notification};
    let mut p = modern();
    let c = call(
        &mut p,
        "build",
        json!({"ms": 60_000}),
        CallOptions::default(),
    );
    p.drive();
    assert!(p.done(c).is_none());
    let pushed = json!({"taskId": "task-1", "status": "completed",
        "createdAt": "x", "lastUpdatedAt": "y", "ttlMs": null,
        "result": {"content": [{"type": "text", "text": "pushed"}]}});
    p.feed(&Message::Notification(Notification {
        method: "notifications/tasks".into(),
        params: Some(RawJson::new(&pushed).unwrap()),
    }));
    p.drive();
    assert_eq!(text_of(&p.done(c).unwrap().clone().unwrap()), "pushed");
    // A push for a task no call follows changes nothing.
    p.feed(&Message::Notification(Notification {
        method: "notifications/tasks".into(),
        params: Some(RawJson::new(&json!({"taskId": "nobody", "status": "working"})).unwrap()),
    }));
    p.drive();

    // 2025-11-25: a pushed terminal status fetches the result at once.
    let mut p = handshake();
    let now = p.now;
    let listed = p
        .client
        .call(now, &McpCall::list_tools(), CallOptions::default())
        .unwrap();
    p.finish(listed).unwrap();
    p.frames.clear();
    let c = call(
        &mut p,
        "build",
        json!({"ms": 60_000}),
        CallOptions::default(),
    );
    p.drive();
    let status = json!({"taskId": "task-1", "status": "completed", "createdAt": "x",
        "lastUpdatedAt": "y", "ttl": 60000});
    p.feed(&Message::Notification(Notification {
        method: "notifications/tasks/status".into(),
        params: Some(RawJson::new(&status).unwrap()),
    }));
    p.drive();
    assert_eq!(methods(&p).last().map(String::as_str), Some("tasks/result"));
    assert!(p.done(c).is_none(), "the result is the server's to give");
}

#[test]
fn a_task_is_read_from_a_result_in_either_shape() {
    let read = |text: &str| {
        crate::connection::protocol::task_of(&RawJson::from_string(text.into()).unwrap())
    };
    let modern = read(r#"{"resultType":"task","taskId":"a","status":"working"}"#).unwrap();
    assert_eq!(modern["taskId"], "a");
    let legacy = read(r#"{"task":{"taskId":"b","status":"working"}}"#).unwrap();
    assert_eq!(legacy["taskId"], "b");
    assert_eq!(read(r#"{"content":[{"type":"text","text":"task"}]}"#), None);
}
