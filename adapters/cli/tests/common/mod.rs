//! Helpers shared by the CLI's integration tests: running the `mcpwire` binary and reading what
//! it printed, scratch folders, and (in [`peers`]) the installed peers.
//!
//! Each test file is its own binary and uses only some of these.
#![allow(dead_code)]

pub mod peers;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// This build's `mcpwire`.
pub const BIN: &str = env!("CARGO_BIN_EXE_mcpwire");

/// Runs `mcpwire ARGS` with stdin closed.
pub fn mcpwire(args: &[&str]) -> Output {
    mcpwire_env(args, &[])
}

/// Runs `mcpwire ARGS` with stdin closed and `env` added to the environment.
pub fn mcpwire_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the binary runs")
}

/// Runs `mcpwire ARGS` with stdin closed and without the environment's proxy variables.
pub fn mcpwire_without_proxies(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("https_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("http_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// `mcpwire` as a command whose process starts with SIGINT and SIGQUIT at their defaults: a
/// test that sends Ctrl-C reaches the command's handler even where the tests run with those
/// signals ignored (a background job of a non-interactive shell), which the command would
/// rightly keep ignoring (Unix; elsewhere the plain command).
pub fn command() -> Command {
    #[allow(unused_mut)]
    let mut command = Command::new(BIN);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: signal(2) is async-signal-safe, as what runs between fork and exec must be.
        unsafe {
            command.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGQUIT, libc::SIG_DFL);
                Ok(())
            });
        }
    }
    command
}

/// Starts `mcpwire ARGS` with `stdin` and its stdout and stderr piped.
pub fn spawn(args: &[&str], stdin: Stdio) -> Child {
    command()
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

/// Runs `mcpwire ARGS` with `input` on its stdin, which it must read in full.
pub fn mcpwire_with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = spawn(args, Stdio::piped());
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// Runs `mcpwire ARGS` with `input` on its stdin, which it may leave unread (a command that
/// fails on its arguments reads none of it): only a broken pipe is allowed when writing it.
pub fn mcpwire_with_stdin_maybe_unread(args: &[&str], input: &[u8]) -> Output {
    let mut child = spawn(args, Stdio::piped());
    let written = child.stdin.take().expect("stdin is piped").write_all(input);
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().expect("the binary ends")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

pub fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

/// Stdout, a newline, then stderr.
pub fn stdout_and_stderr(o: &Output) -> String {
    format!("{}\n{}", stdout(o), stderr(o))
}

/// A new empty folder `mcpwire-cli-{tag}-{pid}-{n}` in the temporary directory.
pub fn temp(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "mcpwire-cli-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `body` with each `"{BIN}"` replaced by this build's `mcpwire` as a quoted string (JSON and
/// TOML alike).
pub fn with_bin(body: &str) -> String {
    body.replace("\"{BIN}\"", &serde_json::to_string(BIN).unwrap())
}

/// Asserts that `text` holds `part`, showing `text` when it does not.
#[track_caller]
pub fn assert_contains(text: &str, part: &str) {
    assert!(text.contains(part), "{part:?} is missing from:\n{text}");
}
