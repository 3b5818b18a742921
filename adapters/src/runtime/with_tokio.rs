//! tokio's side of the seam: a server process spawned through tokio's own child handling (its
//! exit waited for through a pidfd in tokio's reactor on Linux, through its SIGCHLD handling on
//! the other Unixes; a child dropped before it exited is reaped by tokio later), its pipes in
//! tokio's reactor.

use std::io;
use std::process::Stdio;

use super::child::{Child, Writer};
use crate::stdio::pipe_reader::PipeReader;
use crate::stdio::spawn;

/// Spawns `cmd` with piped stdio on `handle`'s runtime (on the spawner thread: see
/// [`spawn::on_spawner_thread`]); on Linux at `vfork`'s cost, then adopted (`spawn::adopt`).
pub(super) fn spawn_child(
    handle: &::tokio::runtime::Handle,
    cmd: spawn::ServerCommand,
) -> io::Result<Child> {
    let cmd = match cmd.spawn_here()? {
        #[cfg(target_os = "linux")]
        spawn::Spawn::Started(spawned) => return spawn::adopt::on_tokio(handle, spawned),
        spawn::Spawn::Std(cmd) => cmd,
    };
    // tokio registers the child's pipes and its exit with the runtime current where it is
    // spawned: the connection's.
    let _entered = handle.enter();
    let mut cmd = ::tokio::process::Command::from(cmd);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let group = child
        .id()
        .ok_or_else(|| io::Error::other("the new server process has no id"))
        .and_then(|pid| {
            #[cfg(unix)]
            let group = spawn::group_of(pid);
            #[cfg(windows)]
            let group = match child.raw_handle() {
                Some(process) => spawn::group_of(pid, process),
                None => Err(io::Error::other("the new server process has no handle")),
            };
            group.map(|group| (pid, group))
        });
    let (pid, group) = match group {
        Ok(group) => group,
        Err(e) => {
            // Not started for real (on Windows it is still suspended).
            let _ = child.start_kill();
            return Err(e);
        }
    };
    let stdin = child.stdin.take().map(|w| Writer::Tokio(Box::pin(w)));
    let stdout = child.stdout.take().map(PipeReader::tokio_pipe);
    let stderr = child.stderr.take().map(PipeReader::tokio_pipe);
    Ok(Child {
        pid,
        group,
        stdin,
        stdout,
        stderr,
        // The child is kept with its status: dropped before it exited, tokio reaps it.
        status: Box::pin(async move { child.wait().await }),
    })
}
