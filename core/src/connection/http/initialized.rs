//! The first request waits for `notifications/initialized` to be accepted, over either HTTP
//! transport.
//!
//! Concurrent POSTs reach a server in any order, and a server may finish setting up the session
//! when it takes that notification (server-everything then adds the tools the client's
//! capabilities allow): the first request must not overtake it. Only the connection's first
//! one is waited for; what waited for a renewed session goes at once.
//!
//! The wait is one budget with the callers': once a request held behind the gate has waited as
//! long as its caller allowed (its deadline passed, and it ended never sent), the gate is
//! overdue, and every request queued behind it from then on ends at once, never sent, saying
//! how long the server has been waited for, until the server answers the notification (the
//! gate then opens) or its exchange fails. A caller that lists and then calls waits once, not
//! twice.

use std::sync::Arc;

use super::ExchangeId;
use crate::rpc::HeldTimeout;

/// What a request held by the gate waits for, in its error.
pub(crate) const BEHIND: &str = "for the server to answer notifications/initialized";

/// The POST of the first `notifications/initialized`, until its response head.
#[derive(Debug, Default)]
pub(crate) struct InitializedGate {
    sent: bool,
    post: Option<ExchangeId>,
    /// Why what is queued behind it now ends at once: the wait has outlasted a caller's.
    overdue: Option<Arc<str>>,
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
            self.overdue = None;
        }
        holds
    }

    /// A request held while the gate `holding` ran out of its time (`held`): the gate is
    /// overdue from now on (see the [module](self)).
    pub(crate) fn held_timed_out(&mut self, holding: bool, held: Option<HeldTimeout>) {
        let Some(held) = held.filter(|_| holding && self.post.is_some()) else {
            return;
        };
        if self.overdue.is_none() {
            let why = format!(
                "the server has not answered notifications/initialized: {} and was never sent",
                held.waited()
            );
            self.overdue = Some(why.into());
        }
    }

    /// Why what is queued behind the gate ends at once, when it is overdue.
    pub(crate) fn overdue(&self) -> Option<&Arc<str>> {
        self.overdue.as_ref().filter(|_| self.post.is_some())
    }
}
