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
//! [`connect_smol`] spawn it on smol's. A caller waiting for its answer runs the connection
//! itself while nobody else does, so a call made on another thread than the driver's costs no
//! hop to the driver's thread and back; the driver runs it the rest of the time (notifications,
//! server requests, a caller that stopped polling). Dropping the last handle closes the
//! connection gracefully; dropping the driver kills the server's process group at once (on
//! Windows, its job object: see [`ProcessActionObserver`]).
#![deny(missing_docs)]

mod client;
mod connect;
mod contain;
mod disk;
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
#[cfg(feature = "demo")]
mod serve;
mod stdio;
mod time;
mod transport;

pub use client::{
    CallOptions, Client, CompletionRef, Events, Notifications, TaskHandle, TaskStart,
};
pub use connect::{connect, connect_smol, connect_streams, ConnectOptions};
pub use driver::Driver;
pub use error::{Error, Reissue};
pub use future::BoxFuture;
pub use handlers::{ElicitAnswer, ElicitationRequest, Handlers};
pub use http::{
    ca_pem_problem, ClientCertificate, HttpBackend, HttpClientOptions, HttpCounters,
    HttpExchangeNote, HttpExchangeObserver, HttpFailure, HttpResponse, HttpVersion,
    HttpVersionChoice, IsahcBackend, ProxySetting, TlsOptions,
};
pub use mcpwire_core as core;
pub use mcpwire_core::config::ServerConfig;
pub use mcpwire_core::tap::{Direction, FrameObserver};
pub use mcpwire_core::types::{CallToolResult, ElicitAction, ElicitResult, Root, Tool};
pub use mcpwire_core::{
    ChosenEra, Diagnostic, Era, EraReason, Event, HandlerFailure, HostHandler, HttpOptions,
    HttpTransportKind, Limits, ProcessAction, Progress, ServerNotification, ShutdownTimeouts,
    StrayOutput, HANDLER_FAILED,
};
#[cfg(feature = "demo")]
pub use serve::serve_demo;
pub use stdio::{ProcessActionObserver, StderrCallback};

/// The README's examples, compiled (and run where they need no server) as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
