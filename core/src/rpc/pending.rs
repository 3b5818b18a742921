//! The table of our requests still waiting for an end, and the bounded record of how recent
//! ones ended.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::time::{Duration, Instant};

use super::options::{Origin, ProgressToken};
use super::outcome::Deadline;
use super::outcome::EndedAs;
use super::timers::Timer;
use crate::id_hash::IdHasher;

/// A map keyed by our request ids.
pub(crate) type IdMap<V> = HashMap<i64, V, BuildHasherDefault<IdHasher>>;

/// One of our requests, waiting for its end.
#[derive(Debug)]
pub(crate) struct Pending {
    /// Stored to refuse a wire cancel of `initialize`, and handed back with the outcome.
    pub(crate) method: Cow<'static, str>,
    pub(crate) origin: Origin,
    pub(crate) idle_timeout: Duration,
    /// The idle deadline, if armed.
    pub(crate) idle: Option<Instant>,
    /// Bumped each time the idle deadline is re-armed, so older heap entries read as stale.
    pub(crate) idle_generation: u32,
    /// The absolute deadline, if armed. Never moved.
    pub(crate) total: Option<Instant>,
    /// Its length, for the error when it passes.
    pub(crate) max_total: Option<Duration>,
    pub(crate) reset_on_progress: bool,
    /// Whether a progress update came for it.
    pub(crate) progress_seen: bool,
    /// The last progress value delivered for it (each must be greater).
    pub(crate) last_progress: Option<f64>,
    pub(crate) cancel_on_wire: bool,
    pub(crate) progress_token: Option<ProgressToken>,
    /// Whether the transport put it on the wire ([`Engine::leave`](super::Engine::leave)).
    pub(crate) on_wire: bool,
}

impl Pending {
    /// How many heap entries stand for this request's deadlines.
    pub(crate) fn armed(&self) -> usize {
        usize::from(self.idle.is_some()) + usize::from(self.total.is_some())
    }

    /// Whether a heap entry stands for a deadline of this request that is still armed.
    pub(crate) fn is_live(&self, timer: &Timer) -> bool {
        match timer.which {
            Deadline::Idle => {
                self.idle == Some(timer.at) && self.idle_generation == timer.generation
            }
            Deadline::Total => self.total == Some(timer.at),
        }
    }

    /// Whether ending this request early should send `notifications/cancelled`: only when it
    /// went on the wire, and never for `initialize`, which must not be cancelled.
    pub(crate) fn cancels_on_wire(&self) -> bool {
        self.on_wire && self.cancel_on_wire && self.method != "initialize"
    }
}

/// How the most recently ended requests ended, up to a fixed number; the oldest are forgotten.
#[derive(Debug)]
pub(crate) struct EndedRecord {
    capacity: usize,
    order: VecDeque<i64>,
    how: IdMap<EndedAs>,
}

impl EndedRecord {
    pub(crate) fn new(capacity: usize) -> Self {
        EndedRecord {
            capacity,
            order: VecDeque::new(),
            how: IdMap::default(),
        }
    }

    /// Remembers how `id` ended (each id ends once, so it is not in the record yet).
    pub(crate) fn remember(&mut self, id: i64, how: EndedAs) {
        if self.capacity == 0 {
            return;
        }
        if self.order.len() >= self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.how.remove(&old);
            }
        }
        self.order.push_back(id);
        self.how.insert(id, how);
    }

    /// How `id` ended, if it is recent enough to be remembered.
    pub(crate) fn get(&self, id: i64) -> Option<EndedAs> {
        self.how.get(&id).copied()
    }

    /// Ids remembered.
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }
}
