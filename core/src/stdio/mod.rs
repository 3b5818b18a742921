//! The stdio transport: JSONL both ways over a child process's stdin and stdout, and the child's
//! lifecycle as deadlines.

pub mod client;
pub mod shutdown;

pub use client::StdioClient;
pub use shutdown::{ProcessAction, ProcessExit, Shutdown, ShutdownStage, ShutdownTimeouts};
