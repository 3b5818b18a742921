//! What every transport machine (stdio, Streamable HTTP, HTTP+SSE) does the same way with a
//! frame it decoded: its messages go to the protocol in order, and a batch element that is not a
//! message becomes a diagnostic.

use std::collections::VecDeque;
use std::time::Instant;

use crate::codec::jsonl::FrameError;
use crate::connection::protocol::vocabulary::events::{Diagnostic, Event};
use crate::connection::protocol::ClientProtocol;
use crate::jsonrpc::{for_each_message, Message, Parsed};

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
