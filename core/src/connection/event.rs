//! What a [`Connection`](super::Connection) hands out: [`Output`]s for the driver, among them
//! [`Event`]s for the application.

use std::sync::Arc;

use crate::codec::jsonl::FrameError;
use crate::codec::sse::SseDiagnostic;
use crate::http::HttpAction;
use crate::jsonrpc::{ErrorObject, Id};
use crate::protocol::events::{ClientEvent, ProtocolDiagnostic};
use crate::protocol::types::InitializeResult;
use crate::protocol::{CallId, CallOutcome, ChosenEra, ServerNotification, ServerRequest};
use crate::stdio::ProcessAction;
use crate::transport::TransportNote;

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

/// A progress update of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Progress so far.
    pub progress: f64,
    /// The total, if known.
    pub total: Option<f64>,
    /// A message, if any.
    pub message: Option<String>,
}

/// What the connection reports to the application.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The connection is ready for calls: the era is chosen and the server has said who it is
    /// (its `initialize` answer, or in the stateless era what `server/discover` said).
    Ready {
        /// The era the connection settled on.
        era: ChosenEra,
        /// What the server said about itself.
        server: Box<InitializeResult>,
    },
    /// The handshake failed; the connection is closed.
    HandshakeFailed(crate::protocol::CallError),
    /// The server had forgotten the session and a new one was made (HTTP, handshake era); calls
    /// went on.
    SessionRenewed(Box<InitializeResult>),
    /// A call ended (exactly once per call).
    CallDone {
        /// The call.
        call: CallId,
        /// Its outcome.
        outcome: CallOutcome,
    },
    /// Progress of a call that asked for it.
    Progress {
        /// The call.
        call: CallId,
        /// The update.
        progress: Progress,
    },
    /// The server asks something of us: answer with
    /// [`Connection::respond`](super::Connection::respond), exactly once.
    ServerRequest(ServerRequest),
    /// The server answered a call with a task, or the task changed status; the call goes on
    /// until the task ends (its result is the call's).
    TaskStatus {
        /// The call.
        call: CallId,
        /// Where its task stands.
        status: crate::protocol::TaskStatus,
    },
    /// The server cancelled one of its requests to us; an answer to it is no longer sent.
    ServerRequestCancelled {
        /// The server's request id.
        id: Id,
        /// Why.
        reason: Option<String>,
    },
    /// A notification from the server.
    Notification(ServerNotification),
    /// The peer misbehaved in a way that did not end the connection.
    Diagnostic(Diagnostic),
    /// The server process is being started again (stdio): it did not answer the era probe, or
    /// exited during it, and the handshake goes to a fresh process.
    Restarting {
        /// Why.
        reason: String,
    },
    /// The server refused a request for want of authorization (HTTP): authorize, then hand
    /// the token to [`Connection::set_access_token`](super::Connection::set_access_token), or
    /// give up with [`Connection::authorization_failed`](super::Connection::authorization_failed).
    /// The refused request and every message after it wait until then (their own deadlines
    /// still run). Only with [`HttpOptions::authorization`](crate::HttpOptions::authorization).
    AuthorizationRequired(Box<crate::http::AuthorizationRequired>),
    /// The connection ended; every call has ended before this (the last event).
    Closed {
        /// Why.
        reason: Arc<str>,
    },
}

/// Something that arrived and could not be delivered, or a peer's misbehaviour. The connection
/// lives on; nothing is sent in answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Diagnostic {
    /// About responses and progress: an unknown, late or duplicate response, a progress token
    /// of no call, a request reusing an id, …
    Rpc(crate::rpc::Diagnostic),
    /// A stdio line or JSON body that was not a message (noise on stdout, an overlong line, bad
    /// JSON, a batch element that is not a message).
    Frame(FrameError),
    /// Something an SSE stream held that is not a message (another event type, bad JSON, an
    /// unfinished event, an event over the cap).
    Sse(SseDiagnostic),
    /// An HTTP-level note that ended nothing (a refused standalone stream, a failed
    /// notification POST, a failed DELETE).
    Http(String),
    /// A server request we could not serve, answered with an error.
    RefusedServerRequest {
        /// The server's request id.
        id: Id,
        /// Its method.
        method: String,
        /// The error we answered with.
        error: ErrorObject,
    },
    /// A tool the server listed was left out of the list: its `x-mcp-header` marks break the
    /// rules (HTTP, 2026-07-28), so its calls could not carry the headers the server expects.
    ToolDropped {
        /// The tool's name.
        tool: String,
        /// Why.
        reason: String,
    },
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Diagnostic::Rpc(d) => write!(f, "{d:?}"),
            Diagnostic::Frame(e) => write!(f, "{e}"),
            Diagnostic::Sse(e) => write!(f, "{e}"),
            Diagnostic::Http(note) => f.write_str(note),
            Diagnostic::RefusedServerRequest { id, method, error } => write!(
                f,
                "refused the server's request {id} ({method}): {} {}",
                error.code, error.message
            ),
            Diagnostic::ToolDropped { tool, reason } => {
                write!(f, "tool {tool:?} left out of the list: {reason}")
            }
        }
    }
}

impl Event {
    /// The public form of what the protocol layer reported.
    pub(crate) fn from_protocol(event: ClientEvent, era: Option<ChosenEra>) -> Event {
        match event {
            ClientEvent::Ready(server) => Event::Ready {
                era: era.unwrap_or(ChosenEra::Handshake),
                server,
            },
            ClientEvent::HandshakeFailed(e) => Event::HandshakeFailed(e),
            ClientEvent::SessionRenewed(s) => Event::SessionRenewed(s),
            ClientEvent::CallDone { call, outcome } => Event::CallDone { call, outcome },
            ClientEvent::Progress {
                call,
                progress,
                total,
                message,
            } => Event::Progress {
                call,
                progress: Progress {
                    progress,
                    total,
                    message,
                },
            },
            ClientEvent::ServerRequest(r) => Event::ServerRequest(r),
            ClientEvent::TaskStatus { call, status } => Event::TaskStatus { call, status },
            ClientEvent::ServerRequestCancelled { id, reason } => {
                Event::ServerRequestCancelled { id, reason }
            }
            ClientEvent::Diagnostic(ProtocolDiagnostic::Engine(d)) => {
                Event::Diagnostic(Diagnostic::Rpc(d))
            }
            ClientEvent::Diagnostic(ProtocolDiagnostic::RefusedServerRequest {
                id,
                method,
                error,
            }) => Event::Diagnostic(Diagnostic::RefusedServerRequest { id, method, error }),
            ClientEvent::Diagnostic(ProtocolDiagnostic::ToolDropped { tool, reason }) => {
                Event::Diagnostic(Diagnostic::ToolDropped { tool, reason })
            }
            ClientEvent::Closed { reason } => Event::Closed { reason },
        }
    }

    /// The public form of a transport's note.
    pub(crate) fn from_note(note: TransportNote) -> Event {
        Event::Diagnostic(match note {
            TransportNote::Frame(e) => Diagnostic::Frame(e),
            TransportNote::Sse(e) => Diagnostic::Sse(e),
            TransportNote::Http(s) => Diagnostic::Http(s),
            TransportNote::Restarting(reason) => return Event::Restarting { reason },
            TransportNote::AuthorizationRequired(r) => return Event::AuthorizationRequired(r),
        })
    }
}
