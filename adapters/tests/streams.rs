//! A connection over a pair of byte streams, with no process: the same `Client` over the demo
//! server running in this process, joined by in-memory pipes (as an SSH channel, `docker exec`
//! or a child the host started itself would be); on every runtime (see `runtimes`), the demo
//! server through that runtime's `serve_demo`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use mcpwire::core::server::DemoConfig;
use mcpwire::{CallOptions, ChosenEra, ConnectOptions, Error, Event};
use serde_json::json;

#[macro_use]
mod runtimes;
use runtimes::{Joined, Kind, Rt, TokioIo};

/// Runs the demo server over a pair of byte streams (`futures`' traits) as a task of `rt`,
/// through its runtime's own entry point (`serve_demo`; `mcpwire::tokio::serve_demo`, the
/// streams seen through tokio's traits).
fn serve_demo<R, W>(rt: &Rt, input: R, output: W) -> Joined<std::io::Result<()>>
where
    R: futures_lite::AsyncRead + Send + 'static,
    W: futures_lite::AsyncWrite + Send + 'static,
{
    let config = DemoConfig::default();
    match rt.kind() {
        Kind::Smol => {
            rt.spawn(
                async move { mcpwire::serve_demo(Box::pin(input), Box::pin(output), config).await },
            )
        }
        Kind::TokioMultiThread | Kind::TokioCurrentThread => {
            let (input, output) = (TokioIo(Box::pin(input)), TokioIo(Box::pin(output)));
            rt.spawn(mcpwire::tokio::serve_demo(input, output, config))
        }
    }
}

fn the_same_client_over_in_process_streams(rt: &Rt) {
    rt.block_on(async {
        // The client writes what the server reads, and reads what the server writes.
        let (server_reads, client_writes) = piper::pipe(64 * 1024);
        let (client_reads, server_writes) = piper::pipe(64 * 1024);
        let server = serve_demo(rt, server_reads, server_writes);
        let options = ConnectOptions::default();
        let (client, driver) =
            rt.connect_streams("in-process demo", client_reads, client_writes, options);
        let driver = rt.spawn(driver);
        let mut events = client.events();

        let info = client.ready().await.unwrap();
        assert_eq!(info.server_info.name, "mcpwire-demo");
        assert_eq!(client.era(), Some(ChosenEra::Stateless));
        assert_eq!(client.pid(), 0, "no process behind streams");
        let tools = client.list_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "add"));
        let sum = client
            .call_tool("add", json!({"a": 2, "b": 40}))
            .await
            .unwrap();
        assert_eq!(sum.text(), "42");
        // Its steps are the server's timers: on the runtime it runs in.
        let steps = Arc::new(AtomicUsize::new(0));
        let seen = steps.clone();
        let slow = client
            .call_tool_with(
                "slow",
                json!({"steps": 3, "interval_ms": 10}),
                CallOptions::default().on_progress(move |_| {
                    seen.fetch_add(1, Ordering::SeqCst);
                }),
            )
            .await
            .unwrap();
        assert!(!slow.is_error, "{}", slow.text());
        assert!(steps.load(Ordering::SeqCst) >= 1, "no step of slow came");

        // Closing ends the client's stream to the server; the server ends, and so does ours.
        client.close().await;
        driver.await;
        server.await.unwrap();
        assert!(matches!(client.list_tools().await, Err(Error::Closed(_))));
        let mut seen = Vec::new();
        while let Some(e) = events.next().await {
            seen.push(e);
        }
        assert!(
            matches!(seen.first(), Some(Event::Ready { .. })),
            "{seen:?}"
        );
        assert!(matches!(seen.last(), Some(Event::Closed(_))), "{seen:?}");
    });
}

on_every_runtime!(the_same_client_over_in_process_streams);
