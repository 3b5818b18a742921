//! The stdio transport's IO: the server's stdin and stdout (a child's pipes, or any pair of
//! byte streams), and for a child process its stderr, its exit and the ending of its process
//! tree (signals to its group on Unix, its job on Windows: see the `spawn` module).

use std::io;
use std::process::ExitStatus;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use mcpwire_core::config::StdioConfig;
use mcpwire_core::{Connection, Output, ProcessAction, ProcessExit, StdioInput};

use super::pipe_reader::{PipeReader, Read};
use super::signal::Signal;
use super::spawn::Group;
use super::stderr::StderrTail;
use crate::future::BoxFuture;
use crate::runtime::child::{Child, Writer};
use crate::runtime::Runtime;
use crate::transport::{wrong_transport, TransportIo};

/// Sees each step a stdio connection takes with its server process as the step is taken: the
/// end of file on its stdin ([`ProcessAction::CloseStdin`], once everything queued before it
/// was written), SIGTERM ([`ProcessAction::Terminate`]) and SIGKILL ([`ProcessAction::Kill`])
/// to its process group (also when the [`Driver`](crate::Driver) is dropped with the server still running),
/// and a new start ([`ProcessAction::SpawnAgain`]). On Windows, `Terminate` and `Kill` each end
/// the server's job object, every process in it at once (Windows has no SIGTERM for a process
/// with no window). Called on the connection's driver, with the connection locked: it must
/// return quickly and must not call the [`Client`](crate::Client).
pub type ProcessActionObserver = Arc<dyn Fn(ProcessAction) + Send + Sync>;

/// How many reads of one pipe a step makes before moving on.
const READS_PER_STEP: usize = 64;

/// The read buffer's first size: a handshake's answers fit, and a host of many idle servers
/// does not zero and fault in 64 KiB for each at connect.
const FIRST_READ: usize = 4 * 1024;

/// The read buffer's largest size: it doubles to it while reads fill it.
const MAX_READ: usize = 64 * 1024;

type Reader = PipeReader;

/// The server process behind the pipes.
struct Process {
    /// The server's process tree (its group, or its job on Windows).
    group: Group,
    stderr: Option<PipeReader>,
    /// Polled only when it was signalled.
    stderr_signal: Signal,
    status: Option<BoxFuture<io::Result<ExitStatus>>>,
    /// The exit status is polled only when the runtime's reaper signals it (each poll is a
    /// `wait4`).
    status_signal: Signal,
    stderr_tail: StderrTail,
    /// How to start the server again (after an unanswered `server/discover` probe), and on
    /// which runtime.
    config: StdioConfig,
    runtime: Runtime,
    /// How it exited, kept until its pipes' ends are read where the exit waits for them (see
    /// [`Group::pipes_end_with_it`]).
    exit: Option<ProcessExit>,
}

impl Process {
    /// Reads stderr until it is drained (or for [`READS_PER_STEP`] reads), keeping its tail
    /// and the lines for the callback. Returns whether it progressed (bytes, or the end).
    fn read_stderr(&mut self, buf: &mut [u8], lines: &mut Vec<String>) -> bool {
        let mut scx = self.stderr_signal.context();
        let mut progressed = false;
        for _ in 0..READS_PER_STEP {
            let Some(stderr) = self.stderr.as_mut() else {
                return progressed;
            };
            match stderr.read(&mut scx, buf) {
                Read::End => {
                    self.stderr = None;
                    return true;
                }
                Read::Bytes { n, drained } => {
                    lines.extend(self.stderr_tail.push(&buf[..n]));
                    progressed = true;
                    if drained {
                        return true;
                    }
                }
                Read::Pending => return progressed,
            }
        }
        // Left with more to read: nothing will signal it, so it is read at the next pass.
        self.stderr_signal.raise();
        progressed
    }
}

