//! What the engine hands out from [`Engine::poll_output`](super::Engine::poll_output).

use std::borrow::Cow;

use super::options::{Origin, ProgressToken};
use super::outcome::{EndedAs, Outcome, Reply};
use crate::codec::jsonl::FrameError;
use crate::codec::sse::SseDiagnostic;
use crate::error::Closed;
use crate::jsonrpc::{ErrorObject, Id, Message, ParseError, RawJson, Request};

/// One thing for the transport or the application to act on.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Output {
    /// A message to write to the peer. Framing and bytes are the transport's job.
    Send(Message),
    /// One of our requests ended. Each request ends exactly once.
    Completed {
        /// Our id for the request.
        id: i64,
        /// Its method.
        method: Cow<'static, str>,
        /// Who made it.
        origin: Origin,
        /// The server's reply, or why it ended without one.
        outcome: Outcome,
    },
    /// Request `id` went on the wire and ends here before its answer (its deadline passed, it
    /// was cancelled or failed): the transport withdraws whatever still carries it (an
    /// exchange waiting for a connection, a stream). Its [`Output::Completed`] follows. Not
    /// given for requests ended by [`Engine::close`](super::Engine::close).
    Withdraw {
        /// Our id for the request.
        id: i64,
    },
    /// A progress notification for one of our pending requests.
    Progress {
        /// Our id for the request it belongs to.
        id: i64,
        /// The update.
        progress: Progress,
    },
    /// The peer sent us a request. Answer it once with
    /// [`Engine::respond`](super::Engine::respond).
    InboundRequest(Request),
    /// The peer cancelled a request it sent us that is still unanswered. A later `respond` for
    /// it is accepted but sends nothing.
    InboundCancelled {
        /// The peer's id for the request.
        id: Id,
        /// The reason the peer gave, if any.
        reason: Option<String>,
    },
    /// The peer misbehaved or something arrived that cannot be delivered. The connection lives
    /// on; nothing is sent in answer.
    Diagnostic(Diagnostic),
    /// The engine closed (the terminal event, given once). Every request that was pending has
    /// its own [`Output::Completed`] before this.
    Closed(Closed),
}

/// A progress update of a call: what the engine routed to its request by its progress token,
/// and what the application is given ([`Event::Progress`](crate::Event::Progress)).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Progress so far (increases with each update).
    pub progress: f64,
    /// The total, if known.
    pub total: Option<f64>,
    /// A message, if any.
    pub message: Option<String>,
}

/// What the engine knows about a request id that a response named but no pending request has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResponseFor {
    /// A request of ours that already ended this way: a response after a timeout or a cancel is
    /// late, after an answer it is a duplicate.
    Ended(EndedAs),
    /// A request of ours that ended too long ago to remember how.
    Forgotten,
    /// No request of ours ever had this id.
    NeverSent,
}

