//! One connection of mcpwire's own HTTP/1.1 client: a TCP socket read on the connection's
//! runtime's reactor (see [`Socket`]: one `read` per readiness event), plain or with TLS over it (rustls's own API: the socket stays
//! ours, so a TLS read costs the same one `read` per readiness event a plain one does).
//!
//! A TLS failure is rustls's error, which names the reason (an unknown issuer, a name that
//! does not match, an expired certificate, a client certificate refused, a server that does
//! not speak TLS): no second handshake is needed to explain it.

use std::io::{self, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use mcpwire_core::error::{HttpErrorKind, TlsFailure};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};

use crate::http::backend::HttpFailure;
use crate::http::tls_diagnosis::{answered_with, is_tls_record, reason_of, words_of};
use crate::runtime::net::Socket;

/// How much one read of the socket takes.
pub(super) const READ_SIZE: usize = 16 * 1024;

/// One connection; its local address kept for the exchange observer.
pub(super) struct Conn {
    stream: Socket,
    tls: Option<Box<Tls>>,
    pub(super) local_addr: Option<SocketAddr>,
    /// Over plain HTTP, where [`Conn::poll_read_more`] reads before it appends: made (and
    /// zeroed) once, at the connection's first such read.
    scratch: Option<Box<[u8]>>,
}

/// The TLS side of a connection.
struct Tls {
    session: ClientConnection,
    /// Ciphertext read from the socket; `raw[at..len]` is not yet handed to rustls.
    raw: Box<[u8]>,
    at: usize,
    len: usize,
    /// The socket's end was read.
    eof: bool,
    /// The socket ended without the server's TLS close (`close_notify`): what came may be
    /// cut short.
    unclean: bool,
    /// Ciphertext for the socket, kept for the connection's life (one buffer, not one a
    /// write).
    out: Vec<u8>,
}

impl Conn {
    /// A plain connection.
    pub(super) fn plain(stream: Socket) -> Conn {
        let local_addr = stream.local_addr();
        Conn {
            stream,
            tls: None,
            local_addr,
            scratch: None,
        }
    }

    /// This plain connection with TLS to `host` over it (its SNI, and the name its
    /// certificate must carry), once the handshake is done. A failed handshake is a TLS
    /// failure in rustls's words; nothing of a request was sent.
    pub(super) async fn start_tls(
        &mut self,
        config: Arc<ClientConfig>,
        host: &str,
    ) -> Result<(), HttpFailure> {
        let other = |e: String| HttpFailure::new(HttpErrorKind::Tls(TlsFailure::Other), e, true);
        let name = ServerName::try_from(host.to_owned())
            .map_err(|e| other(format!("the host name cannot be used for TLS: {e}")))?;
        let session = ClientConnection::new(config, name).map_err(|e| other(e.to_string()))?;
        // The room of the plain reads before (a proxy's answer): TLS reads have their own.
        self.scratch = None;
        self.tls = Some(Box::new(Tls {
            session,
            raw: vec![0; READ_SIZE].into_boxed_slice(),
            at: 0,
            len: 0,
            eof: false,
            unclean: false,
            out: Vec::new(),
        }));
        self.handshake().await
    }

    /// Runs the TLS handshake to its end.
    async fn handshake(&mut self) -> Result<(), HttpFailure> {
        // The server's first bytes, to tell a server that does not speak TLS.
        let mut first = Vec::new();
        loop {
            self.flush_tls().await.map_err(|e| {
                HttpFailure::new(
                    HttpErrorKind::Tls(TlsFailure::Other),
                    format!("the connection failed during the TLS handshake ({e})"),
                    true,
                )
            })?;
            let tls = self.tls.as_mut().expect("a TLS connection");
            if !tls.session.is_handshaking() {
                return Ok(());
            }
            let n = std::future::poll_fn(|cx| self.stream.poll_read(cx, &mut tls.raw))
                .await
                .map_err(|e| handshake_cut(&first, Some(e)))?;
            if n == 0 {
                return Err(handshake_cut(&first, None));
            }
            let room = 64usize.saturating_sub(first.len());
            first.extend_from_slice(&tls.raw[..n.min(room)]);
            // A record's header is 5 bytes; its first 3 tell TLS (a first read may be shorter).
            if first.len() >= 3 && !is_tls_record(&first) {
                let words = answered_with(&first);
                let message = format!("{} ({words})", TlsFailure::NotTls);
                return Err(HttpFailure::new(
                    HttpErrorKind::Tls(TlsFailure::NotTls),
                    message,
                    true,
                ));
            }
            (tls.at, tls.len) = (0, n);
            if let Err(e) = tls.feed() {
                // Tell the server why, if it still listens (best effort: the failure is ours).
                let _ = self.flush_tls().await;
                return Err(tls_failure(&e));
            }
        }
    }

