//! Which of a driver's sources woke it: each source (a pipe, the exit status) is polled with a
//! waker of its own that raises a flag before it wakes the driver, so a pass polls only the
//! sources that were signalled (a pipe that was not costs a `read` returning `EAGAIN`, the
//! exit status a `wait4`).
//!
//! The driver's waker is the connection's route (see the `route` module), the same for the
//! connection's whole life: it is kept at the first poll and read without a lock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Wake, Waker};

/// A source's flag and its waker.
pub(crate) struct Signal {
    inner: Arc<Inner>,
    waker: Waker,
}

struct Inner {
    raised: AtomicBool,
    /// The driver to wake when the source is signalled.
    driver: OnceLock<Waker>,
}

impl Wake for Inner {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.raised.store(true, Ordering::Release);
        if let Some(w) = self.driver.get() {
            w.wake_by_ref();
        }
    }
}

impl Signal {
    /// A source not polled yet (raised: it is polled at the first pass).
    pub(crate) fn new() -> Signal {
        let inner = Arc::new(Inner {
            raised: AtomicBool::new(true),
            driver: OnceLock::new(),
        });
        let waker = Waker::from(inner.clone());
        Signal { inner, waker }
    }

    /// Whether the source was signalled since it was last polled (and so must be polled now:
    /// the flag is lowered). `driver` is the waker the source's signal is passed on to: the
    /// connection's route, the same at every pass.
    pub(crate) fn take(&self, driver: &Waker) -> bool {
        let kept = self.inner.driver.get_or_init(|| driver.clone());
        debug_assert!(kept.will_wake(driver), "a source polled with another waker");
        self.inner.raised.swap(false, Ordering::AcqRel)
    }

    /// Raises the flag: the source is polled again at the next pass (it was left before it
    /// said `Pending`, so nothing would signal it).
    pub(crate) fn raise(&self) {
        self.inner.raised.store(true, Ordering::Release);
    }

    /// The context to poll the source with.
    pub(crate) fn context(&self) -> Context<'_> {
        Context::from_waker(&self.waker)
    }
}
