//! The first request waits for `notifications/initialized` to be accepted, over either HTTP
//! transport.
//!
//! Concurrent POSTs reach a server in any order, and a server may finish setting up the session
//! when it takes that notification (server-everything then adds the tools the client's
//! capabilities allow): the first request must not overtake it. Only the connection's first
//! one is waited for; what waited for a renewed session goes at once.

use super::ExchangeId;

/// What a request held by the gate waits for, in its error.
pub(crate) const BEHIND: &str = "for the server to answer notifications/initialized";

/// The POST of the first `notifications/initialized`, until its response head.
#[derive(Debug, Default)]
pub(crate) struct InitializedGate {
    sent: bool,
    post: Option<ExchangeId>,
}

impl InitializedGate {
    /// A message of `method` went out as POST `exchange`.
    pub(crate) fn posted(&mut self, method: Option<&str>, exchange: ExchangeId) {
        if !self.sent && method == Some("notifications/initialized") {
            self.sent = true;
            self.post = Some(exchange);
        }
    }

    /// Whether `exchange` is the notification's POST, still awaited.
    pub(crate) fn is_gate(&self, exchange: ExchangeId) -> bool {
        self.post == Some(exchange)
    }

    /// Whether nothing else may be POSTed yet: the notification's POST is `waiting` (no
    /// response head yet, and something will end the wait).
    pub(crate) fn holds(&mut self, waiting: impl FnOnce(ExchangeId) -> bool) -> bool {
        let Some(post) = self.post else {
            return false;
        };
        let holds = waiting(post);
        if !holds {
            self.post = None;
        }
        holds
    }
}
