//! A host's handlers for the server's own requests: a typed elicitation answer (a form filled
//! with the host's own type), sampling answered by the host's "model", and the host's roots.
//!
//! ```sh
//! cargo run -p mcpwire --features demo --example handlers
//! ```
//!
//! The server is the demo server in this process (feature `demo`), over in-process pipes, with
//! its `sample` and `roots` tools on: the same as any stdio server, with no process to start.

use mcpwire::core::server::DemoConfig;
use mcpwire::core::types::{CreateMessageParams, CreateMessageResult};
use mcpwire::{connect_streams, ConnectOptions, ElicitAnswer, Handlers, Root};
use serde_json::json;

/// What the host answers the demo's `ask` form with: any `Serialize` type.
#[derive(serde::Serialize)]
struct Contact {
    name: String,
}

fn main() -> Result<(), mcpwire::Error> {
    let handlers = Handlers::new()
        .on_elicitation(|request| async move {
            // A real host shows the form to the user.
            println!("the server asks: {}", request.message());
            Ok(ElicitAnswer::accept(Contact { name: "Ada".into() }))
        })
        .on_sampling(|request: CreateMessageParams| async move {
            // A real host asks its model.
            let asked = request
                .messages
                .last()
                .map(|m| m.text_content())
                .unwrap_or_default();
            Ok(CreateMessageResult::text(
                "echo-model",
                &format!("you said: {asked}"),
            ))
        })
        .on_roots(|| async {
            Ok(vec![Root {
                uri: "file:///home/ada/project".into(),
                name: Some("project".into()),
                meta: None,
            }])
        });

    smol::block_on(async {
        // The server: the demo, asking the host for sampling and roots too.
        let (server_reads, client_writes) = piper::pipe(64 * 1024);
        let (client_reads, server_writes) = piper::pipe(64 * 1024);
        let config = DemoConfig {
            host_requests: true,
            ..DemoConfig::default()
        };
        smol::spawn(mcpwire::serve_demo(server_reads, server_writes, config)).detach();

        let options = ConnectOptions::default().handlers(handlers);
        let (client, driver) = connect_streams("demo", client_reads, client_writes, options);
        smol::spawn(driver).detach();
        client.ready().await?;

        let asked = client.call_tool("ask", json!({})).await?;
        println!("ask: {}", asked.text());
        let sampled = client
            .call_tool("sample", json!({"prompt": "hello"}))
            .await?;
        println!("sample: {}", sampled.text());
        let roots = client.call_tool("roots", json!({})).await?;
        println!("roots: {}", roots.text());
        client.close().await;
        Ok(())
    })
}
