//! The default HTTP backend: isahc over libcurl, and what its failures mean, in words a
//! person can act on and as an [`HttpErrorKind`].

use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures_lite::AsyncRead;
use isahc::ResponseExt;
use mcpwire_core::error::{HttpErrorKind, ProxyFailure, TlsFailure};
use mcpwire_core::{HttpMethod, HttpRequest};

use super::backend::{check_headers, HttpBackend, HttpFailure, HttpResponse, HttpVersion};
use super::curl_errors::{classify, CURLE_PROXY};
use super::options::{HttpClientOptions, HttpVersionChoice, ProxyRoute};
use super::proxy_words::{
    credentials_wanted, tunnel_refused, unauthorized_through, unreachable_proxy, whence,
    where_to_put,
};
use super::tls_diagnosis;
use crate::future::BoxFuture;

/// The default backend: isahc (libcurl), with no timeouts of its own (deadlines are the
/// core's), HTTP/2 connections kept alive and reused.
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

/// The options, and the PEM bundle trusted: what building a client and explaining a failure
/// need (a second TLS handshake trusts and presents what libcurl did; a second connection
/// through the proxy goes as libcurl's did).
struct Diagnosis {
    options: HttpClientOptions,
    trust_pem: Option<Vec<u8>>,
    /// The servers (`scheme://host:port`, as their URLs write it) that have answered in HTTP.
    answered: tls_diagnosis::Answered,
}

