//! A host's own test, as a host would write it with the test kit (`mcpwire::testing`): the
//! host's code (a small agent step that routes a model's tool request to a server and asks the
//! user when the server wants to know) against a scripted server, on tokio with its clock paused
//! and on smol.

use std::time::Duration;

use mcpwire::core::{CallError, LocalError};
use mcpwire::testing::{ScriptedServer, ServerEra, ToolResult, Way};
use mcpwire::{CallOptions, Client, ConnectOptions, ElicitAnswer, Error, Handlers};
use serde_json::{json, Value};

/// The host's code under test: runs the tool the model asked for, with a deadline, and gives
/// the model the text to read: the tool's words, or what went wrong.
async fn agent_step(client: &Client, tool: &str, arguments: Value) -> String {
    let opts = CallOptions::default().timeout(Duration::from_secs(20));
    match client.call_tool_with(tool, arguments, opts).await {
        Ok(result) if result.is_error => format!("the tool failed: {}", result.text()),
        Ok(result) => result.text(),
        Err(Error::Call(CallError::Local(LocalError::Timeout { .. }))) => {
            "the tool took too long".into()
        }
        Err(e) => format!("no answer: {e}"),
    }
}

/// The host's handlers: the user (here, a stand-in) always agrees.
fn host_options() -> ConnectOptions {
    let handlers = Handlers::new()
        .on_elicitation(|_| async { Ok(ElicitAnswer::accept(json!({"confirm": true}))) });
    ConnectOptions::default().handlers(handlers)
}

/// The scripted server: `deploy` asks before it acts, `flaky` fails as a tool, `stuck` takes
/// a minute.
fn server(era: ServerEra) -> ScriptedServer {
    ScriptedServer::new()
        .era(era)
        .tool("deploy", json!({"type": "object"}), |call| async move {
            let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}});
            let answer = call.elicit("Deploy to production?", schema).await?;
            match answer["content"]["confirm"].as_bool() {
                Some(true) => Ok(ToolResult::text("deployed")),
                _ => Ok(ToolResult::text("not deployed")),
            }
        })
        .tool("flaky", json!({"type": "object"}), |_| async {
            Ok(ToolResult::error("upstream 503"))
        })
        .tool("stuck", json!({"type": "object"}), |call| async move {
            call.sleep(Duration::from_secs(60)).await;
            Ok(ToolResult::text("too late"))
        })
}

#[tokio::test(start_paused = true)]
async fn the_agent_step_on_tokio_with_its_clock_paused() {
    for era in [ServerEra::Handshake, ServerEra::Stateless] {
        let (client, server) = server(era).connect_tokio(host_options()).await.unwrap();
        assert_eq!(agent_step(&client, "deploy", json!({})).await, "deployed");
        assert_eq!(
            agent_step(&client, "flaky", json!({})).await,
            "the tool failed: upstream 503"
        );
        // A minute on the paused clock: the host's 20 s deadline fires first, at once.
        let slow = agent_step(&client, "stuck", json!({})).await;
        assert_eq!(slow, "the tool took too long", "{}", server.transcript());
        // The calls went out in the host's order.
        let wire = server.transcript();
        let called: Vec<&Value> = wire
            .named("tools/call")
            .map(|m| &m.params().unwrap()["name"])
            .collect();
        let expected = match era {
            ServerEra::Handshake => vec!["deploy", "flaky", "stuck"],
            // The stateless era asks in a round: `deploy` is tried again with the answer.
            ServerEra::Stateless => vec!["deploy", "deploy", "flaky", "stuck"],
        };
        assert_eq!(called, expected, "{wire}");
        // The host's timeout told the server to stop (it may arrive after the call returned).
        let cancel = server
            .wait_for(Way::ToServer, "notifications/cancelled")
            .await;
        let stuck = wire.named("tools/call").last().unwrap().id().unwrap();
        assert_eq!(&cancel.params().unwrap()["requestId"], stuck, "{wire}");
        client.close().await;
    }
}

#[test]
fn the_agent_step_on_smol() {
    smol::block_on(async {
        let (client, server) = server(ServerEra::Stateless)
            .connect_smol(host_options())
            .await
            .unwrap();
        assert_eq!(agent_step(&client, "deploy", json!({})).await, "deployed");
        let wire = server.transcript();
        // The stateless era asks in a round: the call, answered `input_required`, then tried
        // again with the user's answer.
        let calls: Vec<_> = wire.named("tools/call").collect();
        assert_eq!(calls.len(), 2, "{wire}");
        let answered = &calls[1].params().unwrap()["inputResponses"]["input"];
        assert_eq!(answered["content"]["confirm"], true, "{wire}");
        client.close().await;
    });
}
