//! Linux: a server started at the cost of `vfork`, not `fork`.
//!
//! The parent-death signal must be armed in the child before `exec`, which the standard
//! library allows only through `pre_exec`, and a `pre_exec` makes it `fork`: the host's page
//! tables are copied for every server and the host then takes copy-on-write faults. Here the
//! child is made with `clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD)`, as glibc's `posix_spawn`
//! makes its own: it shares the host's memory, the spawning thread waits until it has called
//! `execve` (or failed), and the kernel gives a pidfd for its exit at once. On its own stack it
//! runs only async-signal-safe calls: the signal dispositions and mask reset as the standard
//! library leaves them (a handled signal back to its default, `SIGPIPE` too, the mask empty),
//! a process group of its own, the parent-death signal (SIGKILL) with the check that the host
//! did not die before it was armed, its pipes as stdin, stdout and stderr, its working folder,
//! and `execve` of a path resolved before (with the server's own `PATH`). A failure's `errno`
//! is written in the memory it shares with the host, which reads it once the spawning thread
//! goes on; the child then exits (127) and is reaped at once.
//!
//! Where the kernel refuses `CLONE_PIDFD` (before 5.2) the standard library's spawn is used,
//! as on the other systems.

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

use libc::{c_char, c_int, c_void};
use mcpwire_core::config::{InheritEnv, StdioConfig};

/// A server process just started: its id, a pidfd for its exit (not reaped: see
/// [`Process`](super::adopt::Process)), and the host's ends of its pipes.
pub(crate) struct Spawned {
    pub(crate) pid: libc::pid_t,
    pub(crate) pidfd: OwnedFd,
    pub(crate) stdin: OwnedFd,
    pub(crate) stdout: OwnedFd,
    pub(crate) stderr: OwnedFd,
}

/// Set once the kernel refused `CLONE_PIDFD`: every spawn then goes through the standard
/// library.
static REFUSED: AtomicBool = AtomicBool::new(false);

/// The child's stack: it runs a few system calls only.
const STACK: usize = 64 * 1024;

/// What the child reads (all prepared by the parent, in memory they share) and the one thing
/// it writes: the `errno` of the step that failed.
struct ChildArgs {
    path: *const c_char,
    argv: *const *const c_char,
    /// `/bin/sh`, the path, then the arguments: for a file with no `#!` line (ENOEXEC), which
    /// `execvp` (the standard library's `fork` path) runs with the shell.
    sh_argv: *const *const c_char,
    envp: *const *const c_char,
    /// Null: the host's working folder.
    cwd: *const c_char,
    /// The child's ends of its stdin, stdout and stderr pipes (all above 2, close-on-exec).
    stdio: [RawFd; 3],
    /// The host's process id, for the parent-death check.
    parent: libc::pid_t,
    /// Written by the child when a step fails; 0 else.
    error: c_int,
}

