//! The server's process tree on Windows: a job object of its own, which kills every process in
//! it when its last handle closes (when the connection lets the server go, and when the host
//! dies and the system closes its handles).
//!
//! The server is started suspended, put in the job, then resumed, so nothing it starts runs
//! outside the job. Windows has no SIGTERM for a process with no window: the close's graceful
//! step is stdin's end and its wait; after it the job is ended at once (the second step, where
//! Unix sends SIGTERM; the third, SIGKILL, then finds the tree gone). Where the system refuses a
//! job (an older Windows, or a host in a job that allows no nested ones), the server runs
//! without one and only the server itself is ended; what it started is left to notice its
//! stdin close.

use std::ffi::OsString;
use std::io;
use std::os::windows::io::{AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::os::windows::process::CommandExt;

use mcpwire_core::config::StdioConfig;
use windows_sys::Win32::Foundation::INVALID_HANDLE_VALUE;
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{
    OpenThread, ResumeThread, TerminateProcess, CREATE_NO_WINDOW, CREATE_SUSPENDED,
    THREAD_SUSPEND_RESUME,
};

/// The exit code of a server the host ended (what Task Manager gives, too).
const ENDED: u32 = 1;

/// A server's process tree: the job it runs in.
pub(crate) struct Group {
    /// The job of the server and of everything it starts; `None` where the system refused one
    /// (then only the server itself can be ended). Closing it ends whatever is still in it.
    job: Option<OwnedHandle>,
    /// The server process.
    process: OwnedHandle,
}

impl Group {
    /// The close's second step, once stdin's end was not enough. Windows has no SIGTERM for a
    /// process with no window: the job is ended at once.
    pub(crate) fn terminate(&self) {
        self.kill();
    }

    /// Whether the server's pipes are sure to end once the job is ended: yes with a job (no
    /// process in it can leave it, and the standard library keeps its other spawns from
    /// inheriting the pipes), so the exit is reported once their readers reach their ends, with
    /// all the server wrote (async-process reads them on threads that may be behind the exit).
    pub(crate) fn pipes_end_with_it(&self) -> bool {
        self.job.is_some()
    }

    /// At once, every process of the job (or the server alone, with no job).
    pub(crate) fn kill(&self) {
        // SAFETY: both handles are open for as long as `self` lives; ending a job or process
        // that already ended fails harmlessly, and that failure changes nothing here.
        unsafe {
            match &self.job {
                Some(job) => TerminateJobObject(job.as_raw_handle(), ENDED),
                None => TerminateProcess(self.process.as_raw_handle(), ENDED),
            };
        }
    }
}

/// The program to start: a bare command that `PATH` holds only as a batch script (`npx` is
/// `npx.cmd`, as npm installs it) is started as that script, which the system would not find
/// by the bare name; anything else as written.
pub(super) fn program(config: &StdioConfig) -> OsString {
    let path = config
        .env
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("PATH"))
        .map(|(_, value)| OsString::from(value))
        .or_else(|| std::env::var_os("PATH"));
    let pathext = std::env::var_os("PATHEXT");
    let found = path.as_deref().and_then(|path| {
        super::search::script_in_path(
            &config.command,
            path.to_str()?,
            pathext.as_deref().and_then(|e| e.to_str()),
            |p| p.is_file(),
        )
    });
    match found {
        Some(script) => script.into_os_string(),
        None => OsString::from(&config.command),
    }
}

/// Started suspended (it runs once it is in its job), with a console of its own that has no
/// window: none opens on a desktop, and the host's console events (Ctrl-C, Ctrl-Break, the
/// console closing) reach the host and not the server.
pub(super) fn configure_child(cmd: &mut std::process::Command) {
    cmd.creation_flags(CREATE_SUSPENDED | CREATE_NO_WINDOW);
}

/// Puts the child `pid` just spawned (suspended) in a job of its own, then lets it run.
/// `process` is its handle, which the caller keeps open for the call.
pub(crate) fn group_of(pid: u32, process: RawHandle) -> io::Result<Group> {
    // SAFETY: the caller holds the child, whose handle stays open for this call.
    let process = unsafe { BorrowedHandle::borrow_raw(process) }.try_clone_to_owned()?;
    let job = match new_job().and_then(|job| assign(&job, &process).map(|()| job)) {
        Ok(job) => Some(job),
        Err(_e) => {
            #[cfg(feature = "tracing")]
            tracing::warn!(
                "the server runs without a job object ({_e}): only the server itself is ended \
                 at its close"
            );
            None
        }
    };
    resume(pid)?;
    Ok(Group { job, process })
}

/// A job that kills every process in it when its last handle closes. Its handle is not
/// inherited: only this process holds it.
fn new_job() -> io::Result<OwnedHandle> {
    // SAFETY: no security attributes and no name are valid arguments; a null return is a
    // failure, told by the last error.
    let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a handle just opened, owned by nothing else.
    let job = unsafe { OwnedHandle::from_raw_handle(raw) };
    // SAFETY: the structure is plain data, for which all zeroes is a valid value.
    let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    // SAFETY: the pointer and length describe `limits`, which outlives the call.
    let set = unsafe {
        SetInformationJobObject(
            job.as_raw_handle(),
            JobObjectExtendedLimitInformation,
            (&limits as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
            size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        )
    };
    if set == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(job)
}

fn assign(job: &OwnedHandle, process: &OwnedHandle) -> io::Result<()> {
    // SAFETY: both handles are open; the call only reads them.
    if unsafe { AssignProcessToJobObject(job.as_raw_handle(), process.as_raw_handle()) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Resumes the threads of process `pid` (a process started suspended has one).
fn resume(pid: u32) -> io::Result<()> {
    // SAFETY: a snapshot of all threads takes no pointers; failure is INVALID_HANDLE_VALUE.
    let raw = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if raw == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a handle just opened, owned by nothing else.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(raw) };
    // SAFETY: the structure is plain data, for which all zeroes is a valid value.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = size_of::<THREADENTRY32>() as u32;
    let mut resumed = 0;
    // SAFETY: `entry` is a THREADENTRY32 with its size set, as both calls require.
    let mut more = unsafe { Thread32First(snapshot.as_raw_handle(), &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: opening a thread by id takes no pointers; failure is a null handle.
            let raw = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if raw.is_null() {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `raw` is a handle just opened, owned by nothing else.
            let thread = unsafe { OwnedHandle::from_raw_handle(raw) };
            // SAFETY: the handle is open, with the right to resume.
            if unsafe { ResumeThread(thread.as_raw_handle()) } == u32::MAX {
                return Err(io::Error::last_os_error());
            }
            resumed += 1;
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot.as_raw_handle(), &mut entry) } != 0;
    }
    if resumed == 0 {
        return Err(io::Error::other(
            "the new server process has no thread to resume",
        ));
    }
    Ok(())
}
