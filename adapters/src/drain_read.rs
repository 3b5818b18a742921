//! Reading a pipe or a socket with the fewest syscalls: one `read` per readiness event when
//! what came is short, none while nothing was signalled.
//!
//! A `read` of a pipe or a stream socket returns what is there, up to the buffer: a read that
//! fills less than the buffer has emptied it. So after a short read (or `EAGAIN`) the reader
//! waits for readiness instead of reading again to see `EAGAIN`, and while it waits a read is
//! not even tried (a silent stream a driver passes over costs nothing). async-io's own
//! `AsyncRead` makes two more `read`s per event: one that drains, one after the readiness it
//! had already consumed.
//!
//! The reactor is polled with a waker of the reader's own, which records that the reactor woke
//! it: that wake-up is then taken as the readiness. async-io's `poll_readable` alone would not
//! do: when the reactor runs on its own thread (a host that is not smol's `block_on`: a tokio
//! runtime, any other executor) and that thread is already waiting when interest is
//! registered, the event it delivers in that same wait is not reported as readiness; the
//! interest is registered again, the level-triggered pipe or socket fires again at once, and the
//! threads go round, several context switches a read, until timing breaks the loop.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use async_io::Async;

/// A pipe or socket in async-io's reactor, read directly.
pub(crate) struct DrainRead<T> {
    io: Async<T>,
    /// Whether bytes may be there (false once a read emptied it, until readiness is reported).
    readable: bool,
    /// Interest could not be registered: the next read reports it (waiting would never end).
    broken: Option<io::Error>,
    /// Whether the reactor woke the reader, and whom to wake then.
    woken: Arc<Woken>,
    /// The waker the reactor is given: `woken`'s.
    own: Waker,
}

/// A reader's wake-up: recorded, then passed on to the task that polls the reader.
struct Woken {
    flag: AtomicBool,
    task: Mutex<Option<Waker>>,
}

impl Woken {
    /// Wake-ups go to `waker` from now on.
    fn set_task(&self, waker: &Waker) {
        let mut task = self.task.lock().unwrap_or_else(|e| e.into_inner());
        if !task.as_ref().is_some_and(|t| t.will_wake(waker)) {
            *task = Some(waker.clone());
        }
    }

    /// Whether the reactor woke the reader since the last call.
    fn take(&self) -> bool {
        self.flag.swap(false, Ordering::AcqRel)
    }
}

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.flag.store(true, Ordering::Release);
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = task.as_ref() {
            w.wake_by_ref();
        }
    }
}

impl<T> DrainRead<T>
where
    for<'a> &'a T: Read,
{
    pub(crate) fn new(io: Async<T>) -> Self {
        let woken = Arc::new(Woken {
            flag: AtomicBool::new(false),
            task: Mutex::new(None),
        });
        DrainRead {
            io,
            readable: true,
            broken: None,
            own: Waker::from(woken.clone()),
            woken,
        }
    }

    /// The pipe or socket itself.
    pub(crate) fn get_ref(&self) -> &Async<T> {
        &self.io
    }

    /// The pipe or socket itself, to write to.
    pub(crate) fn get_mut(&mut self) -> &mut Async<T> {
        &mut self.io
    }

    /// Whether the last read emptied it: the reader is already waiting for readiness. (A
    /// child's pipes are read this way on Unix only.)
    #[cfg(unix)]
    pub(crate) fn drained(&self) -> bool {
        !self.readable
    }

    /// Bytes may be there though no readiness was reported yet (the writer is known to be
    /// gone): the next read is tried at once.
    #[cfg(unix)]
    pub(crate) fn expect_something(&mut self) {
        self.readable = true;
    }

    /// Nothing can be there yet (a request was just sent): the next read waits for readiness
    /// first.
    pub(crate) fn expect_nothing(&mut self) {
        self.readable = false;
    }

    /// Reads what is there into `buf` (`Ok(0)`: the end).
    pub(crate) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        if let Some(e) = self.broken.take() {
            return Poll::Ready(Err(e));
        }
        self.woken.set_task(cx.waker());
        let own = self.own.clone();
        let cx = &mut Context::from_waker(&own);
        // Woken by the reactor: readiness, whether or not `poll_readable` would report it yet
        // (see the module's notes). A wake-up without bytes costs one `read`. Taken once a
        // call, so a source that keeps firing without bytes cannot hold the caller here.
        if self.woken.take() {
            self.readable = true;
        }
        loop {
            if !self.readable {
                match self.io.poll_readable(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Ready(Ok(())) => self.readable = true,
                }
            }
            match self.io.get_ref().read(buf) {
                Ok(n) => {
                    if n > 0 && n < buf.len() {
                        self.wait(cx);
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.wait(cx);
                    if let Some(e) = self.broken.take() {
                        return Poll::Ready(Err(e));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    /// The last read emptied it: wait for readiness from now on. The reactor still holds the
    /// readiness that read consumed and reports it once more: that report is taken and
    /// dropped, and the next call registers interest (level-triggered: bytes that came in
    /// meanwhile are reported at once).
    fn wait(&mut self, cx: &mut Context<'_>) {
        self.readable = false;
        for _ in 0..2 {
            match self.io.poll_readable(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Pending => return,
                Poll::Ready(Err(e)) => {
                    self.broken = Some(e);
                    return;
                }
            }
        }
        // Not reached with async-io's reactor (a second call always registers); should it
        // be, the next read is tried at once, which is correct, only one `read` dearer.
        self.readable = true;
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    use std::sync::mpsc;

    /// With the reactor on its own thread (the reader polled by an executor that is not
    /// async-io's `block_on`, as in a tokio host), each byte the peer sends wakes the reader
    /// once and is read at that wake-up: not ignored because the reactor's thread was already
    /// waiting when the interest was registered.
    #[test]
    fn a_reader_off_the_reactors_thread_reads_at_the_first_wake_up() {
        const MESSAGES: usize = 200;
        let (ours, theirs) = UnixStream::pair().unwrap();
        let mut reader = DrainRead::new(Async::new(ours).unwrap());
        let (ack, acked) = mpsc::channel::<()>();
        let writer = std::thread::spawn(move || {
            let mut theirs = theirs;
            for _ in 0..MESSAGES {
                theirs.write_all(b"x").unwrap();
                if acked
                    .recv_timeout(std::time::Duration::from_secs(10))
                    .is_err()
                {
                    return;
                }
            }
        });
        let (mut got, mut wake_ups) = (0usize, 0usize);
        let mut buf = [0u8; 64];
        // `futures_lite`'s `block_on` parks the thread and leaves the reactor to async-io's
        // own thread.
        futures_lite::future::block_on(std::future::poll_fn(|cx| {
            wake_ups += 1;
            loop {
                match reader.poll_read(cx, &mut buf) {
                    Poll::Ready(Ok(n)) => {
                        assert!(n > 0, "the peer does not close first");
                        got += n;
                        for _ in 0..n {
                            let _ = ack.send(());
                        }
                        if got == MESSAGES {
                            return Poll::Ready(());
                        }
                    }
                    Poll::Ready(Err(e)) => panic!("{e}"),
                    Poll::Pending => return Poll::Pending,
                }
            }
        }));
        writer.join().unwrap();
        // One wake-up a byte when each is read as it is signalled; two or more when the
        // reactor's report is waited for.
        assert!(
            wake_ups <= MESSAGES * 3 / 2,
            "{wake_ups} wake-ups for {MESSAGES} bytes"
        );
    }
}
