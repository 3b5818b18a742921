//! Tasks against a third-party peer, the pinned TypeScript "everything" server, through the
//! public Client, in both directions of the 2025-11-25 tasks utility:
//! - its `simulate-research-query` (`taskSupport: required`) over stdio: called in task mode
//!   once the tools are listed, polled, its question (an elicitation sent while the client
//!   waits on `tasks/result`) answered, its result returned as the call's;
//! - its `trigger-elicitation-request-async` and `trigger-sampling-request-async`, over stdio
//!   and Streamable HTTP: the server asks the client for an elicitation or a sampling as a
//!   task, polls it with `tasks/get` and fetches it with `tasks/result`; the tools exist only
//!   for a client that declares the tasks capability, and their result tells what the
//!   handler answered (or that it failed).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire::core::jsonrpc::ErrorObject;
use mcpwire::{ConnectOptions, ElicitAction, ElicitResult, Era, Event, Handlers, ServerConfig};
use mcpwire_tests::scenario::Runtime;
use mcpwire_tests::{everything_http_mode, everything_stdio, peers_skipped};
use serde_json::json;

#[test]
fn a_research_task_runs_to_its_result_and_asks_its_question_on_the_way() {
    if peers_skipped("a_research_task_runs_to_its_result_and_asks_its_question_on_the_way") {
        return;
    }
    let asked = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = asked.clone();
    let handlers = Handlers::new().on_elicitation(move |req| {
        seen.lock().unwrap().push(req.message().to_owned());
        async move {
            Ok(ElicitResult {
                meta: None,
                action: ElicitAction::Accept,
                content: Some(
                    serde_json::from_value(json!({"interpretation": "the chosen one"})).unwrap(),
                ),
            })
        }
    });
    let options = ConnectOptions {
        era: Era::Handshake,
        ..ConnectOptions::default()
    }
    .handlers(handlers);
    smol::block_on(async {
        let client = mcpwire::connect_smol(&everything_stdio(), options)
            .await
            .expect("server-everything starts");
        let mut events = client.events();
        let tools = client.list_tools().await.unwrap();
        let research = tools
            .iter()
            .find(|t| t.name == "simulate-research-query")
            .expect("the research tool is listed");
        assert_eq!(
            research.input_schema_value()["properties"]["topic"]["type"],
            "string"
        );
        let plain = client
            .call_tool("simulate-research-query", json!({"topic": "tides"}))
            .await
            .expect("the task's result");
        assert!(plain.text().contains("tides"), "{}", plain.text());
        let ambiguous = client
            .call_tool(
                "simulate-research-query",
                json!({"topic": "python", "ambiguous": true}),
            )
            .await
            .expect("the task's result");
        assert!(
            ambiguous.text().contains("the chosen one"),
            "{}",
            ambiguous.text()
        );
        assert_eq!(asked.lock().unwrap().len(), 1, "asked once");
        client.close().await;
        let mut statuses = Vec::new();
        while let Some(e) = events.next().await {
            if let Event::TaskStatus { status, .. } = e {
                statuses.push(status.status);
            }
        }
        assert!(statuses.iter().any(|s| s == "working"), "{statuses:?}");
        assert!(
            statuses.iter().any(|s| s == "input_required"),
            "{statuses:?}"
        );
    });
}

