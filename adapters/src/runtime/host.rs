//! What the Manager, the OAuth runner and `serve_demo` take from the runtime beyond what one
//! connection takes: a sleep, a task to join or detach, blocking work off the async threads.
//!
//! On smol: smol's global executor, async-io's timers, smol's blocking pool. On tokio: the
//! runtime's tasks, timers and blocking pool; no thread of async-io, async-process or smol.
//! Code that is handed no runtime (a [`TokenStore`](crate::oauth::TokenStore)'s files, the
//! OAuth loopback listener, both called from inside a connection's driver) takes the one
//! it runs in: [`Runtime::here`].

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use super::Runtime;
use crate::future::BoxFuture;

impl Runtime {
    /// The runtime the calling code runs in: tokio when a tokio runtime is current (feature
    /// `tokio`), else smol (feature `smol`); `None` when neither.
    #[cfg_attr(not(any(feature = "oauth", feature = "demo")), allow(dead_code))]
    pub(crate) fn here() -> Option<Runtime> {
        #[cfg(feature = "tokio")]
        if let Ok(handle) = ::tokio::runtime::Handle::try_current() {
            return Some(Runtime::Tokio(handle));
        }
        #[cfg(feature = "smol")]
        let here = Some(Runtime::Smol { spawn: true });
        #[cfg(not(feature = "smol"))]
        let here = None;
        here
    }

    /// Waits until `at`, on this runtime's timer.
    pub(crate) async fn sleep_until(&self, at: Instant) {
        let mut timer = self.timer();
        timer.set_at(at);
        std::future::poll_fn(|cx| timer.poll(cx)).await
    }

    /// Spawns `future` as a task of its own (on smol: on smol's global executor, whatever
    /// `spawn` says).
    pub(crate) fn spawn_joinable(
        &self,
        future: impl Future<Output = ()> + Send + 'static,
    ) -> Joinable {
        match *self {
            #[cfg(feature = "smol")]
            Runtime::Smol { .. } => Joinable(Inner::Smol(::smol::spawn(future))),
            #[cfg(feature = "tokio")]
            Runtime::Tokio(ref handle) => Joinable(Inner::Tokio(handle.spawn(future))),
        }
    }

    /// Runs `f` on this runtime's pool for blocking work (smol's, tokio's).
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    pub(crate) fn unblock<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> BoxFuture<T> {
        match *self {
            #[cfg(feature = "smol")]
            Runtime::Smol { .. } => Box::pin(::smol::unblock(f)),
            #[cfg(feature = "tokio")]
            Runtime::Tokio(ref handle) => {
                let task = handle.spawn_blocking(f);
                Box::pin(async move {
                    match task.await {
                        Ok(done) => done,
                        // Blocking work is never aborted: it panicked, and the panic goes on.
                        Err(e) => std::panic::resume_unwind(e.into_panic()),
                    }
                })
            }
        }
    }

    /// Runs `f` on this runtime's pool for blocking work, nobody waiting for it.
    pub(crate) fn unblock_detached(&self, f: impl FnOnce() + Send + 'static) {
        match *self {
            #[cfg(feature = "smol")]
            Runtime::Smol { .. } => ::smol::unblock(f).detach(),
            #[cfg(feature = "tokio")]
            Runtime::Tokio(ref handle) => drop(handle.spawn_blocking(f)),
        }
    }
}

/// Runs `f` off the async threads, on the pool of the runtime the caller runs in
/// ([`Runtime::here`]); with no runtime known, in place (the caller's thread is the host's
/// own, polling the future outside any runtime).
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) fn unblock_here<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> BoxFuture<T> {
    match Runtime::here() {
        Some(runtime) => runtime.unblock(f),
        None => Box::pin(std::future::ready(f())),
    }
}

/// A task on the runtime: awaiting it waits for its end; dropping it cancels it, unless it
/// was [`detach`](Self::detach)ed.
pub(crate) struct Joinable(Inner);

enum Inner {
    #[cfg(feature = "smol")]
    Smol(::smol::Task<()>),
    #[cfg(feature = "tokio")]
    Tokio(::tokio::task::JoinHandle<()>),
    /// Detached, or joined.
    Gone,
}

impl Joinable {
    /// Lets the task run to its end on its own.
    pub(crate) fn detach(mut self) {
        match std::mem::replace(&mut self.0, Inner::Gone) {
            #[cfg(feature = "smol")]
            Inner::Smol(task) => task.detach(),
            // A tokio task runs on when its handle is dropped.
            #[cfg(feature = "tokio")]
            Inner::Tokio(_) => {}
            Inner::Gone => {}
        }
    }
}

impl Future for Joinable {
    type Output = ();

    /// Ready when the task ended (a task that panicked ended too: its panic was the
    /// runtime's to report).
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let ready = match &mut self.0 {
            #[cfg(feature = "smol")]
            Inner::Smol(task) => Pin::new(task).poll(cx),
            #[cfg(feature = "tokio")]
            Inner::Tokio(task) => Pin::new(task).poll(cx).map(|_| ()),
            Inner::Gone => Poll::Ready(()),
        };
        if ready.is_ready() {
            self.0 = Inner::Gone;
        }
        ready
    }
}

impl Drop for Joinable {
    fn drop(&mut self) {
        match &self.0 {
            // A smol task is cancelled when its handle is dropped.
            #[cfg(feature = "smol")]
            Inner::Smol(_) => {}
            #[cfg(feature = "tokio")]
            Inner::Tokio(task) => task.abort(),
            Inner::Gone => {}
        }
    }
}

/// A tokio byte stream read and written through `futures`' traits (`AsyncRead`,
/// `AsyncWrite`), for code written once over those: `serve_demo`, OAuth's loopback listener.
#[cfg(feature = "tokio")]
#[cfg_attr(not(any(feature = "oauth", feature = "demo")), allow(dead_code))]
pub(crate) struct TokioIo<T>(pub(crate) T);

#[cfg(feature = "tokio")]
impl<T: ::tokio::io::AsyncRead + Unpin> futures_lite::AsyncRead for TokioIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        let mut buf = ::tokio::io::ReadBuf::new(buf);
        match Pin::new(&mut self.0).poll_read(cx, &mut buf) {
            Poll::Ready(Ok(())) => Poll::Ready(Ok(buf.filled().len())),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(feature = "tokio")]
impl<T: ::tokio::io::AsyncWrite + Unpin> futures_lite::AsyncWrite for TokioIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
