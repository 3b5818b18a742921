//! Byte-level codecs: how messages are framed on a byte stream.
//!
//! - [`jsonl`]: newline-delimited JSON, the stdio framing.
//! - [`sse`]: Server-Sent Events, the framing of Streamable HTTP response streams.
//! - [`http1`]: HTTP/1.1 itself, for the adapters' own client of plain `http://` servers.
//!
//! All are incremental and bounded: they take bytes in chunks of any size, remember how far they
//! scanned, and cap what one frame may hold.

pub mod http1;
pub mod jsonl;
mod scan;
pub mod sse;
