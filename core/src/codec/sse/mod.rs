//! Server-Sent Events: the framing of Streamable HTTP response streams, decoded exactly as the
//! WHATWG HTML standard's "event stream interpretation" says, however the bytes are split.
//!
//! - [`SseDecoder`]: bytes in, events out, with a borrowed ([`SseDecoder::next_event_ref`], no
//!   allocation) and an owned ([`SseDecoder::next_event`], one allocation) way to take them.
//!   Diagnostics ([`SseError`]) come in line with the events and are never fatal.
//! - [`SseEncoder`]: events in, bytes out (for servers and tests).
//! - [`McpSseDecoder`]: MCP on top: `message` events parsed into JSON-RPC messages, the priming
//!   event skipped, anything else a [`SseDiagnostic`].
//!
//! ```
//! use mcpwire_core::codec::sse::SseDecoder;
//!
//! let mut decoder = SseDecoder::new();
//! let mut seen = Vec::new();
//! for chunk in [&b"id: 1\r\nda"[..], b"ta: {\"a\":1}\r", b"\n\r\n: ping\n"] {
//!     decoder.push(chunk);
//!     while let Some(item) = decoder.next_event_ref() {
//!         let event = item.expect("no diagnostic here");
//!         seen.push((event.data.to_owned(), event.last_event_id.to_owned()));
//!     }
//! }
//! decoder.finish();
//! assert!(decoder.next_event().is_none());
//! assert_eq!(seen, [("{\"a\":1}".to_owned(), "1".to_owned())]);
//! ```

mod decoder;
mod encoder;
mod event;
mod line;
mod mcp;
mod utf8;

pub use decoder::SseDecoder;
pub use encoder::{EventFrame, LineEnd, SseEncodeError, SseEncoder};
pub use event::{Event, EventRef, SseError, Work, DEFAULT_MAX_EVENT_SIZE, MESSAGE};
pub use mcp::{McpSseDecoder, SseDiagnostic, SseItem};
