//! Tasks through the public API against the built-in demo server over stdio, in both eras: a
//! call answered with a task returns the task's result as any call does, its status changes
//! are events, its input is asked through the elicitation handler, a failed task is the
//! server's error, and a call past its limit ends typed with the task cancelled; on every
//! runtime (see `runtimes`).

mod common;

use std::time::Duration;

use mcpwire::core::CallError;
use mcpwire::{
    CallOptions, ConnectOptions, ElicitAction, ElicitResult, Era, Error, Event, Handlers,
};
use serde_json::json;

#[macro_use]
mod runtimes;
use common::demo;
use runtimes::Rt;

/// Approves every elicitation (the `approve` tool's question) with `approve`.
fn options(era: Era, approve: bool) -> ConnectOptions {
    ConnectOptions {
        era,
        ..ConnectOptions::default()
    }
    .handlers(Handlers::new().on_elicitation(move |_req| async move {
        Ok(ElicitResult {
            meta: None,
            action: ElicitAction::Accept,
            content: Some(json!({"approve": approve}).as_object().unwrap().clone()),
        })
    }))
}

fn task_tools_end_like_any_call_in_both_eras(rt: &Rt) {
    rt.block_on(async {
        for era in [Era::Stateless, Era::Handshake] {
            let client = rt.connect(&demo(), options(era, true)).await.unwrap();
            let mut events = client.events();
            // In the handshake era the client lists the tools first on its own: the server
            // marks there which tools need task mode.
            let r = client.call_tool("build", json!({"ms": 100})).await.unwrap();
            assert_eq!(r.text(), "build: done after 100 ms", "{era:?}");
            let r = client
                .call_tool("approve", json!({"ms": 100}))
                .await
                .unwrap();
            assert_eq!(r.text(), "approve: done after 100 ms", "{era:?}");
            match client.call_tool("doomed", json!({"ms": 50})).await {
                Err(Error::Call(CallError::Server(e))) => {
                    assert!(e.message.contains("failed"), "{era:?}: {e:?}")
                }
                other => panic!("{era:?}: {other:?}"),
            }
            let r = client.call_tool("crawl", json!({"ms": 50})).await.unwrap();
            assert!(r.text().starts_with("crawl: done"), "{era:?}: {}", r.text());
            client.close().await;
            // The host saw each task's status.
            let mut told = Vec::new();
            while let Some(e) = events.next().await {
                if let Event::TaskStatus { status, .. } = e {
                    told.push(status.status);
                }
            }
            assert!(told.iter().any(|s| s == "working"), "{era:?}: {told:?}");
        }
    });
}

fn a_task_past_its_call_s_limit_ends_typed_in_both_eras(rt: &Rt) {
    rt.block_on(async {
        for era in [Era::Stateless, Era::Handshake] {
            let client = rt.connect(&demo(), options(era, true)).await.unwrap();
            if era == Era::Handshake {
                client.list_tools().await.unwrap();
            }
            let opts = CallOptions::default().max_total(Duration::from_millis(300));
            match client
                .call_tool_with("build", json!({"ms": 10_000}), opts)
                .await
            {
                Err(Error::Call(CallError::Task { reason, .. })) => {
                    assert!(reason.contains("time limit"), "{era:?}: {reason}")
                }
                other => panic!("{era:?}: {other:?}"),
            }
            // The connection goes on.
            let r = client
                .call_tool("echo", json!({"message": "hi"}))
                .await
                .unwrap();
            assert_eq!(r.text(), "hi");
            client.close().await;
        }
    });
}

