//! What an SSE decoder hands out: events, owned or borrowed, diagnostics, and its work counters.

use std::borrow::Cow;

/// The default cap on one event: 16 MiB.
pub const DEFAULT_MAX_EVENT_SIZE: usize = 16 * 1024 * 1024;

/// The event type of an event without an `event` field.
pub const MESSAGE: &str = "message";

/// A dispatched event, owned. Built from an [`EventRef`] with one allocation (the data); the type
/// `message` is borrowed from a constant.
///
/// The event's id is not copied into it: it is the decoder's [`SseDecoder::last_event_id`](super::SseDecoder::last_event_id) right
/// after the event was handed out (or [`EventRef::last_event_id`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Event {
    /// The event type: the last `event` field of the block, or `message` when there was none
    /// (or it was empty).
    pub event_type: Cow<'static, str>,
    /// The `data` fields of the block joined with LF.
    pub data: String,
}

impl Event {
    /// An event of type `message`.
    pub fn message(data: impl Into<String>) -> Self {
        Self {
            event_type: Cow::Borrowed(MESSAGE),
            data: data.into(),
        }
    }

    /// An event of the given type (an empty type means `message`, as on the wire).
    pub fn new(event_type: &str, data: impl Into<String>) -> Self {
        Self {
            event_type: owned_type(event_type),
            data: data.into(),
        }
    }

    /// Whether the type is `message`, the type MCP uses for JSON-RPC messages.
    pub fn is_message(&self) -> bool {
        self.event_type == MESSAGE
    }
}

fn owned_type(event_type: &str) -> Cow<'static, str> {
    if event_type.is_empty() || event_type == MESSAGE {
        Cow::Borrowed(MESSAGE)
    } else {
        Cow::Owned(event_type.to_owned())
    }
}

/// A dispatched event, borrowed from the decoder's buffers: no allocation. Valid until the next
/// call on the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventRef<'a> {
    /// The event type: the last `event` field of the block, or `message`.
    pub event_type: &'a str,
    /// The `data` fields of the block joined with LF.
    pub data: &'a str,
    /// The last event id as of this event: the last `id` field seen in this block or an earlier
    /// one (ids persist); empty when none was seen or the last one was empty.
    pub last_event_id: &'a str,
}

impl EventRef<'_> {
    /// Copies the event out: one allocation for the data, another only for a type other than
    /// `message`.
    #[must_use]
    pub fn to_event(&self) -> Event {
        Event {
            event_type: owned_type(self.event_type),
            data: self.data.to_owned(),
        }
    }

    /// Whether the type is `message`, the type MCP uses for JSON-RPC messages.
    pub fn is_message(&self) -> bool {
        self.event_type == MESSAGE
    }
}

/// Something the peer did to the stream that a caller should know about. Never fatal: decoding
/// goes on after it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// An event grew past the cap. Its data was dropped; the lines up to the next blank line
    /// still set `id` and `retry` but dispatch nothing. Reported once per event.
    #[error("SSE event exceeds the {limit}-byte cap; dropped up to the next blank line")]
    EventTooLarge {
        /// The cap ([`SseDecoder::max_event_size`](super::SseDecoder::max_event_size)).
        limit: usize,
    },
    /// The stream ended inside an event: lines were seen after the last blank line, so the server
    /// closed the stream before finishing what it was sending. Nothing of it was dispatched.
    #[error(
        "SSE stream ended inside an event ({data_len} bytes of data lost{})",
        if *.unterminated_line { ", last line cut" } else { "" }
    )]
    UnfinishedEvent {
        /// The length the event's data would have had.
        data_len: usize,
        /// Whether the stream also ended inside a line.
        unterminated_line: bool,
    },
}

/// Counters of the work a decoder has done, to show it stays linear in its input however the
/// input is split.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Work {
    /// Bytes given to [`SseDecoder::push`](super::SseDecoder::push).
    pub pushed: u64,
    /// Bytes examined while searching for line ends. Each decoded byte is examined at most once.
    pub scanned: u64,
    /// Bytes copied into or within the decoder's buffers (decoded input appended, unfinished
    /// lines moved to the front, data lines joined). Small pushes without a line end are first
    /// gathered raw in a fixed 256-byte stage, so that they are validated together; that copy is
    /// not counted here.
    pub copied: u64,
    /// Events dispatched.
    pub events: u64,
}