/// Something that arrived and could not be delivered, or a peer's misbehaviour: the engine's
/// (responses, progress, requests reusing an id), the framing's, HTTP's and the protocol's. The
/// connection lives on; nothing is sent in answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Diagnostic {
    /// A response whose id matches no pending request.
    UnmatchedResponse {
        /// The id it carried.
        id: Id,
        /// What that id was.
        status: ResponseFor,
        /// The error it carried, if it was an error response (a result is not kept).
        error: Option<ErrorObject>,
    },
    /// A response without an id (an error from a peer that could not read our request's id).
    ResponseWithoutId {
        /// What it carried.
        reply: Reply,
    },
    /// A progress notification whose token belongs to no pending request.
    UnknownProgressToken {
        /// The token.
        token: ProgressToken,
    },
    /// A progress update whose value does not increase on the last one its request got (the
    /// spec says progress MUST increase). It is not delivered, and it extends no deadline.
    ProgressNotIncreasing {
        /// The token.
        token: ProgressToken,
        /// The value it carried.
        progress: f64,
        /// The last value delivered for the request.
        previous: f64,
    },
    /// A `notifications/progress` whose params are not a progress update.
    MalformedProgress {
        /// Why they are not.
        error: String,
        /// The params as received.
        params: Option<RawJson>,
    },
    /// A request from the peer reusing the id of one of its requests we have not answered yet.
    /// It is neither surfaced nor answered (answering would answer the first one twice).
    DuplicateInboundRequest {
        /// The id.
        id: Id,
        /// The method of the duplicate.
        method: String,
    },
    /// A request from the peer that arrived while the inbound table was full. It was answered
    /// at once with a JSON-RPC error and is not surfaced.
    InboundRejected {
        /// The peer's id for it.
        id: Id,
        /// Its method.
        method: String,
        /// The cap on concurrent inbound requests.
        limit: usize,
    },
    /// An element of a received batch that is not a message.
    NotAMessage(ParseError),
    /// A request or notification that arrived after the engine closed. Responses after close
    /// are reported as [`Diagnostic::UnmatchedResponse`].
    AfterClose(Message),
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
    /// A resource subscription carried by a `subscriptions/listen` (stateless era) ended after
    /// it was acknowledged: the server ended it, or its stream was lost. Subscribe again to
    /// follow the resource.
    SubscriptionEnded {
        /// The resource.
        uri: String,
        /// How it ended.
        reason: String,
    },
    /// A tool the server listed was left out of the list: its `x-mcp-header` marks break the
    /// rules (HTTP, 2026-07-28), so its calls could not carry the headers the server expects.
    ToolDropped {
        /// The tool's name.
        tool: String,
        /// Why.
        reason: String,
    },
    /// A list call was ended before the server said its list was complete: a page gave a
    /// cursor an earlier page gave (its pages would repeat for ever), or the list ran to
    /// [`MAX_PAGES`](crate::MAX_PAGES) pages. The call's result holds the items of the pages
    /// read.
    ListCut {
        /// The list's method (`tools/list`, …).
        method: String,
        /// How many pages were read.
        pages: usize,
        /// Why it was ended.
        reason: String,
    },
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Diagnostic::UnmatchedResponse { id, status, error } => {
                match status {
                    ResponseFor::Ended(EndedAs::Answered) => {
                        write!(f, "a second response to request {id}, already answered")?
                    }
                    ResponseFor::Ended(EndedAs::TimedOut(_)) => {
                        write!(f, "a late response to request {id}, which had timed out")?
                    }
                    ResponseFor::Ended(EndedAs::Cancelled) => {
                        write!(f, "a late response to request {id}, which was cancelled")?
                    }
                    ResponseFor::Ended(EndedAs::Failed) => {
                        write!(f, "a late response to request {id}, which had failed")?
                    }
                    ResponseFor::Ended(EndedAs::Closed) => write!(
                        f,
                        "a late response to request {id}, ended by the connection's close"
                    )?,
                    ResponseFor::Forgotten => {
                        write!(f, "a response to request {id}, which ended long ago")?
                    }
                    ResponseFor::NeverSent => {
                        write!(f, "a response to id {id}, which no request of ours had")?
                    }
                }
                match error {
                    Some(e) => write!(f, ": JSON-RPC error code {}: {}", e.code, e.message),
                    None => Ok(()),
                }
            }
            Diagnostic::ResponseWithoutId { reply } => match reply {
                Reply::Error(e) => write!(
                    f,
                    "a response without an id: JSON-RPC error code {}: {}",
                    e.code, e.message
                ),
                Reply::Result(_) => f.write_str("a response without an id, with a result"),
            },
            Diagnostic::UnknownProgressToken { token } => write!(
                f,
                "progress for token {token}, which belongs to no request in flight"
            ),
            Diagnostic::ProgressNotIncreasing {
                token,
                progress,
                previous,
            } => write!(
                f,
                "progress {progress} for token {token} does not increase on {previous}; \
                 not delivered"
            ),
            Diagnostic::MalformedProgress { error, .. } => {
                write!(f, "a progress notification that is not one: {error}")
            }
            Diagnostic::DuplicateInboundRequest { id, method } => write!(
                f,
                "the server's request {id} ({method}) reuses the id of one not yet answered; \
                 ignored"
            ),
            Diagnostic::InboundRejected { id, method, limit } => write!(
                f,
                "the server's request {id} ({method}) was refused: {limit} of its requests \
                 are already being served"
            ),
            Diagnostic::NotAMessage(e) => {
                write!(f, "a batch element is not a JSON-RPC message: {e}")
            }
            Diagnostic::AfterClose(m) => match m.method() {
                Some(method) => write!(f, "{method} after the connection closed; ignored"),
                None => f.write_str("a response after the connection closed; ignored"),
            },
            Diagnostic::Frame(e) => write!(f, "{e}"),
            Diagnostic::Sse(e) => write!(f, "{e}"),
            Diagnostic::Http(note) => f.write_str(note),
            Diagnostic::RefusedServerRequest { id, method, error } => write!(
                f,
                "refused the server's request {id} ({method}): {} {}",
                error.code, error.message
            ),
            Diagnostic::SubscriptionEnded { uri, reason } => {
                write!(f, "the subscription to {uri} ended: {reason}")
            }
            Diagnostic::ToolDropped { tool, reason } => {
                write!(f, "tool {tool:?} left out of the list: {reason}")
            }
            Diagnostic::ListCut {
                method,
                pages,
                reason,
            } => write!(f, "{method} ended after {pages} pages: {reason}"),
        }
    }
}
