//! What libcurl's failures mean where its code alone does not say: a TLS failure explained by a
//! second handshake ([`super::handshake`]), a plain `http://` request cut short by what the port
//! speaks, and a failure through a proxy by a second connection through it, made by libcurl
//! alone with no request in it ([`probe`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire_core::error::{HttpErrorKind, ProxyFailure, TlsFailure};

use super::errors::CURLE_PROXY;
use super::handshake;
use crate::http::backend::HttpFailure;
use crate::http::options::{HttpClientOptions, HttpVersionChoice, ProxyRoute};
use crate::http::proxy_words::{
    credentials_wanted, tunnel_refused, unreachable_proxy, whence, where_to_put,
};
use crate::http::tls_diagnosis;
use crate::http::url_parts::UrlParts;
use crate::runtime::Runtime;

/// The options, and the PEM bundle trusted: what building a client and explaining a failure
/// need (a second TLS handshake trusts and presents what libcurl did; a second connection
/// through the proxy goes as libcurl's did).
pub(super) struct Diagnosis {
    pub(super) options: HttpClientOptions,
    pub(super) trust_pem: Option<Vec<u8>>,
    /// The servers (`scheme://host:port`, as their URLs write it) that have answered in HTTP.
    pub(super) answered: tls_diagnosis::Answered,
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
pub(super) async fn explained(
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
    let parts = UrlParts::read(url);
    if parts.is_some_and(|p| p.is_http() && !p.is_https()) {
        return plain_port(failure, url, diagnosis).await;
    }
    let https = parts.is_some_and(|p| p.is_https());
    let cut_over_tls = failure.kind == HttpErrorKind::HeadCutShort && https;
    let unexplained = matches!(failure.kind, HttpErrorKind::Tls(TlsFailure::Other));
    if !(unexplained || cut_over_tls) {
        return failure;
    }
    let (url, d) = (url.to_owned(), diagnosis.clone());
    let diagnosis =
        smol::unblock(move || handshake::diagnose(&url, &d.options.tls, d.trust_pem.as_deref()))
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

/// The key of the server `url` names among those that answered: its scheme and authority as
/// written.
pub(super) fn origin_of(url: &str) -> &str {
    UrlParts::read(url).map_or(url, |p| p.origin)
}

/// A plain `http://` request cut short before any response head, at a server that has not
/// answered in HTTP yet: see [`tls_diagnosis::port_hint`].
async fn plain_port(failure: HttpFailure, url: &str, diagnosis: &Arc<Diagnosis>) -> HttpFailure {
    if failure.kind != HttpErrorKind::HeadCutShort || diagnosis.answered.has(origin_of(url)) {
        return failure;
    }
    let prior = diagnosis.options.version == HttpVersionChoice::Http2PriorKnowledge;
    // libcurl's backend runs on smol's side (its own agent thread; looks on smol's blocking
    // threads).
    let runtime = Runtime::Smol { spawn: false };
    let timeout = diagnosis.options.connect_timeout;
    tls_diagnosis::port_hint(&runtime, failure, url, timeout, prior).await
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
    let target = UrlParts::read(url)
        .and_then(|p| p.host_and_port())
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
    let target = UrlParts::read(url)?.host_and_port()?;
    let mut easy = curl::easy::Easy::new();
    // An `http://` URL with a tunnel asked for: the CONNECT alone, no TLS after it.
    easy.url(&format!("http://{target}/")).ok()?;
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
