//! What a driver or a host reads of a [`Connection`]: its era and why, what the server said,
//! whether it is ready, closed or finished, its HTTP transport and session, how many requests
//! are pending, and the deadline of one call's request in flight (so that a driver can keep a
//! watch of its own on a call, which then ends by its timeout even when nothing else drives the
//! connection).

use std::time::Instant;

use super::{CallId, ChosenEra, Connection, EraReason, Transport};
#[cfg(doc)]
use super::{Event, McpCall};
use crate::config::HttpKind;
use crate::types::InitializeResult;

impl Connection {
    /// The era the connection settled on, once known.
    pub fn era(&self) -> Option<ChosenEra> {
        self.protocol.era()
    }

    /// Why the connection speaks its era: the era probe's answer (`server/discover` answered,
    /// refused with -32601 or an HTTP status, unanswered), or the era pinned. Known once the
    /// era is.
    pub fn era_reason(&self) -> Option<EraReason> {
        self.protocol.era_reason()
    }

    /// The log level every request asks for in the stateless era (set with
    /// [`McpCall::set_log_level`]), if any.
    pub fn request_log_level(&self) -> Option<&str> {
        self.protocol.log_level()
    }

    /// What the server said about itself, once ready.
    pub fn server(&self) -> Option<&InitializeResult> {
        self.protocol.server()
    }

    /// Whether the connection is ready for calls.
    pub fn is_ready(&self) -> bool {
        self.protocol.is_ready()
    }

    /// Whether the connection has ended for calls ([`Event::Closed`] was queued).
    pub fn is_closed(&self) -> bool {
        self.protocol.is_closed()
    }

    /// Whether nothing more will happen: the connection ended and nothing is left in flight
    /// (stdio: the process exited and no new one is asked for; HTTP: closed, and the session's
    /// DELETE is done or given up). The driver may stop.
    pub fn is_finished(&self) -> bool {
        match &self.transport {
            Transport::Stdio(s) => s.has_exited(),
            Transport::Streamable(h) => h.is_finished(),
            Transport::Sse(h) => h.is_finished(),
        }
    }

    /// The HTTP transport in use (`None` over stdio): Streamable HTTP, or the 2024-11-05
    /// HTTP+SSE transport (pinned, or found by [`Era::Auto`](crate::Era::Auto)).
    pub fn http_transport(&self) -> Option<HttpKind> {
        match &self.transport {
            Transport::Stdio(_) => None,
            Transport::Streamable(_) => Some(HttpKind::Streamable),
            Transport::Sse(_) => Some(HttpKind::Sse),
        }
    }

    /// The HTTP session the server assigned, if any.
    pub fn session(&self) -> Option<&str> {
        match &self.transport {
            Transport::Streamable(h) => h.session(),
            Transport::Stdio(_) | Transport::Sse(_) => None,
        }
    }

    /// How many of our requests await an answer.
    pub fn pending_requests(&self) -> usize {
        self.protocol.engine().stats().pending
    }

    /// The deadline of one call's request now in flight (its idle or absolute one, whichever
    /// comes first); `None` when no request of the call is in flight (it waits for the tools'
    /// list, for the application's inputs, for its task's next poll) or the call has ended.
    /// [`poll_timeout`](Self::poll_timeout) is never later.
    pub fn call_deadline(&self, call: CallId) -> Option<Instant> {
        self.protocol.call_deadline(call)
    }
}
