//! What the tests of this crate share: the built-in demo server as a stdio server, a bound on the
//! time a future may take, and whether a server's process is still there.
//!
//! Each test file takes what it needs (`mod common;`); the rest is unused there.
#![allow(dead_code)]

use std::future::Future;
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::ServerConfig;

/// The built-in demo server (this package's `mcpwire-demo-server`) over stdio.
pub fn demo() -> ServerConfig {
    demo_with(Vec::<String>::new())
}

/// The built-in demo server over stdio, started with `args` (`--host-requests`, …).
pub fn demo_with<I, S>(args: I) -> ServerConfig
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    ServerConfig::stdio(env!("CARGO_BIN_EXE_mcpwire-demo-server"), args)
}

/// `fut`'s output, or `None` after `limit` (so that a regression fails instead of hanging).
pub async fn within<T>(limit: Duration, fut: impl Future<Output = T>) -> Option<T> {
    future::or(async { Some(fut.await) }, async {
        async_io::Timer::after(limit).await;
        None
    })
    .await
}

/// `fut`'s output, or a panic naming `what` after `limit`.
pub async fn done_within<T>(limit: Duration, what: &str, fut: impl Future<Output = T>) -> T {
    within(limit, fut)
        .await
        .unwrap_or_else(|| panic!("{what}: not done within {limit:?}"))
}

/// Waits up to `limit` for `pid` to be gone.
pub fn gone_within(pid: u32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Whether a process is still there (one that exited and awaits reaping counts as gone).
#[cfg(target_os = "linux")]
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

/// Whether a process is still there (a zombie counts as there).
#[cfg(all(unix, not(target_os = "linux")))]
pub fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
}

/// Whether a process is still there: it has that id and has not exited (the tests run on
/// Windows under Wine too: `.ci/wine.sh`).
#[cfg(windows)]
pub fn alive(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::{CloseHandle, WAIT_TIMEOUT};
    use windows_sys::Win32::System::Threading::{
        OpenProcess, WaitForSingleObject, PROCESS_SYNCHRONIZE,
    };
    // SAFETY: opening a process by id takes no pointers; a null handle is no such process. An
    // open handle is waited on without blocking, then closed once.
    unsafe {
        let handle = OpenProcess(PROCESS_SYNCHRONIZE, 0, pid);
        if handle.is_null() {
            return false;
        }
        let running = WaitForSingleObject(handle, 0) == WAIT_TIMEOUT;
        CloseHandle(handle);
        running
    }
}
