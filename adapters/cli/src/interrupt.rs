//! Ctrl-C (SIGINT) as something to wait for, for `watch`: the command ends and the connection
//! closes gracefully (an HTTP session gets its DELETE, a stdio server the end of its input)
//! instead of the process dying. A second Ctrl-C ends the process at once.

/// Catches SIGINT from now on; [`wait`] sees it, even one that came before it was called.
#[cfg(unix)]
pub(super) fn catch() {
    imp::catch();
}

/// Until SIGINT comes (never, when [`catch`] was not called or could not catch it).
#[cfg(unix)]
pub(super) async fn wait() {
    imp::wait().await;
}

/// Catches nothing on this platform.
#[cfg(not(unix))]
pub(super) fn catch() {}

/// Never: Ctrl-C ends the process here.
#[cfg(not(unix))]
pub(super) async fn wait() {
    futures_lite::future::pending::<()>().await;
}

#[cfg(unix)]
mod imp {
    use std::os::fd::IntoRawFd;
    use std::os::unix::net::UnixStream;
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::sync::OnceLock;

    use futures_lite::AsyncReadExt;

    /// The end the handler writes a byte to.
    static WRITE_FD: AtomicI32 = AtomicI32::new(-1);
    /// The end [`wait`] reads.
    static READ: OnceLock<UnixStream> = OnceLock::new();

    extern "C" fn on_sigint(_: libc::c_int) {
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
        let Ok((read, write)) = UnixStream::pair() else {
            return;
        };
        if write.set_nonblocking(true).is_err() || READ.set(read).is_err() {
            return;
        }
        WRITE_FD.store(write.into_raw_fd(), Ordering::Relaxed);
        let handler: extern "C" fn(libc::c_int) = on_sigint;
        // SAFETY: the handler only makes async-signal-safe calls.
        unsafe {
            libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        }
    }

    pub(super) async fn wait() {
        let read = READ.get().and_then(|r| r.try_clone().ok());
        let Some(Ok(mut read)) = read.map(smol::Async::new) else {
            return futures_lite::future::pending().await;
        };
        let mut byte = [0u8];
        if read.read(&mut byte).await.is_err() {
            futures_lite::future::pending::<()>().await;
        }
    }
}
