//! A server started by [`linux::spawn`](super::linux::spawn), adopted by a runtime: its pipes
//! in the runtime's reactor, its exit waited for through its pidfd and reaped exactly once, by
//! its own id (never `waitpid(-1)`, which would take a child of the host's).
//!
//! - smol: the pipes and the pidfd registered with async-io's reactor (`Async`), as
//!   async-process's own are; no thread of async-process is needed.
//! - tokio: the pipes as tokio's `pipe::Sender`/`pipe::Receiver`, the pidfd through `AsyncFd`,
//!   as tokio waits for its own children on Linux.
//!
//! A child whose exit status is dropped before it exited (the connection let it go) is handed
//! to the spawner thread, which reaps it once it exits.

use std::io;
use std::process::ExitStatus;

use super::linux::Spawned;
use super::reap::reap;
use crate::runtime::child::{Child, Writer};
use crate::stdio::pipe_reader::PipeReader;

/// A child of ours not reaped yet: reaped exactly once, by its id, here or (dropped before it
/// exited) on the spawner thread.
pub(crate) struct Process {
    pid: libc::pid_t,
    reaped: bool,
}

impl Process {
    fn new(pid: libc::pid_t) -> Process {
        Process { pid, reaped: false }
    }

    /// Its exit status if it has exited (reaping it), `None` while it runs.
    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.reaped {
            return Err(io::Error::other("the server process was already reaped"));
        }
        match reap(self.pid)? {
            Some(status) => {
                self.reaped = true;
                Ok(Some(status))
            }
            None => Ok(None),
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if !self.reaped && matches!(reap(self.pid), Ok(None)) {
            super::orphan(self.pid);
        }
    }
}

/// The child on smol's side: pipes and pidfd in async-io's reactor.
#[cfg(feature = "smol")]
pub(crate) fn on_smol(spawned: Spawned) -> io::Result<Child> {
    use crate::drain_read::DrainRead;
    use async_io::Async;
    use std::fs::File;

    let Spawned {
        pid,
        pidfd,
        stdin,
        stdout,
        stderr,
    } = spawned;
    let mut process = Process::new(pid);
    let group = super::group_of(pid as u32)?;
    let adopted = (|| {
        let stdin = Writer::Futures(Box::pin(Async::new(File::from(stdin))?));
        let stdout = PipeReader::Pipe(DrainRead::new(Async::new(File::from(stdout))?));
        let stderr = PipeReader::Pipe(DrainRead::new(Async::new(File::from(stderr))?));
        Ok::<_, io::Error>((stdin, stdout, stderr, Async::new(pidfd)?))
    })();
    let (stdin, stdout, stderr, pidfd) = adopted.inspect_err(|_| group.kill())?;
    Ok(Child {
        pid: pid as u32,
        group,
        stdin: Some(stdin),
        stdout: Some(stdout),
        stderr: Some(stderr),
        status: Box::pin(async move {
            loop {
                if let Some(status) = process.try_wait()? {
                    return Ok(status);
                }
                pidfd.readable().await?;
            }
        }),
    })
}

/// The child on tokio's side (on `handle`'s runtime): pipes and pidfd in tokio's reactor.
#[cfg(feature = "tokio")]
pub(crate) fn on_tokio(handle: &::tokio::runtime::Handle, spawned: Spawned) -> io::Result<Child> {
    use ::tokio::io::unix::AsyncFd;
    use ::tokio::io::Interest;
    use ::tokio::net::unix::pipe;

    let _entered = handle.enter();
    let Spawned {
        pid,
        pidfd,
        stdin,
        stdout,
        stderr,
    } = spawned;
    let mut process = Process::new(pid);
    let group = super::group_of(pid as u32)?;
    let adopted = (|| {
        let stdin = Writer::Tokio(Box::pin(pipe::Sender::from_owned_fd(stdin)?));
        let stdout = PipeReader::tokio_pipe(pipe::Receiver::from_owned_fd(stdout)?);
        let stderr = PipeReader::tokio_pipe(pipe::Receiver::from_owned_fd(stderr)?);
        // SAFETY: `pidfd` is an `OwnedFd`: open, and owned by the `AsyncFd` until it drops,
        // so it stays the same process's descriptor for as long as it is registered.
        let pidfd = unsafe { AsyncFd::register_with_interest(pidfd, Interest::READABLE) }
            .map_err(io::Error::from)?;
        Ok::<_, io::Error>((stdin, stdout, stderr, pidfd))
    })();
    let (stdin, stdout, stderr, pidfd) = adopted.inspect_err(|_| group.kill())?;
    Ok(Child {
        pid: pid as u32,
        group,
        stdin: Some(stdin),
        stdout: Some(stdout),
        stderr: Some(stderr),
        status: Box::pin(async move {
            loop {
                if let Some(status) = process.try_wait()? {
                    return Ok(status);
                }
                let mut ready = pidfd.readable().await?;
                if let Some(status) = process.try_wait()? {
                    return Ok(status);
                }
                ready.clear_ready();
            }
        }),
    })
}
