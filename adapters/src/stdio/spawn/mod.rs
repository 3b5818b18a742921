//! Starting a server process: piped stdio, and the process tree it heads held as one, so that
//! it can be ended whole and ends with the host.
//!
//! - **Linux**: the server leads a process group of its own, and gets a parent-death signal
//!   (SIGKILL). That signal follows the thread that spawned the child, not the process, so every
//!   child is spawned from one long-lived spawner thread that lives as long as the host. If the
//!   host dies, the kernel kills the direct child; the rest of its group then sees stdin close.
//!   The child is made at the cost of a `vfork` (`linux`), and adopted by the runtime through
//!   its pipes and a pidfd (`adopt`).
//! - **macOS and the other Unixes**: the process group, and no parent-death signal (the system
//!   has none): if the host dies, the server sees its stdin close (and its stdout's reader
//!   gone); a server that exits at stdin's end, as the MCP stdio transport asks, ends there,
//!   and what it started itself lives on unless it too watches its stdin.
//! - **Windows**: the server is started suspended, put in a job object of its own that kills
//!   every process in it when its last handle closes, then resumed: nothing it starts escapes
//!   the job, the job is ended at once where Unix signals the group, and when the host dies
//!   (its handles closed by the system) the whole tree ends. It gets a console of its own with
//!   no window, so no console window opens for it and the host's console events (Ctrl-C,
//!   Ctrl-Break, the console closing) reach the host, not the server (as the process group
//!   keeps a terminal's Ctrl-C away from it on Unix).
//!
//! The platform parts live in `unix` and `windows`; this module holds what they share.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

use mcpwire_core::config::{InheritEnv, StdioConfig};

#[cfg(target_os = "linux")]
pub(crate) mod adopt;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod reap;
#[cfg(any(windows, test))]
mod search;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as platform;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as platform;

pub(crate) use platform::{group_of, Group};
#[cfg(unix)]
pub(crate) use unix::FdLimit;

/// A spawn to make on the spawner thread.
type Job = Box<dyn FnOnce() + Send>;

/// The spawner thread's queue.
fn spawner() -> &'static Mutex<mpsc::Sender<Job>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("mcpwire-spawner".into())
            .spawn(move || serve(rx))
            .expect("cannot start the process spawner thread");
        Mutex::new(tx)
    })
}

