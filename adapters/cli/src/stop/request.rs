//! A request to stop: what it is, its exit code and words, and whether it is the first one,
//! the first one sent twice, or a second one (noted safely from a signal handler).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::Duration;

use crate::exit_codes;

/// What asked the command to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Request {
    /// Ctrl-C (SIGINT).
    Interrupt,
    /// SIGTERM; Ctrl-Break on Windows.
    Terminate,
    /// SIGHUP: the terminal went away; on Windows the console closed, the user logged off or
    /// the system is shutting down.
    HangUp,
}

impl Request {
    /// The exit code the command ends with after its graceful close.
    pub(crate) fn code(self) -> u8 {
        match self {
            Request::Interrupt => exit_codes::INTERRUPTED,
            Request::Terminate => exit_codes::TERMINATED,
            Request::HangUp => exit_codes::HUNG_UP,
        }
    }

    /// What happened, in words.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Request::Interrupt => "interrupted",
            #[cfg(not(windows))]
            Request::Terminate => "terminated (SIGTERM)",
            #[cfg(windows)]
            Request::Terminate => "terminated (Ctrl-Break)",
            #[cfg(not(windows))]
            Request::HangUp => "hung up (SIGHUP)",
            #[cfg(windows)]
            Request::HangUp => "the console closed",
        }
    }

    /// What the request is called: `Ctrl-C`, `SIGTERM`, …
    pub(crate) fn name(self) -> &'static str {
        match self {
            Request::Interrupt => "Ctrl-C",
            #[cfg(not(windows))]
            Request::Terminate => "SIGTERM",
            #[cfg(windows)]
            Request::Terminate => "Ctrl-Break",
            #[cfg(not(windows))]
            Request::HangUp => "SIGHUP",
            #[cfg(windows)]
            Request::HangUp => "the console closing",
        }
    }

    fn from_u8(n: u8) -> Option<Request> {
        [Request::Interrupt, Request::Terminate, Request::HangUp]
            .into_iter()
            .find(|r| *r as u8 + 1 == n)
    }
}

/// The first request, as `Request as u8 + 1`; 0 before any.
static FIRST: AtomicU8 = AtomicU8::new(0);
/// When the first request came, in nanoseconds on the platform's monotonic clock (at least 1).
static FIRST_AT: AtomicU64 = AtomicU64::new(0);

/// How soon after the first request the same request again is taken as the first one, sent
/// twice.
pub(crate) const TWICE: Duration = Duration::from_millis(100);

/// What a request is, beside those before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// The first: the command stops and closes gracefully.
    First,
    /// The first one again, sent twice: nothing more happens.
    Again,
    /// A second request: the process ends at once.
    Second,
}

/// Notes `request`, come at `now_ns` (nanoseconds on a monotonic clock): what it is. Safe in
/// a signal handler (atomic operations only).
pub(crate) fn note(request: Request, now_ns: u64) -> Seen {
    let this = request as u8 + 1;
    match FIRST.compare_exchange(0, this, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => {
            FIRST_AT.store(now_ns.max(1), Ordering::SeqCst);
            Seen::First
        }
        Err(first) => {
            let at = FIRST_AT.load(Ordering::SeqCst);
            // `at` is 0 while the first one's note is being made: this came with it.
            let soon = at == 0 || now_ns.saturating_sub(at) < TWICE.as_nanos() as u64;
            // No person hangs up twice.
            let twice = first == this && (soon || request == Request::HangUp);
            match twice {
                true => Seen::Again,
                false => Seen::Second,
            }
        }
    }
}

/// The first request since [`catch`](super::catch), if one came.
pub(crate) fn requested() -> Option<Request> {
    Request::from_u8(FIRST.load(Ordering::SeqCst))
}
