//! [`Stdio`]: the client protocol over a child process's stdin and stdout.
//!
//! It owns the JSONL decoder of stdout, the frames waiting to be written to stdin, and the
//! shutdown plan. [`Connection`](crate::Connection) drives it.

use std::time::Instant;

use super::shutdown::{ProcessAction, ProcessExit, Shutdown, ShutdownTimeouts};
use crate::codec::jsonl::{self, JsonlDecoder};
use crate::connection::protocol::client::{ClientProtocol, Signalled, TransportSignal};
use crate::connection::protocol::vocabulary::events::{Diagnostic, Event};
use crate::connection::transport::hand_over;
use crate::error::{Closed, StrayOutput};
use crate::rpc::LocalError;
use crate::tap::{Direction, FrameObserver};

/// The client protocol bound to one child process.
pub struct Stdio {
    decoder: JsonlDecoder,
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
    /// Whether this process has sent any message (a server that fails to start sends none).
    answered: bool,
    notes: std::collections::VecDeque<Event>,
    /// The lines of this process's stdout that were not JSON-RPC.
    stray: StrayOutput,
    /// An empty buffer for the next frames to write.
    spare: Vec<u8>,
}

/// Whether a server that exited during the era probe says the probe made it exit (it refuses
/// requests before `initialize`, as some SDKs' servers do), rather than failing to start: then
/// it is started again for the handshake.
fn blames_the_probe(stderr: &str) -> bool {
    const MARKERS: [&str; 6] = [
        "server/discover",
        "before initializ",
        "expected initialize",
        "expect initialize",
        "expectedinitialize",
        "initialize request",
    ];
    let stderr = stderr.to_ascii_lowercase();
    MARKERS.iter().any(|m| stderr.contains(m))
}

/// Why the connection ends when the server exited: its status, `when`, its stderr's tail.
fn exit_reason(exit: ProcessExit, when: &str, stderr_tail: &str) -> String {
    let mut reason = format!("the server exited ({exit}){when}");
    let tail = stderr_tail.trim();
    if !tail.is_empty() {
        reason.push_str("; stderr: ");
        reason.push_str(tail);
    }
    reason
}

/// How long to wait for the exit status after stdout ends, before ending the calls without it.
pub const EXIT_AFTER_EOF_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

impl std::fmt::Debug for Stdio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stdio")
            .field("shutdown", &self.shutdown.stage())
            .finish_non_exhaustive()
    }
}

impl Stdio {
    /// A client for a process that was just spawned.
    pub fn new(shutdown: ShutdownTimeouts, max_line: usize) -> Self {
        Stdio {
            decoder: JsonlDecoder::with_max_line(max_line),
            shutdown: Shutdown::new(shutdown),
            shutdown_timeouts: shutdown,
            observer: None,
            ended: false,
            eof_deadline: None,
            actions: std::collections::VecDeque::new(),
            exited: false,
            answered: false,
            notes: std::collections::VecDeque::new(),
            stray: StrayOutput::default(),
            spare: Vec::new(),
        }
    }

    /// Installs the frame observer.
    pub fn set_observer(&mut self, observer: Box<dyn FrameObserver>) {
        self.observer = Some(observer);
    }

    /// Bytes read from the child's stdout.
    pub fn handle_stdout(&mut self, p: &mut ClientProtocol, now: Instant, bytes: &[u8]) {
        self.decoder.push(bytes);
        self.drain_lines(p, now);
        self.check_restart(p);
    }

    /// After a probe that went unanswered, or killed the server: end this process and start
    /// another. Once the connection has ended (closed by the client, or its stdout gone), a
    /// probe that ended with it asks for nothing: no new process is started for a closed
    /// connection.
    fn check_restart(&mut self, p: &mut ClientProtocol) {
        if p.take_restart_request() && !self.ended {
            if !self.exited {
                self.actions.push_back(ProcessAction::Kill);
            }
            self.actions.push_back(ProcessAction::SpawnAgain);
            let reason = "the server did not answer the era probe (server/discover) and is \
                          started again for the handshake";
            self.notes.push_back(Event::Restarting {
                reason: reason.into(),
            });
        }
    }

