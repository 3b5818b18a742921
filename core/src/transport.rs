//! What every transport machine (stdio, Streamable HTTP, HTTP+SSE) does the same way with a
//! frame it decoded: its messages go to the protocol in order, and a batch element that is not a
//! message becomes a diagnostic.

use std::collections::VecDeque;
use std::time::Instant;

use crate::codec::jsonl::FrameError;
use crate::jsonrpc::{Message, ParseError, Parsed};
use crate::protocol::events::{Diagnostic, Event};
use crate::protocol::ClientProtocol;

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
/// message becomes a diagnostic.
pub(crate) fn hand_over(
    protocol: &mut ClientProtocol,
    events: &mut VecDeque<Event>,
    now: Instant,
    parsed: Parsed<Message>,
) {
    for_each_message(
        parsed,
        |m| protocol.handle_message(now, m),
        |error| {
            let preview = String::new();
            let e = FrameError::NotAMessage { error, preview };
            events.push_back(Event::Diagnostic(Diagnostic::Frame(e)));
        },
    );
}
