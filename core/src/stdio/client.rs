//! [`StdioClient`]: the client protocol over a child process's stdin and stdout.
//!
//! It owns the JSONL decoder of stdout, the bytes waiting to be written to stdin, and the
//! shutdown plan. The driver moves bytes and carries out process actions:
//!
//! ```text
//! loop {
//!     write client.poll_write() to stdin, then client.advance_write(n)
//!     carry out every client.poll_process_action()
//!     hand every client.poll_event() / poll_notification() to the application
//!     wait for: stdout bytes → handle_stdout | stdout EOF → handle_stdout_eof
//!               | exit → handle_exit | client.poll_timeout() → handle_timeout | a command
//! }
//! ```

use std::time::Instant;

use super::shutdown::{ProcessAction, ProcessExit, Shutdown, ShutdownTimeouts};
use crate::codec::jsonl::{self, JsonlDecoder};
use crate::jsonrpc::Parsed;
use crate::protocol::client::{ClientConfig, ClientEvent, ClientProtocol, ServerNotification};
use crate::rpc::LocalError;
use crate::tap::{Direction, FrameObserver};

/// The client protocol bound to one child process.
pub struct StdioClient {
    protocol: ClientProtocol,
    decoder: JsonlDecoder,
    out: Vec<u8>,
    written: usize,
    shutdown: Shutdown,
    shutdown_timeouts: ShutdownTimeouts,
    observer: Option<Box<dyn FrameObserver>>,
    ended: bool,
    /// Set when stdout ended before the exit was seen: the exit is waited for until then, so
    /// that errors can name the exit status.
    eof_deadline: Option<Instant>,
    /// Actions decided here rather than by the shutdown plan (a restart after the probe).
    actions: std::collections::VecDeque<ProcessAction>,
    exited: bool,
}

/// How long to wait for the exit status after stdout ends, before ending the calls without it.
pub const EXIT_AFTER_EOF_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

impl std::fmt::Debug for StdioClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioClient")
            .field("protocol", &self.protocol)
            .field("unwritten", &(self.out.len() - self.written))
            .field("shutdown", &self.shutdown.stage())
            .finish_non_exhaustive()
    }
}

impl StdioClient {
    /// A client for a process that was just spawned.
    pub fn new(config: ClientConfig, shutdown: ShutdownTimeouts, max_line: usize) -> Self {
        StdioClient {
            protocol: ClientProtocol::new(config),
            decoder: JsonlDecoder::with_max_line(max_line),
            out: Vec::new(),
            written: 0,
            shutdown: Shutdown::new(shutdown),
            shutdown_timeouts: shutdown,
            observer: None,
            ended: false,
            eof_deadline: None,
            actions: std::collections::VecDeque::new(),
            exited: false,
        }
    }

    /// Installs the frame observer.
    pub fn set_observer(&mut self, observer: Box<dyn FrameObserver>) {
        self.observer = Some(observer);
    }

    /// The protocol layer, to read state.
    pub fn protocol(&self) -> &ClientProtocol {
        &self.protocol
    }

    /// The protocol layer, to issue calls; what they queue is picked up by
    /// [`poll_write`](Self::poll_write).
    pub fn protocol_mut(&mut self) -> &mut ClientProtocol {
        &mut self.protocol
    }

    /// Starts the handshake.
    pub fn start(&mut self, now: Instant) -> Result<(), crate::protocol::ClientError> {
        self.protocol.start(now)
    }

    /// Bytes read from the child's stdout.
    pub fn handle_stdout(&mut self, now: Instant, bytes: &[u8]) {
        self.decoder.push(bytes);
        self.drain_lines(now);
        self.check_restart();
    }

    /// After a probe that went unanswered, or killed the server: end this process and start
    /// another.
    fn check_restart(&mut self) {
        if self.protocol.take_restart_request() {
            if !self.exited {
                self.actions.push_back(ProcessAction::Kill);
            }
            self.actions.push_back(ProcessAction::SpawnAgain);
        }
    }

    /// The server was started again after [`ProcessAction::SpawnAgain`]: the handshake starts on
    /// the new process. What was buffered for the old one is dropped.
    pub fn handle_respawned(&mut self, now: Instant) {
        self.decoder = JsonlDecoder::with_max_line(self.decoder.max_line());
        self.out.clear();
        self.written = 0;
        self.shutdown = Shutdown::new(self.shutdown_timeouts);
        self.ended = false;
        self.exited = false;
        self.eof_deadline = None;
        if let Err(e) = self.protocol.transport_restarted(now) {
            self.protocol.handle_closed(
                now,
                LocalError::ConnectionClosed {
                    reason: format!("cannot restart the handshake: {e}").into(),
                },
            );
        }
    }

    /// Starting the server again failed.
    pub fn handle_respawn_failed(&mut self, now: Instant, message: &str) {
        self.exited = true;
        self.ended = true;
        self.protocol.handle_closed(
            now,
            LocalError::ConnectionClosed {
                reason: format!("cannot start the server again: {message}").into(),
            },
        );
    }

