//! What the client protocol hands the application: calls, their outcomes, server requests,
//! notifications and diagnostics.

use std::sync::Arc;

use serde_json::Value;

use crate::connection::protocol::era::ChosenEra;
use crate::error::{AuthorizationRequired, Closed};
use crate::jsonrpc::{ErrorObject, Id, Notification, RawJson};
use crate::rpc::{EngineError, LocalError};
use crate::types::{InitializeResult, LoggingMessageParams};

pub use super::call_options::{CallOptions, OnProgress, Progress};
pub use super::calls::CallId;
pub use crate::rpc::Diagnostic;

/// Why a call did not give a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The server answered with a JSON-RPC error.
    #[error("server error: {0}")]
    Server(ErrorObject),
    /// The call ended here: timeout, cancellation, lost stream, closed connection.
    #[error(transparent)]
    Local(LocalError),
    /// The server's result does not have the shape the method defines (or, in the stateless
    /// era, an unknown `resultType`, or more input rounds than allowed).
    #[error("invalid result: {0}")]
    InvalidResult(String),
    /// The server needs client capabilities this client did not declare (`-32021`, stateless
    /// era): a handler for them (elicitation, sampling, roots) would have to be installed.
    #[error("the server needs client capabilities this client did not declare ({required}): {}", error.message)]
    MissingCapability {
        /// The capabilities the server named (`data.requiredCapabilities`), as text.
        required: String,
        /// The server's error.
        error: ErrorObject,
    },
    /// The task the server answered the call with ended without a result: the server
    /// cancelled it, its time to live ran out, or the call's overall limit passed.
    #[error("task {task_id} ({status}): {reason}")]
    Task {
        /// The task's id.
        task_id: String,
        /// Its last status.
        status: String,
        /// Why the call ended.
        reason: String,
    },
    /// The server no longer speaks the stateless era (`-32022` naming only other versions, after
    /// the era was detected): the connection closed. A new connection speaks what it now
    /// speaks.
    #[error("the server now speaks only {}: {}", supported.join(", "), error.message)]
    VersionChanged {
        /// The versions the server named (`data.supported`).
        supported: Vec<String>,
        /// The server's error.
        error: ErrorObject,
    },
    /// The server declined what the call asked for, without an error: it acknowledged a
    /// resource subscription (stateless era) without the resource.
    #[error("declined: {0}")]
    Declined(String),
    /// An input the server asked for (stateless era) could not be given: the handler failed.
    #[error("the input {key:?} could not be given: {error}")]
    InputFailed {
        /// The server's key for the input.
        key: String,
        /// Why.
        error: ErrorObject,
    },
    /// A tool call broke its tool's schema from the last `tools/list` (feature `schemas`): its
    /// arguments the `inputSchema` (asked for with
    /// [`CallOptions::check_arguments`]; nothing was sent), or its result the `outputSchema`.
    #[cfg(feature = "schemas")]
    #[error("{error}")]
    Schema {
        /// What was broken, and how.
        error: crate::schema::SchemaError,
        /// The result as the server sent it (an output check), for whoever wants it anyway.
        result: Option<RawJson>,
    },
}

impl CallError {
    /// The call's error from a server's JSON-RPC error: a missing capability (`-32021`) is
    /// named; anything else is [`CallError::Server`].
    pub(crate) fn from_server(e: ErrorObject) -> CallError {
        if e.code != crate::types::codes::MISSING_REQUIRED_CLIENT_CAPABILITY {
            return CallError::Server(e);
        }
        let data: Option<Value> = e.data.as_ref().and_then(|d| d.parse().ok());
        let required = match data.as_ref().and_then(|d| d.get("requiredCapabilities")) {
            Some(Value::Object(m)) => m.keys().cloned().collect::<Vec<_>>().join(", "),
            Some(other) => other.to_string(),
            None => "unnamed".into(),
        };
        CallError::MissingCapability { required, error: e }
    }

    /// What a refused follow-up request (the next page, the next input round) means for its
    /// call.
    pub(crate) fn of_refused(e: ClientError) -> CallError {
        match e {
            ClientError::Closed(closed) => CallError::Local(LocalError::Closed(closed)),
            other => CallError::InvalidResult(other.to_string()),
        }
    }
}

/// Reads a call's raw result as the type its method defines; a result of another shape is
/// [`CallError::InvalidResult`], naming the method.
pub fn typed_result<T: serde::de::DeserializeOwned>(
    raw: &RawJson,
    method: &str,
) -> Result<T, CallError> {
    serde_json::from_str(raw.get()).map_err(|e| CallError::InvalidResult(format!("{method}: {e}")))
}

