//! The connection's loop, and the locks the handles and the driver share it by.
//!
//! Each step takes the state's lock once: it settles what the last step left (handlers'
//! answers, authorization), feeds the core what happened (commands, deadlines checked against
//! the clock, bytes read, exits, HTTP heads, chunks and ends), drains the core's outputs (IO to
//! carry out, events for the callers, requests for the host's handlers) and does the writes.
//! Then, outside the state's lock, it hands the stderr lines to their callback and waits for
//! the next wake-up: IO, the timer, or a command. The host's handlers run in the driver's task
//! and progress callbacks in their callers' futures, never here. The transports differ only in
//! their [`TransportIo`].
//!
//! A panic in a step (a bug of ours, or of an HTTP backend given by the host) is caught where
//! the loop is run: the connection ends with a reason saying so, every waiting call with it,
//! and nobody's task unwinds.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use mcpwire_core::Output;

use super::dispatch::{AppWork, Dispatch};
use super::route::Route;
use super::state::ConnectionState;
use crate::runtime::timer::Timer;
use crate::runtime::Runtime;
use crate::stdio::StderrCallback;
use crate::transport::TransportIo;

/// How many steps one poll makes before yielding to other tasks.
const STEPS_PER_POLL: usize = 64;

/// One connection as the handles and the driver share it: its state, and its loop, each behind
/// a lock of its own.
pub(crate) struct SharedConnection {
    state: Mutex<ConnectionState>,
    /// The connection's loop, run by whoever holds this lock (see the `route` module); `None`
    /// once the connection has ended or the driver was dropped.
    pub(crate) driver_loop: Mutex<Option<DriverLoop>>,
    /// Where the connection's wake-ups go.
    pub(crate) route: Arc<Route>,
    /// Set when the loop handed the host's handlers something (a request, a cancellation).
    pub(crate) inbound_waiting: AtomicBool,
    /// The runtime the connection runs on (its timers, its tasks).
    pub(crate) runtime: Runtime,
    /// The host's trace context entries for each request (see
    /// [`ConnectOptions::trace_context`](crate::ConnectOptions::trace_context)).
    pub(crate) trace_context: Option<super::spans::TraceContext>,
    /// The connection's span (the calls' spans link to it).
    pub(crate) span: super::spans::ConnectionSpan,
}

impl SharedConnection {
    pub(crate) fn new(
        mut state: ConnectionState,
        runtime: Runtime,
        trace_context: Option<super::spans::TraceContext>,
    ) -> Arc<SharedConnection> {
        let span = state.span.clone();
        let route = Route::new();
        state.driver_waker = Some(route.waker());
        Arc::new(SharedConnection {
            state: Mutex::new(state),
            driver_loop: Mutex::new(None),
            route,
            inbound_waiting: AtomicBool::new(false),
            runtime,
            trace_context,
            span,
        })
    }

    /// The loop's lock, waited for (to set the loop up or take it away).
    pub(crate) fn driver_loop(&self) -> MutexGuard<'_, Option<DriverLoop>> {
        self.driver_loop.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, ConnectionState> {
        // A panic while holding the lock leaves the state as it was between two steps of the
        // core, which stays consistent; keep going rather than poisoning every handle.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs the connection's loop if nobody else is (the driver task, or a caller waiting for its
/// answer). Returns whether the connection has ended (the loop is gone).
pub(crate) fn run_loop(shared: &SharedConnection) -> bool {
    let route = &shared.route;
    let Some(mut guard) = route.try_lock(&shared.driver_loop) else {
        return false;
    };
    let ended = match guard.as_mut() {
        None => true,
        Some(driver_loop) => match crate::contain::call(|| driver_loop.poll(shared)) {
            Ok(poll) => poll.is_ready(),
            Err(words) => {
                #[cfg(feature = "tracing")]
                tracing::error!("mcp: the connection's loop failed: {words}");
                let reason = format!("the connection's driver failed: {words}");
                shared.lock().finish(&reason);
                true
            }
        },
    };
    let driver_loop = if ended { guard.take() } else { None };
    route.unlock(guard);
    if ended {
        drop(driver_loop);
        route.wake_task();
    }
    ended
}

/// The connection's loop: its transport, the application's code it runs, its timer. Whoever
/// holds the loop's lock runs it, always with the connection's own waker (the route's), so
/// its wake-ups go where the route sends them.
pub(crate) struct DriverLoop {
    io: Box<dyn TransportIo>,
    dispatch: Dispatch,
    on_stderr: Option<StderrCallback>,
    timer: Timer,
    timer_at: Option<Instant>,
    closing: bool,
    waker: Waker,
}

impl DriverLoop {
    pub(crate) fn new(
        io: Box<dyn TransportIo>,
        on_stderr: Option<StderrCallback>,
        waker: Waker,
        timer: Timer,
    ) -> DriverLoop {
        DriverLoop {
            io,
            dispatch: Dispatch::new(),
            on_stderr,
            timer,
            timer_at: None,
            closing: false,
            waker,
        }
    }

    /// Authorizes when the connection asks (HTTP with OAuth).
    #[cfg(all(feature = "oauth", feature = "smol"))]
    pub(crate) fn set_auth(&mut self, auth: crate::oauth::AuthSession) {
        self.dispatch.set_auth(auth);
    }

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
        self.dispatch.tell_tap_failures(st);
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
            if work.for_handlers {
                shared
                    .inbound_waiting
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                shared.route.wake_task();
            }
            progressed |= self.dispatch.run(cx, work, self.on_stderr.as_ref());
            if self.timer_at.is_some() && self.timer.poll(cx).is_ready() {
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
