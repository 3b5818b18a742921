//! mcpwire: a Model Context Protocol client, for servers over stdio and Streamable HTTP, in both
//! protocol eras.
//!
//! ```no_run
//! use mcpwire::{ConnectOptions, ServerConfig};
//! use serde_json::json;
//!
//! fn main() -> Result<(), mcpwire::Error> {
//!     smol::block_on(async {
//!         // The demo server of the command line (`cargo install --locked mcpwire-cli`).
//!         let server = ServerConfig::stdio("mcpwire", ["serve-demo"]);
//!         let client = mcpwire::connect_smol(&server, ConnectOptions::default()).await?;
//!         for tool in client.list_tools().await? {
//!             println!("{}", tool.name);
//!         }
//!         let sum = client.call_tool("add", json!({"a": 2, "b": 40})).await?;
//!         println!("2 + 40 = {}", sum.text());
//!         client.close().await;
//!         Ok(())
//!     })
//! }
//! ```
//!
//! On tokio (feature `tokio`), `mcpwire::tokio::connect` connects on the host's tokio runtime:
//! its reactor, timers and child handling, the handlers as tokio tasks (the
//! [getting started](guide::getting_started) guide has the whole program). The [`guide`] module has a page for each thing a host does: HTTP, the eras, errors
//! and at most once, handlers, many servers with the [`manager`], [`hosts`]' files, [`oauth`],
//! tasks, Skills and Apps, observability, embedding the sans-IO core, testing.
//!
//! The protocol lives in the sans-IO core, [`mcpwire_core`] (re-exported as [`core`]); this
//! crate wires it to child processes and HTTP with one small smol-based driver and gives the
//! async [`Client`]. [`connect`] spawns the server and returns the [`Client`] handle and the
//! connection's [`Driver`]: a future that does all of the connection's IO. Spawn it on any
//! executor, or let [`connect_smol`] spawn it on smol's. A caller waiting for its answer runs
//! the connection itself while nobody else does, so a call made on another thread than the
//! driver's costs no hop to the driver's thread and back; the driver runs it the rest of the
//! time (notifications, server requests, a caller that stopped polling). Dropping the last
//! handle closes the connection gracefully; dropping the driver kills the server's process group
//! at once (on Windows, its job object: see [`ProcessActionObserver`]).
//!
//! # Features
//!
//! | feature | default | what it does |
//! |---|---|---|
//! | `tracing` | yes | `tracing` events for what a connection reports beside calls: diagnostics, renewals, the close, a failed handler |
//! | `oauth` | yes | the OAuth 2.1 client: sign-in when a server answers `401`, token stores, the grants without a user, DPoP ([`oauth`]) |
//! | `skills` | yes | Skills (SEP-2640): [`Client::get_skill`] and [`Client::load_skill`], each file verified against its entry |
//! | `schemas` | yes | tool calls checked against the tools' schemas: the result's `structuredContent` against the `outputSchema`, and when asked the arguments against the `inputSchema` |
//! | `keychain` | no | `oauth::KeychainTokenStore`: sign-ins kept in the OS keychain (macOS Keychain, Windows Credential Manager, the Secret Service on Linux and FreeBSD). On Linux and FreeBSD it brings async-io (zbus's default runtime), in a tokio host too |
//! | `smol` | yes | smol's side: [`connect`], [`connect_smol`], [`connect_streams`], `Manager::new`, `serve_demo` (async-io's reactor and timers, async-process's children). A tokio host turns it off (`default-features = false`): no crate of smol's family is built then |
//! | `tokio` | no | `mcpwire::tokio`: connections, the Manager, OAuth's sign-in and `serve_demo` on the host's tokio runtime (its reactor, timers, child handling and sockets: stdio and HTTP; no smol thread) |
//! | `libcurl` | no | libcurl (through isahc) for what mcpwire's own HTTP/1.1 client does not speak: HTTP/2 (by ALPN over TLS, and h2c), SOCKS and `https://` proxy URLs, URLs with credentials or characters to encode; `IsahcBackend` and `HttpClientOptions::http1_via_libcurl`. Without it, a connection that needs one of these fails at connect with [`Error::FeatureMissing`] |
//! | `opentelemetry` | no | `mcpwire::otel`: a ready trace-context hook reading the current OpenTelemetry context through the global propagator, and the conventions' metrics (`mcp.client.operation.duration`, `mcp.client.session.duration`) through the global meter provider; implies `tracing` |
//! | `demo` | no | the core's demo server (`core::server`), `serve_demo` to run it over a byte stream, and the `mcpwire-demo-server` binary |
//! | `testing` | no | [`testing`]: a scripted MCP server in memory, built from closures, joined to a real [`Client`] on smol or tokio, for a host's own tests, with a transcript of the wire |
#![deny(missing_docs)]
// A build with neither runtime (`smol`, `tokio`) can connect to nothing: its connection
// machinery is built but never reached.
#![cfg_attr(
    not(any(feature = "smol", feature = "tokio")),
    allow(unused, clippy::never_loop)
)]

mod client;
mod connect;
mod contain;
mod disk;
#[cfg(feature = "smol")]
mod drain_read;
mod driver;
mod error;
mod future;
pub mod guide;
mod handlers;
pub mod hosts;
mod http;
pub mod manager;
#[cfg(feature = "oauth")]
pub mod oauth;
mod os;
#[cfg(feature = "opentelemetry")]
pub mod otel;
mod runtime;
#[cfg(feature = "demo")]
mod serve;
mod stdio;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "tokio")]
pub mod tokio;
mod transport;

pub use client::{
    CallOptions, Client, CompletionRef, Events, Notifications, TaskHandle, TaskStart,
};
pub use connect::ConnectOptions;
#[cfg(feature = "smol")]
pub use connect::{connect, connect_smol, connect_streams};
pub use driver::spans::TraceContext;
pub use driver::Driver;
pub use error::{Error, Reissue};
pub use future::BoxFuture;
pub use handlers::{ElicitAnswer, ElicitationRequest, Handlers};
#[cfg(feature = "libcurl")]
pub use http::IsahcBackend;
pub use http::{
    ca_pem_problem, default_http_client, ClientCertificate, HttpBackend, HttpClientOptions,
    HttpCounters, HttpExchangeNote, HttpExchangeObserver, HttpFailure, HttpResponse, HttpVersion,
    HttpVersionChoice, ProxySetting, TlsOptions,
};
pub use mcpwire_core as core;
pub use mcpwire_core::config::ServerConfig;
pub use mcpwire_core::tap::{Direction, FrameObserver};
pub use mcpwire_core::types::{CallToolResult, ElicitAction, ElicitResult, Root, Tool};
pub use mcpwire_core::{
    ChosenEra, Diagnostic, Era, EraReason, Event, HandlerFailure, HostHandler, HttpKind,
    HttpOptions, Limits, ProcessAction, Progress, ServerNotification, ShutdownTimeouts,
    StrayOutput, HANDLER_FAILED,
};
#[cfg(feature = "demo")]
pub use serve::serve_demo;
pub use stdio::{ProcessActionObserver, StderrCallback};

/// The README's examples, compiled (and run where they need no server) as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