    /// Writes what rustls has to send.
    async fn flush_tls(&mut self) -> io::Result<()> {
        let Some(tls) = self.tls.as_mut() else {
            return Ok(());
        };
        while tls.session.wants_write() {
            tls.out.clear();
            tls.session.write_tls(&mut tls.out)?;
            self.stream.write_all(&tls.out).await?;
        }
        Ok(())
    }

    /// Writes all of `bytes` (over TLS, encrypted).
    pub(super) async fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        if self.tls.is_none() {
            return self.stream.write_all(bytes).await;
        }
        // Anything rustls still owes the server goes first (a key update's answer).
        self.flush_tls().await?;
        while !bytes.is_empty() {
            let tls = self.tls.as_mut().expect("a TLS connection");
            let n = tls.session.writer().write(bytes)?;
            bytes = &bytes[n..];
            self.flush_tls().await?;
            if n == 0 && !bytes.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "the TLS session took no more of the request",
                ));
            }
        }
        Ok(())
    }

    /// Nothing can be there yet (a request was just sent): the next read waits for readiness
    /// first.
    pub(super) fn expect_nothing(&mut self) {
        let pending = self.tls.as_ref().is_some_and(|t| t.at < t.len);
        if !pending {
            self.stream.expect_nothing();
        }
    }

    /// One read into the spare room of `buf`.
    pub(super) async fn read_more(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        std::future::poll_fn(|cx| self.poll_read_more(cx, buf)).await
    }

    /// One read appended to `buf`: at most [`READ_SIZE`] bytes. Over TLS the plaintext is
    /// copied from rustls's own buffer as it is, over plain HTTP from the connection's own
    /// room (no room made and zeroed in `buf` first: that was 16 KiB written a read, for a few
    /// hundred bytes of answer).
    pub(super) fn poll_read_more(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut Vec<u8>,
    ) -> Poll<io::Result<usize>> {
        if let Some(tls) = self.tls.as_deref_mut() {
            return poll_plaintext(&mut self.stream, tls, cx, |r| take_plaintext(r, buf));
        }
        // Read into the connection's own room and append what came: making the room in `buf`
        // would zero 16 KiB a read.
        let mut scratch = self
            .scratch
            .take()
            .unwrap_or_else(|| vec![0; READ_SIZE].into_boxed_slice());
        let read = self.stream.poll_read(cx, &mut scratch);
        if let Poll::Ready(Ok(n)) = &read {
            buf.extend_from_slice(&scratch[..*n]);
        }
        self.scratch = Some(scratch);
        read
    }

    /// Whether the TLS handshake agreed HTTP/2 (`h2`) by ALPN.
    pub(super) fn agreed_http2(&self) -> bool {
        self.tls
            .as_ref()
            .is_some_and(|t| t.session.alpn_protocol() == Some(b"h2"))
    }

    /// Whether the connection ended without the server's TLS close: a body that lasts until
    /// the close may then be cut short (an attacker on the path can end the socket).
    pub(super) fn closed_uncleanly(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.unclean)
    }

    /// Whether nothing of the connection's own is left unread: no ciphertext, no plaintext,
    /// no TLS close held by rustls (no syscall: see [`is_open`](Self::is_open) for the socket).
    pub(super) fn holds_nothing_unread(&mut self) -> bool {
        let Some(tls) = &mut self.tls else {
            return true;
        };
        if tls.at < tls.len || tls.eof {
            return false;
        }
        matches!(
            tls.session.process_new_packets(),
            Ok(io) if io.plaintext_bytes_to_read() == 0 && !io.peer_has_closed()
        )
    }

    /// Whether an idle connection is still open, checked before it is reused: nothing of its
    /// own unread, and nothing to read on the socket (a server that closed it has sent its end,
    /// or a TLS close, which reads at once; one that sent anything unasked is not to be
    /// trusted).
    pub(super) fn is_open(&mut self) -> bool {
        if !self.holds_nothing_unread() {
            return false;
        }
        self.stream.is_quiet()
    }
}