/// Pipes to a server: stdin, stdout, and the process behind them when there is one.
pub(crate) struct PipeIo {
    stdin: Option<Writer>,
    /// Set when stdin said `Pending`: written again only once signalled.
    stdin_blocked: bool,
    stdin_signal: Signal,
    stdout: Option<PipeReader>,
    /// stdout is read only when it was signalled (see [`Signal`]).
    stdout_signal: Signal,
    unwritten: Vec<u8>,
    written: usize,
    /// The connection asked for stdin's end: it comes once everything queued is written (a
    /// cancellation queued just before must still reach the server).
    close_stdin: bool,
    /// Grows from [`FIRST_READ`] to [`MAX_READ`] as reads fill it.
    read_buf: Vec<u8>,
    process: Option<Process>,
    exited: bool,
    /// Told each process action as it is carried out.
    observer: Option<ProcessActionObserver>,
}

impl PipeIo {
    /// The pipes of a child that was just spawned.
    pub(crate) fn child(
        child: Child,
        stderr_tail: StderrTail,
        config: StdioConfig,
        runtime: Runtime,
    ) -> Self {
        let mut io = PipeIo::streams(None, None);
        io.attach(child, stderr_tail, config, runtime);
        io
    }

    /// A server reached over any pair of byte streams (no process to signal or restart).
    pub(crate) fn streams(stdout: Option<Reader>, stdin: Option<Writer>) -> Self {
        PipeIo {
            stdin,
            stdin_blocked: false,
            stdin_signal: Signal::new(),
            stdout,
            stdout_signal: Signal::new(),
            unwritten: Vec::new(),
            written: 0,
            close_stdin: false,
            read_buf: vec![0; FIRST_READ],
            process: None,
            exited: false,
            observer: None,
        }
    }

    /// Tells `observer` each process action as it is carried out.
    pub(crate) fn observe(&mut self, observer: Option<ProcessActionObserver>) {
        self.observer = observer;
    }

    fn tell(&self, action: ProcessAction) {
        if let Some(observer) = &self.observer {
            observer(action);
        }
    }

    fn attach(
        &mut self,
        child: Child,
        stderr_tail: StderrTail,
        config: StdioConfig,
        runtime: Runtime,
    ) {
        self.stdin = child.stdin;
        self.stdin_blocked = false;
        self.stdout = child.stdout;
        self.stdout_signal.raise();
        self.close_stdin = false;
        self.exited = false;
        self.process = Some(Process {
            group: child.group,
            stderr: child.stderr,
            stderr_signal: Signal::new(),
            status: Some(child.status),
            status_signal: Signal::new(),
            stderr_tail,
            config,
            runtime,
            exit: None,
        });
    }

    /// Replaces the server process with a fresh one (the old one was killed). Returns the new
    /// one's process id, when it started.
    fn respawn(&mut self, conn: &mut Connection, now: Instant) -> Option<u32> {
        self.unwritten.clear();
        self.written = 0;
        let Some(old) = self.process.take() else {
            self.exited = true;
            let reason = "a connection over streams cannot be started again";
            conn.handle_stdio(now, StdioInput::RespawnFailed(reason))
                .unwrap_or_else(wrong_transport);
            return None;
        };
        match old.runtime.spawn_server(&old.config) {
            Ok(child) => {
                let pid = child.pid;
                // The old child goes to the runtime's reaper; its stderr is not the new one's.
                let mut tail = old.stderr_tail;
                tail.clear();
                self.attach(child, tail, old.config, old.runtime);
                conn.handle_stdio(now, StdioInput::Respawned)
                    .unwrap_or_else(wrong_transport);
                Some(pid)
            }
            Err(e) => {
                self.exited = true;
                conn.handle_stdio(now, StdioInput::RespawnFailed(&e.to_string()))
                    .unwrap_or_else(wrong_transport);
                None
            }
        }
    }