/// The spawner thread: the spawns in turn; on Linux, between them, the children nobody waits
/// for any more reaped as they exit (looked at every 100 ms while there are some).
fn serve(rx: mpsc::Receiver<Job>) {
    let mut orphans = false;
    loop {
        let job = if orphans {
            match rx.recv_timeout(std::time::Duration::from_millis(100)) {
                Ok(job) => Some(job),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        } else {
            match rx.recv() {
                Ok(job) => Some(job),
                Err(_) => return,
            }
        };
        if let Some(job) = job {
            // The thread must outlive every server it spawned (their parent-death signal follows
            // it): a job that panics ends that job only.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        }
        orphans = reap_orphans();
    }
}

/// Reaps the children nobody waits for that exited; whether some are left.
#[cfg(target_os = "linux")]
fn reap_orphans() -> bool {
    reap::reap_orphans()
}

/// No orphans off Linux: the runtimes reap their own children.
#[cfg(not(target_os = "linux"))]
fn reap_orphans() -> bool {
    false
}

/// Hands the child `pid`, whose exit nobody waits for any more, to the spawner thread, which
/// reaps it once it exits.
#[cfg(target_os = "linux")]
fn orphan(pid: libc::pid_t) {
    let job: Job = Box::new(move || reap::keep_orphan(pid));
    let _ = spawner()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(job);
}

/// How a server is to be started: its configuration, made into a process on the spawner
/// thread (on Linux at `vfork`'s cost, see `linux`; else by the standard library's command,
/// which the runtime's own command takes).
pub(crate) struct ServerCommand {
    config: StdioConfig,
}

/// What [`ServerCommand::spawn_here`] did.
pub(crate) enum Spawn {
    /// Started (Linux): for the runtime to adopt (`adopt`).
    #[cfg(target_os = "linux")]
    Started(linux::Spawned),
    /// Not started: the command for the runtime's own spawn, its pipes not set yet.
    Std(std::process::Command),
}

impl ServerCommand {
    /// On the spawner thread: starts the server at `vfork`'s cost where the system allows
    /// (Linux with a pidfd from `clone`), else gives back the standard library's command.
    pub(crate) fn spawn_here(self) -> io::Result<Spawn> {
        #[cfg(target_os = "linux")]
        if let Some(spawned) = linux::spawn(&self.config)? {
            return Ok(Spawn::Started(spawned));
        }
        Ok(Spawn::Std(std_command(&self.config)))
    }
}

/// The command that starts the server described by `config`: program, arguments, environment,
/// working folder, and what holds its process tree as one (see the module's documentation for
/// what that is on each system).
pub(crate) fn command(config: &StdioConfig) -> ServerCommand {
    ServerCommand {
        config: config.clone(),
    }
}

/// [`command`] as the standard library's, its pipes not set yet.
fn std_command(config: &StdioConfig) -> std::process::Command {
    let mut cmd = std::process::Command::new(platform::program(config));
    cmd.args(&config.args);
    set_env(&mut cmd, config, |name| std::env::var_os(name));
    if let Some(cwd) = &config.cwd {
        cmd.current_dir(cwd);
    }
    platform::configure_child(&mut cmd);
    cmd
}

/// Runs `spawn` on the spawner thread and gives back what it gave: every server is spawned
/// there, so that its parent-death signal (Linux) follows a thread that lives as long as the
/// host. `spawn` spawns one process and returns at once. A spawn that failed for want of file
/// descriptors gives an error carrying the process's limit (`FdLimit`, on Unix).
pub(crate) fn on_spawner_thread<R: Send + 'static>(
    spawn: impl FnOnce() -> io::Result<R> + Send + 'static,
) -> io::Result<R> {
    let gone = || io::Error::other("the process spawner thread is gone");
    let (reply_tx, reply_rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _ = reply_tx.send(spawn());
    });
    spawner()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(job)
        .map_err(|_| gone())?;
    let spawned = reply_rx.recv().map_err(|_| gone())?;
    #[cfg(unix)]
    let spawned = spawned.map_err(unix::explain);
    spawned
}

/// As [`on_spawner_thread`], awaited: the caller's thread goes on while the spawner spawns, so
/// that many servers started at once are spawned one after the other with no wait between
/// them. `abandon` takes what was spawned for a caller that stopped waiting (its future
/// dropped first): it ends the server.
pub(crate) fn on_spawner_thread_async<R: Send + 'static>(
    spawn: impl FnOnce() -> io::Result<R> + Send + 'static,
    abandon: fn(R),
) -> Spawning<R> {
    let reply = Arc::new(Mutex::new(Reply {
        result: None,
        waker: None,
        awaited: true,
        abandon,
    }));
    let theirs = Arc::clone(&reply);
    let job: Job = Box::new(move || {
        // A spawn that panicked is a failure told to its caller, who would wait for ever else.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(spawn))
            .unwrap_or_else(|_| Err(io::Error::other("the spawn panicked")));
        let mut reply = theirs.lock().unwrap_or_else(|e| e.into_inner());
        if !reply.awaited {
            if let Ok(spawned) = result {
                (reply.abandon)(spawned);
            }
            return;
        }
        reply.result = Some(result);
        let waker = reply.waker.take();
        drop(reply);
        if let Some(waker) = waker {
            waker.wake();
        }
    });
    let sent = spawner()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(job);
    if sent.is_err() {
        let gone = io::Error::other("the process spawner thread is gone");
        reply.lock().unwrap_or_else(|e| e.into_inner()).result = Some(Err(gone));
    }
    Spawning { reply }
}

/// A spawn on the spawner thread, awaited ([`on_spawner_thread_async`]).
pub(crate) struct Spawning<R> {
    reply: Arc<Mutex<Reply<R>>>,
}

/// What the spawner thread gives back, and who waits for it.
struct Reply<R> {
    result: Option<io::Result<R>>,
    waker: Option<Waker>,
    /// False once the caller stopped waiting: what is spawned then goes to `abandon`.
    awaited: bool,
    abandon: fn(R),
}