impl Tls {
    /// Hands rustls the ciphertext read and not yet taken, and lets it process it. Stops when
    /// plaintext must be read first (rustls's buffer is full of it).
    fn feed(&mut self) -> Result<(), rustls::Error> {
        while self.at < self.len {
            let mut rest = &self.raw[self.at..self.len];
            match self.session.read_tls(&mut rest) {
                // After the server's TLS close nothing more is taken: the rest is ignored.
                Ok(0) => {
                    self.at = self.len;
                    break;
                }
                Ok(n) => self.at += n,
                Err(e) => {
                    // Full of plaintext: it is read, then the rest is fed. Full of anything
                    // else (a handshake message over rustls's limit): nothing will empty it.
                    let io = self.session.process_new_packets()?;
                    if io.plaintext_bytes_to_read() > 0 {
                        break;
                    }
                    return Err(rustls::Error::General(e.to_string()));
                }
            }
            self.session.process_new_packets()?;
        }
        Ok(())
    }
}

/// Over TLS: the plaintext rustls holds, taken by `take` (`Ok(0)`: the end; `WouldBlock`: none
/// yet), ciphertext read from `stream` and fed to rustls until there is some.
fn poll_plaintext(
    stream: &mut Socket,
    tls: &mut Tls,
    cx: &mut Context<'_>,
    mut take: impl FnMut(&mut rustls::Reader<'_>) -> io::Result<usize>,
) -> Poll<io::Result<usize>> {
    loop {
        match take(&mut tls.session.reader()) {
            Ok(n) => return Poll::Ready(Ok(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            // The server closed the socket without a TLS close: the end, as for a plain
            // connection (a body whose framing says more is cut short, and said so; one
            // that lasts until the close is judged by [`closed_uncleanly`]).
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                tls.unclean = true;
                return Poll::Ready(Ok(0));
            }
            Err(e) => return Poll::Ready(Err(e)),
        }
        if tls.at < tls.len {
            tls.feed()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            continue;
        }
        if tls.eof {
            return Poll::Ready(Ok(0));
        }
        let n = ready!(stream.poll_read(cx, &mut tls.raw))?;
        (tls.at, tls.len) = (0, n);
        if n == 0 {
            tls.eof = true;
            // The end, told to rustls: it says whether it came after a TLS close.
            let _ = tls.session.read_tls(&mut io::empty());
        }
    }
}

/// Appends to `buf` the plaintext `reader` holds, chunk by chunk, at most [`READ_SIZE`] bytes:
/// how many (`Ok(0)`: the TLS close), or, when there was none, why (`WouldBlock`: none yet;
/// `UnexpectedEof`: the socket ended without a TLS close), as `Read::read` says it.
fn take_plaintext(reader: &mut rustls::Reader<'_>, buf: &mut Vec<u8>) -> io::Result<usize> {
    use std::io::BufRead;
    let mut taken = 0;
    while taken < READ_SIZE {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(_) if taken > 0 => break,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        let n = chunk.len().min(READ_SIZE - taken);
        buf.extend_from_slice(&chunk[..n]);
        reader.consume(n);
        taken += n;
    }
    Ok(taken)
}

/// A handshake the server cut short (`e`: how the socket failed, none when it closed).
fn handshake_cut(first: &[u8], e: Option<io::Error>) -> HttpFailure {
    if !first.is_empty() && !is_tls_record(first) {
        let message = format!("{} ({})", TlsFailure::NotTls, answered_with(first));
        return HttpFailure::new(HttpErrorKind::Tls(TlsFailure::NotTls), message, true);
    }
    let how = match e {
        Some(e) => format!("the connection failed during the TLS handshake ({e})"),
        None => "the server closed the connection during the TLS handshake".to_owned(),
    };
    HttpFailure::new(HttpErrorKind::Tls(TlsFailure::Other), how, true)
}

/// A TLS failure in rustls's words: the request was never sent.
pub(super) fn tls_failure(e: &rustls::Error) -> HttpFailure {
    let reason = reason_of(e);
    let message = format!("{reason} ({})", words_of(e));
    HttpFailure::new(HttpErrorKind::Tls(reason), message, true)
}

/// The rustls error an IO error of a TLS connection carries, if it is one.
pub(super) fn tls_error_of(e: &io::Error) -> Option<&rustls::Error> {
    e.get_ref()?.downcast_ref::<rustls::Error>()
}