    /// Reads stdout into the connection. Returns whether anything was read.
    fn read_stdout(&mut self, cx: &mut Context<'_>, conn: &mut Connection, now: Instant) -> bool {
        let mut progressed = false;
        if self.stdout.is_none() || !self.stdout_signal.take(cx.waker()) {
            return false;
        }
        let mut scx = self.stdout_signal.context();
        let mut pending = false;
        for _ in 0..READS_PER_STEP {
            let Some(stdout) = self.stdout.as_mut() else {
                pending = true;
                break;
            };
            match stdout.read(&mut scx, &mut self.read_buf) {
                Read::End => {
                    self.stdout = None;
                    conn.handle_stdio(now, StdioInput::StdoutEof)
                        .unwrap_or_else(wrong_transport);
                    if self.process.is_none() && !self.exited {
                        // Streams have no exit status: their end is the end.
                        self.exited = true;
                        conn.handle_stdio(
                            now,
                            StdioInput::Exit {
                                exit: ProcessExit::UNKNOWN,
                                stderr_tail: "",
                            },
                        )
                        .unwrap_or_else(wrong_transport);
                    }
                    progressed = true;
                }
                Read::Bytes { n, drained } => {
                    conn.handle_stdio(now, StdioInput::Stdout(&self.read_buf[..n]))
                        .unwrap_or_else(wrong_transport);
                    progressed = true;
                    if n == self.read_buf.len() && n < MAX_READ {
                        self.read_buf = vec![0; n * 2];
                    }
                    if drained {
                        pending = true;
                        break;
                    }
                }
                Read::Pending => {
                    pending = true;
                    break;
                }
            }
        }
        if !pending {
            // Left with more to read: nothing will signal it, so it is read at the next pass.
            self.stdout_signal.raise();
        }
        progressed
    }

    /// Drains stderr (always: a full pipe must never stall the server) and notices the exit.
    fn read_process(
        &mut self,
        cx: &mut Context<'_>,
        conn: &mut Connection,
        now: Instant,
        stderr_lines: &mut Vec<String>,
    ) -> bool {
        let mut progressed = false;
        let Some(p) = self.process.as_mut() else {
            return false;
        };
        if p.stderr.is_some() && p.stderr_signal.take(cx.waker()) {
            progressed |= p.read_stderr(&mut self.read_buf, stderr_lines);
        }
        if let Some(status) = p.status.as_mut() {
            if !p.status_signal.take(cx.waker()) {
                return progressed;
            }
            let Poll::Ready(result) = status.as_mut().poll(&mut p.status_signal.context()) else {
                return progressed;
            };
            p.status = None;
            p.exit = Some(exit_of(result));
            progressed = true;
            // Whatever the server wrote before exiting is still in its pipes, though the
            // reactor may not have reported them yet: read them now, before the exit reaches
            // the core (it ends the connection). stdout is read to its end, so a last line
            // without a line end is released too; a grandchild that keeps a pipe open and
            // writing is read only up to the bound, and the rest is dropped with the
            // connection.
            let mut scx = self.stdout_signal.context();
            for _ in 0..READS_PER_STEP {
                let Some(stdout) = self.stdout.as_mut() else {
                    break;
                };
                stdout.writer_gone();
                match stdout.read(&mut scx, &mut self.read_buf) {
                    Read::Bytes { n, .. } => conn
                        .handle_stdio(now, StdioInput::Stdout(&self.read_buf[..n]))
                        .unwrap_or_else(wrong_transport),
                    Read::End => {
                        self.stdout = None;
                        conn.handle_stdio(now, StdioInput::StdoutEof)
                            .unwrap_or_else(wrong_transport);
                    }
                    Read::Pending => break,
                }
            }
            if let Some(stderr) = p.stderr.as_mut() {
                stderr.writer_gone();
                p.read_stderr(&mut self.read_buf, stderr_lines);
            }
            // Nothing of the group may outlive its leader.
            p.group.kill();
        }
        let Some(exit) = p.exit else {
            return progressed;
        };
        if p.group.pipes_end_with_it() && (self.stdout.is_some() || p.stderr.is_some()) {
            // Their readers are still delivering what the server wrote (on Windows a reading
            // thread does, and may be behind its exit); with the tree ended, their ends come.
            return progressed;
        }
        p.exit = None;
        self.exited = true;
        let tail = p.stderr_tail.tail();
        conn.handle_stdio(
            now,
            StdioInput::Exit {
                exit,
                stderr_tail: &tail,
            },
        )
        .unwrap_or_else(wrong_transport);
        true
    }
}

impl TransportIo for PipeIo {
    fn read(
        &mut self,
        cx: &mut Context<'_>,
        conn: &mut Connection,
        now: Instant,
        stderr_lines: &mut Vec<String>,
    ) -> bool {
        let read = self.read_stdout(cx, conn, now);
        self.read_process(cx, conn, now, stderr_lines) | read
    }

