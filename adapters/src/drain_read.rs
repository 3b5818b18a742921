//! Reading a pipe or a socket with the fewest syscalls: one `read` per readiness event when
//! what came is short, none while nothing was signalled.
//!
//! A `read` of a pipe or a stream socket returns what is there, up to the buffer: a read that
//! fills less than the buffer has emptied it. So after a short read (or `EAGAIN`) the reader
//! waits for readiness instead of reading again to see `EAGAIN`, and while it waits a read is
//! not even tried (a silent stream a driver passes over costs nothing). async-io's own
//! `AsyncRead` makes two more `read`s per event: one that drains, one after the readiness it
//! had already consumed.

use std::io::{self, Read};
use std::task::{Context, Poll};

use async_io::Async;

/// A pipe or socket in async-io's reactor, read directly.
pub(crate) struct DrainRead<T> {
    io: Async<T>,
    /// Whether bytes may be there (false once a read emptied it, until readiness is reported).
    readable: bool,
    /// Interest could not be registered: the next read reports it (waiting would never end).
    broken: Option<io::Error>,
}

impl<T> DrainRead<T>
where
    for<'a> &'a T: Read,
{
    pub(crate) fn new(io: Async<T>) -> Self {
        DrainRead {
            io,
            readable: true,
            broken: None,
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

    /// Whether the last read emptied it: the reader is already waiting for readiness.
    pub(crate) fn drained(&self) -> bool {
        !self.readable
    }

    /// Bytes may be there though no readiness was reported yet (the writer is known to be
    /// gone): the next read is tried at once.
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