    fn drain_lines(&mut self, now: Instant) {
        while let Some(line) = self.decoder.next_line() {
            let parsed = match line {
                Ok(line) => {
                    if let Some(o) = self.observer.as_mut() {
                        o.frame(Direction::Incoming, line);
                    }
                    crate::jsonrpc::parse(line).map_err(|error| jsonl::FrameError::NotAMessage {
                        error,
                        preview: jsonl::preview(line),
                    })
                }
                Err(e) => Err(e),
            };
            match parsed {
                Ok(Parsed::Single(m)) => self.protocol.handle_message(now, m),
                Ok(Parsed::Batch(items)) => {
                    for item in items {
                        match item {
                            Ok(m) => self.protocol.handle_message(now, m),
                            Err(error) => {
                                self.protocol
                                    .handle_bad_frame(jsonl::FrameError::NotAMessage {
                                        error,
                                        preview: String::new(),
                                    })
                            }
                        }
                    }
                }
                Err(e) => self.protocol.handle_bad_frame(e),
            }
        }
    }

    /// The child closed its stdout: it will say nothing more. Its exit is awaited briefly (so
    /// errors can name the exit status); then every pending call ends and the process is shut
    /// down.
    pub fn handle_stdout_eof(&mut self, now: Instant) {
        self.decoder.finish();
        self.drain_lines(now);
        if self.protocol.probe_transport_lost(now) {
            self.check_restart();
            return;
        }
        if !self.ended && self.eof_deadline.is_none() {
            self.eof_deadline = Some(now + EXIT_AFTER_EOF_GRACE);
        }
    }

    /// The child exited. `stderr_tail` is the end of what it wrote to stderr, for the error.
    pub fn handle_exit(&mut self, now: Instant, exit: ProcessExit, stderr_tail: &str) {
        self.shutdown.handle_exit(exit);
        self.eof_deadline = None;
        self.exited = true;
        if self.protocol.probe_transport_lost(now) {
            self.check_restart();
            return;
        }
        let mut reason = format!("the server exited ({exit})");
        let tail = stderr_tail.trim();
        if !tail.is_empty() {
            reason.push_str("; stderr: ");
            reason.push_str(tail);
        }
        self.protocol.handle_closed(
            now,
            LocalError::ConnectionClosed {
                reason: reason.into(),
            },
        );
        self.ended = true;
    }

    fn end(&mut self, now: Instant, error: LocalError) {
        self.eof_deadline = None;
        self.protocol.handle_closed(now, error);
        if !self.ended {
            self.ended = true;
            self.shutdown.begin(now);
        }
    }

    /// Closes the connection gracefully: pending calls end as closed, then stdin is closed and
    /// the process is given time to exit before it is terminated, then killed.
    pub fn close(&mut self, now: Instant) {
        self.end(
            now,
            LocalError::ConnectionClosed {
                reason: "closed by the client".into(),
            },
        );
    }

    /// Kills the process group at once.
    pub fn kill(&mut self) {
        self.ended = true;
        self.shutdown.kill_now();
    }

    /// The bytes waiting to be written to stdin (possibly several frames at once).
    pub fn poll_write(&mut self) -> &[u8] {
        if self.written == self.out.len() {
            self.out.clear();
            self.written = 0;
        }
        while let Some(m) = self.protocol.poll_transmit() {
            let start = self.out.len();
            jsonl::encode(&m, &mut self.out);
            if let Some(o) = self.observer.as_mut() {
                o.frame(Direction::Outgoing, &self.out[start..self.out.len() - 1]);
            }
        }
        &self.out[self.written..]
    }

    /// `n` bytes of [`poll_write`](Self::poll_write) were written.
    pub fn advance_write(&mut self, n: usize) {
        self.written = (self.written + n).min(self.out.len());
    }

    /// The next thing to do to the process.
    pub fn poll_process_action(&mut self) -> Option<ProcessAction> {
        self.check_restart();
        if let Some(a) = self.actions.pop_front() {
            return Some(a);
        }
        self.shutdown.poll_action()
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.protocol.poll_event()
    }

    /// The next notification for the application.
    pub fn poll_notification(&mut self) -> Option<ServerNotification> {
        self.protocol.poll_notification()
    }

    /// The earliest deadline: a request's or the shutdown's.
    pub fn poll_timeout(&self) -> Option<Instant> {
        [
            self.protocol.poll_timeout(),
            self.shutdown.poll_timeout(),
            self.eof_deadline,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Fires what is due.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.eof_deadline.is_some_and(|t| t <= now) {
            self.eof_deadline = None;
            self.end(
                now,
                LocalError::ConnectionClosed {
                    reason: "the server closed its stdout".into(),
                },
            );
        }
        self.protocol.handle_timeout(now);
        self.shutdown.handle_timeout(now);
        self.check_restart();
    }

    /// Whether the process has exited (and no new one was asked for).
    pub fn has_exited(&self) -> bool {
        self.exited && self.actions.is_empty()
    }
}
