//! Through an HTTP proxy, as curl goes: a plain `http://` request in absolute form on a
//! connection to the proxy (which forwards it; never reused, since a proxy may close it
//! unannounced), an `https://` one in a `CONNECT` tunnel with TLS to the server inside it (the
//! server's connection, reused as usual). The proxy's credentials, from its URL, go to the proxy
//! alone, as `Proxy-Authorization: Basic`. Its failures are its own, told apart: it cannot be
//! reached, it refused the tunnel or the port, it wants credentials; never "may have run", as
//! the request did not pass it.
//!
//! An `https://` proxy URL (TLS to the proxy) and SOCKS proxies are libcurl's.

use std::sync::Arc;

use base64::Engine as _;
use mcpwire_core::codec::http1::{self, HeadReader};
use mcpwire_core::error::{HttpErrorKind, ProxyFailure};

use super::conn::{Conn, READ_SIZE};
use crate::http::backend::HttpFailure;
use crate::http::options::ProxyRoute;
use crate::http::proxy_words::{
    credentials_wanted, tunnel_refused, unauthorized_through, unreachable_proxy, whence,
};
use crate::http::url_parts::UrlParts;

/// The most a proxy's answer to a `CONNECT` may take before its end.
const MAX_CONNECT_ANSWER: usize = 64 * 1024;

/// An HTTP proxy on the way to a server.
pub(crate) struct Hop {
    pub(super) route: ProxyRoute,
    /// The proxy's host and port.
    pub(super) host: String,
    pub(super) port: u16,
    /// `Basic …`, from the credentials in the proxy's URL.
    pub(super) authorization: Option<String>,
}

impl Hop {
    /// The hop for `route`, when it is an HTTP proxy this client speaks to (not an `https://`
    /// proxy URL, not SOCKS) and its URL reads (a host written plainly).
    pub(crate) fn of(route: ProxyRoute) -> Option<Hop> {
        if !(route.forwards || route.connect) {
            return None;
        }
        let with_scheme;
        let url = match route.url.trim() {
            url if url.contains("://") => url,
            url => {
                with_scheme = format!("http://{url}");
                &with_scheme
            }
        };
        let parts = UrlParts::read(url).filter(|p| p.scheme.eq_ignore_ascii_case("http"))?;
        let visible = |t: &str| t.bytes().all(|b| (0x21..0x7f).contains(&b) && b != b'%');
        if !visible(parts.authority) {
            return None;
        }
        let (host, port) = (parts.host.to_owned(), parts.port_or_default()?);
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        let authorization = route.credentials.then(|| {
            let (user, password) = parts.credentials().unwrap_or_default();
            let pair = format!("{}:{}", decode(user), decode(password));
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            format!("Basic {encoded}")
        });
        Some(Hop {
            route,
            host,
            port,
            authorization,
        })
    }

    /// The proxy's `Proxy-Authorization` header, when it has credentials.
    pub(super) fn header(&self) -> Option<(String, String)> {
        let value = self.authorization.clone()?;
        Some(("Proxy-Authorization".to_owned(), value))
    }

    /// A failure to connect to the proxy, as the proxy's.
    pub(super) fn connect_failed(&self, failure: HttpFailure) -> HttpFailure {
        match failure.kind {
            HttpErrorKind::ConnectionRefused => unreachable_proxy(&self.route),
            HttpErrorKind::NameResolution => {
                let message = format!(
                    "the proxy's host name does not resolve: {}{}",
                    self.route.shown,
                    whence(&self.route)
                );
                HttpFailure::new(
                    HttpErrorKind::Proxy(ProxyFailure::Unreachable),
                    message,
                    true,
                )
            }
            _ => HttpFailure {
                message: format!(
                    "{} (through the proxy {}{})",
                    failure.message,
                    self.route.shown,
                    whence(&self.route)
                ),
                ..failure
            },
        }
    }

