//! mcpwire: a Model Context Protocol client.
//!
//! The protocol lives in the sans-IO core, [`mcpwire_core`]; this crate wires it to child
//! processes with small smol-based drivers and gives an async [`Client`].
//!
//! ```no_run
//! # async fn run() -> Result<(), mcpwire::Error> {
//! use mcpwire::{ConnectOptions, ServerConfig};
//!
//! let server = ServerConfig::stdio("npx", ["-y", "@modelcontextprotocol/server-everything"]);
//! let client = mcpwire::connect_smol(&server, ConnectOptions::default()).await?;
//! for tool in client.list_tools().await? {
//!     println!("{}", tool.name);
//! }
//! let result = client.call_tool("echo", serde_json::json!({"message": "hi"})).await?;
//! println!("{}", result.text());
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! [`connect`] spawns the server and returns the [`Client`] handle and the connection's
//! [`Driver`]: a future that does all of the connection's IO. Spawn it on any executor, or let
//! [`connect_smol`] spawn it on smol's. Dropping the last handle closes the connection
//! gracefully; dropping the driver kills the server's process group at once.
#![deny(missing_docs)]

mod client;
mod dispatch;
mod driver;
mod error;
mod handlers;
mod http_driver;
mod machine;
mod serve;
mod spawn;
mod stderr;

use std::time::{Duration, Instant};

pub use client::{CallOpts, Client, Notifications, ProgressUpdate};
pub use driver::Driver;
pub use error::Error;
pub use handlers::{BoxFuture, ElicitationRequest, Handlers, Root};
pub use http_driver::{HttpBackend, HttpResponse, IsahcBackend};
pub use mcpwire_core as core;
pub use mcpwire_core::config::ServerConfig;
pub use mcpwire_core::protocol::types::{CallToolResult, ElicitAction, ElicitResult, Tool};
pub use mcpwire_core::protocol::{ChosenEra, Era, ServerNotification};
pub use mcpwire_core::tap::{Direction, FrameObserver};
pub use serve::serve_demo;
pub use stderr::StderrCallback;

use mcpwire_core::protocol::types::Implementation;
use mcpwire_core::protocol::ClientConfig;
use mcpwire_core::rpc::EngineConfig;
use mcpwire_core::stdio::{ShutdownTimeouts, StdioClient};

/// How to connect: who we are, what we answer, limits and taps.
pub struct ConnectOptions {
    /// Who we are.
    pub client_info: Implementation,
    /// How long the handshake may take (default 30 s).
    pub init_timeout: Duration,
    /// Which era to speak (default: detect it with a `server/discover` probe).
    pub era: Era,
    /// How long the probe may go unanswered before the server is taken for a handshake-era one
    /// and started again (default 10 s).
    pub probe_timeout: Duration,
    /// The waits of the graceful shutdown (default 2 s after stdin EOF, 2 s after SIGTERM).
    pub shutdown: ShutdownTimeouts,
    /// The longest stdout line accepted (default 16 MiB).
    pub max_line: usize,
    /// The request engine's caps.
    pub engine: EngineConfig,
    /// Answers to server requests; they decide the capabilities declared.
    pub handlers: Handlers,
    /// Called with each line the server writes to stderr.
    pub on_stderr: Option<StderrCallback>,
    /// How much of the server's stderr to keep for errors (default 8 KiB).
    pub stderr_tail: usize,
    /// Sees every frame in and out (message bodies only: never HTTP headers, so never an
    /// `Authorization` value).
    pub observer: Option<Box<dyn FrameObserver>>,
    /// The HTTP client for HTTP servers (default: [`IsahcBackend`]).
    pub http_backend: Option<std::sync::Arc<dyn HttpBackend>>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            client_info: Implementation::mcpwire(),
            init_timeout: Duration::from_secs(30),
            era: Era::Auto,
            probe_timeout: Duration::from_secs(10),
            shutdown: ShutdownTimeouts::default(),
            max_line: mcpwire_core::codec::jsonl::DEFAULT_MAX_LINE,
            engine: EngineConfig::default(),
            handlers: Handlers::default(),
            on_stderr: None,
            stderr_tail: 8 * 1024,
            observer: None,
            http_backend: None,
        }
    }
}

