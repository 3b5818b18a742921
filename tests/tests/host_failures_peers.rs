//! The host's own code cannot take a connection down, against server-everything over stdio and
//! over Streamable HTTP, and in a tokio host: it asks `roots/list` right after the handshake
//! (while no call is waiting), so a roots handler with a bug meets it at once. The server gets
//! `-32603` with the fixed message (it writes it on its stderr, or in the tool's result), the
//! host one `Event::HandlerFailed`, and every later call works and ends within its timeout. Over
//! stdio on every runtime (smol, tokio's multi-thread and current_thread).

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::core::types::CreateMessageResult;
use mcpwire::{
    CallOptions, Client, ConnectOptions, ElicitAnswer, Event, HandlerFailure, Handlers,
    HostHandler, Root, ServerConfig,
};
use mcpwire_tests::scenario::Runtime;
use mcpwire_tests::{everything_http_mode, everything_stdio, peers_skipped};
use serde_json::json;

#[macro_use]
#[path = "../../adapters/tests/runtimes/mod.rs"]
mod runtimes;
use runtimes::Rt;

/// Handlers that each fail on their first call (a panic), never finish on their second, and
/// answer after.
fn handlers(calls: &Arc<[AtomicUsize; 3]>) -> Handlers {
    let (e, s, r) = (calls.clone(), calls.clone(), calls.clone());
    Handlers::new()
        .on_roots(move || {
            let n = r[2].fetch_add(1, SeqCst);
            async move {
                // The host's `unwrap` on what it thought was always there.
                let configured: Option<&str> = (n > 0).then_some("file:///work");
                let uri = configured.expect("the host's roots bug");
                Ok(vec![Root {
                    meta: None,
                    uri: uri.into(),
                    name: Some("work".into()),
                }])
            }
        })
        .on_elicitation(move |_| {
            let n = e[0].fetch_add(1, SeqCst);
            async move {
                match n {
                    0 => panic!("the host's elicitation bug"),
                    1 => future::pending().await,
                    _ => Ok(ElicitAnswer::accept(json!({"name": "Ann"}))),
                }
            }
        })
        .on_sampling(move |_| {
            let n = s[1].fetch_add(1, SeqCst);
            async move {
                match n {
                    0 => panic!("the host's sampling bug"),
                    1 => future::pending().await,
                    _ => Ok(CreateMessageResult::text("fake", "hello")),
                }
            }
        })
}

/// The next handler failure on the event stream (waiting up to 10 s).
async fn next_failure(events: &mut mcpwire::Events) -> HandlerFailure {
    let found = future::or(
        async {
            while let Some(event) = events.next().await {
                if let Event::HandlerFailed(f) = event {
                    return Some(f);
                }
            }
            None
        },
        async {
            smol::Timer::after(Duration::from_secs(10)).await;
            None
        },
    );
    found.await.expect("no handler failure was told")
}

/// A call with a 2 s timeout: it must answer, within it.
async fn echo(client: &Client) {
    let started = Instant::now();
    let opts = CallOptions::default().timeout(Duration::from_secs(2));
    let r = client
        .call_tool_with("echo", json!({"message": "hi"}), opts)
        .await
        .unwrap();
    assert_eq!(r.text(), "Echo: hi");
    assert!(started.elapsed() < Duration::from_secs(2));
}

/// What server-everything got, in the result of a tool whose request to the host failed.
fn refused_with_the_fixed_error(text: &str) {
    assert!(
        text.contains("-32603") && text.contains("the client's handler failed"),
        "{text}"
    );
    assert!(
        !text.contains("bug"),
        "the panic's words went to the server: {text}"
    );
}

