//! The runtime's timer behind one small type: a wake-up at an instant, moved as often as needed,
//! that fires once and then waits to be set again.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

/// Now on the clock of `handle`'s runtime: paused and advanced with it in a test.
#[cfg(feature = "tokio")]
pub(crate) fn tokio_now(handle: &::tokio::runtime::Handle) -> Instant {
    let _entered = handle.enter();
    ::tokio::time::Instant::now().into_std()
}

/// A wake-up at an instant, on the connection's runtime. Not armed until [`set_at`](Self::set_at);
/// after it fired, [`poll`](Self::poll) gives `Pending` until it is set again.
pub(crate) struct Timer(Inner);

enum Inner {
    /// async-io's timer (its reactor).
    #[cfg(feature = "smol")]
    Smol(async_io::Timer),
    /// tokio's timer; made at the first `set_at` (inside the runtime's context), dropped once it
    /// fired.
    #[cfg(feature = "tokio")]
    Tokio {
        handle: ::tokio::runtime::Handle,
        sleep: Option<Pin<Box<::tokio::time::Sleep>>>,
    },
}

impl Timer {
    /// async-io's timer, not armed.
    #[cfg(feature = "smol")]
    pub(crate) fn smol() -> Timer {
        Timer(Inner::Smol(async_io::Timer::never()))
    }

    /// tokio's timer on `handle`'s runtime, not armed.
    #[cfg(feature = "tokio")]
    pub(crate) fn tokio(handle: ::tokio::runtime::Handle) -> Timer {
        Timer(Inner::Tokio {
            handle,
            sleep: None,
        })
    }

    /// Now, on the clock of the timer's runtime (see [`Runtime::now`](super::Runtime::now)).
    pub(crate) fn now(&self) -> Instant {
        match self.0 {
            #[cfg(feature = "smol")]
            Inner::Smol(_) => Instant::now(),
            #[cfg(feature = "tokio")]
            Inner::Tokio { ref handle, .. } => tokio_now(handle),
        }
    }

    /// Arms the timer for `at` (moves it there when it was armed).
    pub(crate) fn set_at(&mut self, at: Instant) {
        match self.0 {
            #[cfg(feature = "smol")]
            Inner::Smol(ref mut timer) => {
                timer.set_at(at);
            }
            #[cfg(feature = "tokio")]
            Inner::Tokio {
                ref handle,
                ref mut sleep,
            } => {
                let at = ::tokio::time::Instant::from_std(at);
                match sleep {
                    Some(sleep) => sleep.as_mut().reset(at),
                    None => {
                        let _entered = handle.enter();
                        *sleep = Some(Box::pin(::tokio::time::sleep_until(at)));
                    }
                }
            }
        }
    }

    /// Disarms the timer.
    pub(crate) fn clear(&mut self) {
        match self.0 {
            #[cfg(feature = "smol")]
            Inner::Smol(ref mut timer) => *timer = async_io::Timer::never(),
            #[cfg(feature = "tokio")]
            Inner::Tokio { ref mut sleep, .. } => *sleep = None,
        }
    }

    /// `Ready` once when the instant has come (then disarmed), else `Pending` with `cx`'s waker
    /// kept to be woken then.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match self.0 {
            #[cfg(feature = "smol")]
            Inner::Smol(ref mut timer) => Pin::new(timer).poll(cx).map(|_| ()),
            #[cfg(feature = "tokio")]
            Inner::Tokio { ref mut sleep, .. } => {
                let Some(armed) = sleep.as_mut() else {
                    return Poll::Pending;
                };
                // tokio's timer panics when polled after its runtime shut down: then it will
                // never fire, and firing now lets the waiter look again (and find the
                // connection ended with its driver).
                let fired = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    armed.as_mut().poll(cx).is_ready()
                }))
                .unwrap_or(true);
                if !fired {
                    return Poll::Pending;
                }
                *sleep = None;
                Poll::Ready(())
            }
        }
    }
}
