//! Tasks against a third-party peer: the pinned TypeScript "everything" server's
//! `simulate-research-query` (2025-11-25 tasks utility, `taskSupport: required`) over stdio,
//! through the public Client: called in task mode once the tools are listed, polled, its
//! question (an elicitation sent while the client waits on `tasks/result`) answered, its result
//! returned as the call's.

use std::sync::{Arc, Mutex};

use mcpwire::{ConnectOptions, ElicitAction, ElicitResult, Era, Event, Handlers};
use mcpwire_tests::{everything_stdio, peers_skipped};
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
