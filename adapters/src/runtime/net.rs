//! What the network is on a runtime, for mcpwire's own HTTP/1.1 client: a TCP connection
//! registered with the runtime's reactor and read like a pipe ([`Socket`]: one `read` per
//! readiness event when what came is short), a connect to one address, a host's name resolved
//! and a blocking look done off the runtime's threads.
//!
//! - smol: async-io's reactor, read through [`DrainRead`](crate::drain_read::DrainRead); names
//!   resolved by the system's resolver on `blocking`'s threads.
//! - tokio: tokio's reactor (its `TcpStream`, whose read clears the readiness after a short
//!   read, as `DrainRead` does); names resolved by tokio's own lookup (the system's resolver
//!   on tokio's blocking threads). Each step that registers something with tokio (a socket, a
//!   timer, a blocking task) runs inside the connection's runtime, wherever it is polled from.

#[cfg(feature = "tokio")]
use std::future::Future;
use std::io;
use std::net::SocketAddr;
#[cfg(feature = "tokio")]
use std::pin::Pin;
use std::task::{Context, Poll};

use super::Runtime;

/// A TCP connection on the connection's runtime.
pub(crate) enum Socket {
    /// In async-io's reactor.
    #[cfg(feature = "smol")]
    Smol(crate::drain_read::DrainRead<std::net::TcpStream>),
    /// In tokio's reactor.
    #[cfg(feature = "tokio")]
    Tokio(::tokio::net::TcpStream),
}

