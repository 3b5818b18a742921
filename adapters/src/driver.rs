//! The connection driver: a future that owns the connection's IO and runs the one loop of every
//! transport, on whatever executor polls it.
//!
//! Each step takes the lock once: it settles what the last step left (ends held behind progress
//! callbacks, handlers' answers), feeds the core what happened (commands, deadlines checked
//! against the clock, bytes read, exits, HTTP heads, chunks and ends), drains the core's outputs
//! (IO to carry out, events for the callers) and does the writes. Then, outside the lock, it runs
//! the application's code (progress callbacks, stderr lines, handlers) and waits for the next
//! wake-up: IO, the timer, or a command. The transports differ only in their [`TransportIo`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use async_io::Timer;
use mcpwire_core::Output;

use crate::client::{ConnectionState, SharedConnection};
use crate::dispatch::{AppWork, Dispatch};
use crate::handlers::Handlers;
use crate::route::{Seen, Watch, WATCH_PERIOD, WATCH_PERIOD_MAX};
use crate::transport::TransportIo;
use crate::StderrCallback;

/// How many steps one poll makes before yielding to other tasks.
const STEPS_PER_POLL: usize = 64;

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
        let engine = Engine {
            io,
            dispatch: Dispatch::new(handlers),
            on_stderr,
            timer: Timer::never(),
            timer_at: None,
            closing: false,
            waker: shared.route.waker(),
        };
        *shared.engine() = Some(engine);
        Driver {
            shared,
            watch: Watch::default(),
            watch_timer: Timer::never(),
            watching: false,
            period: WATCH_PERIOD,
        }
    }

    /// Authorizes when the connection asks (HTTP with OAuth).
    #[cfg(feature = "oauth")]
    pub(crate) fn set_auth(&mut self, auth: crate::oauth::AuthSession) {
        if let Some(engine) = self.shared.engine().as_mut() {
            engine.dispatch.set_auth(auth);
        }
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let shared = this.shared.clone();
        shared.route.register_task(cx.waker());
        loop {
            if run_engine(&shared) {
                return Poll::Ready(());
            }
            match shared.route.watch(&mut this.watch) {
                Seen::Idle => {
                    if this.watching {
                        this.watching = false;
                        this.watch_timer = Timer::never();
                    }
                    return Poll::Pending;
                }
                Seen::Watching { unanswered } => {
                    if !this.watching {
                        this.watching = true;
                        this.period = WATCH_PERIOD;
                        this.watch_timer.set_after(this.period);
                    }
                    while Pin::new(&mut this.watch_timer).poll(cx).is_ready() {
                        // All well: look less often; a wake-up not answered yet: look again
                        // soon, to take the claim back if it still is not.
                        this.period = next_watch(this.period, unanswered);
                        this.watch_timer.set_after(this.period);
                    }
                    return Poll::Pending;
                }
                // The claim was taken back from a caller that stopped polling: run the
                // connection now (its wake-ups come here from now on).
                Seen::Stale => continue,
            }
        }
    }
}

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
        let engine = self.shared.engine().take();
        drop(engine);
        self.shared
            .lock()
            .finish("the connection driver was dropped");
    }
}

/// Runs the connection's engine if nobody else is (the driver task, or a caller waiting for its
/// answer). Returns whether the connection has ended (the engine is gone).
pub(crate) fn run_engine(shared: &SharedConnection) -> bool {
    let route = &shared.route;
    let Some(mut guard) = route.try_lock(&shared.engine) else {
        return false;
    };
    let ended = match guard.as_mut() {
        None => true,
        Some(engine) => engine.poll(shared).is_ready(),
    };
    let engine = if ended { guard.take() } else { None };
    route.unlock(guard);
    if ended {
        drop(engine);
        route.wake_task();
    }
    ended
}

/// The connection's engine: its transport, the application's code it runs, its timer. Whoever
/// holds the engine's lock runs it, always with the connection's own waker (the route's), so
/// its wake-ups go where the route sends them.
pub(crate) struct Engine {
    io: Box<dyn TransportIo>,
    dispatch: Dispatch,
    on_stderr: Option<StderrCallback>,
    timer: Timer,
    timer_at: Option<Instant>,
    closing: bool,
    waker: Waker,
}

impl Engine {
    /// One step under the lock. Returns whether anything happened, the work for outside the
    /// lock, and whether the connection is finished.
    fn step(&mut self, cx: &mut Context<'_>, st: &mut ConnectionState) -> (bool, AppWork, bool) {
        let now = Instant::now();
        let mut work = AppWork::default();
        let mut progressed = self.dispatch.settle(st, now);
        if st.close_requested && !self.closing {
            // What was asked before the close goes out before it: a call dropped just before
            // sends its cancellation (a task's `tasks/cancel` is a request, which the close
            // would otherwise end unsent).
            self.drain(st, now, &mut work);
            self.closing = true;
            st.conn.close(now);
            progressed = true;
        }
        if st.conn.poll_timeout().is_some_and(|t| t <= now) {
            st.conn.handle_timeout(now);
            progressed = true;
        }
        progressed |= self.io.read(cx, &mut st.conn, now, &mut work.stderr_lines);
        progressed |= self.drain(st, now, &mut work);
        progressed |= self.io.write(cx);
        // The one timer of the connection, moved only when the core's next deadline comes
        // sooner than the one armed: each call brings a later deadline, and re-arming for each
        // would cost a syscall per call. A timer left armed for a deadline that went away fires
        // early once, finds nothing due, and is armed for the next one.
        let next = st.conn.poll_timeout();
        if let Some(t) = next {
            if self.timer_at.is_none_or(|armed| t < armed) {
                self.timer_at = Some(t);
                self.timer.set_at(t);
            }
        }
        let finished = st.conn.is_finished() && self.io.is_idle();
        (progressed, work, finished)
    }

    /// Drains the core's outputs: IO to carry out, events for the callers. Returns whether
    /// there were any.
    fn drain(&mut self, st: &mut ConnectionState, now: Instant, work: &mut AppWork) -> bool {
        let mut any = false;
        while let Some(output) = st.conn.poll_output() {
            any = true;
            match output {
                Output::Event(event) => self.dispatch.event(st, work, event),
                other => {
                    if let Some(pid) = self.io.carry_out(&mut st.conn, now, other) {
                        // The server was started anew.
                        st.pid = pid;
                    }
                }
            }
        }
        any
    }

    /// Makes steps until nothing happens (or enough were made for one go). Ready when the
    /// connection has ended.
    fn poll(&mut self, shared: &SharedConnection) -> Poll<()> {
        let waker = self.waker.clone();
        let cx = &mut Context::from_waker(&waker);
        for _ in 0..STEPS_PER_POLL {
            let (mut progressed, work, finished) = self.step(cx, &mut shared.lock());
            progressed |= self.dispatch.run(cx, work, self.on_stderr.as_ref());
            if self.timer_at.is_some() && Pin::new(&mut self.timer).poll(cx).is_ready() {
                self.timer_at = None;
                progressed = true;
            }
            if finished {
                let mut st = shared.lock();
                self.dispatch.settle(&mut st, Instant::now());
                st.finish(self.io.finish_reason());
                return Poll::Ready(());
            }
            if !progressed {
                return Poll::Pending;
            }
        }
        // Plenty done in one go: let other tasks run, and come back.
        cx.waker().wake_by_ref();
        Poll::Pending
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
