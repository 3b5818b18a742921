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