    /// The server was started again after [`ProcessAction::SpawnAgain`]: the handshake starts on
    /// the new process. What was buffered for the old one is dropped.
    pub fn handle_respawned(&mut self, p: &mut ClientProtocol, now: Instant) {
        self.decoder = JsonlDecoder::with_max_line(self.decoder.max_line());
        self.shutdown = Shutdown::new(self.shutdown_timeouts);
        self.ended = false;
        self.exited = false;
        self.answered = false;
        self.stray = StrayOutput::default();
        self.eof_deadline = None;
        if let Signalled::Refused(e) = p.handle_transport(now, TransportSignal::Restarted) {
            // The connection ended while the new process was being started (or none was asked
            // for): it is shut down like any other, never left running.
            self.end(
                p,
                now,
                LocalError::Closed(Closed::new(format!("cannot restart the handshake: {e}"))),
            );
        }
    }

    /// Starting the server again failed.
    pub fn handle_respawn_failed(&mut self, p: &mut ClientProtocol, now: Instant, message: &str) {
        self.exited = true;
        self.ended = true;
        p.handle_transport(
            now,
            TransportSignal::Ended(LocalError::Closed(Closed::new(format!(
                "cannot start the server again: {message}"
            )))),
        );
    }

    fn drain_lines(&mut self, p: &mut ClientProtocol, now: Instant) {
        while let Some(line) = self.decoder.next_line() {
            let line = match line {
                Ok(line) => line,
                Err(e) => {
                    // A request or notification of the server's answered nothing of ours:
                    // it ends no call, whatever its id.
                    if let jsonl::FrameError::LineTooLong {
                        limit,
                        id,
                        method: false,
                    } = &e
                    {
                        let id = id.as_ref().and_then(|id| id.as_i64());
                        let limit = *limit;
                        let signal = TransportSignal::AnswerTooLarge { id, limit };
                        p.handle_transport(now, signal);
                    }
                    self.notes
                        .push_back(Event::Diagnostic(Diagnostic::Frame(e)));
                    continue;
                }
            };
            if let Some(o) = self.observer.as_mut() {
                o.frame(Direction::Incoming, line);
            }
            let parsed = match crate::jsonrpc::parse(line) {
                Ok(parsed) => parsed,
                Err(error) => {
                    self.stray.note(line);
                    let preview = jsonl::preview(line);
                    let e = jsonl::FrameError::NotAMessage { error, preview };
                    self.notes
                        .push_back(Event::Diagnostic(Diagnostic::Frame(e)));
                    continue;
                }
            };
            self.answered = true;
            hand_over(p, &mut self.notes, now, parsed);
        }
    }

    /// The child closed its stdout: it will say nothing more. Its exit is awaited briefly (so
    /// errors can name the exit status); then every pending call ends and the process is shut
    /// down.
    pub fn handle_stdout_eof(&mut self, p: &mut ClientProtocol, now: Instant) {
        self.decoder.finish();
        self.drain_lines(p, now);
        if p.probe_may_restart() && !self.exited {
            // During the probe, how it exits decides: a start-up failure, or a server to start
            // again for the handshake. Its exit is awaited (briefly) first.
            if self.eof_deadline.is_none() {
                self.eof_deadline = Some(now + EXIT_AFTER_EOF_GRACE);
            }
            return;
        }
        if p.handle_transport(now, TransportSignal::ProbeTransportLost)
            == Signalled::NewTransportWanted
        {
            self.check_restart(p);
            return;
        }
        if !self.ended && self.eof_deadline.is_none() {
            self.eof_deadline = Some(now + EXIT_AFTER_EOF_GRACE);
        }
    }

