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