fn a_host_can_follow_a_task_itself_in_both_eras(rt: &Rt) {
    use mcpwire::TaskStart;
    rt.block_on(async {
        for era in [Era::Stateless, Era::Handshake] {
            let client = rt.connect(&demo(), options(era, true)).await.unwrap();
            let TaskStart::Task(mut build) = client
                .start_tool_task("build", json!({"ms": 150}))
                .await
                .unwrap()
            else {
                panic!("{era:?}: no task")
            };
            assert_eq!(build.status(), "working", "{era:?}");
            assert!(build.task_id().starts_with("task-"));
            let r = build.result().await.unwrap();
            assert_eq!(r.text(), "build: done after 150 ms", "{era:?}");

            let TaskStart::Task(mut long) = client
                .start_tool_task("build", json!({"ms": 10_000}))
                .await
                .unwrap()
            else {
                panic!("{era:?}: no task")
            };
            long.cancel().await.unwrap();
            long.refresh().await.unwrap();
            assert_eq!(long.status(), "cancelled", "{era:?}");
            client.close().await;
        }
        // The 2026-07-28 shape: the host answers the task's question itself.
        let client = rt
            .connect(&demo(), options(Era::Stateless, true))
            .await
            .unwrap();
        let TaskStart::Task(mut approve) = client
            .start_tool_task("approve", json!({"ms": 100}))
            .await
            .unwrap()
        else {
            panic!("no task")
        };
        while approve.status() != "input_required" {
            rt.sleep(Duration::from_millis(20)).await;
            approve.refresh().await.unwrap();
        }
        assert!(approve.last()["inputRequests"]["approval"].is_object());
        let answer = json!({"approval": {"action": "accept", "content": {"approve": true}}});
        approve
            .answer(answer.as_object().unwrap().clone())
            .await
            .unwrap();
        let r = approve.result().await.unwrap();
        assert_eq!(r.text(), "approve: done after 100 ms");
        client.close().await;
    });
}

fn a_task_s_status_reaches_the_call_s_progress_callback(rt: &Rt) {
    use std::sync::{Arc, Mutex};
    rt.block_on(async {
        for era in [Era::Stateless, Era::Handshake] {
            let client = rt.connect(&demo(), options(era, true)).await.unwrap();
            let seen = Arc::new(Mutex::new(Vec::new()));
            let tap = seen.clone();
            let opts = CallOptions::default().on_progress(move |p| {
                tap.lock()
                    .unwrap()
                    .push((p.progress, p.message.unwrap_or_default()))
            });
            let r = client
                .call_tool_with("build", json!({"ms": 100}), opts)
                .await
                .unwrap();
            assert_eq!(r.text(), "build: done after 100 ms");
            let seen = seen.lock().unwrap().clone();
            assert!(seen.len() >= 2, "{era:?}: {seen:?}");
            assert!(seen[0].1.starts_with("task task-1: working"), "{seen:?}");
            assert!(seen.last().unwrap().1.contains("completed"), "{seen:?}");
            assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{seen:?}");
            client.close().await;
        }
    });
}

fn a_question_the_server_asks_as_a_task_runs_the_handler_and_its_answer_is_the_result(rt: &Rt) {
    use std::sync::{Arc, Mutex};
    let kind = rt.kind();
    rt.block_on(async {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = asked.clone();
        let handlers = Handlers::new().on_elicitation(move |req| {
            seen.lock().unwrap().push(req.params.clone());
            async move {
                // The user takes a while: the server finds the task working.
                kind.sleep_here(Duration::from_millis(50)).await;
                Ok(ElicitResult {
                    meta: None,
                    action: ElicitAction::Accept,
                    content: Some(json!({"name": "Ada"}).as_object().unwrap().clone()),
                })
            }
        });
        let options = ConnectOptions {
            era: Era::Handshake,
            ..ConnectOptions::default()
        }
        .handlers(handlers);
        let client = rt.connect(&demo(), options).await.unwrap();
        let r = client
            .call_tool("ask-task", json!({"question": "Who are you?"}))
            .await
            .unwrap();
        assert_eq!(
            r.text(),
            "hello, Ada (asked through task task-1, working when looked at)"
        );
        let asked = asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0]["message"], "Who are you?");
        assert_eq!(asked[0]["task"], json!({"ttl": 60_000}));
        client.close().await;
    });
}

on_every_runtime!(
    task_tools_end_like_any_call_in_both_eras,
    a_task_past_its_call_s_limit_ends_typed_in_both_eras,
    a_host_can_follow_a_task_itself_in_both_eras,
    a_task_s_status_reaches_the_call_s_progress_callback,
    a_question_the_server_asks_as_a_task_runs_the_handler_and_its_answer_is_the_result,
);
