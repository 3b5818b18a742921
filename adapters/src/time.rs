//! The runtime's timers, behind one small type: a call's own watch on its deadline uses it, so
//! that a runtime other than async-io's can give its timer here alone.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

/// A wake-up at an instant.
pub(crate) struct Sleep(async_io::Timer);

/// A wake-up at `at`.
pub(crate) fn sleep_until(at: Instant) -> Sleep {
    Sleep(async_io::Timer::at(at))
}

impl Sleep {
    /// Moves the wake-up to `at`.
    pub(crate) fn reset(&mut self, at: Instant) {
        self.0.set_at(at);
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx).map(|_| ())
    }
}
