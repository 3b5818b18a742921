//! What a [`Connection`](super::Connection) hands out: [`Output`]s for the driver, among them
//! [`Event`]s for the application.

use crate::connection::http::HttpAction;
use crate::connection::protocol::vocabulary::events::Event;
use crate::connection::stdio::ProcessAction;

/// One thing the connection asks of its driver, in the order it must be done.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Output {
    /// Bytes for the server's stdin (stdio): append them to what is still unwritten and write
    /// them in order, as fast as the pipe takes them.
    Write(Vec<u8>),
    /// Something to do to the server process (stdio).
    Process(ProcessAction),
    /// An HTTP exchange to start or abort (Streamable HTTP).
    Http(HttpAction),
    /// Something for the application.
    Event(Event),
}

impl super::Connection {
    /// A note of the HTTP client that carries the exchanges, on how it reaches the server (the
    /// HTTP version it spoke when another was asked for): handed to the application as a
    /// diagnostic event ([`Diagnostic::Http`](crate::Diagnostic::Http)), in order with the
    /// others (HTTP).
    pub fn handle_http_note(&mut self, now: std::time::Instant, note: &str) {
        if !self.http_input("handle_http_note") {
            return;
        }
        self.protocol.note_http(note);
        self.after(now);
    }
}
