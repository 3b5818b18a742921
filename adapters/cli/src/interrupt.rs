//! Ctrl-C (SIGINT) as something to wait for, once a command has a connection: the command
//! stops (a call's future is dropped, which cancels it on the wire: `notifications/cancelled`,
//! or `tasks/cancel` for a call that runs as a task) and the connection closes gracefully (an
//! HTTP session gets its DELETE, a stdio server the end of its input, then SIGTERM and SIGKILL
//! if it lingers) instead of the process dying. A second Ctrl-C ends the process at once.

/// Catches SIGINT from now on; [`wait`] sees it, even one that came before it was called.
/// Calling it again changes nothing.
#[cfg(unix)]
pub(super) fn catch() {
    imp::catch();
}

/// Until SIGINT comes (never, when [`catch`] was not called or could not catch it). Every
/// waiter sees it, however many there are and whenever they start waiting.
#[cfg(unix)]
pub(super) async fn wait() {
    imp::wait().await;
}

/// Whether SIGINT came since [`catch`].
#[cfg(unix)]
pub(super) fn happened() -> bool {
    imp::happened()
}

/// Catches nothing on this platform.
#[cfg(not(unix))]
pub(super) fn catch() {}

/// Never: Ctrl-C ends the process here.
#[cfg(not(unix))]
pub(super) async fn wait() {
    futures_lite::future::pending::<()>().await;
}

/// Never: Ctrl-C ends the process here.
#[cfg(not(unix))]
pub(super) fn happened() -> bool {
    false
}

#[cfg(unix)]
mod imp {
    use std::os::fd::IntoRawFd;
    use std::os::unix::net::UnixStream;
    use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
    use std::sync::OnceLock;

    /// The end the handler writes a byte to.
    static WRITE_FD: AtomicI32 = AtomicI32::new(-1);
    /// The end [`wait`] watches. The byte is never read: once it is there, the socket stays
    /// readable, and every wait, now or later, ends.
    static READ: OnceLock<Option<UnixStream>> = OnceLock::new();
    /// Set by the handler.
    static HAPPENED: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_sigint(_: libc::c_int) {
        HAPPENED.store(true, Ordering::SeqCst);
        let fd = WRITE_FD.load(Ordering::Relaxed);
        // SAFETY: write(2) and signal(2) are async-signal-safe; `fd` stays open for the
        // process's life (its owner was given up with into_raw_fd).
        unsafe {
            if fd >= 0 {
                libc::write(fd, [1u8].as_ptr().cast(), 1);
            }
            // The next Ctrl-C ends the process, however long the close takes.
            libc::signal(libc::SIGINT, libc::SIG_DFL);
        }
    }

    pub(super) fn catch() {
        READ.get_or_init(|| {
            let (read, write) = UnixStream::pair().ok()?;
            write.set_nonblocking(true).ok()?;
            WRITE_FD.store(write.into_raw_fd(), Ordering::Relaxed);
            let handler: extern "C" fn(libc::c_int) = on_sigint;
            // SAFETY: the handler only makes async-signal-safe calls.
            unsafe {
                libc::signal(libc::SIGINT, handler as libc::sighandler_t);
            }
            Some(read)
        });
    }

    pub(super) fn happened() -> bool {
        HAPPENED.load(Ordering::SeqCst)
    }

    pub(super) async fn wait() {
        let read = READ.get().and_then(Option::as_ref);
        let watched = read.and_then(|r| r.try_clone().ok()).map(smol::Async::new);
        let Some(Ok(read)) = watched else {
            return futures_lite::future::pending().await;
        };
        while !happened() {
            if read.readable().await.is_err() {
                return futures_lite::future::pending().await;
            }
        }
    }
}
