//! Fuzz entry points, compiled with the crate (feature `fuzzing`) so the targets in `fuzz/` stay
//! one-liners and cannot rot. Each function panics when an invariant breaks.

mod codec;
mod connection;
mod engine;
#[cfg(feature = "oauth")]
mod oauth;
mod sse;

pub use codec::{http1, jsonl, jsonrpc};
pub use connection::connection;
pub use engine::engine_ops;
#[cfg(feature = "oauth")]
pub use oauth::oauth;
pub use sse::sse;
