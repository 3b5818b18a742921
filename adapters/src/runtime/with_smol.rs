//! smol's side of the seam: a server process spawned through async-process (reaped by its
//! reaper, its pipes read through async-io's reactor).

use std::io;
use std::process::Stdio;

use super::child::{Child, Writer};
use crate::stdio::pipe_reader::PipeReader;
use crate::stdio::spawn;

/// Spawns `cmd` with piped stdio (on the spawner thread: see [`spawn::on_spawner_thread`]); on
/// Linux at `vfork`'s cost, then adopted (`spawn::adopt`).
pub(super) fn spawn_child(cmd: spawn::ServerCommand) -> io::Result<Child> {
    let cmd = match cmd.spawn_here()? {
        #[cfg(target_os = "linux")]
        spawn::Spawn::Started(spawned) => return spawn::adopt::on_smol(spawned),
        spawn::Spawn::Std(cmd) => cmd,
    };
    let mut cmd = async_process::Command::from(cmd);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let pid = child.id();
    #[cfg(unix)]
    let group = spawn::group_of(pid);
    #[cfg(windows)]
    let group = {
        use std::os::windows::io::AsRawHandle;
        spawn::group_of(pid, child.as_raw_handle())
    };
    let group = match group {
        Ok(group) => group,
        Err(e) => {
            // Not started for real (on Windows it is still suspended).
            let _ = child.kill();
            return Err(e);
        }
    };
    let stdin = child.stdin.take().map(|w| Writer::Futures(Box::pin(w)));
    let stdout = child.stdout.take().map(PipeReader::pipe);
    let stderr = child.stderr.take().map(PipeReader::pipe);
    let status = child.status();
    Ok(Child {
        pid,
        group,
        stdin,
        stdout,
        stderr,
        // The child is kept with its status: dropped, async-process's reaper reaps it.
        status: Box::pin(async move {
            let _child = child;
            status.await
        }),
    })
}
