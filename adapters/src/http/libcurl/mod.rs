//! The libcurl backend: isahc over libcurl, for what mcpwire's own client does not speak
//! (HTTP/2, SOCKS proxies, `https://` proxy URLs) and for all of HTTP/1.1 when
//! [`HttpClientOptions::http1_via_libcurl`] asks; the router (`http::router`) decides which
//! request comes here. It maps its own failures, in words a person can act on and as an
//! [`HttpErrorKind`]: a request's ([`errors`], explained further where libcurl's code alone does
//! not say in [`explain`], a TLS failure by a second handshake in [`handshake`]) and a body's
//! (each read error carries its failure: see [`BodyFailure`]). The isahc clients are built from
//! the options in [`build`]. Nothing outside this folder names isahc or curl.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use futures_lite::AsyncRead;
use isahc::ResponseExt;
use mcpwire_core::error::HttpErrorKind;
use mcpwire_core::{HttpMethod, HttpRequest};

use self::errors::{body_failure, failure_of};
use self::explain::{explained, origin_of, Diagnosis};
use crate::future::BoxFuture;
use crate::http::backend::{
    check_headers, BodyFailure, HttpBackend, HttpFailure, HttpResponse, HttpVersion,
};
use crate::http::options::{HttpClientOptions, HttpVersionChoice, ProxyRoute};
use crate::http::proxy_words::{credentials_wanted, unauthorized_through};
use crate::http::url_parts::UrlParts;

mod build;
mod errors;
mod explain;
mod handshake;

/// HTTP through isahc (libcurl), with no timeouts of its own (deadlines are the core's),
/// HTTP/2 connections kept alive and reused. The default client sends it what mcpwire's own
/// HTTP/1.1 client does not speak; as an [`HttpBackend`] of its own
/// ([`ConnectOptions::http_backend`](crate::ConnectOptions::http_backend)) it carries every
/// request.
///
/// What libcurl speaks in HTTP/1.1 goes on a connection of its own, closed after its exchange
/// (the escape hatch [`HttpClientOptions::http1_via_libcurl`], a plain `http://` request, one an
/// HTTP proxy forwards): libcurl takes a pooled HTTP/1.1 connection it looked at less than a
/// second before without looking again, so a request would go on a connection the server
/// closed right after its last answer (and be lost after it was sent), or on one where the
/// server slipped in bytes nobody asked for (and a response slipped in would be taken for its
/// answer); mcpwire's own client looks at each pooled connection before it reuses it. An
/// `https://` request that may speak HTTP/2 (ALPN decides) is kept alive, as HTTP/2 is: through
/// a SOCKS proxy, one that ends in HTTP/1.1 keeps libcurl's check once a second.
pub struct IsahcBackend {
    client: isahc::HttpClient,
    /// The client for what libcurl speaks in HTTP/1.1, which never reuses a connection; built
    /// at the first such request.
    single_use: OnceLock<Result<isahc::HttpClient, String>>,
    /// The options both clients are built from, which a failure's diagnosis needs too.
    diagnosis: Arc<Diagnosis>,
}

impl IsahcBackend {
    /// A backend with the default [`HttpClientOptions`].
    pub fn new() -> Result<Self, String> {
        Self::with_options(&HttpClientOptions::default())
    }

    /// A backend with these options (TLS, proxy, versions, pool limits). Fails when an option
    /// cannot be used (a proxy URL that does not parse, a CA file that cannot be read or holds
    /// no PEM certificate, a client certificate file that is missing).
    pub fn with_options(options: &HttpClientOptions) -> Result<Self, String> {
        let trust_pem = options.tls.trust_pem()?;
        Ok(IsahcBackend {
            client: build::client(options, trust_pem.as_deref(), true)?,
            single_use: OnceLock::new(),
            diagnosis: Arc::new(Diagnosis {
                options: options.clone(),
                trust_pem,
                answered: Default::default(),
            }),
        })
    }

    /// Whether libcurl speaks HTTP/1.1 to a URL (`plain`: an `http://` one): HTTP/1.1 is the
    /// choice, or a plain URL without prior knowledge. Over TLS with HTTP/2 allowed, ALPN
    /// decides.
    fn speaks_http1(&self, plain: bool) -> bool {
        match self.diagnosis.options.version {
            HttpVersionChoice::Http1Only => true,
            HttpVersionChoice::Http2PriorKnowledge => false,
            _ => plain,
        }
    }

    /// The client a request goes out on: for one libcurl speaks in HTTP/1.1, or one an HTTP
    /// proxy forwards, the one that never reuses a connection.
    fn client_for(
        &self,
        route: Option<&ProxyRoute>,
        http1: bool,
    ) -> Result<isahc::HttpClient, String> {
        if !(http1 || route.is_some_and(|r| r.forwards)) {
            return Ok(self.client.clone());
        }
        self.single_use
            .get_or_init(|| {
                let d = &self.diagnosis;
                build::client(&d.options, d.trust_pem.as_deref(), false)
            })
            .clone()
    }
}

