//! Giving memory back after a burst: the engine's tables shrink when they are mostly empty.

use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::Hash;

/// Capacity a table keeps however empty it gets. Past it, a table that is mostly empty shrinks,
/// so memory returns to its baseline after a burst.
const BASELINE_CAPACITY: usize = 64;

fn sparse(len: usize, capacity: usize) -> bool {
    capacity > BASELINE_CAPACITY && len < capacity / 4
}

fn target(len: usize) -> usize {
    (len * 2).max(BASELINE_CAPACITY)
}

/// Shrinks a hash map that is mostly empty. Amortised O(1): a shrink to twice the length follows
/// at least that many removals.
pub(crate) fn shrink_if_sparse_map<K: Eq + Hash, V, S: std::hash::BuildHasher>(
    map: &mut HashMap<K, V, S>,
) {
    if sparse(map.len(), map.capacity()) {
        map.shrink_to(target(map.len()));
    }
}

/// Shrinks a queue that is mostly empty.
pub(crate) fn shrink_if_sparse_queue<T>(queue: &mut VecDeque<T>) {
    if sparse(queue.len(), queue.capacity()) {
        queue.shrink_to(target(queue.len()));
    }
}

/// Shrinks a heap that is mostly empty.
pub(crate) fn shrink_if_sparse_heap<T: Ord>(heap: &mut BinaryHeap<T>) {
    if sparse(heap.len(), heap.capacity()) {
        heap.shrink_to(target(heap.len()));
    }
}
