//! The MCP protocol as a client speaks it, in both eras, on the request engine: versions, era
//! detection, the typed messages, and the client layer that turns calls into requests.

mod at_most_once;
mod call_options;
pub(crate) mod calls;
pub(crate) mod client;
mod client_config;
pub(crate) mod era;
pub(crate) mod events;
mod handshake;
pub(crate) mod host_failure;
mod input;
mod listing;
mod notifications;
pub(crate) mod params;
mod served_tasks;
mod server_requests;
mod signal;
pub(crate) mod tasks;
pub(crate) mod tool_headers;

pub use client::{ClientConfig, ClientProtocol};
pub use era::{ChosenEra, Era, EraReason};
pub use events::{
    typed_result, CallError, CallId, CallOptions, CallOutcome, ClientError, ServerNotification,
    ServerRequest, TaskStatus,
};
pub use host_failure::{HandlerFailure, HostHandler, HANDLER_FAILED};
pub use listing::MAX_PAGES;
pub use tasks::task_of;

#[cfg(test)]
mod tests;
