//! Starting a server process: piped stdio, and the process tree it heads held as one, so that
//! it can be ended whole and ends with the host.
//!
//! - **Linux**: the server leads a process group of its own, and gets a parent-death signal
//!   (SIGKILL). That signal follows the thread that spawned the child, not the process, so every
//!   child is spawned from one long-lived spawner thread that lives as long as the host. If the
//!   host dies, the kernel kills the direct child; the rest of its group then sees stdin close.
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

use std::io;
use std::process::Stdio;
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

use mcpwire_core::config::{InheritEnv, StdioConfig};

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

pub(crate) use platform::Group;

/// A spawned server and the pipes to it.
pub(crate) struct Spawned {
    pub(crate) child: async_process::Child,
    pub(crate) pid: u32,
    /// The server's process tree, to end it.
    pub(crate) group: Group,
}

type Reply = mpsc::Sender<io::Result<(async_process::Child, Group)>>;

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
                    let spawned = cmd.spawn().and_then(|mut child| {
                        match platform::group_of(&child) {
                            Ok(group) => Ok((child, group)),
                            Err(e) => {
                                // Not started for real (on Windows it is still suspended).
                                let _ = child.kill();
                                Err(e)
                            }
                        }
                    });
                    let _ = reply.send(spawned);
                }
            })
            .expect("cannot start the process spawner thread");
        Mutex::new(tx)
    })
}

/// Spawns the server described by `config`, its process tree held as one (see the module's
/// documentation for what that is on each system).
pub(crate) fn spawn(config: &StdioConfig) -> io::Result<Spawned> {
    let mut cmd = std::process::Command::new(platform::program(config));
    cmd.args(&config.args);
    set_env(&mut cmd, config, |name| std::env::var_os(name));
    if let Some(cwd) = &config.cwd {
        cmd.current_dir(cwd);
    }
    platform::configure_child(&mut cmd);
    let (reply_tx, reply_rx) = mpsc::channel();
    spawner()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((cmd, reply_tx))
        .map_err(|_| io::Error::other("the process spawner thread is gone"))?;
    let (child, group) = reply_rx
        .recv()
        .map_err(|_| io::Error::other("the process spawner thread is gone"))??;
    let pid = child.id();
    Ok(Spawned { child, pid, group })
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