    fn carry_out(&mut self, conn: &mut Connection, now: Instant, output: Output) -> Option<u32> {
        match output {
            Output::Write(bytes) if self.unwritten.is_empty() => {
                // The written-out buffer goes back to the core for the next frames.
                let done = std::mem::replace(&mut self.unwritten, bytes);
                conn.recycle(done);
            }
            Output::Write(bytes) => {
                self.unwritten.extend_from_slice(&bytes);
                conn.recycle(bytes);
            }
            // Told when the end of file is written (`write`), after what was queued before.
            Output::Process(ProcessAction::CloseStdin) => self.close_stdin = true,
            Output::Process(ProcessAction::Terminate) => {
                if let Some(p) = &self.process {
                    p.group.terminate();
                    self.tell(ProcessAction::Terminate);
                }
            }
            Output::Process(ProcessAction::Kill) => match &self.process {
                Some(p) => {
                    p.group.kill();
                    self.tell(ProcessAction::Kill);
                }
                None => {
                    // No process to kill: dropping the streams is the end.
                    self.close_stdin = true;
                    self.stdin = None;
                    self.stdout = None;
                    if !self.exited {
                        self.exited = true;
                        conn.handle_stdio(
                            now,
                            StdioInput::Exit {
                                exit: ProcessExit::UNKNOWN,
                                stderr_tail: "",
                            },
                        )
                        .unwrap_or_else(wrong_transport);
                    }
                }
            },
            Output::Process(ProcessAction::SpawnAgain) => {
                self.tell(ProcessAction::SpawnAgain);
                return self.respawn(conn, now);
            }
            other => debug_assert!(false, "not a stdio output: {other:?}"),
        }
        None
    }

    fn write(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progressed = false;
        // A pipe that said `Pending` is tried again only once it is signalled writable.
        let signalled = self.stdin_signal.take(cx.waker());
        if self.stdin_blocked && !signalled {
            return false;
        }
        self.stdin_blocked = false;
        let mut scx = self.stdin_signal.context();
        while self.written < self.unwritten.len() {
            let Some(stdin) = self.stdin.as_mut() else {
                break;
            };
            match stdin.poll_write(&mut scx, &self.unwritten[self.written..]) {
                Poll::Ready(Ok(n)) if n > 0 => {
                    self.written += n;
                    progressed = true;
                }
                Poll::Ready(_) => {
                    // The server closed its stdin: it is exiting; the exit will be reported.
                    self.stdin = None;
                    progressed = true;
                }
                Poll::Pending => {
                    self.stdin_blocked = true;
                    break;
                }
            }
        }
        if self.written == self.unwritten.len() || self.stdin.is_none() {
            self.unwritten.clear();
            self.written = 0;
            if let Some(stdin) = self.stdin.as_mut().filter(|_| self.close_stdin) {
                // What is on its way to the pipe goes first (on Windows a writing thread may
                // still hold some: dropping it would lose them); then dropping the pipe is the
                // end of file.
                if stdin.poll_close(&mut scx).is_pending() {
                    self.stdin_blocked = true;
                    return progressed;
                }
                self.stdin = None;
                self.tell(ProcessAction::CloseStdin);
                progressed = true;
            }
        }
        progressed
    }

    fn is_idle(&self) -> bool {
        true
    }

    fn finish_reason(&self) -> &'static str {
        "the server exited"
    }
}

impl Drop for PipeIo {
    fn drop(&mut self) {
        if let Some(p) = &self.process {
            if !self.exited && p.status.is_some() {
                p.group.kill();
                self.tell(ProcessAction::Kill);
            }
        }
    }
}

fn exit_of(result: io::Result<ExitStatus>) -> ProcessExit {
    #[cfg(unix)]
    use std::os::unix::process::ExitStatusExt;
    match result {
        Ok(status) => ProcessExit {
            code: status.code(),
            #[cfg(unix)]
            signal: status.signal(),
            #[cfg(not(unix))]
            signal: None,
        },
        Err(_) => ProcessExit::UNKNOWN,
    }
}
