//! The MCP protocol as a client speaks it, in both eras, on the request engine: versions, era
//! detection, the typed messages, and the client layer that turns calls into requests.

pub(crate) mod client;
pub(crate) mod era;
pub(crate) mod events;
pub mod types;

pub use client::{ClientConfig, ClientProtocol, MAX_PAGES};
pub use era::{ChosenEra, Era};
pub use events::{
    CallError, CallId, CallOptions, CallOutcome, ClientError, ServerNotification, ServerRequest,
};

#[cfg(test)]
mod tests;
