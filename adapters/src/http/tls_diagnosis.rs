//! What both HTTP clients say of TLS and of a port: the reason a rustls handshake failed and
//! its words ([`reason_of`], [`words_of`]: an unknown issuer, a name that does not match, an
//! expired certificate with its dates, a client certificate wanted, a server that does not
//! speak TLS), and what a port speaks when a plain `http://` request met something that is
//! not HTTP/1.1: TLS ([`speaks_tls`]: a ClientHello answered with a TLS record), or HTTP/2
//! with prior knowledge ([`port_hint`]: the connection preface answered with a `SETTINGS`
//! frame, or with HTTP/1.1 at once by a server that speaks only that). A failed handshake of
//! libcurl's is explained by a second one (`libcurl::handshake`).

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire_core::error::{Hint, TlsFailure};
use rustls::pki_types::ServerName;
use rustls::{AlertDescription, CertificateError, ClientConfig, ClientConnection, RootCertStore};

use super::backend::HttpFailure;
use super::url_parts::UrlParts;
use crate::runtime::Runtime;

/// Whether `bytes` start as a TLS record does: a content type (change cipher spec, alert,
/// handshake, application data, heartbeat) and a version 3.x.
pub(crate) fn is_tls_record(bytes: &[u8]) -> bool {
    matches!(bytes, [0x14..=0x18, 0x03, 0x00..=0x04, ..])
}

/// Words for a server's answer that is not TLS: its first line when it is text (`"HTTP/1.1
/// 400 Bad Request"`), else how many bytes came.
pub(crate) fn answered_with(first: &[u8]) -> String {
    let line = first
        .split(|b| *b == b'\r' || *b == b'\n')
        .next()
        .unwrap_or(&[]);
    if !line.is_empty() && line.iter().all(|b| (0x20..0x7f).contains(b)) {
        let line = String::from_utf8_lossy(line);
        return format!("it answered the TLS handshake with \"{line}\"");
    }
    "it answered the TLS handshake with bytes that are not TLS".to_owned()
}

/// rustls's words for a handshake error, with a certificate's dates as dates.
pub(crate) fn words_of(error: &rustls::Error) -> String {
    use CertificateError as C;
    match error {
        rustls::Error::InvalidCertificate(C::ExpiredContext { time, not_after }) => format!(
            "not valid after {}; it is now {}",
            utc(not_after.as_secs()),
            utc(time.as_secs())
        ),
        rustls::Error::InvalidCertificate(C::NotValidYetContext { time, not_before }) => {
            format!(
                "not valid before {}; it is now {}: is this machine's clock right?",
                utc(not_before.as_secs()),
                utc(time.as_secs())
            )
        }
        _ => error.to_string(),
    }
}

