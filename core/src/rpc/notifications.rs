//! The bounded queue of notifications for the application.
//!
//! Notifications wait here, apart from [`Output`](super::Output), until the application reads
//! them with [`Engine::poll_notification`](super::Engine::poll_notification). Past the cap the
//! oldest are dropped and counted; the next read reports the count first, then the survivors.
//! So a slow reader never stalls the transport or the outcomes of requests, and never grows
//! memory past the cap.

use std::collections::VecDeque;

use super::shrink::shrink_if_sparse_queue;
use crate::jsonrpc::Notification;

/// One item from [`Engine::poll_notification`](super::Engine::poll_notification).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AppNotification {
    /// A notification from the peer.
    Notification(Notification),
    /// `count` notifications older than every one still queued were dropped unread because the
    /// queue was full.
    Dropped {
        /// How many.
        count: u64,
    },
}

#[derive(Debug)]
pub(crate) struct NotificationQueue {
    cap: usize,
    queue: VecDeque<Notification>,
    /// Dropped since the last [`AppNotification::Dropped`] was read.
    unreported: u64,
    /// Dropped since the engine was made.
    dropped_total: u64,
}

impl NotificationQueue {
    pub(crate) fn new(cap: usize) -> Self {
        NotificationQueue {
            cap,
            queue: VecDeque::new(),
            unreported: 0,
            dropped_total: 0,
        }
    }

    pub(crate) fn push(&mut self, notification: Notification) {
        if self.cap == 0 {
            self.count_drop();
            return;
        }
        if self.queue.len() >= self.cap {
            self.queue.pop_front();
            self.count_drop();
        }
        self.queue.push_back(notification);
    }

    fn count_drop(&mut self) {
        self.unreported = self.unreported.saturating_add(1);
        self.dropped_total = self.dropped_total.saturating_add(1);
    }

    pub(crate) fn pop(&mut self) -> Option<AppNotification> {
        if self.unreported > 0 {
            let count = std::mem::take(&mut self.unreported);
            return Some(AppNotification::Dropped { count });
        }
        let n = self.queue.pop_front()?;
        shrink_if_sparse_queue(&mut self.queue);
        Some(AppNotification::Notification(n))
    }

    /// Items a reader would get now: the queued notifications, plus one for an unreported drop.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn unread(&self) -> usize {
        self.queue.len() + usize::from(self.unreported > 0)
    }

    pub(crate) fn queued(&self) -> usize {
        self.queue.len()
    }

    pub(crate) fn dropped_total(&self) -> u64 {
        self.dropped_total
    }
}