impl std::fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectOptions")
            .field("client_info", &self.client_info)
            .field("init_timeout", &self.init_timeout)
            .field("handlers", &self.handlers)
            .finish_non_exhaustive()
    }
}

impl ConnectOptions {
    /// The core's configuration from these options (the capabilities follow the handlers).
    fn client_config(&self) -> ClientConfig {
        ClientConfig {
            client_info: self.client_info.clone(),
            capabilities: self.handlers.capabilities(),
            init_timeout: self.init_timeout,
            era: self.era,
            probe_timeout: self.probe_timeout,
            engine: self.engine.clone(),
            ..ClientConfig::default()
        }
    }

    /// Sets the handlers.
    pub fn handlers(mut self, handlers: Handlers) -> Self {
        self.handlers = handlers;
        self
    }

    /// Sets the frame observer.
    pub fn observer(mut self, observer: impl FrameObserver + 'static) -> Self {
        self.observer = Some(Box::new(observer));
        self
    }

    /// Sets the stderr line callback.
    pub fn on_stderr(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_stderr = Some(std::sync::Arc::new(f));
        self
    }
}

/// Spawns the server and starts the handshake. Returns the handle and the driver, which must be
/// polled (spawned on an executor) for anything to happen. Spawn failures surface here.
pub fn connect(config: &ServerConfig, options: ConnectOptions) -> Result<(Client, Driver), Error> {
    let stdio = match config {
        ServerConfig::Stdio(s) => s,
        ServerConfig::Http(h) => return connect_http(h, options),
    };
    let command = std::iter::once(stdio.command.as_str())
        .chain(stdio.args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let spawned = spawn::spawn(stdio).map_err(|e| Error::Spawn {
        command: command.clone(),
        message: e.to_string(),
    })?;
    let mut core = StdioClient::new(options.client_config(), options.shutdown, options.max_line);
    if let Some(o) = options.observer {
        core.set_observer(o);
    }
    core.start(Instant::now())
        .expect("a new connection starts its handshake");
    let shared = client::Shared::new(client::State::new(
        crate::machine::Core::Stdio(core),
        command,
        spawned.pid as u32,
    ));
    let tail = stderr::StderrTail::new(options.stderr_tail, options.on_stderr);
    let driver = driver::StdioDriver::new(
        shared.clone(),
        spawned.child,
        spawned.pid,
        tail,
        options.handlers,
        stdio.clone(),
    );
    Ok((Client::new(shared), Driver::stdio(driver)))
}

fn connect_http(
    config: &mcpwire_core::config::HttpConfig,
    options: ConnectOptions,
) -> Result<(Client, Driver), Error> {
    let backend = match options.http_backend.clone() {
        Some(b) => b,
        None => std::sync::Arc::new(IsahcBackend::new().map_err(|message| Error::Spawn {
            command: config.url.clone(),
            message,
        })?),
    };
    let client_config = options.client_config();
    let mut http = mcpwire_core::http::HttpConfig::new(config.url.clone());
    http.headers = config
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut core = mcpwire_core::http::HttpClient::new(client_config, http);
    if let Some(o) = options.observer {
        core.set_observer(o);
    }
    core.start(Instant::now())
        .expect("a new connection starts its handshake");
    let shared = client::Shared::new(client::State::new(
        crate::machine::Core::Http(core),
        config.url.clone(),
        0,
    ));
    let driver = http_driver::HttpDriver::new(shared.clone(), backend, options.handlers);
    Ok((Client::new(shared), Driver::http(driver)))
}

/// Connects, spawns the driver on smol's global executor and waits for the handshake.
pub async fn connect_smol(config: &ServerConfig, options: ConnectOptions) -> Result<Client, Error> {
    let (client, driver) = connect(config, options)?;
    smol::spawn(driver).detach();
    client.ready().await?;
    Ok(client)
}

/// The README's examples, compiled (and run where they need no server) as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