/// Handlers that answer the async tools' requests: the user fills the form; the model answers,
/// unless the prompt asks it to fail.
fn async_handlers(asked: Arc<Mutex<Vec<String>>>) -> Handlers {
    let seen = asked.clone();
    Handlers::new()
        .on_elicitation(move |req| {
            seen.lock()
                .unwrap()
                .push(format!("elicitation: {}", req.message()));
            async move {
                Ok(ElicitResult {
                    meta: None,
                    action: ElicitAction::Accept,
                    content: Some(
                        serde_json::from_value(
                            json!({"name": "Ada", "favoriteColor": "Purple", "agreeToTerms": true}),
                        )
                        .unwrap(),
                    ),
                })
            }
        })
        .on_sampling_json(move |params| {
            asked.lock().unwrap().push(format!("sampling: {params}"));
            async move {
                let prompt = params["messages"][0]["content"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                if prompt.contains("please fail") {
                    return Err(ErrorObject::new(-1, "the user rejected the sampling"));
                }
                Ok(json!({"role": "assistant",
                    "content": {"type": "text", "text": "the tide turns twice a day"},
                    "model": "fake-model", "stopReason": "endTurn"}))
            }
        })
}

/// The async tools of server-everything on `server`: each request runs as a task here, and the
/// tool's result tells what the handler answered.
async fn server_runs_its_requests_as_tasks_here(rt: Runtime, server: &ServerConfig) {
    let asked = Arc::new(Mutex::new(Vec::<String>::new()));
    let options = ConnectOptions {
        era: Era::Handshake,
        ..ConnectOptions::default()
    }
    .handlers(async_handlers(asked.clone()));
    let client = rt
        .connect(server, options)
        .await
        .unwrap_or_else(|e| panic!("server-everything starts (on {rt}): {e}"));
    // The server offers these tools only to a client that declared tasks for the requests.
    let tools = client.list_tools().await.unwrap();
    for async_tool in [
        "trigger-elicitation-request-async",
        "trigger-sampling-request-async",
    ] {
        assert!(
            tools.iter().any(|t| t.name == async_tool),
            "{async_tool} is not listed"
        );
    }

    let r = client
        .call_tool("trigger-elicitation-request-async", json!({}))
        .await
        .expect("the tool's result");
    let text = r.text();
    assert!(text.contains("[COMPLETED] User provided"), "{text}");
    assert!(text.contains("- Name: Ada"), "{text}");
    assert!(text.contains("- Favorite Color: Purple"), "{text}");
    assert!(text.contains("- Agreed to terms: true"), "{text}");
    // The task was made here, polled until it completed, and its result fetched: the result is
    // tagged with its task.
    assert!(text.contains("Task created: task-1"), "{text}");
    assert!(text.contains(": completed"), "{text}");
    assert!(
        text.contains("io.modelcontextprotocol/related-task"),
        "{text}"
    );

    let r = client
        .call_tool(
            "trigger-sampling-request-async",
            json!({"prompt": "tides", "maxTokens": 20}),
        )
        .await
        .expect("the tool's result");
    let text = r.text();
    assert!(
        text.contains("[COMPLETED] Async sampling completed!"),
        "{text}"
    );
    assert!(text.contains("Task created: task-2"), "{text}");
    assert!(text.contains("the tide turns twice a day"), "{text}");

    // The handler's error fails the task, and the server says so.
    let r = client
        .call_tool(
            "trigger-sampling-request-async",
            json!({"prompt": "please fail", "maxTokens": 20}),
        )
        .await
        .expect("the tool's result");
    let text = r.text();
    assert!(
        text.contains("[FAILED] the user rejected the sampling"),
        "{text}"
    );
    client.close().await;

    // The handlers ran once per request, given the request as the server sent it.
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert!(asked[0].contains("async task demo"), "{asked:?}");
    assert!(asked[1].contains("\"maxTokens\":20"), "{asked:?}");
}

#[test]
fn server_everything_s_async_requests_run_as_tasks_here_over_stdio() {
    if peers_skipped("server_everything_s_async_requests_run_as_tasks_here_over_stdio") {
        return;
    }
    // Stdio: its runtime axis is the adapter crate's (`adapters/tests/runtimes`).
    let rt = Runtime::Smol;
    rt.block_on(server_runs_its_requests_as_tasks_here(
        rt,
        &everything_stdio(),
    ));
}

#[test]
fn server_everything_s_async_requests_run_as_tasks_here_over_http() {
    if peers_skipped("server_everything_s_async_requests_run_as_tasks_here_over_http") {
        return;
    }
    for rt in Runtime::ALL {
        let (peer, url) = everything_http_mode("streamableHttp");
        rt.run(
            Duration::from_secs(60),
            server_runs_its_requests_as_tasks_here(rt, &ServerConfig::http(url)),
            || format!(" (on {rt}); server stderr:\n{}", peer.stderr().join("\n")),
        );
    }
}
