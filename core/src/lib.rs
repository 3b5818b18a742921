//! The sans-IO core of mcpwire, a Model Context Protocol client.
//!
//! Everything here is a pure state machine: it consumes bytes and the current time, and it produces
//! events and bytes to write. It does no IO, reads no clock, spawns no threads and needs no async
//! runtime, so it embeds in any runtime, runs deterministically in tests and can be fuzzed.
//!
//! # The drive rule
//!
//! Every machine in this crate has the same face:
//!
//! - **inputs**: `push(bytes)` / `handle_*(now, …)` feed what the outside world did;
//! - **commands**: methods such as `request(now, …)` or `cancel(now, …)` change state and queue
//!   output; misuse returns `Err` at once;
//! - **outputs**: `poll_*()` / `next_*()` hand out what the machine produced, one item at a time;
//! - **time**: `poll_timeout()` says when the machine next wants `handle_timeout(now)`.
//!
//! After every input or command, drain the outputs until they return `None`, then wait for IO or
//! for the deadline from `poll_timeout()`. The core never reads the clock: the caller passes `now`.
//!
//! # Modules
//!
//! - [`jsonrpc`]: the JSON-RPC 2.0 message model, parsed once with params and results kept raw.
//! - [`protocol`]: MCP versions and the typed messages a client sends and reads.
//! - [`http`]: the Streamable HTTP transport (handshake era), as exchanges to carry out.
//! - [`stdio`]: the stdio transport and the child's shutdown plan.
//! - [`server`]: the demo server, on the same engine.
//! - [`tap`]: the frame observer, which sees every frame in and out.
//! - [`config`]: [`config::ServerConfig`], one entry of a host's `mcpServers` JSON.
//! - [`codec`]: the byte-level codecs: newline-delimited JSON ([`codec::jsonl`]) and Server-Sent
//!   Events ([`codec::sse`]).
//! - [`rpc`]: the request engine: ids, pending requests with their deadlines, progress,
//!   cancellation and the peer's requests, over JSON-RPC messages.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod codec;
pub mod config;
pub mod http;
pub mod jsonrpc;
pub mod protocol;
pub mod rpc;
pub mod server;
pub mod stdio;
pub mod tap;

#[cfg(feature = "fuzzing")]
pub mod fuzzing;