/// How a call ended: its raw result, or why there is none.
pub type CallOutcome = Result<RawJson, CallError>;

/// Misuse of the client: returned at once by the command that misused it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The handshake has not completed yet (only `ping` may go before it).
    #[error("the connection is not initialized yet")]
    NotReady,
    /// The handshake was already started.
    #[error("the connection was already started")]
    AlreadyStarted,
    /// The server did not offer the capability this call needs.
    #[error("the server does not offer {0}")]
    NotSupported(&'static str),
    /// No such call is in progress.
    #[error("no call {0:?} is in progress")]
    UnknownCall(CallId),
    /// The connection is closed; nothing more can be sent.
    #[error(transparent)]
    Closed(Closed),
    /// An argument of the call is not one the protocol allows (a log level that is none of
    /// `LoggingLevel`'s).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The configuration asks for something this client cannot do.
    #[error("unsupported configuration: {0}")]
    Config(String),
    /// A configured request header cannot be sent (see [`crate::header`]).
    #[error("configuration: {0}")]
    Header(crate::header::HeaderError),
    /// The server's URL is not one an HTTP client can be given (see
    /// [`check_url`](crate::config::check_url)): nothing was sent.
    #[error(transparent)]
    Url(crate::config::UrlError),
    /// As many requests as allowed are already pending
    /// ([`Limits::max_pending`](crate::Limits::max_pending)).
    #[error("too many pending requests (limit {limit})")]
    TooManyPending {
        /// The cap.
        limit: usize,
    },
    /// The progress token is already in use by a pending request.
    #[error("progress token {0} is already active")]
    ProgressTokenInUse(crate::rpc::ProgressToken),
    /// No request of ours with this id is pending (it ended, or never existed).
    #[error("request {0} is not pending")]
    NotPending(i64),
    /// No request from the server with this id awaits an answer (it is unknown, or was
    /// answered).
    #[error("no inbound request {0} awaits an answer")]
    UnknownInbound(Id),
    /// Every request id has been used.
    #[error("request ids are exhausted")]
    IdsExhausted,
    /// An input of one transport given to a connection over the other (stdout bytes to an
    /// HTTP connection, a response head to a stdio one): nothing changed.
    #[error("{input} is no input of a connection over {transport}")]
    WrongTransport {
        /// The input, in words.
        input: &'static str,
        /// The connection's transport: `stdio` or `HTTP`.
        transport: &'static str,
    },
}

impl From<EngineError> for ClientError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Closed(closed) => ClientError::Closed(closed),
            EngineError::TooManyPending { limit } => ClientError::TooManyPending { limit },
            EngineError::ProgressTokenInUse(token) => ClientError::ProgressTokenInUse(token),
            EngineError::NotPending(id) => ClientError::NotPending(id),
            EngineError::UnknownInbound(id) => ClientError::UnknownInbound(id),
            EngineError::IdsExhausted => ClientError::IdsExhausted,
        }
    }
}

/// A request the server sent us, for the application to answer with
/// [`Connection::respond`](crate::Connection::respond).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerRequest {
    /// `elicitation/create`: ask the user (form or url mode).
    #[non_exhaustive]
    Elicitation {
        /// The server's request id.
        id: Id,
        /// The request's params.
        params: Value,
        /// The requested fields (`requestedSchema.properties`) in the order the server wrote
        /// them, to ask a person in that order (`params` keeps its keys sorted).
        fields: Vec<String>,
    },
    /// `sampling/createMessage`: ask the host's model.
    Sampling {
        /// The server's request id.
        id: Id,
        /// The request's params.
        params: Value,
    },
    /// `roots/list`: which roots the host exposes.
    Roots {
        /// The server's request id.
        id: Id,
    },
}

impl ServerRequest {
    /// The server's id for this request.
    pub fn id(&self) -> &Id {
        match self {
            ServerRequest::Elicitation { id, .. }
            | ServerRequest::Sampling { id, .. }
            | ServerRequest::Roots { id } => id,
        }
    }
}