/// A moment given in seconds since 1970 as a date and time in UTC: `2026-12-02 04:26:55 UTC`.
fn utc(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (h, m, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
    // Days to a civil date (the proleptic Gregorian calendar), after H. Hinnant's algorithm.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02} UTC")
}

/// The servers that have answered in HTTP, each by a key its backend chooses (its authority):
/// a failure talking to one of these is never put down to a port that speaks something else.
#[derive(Debug, Default)]
pub(crate) struct Answered(Mutex<HashSet<String>>);

impl Answered {
    /// Whether the server `key` has answered in HTTP before.
    pub(crate) fn has(&self, key: &str) -> bool {
        let answered = self.0.lock().unwrap_or_else(|e| e.into_inner());
        answered.contains(key)
    }

    /// The server `key` answered in HTTP.
    pub(crate) fn insert(&self, key: &str) {
        let mut answered = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !answered.contains(key) {
            answered.insert(key.to_owned());
        }
    }
}

/// How long a second look at a port may wait for its answer.
pub(crate) const PORT_LOOK: Duration = Duration::from_secs(2);

/// A plain `http://` request to `url`, cut short before any response head at a server that has
/// not answered in HTTP yet: when its port speaks TLS, or (HTTP/2 with prior knowledge) not
/// HTTP/2, the failure gets that hint and is marked unsent (the server never read the request:
/// a TLS server reads no plain HTTP, an HTTP/1.1 server no HTTP/2 frames); not HTTP/2, its
/// words say what the server answered instead. Each look waits at most `connect_timeout` or
/// [`PORT_LOOK`], whichever is shorter.
pub(crate) async fn port_hint(
    runtime: &Runtime,
    failure: HttpFailure,
    url: &str,
    connect_timeout: Duration,
    prior_knowledge: bool,
) -> HttpFailure {
    let (url, wait) = (url.to_owned(), connect_timeout.min(PORT_LOOK));
    let hint = runtime.unblock_caught(move || plain_port_hint(&url, wait, prior_knowledge));
    match hint.await.flatten() {
        Some((hint, words)) => {
            let mut failure = failure.with_hint(hint);
            if let Some(words) = words {
                failure.message = words;
            }
            failure.unsent = true;
            failure
        }
        None => failure,
    }
}

/// What a port that cut a plain `http://` request to `url` short speaks, as a hint: TLS
/// ([`Hint::Https`]), or, with HTTP/2 spoken with prior knowledge (`prior_knowledge`),
/// anything but HTTP/2 ([`Hint::NoH2c`], with words saying what it answered the preface
/// with). With prior knowledge the preface is tried first: an HTTP/1.1 server answers it (or
/// closes) at once, where a ClientHello it would wait on. Looks at the port once or twice, each
/// look waiting `wait` at most; `None` when neither.
fn plain_port_hint(
    url: &str,
    wait: Duration,
    prior_knowledge: bool,
) -> Option<(Hint, Option<String>)> {
    let parts = UrlParts::read(url)?;
    let (host, port) = (parts.host, parts.port_or_default()?);
    let https = || {
        let url = mcpwire_core::error::with_scheme(&mcpwire_core::error::redact_url(url), "https");
        Hint::Https { url }
    };
    if prior_knowledge {
        match preface_answer(host, port, wait) {
            // SETTINGS: it speaks h2c; the failure is something else.
            Some(answer) if is_settings(&answer) => return None,
            Some(answer) if is_tls_record(&answer) => return Some((https(), None)),
            // An answer in HTTP/1.x says it all.
            Some(answer) if answer.starts_with(b"HTTP/") => {
                return Some((Hint::NoH2c, Some(not_h2c(&answer))))
            }
            // A close, or bytes that are neither: a TLS server may close so too.
            Some(answer) => {
                if speaks_tls(host, port, wait) {
                    return Some((https(), None));
                }
                return Some((Hint::NoH2c, Some(not_h2c(&answer))));
            }
            None => {}
        }
    }
    if speaks_tls(host, port, wait) {
        return Some((https(), None));
    }
    None
}

/// Words for a server that answered the HTTP/2 preface with `answer` (nothing: it closed).
fn not_h2c(answer: &[u8]) -> String {
    let how = if answer.is_empty() {
        "it closed the connection at the HTTP/2 preface".to_owned()
    } else {
        let line = answer
            .split(|b| *b == b'\r' || *b == b'\n')
            .next()
            .unwrap_or(&[]);
        if line.iter().all(|b| (0x20..0x7f).contains(b)) && !line.is_empty() {
            format!(
                "it answered the HTTP/2 preface with \"{}\"",
                String::from_utf8_lossy(line)
            )
        } else {
            "it answered the HTTP/2 preface with bytes that are not HTTP/2".to_owned()
        }
    };
    format!("the server does not speak HTTP/2 with prior knowledge (h2c): {how}")
}

/// Whether the server at `host:port` speaks TLS: it answers a TLS ClientHello with a TLS
/// record (a ServerHello, or an alert) within `wait`. No request is sent; the handshake goes no
/// further. `false` when it cannot be told (no connection, silence).
pub(crate) fn speaks_tls(host: &str, port: u16, wait: Duration) -> bool {
    let hello = (|| {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .ok()?
            .with_root_certificates(RootCertStore::empty())
            .with_no_client_auth();
        let name = ServerName::try_from(host.to_owned()).ok()?;
        let mut conn = ClientConnection::new(Arc::new(config), name).ok()?;
        let mut hello = Vec::new();
        conn.write_tls(&mut hello).ok()?;
        Some(hello)
    })();
    let Some(hello) = hello else { return false };
    first_bytes(host, port, &hello, |got| got.len() >= 5, wait).is_some_and(|b| is_tls_record(&b))
}

/// What the server at `host:port` answers the HTTP/2 connection preface with (an empty
/// `SETTINGS` frame after it), within `wait`: its first bytes, up to a line (empty: it closed).
/// `None` when no connection could be made or nothing came.
fn preface_answer(host: &str, port: u16, wait: Duration) -> Option<Vec<u8>> {
    // The preface, then an empty SETTINGS frame (length 0, type 4, no flags, stream 0).
    let mut preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    preface.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    // Enough once a SETTINGS frame's header, a TLS record's, or a line came.
    let enough = |got: &[u8]| {
        is_settings(got) && got.len() >= 9
            || is_tls_record(got) && got.len() >= 5
            || got.len() >= 64
            || got.contains(&b'\n')
    };
    first_bytes(host, port, &preface, enough, wait)
}

/// Whether `answer` starts with an HTTP/2 `SETTINGS` frame (its type, the 4th byte, is 4).
fn is_settings(answer: &[u8]) -> bool {
    matches!(answer, [_, _, _, 0x04, ..]) && !answer.starts_with(b"HTTP/")
}

/// Connects to `host:port`, writes `hello`, and reads until what came is `enough`, the server
/// closed, or `wait` passed: the bytes that came (empty after a close). `None` when no
/// connection could be made or nothing came in time.
fn first_bytes(
    host: &str,
    port: u16,
    hello: &[u8],
    enough: impl Fn(&[u8]) -> bool,
    wait: Duration,
) -> Option<Vec<u8>> {
    let addr = (host, port).to_socket_addrs().ok()?.next()?;
    let mut sock = TcpStream::connect_timeout(&addr, wait).ok()?;
    sock.set_write_timeout(Some(wait)).ok()?;
    sock.write_all(hello).ok()?;
    let until = std::time::Instant::now() + wait;
    let mut got = Vec::new();
    let mut buf = [0u8; 64];
    while !enough(&got) {
        let left = until.checked_duration_since(std::time::Instant::now())?;
        sock.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .ok()?;
        match sock.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // A reset after the answer still leaves the answer.
            Err(_) if !got.is_empty() => break,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(_) => return None,
        }
    }
    Some(got)
}

