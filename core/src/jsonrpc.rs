//! The JSON-RPC 2.0 message model, as MCP uses it.
//!
//! A received message is parsed once. Its `params`, `result` and `error.data` stay raw JSON
//! ([`RawValue`](serde_json::value::RawValue)) until someone asks for a typed view with
//! [`Request::params_as`] and friends, so a large payload is never parsed twice or copied into
//! an intermediate tree.
//!
//! Two views exist: [`MessageRef`] borrows from the input bytes (no allocation beyond what serde
//! needs for escaped strings), and [`Message`] owns its parts. [`parse`] gives owned messages;
//! [`parse_ref`] gives borrowed ones.
//!
//! Encoding is compact and never contains a newline, so one encoded message is one JSONL line.

mod id;
mod message;
mod parse;

pub use id::Id;
pub use message::{
    ErrorObject, Message, MessageRef, Notification, RawJson, Request, Response, VERSION,
};
pub(crate) use parse::StrRef;
pub use parse::{parse, parse_one, parse_ref, sniff_id, sniff_method, ParseError, Parsed};

/// Standard JSON-RPC error codes.
pub mod codes {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// Splits what one frame held into its messages and the batch elements that were not messages,
/// the same way for every transport: a batch is taken element by element, in order.
pub(crate) fn for_each_message(
    parsed: Parsed<Message>,
    mut message: impl FnMut(Message),
    mut not_a_message: impl FnMut(ParseError),
) {
    match parsed {
        Parsed::Single(m) => message(m),
        Parsed::Batch(items) => {
            for item in items {
                match item {
                    Ok(m) => message(m),
                    Err(e) => not_a_message(e),
                }
            }
        }
    }
}