/// Starts the server of `config` with piped stdio, or `None` where this kernel cannot (the
/// caller then uses the standard library's spawn). Call it on the spawner thread: the
/// parent-death signal follows the thread that spawned the child.
pub(crate) fn spawn(config: &StdioConfig) -> io::Result<Option<Spawned>> {
    if REFUSED.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let env = environment(config, |name| std::env::var_os(name));
    let path = resolve(&config.command, &env, config.cwd.as_deref())?;
    let path = c_string(path.into_os_string())?;
    let argv: Vec<CString> = std::iter::once(&config.command)
        .chain(&config.args)
        .map(|a| c_string(a.into()))
        .collect::<io::Result<_>>()?;
    let envp: Vec<CString> = env
        .into_iter()
        .map(|(mut name, value)| {
            name.push("=");
            name.push(value);
            c_string(name)
        })
        .collect::<io::Result<_>>()?;
    let cwd = config
        .cwd
        .as_ref()
        .map(|c| c_string(c.clone().into_os_string()))
        .transpose()?;
    let argv_ptrs = null_terminated(&argv);
    let sh = c"/bin/sh";
    let sh_argv_ptrs: Vec<*const c_char> = [sh.as_ptr(), path.as_ptr()]
        .into_iter()
        .chain(argv[1..].iter().map(|a| a.as_ptr()))
        .chain(std::iter::once(ptr::null()))
        .collect();
    let envp_ptrs = null_terminated(&envp);

    // (read, write): the child reads its stdin and writes its stdout and stderr.
    let (stdin_child, stdin) = pipe()?;
    let (stdout, stdout_child) = pipe()?;
    let (stderr, stderr_child) = pipe()?;
    let mut args = ChildArgs {
        path: path.as_ptr(),
        argv: argv_ptrs.as_ptr(),
        sh_argv: sh_argv_ptrs.as_ptr(),
        envp: envp_ptrs.as_ptr(),
        cwd: cwd.as_ref().map_or(ptr::null(), |c| c.as_ptr()),
        stdio: [
            stdin_child.as_raw_fd(),
            stdout_child.as_raw_fd(),
            stderr_child.as_raw_fd(),
        ],
        parent: std::process::id() as libc::pid_t,
        error: 0,
    };
    let stack = match SPARE_STACK.take() {
        Some(stack) => stack,
        None => Stack::new()?,
    };
    let mut pidfd: c_int = -1;
    let pid = {
        let _blocked = BlockedSignals::new();
        // SAFETY: `child` runs on `stack` (mapped, writable, its top 16-byte aligned) in the
        // host's memory (CLONE_VM) while this thread waits (CLONE_VFORK) until it has called
        // `execve` or exited, so `args` and everything it points to outlive its use; it calls
        // only async-signal-safe functions and never returns into Rust frames of the host's.
        // All signals are blocked on this thread until then, so no handler of the host's runs
        // in the child on shared memory. With CLONE_PIDFD the kernel writes the pidfd through
        // the fifth argument, which points to a live `c_int`.
        unsafe {
            libc::clone(
                child,
                stack.top(),
                libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD | libc::SIGCHLD,
                (&mut args as *mut ChildArgs).cast::<c_void>(),
                &mut pidfd as *mut c_int,
            )
        }
    };
    // The child has called `execve` or exited: its stack is free for the next spawn on this
    // thread, and its ends of the pipes are done.
    SPARE_STACK.set(Some(stack));
    drop((stdin_child, stdout_child, stderr_child));
    if pid < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINVAL) {
            REFUSED.store(true, Ordering::Relaxed);
            return Ok(None);
        }
        return Err(e);
    }
    // SAFETY: with CLONE_PIDFD a successful `clone` wrote a new descriptor that nothing else
    // owns.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    // SAFETY: the child wrote `error` before it exited, and this thread went on only after
    // that (CLONE_VFORK); a volatile read keeps the compiler from assuming it unchanged.
    let error = unsafe { ptr::read_volatile(&args.error) };
    if error != 0 {
        // The child exited (127) without `execve`: reaped here, exactly this process.
        let mut status = 0;
        // SAFETY: `waitpid` on our own child's id, with a pointer to a live integer.
        while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
            && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
        {}
        return Err(io::Error::from_raw_os_error(error));
    }
    Ok(Some(Spawned {
        pid,
        pidfd,
        stdin,
        stdout,
        stderr,
    }))
}

