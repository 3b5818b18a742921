//! The pieces every scripted scenario repeats: a bound on the time it may take, a handshake-era
//! connection, a call with a short timeout, and the fault server's handshake and results.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use async_io::Timer;
use futures_lite::future;
use mcpwire::{
    CallOptions, CallToolResult, Client, ConnectOptions, Driver, Era, Error, HttpClientOptions,
    HttpExchangeNote, ServerConfig,
};
use serde_json::json;

use crate::fault_http::Rule;
use crate::HttpPeer;

/// The runtime that drives a test and runs its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// `smol::block_on` and `mcpwire::connect_smol`.
    Smol,
    /// A multi-thread tokio runtime's `block_on` and `mcpwire::tokio::connect` (mcpwire's own
    /// HTTP client on tokio's sockets, timers and name lookup).
    Tokio,
}

impl Runtime {
    /// Both runtimes, for a test that runs its scenario on each in one run.
    pub const ALL: [Runtime; 2] = [Runtime::Smol, Runtime::Tokio];

    /// The runtime the scripted scenarios of this process run on: tokio when
    /// `MCPWIRE_TEST_RUNTIME` is `tokio` (the test command runs the HTTP suites so a second
    /// time), smol otherwise.
    pub fn from_env() -> Runtime {
        match std::env::var("MCPWIRE_TEST_RUNTIME").as_deref() {
            Ok("tokio") => Runtime::Tokio,
            _ => Runtime::Smol,
        }
    }

    /// Runs `f` to its end on this runtime; panics when it has not ended within `limit`, with
    /// `context()` after the message.
    pub fn run<T>(
        self,
        limit: Duration,
        f: impl Future<Output = T>,
        context: impl FnOnce() -> String,
    ) -> T {
        match self {
            Runtime::Smol => smol_within(limit, f, context),
            Runtime::Tokio => {
                let bounded =
                    tokio_runtime().block_on(async { tokio::time::timeout(limit, f).await });
                match bounded {
                    Ok(done) => done,
                    Err(_) => panic!("not done within {} s{}", limit.as_secs(), context()),
                }
            }
        }
    }

    /// Runs `f` to its end on this runtime, unbounded (the caller bounds it, with
    /// [`sleep`](Self::sleep)): `smol::block_on`, or a multi-thread tokio runtime's `block_on`.
    pub fn block_on<T>(self, f: impl Future<Output = T>) -> T {
        match self {
            Runtime::Smol => smol::block_on(f),
            Runtime::Tokio => tokio_runtime().block_on(f),
        }
    }

    /// A wake-up after `after` on this runtime's timer (on tokio: inside
    /// [`block_on`](Self::block_on) or [`run`](Self::run)).
    pub async fn sleep(self, after: Duration) {
        match self {
            Runtime::Smol => {
                Timer::after(after).await;
            }
            Runtime::Tokio => tokio::time::sleep(after).await,
        }
    }

    /// Spawns `f` on this runtime (smol's executor; on tokio, the runtime current here: inside
    /// [`run`](Self::run)); the returned future gives its output, a panic in it failing the
    /// test.
    pub fn spawn<T: Send + 'static>(
        self,
        f: impl Future<Output = T> + Send + 'static,
    ) -> Pin<Box<dyn Future<Output = T> + Send>> {
        match self {
            Runtime::Smol => Box::pin(smol::spawn(f)),
            Runtime::Tokio => {
                let task = tokio::spawn(f);
                Box::pin(async move {
                    task.await
                        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
                })
            }
        }
    }

    /// Connects to `config` with this runtime running the connection (on tokio: inside
    /// [`run`](Self::run)).
    pub async fn connect(
        self,
        config: &ServerConfig,
        options: ConnectOptions,
    ) -> Result<Client, Error> {
        match self {
            Runtime::Smol => mcpwire::connect_smol(config, options).await,
            Runtime::Tokio => mcpwire::tokio::connect(config, options).await,
        }
    }

    /// The handle and the connection's driver, not spawned, on this runtime (`mcpwire::connect`;
    /// `mcpwire::tokio::connect_with_driver`, inside [`block_on`](Self::block_on) or
    /// [`run`](Self::run)).
    pub fn connect_with_driver(
        self,
        config: &ServerConfig,
        options: ConnectOptions,
    ) -> Result<(Client, Driver), Error> {
        match self {
            Runtime::Smol => mcpwire::connect(config, options),
            Runtime::Tokio => mcpwire::tokio::connect_with_driver(config, options),
        }
    }
}

/// The tests' tokio runtime: multi-thread, two workers, every driver on.
fn tokio_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Runtime::Smol => "smol",
            Runtime::Tokio => "tokio",
        })
    }
}

/// A handshake-era `initialize` result for the fault server, echoing the request's id.
pub const HANDSHAKE_INIT: &str = r#"{"jsonrpc":"2.0","id":{{id}},"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fault","version":"1"}}}"#;

/// Runs `f` on the runtime [`Runtime::from_env`] names; panics when it has not ended within
/// `limit`, with `context()` after the message (such as a server's stderr).
pub fn run_within<T>(
    limit: Duration,
    f: impl Future<Output = T>,
    context: impl FnOnce() -> String,
) -> T {
    Runtime::from_env().run(limit, f, context)
}

