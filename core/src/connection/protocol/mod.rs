//! The MCP protocol as a client speaks it, in both eras, on the request engine: versions, era
//! detection, the typed messages, and the client layer that turns calls into requests.
//!
//! - [`vocabulary`]: the words the application reads and writes (calls, their options and
//!   outcomes, events, the client's settings, the host's failures);
//! - [`call`]: how one call goes on the wire (params, pages, input rounds, at most once, tool
//!   headers);
//! - [`tasks`]: calls answered with a task, and the tasks the client runs for the server;
//! - [`client`]: [`ClientProtocol`], the machine that joins them, with the start
//!   ([`handshake`], [`era`]) and what the server sends ([`notifications`], [`server_requests`]).

pub(crate) mod call;
pub(crate) mod client;
pub(crate) mod era;
mod handshake;
mod notifications;
mod server_requests;
mod signal;
pub(crate) mod tasks;
pub(crate) mod vocabulary;

pub use call::listing::MAX_PAGES;
pub use client::{ClientConfig, ClientProtocol};
pub use era::{ChosenEra, Era, EraReason};
pub use tasks::follow::task_of;
pub use vocabulary::events::{
    typed_result, CallError, CallId, CallOptions, CallOutcome, ClientError, ServerNotification,
    ServerRequest, TaskStatus,
};
pub use vocabulary::host_failure::{HandlerFailure, HostHandler, HANDLER_FAILED};

#[cfg(test)]
mod tests;
