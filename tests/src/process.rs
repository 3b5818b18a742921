//! Whether a server's process is still there, for the tests that check what outlives a close.

/// Whether process `pid` is still there: a process that exited and awaits reaping (a zombie) or
/// is dead counts as gone.
#[cfg(not(windows))]
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

/// Whether process `pid` is still there: it has that id and has not exited (these tests run on
/// Windows under Wine too, `.ci/wine.sh`, where `/proc` is the Linux machine's).
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
