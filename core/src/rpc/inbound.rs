//! Requests the peer sent us, in the peer's id space, until each is answered once.

use std::collections::HashMap;

use super::shrink::shrink_if_sparse_map;
use crate::jsonrpc::Id;

/// What [`Connection::respond`](crate::Connection::respond) did with an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Responded {
    /// The response was queued for the peer.
    Sent,
    /// The peer had cancelled the request: the answer was accepted (the request is done) but not
    /// sent, since a receiver should not respond after a cancel.
    SuppressedAfterCancel,
    /// The server asked for the request to run as a task (2025-11-25): the answer is the task's
    /// result, which the server fetches with `tasks/result`.
    TaskResult,
}

/// One inbound request awaiting our answer.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Inbound {
    /// The peer sent `notifications/cancelled` for it.
    pub(crate) cancelled: bool,
}

/// Inbound requests keyed by the peer's ids. Keys come from the peer, so the map keeps std's
/// randomly seeded hasher.
#[derive(Debug, Default)]
pub(crate) struct InboundTable {
    entries: HashMap<Id, Inbound>,
}

impl InboundTable {
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn contains(&self, id: &Id) -> bool {
        self.entries.contains_key(id)
    }

    /// Records a new inbound request (the caller checked it is not there and the cap).
    pub(crate) fn insert(&mut self, id: Id) {
        self.entries.insert(id, Inbound::default());
    }

    /// Marks a request cancelled by the peer; `false` if it is unknown or was already cancelled.
    pub(crate) fn cancel(&mut self, id: &Id) -> bool {
        match self.entries.get_mut(id) {
            Some(entry) if !entry.cancelled => {
                entry.cancelled = true;
                true
            }
            _ => false,
        }
    }

    /// Removes a request being answered.
    pub(crate) fn take(&mut self, id: &Id) -> Option<Inbound> {
        let entry = self.entries.remove(id);
        shrink_if_sparse_map(&mut self.entries);
        entry
    }

    /// Forgets every request (the connection closed: none can be answered any more).
    pub(crate) fn clear(&mut self) {
        self.entries = HashMap::new();
    }
}