    /// The proxy's own answer to a request it was to forward, when it is a refusal of its
    /// own (`407`), or may be (a `401` asking for credentials OAuth cannot give, as tinyproxy
    /// asks for its own): the request did not run.
    pub(super) fn refused(&self, status: u16, headers: &[(String, String)]) -> Option<HttpFailure> {
        match status {
            407 => Some(credentials_wanted(&self.route, 407, challenge(headers))),
            // Maybe the proxy's, maybe the server's: a challenge OAuth cannot answer.
            401 => not_oauth(headers).map(|c| unauthorized_through(&self.route, c)),
            _ => None,
        }
    }

    /// Opens a tunnel to `authority` (`host:port`) through the proxy on `conn`: the `CONNECT`
    /// and the proxy's answer, which must be `2xx` with nothing after it.
    pub(super) async fn tunnel(&self, conn: &mut Conn, authority: &str) -> Result<(), HttpFailure> {
        let mut out = Vec::new();
        let headers: Vec<(String, String)> = self.header().into_iter().collect();
        http1::write_request(&mut out, "CONNECT", authority, authority, &headers, &[])
            .map_err(|e| HttpFailure::new(HttpErrorKind::Other, e.to_string(), true))?;
        let cut = |how: String| {
            let message = format!(
                "the proxy {}{} {how} before it answered the CONNECT to {authority}",
                self.route.shown,
                whence(&self.route)
            );
            HttpFailure::new(HttpErrorKind::Proxy(ProxyFailure::Other), message, true)
        };
        conn.write_all(&out)
            .await
            .map_err(|e| cut(format!("failed ({e})")))?;
        conn.expect_nothing();
        let mut buf = Vec::with_capacity(READ_SIZE);
        let mut reader = HeadReader::default();
        let head = loop {
            match reader.read(&buf, false) {
                Ok(Some((head, used))) if head.is_interim() => {
                    buf.drain(..used);
                }
                Ok(Some((head, used))) => {
                    buf.drain(..used);
                    break head;
                }
                Ok(None) if buf.len() > MAX_CONNECT_ANSWER => {
                    return Err(cut("sent an answer too long".into()))
                }
                Ok(None) => match conn.read_more(&mut buf).await {
                    Ok(0) => return Err(cut("closed the connection".into())),
                    Ok(_) => {}
                    Err(e) => return Err(cut(format!("failed ({e})"))),
                },
                Err(e) => return Err(cut(format!("answered in words that are not HTTP ({e})"))),
            }
        };
        match head.status {
            200..=299 if buf.is_empty() => Ok(()),
            200..=299 => Err(cut("sent bytes of its own after opening the tunnel".into())),
            407 => Err(credentials_wanted(
                &self.route,
                407,
                challenge(&head.headers),
            )),
            // The proxy's own answer (nothing went to the server yet), as tinyproxy asks for
            // its credentials.
            401 => {
                let asked = challenge(&head.headers).or_else(|| not_oauth(&head.headers));
                Err(credentials_wanted(&self.route, 401, asked))
            }
            status => Err(tunnel_refused(&self.route, authority, u32::from(status))),
        }
    }
}

/// The `Proxy-Authenticate` of a proxy's answer.
fn challenge(headers: &[(String, String)]) -> Option<&str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("proxy-authenticate"))
        .map(|(_, v)| v.as_str())
}

/// The first `WWW-Authenticate` of a `401` whose challenges OAuth cannot answer (`Basic`, not
/// `Bearer`); `None` when there is none, or one is OAuth's.
fn not_oauth(headers: &[(String, String)]) -> Option<&str> {
    let values = || {
        headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("www-authenticate"))
            .map(|(_, v)| v.as_str())
    };
    let first = values().next()?;
    (!mcpwire_core::www_authenticate::invites_oauth(values())).then_some(first)
}

/// The key a connection through `hop` is pooled under, beside the server's `key`.
pub(super) fn pool_key(key: &str, hop: Option<&Arc<Hop>>) -> String {
    match hop {
        Some(hop) => format!("{key} via {}", hop.route.shown),
        None => key.to_owned(),
    }
}