    /// The child exited. `stderr_tail` is the end of what it wrote to stderr, for the error.
    pub fn handle_exit(
        &mut self,
        p: &mut ClientProtocol,
        now: Instant,
        exit: ProcessExit,
        stderr_tail: &str,
    ) {
        self.shutdown.handle_exit(exit);
        self.eof_deadline = None;
        self.exited = true;
        let failed = exit.code != Some(0) && exit != ProcessExit::UNKNOWN;
        if p.probe_may_restart() && failed && !self.answered && !blames_the_probe(stderr_tail) {
            let reason = exit_reason(exit, " before answering anything", stderr_tail);
            let signal = TransportSignal::StartFailed(reason.into());
            p.handle_transport(now, signal);
            self.ended = true;
            return;
        }
        if p.handle_transport(now, TransportSignal::ProbeTransportLost)
            == Signalled::NewTransportWanted
        {
            self.check_restart(p);
            return;
        }
        let reason = exit_reason(exit, "", stderr_tail);
        let signal = TransportSignal::Died(reason.into());
        p.handle_transport(now, signal);
        self.ended = true;
    }

    fn end(&mut self, p: &mut ClientProtocol, now: Instant, error: LocalError) {
        self.end_with(p, now, TransportSignal::Ended(error));
    }

    /// Ends the connection with `signal`, and begins the process's shutdown.
    fn end_with(&mut self, p: &mut ClientProtocol, now: Instant, signal: TransportSignal) {
        self.eof_deadline = None;
        p.handle_transport(now, signal);
        if !self.ended {
            self.ended = true;
            self.shutdown.begin(now);
        }
    }

    /// Closes the connection gracefully: pending calls end as closed, then stdin is closed and
    /// the process is given time to exit before it is terminated, then killed.
    pub fn close(&mut self, p: &mut ClientProtocol, now: Instant) {
        self.end(
            p,
            now,
            LocalError::Closed(Closed::new("closed by the client")),
        );
    }

    /// The frames the protocol queued, encoded as JSONL (several at once when several are
    /// queued), or `None` when nothing is.
    pub fn take_write(&mut self, p: &mut ClientProtocol) -> Option<Vec<u8>> {
        // A buffer the driver gave back, when there is one: no allocation per write.
        let mut out = std::mem::take(&mut self.spare);
        while let Some(m) = p.poll_transmit() {
            let request = m.request_id();
            if !p.may_send(request) {
                continue;
            }
            let start = out.len();
            jsonl::encode(&m, &mut out);
            if let Some(o) = self.observer.as_mut() {
                o.frame(Direction::Outgoing, &out[start..out.len() - 1]);
            }
            // Encoded: the protocol takes it back.
            p.transmitted(m);
        }
        if out.is_empty() {
            self.spare = out;
            return None;
        }
        Some(out)
    }

