//! What a driver reads of a [`Connection`] to keep a watch of its own on one call: the
//! deadline of the call's request in flight, so that a call ends by its timeout even when
//! nothing else drives the connection.

use std::time::Instant;

use super::{CallId, Connection};

impl Connection {
    /// The deadline of one call's request now in flight (its idle or absolute one, whichever
    /// comes first); `None` when no request of the call is in flight (it waits for the tools'
    /// list, for the application's inputs, for its task's next poll) or the call has ended.
    /// [`poll_timeout`](Self::poll_timeout) is never later.
    pub fn call_deadline(&self, call: CallId) -> Option<Instant> {
        self.protocol.call_deadline(call)
    }
}
