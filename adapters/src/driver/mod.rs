//! The connection driver: the future that owns a connection's IO, and the loop it runs (which a
//! caller waiting for its answer runs too, while nobody else does).
//!
//! Here live the state the [`Client`](crate::Client) handles share with the loop
//! ([`state`]), the loop and its locks ([`run`]), who runs it and where its wake-ups go
//! ([`route`]), what the loop does with the connection's events ([`dispatch`], [`trace`]), and
//! the host's handlers, run as tasks of their own in the driver's task ([`host`]).
//! The transports' IO is below, behind [`TransportIo`](crate::transport::TransportIo). Nothing
//! here imports the client: the client imports the driver.

pub(crate) mod dispatch;
mod host;
pub(crate) mod route;
pub(crate) mod run;
pub(crate) mod spans;
pub(crate) mod state;
pub(crate) mod trace;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::handlers::Handlers;
use crate::runtime::timer::Timer;
use crate::stdio::StderrCallback;
use crate::transport::TransportIo;
use host::HostTasks;
use route::{Seen, Watch, WATCH_PERIOD, WATCH_PERIOD_MAX};
use run::{run_loop, DriverLoop, SharedConnection};

/// Drives one connection: all of its IO. Spawn it on any executor (or poll it in a
/// `block_on`); it completes when the connection has ended (for stdio, when the server process
/// has exited). Dropping it ends the connection at once (for stdio, the process group is
/// killed).
///
/// A caller waiting for its answer runs the connection itself while the driver is idle, so a
/// sequential call makes no hop to the driver's thread; the driver runs it the rest of the time
/// (see the `route` module).
#[must_use = "the connection makes no progress unless its driver is polled"]
pub struct Driver {
    shared: Arc<SharedConnection>,
    /// The host's handlers at work.
    host: HostTasks,
    watch: Watch,
    /// Armed while callers are claiming the connection: the driver's watch over them.
    watch_timer: Timer,
    watching: bool,
    /// The watch's period now.
    period: Duration,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("watching", &self.watching)
            .finish_non_exhaustive()
    }
}

impl Driver {
    pub(crate) fn new(
        shared: Arc<SharedConnection>,
        io: Box<dyn TransportIo>,
        handlers: Handlers,
        on_stderr: Option<StderrCallback>,
    ) -> Driver {
        let timer = shared.runtime.timer();
        let driver_loop = DriverLoop::new(io, on_stderr, shared.route.waker(), timer);
        *shared.driver_loop() = Some(driver_loop);
        Driver {
            host: HostTasks::new(handlers),
            watch: Watch::default(),
            watch_timer: shared.runtime.timer(),
            shared,
            watching: false,
            period: WATCH_PERIOD,
        }
    }

    /// Authorizes when the connection asks (HTTP with OAuth).
    #[cfg(all(feature = "oauth", feature = "smol"))]
    pub(crate) fn set_auth(&mut self, auth: crate::oauth::AuthSession) {
        if let Some(driver_loop) = self.shared.driver_loop().as_mut() {
            driver_loop.set_auth(auth);
        }
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let shared = this.shared.clone();
        shared.route.register_task(cx.waker());
        for _ in 0..TURNS_PER_POLL {
            // The handlers' answers first, so that the step below sends them.
            this.host.turn(&shared);
            if run_loop(&shared) {
                return Poll::Ready(());
            }
            // The step handed the handlers a request, or a handler woke meanwhile.
            if this.host.has_work(&shared) {
                continue;
            }
            match shared.route.watch(&mut this.watch) {
                Seen::Idle => {
                    if this.watching {
                        this.watching = false;
                        this.watch_timer.clear();
                    }
                    return Poll::Pending;
                }
                Seen::Watching { unanswered } => {
                    if !this.watching {
                        this.watching = true;
                        this.period = WATCH_PERIOD;
                        this.watch_timer.set_at(Instant::now() + this.period);
                    }
                    while this.watch_timer.poll(cx).is_ready() {
                        // All well: look less often; a wake-up not answered yet: look again
                        // soon, to take the claim back if it still is not.
                        this.period = next_watch(this.period, unanswered);
                        this.watch_timer.set_at(Instant::now() + this.period);
                    }
                    return Poll::Pending;
                }
                // The claim was taken back from a caller that stopped polling: run the
                // connection now (its wake-ups come here from now on).
                Seen::Stale => continue,
            }
        }
        // Plenty done in one go (handlers that keep waking themselves): let other tasks run.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// How many turns (the handlers, then the connection) one poll of the driver makes at most.
const TURNS_PER_POLL: usize = 16;

/// The period of the watch after one that saw a wake-up `unanswered` or not.
fn next_watch(period: Duration, unanswered: bool) -> Duration {
    match unanswered {
        true => WATCH_PERIOD,
        false => (period * 2).min(WATCH_PERIOD_MAX),
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The transport's own drop ends its IO (for stdio, kills the process group).
        let driver_loop = self.shared.driver_loop().take();
        drop(driver_loop);
        // Every call waiting ends now, and later ones fail at once, whatever ended the driver
        // (its task dropped or cancelled, its executor shut down, a panic unwinding through
        // it).
        let reason = match std::thread::panicking() {
            true => "the connection driver panicked",
            false => "the connection driver was dropped",
        };
        self.shared.lock().finish(reason);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The watch looks less often while the claimer answers, up to the longest period, and
    /// soon again once a wake-up is seen unanswered: a claimer that stopped polling is found
    /// within the longest period and a short one.
    #[test]
    fn the_watch_backs_off_while_all_is_well_and_comes_back_soon_when_not() {
        let mut period = WATCH_PERIOD;
        let mut seen = vec![period];
        for _ in 0..8 {
            period = next_watch(period, false);
            seen.push(period);
        }
        let ms: Vec<u128> = seen.iter().map(Duration::as_millis).collect();
        assert_eq!(ms, [20, 40, 80, 160, 320, 320, 320, 320, 320]);
        assert_eq!(next_watch(WATCH_PERIOD_MAX, true), WATCH_PERIOD);
    }
}
