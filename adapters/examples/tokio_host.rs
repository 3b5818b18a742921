//! mcpwire in a tokio host (feature `tokio`): connect to a stdio server and, when a URL is
//! given, an HTTP one; list their tools into one namespace (`server__tool`); call one with
//! progress and a timeout, and one whose deadline passes; answer the server's elicitation from a
//! handler that awaits tokio; cancel a call from another task; close.
//!
//! ```sh
//! cargo install --locked mcpwire-cli      # the demo server: `mcpwire serve-demo`
//! cargo run -p mcpwire --features tokio --example tokio_host
//! python3 tests/peers/py_server.py http --port 8000 &
//! cargo run -p mcpwire --features tokio --example tokio_host -- http://127.0.0.1:8000/mcp
//! ```
//!
//! The stdio server is `mcpwire serve-demo`; the HTTP one, any server with an `add` tool.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcpwire::{CallOptions, Client, ConnectOptions, Direction, ElicitAnswer, Handlers, Tool};
use mcpwire::{Error, ServerConfig};
use serde_json::json;

/// What the host answers the demo's `ask` form with.
#[derive(serde::Serialize)]
struct Contact {
    name: String,
}

/// Every server's tools under one name each: `server__tool`, with the client that has it.
struct Namespace(BTreeMap<String, (Client, Tool)>);

impl Namespace {
    async fn of(servers: &[(&str, Client)]) -> Result<Namespace, Error> {
        let mut tools = BTreeMap::new();
        for (server, client) in servers {
            for tool in client.list_tools().await? {
                tools.insert(format!("{server}__{}", tool.name), (client.clone(), tool));
            }
        }
        Ok(Namespace(tools))
    }

    /// The client and the tool's own name for a namespaced name.
    fn get(&self, name: &str) -> Result<(&Client, &str), String> {
        match self.0.get(name) {
            Some((client, tool)) => Ok((client, tool.name.as_str())),
            None => Err(format!("no tool {name} in the namespace")),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The handler awaits tokio (its timer here; a host's would ask its user): it runs as a task
    // on this runtime, so waiting holds up nothing else.
    let handlers = Handlers::new().on_elicitation(|request| async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        println!("the server asks: {}", request.message());
        Ok(ElicitAnswer::accept(Contact { name: "Ada".into() }))
    });
    // Counts the cancellations that go out (the frame observer sees every frame).
    let cancellations = Arc::new(AtomicUsize::new(0));
    let seen = cancellations.clone();
    let observer = move |direction: Direction, frame: &[u8]| {
        let text = String::from_utf8_lossy(frame);
        if direction == Direction::Outgoing && text.contains("notifications/cancelled") {
            seen.fetch_add(1, Ordering::SeqCst);
        }
    };
    let options = ConnectOptions::default()
        .handlers(handlers)
        .observer(observer);
    let demo = ServerConfig::stdio("mcpwire", ["serve-demo"]);
    let mut servers = vec![("demo", mcpwire::tokio::connect(&demo, options).await?)];
    if let Some(url) = std::env::args().nth(1) {
        let http = ServerConfig::http(url);
        servers.push((
            "web",
            mcpwire::tokio::connect(&http, ConnectOptions::default()).await?,
        ));
    }

    let tools = Namespace::of(&servers).await?;
    println!("{} tools in one namespace", tools.0.len());
    for name in tools.0.keys() {
        println!("tool: {name}");
    }
    for server in servers.iter().map(|(name, _)| name) {
        let (client, tool) = tools.get(&format!("{server}__add"))?;
        let sum = client.call_tool(tool, json!({"a": 2, "b": 40})).await?;
        println!("{server}__add: 2 + 40 = {}", sum.text());
    }

    // A call with progress and a timeout (no answer nor progress for 5 s ends it).
    let (demo, slow) = tools.get("demo__slow")?;
    let progress = CallOptions::default()
        .timeout(Duration::from_secs(5))
        .on_progress(|p| println!("progress: {} of {}", p.progress, p.total.unwrap_or(0.0)));
    let done = demo
        .call_tool_with(slow, json!({"steps": 3, "interval_ms": 20}), progress)
        .await?;
    println!("slow: {}", done.text());
    // One whose deadline passes first: it ends as a timeout, the server told to stop.
    let short = CallOptions::default().max_total(Duration::from_millis(100));
    let late = demo.call_tool_with(slow, json!({"steps": 50}), short).await;
    println!("timed out: {}", late.is_err_and(|e| e.is_timeout()));

    // The server's elicitation, answered by the handler above.
    let (_, ask) = tools.get("demo__ask")?;
    println!("ask: {}", demo.call_tool(ask, json!({})).await?.text());

    // A call cancelled from another task: aborting the task that awaits it drops the call,
    // which cancels it on the server (`notifications/cancelled`).
    let before = cancellations.load(Ordering::SeqCst);
    let steps = Arc::new(AtomicUsize::new(0));
    let counted = steps.clone();
    let long = CallOptions::default().on_progress(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
    });
    let caller = demo.clone();
    let slow = slow.to_owned();
    let call = tokio::spawn(async move {
        let args = json!({"steps": 100, "interval_ms": 50});
        caller.call_tool_with(&slow, args, long).await
    });
    while steps.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    call.abort();
    let ended = call.await;
    for _ in 0..200 {
        if cancellations.load(Ordering::SeqCst) > before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    println!(
        "cancelled from another task: {}, notifications/cancelled sent: {}",
        ended.is_err_and(|e| e.is_cancelled()),
        cancellations.load(Ordering::SeqCst) > before
    );
    // The connection goes on.
    let (client, add) = tools.get("demo__add")?;
    let after = client.call_tool(add, json!({"a": 1, "b": 1})).await?;
    println!("after the cancel: 1 + 1 = {}", after.text());

    drop(tools);
    for (name, client) in servers {
        client.close().await;
        println!("{name}: closed");
    }
    Ok(())
}
