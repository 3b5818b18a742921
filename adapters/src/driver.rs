//! The connection driver: a future that owns the child's pipes and does all IO for one
//! connection, on whatever executor polls it.
//!
//! Each poll is one short loop: feed the core what happened (deadlines checked against the clock,
//! bytes read, the exit), carry out what it asks (writes, process signals), hand events to the
//! waiting calls and handlers, and register for the next wake-up. Dropping the driver kills the
//! process group at once and never blocks: the child is reaped by async-process's reaper.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use async_io::Timer;
use futures_lite::{AsyncRead, AsyncWrite};
use mcpwire_core::stdio::{ProcessAction, ProcessExit};

use crate::client::{Shared, State};
use crate::dispatch::Dispatch;
use crate::handlers::{BoxFuture, Handlers};
use crate::spawn::{signal_group, SIGKILL, SIGTERM};
use crate::stderr::StderrTail;

/// How many stdout reads one poll makes before yielding to other tasks.
const READS_PER_POLL: usize = 64;

/// Drives one connection: all of its IO. Spawn it on any executor (or poll it in a
/// `block_on`); it completes when the connection has ended (for stdio, when the server process
/// has exited). Dropping it ends the connection at once (for stdio, the process group is
/// killed).
#[must_use = "the connection makes no progress unless its driver is polled"]
pub struct Driver {
    inner: Inner,
}

enum Inner {
    Stdio(Box<StdioDriver>),
    Http(Box<crate::http_driver::HttpDriver>),
}

impl Driver {
    pub(crate) fn stdio(d: StdioDriver) -> Driver {
        Driver {
            inner: Inner::Stdio(Box::new(d)),
        }
    }

    pub(crate) fn http(d: crate::http_driver::HttpDriver) -> Driver {
        Driver {
            inner: Inner::Http(Box::new(d)),
        }
    }
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::Stdio(d) => d.fmt(f),
            Inner::Http(_) => f.write_str("Driver(http)"),
        }
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.inner {
            Inner::Stdio(d) => Pin::new(&mut **d).poll(cx),
            Inner::Http(d) => Pin::new(&mut **d).poll(cx),
        }
    }
}

/// Drives one stdio connection.
pub(crate) struct StdioDriver {
    shared: Arc<Shared>,
    pid: i32,
    stdin: Option<async_process::ChildStdin>,
    stdout: Option<async_process::ChildStdout>,
    stderr: Option<async_process::ChildStderr>,
    status: Option<BoxFuture<io::Result<ExitStatus>>>,
    /// Kept so that async-process reaps the child when the driver goes.
    _child: async_process::Child,
    stderr_tail: StderrTail,
    timer: Timer,
    timer_at: Option<Instant>,
    read_buf: Box<[u8]>,
    dispatch: Dispatch,
    /// How to start the server again (after an unanswered `server/discover` probe).
    config: mcpwire_core::config::StdioConfig,
    closing: bool,
    exited: bool,
}

impl std::fmt::Debug for StdioDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("pid", &self.pid)
            .field("exited", &self.exited)
            .finish_non_exhaustive()
    }
}

impl StdioDriver {
    pub(crate) fn new(
        shared: Arc<Shared>,
        mut child: async_process::Child,
        pid: i32,
        stderr_tail: StderrTail,
        handlers: Handlers,
        config: mcpwire_core::config::StdioConfig,
    ) -> StdioDriver {
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let status: BoxFuture<io::Result<ExitStatus>> = Box::pin(child.status());
        StdioDriver {
            shared,
            pid,
            stdin,
            stdout,
            stderr,
            status: Some(status),
            _child: child,
            stderr_tail,
            timer: Timer::never(),
            timer_at: None,
            read_buf: vec![0; 64 * 1024].into_boxed_slice(),
            dispatch: Dispatch::new(handlers),
            config,
            closing: false,
            exited: false,
        }
    }

