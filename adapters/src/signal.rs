//! Which of a driver's sources woke it: each source (a pipe, the exit status) is polled with a
//! waker of its own that raises a flag before it wakes the driver, so a pass polls only the
//! sources that were signalled (a pipe that was not costs a `read` returning `EAGAIN`, the
//! exit status a `wait4`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};

/// A source's flag and its waker.
pub(crate) struct Signal {
    inner: Arc<Inner>,
    waker: Waker,
}

struct Inner {
    raised: AtomicBool,
    /// The driver to wake when the source is signalled.
    driver: Mutex<Option<Waker>>,
}

impl Wake for Inner {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.raised.store(true, Ordering::Release);
        let driver = self.driver.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = driver.as_ref() {
            w.wake_by_ref();
        }
    }
}

impl Signal {
    /// A source not polled yet (raised: it is polled at the first pass).
    pub(crate) fn new() -> Signal {
        let inner = Arc::new(Inner {
            raised: AtomicBool::new(true),
            driver: Mutex::new(None),
        });
        let waker = Waker::from(inner.clone());
        Signal { inner, waker }
    }

    /// Whether the source was signalled since it was last polled (and so must be polled now:
    /// the flag is lowered). `driver` is the waker the source's signal is passed on to.
    pub(crate) fn take(&self, driver: &Waker) -> bool {
        {
            let mut stored = self.inner.driver.lock().unwrap_or_else(|e| e.into_inner());
            match stored.as_ref() {
                Some(w) if w.will_wake(driver) => {}
                _ => *stored = Some(driver.clone()),
            }
        }
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
