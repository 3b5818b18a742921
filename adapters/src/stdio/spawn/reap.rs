//! Reaping the servers started by [`linux::spawn`](super::linux::spawn): one child by its own
//! id (never `waitpid(-1)`, which would take a child of the host's), and on the spawner thread
//! the children whose exit nobody waits for any more.

use std::cell::RefCell;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// `waitpid(pid, WNOHANG)`: the status once `pid` exited, `None` while it runs.
pub(super) fn reap(pid: libc::pid_t) -> io::Result<Option<ExitStatus>> {
    let mut status = 0;
    loop {
        // SAFETY: `waitpid` on one child's id, with a pointer to a live integer.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == 0 {
            return Ok(None);
        }
        if r == pid {
            return Ok(Some(ExitStatus::from_raw(status)));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

thread_local! {
    /// On the spawner thread: the children whose exit nobody waits for any more.
    static ORPHANS: RefCell<Vec<libc::pid_t>> = const { RefCell::new(Vec::new()) };
}

/// On the spawner thread: takes `pid` in, to be reaped once it exits.
pub(super) fn keep_orphan(pid: libc::pid_t) {
    ORPHANS.with(|o| o.borrow_mut().push(pid));
}

/// On the spawner thread: reaps the orphans that exited; whether some are left.
pub(super) fn reap_orphans() -> bool {
    ORPHANS.with(|o| {
        let mut o = o.borrow_mut();
        o.retain(|pid| matches!(reap(*pid), Ok(None)));
        !o.is_empty()
    })
}
