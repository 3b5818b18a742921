//! The server's process tree on Unix: a process group it leads, signalled whole; on Linux a
//! parent-death signal too.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::CommandExt;

use mcpwire_core::config::StdioConfig;

/// The process group a server leads.
pub(crate) struct Group {
    pid: libc::pid_t,
}

impl Group {
    /// The close's second step, once stdin's end was not enough: SIGTERM to the group.
    pub(crate) fn terminate(&self) {
        self.signal(libc::SIGTERM);
    }

    /// At once, every process of the group: SIGKILL.
    pub(crate) fn kill(&self) {
        self.signal(libc::SIGKILL);
    }

    /// Whether the server's pipes are sure to end once the group is killed: no (a process that
    /// left the group may hold them), so its exit is reported after what is in them now.
    pub(crate) fn pipes_end_with_it(&self) -> bool {
        false
    }

    fn signal(&self, signal: libc::c_int) {
        if self.pid > 0 {
            // SAFETY: `kill` has no memory-safety preconditions; a stale group id at worst fails
            // with ESRCH, which is ignored.
            unsafe {
                libc::kill(-self.pid, signal);
            }
        }
    }
}

/// The program to start: the command as written (the system searches `PATH`).
pub(super) fn program(config: &StdioConfig) -> OsString {
    OsString::from(&config.command)
}

/// The group of the child `pid`, just spawned (it leads it: see [`configure_child`]).
pub(crate) fn group_of(pid: u32) -> io::Result<Group> {
    let pid =
        libc::pid_t::try_from(pid).map_err(|_| io::Error::other("a process id out of range"))?;
    Ok(Group { pid })
}

/// A process group of its own, and on Linux the parent-death signal.
#[cfg(target_os = "linux")]
pub(super) fn configure_child(cmd: &mut std::process::Command) {
    cmd.process_group(0);
    // SAFETY: the closure runs in the child between fork and exec, where only async-signal-safe
    // calls are allowed: `prctl`, `getppid` and `kill` are. It touches no memory of the parent's
    // beyond one integer copied into the closure.
    let parent = std::process::id() as libc::pid_t;
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before the signal was armed.
            if libc::getppid() != parent {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            Ok(())
        });
    }
}

/// A process group of its own (no parent-death signal on these systems).
#[cfg(not(target_os = "linux"))]
pub(super) fn configure_child(cmd: &mut std::process::Command) {
    cmd.process_group(0);
}

/// A spawn that failed for want of file descriptors, with the limits that bound it: the payload
/// of the `io::Error` the spawn returns, so that the connection can give it as
/// [`Error::FileLimit`](crate::Error::FileLimit) (and a restart's failure names it in words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FdLimit {
    /// `RLIMIT_NOFILE`'s soft value (`u64::MAX`: unlimited).
    pub(crate) soft: u64,
    /// Its hard value.
    pub(crate) hard: u64,
    /// `ENFILE`: the system's table is full, not this process's share.
    pub(crate) whole_system: bool,
}

impl std::fmt::Display for FdLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |n: u64| match n {
            u64::MAX => "unlimited".to_owned(),
            n => n.to_string(),
        };
        let (errno, whose) = match self.whole_system {
            true => ("ENFILE", "the system's table of open files is full"),
            false => ("EMFILE", "too many open files in this process"),
        };
        write!(
            f,
            "{whose} ({errno}; RLIMIT_NOFILE soft {}, hard {})",
            shown(self.soft),
            shown(self.hard)
        )
    }
}

impl std::error::Error for FdLimit {}

/// `e` as it is, or, when it is `EMFILE` or `ENFILE`, an error carrying the process's limit of
/// open files ([`FdLimit`]).
pub(super) fn explain(e: io::Error) -> io::Error {
    let whole_system = match e.raw_os_error() {
        Some(libc::EMFILE) => false,
        Some(libc::ENFILE) => true,
        _ => return e,
    };
    let (soft, hard) = nofile_limit();
    io::Error::other(FdLimit {
        soft,
        hard,
        whole_system,
    })
}

/// This process's `RLIMIT_NOFILE`: soft and hard (`u64::MAX` for unlimited, or unknown).
fn nofile_limit() -> (u64, u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes one `rlimit` through a pointer to a live, writable one.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return (u64::MAX, u64::MAX);
    }
    // `rlim_t` is `u64` on Linux and macOS, not on every Unix.
    #[allow(clippy::useless_conversion)]
    let value = |v: libc::rlim_t| {
        if v == libc::RLIM_INFINITY {
            u64::MAX
        } else {
            u64::try_from(v).unwrap_or(u64::MAX)
        }
    };
    (value(limit.rlim_cur), value(limit.rlim_max))
}
