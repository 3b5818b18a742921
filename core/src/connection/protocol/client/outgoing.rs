//! What leaves for the transport: the messages queued, and the rule that a request goes only
//! while its caller still waits for it (at most once).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use super::ClientProtocol;
use crate::connection::protocol::CallId;
use crate::jsonrpc::Message;
#[cfg(doc)]
use crate::rpc::Engine;
use crate::rpc::{Deadline, LocalError};

impl ClientProtocol {
    /// The deadline of call `call`'s request now in flight (its first, or a later page or
    /// round); `None` when none is (the call waits for the tools' list, for the application's
    /// inputs, for a task's next poll) or the call has ended.
    pub fn call_deadline(&self, call: CallId) -> Option<Instant> {
        let id = self.current.get(&call).copied().unwrap_or(call.0);
        match self.calls.get(&id) {
            Some(state) if state.call == call => self.engine.deadline_of(id),
            _ => None,
        }
    }

    /// The next message for the transport to carry. A request among them may still end
    /// before it leaves: ask [`may_send`](Self::may_send) at the moment it goes.
    pub fn poll_transmit(&mut self) -> Option<Message> {
        self.transmit.pop_front()
    }

    /// A message from [`poll_transmit`](Self::poll_transmit) the transport is done with
    /// (encoded, or dropped): every transport hands each one back. A stateless-era call that
    /// may be asked for input keeps its request's params from it, so the argument is kept once,
    /// not copied as the request is queued.
    pub(crate) fn transmitted(&mut self, m: Message) {
        let Message::Request(r) = m else {
            return;
        };
        let Some(id) = r.id.as_i64() else {
            return;
        };
        if let Some(retry) = self.calls.get_mut(&id).and_then(|c| c.retry.as_mut()) {
            retry.keep_sent(r.params);
        }
    }

    /// Whether a message may go on the wire now, asked by the transport at the moment it puts
    /// one there (`request`: the id of a request; `None` for anything else, which always may).
    /// A request goes only while it is pending: one that ended while it waited anywhere
    /// (behind `notifications/initialized`, a session renewal, an authorization, a restart) is
    /// dropped there, and no cancellation is ever sent for it. One that goes is marked as
    /// sent, so that ending it early tells the server.
    pub(crate) fn may_send(&mut self, request: Option<i64>) -> bool {
        request.is_none_or(|id| self.engine.leave(id))
    }

    /// What the transport holds requests back for now (see [`Engine::hold`]).
    pub(crate) fn hold(&mut self, behind: Option<&'static str>) {
        self.engine.hold(behind);
    }

    /// The last request whose deadline passed while the transport held it (see
    /// [`Engine::take_held_timeout`]).
    pub(crate) fn take_held_timeout(&mut self) -> Option<crate::rpc::HeldTimeout> {
        self.engine.take_held_timeout()
    }

    /// What the requests queued and not yet sent waited for has failed, or its wait timed out
    /// (`which`: the deadline the errors name; `None` for a wait that failed otherwise): each
    /// ends as [`LocalError::NotSent`] with `reason` and is dropped from the queue
    /// (notifications and answers stay).
    pub(crate) fn fail_unsent(&mut self, now: Instant, reason: &str, which: Option<Deadline>) {
        let reason: Arc<str> = reason.into();
        let mut kept = VecDeque::with_capacity(self.transmit.len());
        for m in std::mem::take(&mut self.transmit) {
            match &m {
                Message::Request(r) => {
                    if let Some(id) = r.id.as_i64() {
                        let error = LocalError::NotSent {
                            which,
                            reason: reason.clone(),
                        };
                        let _ = self.engine.fail(now, id, error);
                    }
                }
                _ => kept.push_back(m),
            }
        }
        self.transmit = kept;
        self.pump(now);
    }

    /// The next request that left and then ended here before its answer (a deadline, a
    /// cancel): an HTTP transport withdraws the exchange that still carries it.
    pub(crate) fn poll_withdrawn(&mut self) -> Option<i64> {
        self.withdrawn.pop()
    }
}
