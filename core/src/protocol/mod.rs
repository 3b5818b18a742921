//! The MCP protocol as a client speaks it: versions, the typed messages, and (coming) the
//! handshake-era and stateless-era client layers on top of the request engine.

pub mod client;
pub mod types;

pub use client::{
    CallError, CallId, CallOptions, CallOutcome, ClientConfig, ClientError, ClientEvent,
    ClientProtocol, ProtocolDiagnostic, ServerNotification, ServerRequest,
};
