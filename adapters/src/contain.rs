//! Host code, run so that its failures stay its own.
//!
//! A handler, a callback or an observer the host gave is called through [`call`] or polled
//! through [`CatchUnwind`]: a panic in it is caught where the host's code is entered, turned
//! into its message, and reported once ([`HandlerFailure`]); it never unwinds through the
//! connection's loop, a lock of ours or the caller's future. Both are plain `std` unwinding
//! guards, with no runtime of their own: they work the same on any executor.
//!
//! The observers the connection calls while it steps (the frame observer, the HTTP exchange
//! and process action observers, the stderr callback) are wrapped once, at connect time
//! ([`Taps`]); their failures wait in a [`FailureLog`] until the step ends and are then told on
//! the event stream.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use mcpwire_core::tap::{Direction, FrameObserver};
use mcpwire_core::{HandlerFailure, HostHandler};

use crate::http::io::HttpExchangeObserver;
use crate::stdio::pipe_io::ProcessActionObserver;
use crate::stdio::stderr::StderrCallback;

/// The words of a panic: its message when it has one (`panic!("…")`, `unwrap` on `None`,
/// `expect`), else a fixed phrase.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        format!("it panicked: {s}")
    } else if let Some(s) = payload.downcast_ref::<String>() {
        format!("it panicked: {s}")
    } else {
        "it panicked".to_owned()
    }
}

/// Calls host code; a panic in it comes back as its words.
pub(crate) fn call<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| panic_message(&*payload))
}

/// A future of the host's, polled so that a panic in its `poll` ends it with the panic's words
/// instead of unwinding into whoever polls it. Once it has panicked it is never polled again
/// (its state is unknown): it stays ended.
pub(crate) struct CatchUnwind<F> {
    future: Option<F>,
}

impl<F> CatchUnwind<F> {
    pub(crate) fn new(future: F) -> Self {
        CatchUnwind {
            future: Some(future),
        }
    }
}

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(future) = self.future.as_mut() else {
            return Poll::Ready(Err("it was polled after it failed".into()));
        };
        match call(|| Pin::new(future).poll(cx)) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(out)) => {
                self.future = None;
                Poll::Ready(Ok(out))
            }
            Err(words) => {
                // Dropping a future that panicked may panic again: that too stays here.
                let dropped = self.future.take();
                let _ = call(move || drop(dropped));
                Poll::Ready(Err(words))
            }
        }
    }
}

impl<F> Drop for CatchUnwind<F> {
    fn drop(&mut self) {
        // Dropping the host's future runs its code too (a handler the server cancelled, or one
        // whose connection ended): a panic there stays here.
        if let Some(future) = self.future.take() {
            let _ = call(move || drop(future));
        }
    }
}

/// Failures of the observers called while the connection steps, kept until the step ends (the
/// state's lock is held then: the event cannot be pushed at once). Bounded: past
/// [`FailureLog::CAP`] waiting, the oldest are dropped (each failure is also told to `tracing`
/// as it happens).
#[derive(Default)]
pub(crate) struct FailureLog {
    waiting: Mutex<Vec<HandlerFailure>>,
}

impl FailureLog {
    /// How many failures wait at most.
    const CAP: usize = 64;

    pub(crate) fn push(&self, failure: HandlerFailure) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if waiting.len() == Self::CAP {
            waiting.remove(0);
        }
        waiting.push(failure);
    }

    /// The failures waiting, oldest first.
    pub(crate) fn take(&self) -> Vec<HandlerFailure> {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *waiting)
    }
}

/// Calls an observer of the host's; a panic is logged as a failure of `handler` and the
/// observer is called again next time.
fn observe(log: &FailureLog, handler: HostHandler, f: impl FnOnce()) {
    if let Err(words) = call(f) {
        crate::driver::trace::handler_failed(&HandlerFailure::new(handler, words.clone()));
        log.push(HandlerFailure::new(handler, words));
    }
}

/// Wraps the observers a connection calls while it steps, so that their panics are caught and
/// logged in one [`FailureLog`].
pub(crate) struct Taps {
    pub(crate) log: Arc<FailureLog>,
}

impl Taps {
    pub(crate) fn new() -> Taps {
        Taps {
            log: Arc::new(FailureLog::default()),
        }
    }

    /// A callback for each line of the server's stderr.
    pub(crate) fn stderr(&self, f: StderrCallback) -> StderrCallback {
        let log = self.log.clone();
        Arc::new(move |line: &str| observe(&log, HostHandler::Stderr, || f(line)))
    }

    /// An observer of a stdio server's process actions.
    pub(crate) fn process(&self, f: ProcessActionObserver) -> ProcessActionObserver {
        let log = self.log.clone();
        Arc::new(move |action| observe(&log, HostHandler::ProcessActionObserver, || f(action)))
    }

    /// An observer of HTTP exchanges.
    pub(crate) fn http(&self, f: HttpExchangeObserver) -> HttpExchangeObserver {
        let log = self.log.clone();
        Arc::new(move |note| observe(&log, HostHandler::HttpExchangeObserver, || f(note)))
    }

    /// The frame observer.
    pub(crate) fn frames(&self, inner: Box<dyn FrameObserver>) -> Box<dyn FrameObserver> {
        Box::new(ContainedFrames {
            inner,
            log: self.log.clone(),
        })
    }
}

/// A frame observer whose panics are caught and logged.
struct ContainedFrames {
    inner: Box<dyn FrameObserver>,
    log: Arc<FailureLog>,
}

impl FrameObserver for ContainedFrames {
    fn frame(&mut self, direction: Direction, bytes: &[u8]) {
        let inner = &mut self.inner;
        observe(&self.log, HostHandler::FrameObserver, || {
            inner.frame(direction, bytes)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_host_code_comes_back_as_its_words() {
        assert_eq!(call(|| 7), Ok(7));
        let none: Option<u8> = "x".parse().ok();
        let words = call(|| none.unwrap()).unwrap_err();
        assert!(words.contains("on a `None` value"), "{words}");
        let words = call(|| panic!("{} went wrong", "this")).unwrap_err();
        assert_eq!(words, "it panicked: this went wrong");
        let words = call(|| std::panic::panic_any(42u8)).unwrap_err();
        assert_eq!(words, "it panicked");
    }

    #[test]
    fn a_future_that_panics_ends_with_the_words_and_stays_ended() {
        let mut polls = 0;
        let future = std::future::poll_fn(move |_| {
            polls += 1;
            if polls == 2 {
                panic!("second poll");
            }
            Poll::<()>::Pending
        });
        let mut caught = CatchUnwind::new(Box::pin(future));
        let waker = std::task::Waker::noop();
        let cx = &mut Context::from_waker(waker);
        assert!(Pin::new(&mut caught).poll(cx).is_pending());
        match Pin::new(&mut caught).poll(cx) {
            Poll::Ready(Err(words)) => assert_eq!(words, "it panicked: second poll"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            Pin::new(&mut caught).poll(cx),
            Poll::Ready(Err(_))
        ));
    }

    #[test]
    fn observers_that_panic_are_logged_and_called_again() {
        let taps = Taps::new();
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = calls.clone();
        let stderr = taps.stderr(Arc::new(move |line: &str| {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            assert_ne!(line, "boom", "the host's bug");
        }));
        stderr("boom");
        stderr("fine");
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2);
        let logged = taps.log.take();
        assert_eq!(logged.len(), 1);
        assert_eq!(logged[0].handler, HostHandler::Stderr);
        assert!(
            logged[0].reason.contains("the host's bug"),
            "{}",
            logged[0].reason
        );
        assert!(taps.log.take().is_empty(), "told once");
    }
}
