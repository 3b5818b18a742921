//! Why a TLS handshake of libcurl's failed. libcurl reports a failed certificate check with one
//! code for every reason, and isahc does not pass on its words; so after such a failure one
//! more handshake (no request in it) is made with rustls, the same TLS library libcurl uses
//! here, with the same trust and client certificate, and its error names the reason: an
//! unknown issuer, a name that does not match, an expired certificate (with its dates), a
//! client certificate wanted, a server that does not speak TLS at all. (mcpwire's own client
//! has rustls's error from its own handshake: it needs no second one.)

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use mcpwire_core::error::TlsFailure;
use rustls::pki_types::ServerName;
use rustls::ClientConnection;

use crate::http::options::TlsOptions;
use crate::http::tls_diagnosis::{answered_with, is_tls_record, reason_of, words_of};
use crate::http::url_parts::UrlParts;

/// How long the second handshake may take in all.
const DIAGNOSIS_TIMEOUT: Duration = Duration::from_secs(5);
/// How long to wait, once the handshake is done, for a verdict on the client certificate.
const VERDICT_WAIT: Duration = Duration::from_millis(500);

/// The host and port of an `https://` URL.
fn host_and_port(url: &str) -> Option<(String, u16)> {
    let parts = UrlParts::read(url).filter(|p| p.is_https())?;
    Some((parts.host.to_owned(), parts.port_or_default()?))
}

/// The reason a handshake with the server at `url` fails, and rustls's words for it; `None`
/// when it succeeds or cannot be tried.
pub(super) fn diagnose(
    url: &str,
    tls: &TlsOptions,
    extra_pem: Option<&[u8]>,
) -> Option<(TlsFailure, String)> {
    let (host, port) = host_and_port(url)?;
    let config = crate::http::tls_config::client_config(tls, extra_pem, &[]).ok()?;
    let name = ServerName::try_from(host.clone()).ok()?;
    let addr = (host.as_str(), port).to_socket_addrs().ok()?.next()?;
    let sock = TcpStream::connect_timeout(&addr, DIAGNOSIS_TIMEOUT).ok()?;
    sock.set_read_timeout(Some(DIAGNOSIS_TIMEOUT)).ok()?;
    sock.set_write_timeout(Some(DIAGNOSIS_TIMEOUT)).ok()?;
    let mut sock = Recorded {
        inner: sock,
        first: Vec::new(),
    };
    let mut conn = ClientConnection::new(Arc::new(config), name).ok()?;
    let mut outcome = Ok(());
    while conn.is_handshaking() && outcome.is_ok() {
        outcome = conn.complete_io(&mut sock).map(|_| ());
    }
    if outcome.is_ok() {
        // Over TLS 1.3 the server judges a client certificate after the client's side of the
        // handshake is done: its verdict is the first thing it sends.
        let mut byte = [0u8; 1];
        sock.inner.set_read_timeout(Some(VERDICT_WAIT)).ok()?;
        outcome = match conn.complete_io(&mut sock) {
            Ok(_) => conn.reader().read(&mut byte).map(|_| ()),
            Err(e) => Err(e),
        };
    }
    let e = outcome.err()?;
    // What came back is not TLS at all: a plain server's answer to the ClientHello.
    if !sock.first.is_empty() && !is_tls_record(&sock.first) {
        return Some((TlsFailure::NotTls, answered_with(&sock.first)));
    }
    let error = e.get_ref()?.downcast_ref::<rustls::Error>()?;
    Some((reason_of(error), words_of(error)))
}

/// A socket that keeps the first bytes it reads (what the server answered first).
struct Recorded {
    inner: TcpStream,
    first: Vec<u8>,
}

impl Read for Recorded {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let room = 64usize.saturating_sub(self.first.len());
        self.first.extend_from_slice(&buf[..n.min(room)]);
        Ok(n)
    }
}

impl Write for Recorded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_ports_of_urls() {
        assert_eq!(
            host_and_port("https://a.example/mcp"),
            Some(("a.example".into(), 443))
        );
        assert_eq!(
            host_and_port("https://u:p@127.0.0.1:8443/mcp?x"),
            Some(("127.0.0.1".into(), 8443))
        );
        assert_eq!(host_and_port("https://[::1]:9/x"), Some(("::1".into(), 9)));
        assert_eq!(host_and_port("http://a.example/"), None);
    }
}