impl HttpBackend for IsahcBackend {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
        // isahc panics on a header value that is not UTF-8 as it hands it to libcurl, and
        // libcurl would send a CR or LF in one as it is: such a header fails the request here,
        // before anything is sent.
        if let Err(failure) = check_headers(&request) {
            return Box::pin(async move { Err(failure) });
        }
        // Only a plain `http://` request is sent differently through a proxy (never on a
        // reused connection), and only its server's answers are remembered (for the port hint):
        // an `https://` request looks its route up only if it fails.
        let plain = UrlParts::read(&request.url).is_some_and(|p| p.is_http() && !p.is_https());
        let route = plain
            .then(|| self.diagnosis.options.proxy.route(&request.url))
            .flatten();
        let client = match self.client_for(route.as_ref(), self.speaks_http1(plain)) {
            Ok(client) => client,
            Err(e) => {
                let failure = HttpFailure::new(HttpErrorKind::Other, e, true);
                return Box::pin(async move { Err(failure) });
            }
        };
        let diagnosis = self.diagnosis.clone();
        let prior_knowledge = diagnosis.options.version == HttpVersionChoice::Http2PriorKnowledge;
        Box::pin(async move {
            let url = request.url.clone();
            let mut builder = isahc::Request::builder()
                .method(request.method.as_str())
                .uri(&request.url);
            if prior_knowledge && !plain {
                // HTTP/2 with prior knowledge is for `http://`: over TLS, ALPN decides (the
                // preface never goes without `h2` agreed).
                use isahc::config::{Configurable, VersionNegotiation};
                builder = builder.version_negotiation(VersionNegotiation::latest_compatible());
            }
            for (k, v) in &request.headers {
                builder = builder.header(k.as_str(), v.as_str());
            }
            let body = match request.method {
                // A body libcurl cannot rewind: when a reused keep-alive connection dies before
                // the first response byte, libcurl would send the request again on its own
                // (any method); with this body it fails instead, and the core decides (at most
                // once). The length is known, so the request keeps its Content-Length.
                HttpMethod::Post => {
                    let len = request.body.len() as u64;
                    let body = futures_lite::io::Cursor::new(request.body);
                    isahc::AsyncBody::from_reader_sized(body, len)
                }
                _ => isahc::AsyncBody::empty(),
            };
            let req = builder
                .body(body)
                .map_err(|e| HttpFailure::new(HttpErrorKind::Other, e.to_string(), true))?;
            let resp = match client.send_async(req).await {
                Ok(resp) => resp,
                Err(e) => {
                    let route = match route {
                        Some(route) => Some(route),
                        None if !plain => diagnosis.options.proxy.route(&url),
                        None => None,
                    };
                    return Err(explained(failure_of(&e), &url, route, &diagnosis).await);
                }
            };
            let status = resp.status().as_u16();
            if plain {
                diagnosis.answered.insert(origin_of(&url));
            }
            if let Some(route) = route.as_ref().filter(|r| r.forwards && status == 407) {
                // The proxy's own answer to a request it was to forward: it went no further.
                // (Its body is not read; dropping the response ends the exchange.)
                let challenge = resp
                    .headers()
                    .get("proxy-authenticate")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                return Err(credentials_wanted(route, 407, challenge.as_deref()));
            }
            if let Some(route) = route.as_ref().filter(|r| r.forwards && status == 401) {
                // A challenge OAuth cannot answer, through a proxy that forwarded the request:
                // maybe the proxy's own (tinyproxy asks for its credentials so).
                let values: Vec<&str> = (resp.headers().get_all("www-authenticate").iter())
                    .filter_map(|v| v.to_str().ok())
                    .collect();
                if let Some(first) = values.first().filter(|_| {
                    !mcpwire_core::www_authenticate::invites_oauth(values.iter().copied())
                }) {
                    return Err(unauthorized_through(route, first));
                }
            }
            let version = match resp.version() {
                isahc::http::Version::HTTP_2 => Some(HttpVersion::Http2),
                isahc::http::Version::HTTP_3 => Some(HttpVersion::Http3),
                isahc::http::Version::HTTP_10 | isahc::http::Version::HTTP_11 => {
                    Some(HttpVersion::Http1)
                }
                _ => None,
            };
            let local_addr = resp.local_addr();
            // A value that is not UTF-8 (obsolete text, 0x80-0xFF) is kept with U+FFFD in place
            // of its bad bytes, never a panic: the core judges what it reads (a session id is
            // visible ASCII). isahc's parser has already refused names that are not tokens and
            // values with control characters (the transfer then fails).
            let headers = resp
                .headers()
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_owned(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
            let body: Pin<Box<dyn AsyncRead + Send>> = Box::pin(Body(resp.into_body()));
            Ok(HttpResponse {
                status,
                headers,
                body,
                version,
                local_addr,
            })
        })
    }
}

/// A response body of libcurl's: each read error carries what it means ([`BodyFailure`]), in
/// the words mcpwire's own client uses for a body cut short.
struct Body(isahc::AsyncBody);

impl AsyncRead for Body {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.0).poll_read(cx, buf) {
            Poll::Ready(Err(e)) => {
                let failure = BodyFailure(body_failure(&e));
                Poll::Ready(Err(failure.into_io(e.kind())))
            }
            read => read,
        }
    }
}
