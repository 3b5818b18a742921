//! Ending a child process gracefully, as deadlines: close stdin → wait → terminate → wait → kill.
//!
//! The plan only decides; the driver carries out each [`ProcessAction`] it hands out and reports
//! the exit with [`Shutdown::handle_exit`].

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Something the driver does to the child process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProcessAction {
    /// Close the child's stdin (end of file): a well-behaved server exits on it.
    CloseStdin,
    /// Ask the child's process group to stop (SIGTERM on POSIX; on Windows, which has no such
    /// request for a process with no window, mcpwire's adapter ends the child's job object).
    Terminate,
    /// Stop the child's process group at once (SIGKILL on POSIX; on Windows the job object
    /// ended).
    Kill,
    /// Start the server again with the same command, then give the connection
    /// [`StdioInput::Respawned`](crate::StdioInput::Respawned), or
    /// [`StdioInput::RespawnFailed`](crate::StdioInput::RespawnFailed) (after a
    /// `server/discover` probe that went unanswered or killed the server). Drop what was still
    /// unwritten for the old process.
    SpawnAgain,
}

/// How a process ended, as the driver saw it (core's own type, not `std::process`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessExit {
    /// The exit code, when it exited on its own.
    pub code: Option<i32>,
    /// The signal that ended it, when one did (POSIX).
    pub signal: Option<i32>,
}

impl ProcessExit {
    /// An exit whose status is not known (a server reached over streams, a failed wait).
    pub const UNKNOWN: ProcessExit = ProcessExit {
        code: None,
        signal: None,
    };
}

impl std::fmt::Display for ProcessExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.signal) {
            (Some(c), _) => write!(f, "exit code {c}"),
            (None, Some(s)) => write!(f, "signal {s}"),
            (None, None) => f.write_str("unknown exit status"),
        }
    }
}

/// The waits between the steps of a shutdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownTimeouts {
    /// How long to wait after closing stdin before terminating.
    pub after_close_stdin: Duration,
    /// How long to wait after terminating before killing.
    pub after_terminate: Duration,
}

impl Default for ShutdownTimeouts {
    fn default() -> Self {
        ShutdownTimeouts {
            after_close_stdin: Duration::from_secs(2),
            after_terminate: Duration::from_secs(2),
        }
    }
}

/// Where a shutdown stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShutdownStage {
    /// Not started.
    Idle,
    /// Stdin closed; waiting for the child to exit.
    ClosedStdin,
    /// Terminated; waiting for the child to exit.
    Terminated,
    /// Killed; waiting for the exit to be reaped.
    Killed,
    /// The child exited.
    Exited(ProcessExit),
}

/// The graceful-shutdown plan of one child process.
#[derive(Debug)]
pub struct Shutdown {
    timeouts: ShutdownTimeouts,
    stage: ShutdownStage,
    deadline: Option<Instant>,
    actions: VecDeque<ProcessAction>,
}

impl Shutdown {
    /// A plan with the given waits.
    pub fn new(timeouts: ShutdownTimeouts) -> Self {
        Shutdown {
            timeouts,
            stage: ShutdownStage::Idle,
            deadline: None,
            actions: VecDeque::new(),
        }
    }

    /// Where the shutdown stands.
    pub fn stage(&self) -> ShutdownStage {
        self.stage
    }

    /// Starts the shutdown: closes stdin and arms the first wait. Does nothing if already begun.
    pub fn begin(&mut self, now: Instant) {
        if self.stage == ShutdownStage::Idle {
            self.stage = ShutdownStage::ClosedStdin;
            self.actions.push_back(ProcessAction::CloseStdin);
            self.deadline = Some(now + self.timeouts.after_close_stdin);
        }
    }

    /// Escalates at once to killing (for example when the host gives up waiting).
    #[cfg(test)]
    pub fn kill_now(&mut self) {
        if !matches!(self.stage, ShutdownStage::Exited(_) | ShutdownStage::Killed) {
            self.stage = ShutdownStage::Killed;
            self.actions.push_back(ProcessAction::Kill);
            self.deadline = None;
        }
    }

    /// The child exited (whether or not a shutdown was under way).
    pub fn handle_exit(&mut self, exit: ProcessExit) {
        self.stage = ShutdownStage::Exited(exit);
        self.deadline = None;
        self.actions.clear();
    }

    /// When the plan next wants [`handle_timeout`](Self::handle_timeout).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadline
    }

    /// Escalates when the current wait has run out.
    pub fn handle_timeout(&mut self, now: Instant) {
        let Some(deadline) = self.deadline else {
            return;
        };
        if now < deadline {
            return;
        }
        match self.stage {
            ShutdownStage::ClosedStdin => {
                self.stage = ShutdownStage::Terminated;
                self.actions.push_back(ProcessAction::Terminate);
                self.deadline = Some(now + self.timeouts.after_terminate);
            }
            ShutdownStage::Terminated => {
                self.stage = ShutdownStage::Killed;
                self.actions.push_back(ProcessAction::Kill);
                self.deadline = None;
            }
            _ => self.deadline = None,
        }
    }

    /// The next action for the driver to carry out.
    pub fn poll_action(&mut self) -> Option<ProcessAction> {
        self.actions.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(s: &mut Shutdown) -> Vec<ProcessAction> {
        std::iter::from_fn(|| s.poll_action()).collect()
    }

    #[test]
    fn escalates_close_stdin_then_terminate_then_kill() {
        let t0 = crate::test_support::epoch();
        let mut s = Shutdown::new(ShutdownTimeouts::default());
        assert_eq!(s.poll_timeout(), None);
        s.begin(t0);
        assert_eq!(drain(&mut s), [ProcessAction::CloseStdin]);
        assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_secs(2)));
        // Early wake-ups change nothing.
        s.handle_timeout(t0 + Duration::from_secs(1));
        assert_eq!(drain(&mut s), []);
        let t1 = s.poll_timeout().unwrap();
        s.handle_timeout(t1);
        assert_eq!(drain(&mut s), [ProcessAction::Terminate]);
        assert!(s.poll_timeout().unwrap() > t1);
        let t2 = s.poll_timeout().unwrap();
        s.handle_timeout(t2);
        assert_eq!(drain(&mut s), [ProcessAction::Kill]);
        assert_eq!(
            s.poll_timeout(),
            None,
            "nothing left armed after the last step"
        );
        s.handle_exit(ProcessExit {
            code: None,
            signal: Some(9),
        });
        assert!(matches!(s.stage(), ShutdownStage::Exited(_)));
    }

    #[test]
    fn exit_after_stdin_close_stops_the_escalation() {
        let t0 = crate::test_support::epoch();
        let mut s = Shutdown::new(ShutdownTimeouts::default());
        s.begin(t0);
        drain(&mut s);
        s.handle_exit(ProcessExit {
            code: Some(0),
            signal: None,
        });
        assert_eq!(s.poll_timeout(), None);
        s.handle_timeout(t0 + Duration::from_secs(60));
        assert_eq!(drain(&mut s), []);
    }

    #[test]
    fn kill_now_skips_the_waits() {
        let t0 = crate::test_support::epoch();
        let mut s = Shutdown::new(ShutdownTimeouts::default());
        s.begin(t0);
        s.kill_now();
        assert_eq!(
            drain(&mut s),
            [ProcessAction::CloseStdin, ProcessAction::Kill]
        );
        assert_eq!(s.poll_timeout(), None);
    }
}
