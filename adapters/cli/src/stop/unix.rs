//! Stop requests on Unix: SIGINT, SIGTERM and SIGHUP, each caught by a handler that notes it
//! and, for the first, writes a byte to a socket that [`woken`] watches; a second request
//! raises its signal again with its default action, which ends the process. A signal ignored
//! when the process started (`nohup` ignores SIGHUP, a shell's background job SIGINT) stays
//! ignored.

use std::os::fd::IntoRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;

use super::request::{note, Request, Seen};

/// The signals that ask the command to stop.
const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The end the handler writes a byte to.
static WRITE_FD: AtomicI32 = AtomicI32::new(-1);
/// The end [`woken`] watches. The byte is never read: once it is there, the socket stays
/// readable, and every wait, now or later, ends.
static READ: OnceLock<Option<UnixStream>> = OnceLock::new();

extern "C" fn on_signal(signal: libc::c_int) {
    let request = match signal {
        libc::SIGINT => Request::Interrupt,
        libc::SIGTERM => Request::Terminate,
        _ => Request::HangUp,
    };
    match note(request, monotonic_ns()) {
        Seen::First => {
            let fd = WRITE_FD.load(Ordering::Relaxed);
            if fd >= 0 {
                // SAFETY: write(2) is async-signal-safe; `fd` stays open for the process's
                // life (its owner was given up with into_raw_fd) and the byte is ours.
                unsafe { libc::write(fd, [1u8].as_ptr().cast(), 1) };
            }
        }
        Seen::Again => {}
        // SAFETY: signal(2) and raise(3) are async-signal-safe and touch no memory of ours. The
        // signal is blocked while its handler runs: it ends the process as the handler returns.
        Seen::Second => unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        },
    }
}

/// Nanoseconds on the monotonic clock (0 if it cannot be read). Async-signal-safe:
/// clock_gettime(2) is.
fn monotonic_ns() -> u64 {
    // SAFETY: a zeroed timespec is a valid one (plain integers).
    let mut now: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: clock_gettime(2) writes the struct given, ours.
    if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) } != 0 {
        return 0;
    }
    (now.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec as u64)
}

pub(crate) fn catch() {
    READ.get_or_init(|| {
        let (read, write) = UnixStream::pair().ok()?;
        write.set_nonblocking(true).ok()?;
        WRITE_FD.store(write.into_raw_fd(), Ordering::Relaxed);
        for signal in SIGNALS {
            install(signal);
        }
        Some(read)
    });
}

/// Installs the handler for `signal`, unless the signal is ignored.
fn install(signal: libc::c_int) {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    // SAFETY: sigaction(2) reads and writes only the two structs given, both ours and zeroed
    // before use; the handler only makes async-signal-safe calls.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(signal, std::ptr::null(), &mut old) != 0
            || old.sa_sigaction == libc::SIG_IGN
        {
            return;
        }
        let mut new: libc::sigaction = std::mem::zeroed();
        new.sa_sigaction = handler as libc::sighandler_t;
        new.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut new.sa_mask);
        libc::sigaction(signal, &new, std::ptr::null_mut());
    }
}

/// Until the handler wrote its byte (never, when nothing could be caught).
pub(crate) async fn woken() {
    let read = READ.get().and_then(Option::as_ref);
    let watched = read.and_then(|r| r.try_clone().ok()).map(smol::Async::new);
    let Some(Ok(read)) = watched else {
        return futures_lite::future::pending().await;
    };
    if read.readable().await.is_err() {
        futures_lite::future::pending::<()>().await;
    }
}
