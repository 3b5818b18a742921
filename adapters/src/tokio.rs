//! mcpwire in a tokio host (feature `tokio`): connections that run on the tokio runtime current
//! where they are opened, as any task of the host's does.
//!
//! A stdio server is spawned through tokio's own child handling and read and written through
//! tokio's reactor; the connection's timers are tokio's; the host's handlers (elicitation,
//! sampling, roots) run as tasks spawned on that runtime, so a handler may await tokio (an
//! HTTP request of the host's, a tokio timer) and a slow one holds up nothing. No thread of
//! async-io or async-process is started: the only thread of mcpwire's own is the one that
//! spawns servers (on Linux a server's parent-death signal follows the thread that spawned it,
//! so that thread lives as long as the host).
//!
//! ```no_run
//! # async fn run() -> Result<(), mcpwire::Error> {
//! use mcpwire::{ConnectOptions, ServerConfig};
//!
//! let server = ServerConfig::stdio("npx", ["-y", "@modelcontextprotocol/server-everything"]);
//! let client = mcpwire::tokio::connect(&server, ConnectOptions::default()).await?;
//! let result = client.call_tool("echo", serde_json::json!({"message": "hi"})).await?;
//! println!("{}", result.text());
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! Both runtimes' flavours work: on the multi-thread runtime the driver runs on a worker and a
//! caller waiting for its answer runs the connection itself while it can (no hop to the
//! driver's task); on current_thread everything stays on the runtime's one thread.
//!
//! An HTTP server's connection is on tokio too: mcpwire's own HTTP/1.1 client resolves names
//! through tokio's lookup (on tokio's blocking threads), connects (Happy Eyeballs on tokio's
//! timers), runs TLS (rustls over the socket), the proxy's `CONNECT` and its pool over tokio's
//! sockets, the 2024-11-05 HTTP+SSE transport the same way; no thread but tokio's. (libcurl,
//! feature `libcurl`, for HTTP/2, SOCKS and `https://` proxy URLs, runs on its own thread.)
//!
//! Beyond connections: [`manager`] makes a [`Manager`](crate::manager::Manager) on this runtime,
//! `serve_demo` (feature `demo`) runs the demo server over tokio's byte streams, and a sign-in
//! (feature `oauth`) on a connection made here runs its deadlines, its loopback listener and
//! its token store's files on tokio.

use ::tokio::runtime::Handle;
use mcpwire_core::config::ServerConfig;

use crate::client::Client;
use crate::connect::{
    connect_on, connect_on_async, connect_pipes, ready_or_closed, ConnectOptions,
};
use crate::driver::Driver;
use crate::error::Error;
use crate::runtime::child::Writer;
#[cfg(feature = "demo")]
use crate::runtime::host::TokioIo;
use crate::runtime::Runtime;
use crate::stdio::pipe_reader::PipeReader;

/// The tokio runtime current here.
fn current() -> Result<Runtime, Error> {
    Handle::try_current()
        .map(Runtime::Tokio)
        .map_err(|e| Error::NoRuntime {
            runtime: "tokio",
            message: e.to_string(),
        })
}

/// Connects on the tokio runtime current here, spawns the connection's driver on it and waits
/// for the handshake. When the handshake fails, the connection is closed as on every other path
/// (a stdio server gets stdin EOF, then SIGTERM, then SIGKILL, and is reaped) before the error
/// is returned. Outside a tokio runtime: [`Error::NoRuntime`], nothing started.
pub async fn connect(config: &ServerConfig, options: ConnectOptions) -> Result<Client, Error> {
    let (client, driver) = connect_on_async(config, options, current()?).await?;
    ::tokio::spawn(driver);
    ready_or_closed(client).await
}

/// Connects on the tokio runtime current here and gives the handle and the connection's
/// [`Driver`], for the host to spawn (or to poll in a task of its own): as
/// [`crate::connect`], on tokio. Spawn failures surface here. Outside a tokio runtime:
/// [`Error::NoRuntime`], nothing started.
pub fn connect_with_driver(
    config: &ServerConfig,
    options: ConnectOptions,
) -> Result<(Client, Driver), Error> {
    connect_on(config, options, current()?)
}

/// Connects to a server over any pair of tokio byte streams that carry its stdout and stdin
/// (JSONL), on the tokio runtime current here: as [`crate::connect_streams`], on tokio. `name`
/// names it in errors. Outside a tokio runtime: [`Error::NoRuntime`].
pub fn connect_streams<R, W>(
    name: &str,
    stdout: R,
    stdin: W,
    options: ConnectOptions,
) -> Result<(Client, Driver), Error>
where
    R: ::tokio::io::AsyncRead + Send + 'static,
    W: ::tokio::io::AsyncWrite + Send + 'static,
{
    let runtime = current()?;
    let stdout = PipeReader::tokio_stream(stdout);
    let stdin = Writer::Tokio(Box::pin(stdin));
    Ok(connect_pipes(name, stdout, stdin, options, runtime))
}

/// A [`Manager`](crate::manager::Manager) on the tokio runtime current here: its supervisors
/// and its servers' drivers are tasks on that runtime, its start-up deadlines and restart
/// backoff tokio's timers, its servers' connections as [`connect`]'s, its cache written on
/// tokio's blocking pool. The same type as [`Manager::new`](crate::manager::Manager::new)
/// makes on smol; add servers with `add`, `add_with` or `add_loaded`. Outside a tokio runtime:
/// [`Error::NoRuntime`], nothing started.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use mcpwire::manager::ManagerOptions;
/// use mcpwire::ServerConfig;
///
/// let manager = mcpwire::tokio::manager(ManagerOptions::default())?;
/// manager.add("demo", ServerConfig::stdio("mcpwire", ["serve-demo"]));
/// manager.wait_settled().await;
/// let result = manager.call_tool("demo__echo", serde_json::json!({"message": "hi"})).await?;
/// println!("{}", result.text());
/// manager.close().await;
/// # Ok(()) }
/// ```
pub fn manager(options: crate::manager::ManagerOptions) -> Result<crate::manager::Manager, Error> {
    Ok(crate::manager::Manager::on(options, current()?))
}

/// Runs the demo server over tokio's byte streams `input` and `output` (JSONL) until `input`
/// ends, its timers tokio's: as [`crate::serve_demo`], on the tokio runtime current here
/// (outside one, an error at once).
#[cfg(feature = "demo")]
pub async fn serve_demo<R, W>(
    input: R,
    output: W,
    config: mcpwire_core::server::DemoConfig,
) -> std::io::Result<()>
where
    R: ::tokio::io::AsyncRead + Unpin,
    W: ::tokio::io::AsyncWrite + Unpin,
{
    let runtime = current().map_err(|e| std::io::Error::other(e.to_string()))?;
    let (input, output) = (TokioIo(input), TokioIo(output));
    crate::serve::serve_on(input, output, config, runtime).await
}