    /// A write buffer the driver is done with, to be filled again.
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        /// Larger buffers are let go, so a burst does not pin memory.
        const KEEP: usize = 64 * 1024;
        if buf.capacity() <= KEEP && buf.capacity() > self.spare.capacity() {
            buf.clear();
            self.spare = buf;
        }
    }

    /// The next event of the process's own (a frame that was not a message, a restart).
    pub fn poll_event(&mut self) -> Option<Event> {
        self.notes.pop_front()
    }

    /// The next thing to do to the process.
    pub fn poll_process_action(&mut self, p: &mut ClientProtocol) -> Option<ProcessAction> {
        self.check_restart(p);
        if let Some(a) = self.actions.pop_front() {
            return Some(a);
        }
        self.shutdown.poll_action()
    }

    /// The earliest deadline of the process: the shutdown's, or the wait for its exit.
    pub fn poll_timeout(&self) -> Option<Instant> {
        [self.shutdown.poll_timeout(), self.eof_deadline]
            .into_iter()
            .flatten()
            .min()
    }

    /// Fires what is due.
    pub fn handle_timeout(&mut self, p: &mut ClientProtocol, now: Instant) {
        if self.eof_deadline.is_some_and(|t| t <= now) {
            self.eof_deadline = None;
            let lost = TransportSignal::ProbeTransportLost;
            if p.probe_may_restart()
                && p.handle_transport(now, lost) == Signalled::NewTransportWanted
            {
                // It closed its stdout during the probe and did not exit: started again.
                self.check_restart(p);
            } else {
                let reason = "the server closed its stdout".into();
                self.end_with(p, now, TransportSignal::Died(reason));
            }
        }
        p.handle_timeout(now);
        self.shutdown.handle_timeout(now);
        self.check_restart(p);
    }

    /// What this process wrote on its stdout that is not JSON-RPC, if anything.
    pub fn stray_output(&self) -> Option<&StrayOutput> {
        (self.stray.lines > 0).then_some(&self.stray)
    }

    /// Whether the process has exited (and no new one was asked for).
    pub fn has_exited(&self) -> bool {
        self.exited && self.actions.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::{
        ClientConfig, Connection, Event, Output, ProcessAction, ProcessExit, StdioInput,
        StdioOptions,
    };

    fn drain(c: &mut Connection) -> Vec<Output> {
        std::iter::from_fn(|| c.poll_output()).collect()
    }

    fn actions(outputs: &[Output]) -> Vec<ProcessAction> {
        outputs
            .iter()
            .filter_map(|o| match o {
                Output::Process(a) => Some(*a),
                _ => None,
            })
            .collect()
    }

    fn closed(outputs: &[Output]) -> bool {
        outputs
            .iter()
            .any(|o| matches!(o, Output::Event(Event::Closed(_))))
    }

    /// Closing while the `server/discover` probe is in flight ends the probe with the close:
    /// that is not a server that died during the probe, and no new process is asked for.
    #[test]
    fn a_close_during_the_probe_starts_no_new_process() {
        let now = crate::test_support::epoch();
        let mut c = Connection::stdio(now, ClientConfig::default(), StdioOptions::default());
        drain(&mut c);
        c.close(now);
        let out = drain(&mut c);
        assert_eq!(actions(&out), [ProcessAction::CloseStdin], "{out:?}");
        assert!(closed(&out));
        c.handle_stdio(
            now,
            StdioInput::Exit {
                exit: ProcessExit::UNKNOWN,
                stderr_tail: "",
            },
        )
        .unwrap();
        drain(&mut c);
        assert!(c.is_finished());
        assert_eq!(c.poll_timeout(), None);
    }

    /// A respawn asked for before a close and done after it: the new process is shut down (stdin
    /// closed, then terminated, then killed), never left running.
    #[test]
    fn a_respawn_done_after_the_close_shuts_the_new_process_down() {
        let mut now = crate::test_support::epoch();
        let config = ClientConfig {
            probe_timeout: Duration::from_millis(100),
            ..ClientConfig::default()
        };
        let mut c = Connection::stdio(now, config, StdioOptions::default());
        drain(&mut c);
        // The probe goes unanswered: the server is killed and started again.
        now = c.poll_timeout().expect("the probe's deadline");
        c.handle_timeout(now);
        let out = drain(&mut c);
        assert_eq!(
            actions(&out),
            [ProcessAction::Kill, ProcessAction::SpawnAgain]
        );
        // The application closes before the new process is up.
        c.close(now);
        assert!(closed(&drain(&mut c)));
        c.handle_stdio(now, StdioInput::Respawned).unwrap();
        let out = drain(&mut c);
        assert_eq!(actions(&out), [ProcessAction::CloseStdin], "{out:?}");
        assert!(
            !out.iter().any(|o| matches!(o, Output::Write(_))),
            "{out:?}"
        );
        let mut steps = Vec::new();
        while let Some(t) = c.poll_timeout() {
            now = t;
            c.handle_timeout(now);
            steps.extend(actions(&drain(&mut c)));
        }
        assert_eq!(steps, [ProcessAction::Terminate, ProcessAction::Kill]);
        c.handle_stdio(
            now,
            StdioInput::Exit {
                exit: ProcessExit::UNKNOWN,
                stderr_tail: "",
            },
        )
        .unwrap();
        drain(&mut c);
        assert!(c.is_finished());
    }
}
