//! Trace context in `_meta`: the `traceparent` the host's hook gives is what the demo server
//! received, over stdio and over Streamable HTTP, in both eras; a call's own `_meta` wins.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcpwire::{CallOptions, Client, ConnectOptions, Era, ServerConfig};
use mcpwire_tests::demo_http::DemoHttp;
use mcpwire_tests::scenario::Runtime;
use serde_json::{json, Map, Value};

/// A `traceparent` for the `n`th request: each call gets its own span id.
fn traceparent(n: usize) -> String {
    format!("00-4bf92f3577b34da6a3ce929d0e0e4736-{n:016x}-01")
}

/// Options whose hook counts its calls and gives a new `traceparent` each time.
fn options(era: Era, made: &Arc<AtomicUsize>) -> ConnectOptions {
    let made = made.clone();
    let mut options = ConnectOptions::default().trace_context(move || {
        let n = made.fetch_add(1, Ordering::SeqCst) + 1;
        let mut m = Map::new();
        m.insert("traceparent".into(), Value::from(traceparent(n)));
        m.insert("tracestate".into(), Value::from("mcpwire=test"));
        m.insert(
            "io.modelcontextprotocol/protocolVersion".into(),
            Value::from("1999-01-01"),
        );
        m
    });
    options.era = era;
    options
}

/// The `traceparent` in a raw result's `_meta`.
fn echoed(result: &mcpwire::core::jsonrpc::RawJson) -> Value {
    let v: Value = serde_json::from_str(result.get()).unwrap();
    v["_meta"]["traceparent"].clone()
}

/// Calls through `client`: each request carries the hook's entries, freshly made for it; the
/// reserved keys stay the protocol's (the server would refuse a wrong version); a call's own
/// `_meta` wins over the hook's.
async fn the_server_received_the_hooks_traceparent(client: &Client, made: &Arc<AtomicUsize>) {
    client.ready().await.unwrap();
    let before = made.load(Ordering::SeqCst);
    let mut params = Map::new();
    params.insert("name".into(), json!("add"));
    params.insert("arguments".into(), json!({"a": 2, "b": 40}));
    let result = client
        .request("tools/call", Some(params.clone()), CallOptions::default())
        .await
        .unwrap();
    let n = made.load(Ordering::SeqCst);
    assert_eq!(n, before + 1, "the hook runs once per call");
    assert_eq!(echoed(&result), Value::from(traceparent(n)));

    let result = client
        .request("tools/call", Some(params.clone()), CallOptions::default())
        .await
        .unwrap();
    let n = made.load(Ordering::SeqCst);
    assert_eq!(echoed(&result), Value::from(traceparent(n)), "a fresh one");

    let own = "00-4bf92f3577b34da6a3ce929d0e0e4736-00000000000000ff-01";
    params.insert("_meta".into(), json!({"traceparent": own}));
    let result = client
        .request("tools/call", Some(params), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(echoed(&result), Value::from(own), "the call's own wins");
    // The typed calls carry it too.
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "add"));
}

fn stdio(era: Era) {
    smol::block_on(async {
        let made = Arc::new(AtomicUsize::new(0));
        let config = ServerConfig::stdio(env!("CARGO_BIN_EXE_demo-server"), Vec::<String>::new());
        let (client, driver) = mcpwire::connect(&config, options(era, &made)).unwrap();
        let driver = smol::spawn(driver);
        the_server_received_the_hooks_traceparent(&client, &made).await;
        client.close().await;
        driver.await;
    });
}

/// Over Streamable HTTP, on each runtime (mcpwire's own HTTP client on its sockets).
fn http(era: Era) {
    let server = DemoHttp::start();
    for rt in Runtime::ALL {
        rt.run(
            Duration::from_secs(60),
            async {
                let made = Arc::new(AtomicUsize::new(0));
                let config = ServerConfig::http(server.url());
                let (client, driver) = rt
                    .connect_with_driver(&config, options(era, &made))
                    .unwrap();
                let driver = rt.spawn(driver);
                the_server_received_the_hooks_traceparent(&client, &made).await;
                client.close().await;
                driver.await;
            },
            || format!(" ({era:?} on {rt})"),
        );
    }
}

#[test]
fn over_stdio_stateless() {
    stdio(Era::Auto);
}

#[test]
fn over_stdio_handshake() {
    stdio(Era::Handshake);
}

#[test]
fn over_streamable_http_stateless() {
    http(Era::Auto);
}

#[test]
fn over_streamable_http_handshake() {
    http(Era::Handshake);
}

/// A hook that panics is the host's bug: told once as a failure of the trace context, and the
/// call goes on without its entries.
#[test]
fn a_panicking_hook_is_told_and_the_call_goes_on() {
    smol::block_on(async {
        let config = ServerConfig::stdio(env!("CARGO_BIN_EXE_demo-server"), Vec::<String>::new());
        let options = ConnectOptions::default().trace_context(|| panic!("the host's trace bug"));
        let (client, driver) = mcpwire::connect(&config, options).unwrap();
        let driver = smol::spawn(driver);
        let mut events = client.events();
        client.ready().await.unwrap();
        let mut params = Map::new();
        params.insert("name".into(), json!("add"));
        params.insert("arguments".into(), json!({"a": 1, "b": 2}));
        let result = client
            .request("tools/call", Some(params), CallOptions::default())
            .await
            .unwrap();
        assert_eq!(echoed(&result), Value::Null, "no traceparent sent");
        client.close().await;
        driver.await;
        let mut failures = Vec::new();
        while let Some(e) = events.next().await {
            if let mcpwire::Event::HandlerFailed(f) = e {
                failures.push(f);
            }
        }
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(
            failures[0].handler,
            mcpwire::core::HostHandler::TraceContext
        );
        assert!(
            failures[0].reason.contains("the host's trace bug"),
            "{failures:?}"
        );
    });
}
