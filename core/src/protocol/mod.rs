//! The MCP protocol as a client speaks it: versions, the typed messages, and (coming) the
//! handshake-era and stateless-era client layers on top of the request engine.

pub mod client;
pub mod era;
pub mod events;
pub mod types;

pub use client::{ClientConfig, ClientProtocol};
pub use era::{ChosenEra, Era};
pub use events::{
    CallError, CallId, CallOptions, CallOutcome, ClientError, ClientEvent, ProtocolDiagnostic,
    ServerNotification, ServerRequest,
};
