//! MCP over an event stream: each `message` event's data is one JSON-RPC text.

use super::decoder::SseDecoder;
use super::event::{SseError, MESSAGE};
use crate::jsonrpc::{self, Message, ParseError, Parsed};

/// How much of an event's data a diagnostic keeps.
const PREVIEW: usize = 120;

/// What an MCP event stream yields: a JSON-RPC message, or something to report.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SseItem {
    /// A JSON-RPC message (one per event, or one per element of a batch).
    Message(Message),
    /// Something the peer sent that is not a message. The stream goes on.
    Diagnostic(SseDiagnostic),
}

/// Why part of an MCP event stream was not a message. Never fatal; never to be answered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SseDiagnostic {
    /// The event stream itself: an event over the cap, or the stream ended inside an event.
    #[error(transparent)]
    Stream(#[from] SseError),
    /// An event whose type is not `message` (MCP sends JSON-RPC only as `message` events; the
    /// 2024-11-05 HTTP+SSE transport's `endpoint` event lands here for its own layer to read).
    #[error("SSE event of type {event_type:?} is not a JSON-RPC message")]
    UnexpectedEventType {
        /// The event type.
        event_type: String,
        /// The event's data (bounded by the decoder's cap).
        data: String,
    },
    /// A `message` event whose data is not a JSON-RPC message (or a batch element that is not).
    #[error("SSE event data is not a JSON-RPC message ({error}): {preview}")]
    NotAMessage {
        /// Why it is not a message.
        error: ParseError,
        /// The start of the data (at most 120 bytes, cut at a character boundary).
        preview: String,
    },
}

/// Decodes an MCP event stream into JSON-RPC messages: an [`SseDecoder`] whose `message` events
/// are parsed with [`jsonrpc::parse`].
///
/// An event with empty data (the priming event a 2025-11-25 server sends first, an id with an
/// empty `data` line) yields nothing: it only moves [`last_event_id`](Self::last_event_id).
/// Other event types and data that is not JSON-RPC become diagnostics. Drive it like the
/// decoder: [`push`](Self::push), drain [`next_item`](Self::next_item), [`finish`](Self::finish)
/// at the end of the body and drain again.
#[derive(Debug, Default)]
pub struct McpSseDecoder {
    sse: SseDecoder,
    /// The rest of a batch, handed out one element at a time.
    batch: std::vec::IntoIter<Result<Message, ParseError>>,
    /// The start of the batch's data, for diagnostics about its elements.
    batch_preview: String,
}

impl McpSseDecoder {
    /// A decoder with the default cap on one event (16 MiB).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder whose events may hold at most `max_event_size` bytes.
    #[must_use]
    pub fn with_max_event_size(max_event_size: usize) -> Self {
        Self {
            sse: SseDecoder::with_max_event_size(max_event_size),
            ..Self::default()
        }
    }

    /// The event-stream decoder inside, for its state ([`SseDecoder::retry`], work counters).
    pub fn decoder(&self) -> &SseDecoder {
        &self.sse
    }

    /// The last event id (see [`SseDecoder::last_event_id`]): what to resume from.
    pub fn last_event_id(&self) -> &str {
        self.sse.last_event_id()
    }

    /// The reconnection time in milliseconds from the last valid `retry` field, if any.
    pub fn retry(&self) -> Option<u64> {
        self.sse.retry()
    }

    /// Feeds the next chunk of the body. Drain [`next_item`](Self::next_item) after each push.
    pub fn push(&mut self, bytes: &[u8]) {
        self.sse.push(bytes);
    }

    /// Marks the end of the body. Drain [`next_item`](Self::next_item) once more.
    pub fn finish(&mut self) {
        self.sse.finish();
    }

    /// The next message or diagnostic, or `None` when more input is needed (or, after
    /// [`finish`](Self::finish), when the stream is done).
    #[must_use = "a message not taken is lost"]
    pub fn next_item(&mut self) -> Option<SseItem> {
        self.next_item_observed(|_| {})
    }

    /// [`next_item`](Self::next_item), showing `observe` the data of each `message` event as
    /// received, before it is parsed (once per event, so once for a whole batch): a frame
    /// observer sees the original bytes.
    #[must_use = "a message not taken is lost"]
    pub fn next_item_observed(&mut self, mut observe: impl FnMut(&[u8])) -> Option<SseItem> {
        if let Some(item) = self.next_batch_element() {
            return Some(item);
        }
        loop {
            let event = match self.sse.next_event_ref()? {
                Ok(event) => event,
                Err(error) => return Some(SseItem::Diagnostic(error.into())),
            };
            if event.event_type != MESSAGE {
                return Some(SseItem::Diagnostic(SseDiagnostic::UnexpectedEventType {
                    event_type: event.event_type.to_owned(),
                    data: event.data.to_owned(),
                }));
            }
            if event.data.is_empty() {
                // A priming event: it carried an id, nothing else.
                continue;
            }
            observe(event.data.as_bytes());
            match jsonrpc::parse(event.data.as_bytes()) {
                Ok(Parsed::Single(message)) => return Some(SseItem::Message(message)),
                Ok(Parsed::Batch(elements)) => {
                    self.batch_preview = preview(event.data);
                    self.batch = elements.into_iter();
                    if let Some(item) = self.next_batch_element() {
                        return Some(item);
                    }
                }
                Err(error) => {
                    return Some(SseItem::Diagnostic(SseDiagnostic::NotAMessage {
                        error,
                        preview: preview(event.data),
                    }))
                }
            }
        }
    }

    fn next_batch_element(&mut self) -> Option<SseItem> {
        let element = self.batch.next()?;
        Some(match element {
            Ok(message) => SseItem::Message(message),
            Err(error) => SseItem::Diagnostic(SseDiagnostic::NotAMessage {
                error,
                preview: self.batch_preview.clone(),
            }),
        })
    }
}

/// The start of `data`, at most [`PREVIEW`] bytes, cut at a character boundary.
fn preview(data: &str) -> String {
    let mut end = data.len().min(PREVIEW);
    while !data.is_char_boundary(end) {
        end -= 1;
    }
    data[..end].to_owned()
}