/// The kind of a rustls handshake error.
pub(crate) fn reason_of(error: &rustls::Error) -> TlsFailure {
    use rustls::Error as E;
    use CertificateError as C;
    match error {
        E::InvalidCertificate(c) => match c {
            C::UnknownIssuer => TlsFailure::UnknownIssuer,
            C::NotValidForName | C::NotValidForNameContext { .. } => TlsFailure::NameMismatch,
            C::Expired | C::ExpiredContext { .. } => TlsFailure::Expired,
            C::NotValidYet | C::NotValidYetContext { .. } => TlsFailure::NotYetValid,
            _ => TlsFailure::Other,
        },
        E::AlertReceived(
            AlertDescription::CertificateRequired
            | AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
            | AlertDescription::AccessDenied,
        ) => TlsFailure::ClientCertificate,
        E::InvalidMessage(rustls::InvalidMessage::InvalidContentType) => TlsFailure::NotTls,
        _ => TlsFailure::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_as_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_796_185_615), "2026-12-02 04:26:55 UTC");
        assert_eq!(utc(4_107_542_399), "2100-02-28 23:59:59 UTC");
    }

    /// A stand-in on 127.0.0.1 that answers each connection's first bytes with `answer`'s and
    /// closes; its URL.
    fn stand_in(answer: fn(&[u8]) -> &'static [u8]) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let mut first = [0u8; 4096];
                let n = conn.read(&mut first).unwrap_or(0);
                let _ = conn.write_all(answer(&first[..n]));
            }
        });
        url
    }

    #[test]
    fn what_a_port_speaks() {
        let wait = Duration::from_secs(2);
        let tls = stand_in(|_| &[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]);
        let https = tls.replace("http://", "https://");
        let hint = |url: &str, prior: bool| plain_port_hint(url, wait, prior).map(|(h, _)| h);
        assert_eq!(hint(&tls, false), Some(Hint::Https { url: https.clone() }));
        assert_eq!(hint(&tls, true), Some(Hint::Https { url: https }));
        let http1 = stand_in(|_| b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
        assert_eq!(plain_port_hint(&http1, wait, false), None);
        assert_eq!(
            plain_port_hint(&http1, wait, true),
            Some((
                Hint::NoH2c,
                Some(
                    "the server does not speak HTTP/2 with prior knowledge (h2c): it answered \
                     the HTTP/2 preface with \"HTTP/1.1 400 Bad Request\""
                        .to_owned()
                )
            ))
        );
        // A SETTINGS frame: it speaks h2c.
        let h2c = stand_in(|_| &[0, 0, 0, 4, 0, 0, 0, 0, 0]);
        assert_eq!(hint(&h2c, true), None);
        // Nothing listens: nothing is told.
        assert_eq!(plain_port_hint("http://127.0.0.1:1/mcp", wait, true), None);
    }

    #[test]
    fn tls_records_and_what_is_not_one() {
        assert!(is_tls_record(&[0x15, 0x03, 0x03, 0x00, 0x02]));
        assert!(is_tls_record(&[0x16, 0x03, 0x01]));
        assert!(!is_tls_record(b"HTTP/1.1 400 Bad Request"));
        assert!(!is_tls_record(&[0x15]));
        assert_eq!(
            answered_with(b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain"),
            "it answered the TLS handshake with \"HTTP/1.1 400 Bad Request\""
        );
        assert_eq!(
            answered_with(&[0, 1, 2]),
            "it answered the TLS handshake with bytes that are not TLS"
        );
    }
}