/// Runs `f` on smol (see [`run_within`]).
fn smol_within<T>(
    limit: Duration,
    f: impl Future<Output = T>,
    context: impl FnOnce() -> String,
) -> T {
    smol::block_on(future::or(f, async {
        Timer::after(limit).await;
        panic!("not done within {} s{}", limit.as_secs(), context())
    }))
}

/// Runs a scenario (on [`Runtime::from_env`]'s runtime) with a bound of 60 s: nothing may hang the test run.
pub fn run<T>(f: impl Future<Output = T>) -> T {
    run_within(Duration::from_secs(60), f, String::new)
}

/// Runs `f` (on [`Runtime::from_env`]'s runtime) with a bound of `limit`, failing with
/// `peer`'s stderr.
pub fn run_against<T>(peer: &HttpPeer, limit: Duration, f: impl Future<Output = T>) -> T {
    run_within(limit, f, || {
        format!("; server stderr:\n{}", peer.stderr().join("\n"))
    })
}

/// Connects to `config` on the runtime [`Runtime::from_env`] names, its driver spawned there,
/// and waits for the handshake (inside [`run`], [`run_within`] or [`run_against`]).
pub async fn connect(config: &ServerConfig, options: ConnectOptions) -> Result<Client, Error> {
    Runtime::from_env().connect(config, options).await
}

/// A wake-up after `after` on the timer of the runtime [`Runtime::from_env`] names (inside
/// [`run`], [`run_within`] or [`run_against`]).
pub async fn sleep(after: Duration) {
    Runtime::from_env().sleep(after).await
}

/// Spawns `f` on the runtime [`Runtime::from_env`] names (inside [`run`], [`run_within`] or
/// [`run_against`]); the returned future gives its output.
pub fn spawn<T: Send + 'static>(
    f: impl Future<Output = T> + Send + 'static,
) -> Pin<Box<dyn Future<Output = T> + Send>> {
    Runtime::from_env().spawn(f)
}

/// Connects in the handshake era (whatever `options` says of the era): the scripted servers
/// are of that era (the probe of `Era::Auto` is tested on its own). Panics when it fails.
pub async fn connect_handshake(config: &ServerConfig, options: ConnectOptions) -> Client {
    let options = ConnectOptions {
        era: Era::Handshake,
        ..options
    };
    Runtime::from_env()
        .connect(config, options)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"))
}

/// Calls `tool` with no arguments and a per-call `timeout`, so that a driver that loses track
/// fails fast.
pub async fn call_within(
    client: &Client,
    tool: &str,
    timeout: Duration,
) -> Result<CallToolResult, Error> {
    client
        .call_tool_with(tool, json!({}), CallOptions::default().timeout(timeout))
        .await
}

/// A tools/call result echoing the request's id, with `text`.
pub fn tool_result(text: &str) -> String {
    json!({"jsonrpc": "2.0", "id": "ID", "result": {"content": [{"type": "text", "text": text}]}})
        .to_string()
        .replace("\"ID\"", "{{id}}")
}

/// A handshake-era server's rules: initialize answered with session `session`, 202 for
/// notifications, the optional GET answered `get`, and DELETE answered 200.
pub fn handshake_rules(session: &str, get: u16) -> Vec<Rule> {
    vec![
        Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", session)], HANDSHAKE_INIT),
        Rule::notifications().status(202),
        Rule::get().status(get),
        Rule::delete().status(200),
    ]
}

/// The names of the server's tools.
pub async fn tool_names(client: &Client) -> Vec<String> {
    client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect()
}

/// A few calls of each kind against our Python test server: a list (holding `add`), a plain
/// call, and a call whose two progress notifications come on its SSE stream (`progress_how`
/// says how, should they not all arrive).
pub async fn exercise_py_server(client: &Client, progress_how: &str) {
    let names = tool_names(client).await;
    assert!(names.iter().any(|n| n == "add"), "{names:?}");
    let r = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(r.text(), "42");
    let steps = std::sync::Arc::new(std::sync::Mutex::new(0));
    let st = steps.clone();
    let opts = CallOptions::default().on_progress(move |_| *st.lock().unwrap() += 1);
    let r = client
        .call_tool_with("slow", json!({"steps": 2, "delay": 0.05}), opts)
        .await
        .unwrap();
    assert_eq!(r.text(), "done after 2 steps");
    assert_eq!(*steps.lock().unwrap(), 2, "progress {progress_how}");
}

/// Every HTTP exchange note of a client, in order.
pub type Notes = std::sync::Arc<std::sync::Mutex<Vec<HttpExchangeNote>>>;

/// Connect options for `era` with `http_client` that keep every HTTP exchange note in the
/// returned list.
pub fn noting_exchanges(http_client: HttpClientOptions, era: Era) -> (ConnectOptions, Notes) {
    let notes: Notes = Notes::default();
    let tap = notes.clone();
    let options = ConnectOptions {
        era,
        http_client,
        on_http_exchange: Some(std::sync::Arc::new(move |note: &HttpExchangeNote| {
            tap.lock().unwrap().push(note.clone())
        })),
        ..ConnectOptions::default()
    };
    (options, notes)
}