    /// One round under the lock: feed the core, carry out its actions, take its events.
    /// Returns whether anything happened, and the work to do outside the lock.
    fn step(
        &mut self,
        cx: &mut Context<'_>,
        st: &mut State,
    ) -> (bool, crate::dispatch::StepOutput) {
        let mut progressed = false;
        match &st.driver_waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => st.driver_waker = Some(cx.waker().clone()),
        }
        let now = Instant::now();
        if st.close_requested && !self.closing {
            self.closing = true;
            st.core.stdio().close(now);
            progressed = true;
        }
        if st.core.stdio().poll_timeout().is_some_and(|t| t <= now) {
            st.core.stdio().handle_timeout(now);
            progressed = true;
        }
        while let Some(action) = st.core.stdio().poll_process_action() {
            progressed = true;
            match action {
                ProcessAction::CloseStdin => self.stdin = None,
                ProcessAction::Terminate => signal_group(self.pid, SIGTERM),
                ProcessAction::Kill => signal_group(self.pid, SIGKILL),
                ProcessAction::SpawnAgain => self.respawn(now, st),
                _ => {}
            }
        }
        // Writes: as much as the pipe takes now.
        while let Some(stdin) = self.stdin.as_mut() {
            let buf = st.core.stdio().poll_write();
            if buf.is_empty() {
                break;
            }
            match Pin::new(stdin).poll_write(cx, buf) {
                Poll::Ready(Ok(n)) if n > 0 => {
                    st.core.stdio().advance_write(n);
                    progressed = true;
                }
                Poll::Ready(_) => {
                    // The server closed its stdin: it is exiting; the exit will be reported.
                    self.stdin = None;
                    progressed = true;
                }
                Poll::Pending => break,
            }
        }
        // Reads from stdout.
        for _ in 0..READS_PER_POLL {
            let Some(stdout) = self.stdout.as_mut() else {
                break;
            };
            match Pin::new(stdout).poll_read(cx, &mut self.read_buf) {
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => {
                    self.stdout = None;
                    st.core.stdio().handle_stdout_eof(now);
                    progressed = true;
                }
                Poll::Ready(Ok(n)) => {
                    st.core.stdio().handle_stdout(now, &self.read_buf[..n]);
                    progressed = true;
                }
                Poll::Pending => break,
            }
        }
        // Stderr, always drained.
        let mut stderr_lines = Vec::new();
        for _ in 0..READS_PER_POLL {
            let Some(stderr) = self.stderr.as_mut() else {
                break;
            };
            match Pin::new(stderr).poll_read(cx, &mut self.read_buf) {
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => {
                    self.stderr = None;
                    progressed = true;
                }
                Poll::Ready(Ok(n)) => {
                    stderr_lines.extend(self.stderr_tail.push(&self.read_buf[..n]));
                    progressed = true;
                }
                Poll::Pending => break,
            }
        }
        if let Some(cb) = self.stderr_tail.callback() {
            stderr_lines.iter().for_each(|l| cb(l));
        }
        // The exit.
        if let Some(status) = self.status.as_mut() {
            if let Poll::Ready(result) = status.as_mut().poll(cx) {
                self.status = None;
                self.exited = true;
                progressed = true;
                // Whatever the server wrote before exiting is still in the pipe: read it first.
                while let Some(stdout) = self.stdout.as_mut() {
                    match Pin::new(stdout).poll_read(cx, &mut self.read_buf) {
                        Poll::Ready(Ok(n)) if n > 0 => {
                            st.core.stdio().handle_stdout(now, &self.read_buf[..n])
                        }
                        _ => break,
                    }
                }
                // Nothing of the group may outlive its leader.
                signal_group(self.pid, SIGKILL);
                let exit = exit_of(result);
                let tail = self.stderr_tail.tail();
                st.core.stdio().handle_exit(now, exit, &tail);
            }
        }
        let out = self.dispatch.take_events(st);
        if st.core.stdio().protocol().engine().unread_notifications() > 0 {
            if let Some(w) = st.notification_waker.take() {
                w.wake();
            }
        }
        // The one timer of the connection: the core's next deadline.
        let next = st.core.stdio().poll_timeout();
        if next != self.timer_at {
            self.timer_at = next;
            match next {
                Some(t) => self.timer.set_at(t),
                None => self.timer = Timer::never(),
            }
        }
        (progressed, out)
    }

    /// Replaces the server process with a fresh one (the old one was killed).
    fn respawn(&mut self, now: Instant, st: &mut State) {
        match crate::spawn::spawn(&self.config) {
            Ok(spawned) => {
                let mut child = spawned.child;
                self.stdin = child.stdin.take();
                self.stdout = child.stdout.take();
                self.stderr = child.stderr.take();
                self.status = Some(Box::pin(child.status()));
                // The old child goes to async-process's reaper.
                self._child = child;
                self.pid = spawned.pid;
                self.exited = false;
                st.pid = spawned.pid as u32;
                st.core.stdio().handle_respawned(now);
            }
            Err(e) => {
                self.exited = true;
                st.core.stdio().handle_respawn_failed(now, &e.to_string());
            }
        }
    }
}

fn exit_of(result: io::Result<ExitStatus>) -> ProcessExit {
    use std::os::unix::process::ExitStatusExt;
    match result {
        Ok(status) => ProcessExit {
            code: status.code(),
            signal: status.signal(),
        },
        Err(_) => ProcessExit {
            code: None,
            signal: None,
        },
    }
}

impl Future for StdioDriver {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let shared = this.shared.clone();
        for _ in 0..READS_PER_POLL {
            let (mut progressed, out, progress) = {
                let mut st = shared.lock();
                let (p, out) = this.step(cx, &mut st);
                (p, out, std::mem::take(&mut st.progress))
            };
            progressed |= this.dispatch.after_step(cx, &shared, out, progress);
            if this.timer_at.is_some() && Pin::new(&mut this.timer).poll(cx).is_ready() {
                this.timer_at = None;
                progressed = true;
            }
            if this.exited {
                let mut st = shared.lock();
                if st.core.stdio().has_exited() {
                    st.finish("the server exited");
                    return Poll::Ready(());
                }
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

impl Drop for StdioDriver {
    fn drop(&mut self) {
        if !self.exited {
            signal_group(self.pid, SIGKILL);
        }
        self.shared
            .lock()
            .finish("the connection driver was dropped");
    }
}