impl<R> Future for Spawning<R> {
    type Output = io::Result<R>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        let mut reply = self.reply.lock().unwrap_or_else(|e| e.into_inner());
        match reply.result.take() {
            #[cfg(unix)]
            Some(result) => Poll::Ready(result.map_err(unix::explain)),
            #[cfg(not(unix))]
            Some(result) => Poll::Ready(result),
            None => {
                reply.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl<R> Drop for Spawning<R> {
    fn drop(&mut self) {
        let mut reply = self.reply.lock().unwrap_or_else(|e| e.into_inner());
        reply.awaited = false;
        if let Some(Ok(spawned)) = reply.result.take() {
            (reply.abandon)(spawned);
        }
    }
}

/// The server's environment: the inherited part (all of the host's, or only the listed
/// variables that `host_var` finds), without the removed names, then its own `env`.
fn set_env(
    cmd: &mut std::process::Command,
    config: &StdioConfig,
    host_var: impl Fn(&str) -> Option<std::ffi::OsString>,
) {
    if let InheritEnv::Only(names) = &config.inherit_env {
        cmd.env_clear();
        for name in names {
            if let Some(value) = host_var(name) {
                cmd.env(name, value);
            }
        }
    }
    for name in &config.env_remove {
        cmd.env_remove(name);
    }
    cmd.envs(&config.env);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::{OsStr, OsString};

    fn envs(cmd: &std::process::Command) -> Vec<(String, Option<String>)> {
        let text = |s: &OsStr| s.to_string_lossy().into_owned();
        let mut out: Vec<_> = cmd
            .get_envs()
            .map(|(k, v)| (text(k), v.map(text)))
            .collect();
        out.sort();
        out
    }

    /// Polls `future` to its end on this thread, parked between polls.
    fn wait<F: Future>(future: F) -> F::Output {
        struct Unpark(std::thread::Thread);
        impl std::task::Wake for Unpark {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut cx = Context::from_waker(&waker);
        let mut future = std::pin::pin!(future);
        loop {
            if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
                return out;
            }
            std::thread::park();
        }
    }

    #[test]
    fn a_spawn_that_panics_is_a_failure_and_the_spawner_lives_on() {
        let failed = wait(on_spawner_thread_async(
            || -> io::Result<u32> { panic!("a spawn's bug") },
            |_| {},
        ));
        assert_eq!(failed.unwrap_err().to_string(), "the spawn panicked");
        // A synchronous job that panics: its caller is told, and the thread goes on.
        let gone = on_spawner_thread(|| -> io::Result<u32> { panic!("another") });
        assert!(gone.is_err());
        assert_eq!(wait(on_spawner_thread_async(|| Ok(7), |_| {})).unwrap(), 7);
        assert_eq!(on_spawner_thread(|| Ok(8)).unwrap(), 8);
    }

    #[test]
    fn a_whitelist_starts_from_an_empty_environment_and_takes_only_its_names_that_are_set() {
        let config = StdioConfig {
            command: "srv".into(),
            env: [("OWN".to_owned(), "mine".to_owned())].into(),
            inherit_env: InheritEnv::Only(vec!["HOME".into(), "UNSET".into()]),
            ..StdioConfig::default()
        };
        let mut cmd = std::process::Command::new("srv");
        set_env(&mut cmd, &config, |name| {
            (name == "HOME").then(|| OsString::from("/home/u"))
        });
        assert_eq!(
            envs(&cmd),
            [
                ("HOME".to_owned(), Some("/home/u".to_owned())),
                ("OWN".to_owned(), Some("mine".to_owned())),
            ]
        );
    }

    #[test]
    fn removed_names_are_taken_out_of_the_inherited_environment() {
        let config = StdioConfig {
            command: "srv".into(),
            env_remove: vec!["GONE".into()],
            ..StdioConfig::default()
        };
        let mut cmd = std::process::Command::new("srv");
        set_env(&mut cmd, &config, |_| None);
        assert_eq!(envs(&cmd), [("GONE".to_owned(), None)]);
    }
}