/// A notification from the server, typed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated`.
    ResourceUpdated {
        /// The resource.
        uri: String,
    },
    /// `notifications/message`: a log line.
    Log(LoggingMessageParams),
    /// `notifications/elicitation/complete` (2025-11-25): the out-of-band step of a URL-mode
    /// elicitation has finished; an id the host never saw is to be ignored.
    ElicitationComplete {
        /// The `elicitationId` of the URL-mode elicitation.
        elicitation_id: String,
    },
    /// Any other notification.
    Other(Notification),
    /// The server acknowledged a `subscriptions/listen` with the notifications it will send.
    SubscriptionAcknowledged {
        /// The subscription (the listen call).
        subscription: CallId,
        /// The subset of the asked-for notifications the server honours.
        notifications: Value,
    },
    /// A notification sent on a subscription (stateless era), demultiplexed by its id.
    ForSubscription {
        /// The subscription (the listen call).
        subscription: CallId,
        /// The notification.
        notification: Box<ServerNotification>,
    },
    /// Notifications were dropped because the application read too slowly.
    Dropped {
        /// How many.
        count: u64,
    },
}

/// Where a task a call follows stands (see [`Event::TaskStatus`](crate::Event::TaskStatus)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStatus {
    /// The task's id.
    pub task_id: String,
    /// `working`, `input_required`, `completed`, `failed`, `cancelled` (or another the server
    /// names).
    pub status: String,
    /// The server's words about it, if any.
    pub message: Option<String>,
    /// Which status of the task this is for the call: 1 for the first, one more at each
    /// change.
    pub changes: u32,
}

impl TaskStatus {
    /// The status as a progress update of its call: a call that runs as a task gets no
    /// progress notifications, so each change counts as one step, told in words ("task t-1:
    /// working (compiling)").
    pub fn as_progress(&self) -> Progress {
        let message = match &self.message {
            Some(m) => format!("task {}: {} ({m})", self.task_id, self.status),
            None => format!("task {}: {}", self.task_id, self.status),
        };
        Progress {
            progress: f64::from(self.changes),
            total: None,
            message: Some(message),
        }
    }
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
    HandshakeFailed(CallError),
    /// The server no longer speaks the stateless era the connection detected: a `-32022`
    /// named only these versions. The connection closes next; a new one detects the era again.
    EraLeft {
        /// The versions the server named.
        supported: Vec<String>,
    },
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
    /// [`Connection::respond`](crate::Connection::respond), exactly once.
    ServerRequest(ServerRequest),
    /// The server answered a call with a task, or the task changed status; the call goes on
    /// until the task ends (its result is the call's).
    TaskStatus {
        /// The call.
        call: CallId,
        /// Where its task stands.
        status: TaskStatus,
    },
    /// A request of a call was lost after it may have reached the server, and the call, safe
    /// to repeat, was sent again with a new id (once): the call goes on, and its caller sees
    /// only its outcome. Told for traces (a re-issue is an event on the call's span).
    CallReissued {
        /// The call.
        call: CallId,
        /// Why the first request was lost.
        reason: Arc<str>,
    },
    /// A stateless-era call came back `input_required`: its round `round` (1 for the first).
    /// The round's input requests follow as [`Event::ServerRequest`]s under the ids in
    /// `requests` (none when the round asks only to send the request state back: the call is
    /// sent again at once). Told for traces (a round is an event on the call's span, and its
    /// requests' spans are children of it).
    InputRequired {
        /// The call.
        call: CallId,
        /// Which round of the call this is.
        round: u32,
        /// The ids the round's input requests are surfaced under.
        requests: Vec<Id>,
    },
    /// The server pinged us (handshake era) and the connection answered it itself, at once:
    /// told for traces (the span of a server's request the client answers).
    ServerPinged {
        /// The server's request id.
        id: Id,
        /// The request's `params._meta`, when it had one (a trace context the server sent).
        meta: Option<serde_json::Map<String, Value>>,
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
    /// the connection the token, or give up
    /// ([`Connection::handle_authorization`](crate::Connection::handle_authorization)).
    /// The refused request and every message after it wait until then (their own deadlines
    /// still run). Only with [`HttpOptions::authorization`](crate::HttpOptions::authorization).
    AuthorizationRequired(Box<AuthorizationRequired>),
    /// A handler or callback of the host failed (panicked, or gave an answer that cannot be
    /// serialized): reported once, by the driver that ran it; everything else went on.
    HandlerFailed(super::host_failure::HandlerFailure),
    /// The connection ended; every call has ended before this (the last event).
    Closed(Closed),
}

impl Event {
    /// An HTTP-level note that ended nothing.
    pub(crate) fn http_note(note: impl Into<String>) -> Event {
        Event::Diagnostic(Diagnostic::Http(note.into()))
    }
}