/// The child, between `clone` and `execve`. Only async-signal-safe calls; a failure is
/// written to `error` and ends it with 127.
extern "C" fn child(arg: *mut c_void) -> c_int {
    let args = arg.cast::<ChildArgs>();
    // SAFETY: `arg` is the parent's `ChildArgs`, alive and not touched by the parent until
    // this child has called `execve` or exited; every pointer in it is valid for as long.
    // Every call below is async-signal-safe, with valid arguments.
    unsafe {
        // The dispositions as the standard library's spawn leaves them after `execve`: a
        // handled signal back to its default (before the mask is cleared, so that no handler
        // of the host's runs here), an ignored one left ignored, SIGPIPE to its default.
        for signal in 1..=64 {
            if signal == libc::SIGKILL || signal == libc::SIGSTOP {
                continue;
            }
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, ptr::null(), &mut old) != 0 {
                continue;
            }
            if signal == libc::SIGPIPE
                || (old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN)
            {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, ptr::null_mut());
            }
        }
        if libc::setpgid(0, 0) != 0 {
            fail(args);
        }
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        ) != 0
        {
            fail(args);
        }
        // The host may have died before the signal was armed.
        if libc::getppid() != (*args).parent {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        for (target, fd) in (*args).stdio.iter().enumerate() {
            // Each `fd` is above 2, so `dup2` makes a new descriptor, without close-on-exec.
            if libc::dup2(*fd, target as c_int) < 0 {
                fail(args);
            }
        }
        if !(*args).cwd.is_null() && libc::chdir((*args).cwd) != 0 {
            fail(args);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::pthread_sigmask(libc::SIG_SETMASK, &empty, ptr::null_mut());
        libc::execve((*args).path, (*args).argv, (*args).envp);
        if *libc::__errno_location() == libc::ENOEXEC {
            libc::execve(*(*args).sh_argv, (*args).sh_argv, (*args).envp);
            // The shell's failure is not the program's: its own error is told.
            *libc::__errno_location() = libc::ENOEXEC;
        }
        fail(args)
    }
}

/// The child's end after a failed step: its `errno` written for the parent, then exit 127.
///
/// # Safety
/// `args` is the parent's `ChildArgs`, in the memory the child shares with it.
unsafe fn fail(args: *mut ChildArgs) -> ! {
    // SAFETY: as the caller promises; `errno` is this thread's, readable at any time.
    unsafe {
        ptr::write_volatile(ptr::addr_of_mut!((*args).error), *libc::__errno_location());
        libc::_exit(127)
    }
}

thread_local! {
    /// The stack of this thread's last spawn, for its next: spawns on one thread are one after
    /// the other, and a child is done with its stack once the thread goes on.
    static SPARE_STACK: std::cell::Cell<Option<Stack>> = const { std::cell::Cell::new(None) };
}

/// The child's stack: an anonymous mapping with a guard page at its low end.
struct Stack {
    base: *mut c_void,
}

impl Stack {
    fn new() -> io::Result<Stack> {
        // SAFETY: an anonymous private mapping takes no pointer; failure is MAP_FAILED.
        let base = unsafe {
            libc::mmap(
                ptr::null_mut(),
                STACK,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = Stack { base };
        // SAFETY: the first page of the mapping just made; an overflow then faults.
        if unsafe { libc::mprotect(base, 4096, libc::PROT_NONE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }

    /// Its top (the stack grows down), 16-byte aligned as the mapping is page-aligned.
    fn top(&self) -> *mut c_void {
        // SAFETY: one past the mapping's end, as `clone` expects of a downward stack.
        unsafe { self.base.cast::<u8>().add(STACK).cast() }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, no longer used (the child has exec'd or exited).
        unsafe {
            libc::munmap(self.base, STACK);
        }
    }
}

/// Every signal blocked on this thread while it lives; the mask as it was after.
struct BlockedSignals {
    old: libc::sigset_t,
}

impl BlockedSignals {
    fn new() -> BlockedSignals {
        // SAFETY: plain sets filled by `sigfillset`/`pthread_sigmask` through valid pointers.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            BlockedSignals { old }
        }
    }
}

impl Drop for BlockedSignals {
    fn drop(&mut self) {
        // SAFETY: the mask saved in `new`, through a valid pointer.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, ptr::null_mut());
        }
    }
}

/// A pipe's (read, write) ends, both close-on-exec and above 2 (so that `dup2` onto 0–2 never
/// meets itself).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: `pipe2` writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just made and are owned by nothing else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((above_stdio(read)?, above_stdio(write)?))
}

/// `fd`, or a close-on-exec copy of it numbered 3 or more when it is 0, 1 or 2 (a host that
/// closed its own stdio).
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    // SAFETY: duplicating an open descriptor; failure is -1.
    let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just made, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

fn c_string(s: OsString) -> io::Result<CString> {
    CString::new(s.into_vec()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "nul byte found in provided data",
        )
    })
}

/// The pointers of `strings`, then a null.
fn null_terminated(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(ptr::null()))
        .collect()
}

