//! The command line's own limit of open files: raised at start to the hard limit (Unix), since
//! a configuration of many servers takes three or four descriptors a server. The library never
//! changes it (it is the whole process's); a command line is the process, so it may.

/// Raises this process's soft `RLIMIT_NOFILE` to its hard limit (nothing where that fails, or
/// off Unix).
#[cfg(unix)]
pub(crate) fn raise() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes one `rlimit` through a pointer to a live one.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return;
    }
    if limit.rlim_cur == limit.rlim_max {
        return;
    }
    // macOS refuses a soft limit above `OPEN_MAX` (10240, `<sys/syslimits.h>`; the libc crate
    // does not name it there) when the hard limit is unlimited.
    #[cfg(target_os = "macos")]
    let target = limit.rlim_max.min(10_240);
    #[cfg(not(target_os = "macos"))]
    let target = limit.rlim_max;
    let raised = libc::rlimit {
        rlim_cur: target.max(limit.rlim_cur),
        rlim_max: limit.rlim_max,
    };
    // SAFETY: `setrlimit` reads one `rlimit` through a pointer to a live one; a refusal leaves
    // the limit as it was.
    unsafe {
        libc::setrlimit(libc::RLIMIT_NOFILE, &raised);
    }
}

/// Nothing to raise off Unix.
#[cfg(not(unix))]
pub(crate) fn raise() {}