impl Socket {
    /// Reads what is there into `buf` (`Ok(0)`: the end).
    pub(crate) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        match *self {
            #[cfg(feature = "smol")]
            Socket::Smol(ref mut stream) => stream.poll_read(cx, buf),
            #[cfg(feature = "tokio")]
            Socket::Tokio(ref mut stream) => {
                let mut read = ::tokio::io::ReadBuf::new(buf);
                match ::tokio::io::AsyncRead::poll_read(Pin::new(stream), cx, &mut read) {
                    Poll::Ready(Ok(())) => Poll::Ready(Ok(read.filled().len())),
                    Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    /// Writes all of `bytes`.
    pub(crate) async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match *self {
            #[cfg(feature = "smol")]
            Socket::Smol(ref mut stream) => {
                futures_lite::AsyncWriteExt::write_all(stream.get_mut(), bytes).await
            }
            #[cfg(feature = "tokio")]
            Socket::Tokio(ref mut stream) => {
                let mut bytes = bytes;
                while !bytes.is_empty() {
                    let n = std::future::poll_fn(|cx| {
                        ::tokio::io::AsyncWrite::poll_write(Pin::new(&mut *stream), cx, bytes)
                    })
                    .await?;
                    if n == 0 {
                        return Err(io::ErrorKind::WriteZero.into());
                    }
                    bytes = &bytes[n..];
                }
                Ok(())
            }
        }
    }

    /// Nothing can be there yet (a request was just sent): the next read waits for readiness
    /// first. (tokio's socket knows it already: its last read emptied it.)
    pub(crate) fn expect_nothing(&mut self) {
        match *self {
            #[cfg(feature = "smol")]
            Socket::Smol(ref mut stream) => stream.expect_nothing(),
            #[cfg(feature = "tokio")]
            Socket::Tokio(_) => {}
        }
    }

    /// The local address.
    pub(crate) fn local_addr(&self) -> Option<SocketAddr> {
        match *self {
            #[cfg(feature = "smol")]
            Socket::Smol(ref stream) => stream.get_ref().get_ref().local_addr().ok(),
            #[cfg(feature = "tokio")]
            Socket::Tokio(ref stream) => stream.local_addr().ok(),
        }
    }

    /// Small writes go out at once (best effort).
    fn set_nodelay(&self) {
        match *self {
            #[cfg(feature = "smol")]
            Socket::Smol(ref stream) => {
                let _ = stream.get_ref().get_ref().set_nodelay(true);
            }
            #[cfg(feature = "tokio")]
            Socket::Tokio(ref stream) => {
                let _ = stream.set_nodelay(true);
            }
        }
    }

    /// Whether nothing is there to read, asked of the socket itself (one `recv` with
    /// `MSG_PEEK`, not the reactor's last report): an idle connection the server closed has
    /// its end to read at once.
    pub(crate) fn is_quiet(&self) -> bool {
        let mut probe = [0u8; 1];
        let peeked: io::Result<usize> = match *self {
            #[cfg(feature = "smol")]
            Socket::Smol(ref stream) => stream.get_ref().get_ref().peek(&mut probe),
            #[cfg(feature = "tokio")]
            Socket::Tokio(ref stream) => peek_tokio(stream, &mut probe),
        };
        matches!(peeked, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }
}

/// A peek at tokio's socket through its descriptor (non-blocking, as tokio set it), leaving
/// tokio's readiness as it is.
#[cfg(all(feature = "tokio", unix))]
fn peek_tokio(stream: &::tokio::net::TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::fd::{AsRawFd, FromRawFd};
    // SAFETY: the descriptor is `stream`'s, open while it is borrowed here; the std socket made
    // over it is never dropped (`ManuallyDrop`), so it does not close it.
    let std = std::mem::ManuallyDrop::new(unsafe {
        std::net::TcpStream::from_raw_fd(stream.as_raw_fd())
    });
    std.peek(buf)
}

/// A peek at tokio's socket through its handle (non-blocking, as tokio set it), leaving
/// tokio's readiness as it is.
#[cfg(all(feature = "tokio", windows))]
fn peek_tokio(stream: &::tokio::net::TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::windows::io::{AsRawSocket, FromRawSocket};
    // SAFETY: the socket is `stream`'s, open while it is borrowed here; the std socket made
    // over it is never dropped (`ManuallyDrop`), so it does not close it.
    let std = std::mem::ManuallyDrop::new(unsafe {
        std::net::TcpStream::from_raw_socket(stream.as_raw_socket())
    });
    std.peek(buf)
}

impl Runtime {
    /// A TCP connection to `addr`, with small writes sent at once.
    pub(crate) async fn connect_tcp(&self, addr: SocketAddr) -> io::Result<Socket> {
        let socket: Socket = match *self {
            #[cfg(feature = "smol")]
            Runtime::Smol { .. } => {
                let stream = async_io::Async::<std::net::TcpStream>::connect(addr).await?;
                Socket::Smol(crate::drain_read::DrainRead::new(stream))
            }
            #[cfg(feature = "tokio")]
            Runtime::Tokio(ref handle) => {
                let connect = ::tokio::net::TcpStream::connect(addr);
                Socket::Tokio(Entered::new(handle, connect).await?)
            }
        };
        socket.set_nodelay();
        Ok(socket)
    }

    /// The addresses of `host` (a name) through the system's resolver, in its order.
    pub(crate) async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        match *self {
            #[cfg(feature = "smol")]
            Runtime::Smol { .. } => {
                use std::net::ToSocketAddrs;
                let host = host.to_owned();
                let found = smol::unblock(move || (host.as_str(), port).to_socket_addrs()).await;
                found.map(Iterator::collect)
            }
            #[cfg(feature = "tokio")]
            Runtime::Tokio(ref handle) => {
                let found = ::tokio::net::lookup_host((host, port));
                Entered::new(handle, found).await.map(Iterator::collect)
            }
        }
    }

    /// `f`'s answer, `f` run on a blocking thread of the runtime's (`None` when it panicked).
    pub(crate) async fn unblock_caught<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        match *self {
            #[cfg(feature = "smol")]
            Runtime::Smol { .. } => {
                let caught = move || std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
                smol::unblock(caught).await.ok()
            }
            #[cfg(feature = "tokio")]
            Runtime::Tokio(ref handle) => handle.spawn_blocking(f).await.ok(),
        }
    }

    /// Waits `duration` on the runtime's timer, counted on the runtime's clock (a paused tokio
    /// clock holds for it too).
    pub(crate) async fn sleep(&self, duration: std::time::Duration) {
        self.sleep_until(self.now() + duration).await
    }
}

/// A future of tokio's polled inside its runtime: what it registers (a socket, a blocking
/// task) goes to that runtime, wherever the future is polled (a caller's own thread runs the
/// connection while it waits for its answer).
#[cfg(feature = "tokio")]
struct Entered<'a, F> {
    handle: &'a ::tokio::runtime::Handle,
    future: Pin<Box<F>>,
}

#[cfg(feature = "tokio")]
impl<'a, F: Future> Entered<'a, F> {
    fn new(handle: &'a ::tokio::runtime::Handle, future: F) -> Self {
        Entered {
            handle,
            future: Box::pin(future),
        }
    }
}

#[cfg(feature = "tokio")]
impl<F: Future> Future for Entered<'_, F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _entered = self.handle.enter();
        self.future.as_mut().poll(cx)
    }
}
