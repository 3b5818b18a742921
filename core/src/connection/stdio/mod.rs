//! The stdio transport: JSONL both ways over a child process's stdin and stdout, and the child's
//! lifecycle as deadlines.

pub(crate) mod client;
pub(crate) mod shutdown;

pub use client::{Stdio, EXIT_AFTER_EOF_GRACE};
pub use shutdown::{ProcessAction, ProcessExit, ShutdownTimeouts};

/// What only a stdio connection has; [`Connection`](crate::Connection)'s other methods are in
/// the connection's module.
impl super::Connection {
    /// What the stdio server wrote on its stdout that is not JSON-RPC, since it was started
    /// (or started again after the era probe); `None` when it wrote nothing else, and over
    /// HTTP. Each such line is also a [`Diagnostic::Frame`](crate::Diagnostic::Frame) as it
    /// comes; this is their sum, for the failure a person is shown (a handshake that times out
    /// or ends with the server's exit).
    pub fn stray_output(&self) -> Option<&crate::error::StrayOutput> {
        match &self.transport {
            super::Transport::Stdio(s) => s.stray_output(),
            super::Transport::Streamable(_) | super::Transport::Sse(_) => None,
        }
    }
}
