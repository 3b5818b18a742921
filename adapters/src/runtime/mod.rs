//! The runtime seam: what differs between the async runtimes a connection can run on, behind a
//! few small types, so that the driver's loop, the route, the dispatch and the
//! [`Client`](crate::Client) are written once.
//!
//! A connection runs on the runtime its entry point chose ([`Runtime`]), never on one picked by
//! the features that are on (they are additive: a build may hold both):
//!
//! - **smol** (`connect`, `connect_smol`, `connect_streams`): async-io's reactor and timers,
//!   async-process's children and reaper. `connect_smol` spawns the host's handlers as tasks on
//!   smol's global executor; `connect`, whose driver the host spawns where it likes, runs them
//!   as tasks inside the driver's own task (the executor the host chose for it).
//! - **tokio** (feature `tokio`, `mcpwire::tokio`): tokio's reactor (pipes read through
//!   `AsyncFd` on Unix), its timers, its children (reaped through its own child handling: a
//!   pidfd on Linux), its tasks for the handlers, all on the runtime current at connect time.
//!   No thread of async-io or async-process is started.
//!
//! What a runtime gives: a [`Timer`](timer::Timer), a spawned [`Task`](task::Task), a server
//! process with its pipes ([`Child`](child::Child): readers and a [`Writer`](child::Writer)).
//! The HTTP client's sockets come through the same seam ([`net`]: a non-blocking socket
//! registered with the runtime's reactor and read like a pipe, a connect, a name resolved, a
//! blocking look off the runtime's threads); OAuth's loopback listener is to come the same way.
//!
//! Every server is spawned on one spawner thread whatever the runtime (Linux's parent-death
//! signal follows the thread that spawned the child: see the `stdio::spawn` module).

pub(crate) mod child;
pub(crate) mod host;
pub(crate) mod net;
pub(crate) mod task;
pub(crate) mod timer;
#[cfg(feature = "smol")]
mod with_smol;
#[cfg(feature = "tokio")]
mod with_tokio;

use std::io;

use mcpwire_core::config::StdioConfig;

use crate::future::BoxFuture;
use crate::stdio::spawn;
use child::Child;
use task::Task;
use timer::Timer;

/// The runtime a connection runs on, chosen by its entry point.
#[derive(Clone, Debug)]
pub(crate) enum Runtime {
    /// async-io's reactor and timers, async-process's children. The host's handlers run as
    /// tasks on smol's global executor when `spawn` is set (`connect_smol`), else inside the
    /// driver's own task (`connect`: the driver runs wherever the host spawned it).
    #[cfg(feature = "smol")]
    Smol { spawn: bool },
    /// tokio's reactor, timers, children and tasks, on this runtime.
    #[cfg(feature = "tokio")]
    Tokio(::tokio::runtime::Handle),
}

impl Runtime {
    /// Now, on this runtime's clock: tokio's (which a test may pause and advance), async-io's
    /// (the system's monotonic clock).
    pub(crate) fn now(&self) -> std::time::Instant {
        match *self {
            #[cfg(feature = "smol")]
            Runtime::Smol { .. } => std::time::Instant::now(),
            #[cfg(feature = "tokio")]
            Runtime::Tokio(ref handle) => timer::tokio_now(handle),
        }
    }

    /// The runtime of what is made apart from a connection (the default HTTP client made
    /// alone): smol's when this build has it, else the tokio runtime current here, if any.
    pub(crate) fn ambient() -> Option<Runtime> {
        #[cfg(feature = "smol")]
        return Some(Runtime::Smol { spawn: false });
        #[cfg(all(not(feature = "smol"), feature = "tokio"))]
        return ::tokio::runtime::Handle::try_current()
            .ok()
            .map(Runtime::Tokio);
        #[cfg(not(any(feature = "smol", feature = "tokio")))]
        return None;
    }

    /// A timer, not armed.
    pub(crate) fn timer(&self) -> Timer {
        match *self {
            #[cfg(feature = "smol")]
            Runtime::Smol { .. } => Timer::smol(),
            #[cfg(feature = "tokio")]
            Runtime::Tokio(ref handle) => Timer::tokio(handle.clone()),
        }
    }

    /// Spawns `future` as a task of its own, or gives it back when this runtime runs tasks
    /// inside the driver's task.
    pub(crate) fn spawn(&self, future: BoxFuture<()>) -> Result<Task, BoxFuture<()>> {
        match *self {
            #[cfg(feature = "smol")]
            Runtime::Smol { spawn: true } => Ok(Task::smol(::smol::spawn(future))),
            #[cfg(feature = "smol")]
            Runtime::Smol { spawn: false } => Err(future),
            #[cfg(feature = "tokio")]
            Runtime::Tokio(ref handle) => Ok(Task::tokio(handle.spawn(future))),
        }
    }

    /// As [`spawn_server`](Self::spawn_server), awaited: the calling thread goes on while the
    /// server is spawned. A server spawned for a future dropped first is killed.
    pub(crate) fn spawn_server_async(&self, config: &StdioConfig) -> spawn::Spawning<Child> {
        spawn::on_spawner_thread_async(self.spawn_job(config), |child| child.group.kill())
    }

    /// Spawns the server described by `config`, with piped stdio, its process tree held as
    /// one, on the spawner thread.
    pub(crate) fn spawn_server(&self, config: &StdioConfig) -> io::Result<Child> {
        spawn::on_spawner_thread(self.spawn_job(config))
    }

    /// The spawn of the server described by `config` on this runtime, for the spawner thread.
    fn spawn_job(
        &self,
        config: &StdioConfig,
    ) -> impl FnOnce() -> io::Result<Child> + Send + 'static {
        let cmd = spawn::command(config);
        let runtime = self.clone();
        move || match runtime {
            #[cfg(feature = "smol")]
            Runtime::Smol { .. } => with_smol::spawn_child(cmd),
            #[cfg(feature = "tokio")]
            Runtime::Tokio(handle) => with_tokio::spawn_child(&handle, cmd),
        }
    }
}

/// Runs `test` on each runtime this build has (smol's `block_on`; tokio's current_thread and
/// multi-thread runtimes), given the runtime it runs on.
#[cfg(test)]
pub(crate) fn on_each(test: impl Fn(Runtime) -> BoxFuture<()>) {
    #[cfg(feature = "smol")]
    ::smol::block_on(test(Runtime::Smol { spawn: false }));
    #[cfg(feature = "tokio")]
    for multi_thread in [false, true] {
        let mut builder = match multi_thread {
            false => ::tokio::runtime::Builder::new_current_thread(),
            true => ::tokio::runtime::Builder::new_multi_thread(),
        };
        let rt = builder.enable_all().build().expect("a tokio runtime");
        rt.block_on(test(Runtime::Tokio(rt.handle().clone())));
    }
}
