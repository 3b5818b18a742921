//! The deadlines of every pending request in one min-heap with lazy deletion.
//!
//! Ending a request or moving its idle deadline does not search the heap: the old entry stays and
//! is recognised as stale when it reaches the top (its request is gone, or its deadline moved).
//! Two rules keep this exact and bounded:
//!
//! - the top of the heap is never stale (stale entries are popped as soon as they surface), so
//!   [`Timers::next`] is the true earliest deadline and an empty engine has an empty heap;
//! - when stale entries outnumber live ones the heap is rebuilt from the live ones, so its size
//!   stays within twice the live deadlines plus a constant, and the work is amortised O(1) per
//!   staled entry.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::Instant;

use super::outcome::Deadline;
use super::shrink::shrink_if_sparse_heap;

/// Stale entries tolerated beyond the live count before a rebuild.
const STALE_SLACK: usize = 64;

/// One armed deadline.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timer {
    pub(crate) at: Instant,
    pub(crate) id: i64,
    pub(crate) which: Deadline,
    /// The idle deadline's generation when this entry was pushed (0 for total deadlines).
    pub(crate) generation: u32,
}

impl PartialEq for Timer {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Timer {}

impl PartialOrd for Timer {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timer {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest deadline first; ties fire
    /// in id order, then idle before total.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .at
            .cmp(&self.at)
            .then_with(|| other.id.cmp(&self.id))
            .then_with(|| rank(other.which).cmp(&rank(self.which)))
            .then_with(|| other.generation.cmp(&self.generation))
    }
}

fn rank(which: Deadline) -> u8 {
    match which {
        Deadline::Idle => 0,
        Deadline::Total => 1,
    }
}

/// The heap and the count of its entries that are still live.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    heap: BinaryHeap<Timer>,
    /// Entries that stand for a deadline still armed. The rest of the heap is stale.
    live: usize,
}

impl Timers {
    /// The earliest armed deadline.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.heap.peek().map(|t| t.at)
    }

    /// Entries held, live and stale.
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Arms a deadline.
    pub(crate) fn arm(&mut self, timer: Timer) {
        self.heap.push(timer);
        self.live += 1;
    }

    /// Records that `n` armed deadlines went stale without leaving the heap.
    pub(crate) fn disarmed(&mut self, n: usize) {
        debug_assert!(n <= self.live, "more deadlines disarmed than armed");
        self.live = self.live.saturating_sub(n);
    }

    /// Pops the earliest entry if it is due at `now`. The caller checks whether it is live; a
    /// live one it pops counts as disarmed here.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<Timer> {
        if self.heap.peek()?.at > now {
            return None;
        }
        self.heap.pop()
    }

    /// Counts a popped entry that was live as gone.
    pub(crate) fn fired(&mut self) {
        self.disarmed(1);
    }

    /// Restores the two rules after entries went stale: pops stale entries off the top, and
    /// rebuilds the heap from the live entries when stale ones dominate.
    pub(crate) fn tidy(&mut self, is_live: impl Fn(&Timer) -> bool) {
        if self.heap.len() > 2 * self.live + STALE_SLACK {
            self.heap.retain(|t| is_live(t));
            debug_assert_eq!(self.heap.len(), self.live, "live count drifted");
            self.live = self.heap.len();
        }
        while let Some(top) = self.heap.peek() {
            if is_live(top) {
                break;
            }
            self.heap.pop();
        }
        shrink_if_sparse_heap(&mut self.heap);
    }
}
