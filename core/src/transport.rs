//! What the transport machines (stdio, HTTP) report beside the messages they decode: frames that
//! were not messages and HTTP-level notes. The connection turns them into public diagnostics.

use std::collections::VecDeque;
use std::time::Instant;

use crate::codec::jsonl::FrameError;
use crate::codec::sse::SseDiagnostic;
use crate::jsonrpc::{Message, ParseError, Parsed};
use crate::protocol::ClientProtocol;

/// A transport's note for the application; it ended nothing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TransportNote {
    /// A stdio line or a JSON body (or an element of its batch) that was not a message.
    Frame(FrameError),
    /// Something an SSE stream held that is not a message.
    Sse(SseDiagnostic),
    /// An HTTP-level note (a refused standalone stream, a failed notification POST, …).
    Http(String),
    /// The server process is being started again, and why.
    Restarting(String),
    /// A request was refused for want of authorization (HTTP).
    AuthorizationRequired(Box<crate::http::AuthorizationRequired>),
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

/// Hands each message of one frame to the protocol, in order; a batch element that is not a
/// message becomes a note.
pub(crate) fn hand_over(
    protocol: &mut ClientProtocol,
    notes: &mut VecDeque<TransportNote>,
    now: Instant,
    parsed: Parsed<Message>,
) {
    for_each_message(
        parsed,
        |m| protocol.handle_message(now, m),
        |error| {
            let preview = String::new();
            let e = FrameError::NotAMessage { error, preview };
            notes.push_back(TransportNote::Frame(e));
        },
    );
}
