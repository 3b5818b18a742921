//! What the connection tells beside calls, as bounded queues the application reads at its own
//! pace: the server's [`Notifications`] and the connection's [`Events`].

use std::sync::Arc;
use std::task::Poll;

use mcpwire_core::{Event, ServerNotification};

use super::handle::Client;
use crate::driver::run::SharedConnection;

impl Client {
    /// The server's notifications, as a bounded queue: a reader that falls behind loses the
    /// oldest and is told how many with [`ServerNotification::Dropped`].
    pub fn notifications(&self) -> Notifications {
        Notifications {
            shared: self.shared.clone(),
        }
    }

    /// What happened to the connection beside calls and notifications: readiness and the era
    /// chosen, session renewals, server requests the server cancelled, every diagnostic (unknown
    /// or late responses, malformed frames, bad SSE fields, HTTP notes), and the close. A
    /// bounded queue, shared by every reader: a reader that falls behind loses the oldest (see
    /// [`Events::dropped`]).
    pub fn events(&self) -> Events {
        Events {
            shared: self.shared.clone(),
        }
    }
}

/// The server's notifications; see [`Client::notifications`].
pub struct Notifications {
    shared: Arc<SharedConnection>,
}

impl Notifications {
    /// The next notification; `None` once the connection has ended and none are left.
    pub async fn next(&mut self) -> Option<ServerNotification> {
        std::future::poll_fn(|cx| {
            let mut st = self.shared.lock();
            let dropped = std::mem::take(&mut st.notifications.dropped);
            if dropped > 0 {
                return Poll::Ready(Some(ServerNotification::Dropped { count: dropped }));
            }
            if let Some(n) = st.notifications.items.pop_front() {
                return Poll::Ready(Some(n));
            }
            if st.terminal.is_some() {
                return Poll::Ready(None);
            }
            st.notifications.waker = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }
}

/// The connection's events; see [`Client::events`].
pub struct Events {
    shared: Arc<SharedConnection>,
}

impl Events {
    /// The next event; `None` once the connection has ended and none are left.
    pub async fn next(&mut self) -> Option<Event> {
        std::future::poll_fn(|cx| {
            let mut st = self.shared.lock();
            if let Some(e) = st.events.items.pop_front() {
                return Poll::Ready(Some(e));
            }
            if st.finished {
                return Poll::Ready(None);
            }
            st.events.waker = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }

    /// How many events were dropped unread so far because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.shared.lock().events.dropped
    }
}
