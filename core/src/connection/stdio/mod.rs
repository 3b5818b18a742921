//! The stdio transport: JSONL both ways over a child process's stdin and stdout, and the child's
//! lifecycle as deadlines.

pub(crate) mod client;
pub(crate) mod shutdown;

pub use client::{Stdio, EXIT_AFTER_EOF_GRACE};
pub use shutdown::{ProcessAction, ProcessExit, ShutdownTimeouts};
