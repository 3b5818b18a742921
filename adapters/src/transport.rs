//! The seam between the driver's loop and a transport's IO: what the loop asks of a transport.
//!
//! A transport sees only the core's [`Connection`] (to feed it what happened) and the outputs
//! the loop hands it; it knows nothing of the handles, the driver or the application's code.

use std::task::Context;
use std::time::Instant;

use mcpwire_core::{ClientError, Connection, Output};

/// The IO of one transport: what the loop asks of it.
pub(crate) trait TransportIo: Send {
    /// Feeds the connection what happened since the last step (bytes read, an exit, HTTP
    /// heads, chunks, ends and failures), and adds the server's stderr lines for the callback
    /// to `stderr_lines`. Returns whether anything did.
    fn read(
        &mut self,
        cx: &mut Context<'_>,
        conn: &mut Connection,
        now: Instant,
        stderr_lines: &mut Vec<String>,
    ) -> bool;

    /// Carries out one output that is not an event (bytes to write, a process action, an
    /// exchange to start or abort). Returns the process id of a server it started anew, when
    /// it did.
    fn carry_out(&mut self, conn: &mut Connection, now: Instant, output: Output) -> Option<u32>;

    /// Writes what it can now. Returns whether anything was written.
    fn write(&mut self, cx: &mut Context<'_>) -> bool;

    /// Whether nothing of this transport is in flight any more.
    fn is_idle(&self) -> bool;

    /// Why the connection ended when the driver finishes, if no reason was given before.
    fn finish_reason(&self) -> &'static str;
}

/// What a transport's IO does with an input its connection refused as one of the other
/// transport ([`ClientError::WrongTransport`]): nothing more, since each IO serves connections
/// of its own transport only (a debug build says so loudly).
pub(crate) fn wrong_transport(error: ClientError) {
    debug_assert!(false, "{error}");
}