/// The scheme and authority of a URL as written (`http://host:port`), read without parsing
/// it: a key for the server it names.
fn origin_of(url: &str) -> &str {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    &url[..end]
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
            client: options.build(trust_pem.as_deref(), true)?,
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
                d.options.build(d.trust_pem.as_deref(), false)
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
        let plain = request.url.starts_with("http://");
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
            let body: Pin<Box<dyn AsyncRead + Send>> = Box::pin(resp.into_body());
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

/// A failure explained: through a proxy, as the proxy's (see [`through_proxy`]); a plain
/// `http://` request that got no HTTP answer from a server that never answered, by what the
/// port speaks (see [`plain_port`]); directly, a TLS failure by a second handshake, when one
/// can be made.
///
/// A connection over TLS that fails before the response head may be a server that refused the
/// client certificate: under TLS 1.3 its verdict comes after the client's side of the
/// handshake, so libcurl sees only a failed read. The second handshake tells; when it was that,
/// the request was never read.
async fn explained(
    mut failure: HttpFailure,
    url: &str,
    route: Option<ProxyRoute>,
    diagnosis: &Arc<Diagnosis>,
) -> HttpFailure {
    if let Some(route) = route {
        // Through a proxy a second handshake (made directly) would not see the same server,
        // and a failed connect is the proxy's.
        return through_proxy(failure, url, route, diagnosis).await;
    }
    if url.starts_with("http://") {
        return plain_port(failure, url, diagnosis).await;
    }
    let cut_over_tls = failure.kind == HttpErrorKind::HeadCutShort && url.starts_with("https://");
    let unexplained = matches!(failure.kind, HttpErrorKind::Tls(TlsFailure::Other));
    if !(unexplained || cut_over_tls) {
        return failure;
    }
    let (url, d) = (url.to_owned(), diagnosis.clone());
    let diagnosis = smol::unblock(move || {
        tls_diagnosis::diagnose(&url, &d.options.tls, d.trust_pem.as_deref())
    })
    .await;
    match diagnosis {
        Some((reason, words)) if unexplained || reason == TlsFailure::ClientCertificate => {
            failure.message = format!("{reason} ({words})");
            failure.kind = HttpErrorKind::Tls(reason);
            failure.unsent = true;
        }
        _ => {}
    }
    failure
}

/// A plain `http://` request cut short before any response head, at a server that has not
/// answered in HTTP yet: see [`tls_diagnosis::port_hint`].
async fn plain_port(failure: HttpFailure, url: &str, diagnosis: &Arc<Diagnosis>) -> HttpFailure {
    if failure.kind != HttpErrorKind::HeadCutShort || diagnosis.answered.has(origin_of(url)) {
        return failure;
    }
    let prior = diagnosis.options.version == HttpVersionChoice::Http2PriorKnowledge;
    tls_diagnosis::port_hint(failure, url, diagnosis.options.connect_timeout, prior).await
}

/// A failure to connect through a proxy, as the proxy's: it cannot be reached, it refused the
/// tunnel or the port, it wants credentials.
///
/// libcurl fails a CONNECT the proxy answered with anything but 2xx with the code it gives a
/// proxy that cannot be reached (`CURLE_COULDNT_CONNECT`), and a SOCKS proxy's refusal or
/// demand for credentials with one code (`CURLE_PROXY`); the proxy's answer
/// (`CURLINFO_HTTP_CONNECTCODE`, `CURLINFO_PROXY_ERROR`) and libcurl's words stay in the
/// transfer, which isahc does not show. So after such a failure libcurl connects through the
/// same proxy once more, alone, stopping once the tunnel is open (no request in it, nothing
/// sent to the server), and what it reports tells which it was. A connection cut short before
/// any response head through a CONNECT tunnel is asked about too: when the proxy refuses the
/// same CONNECT with the same credentials, the request never passed it; when the tunnel opens,
/// the failure stays as it was (the request may have reached the server). A plain `http://`
/// request through an HTTP proxy has no tunnel: a failed connect there can only be the
/// proxy's.
async fn through_proxy(
    mut failure: HttpFailure,
    url: &str,
    route: ProxyRoute,
    diagnosis: &Arc<Diagnosis>,
) -> HttpFailure {
    let from = whence(&route);
    let proxy = &route.shown;
    // Cut short before any response head: in the CONNECT, or after the tunnel opened.
    let cut_short = failure.kind == HttpErrorKind::HeadCutShort;
    match failure.kind {
        HttpErrorKind::ConnectionRefused | HttpErrorKind::HeadCutShort if route.connect => {}
        HttpErrorKind::Proxy(ProxyFailure::Other) => {}
        HttpErrorKind::ConnectionRefused => return unreachable_proxy(&route),
        HttpErrorKind::Proxy(ProxyFailure::Unreachable) => {
            failure.message = format!("the proxy's host name does not resolve: {proxy}{from}");
            return failure;
        }
        HttpErrorKind::ConnectTimeout => {
            failure.message = format!("{} (through the proxy {proxy}{from})", failure.message);
            return failure;
        }
        _ => return failure,
    }
    let (target, proxy_url) = (url.to_owned(), route.url.clone());
    let timeout = diagnosis.options.connect_timeout;
    let probe = smol::unblock(move || probe(&target, &proxy_url, timeout)).await;
    let Some(probe) = probe else {
        return failure;
    };
    let target = url::Url::parse(url)
        .ok()
        .and_then(|u| Some(format!("{}:{}", u.host_str()?, u.port_or_known_default()?)))
        .unwrap_or_else(|| url.to_owned());
    // The proxy refuses this CONNECT, with these credentials: the first went no further.
    match probe.connect_status {
        // A 401 to a CONNECT is the proxy's too (tinyproxy asks for its credentials so).
        status @ (401 | 407) => {
            return credentials_wanted(&route, status as u16, probe.challenge.as_deref())
        }
        300.. => return tunnel_refused(&route, &target, probe.connect_status),
        _ => {}
    }
    if cut_short {
        // The tunnel opens: what was cut short may have been the server's exchange.
        return failure;
    }
    let words = if probe.words.is_empty() {
        String::new()
    } else {
        format!(" ({})", probe.words)
    };
    let (kind, message) = match probe.code {
        curl_sys::CURLE_COULDNT_CONNECT | curl_sys::CURLE_COULDNT_RESOLVE_PROXY => {
            return unreachable_proxy(&route)
        }
        // CURLPX_NO_AUTH (no method the client offers), CURLPX_USER_REJECTED.
        CURLE_PROXY if matches!(probe.socks, 12 | 33) => (
            ProxyFailure::Credentials,
            format!(
                "the SOCKS proxy {proxy} wants credentials, or refused the ones given: \
                 put them in the proxy URL, socks5://user:password@host:port{}{words}",
                where_to_put(&route)
            ),
        ),
        // CURLPX_REPLY_*: the proxy's answer to the connection it was asked for.
        CURLE_PROXY if (17..=25).contains(&probe.socks) => (
            ProxyFailure::Refused,
            format!("the SOCKS proxy {proxy} refused to connect to {target}{from}{words}"),
        ),
        curl_sys::CURLE_OK => (
            ProxyFailure::Other,
            format!(
                "could not connect through the proxy {proxy}{from}, though a second attempt \
                 got through: {}",
                failure.message
            ),
        ),
        _ => (
            ProxyFailure::Other,
            format!("could not connect through the proxy {proxy}{from}{words}"),
        ),
    };
    HttpFailure::new(HttpErrorKind::Proxy(kind), message, true)
}

/// What libcurl reports of a connection through a proxy made alone (see [`probe`]).
struct Probe {
    /// libcurl's code (`CURLE_OK` when the tunnel opened).
    code: curl_sys::CURLcode,
    /// The status the proxy answered the CONNECT with (`CURLINFO_HTTP_CONNECTCODE`), 0 when
    /// none came.
    connect_status: u32,
    /// A SOCKS proxy's failure (`CURLINFO_PROXY_ERROR`, a `CURLproxycode`), 0 when none.
    socks: std::os::raw::c_long,
    /// The proxy's `Proxy-Authenticate`, when it sent one.
    challenge: Option<String>,
    /// libcurl's words (its error buffer).
    words: String,
}

/// Connects to `url`'s host and port through the proxy `proxy` (credentials included) with
/// libcurl, stopping once the tunnel is open: a CONNECT for an HTTP proxy, the SOCKS handshake
/// for a SOCKS one. No request goes through it. `None` when it cannot be set up.
fn probe(url: &str, proxy: &str, connect_timeout: Duration) -> Option<Probe> {
    let target = url::Url::parse(url).ok()?;
    let (host, port) = (target.host_str()?, target.port_or_known_default()?);
    let mut easy = curl::easy::Easy::new();
    // An `http://` URL with a tunnel asked for: the CONNECT alone, no TLS after it.
    easy.url(&format!("http://{host}:{port}/")).ok()?;
    easy.proxy(proxy).ok()?;
    // The route is known to go through the proxy: no list sends it elsewhere.
    easy.noproxy("").ok()?;
    easy.http_proxy_tunnel(true).ok()?;
    easy.connect_only(true).ok()?;
    easy.connect_timeout(connect_timeout).ok()?;
    let challenge = Arc::new(Mutex::new(None));
    let seen = challenge.clone();
    easy.header_function(move |line| {
        let line = String::from_utf8_lossy(line);
        if let Some((name, value)) = line.split_once(':') {
            // A proxy asking with a 401 (tinyproxy) challenges in `WWW-Authenticate`.
            let name = name.trim();
            if name.eq_ignore_ascii_case("proxy-authenticate")
                || name.eq_ignore_ascii_case("www-authenticate")
            {
                let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
                seen.get_or_insert_with(|| value.trim().to_owned());
            }
        }
        true
    })
    .ok()?;
    let result = easy.perform();
    let connect_status = easy.http_connectcode().unwrap_or(0);
    let socks = proxy_error(&easy);
    let (code, words) = match result {
        Ok(()) => (curl_sys::CURLE_OK, String::new()),
        Err(e) => (
            e.code(),
            e.extra_description().unwrap_or(e.description()).to_owned(),
        ),
    };
    let challenge = challenge.lock().unwrap_or_else(|e| e.into_inner()).take();
    Some(Probe {
        code,
        connect_status,
        socks,
        challenge,
        words,
    })
}

/// `CURLINFO_PROXY_ERROR` of a finished transfer (the curl crate has no getter for it).
fn proxy_error(easy: &curl::easy::Easy) -> std::os::raw::c_long {
    const CURLINFO_PROXY_ERROR: curl_sys::CURLINFO = curl_sys::CURLINFO_LONG + 59;
    let mut value: std::os::raw::c_long = 0;
    // SAFETY: `easy.raw()` is a live easy handle for as long as `easy` is borrowed, and
    // CURLINFO_PROXY_ERROR writes one `long` through the pointer it is given.
    let rc = unsafe { curl_sys::curl_easy_getinfo(easy.raw(), CURLINFO_PROXY_ERROR, &mut value) };
    if rc == curl_sys::CURLE_OK {
        value
    } else {
        0
    }
}

/// What an isahc error means: its kind, its words, and whether the request surely never
/// reached the server (then it may be sent again).
pub(crate) fn failure_of(e: &isahc::Error) -> HttpFailure {
    let curl = std::error::Error::source(e).and_then(|s| s.downcast_ref::<curl::Error>());
    match curl {
        Some(c) => classify(
            c.code(),
            c.extra_description().unwrap_or(""),
            &e.to_string(),
        ),
        None => {
            let unsent = matches!(
                e.kind(),
                isahc::error::ErrorKind::InvalidRequest
                    | isahc::error::ErrorKind::ClientInitialization
            );
            HttpFailure::new(HttpErrorKind::Other, e.to_string(), unsent)
        }
    }
}
