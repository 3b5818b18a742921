//! Starting a server process: its own process group, a parent-death signal, piped stdio.
//!
//! On Linux the parent-death signal follows the thread that spawned the child, not the process,
//! so every child is spawned from one long-lived spawner thread that lives as long as the host.
//! If the host dies, the kernel kills the direct child; the rest of its group then sees stdin
//! close.

use std::io;
use std::process::Stdio;
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

use mcpwire_core::config::{InheritEnv, StdioConfig};

/// A spawned server and the pipes to it.
pub(crate) struct Spawned {
    pub(crate) child: async_process::Child,
    pub(crate) pid: i32,
}

type Reply = mpsc::Sender<io::Result<async_process::Child>>;

/// The spawner thread's queue.
fn spawner() -> &'static Mutex<mpsc::Sender<(std::process::Command, Reply)>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<(std::process::Command, Reply)>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<(std::process::Command, Reply)>();
        std::thread::Builder::new()
            .name("mcpwire-spawner".into())
            .spawn(move || {
                for (cmd, reply) in rx {
                    let mut cmd = async_process::Command::from(cmd);
                    cmd.stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped());
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("cannot start the process spawner thread");
        Mutex::new(tx)
    })
}

/// Spawns the server described by `config` in a new process group, with a parent-death signal.
pub(crate) fn spawn(config: &StdioConfig) -> io::Result<Spawned> {
    let mut cmd = std::process::Command::new(&config.command);
    cmd.args(&config.args);
    set_env(&mut cmd, config, |name| std::env::var_os(name));
    if let Some(cwd) = &config.cwd {
        cmd.current_dir(cwd);
    }
    configure_child(&mut cmd);
    let (reply_tx, reply_rx) = mpsc::channel();
    spawner()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((cmd, reply_tx))
        .map_err(|_| io::Error::other("the process spawner thread is gone"))?;
    let child = reply_rx
        .recv()
        .map_err(|_| io::Error::other("the process spawner thread is gone"))??;
    let pid = child.id() as i32;
    Ok(Spawned { child, pid })
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

#[cfg(target_os = "linux")]
fn configure_child(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
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

#[cfg(all(unix, not(target_os = "linux")))]
fn configure_child(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
}

/// Sends `signal` to the process group led by `pid`.
pub(crate) fn signal_group(pid: i32, signal: i32) {
    if pid > 0 {
        // SAFETY: `kill` has no memory-safety preconditions; a stale group id at worst fails with
        // ESRCH, which is ignored.
        unsafe {
            libc::kill(-pid, signal);
        }
    }
}

/// The signal numbers used by the shutdown plan.
pub(crate) const SIGTERM: i32 = libc::SIGTERM;
/// See [`SIGTERM`].
pub(crate) const SIGKILL: i32 = libc::SIGKILL;

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
