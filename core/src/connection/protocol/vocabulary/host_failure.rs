//! The host's own code failing: what a driver reports when a handler or a callback it ran for
//! the application panicked or gave an answer that cannot be sent
//! ([`Event::HandlerFailed`](super::events::Event::HandlerFailed)). The connection itself never
//! runs host code; the types live here so that the report travels on the one event stream.

use std::fmt;

use super::calls::CallId;
use crate::jsonrpc::Id;

/// The message of the `-32603` error a server gets when the handler answering its request
/// failed (panicked, or gave an answer that cannot be serialized). Fixed: the failure's own
/// words never go to the server, only to the event stream and `tracing`.
pub const HANDLER_FAILED: &str = "the client's handler failed";

/// Which of the host's handlers or callbacks failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HostHandler {
    /// The elicitation handler (`elicitation/create`).
    Elicitation,
    /// The sampling handler (`sampling/createMessage`).
    Sampling,
    /// The roots handler (`roots/list`).
    Roots,
    /// A call's progress callback.
    Progress,
    /// The callback given each line of the server's stderr.
    Stderr,
    /// The frame observer (the tap).
    FrameObserver,
    /// The observer of HTTP exchanges.
    HttpExchangeObserver,
    /// The observer of a stdio server's process actions.
    ProcessActionObserver,
    /// The host's part of an authorization (its authorizer or token store).
    Authorization,
    /// The function that makes a server's connect options (a host running many servers).
    ConnectOptions,
    /// The function that gives each request's trace context entries (`_meta`).
    TraceContext,
}

impl HostHandler {
    /// A word for it, as events and logs name it: `elicitation`, `sampling`, `roots`,
    /// `progress`, `stderr`, `frame observer`, `HTTP exchange observer`, `process action
    /// observer`, `authorization`, `connect options`, `trace context`.
    pub fn name(self) -> &'static str {
        match self {
            HostHandler::Elicitation => "elicitation",
            HostHandler::Sampling => "sampling",
            HostHandler::Roots => "roots",
            HostHandler::Progress => "progress",
            HostHandler::Stderr => "stderr",
            HostHandler::FrameObserver => "frame observer",
            HostHandler::HttpExchangeObserver => "HTTP exchange observer",
            HostHandler::ProcessActionObserver => "process action observer",
            HostHandler::Authorization => "authorization",
            HostHandler::ConnectOptions => "connect options",
            HostHandler::TraceContext => "trace context",
        }
    }
}

impl fmt::Display for HostHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A handler or callback of the host failed: it panicked, or its answer could not be
/// serialized. Reported once per failure; the connection, every other call and every later
/// handler go on. A server whose request it was answering got `-32603` with
/// [`HANDLER_FAILED`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HandlerFailure {
    /// Which handler or callback.
    pub handler: HostHandler,
    /// The server's request it was answering (a handler).
    pub request: Option<Id>,
    /// The call it was called for (a progress callback).
    pub call: Option<CallId>,
    /// What went wrong: the panic's message, or why the answer could not be serialized.
    pub reason: String,
}

impl HandlerFailure {
    /// A failure of `handler`, for `reason`.
    pub fn new(handler: HostHandler, reason: impl Into<String>) -> Self {
        HandlerFailure {
            handler,
            request: None,
            call: None,
            reason: reason.into(),
        }
    }

    /// The same, naming the server's request it was answering.
    pub fn for_request(mut self, id: Id) -> Self {
        self.request = Some(id);
        self
    }

    /// The same, naming the call it was called for.
    pub fn for_call(mut self, call: CallId) -> Self {
        self.call = Some(call);
        self
    }
}

impl fmt::Display for HandlerFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the host's {} handler failed", self.handler)?;
        if let Some(id) = &self.request {
            write!(f, " (the server's request {id})")?;
        }
        if let Some(call) = &self.call {
            write!(f, " (call {})", call.0)?;
        }
        write!(f, ": {}", self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_names_its_handler_and_its_request() {
        let f = HandlerFailure::new(HostHandler::Roots, "called `Option::unwrap()` on a `None`")
            .for_request(Id::Num(0));
        assert_eq!(
            f.to_string(),
            "the host's roots handler failed (the server's request 0): called `Option::unwrap()` on a `None`"
        );
    }
}