/// Everything after the connection is up: the roots handler's failure (right after the
/// handshake), then each handler kind failing, never finishing and answering.
async fn the_host_s_bugs_cost_their_requests_only(client: &Client, stderr: impl Fn() -> String) {
    let mut events = client.events();
    let failure = next_failure(&mut events).await;
    assert_eq!(failure.handler, HostHandler::Roots);
    assert!(failure.request.is_some());
    assert!(failure.reason.contains("the host's roots bug"), "{failure}");
    // The server got the fixed error: it says so on its stderr.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !stderr().contains("the client's handler failed") {
        assert!(Instant::now() < deadline, "server stderr:\n{}", stderr());
        smol::Timer::after(Duration::from_millis(20)).await;
    }
    assert!(!stderr().contains("the host's roots bug"));
    // The connection lives, and later calls keep their timeouts.
    echo(client).await;
    echo(client).await;
    assert!(client.closed_reason().is_none());
    // The server asks again: the handler answers now.
    let r = client.call_tool("get-roots-list", json!({})).await.unwrap();
    assert!(r.text().contains("file:///work"), "{}", r.text());

    for (tool, kind) in [
        ("trigger-elicitation-request", HostHandler::Elicitation),
        ("trigger-sampling-request", HostHandler::Sampling),
    ] {
        let args = json!({"prompt": "hi", "maxTokens": 5});
        let r = client.call_tool(tool, args.clone()).await.unwrap();
        assert!(r.is_error, "{}", r.text());
        refused_with_the_fixed_error(&r.text());
        let failure = next_failure(&mut events).await;
        assert_eq!(failure.handler, kind);
        // Never finishing: our own timeout ends the call on time; the rest goes on.
        let started = Instant::now();
        let opts = CallOptions::default().timeout(Duration::from_secs(1));
        let e = client
            .call_tool_with(tool, args.clone(), opts)
            .await
            .unwrap_err();
        assert!(e.is_timeout(), "{e}");
        assert!(
            started.elapsed() < Duration::from_millis(1800),
            "{:?}",
            started.elapsed()
        );
        echo(client).await;
        // Then it answers.
        let r = client.call_tool(tool, args).await.unwrap();
        assert!(!r.is_error, "{kind:?}: {}", r.text());
    }
    echo(client).await;
}

/// On every runtime (the adapter crate's `runtimes` axis), through its own entry point.
fn the_host_s_bugs_cost_their_requests_only_over_stdio(rt: &Rt) {
    if peers_skipped("the_host_s_bugs_cost_their_requests_only_over_stdio") {
        return;
    }
    let calls = Arc::new(Default::default());
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let kept = lines.clone();
    let options = ConnectOptions::default()
        .handlers(handlers(&calls))
        .on_stderr(move |line| kept.lock().unwrap().push(line.to_owned()));
    let stderr = move || lines.lock().unwrap().join("\n");
    rt.block_on(rt.within(Duration::from_secs(60), "the scenario", async {
        let client = rt.connect(&everything_stdio(), options).await.unwrap();
        the_host_s_bugs_cost_their_requests_only(&client, &stderr).await;
        client.close().await;
    }));
}

on_every_runtime!(the_host_s_bugs_cost_their_requests_only_over_stdio);

#[test]
fn the_host_s_bugs_cost_their_requests_only_over_http() {
    if peers_skipped("the_host_s_bugs_cost_their_requests_only_over_http") {
        return;
    }
    for rt in Runtime::ALL {
        let (peer, url) = everything_http_mode("streamableHttp");
        let calls = Arc::new(Default::default());
        let options = ConnectOptions::default().handlers(handlers(&calls));
        let stderr = || peer.stderr().join("\n");
        let context = || format!(" (on {rt}); server stderr:\n{}", stderr());
        rt.run(
            Duration::from_secs(60),
            async {
                let client = rt
                    .connect(&ServerConfig::http(&url), options)
                    .await
                    .unwrap_or_else(|e| panic!("on {rt}: connect: {e}"));
                the_host_s_bugs_cost_their_requests_only(&client, stderr).await;
                client.close().await;
            },
            context,
        );
    }
}

/// The host of the report that led here: tokio, `connect` with the driver spawned on it, a
/// roots handler with an `unwrap`, and calls with a 2 s timeout after it.
#[test]
fn a_tokio_host_whose_roots_handler_panics_keeps_its_connection() {
    if peers_skipped("a_tokio_host_whose_roots_handler_panics_keeps_its_connection") {
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let calls: Arc<[AtomicUsize; 3]> = Arc::new(Default::default());
        let options = ConnectOptions::default().handlers(handlers(&calls));
        let (client, driver) = mcpwire::connect(&everything_stdio(), options).unwrap();
        let driver = tokio::spawn(driver);
        client.ready().await.unwrap();
        let mut events = client.events();
        let failure = tokio::time::timeout(Duration::from_secs(10), next_failure(&mut events))
            .await
            .expect("the roots request came after the handshake");
        assert_eq!(failure.handler, HostHandler::Roots);
        assert!(
            client.closed_reason().is_none(),
            "{:?}",
            client.closed_reason()
        );
        for _ in 0..2 {
            let started = Instant::now();
            let opts = CallOptions::default().timeout(Duration::from_secs(2));
            let call = client.call_tool_with("echo", json!({"message": "hi"}), opts);
            let r = tokio::time::timeout(Duration::from_secs(10), call)
                .await
                .expect("a call outlived its own timeout")
                .unwrap();
            assert_eq!(r.text(), "Echo: hi");
            assert!(started.elapsed() < Duration::from_secs(2));
        }
        let r = client.call_tool("get-roots-list", json!({})).await.unwrap();
        assert!(r.text().contains("file:///work"), "{}", r.text());
        client.close().await;
        driver.await.unwrap();
    });
}
