//! What the client protocol hands the application: calls, their outcomes, server requests,
//! notifications and diagnostics.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::types::{InitializeResult, LoggingMessageParams};
use crate::jsonrpc::{ErrorObject, Id, Notification, RawJson};
use crate::rpc::{Diagnostic, EngineError, LocalError};

/// One application call: a request, or for list methods every page of it. Its value is the id of
/// the call's first request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(pub i64);

/// Per-call options.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOptions {
    /// Idle timeout: how long without an answer (or, with `reset_on_progress`, without progress).
    pub timeout: Duration,
    /// Maximum total time, never reset.
    pub max_total: Option<Duration>,
    /// Whether a progress notification resets the idle timeout.
    pub reset_on_progress: bool,
    /// Whether to ask for progress notifications (adds a progress token).
    pub progress: bool,
    /// Whether the call is safe to repeat: when its connection or stream is lost after it may
    /// have reached the server, it is re-issued once, with a new id, instead of ending with
    /// [`LocalError::MaybeExecuted`]. `ping`, the lists, `resources/read`, `prompts/get` and
    /// `completion/complete` always are; mark a call only if running it twice does no harm.
    pub safe_to_repeat: bool,
    /// Whether a tool call answered with a task ends at once with the task (the
    /// `CreateTaskResult`) instead of being followed to its end, for a host that follows it
    /// itself; in the handshake era the call then asks for task mode.
    pub detach_task: bool,
}

impl Default for CallOptions {
    fn default() -> Self {
        CallOptions {
            timeout: crate::rpc::DEFAULT_TIMEOUT,
            max_total: None,
            reset_on_progress: false,
            progress: false,
            safe_to_repeat: false,
            detach_task: false,
        }
    }
}

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
    /// An input the server asked for (stateless era) could not be given: the handler failed.
    #[error("the input {key:?} could not be given: {error}")]
    InputFailed {
        /// The server's key for the input.
        key: String,
        /// Why.
        error: ErrorObject,
    },
}

impl CallError {
    /// The call's error from a server's JSON-RPC error: a missing capability (`-32021`) is
    /// named; anything else is [`CallError::Server`].
    pub(crate) fn from_server(e: ErrorObject) -> CallError {
        if e.code != super::era::MISSING_REQUIRED_CLIENT_CAPABILITY {
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
            ClientError::Closed => CallError::Local(LocalError::ConnectionClosed {
                reason: "connection closed".into(),
            }),
            other => CallError::InvalidResult(other.to_string()),
        }
    }
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
    #[error("the connection is closed")]
    Closed,
    /// The command does not exist for this connection's transport (for example a stdio input
    /// given to an HTTP connection).
    #[error("not for this transport: {0}")]
    WrongTransport(&'static str),
    /// The configuration asks for something this client cannot do.
    #[error("unsupported configuration: {0}")]
    Config(String),
    /// A configured request header cannot be sent (see [`crate::header`]).
    #[error("configuration: {0}")]
    Header(crate::header::HeaderError),
    /// The request engine refused (caps, duplicate token, unknown inbound id).
    #[error(transparent)]
    Engine(EngineError),
}

impl From<EngineError> for ClientError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Closed => ClientError::Closed,
            other => ClientError::Engine(other),
        }
    }
}

/// A request the server sent us, for the application to answer with
/// [`Connection::respond`](crate::Connection::respond).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerRequest {
    /// `elicitation/create`: ask the user (form or url mode).
    Elicitation {
        /// The server's request id.
        id: Id,
        /// The request's params.
        params: Value,
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

/// What the protocol layer reports; the connection turns it into a public
/// [`Event`](crate::Event).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ClientEvent {
    /// The handshake completed.
    Ready(Box<InitializeResult>),
    /// The handshake failed; the connection is closed.
    HandshakeFailed(CallError),
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
        /// Progress so far.
        progress: f64,
        /// Total, if known.
        total: Option<f64>,
        /// Message, if any.
        message: Option<String>,
    },
    /// The server asks something of us.
    ServerRequest(ServerRequest),
    /// The task a call follows changed status.
    TaskStatus {
        /// The call.
        call: CallId,
        /// The task's status.
        status: TaskStatus,
    },
    /// The server cancelled one of its requests to us.
    ServerRequestCancelled {
        /// The server's request id.
        id: Id,
        /// Why.
        reason: Option<String>,
    },
    /// The peer misbehaved in a way that did not end the connection.
    Diagnostic(ProtocolDiagnostic),
    /// The connection ended; every call has ended.
    Closed {
        /// Why.
        reason: Arc<str>,
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
}

/// Peer misbehaviour noted by the protocol layer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ProtocolDiagnostic {
    /// From the request engine (unknown ids, bad progress, …).
    Engine(Diagnostic),
    /// A server request we could not serve, answered with an error.
    RefusedServerRequest {
        /// The server's request id.
        id: Id,
        /// Its method.
        method: String,
        /// The error we answered with.
        error: ErrorObject,
    },
    /// A listed tool left out of the list: its `x-mcp-header` marks break the rules.
    ToolDropped {
        /// The tool's name.
        tool: String,
        /// Why.
        reason: String,
    },
}
