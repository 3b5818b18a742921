//! The sans-IO core of mcpwire, a Model Context Protocol client.
//!
//! Everything here is a pure state machine: it consumes bytes and the current time, and it produces
//! events and bytes to write. It does no IO, reads no clock, spawns no threads and needs no async
//! runtime, so it embeds in any runtime, runs deterministically in tests and can be fuzzed.
//!
//! # One face: [`Connection`]
//!
//! One [`Connection`] is one client connection to one server, over stdio or Streamable HTTP, in
//! either protocol era. Its driver (mcpwire's smol adapters, or your own in any runtime) does
//! three things, in a loop:
//!
//! ```text
//! loop {
//!     while let Some(out) = conn.poll_output() {        // 1. drain, always
//!         match out {
//!             Output::Write(bytes)   => queue them for the server's stdin,
//!             Output::Process(a)     => close stdin / terminate / kill / spawn again,
//!             Output::Http(a)        => start or abort an HTTP exchange,
//!             Output::Event(e)       => hand it to the application,
//!         }
//!     }
//!     write what the pipe takes;                          // 2. do the IO
//!     wait for: stdout bytes | exit | HTTP head, chunk, end, failure   // 3. wait, then feed
//!             | a command from the application | conn.poll_timeout();
//!     feed it: conn.handle_stdio(now, StdioInput::Stdout(bytes)) / handle_http(now, id, …),
//!              conn.call(now, &McpCall::call_tool(…), options) / cancel / respond / close,
//!              conn.handle_timeout(now) once the deadline has passed;
//! }
//! ```
//!
//! The core never reads the clock: every `now` is the caller's. After every input or command,
//! drain [`Connection::poll_output`] until it returns `None` (debug builds check it).
//!
//! # Quickstart
//!
//! A connection and the demo server (feature `demo`), both sans-IO, in one thread: the loop
//! carries the bytes between them, as a driver carries them to and from a child's pipes.
//!
//! ```
//! # #[cfg(feature = "demo")]
//! # fn main() {
//! use std::time::Instant;
//! use mcpwire_core::server::{DemoConfig, DemoServer};
//! use mcpwire_core::types::CallToolResult;
//! use mcpwire_core::{CallOptions, ClientConfig, Connection, Event, McpCall, Output};
//! use mcpwire_core::{StdioInput, StdioOptions};
//!
//! let now = Instant::now();
//! let mut conn = Connection::stdio(now, ClientConfig::default(), StdioOptions::default());
//! let mut server = DemoServer::new(DemoConfig::default()); // stands for the server's process
//! let (mut call, mut answer) = (None, None);
//! while answer.is_none() {
//!     // 1. Drain the connection's outputs and carry each out.
//!     while let Some(out) = conn.poll_output() {
//!         match out {
//!             Output::Write(bytes) => server.handle_stdin(now, &bytes),
//!             Output::Event(Event::Ready { .. }) => {
//!                 let args = serde_json::json!({"a": 2, "b": 40});
//!                 let add = McpCall::call_tool("add", Some(args));
//!                 call = Some(conn.call(now, &add, CallOptions::default()).unwrap());
//!             }
//!             Output::Event(Event::CallDone { call: done, outcome }) if Some(done) == call => {
//!                 answer = Some(outcome.unwrap().parse::<CallToolResult>().unwrap());
//!             }
//!             _ => {}
//!         }
//!     }
//!     // 2. Feed back what the server wrote, with the time it came.
//!     while let Some(bytes) = server.poll_output() {
//!         conn.handle_stdio(now, StdioInput::Stdout(&bytes)).unwrap();
//!     }
//! }
//! assert_eq!(answer.unwrap().text(), "42");
//! # }
//! # #[cfg(not(feature = "demo"))]
//! # fn main() {}
//! ```
//!
//! A whole loop, with deadlines and the close, is the `core_loop` example of the `mcpwire`
//! crate; `mcpwire`'s guide "Embedding the sans-IO core in your own loop" explains each step.
//!
//! # Modules
//!
//! - [`Connection`] and its vocabulary, at the crate root: [`Output`], [`Event`],
//!   [`Diagnostic`], [`CallId`], [`CallOptions`], [`CallError`], [`ClientError`],
//!   [`ServerRequest`], [`ServerNotification`], the process and HTTP actions.
//! - [`types`]: the typed MCP messages a client reads and sends.
//! - [`jsonrpc`]: the JSON-RPC 2.0 message model, parsed once with params and results kept raw.
//! - [`codec`]: the byte-level codecs: newline-delimited JSON ([`codec::jsonl`]) and Server-Sent
//!   Events ([`codec::sse`]), useful on their own.
//! - [`config`]: [`config::ServerConfig`], one entry of a host's `mcpServers` JSON.
//! - [`tap`]: the frame observer, which sees every frame in and out.
//! - [`error`]: the details of a failed HTTP exchange, why a connection closed, and what a
//!   stdio server wrote that is not JSON-RPC.
//! - [`diagnostic`]: the words of the request engine's diagnostics (in [`Diagnostic`]).
//! - [`header`]: the rules every request header obeys before any HTTP backend sees it.
//! - `server` (feature `demo`): the demo server, on the same engine, with the same verbs.
//! - [`skills`]: Skills over MCP (SEP-2640): the skill entries, and with the `skills` feature
//!   the verification of a skill's files against its entry.
//! - [`schema`] (feature `schemas`): tool calls checked against the tools' output and input
//!   schemas.
//!
//! # Features
//!
//! | feature | what it does |
//! |---|---|
//! | `oauth` | the sans-IO OAuth 2.1 client ([`oauth`]): discovery, registration, PKCE, tokens, the grants without a user, DPoP; on in `mcpwire` by default |
//! | `skills` | each file of a skill checked against its entry's SHA-256 digest and size, its `SKILL.md` frontmatter against the entry's; on in `mcpwire` by default |
//! | `schemas` | a call's `structuredContent` checked against the tool's `outputSchema`, and when asked its arguments against the `inputSchema` (validator: boon); on in `mcpwire` by default |
//! | `demo` | the demo server (`server`): a small MCP server on the same engine, for tests and the command line |
//! | `fuzzing` | entry points for the fuzz targets (`fuzzing`), compiled with the crate so they cannot rot |
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod codec;
pub mod config;
mod connection;
pub mod diagnostic;
pub mod error;
pub mod header;
mod id_hash;
pub mod jsonrpc;
#[cfg(feature = "oauth")]
pub mod oauth;
mod rpc;
#[cfg(feature = "schemas")]
pub mod schema;
#[cfg(any(test, feature = "demo"))]
pub mod server;
mod server_url;
pub mod skills;
pub mod tap;
pub mod types;
mod url;
pub mod www_authenticate;

// The in-crate tests' shared harness (the Pair, the tests' one reading of the clock).
#[cfg(test)]
mod test_support;

#[cfg(feature = "fuzzing")]
pub mod fuzzing;

pub use config::HttpKind;
pub use connection::{
    task_of, typed_result, AuthorizationInput, CallError, CallId, CallOptions, CallOutcome,
    ChosenEra, ClientConfig, ClientError, Connection, Diagnostic, Era, EraReason, Event,
    ExchangeId, HandlerFailure, HostHandler, HttpAction, HttpInput, HttpMethod, HttpOptions,
    HttpRequest, McpCall, OnProgress, Output, ProcessAction, ProcessExit, Progress,
    ServerNotification, ServerRequest, ShutdownTimeouts, StdioInput, StdioOptions, TaskStatus,
    CLOSE_GRACE, EXIT_AFTER_EOF_GRACE, HANDLER_FAILED, MAX_PAGES,
};
pub use error::{AuthorizationRequired, Closed, StrayOutput};
pub use id_hash::{IdHasher, IdHashing};
pub use rpc::{Deadline, Limits, LocalError, Responded, DEFAULT_TIMEOUT};
pub use types::TASKS_EXTENSION;