/// The server's environment, as `super::set_env` gives it to the standard library's command:
/// the inherited part (all of the host's, or only the listed variables that `host_var` finds),
/// without the removed names, then its own `env`.
fn environment(
    config: &StdioConfig,
    host_var: impl Fn(&str) -> Option<OsString>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = match &config.inherit_env {
        InheritEnv::Only(names) => names
            .iter()
            .filter_map(|name| Some((OsString::from(name), host_var(name)?)))
            .collect(),
        _ => std::env::vars_os().collect(),
    };
    env.retain(|(name, _)| {
        !config.env_remove.iter().any(|r| OsStr::new(r) == name)
            && !config.env.contains_key(&*name.to_string_lossy())
    });
    env.extend(
        config
            .env
            .iter()
            .map(|(name, value)| (OsString::from(name), OsString::from(value))),
    );
    env
}

/// The program to `execve`: `command` as written when it holds a `/`, else the first
/// executable file named so in the server's `PATH` (the system's default without one), as
/// `execvp` searches it in the child. A relative folder of `PATH` is the server's working
/// folder's. Not found: ENOENT; found but not executable: EACCES (as `execvp` tells).
fn resolve(command: &str, env: &[(OsString, OsString)], cwd: Option<&Path>) -> io::Result<PathBuf> {
    if command.is_empty() {
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    }
    if command.contains('/') {
        return Ok(PathBuf::from(command));
    }
    let default_path = OsString::from("/bin:/usr/bin");
    let path = env
        .iter()
        .find(|(name, _)| name == "PATH")
        .map_or(&default_path, |(_, value)| value);
    let mut denied = false;
    for dir in path.as_bytes().split(|b| *b == b':') {
        let dir = match dir {
            b"" => Path::new("."),
            dir => Path::new(OsStr::from_bytes(dir)),
        };
        let mut candidate = match cwd {
            Some(cwd) if dir.is_relative() => cwd.join(dir).join(command),
            _ => dir.join(command),
        };
        if candidate.is_relative() {
            // The child runs `execve` after changing folder: a path from here must be whole.
            if let Ok(here) = std::env::current_dir() {
                candidate = here.join(candidate);
            }
        }
        match std::fs::metadata(&candidate) {
            Ok(meta) if meta.is_file() && executable(&candidate) => return Ok(candidate),
            Ok(_) => denied = true,
            Err(_) => {}
        }
    }
    let errno = if denied { libc::EACCES } else { libc::ENOENT };
    Err(io::Error::from_raw_os_error(errno))
}

fn executable(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `access` reads a NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_name_is_found_in_the_server_s_own_path_and_a_path_is_taken_as_written() {
        let env = [(OsString::from("PATH"), OsString::from("/nonexistent:/bin"))];
        assert_eq!(resolve("sh", &env, None).unwrap(), Path::new("/bin/sh"));
        assert_eq!(
            resolve("./x/srv", &env, None).unwrap(),
            Path::new("./x/srv")
        );
        let e = resolve("no-such-program-here", &env, None).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
        // A folder of that name is found but cannot be run.
        let env = [(OsString::from("PATH"), OsString::from("/"))];
        let e = resolve("etc", &env, None).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EACCES));
    }

    #[test]
    fn the_environment_is_the_inherited_part_less_the_removed_names_then_its_own() {
        let config = StdioConfig {
            command: "srv".into(),
            env: [
                ("OWN".to_owned(), "mine".to_owned()),
                ("HOME".to_owned(), "x".to_owned()),
            ]
            .into(),
            inherit_env: InheritEnv::Only(vec!["HOME".into(), "USER".into(), "UNSET".into()]),
            env_remove: vec!["USER".into()],
            ..StdioConfig::default()
        };
        let mut env = environment(&config, |name| {
            (name != "UNSET").then(|| OsString::from(format!("host-{name}")))
        });
        env.sort();
        assert_eq!(
            env,
            [
                (OsString::from("HOME"), OsString::from("x")),
                (OsString::from("OWN"), OsString::from("mine")),
            ]
        );
    }
}
