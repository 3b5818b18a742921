//! A response body of mcpwire's own HTTP/1.1 client: what came with the head, then the
//! connection, its framing undone by the core's decoder; at its end a keep-alive connection
//! goes back to the pool.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_lite::AsyncRead;
use mcpwire_core::codec::http1::{self, BodyDecoder};

use super::conn::Conn;
use super::pool::Pool;
use super::target::Target;

/// A response body: what came with the head, then the connection, its framing undone. At its
/// end a keep-alive connection goes back to the pool; dropped before, the connection closes.
pub(super) struct Body {
    conn: Option<Conn>,
    buf: Vec<u8>,
    /// How much of `buf` was decoded.
    at: usize,
    decoder: BodyDecoder,
    /// The body lasts until the connection closes.
    until_close: bool,
    keep_alive: bool,
    /// The body failed: every later read says so again (never a clean end).
    failed: Option<io::ErrorKind>,
    pool: Arc<Pool>,
    /// Where it came from: its connection goes back to the pool under its authority.
    target: Arc<Target>,
}

impl Body {
    /// The body of a response whose head left `buf` (what came after it) on `conn`, framed
    /// as `framing` says; at its end the connection goes back to `pool` under `target`'s key
    /// when `keep_alive`.
    pub(super) fn new(
        conn: Conn,
        buf: Vec<u8>,
        framing: http1::Framing,
        keep_alive: bool,
        pool: Arc<Pool>,
        target: Arc<Target>,
    ) -> Body {
        Body {
            conn: Some(conn),
            buf,
            at: 0,
            until_close: framing == http1::Framing::UntilClose,
            decoder: BodyDecoder::new(framing),
            keep_alive,
            failed: None,
            pool,
            target,
        }
    }

    fn finish(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            if self.at == self.buf.len() {
                self.pool.recycle(std::mem::take(&mut self.buf));
                self.at = 0;
            }
            // Anything after the body was not asked for: that connection is not reused. What
            // came with the body is seen here; the socket itself (a server that closed it
            // right after its answer without `Connection: close`, bytes that came later) is
            // looked at once, when the connection is taken from the pool: one `recv` a
            // request, not two.
            if self.keep_alive && self.at == self.buf.len() && conn.holds_nothing_unread() {
                self.pool.put(&self.target.key, conn);
            }
        }
    }
}

impl AsyncRead for Body {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if let Some(kind) = this.failed {
            return Poll::Ready(Err(io::Error::new(kind, "the body failed before")));
        }
        if out.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let read = this.read(cx, out);
        if let Poll::Ready(Err(e)) = &read {
            this.failed = Some(e.kind());
            this.conn = None;
        }
        read
    }
}

impl Body {
    fn read(&mut self, cx: &mut Context<'_>, out: &mut [u8]) -> Poll<io::Result<usize>> {
        let this = self;
        loop {
            if this.decoder.is_done() {
                this.finish();
                return Poll::Ready(Ok(0));
            }
            if this.at < this.buf.len() {
                let step = this
                    .decoder
                    .decode(&this.buf[this.at..], out.len())
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                let data = &this.buf[this.at + step.data.start..this.at + step.data.end];
                let n = data.len();
                out[..n].copy_from_slice(data);
                this.at += step.consumed;
                if n > 0 {
                    if this.decoder.is_done() {
                        this.finish();
                    }
                    return Poll::Ready(Ok(n));
                }
                if step.consumed > 0 {
                    continue;
                }
            }
            // All of the buffer is decoded (or waits for more): read again.
            this.buf.drain(..this.at);
            this.at = 0;
            let Some(conn) = this.conn.as_mut() else {
                return Poll::Ready(Ok(0));
            };
            let read = conn.poll_read_more(cx, &mut this.buf);
            match read {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(0)) => {
                    // Over TLS, the close that ends such a body must be the server's TLS
                    // close: a bare end of the socket may be anyone's, and cut it short.
                    let unclean = this.conn.as_ref().is_some_and(Conn::closed_uncleanly);
                    this.conn = None;
                    if unclean && this.until_close {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the TLS connection ended without the server's TLS close: \
                             the body, which lasts until the close, may be cut short",
                        )));
                    }
                    return match this.decoder.end_of_input() {
                        Ok(()) if this.at == this.buf.len() => Poll::Ready(Ok(0)),
                        Ok(()) => continue,
                        Err(e) => Poll::Ready(Err(io::Error::new(io::ErrorKind::UnexpectedEof, e))),
                    };
                }
                Poll::Ready(Ok(_)) => {}
            }
        }
    }
}
