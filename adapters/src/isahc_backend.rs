//! The default HTTP backend: isahc over libcurl, and what its failures mean, in words a
//! person can act on and as an [`HttpErrorKind`].

use std::pin::Pin;
use std::sync::Arc;

use futures_lite::AsyncRead;
use isahc::ResponseExt;
use mcpwire_core::error::{HttpErrorKind, TlsFailure};
use mcpwire_core::{HttpMethod, HttpRequest};

use crate::handlers::BoxFuture;
use crate::http_client::{HttpClientOptions, ProxySetting, TlsOptions};
use crate::http_io::{check_headers, HttpBackend, HttpFailure, HttpResponse, HttpVersion};
use crate::tls_diagnosis;

/// The default backend: isahc (libcurl), with keep-alive connection reuse and no timeouts of
/// its own (deadlines are the core's).
pub struct IsahcBackend {
    client: isahc::HttpClient,
    /// What a TLS failure's diagnosis needs: the trust, the client certificate.
    tls: Arc<TlsDiagnosis>,
}

/// What the second handshake that explains a TLS failure trusts and presents.
struct TlsDiagnosis {
    options: TlsOptions,
    trust_pem: Option<Vec<u8>>,
    /// The proxy setting: through a proxy the second handshake (made directly) would not see
    /// the same server, and a failed connect is the proxy's.
    proxy: ProxySetting,
}

impl IsahcBackend {
    /// A backend with the default [`HttpClientOptions`].
    pub fn new() -> Result<Self, String> {
        Self::with_options(&HttpClientOptions::default())
    }

    /// A backend with these options (TLS, proxy, versions, pool limits). Fails when an option
    /// cannot be used (a proxy URL that does not parse, a CA or client certificate file that
    /// cannot be read).
    pub fn with_options(options: &HttpClientOptions) -> Result<Self, String> {
        let trust_pem = options.tls.trust_pem()?;
        Ok(IsahcBackend {
            client: options.build(trust_pem.as_deref())?,
            tls: Arc::new(TlsDiagnosis {
                options: options.tls.clone(),
                trust_pem,
                proxy: options.proxy.clone(),
            }),
        })
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
        let client = self.client.clone();
        let tls = self.tls.clone();
        Box::pin(async move {
            let url = request.url.clone();
            let mut builder = isahc::Request::builder()
                .method(request.method.as_str())
                .uri(&request.url);
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
                Err(e) => return Err(explained(failure_of(&e), &url, &tls).await),
            };
            let status = resp.status().as_u16();
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

/// A TLS failure explained by a second handshake, when one can be made.
///
/// A connection over TLS that fails before the response head may be a server that refused the
/// client certificate: under TLS 1.3 its verdict comes after the client's side of the
/// handshake, so libcurl sees only a failed read. The second handshake tells; when it was that,
/// the request was never read.
async fn explained(mut failure: HttpFailure, url: &str, tls: &Arc<TlsDiagnosis>) -> HttpFailure {
    let cut_over_tls = failure.kind == HttpErrorKind::HeadCutShort && url.starts_with("https://");
    let unexplained = matches!(failure.kind, HttpErrorKind::Tls(TlsFailure::Other));
    if let Some(proxy) = tls.proxy.proxy_for(url) {
        if failure.kind == HttpErrorKind::ConnectionRefused {
            failure.kind = HttpErrorKind::Proxy;
            failure.message = format!(
                "could not connect through the proxy {proxy}: it cannot be reached, or it \
                 refused the tunnel (a 407 asks for credentials: put them in the proxy URL)"
            );
        }
        return failure;
    }
    if !(unexplained || cut_over_tls) {
        return failure;
    }
    let (url, tls) = (url.to_owned(), tls.clone());
    let diagnosis = smol::unblock(move || {
        tls_diagnosis::diagnose(&url, &tls.options, tls.trust_pem.as_deref())
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

/// The kind of a libcurl failure from its code and its own words (`detail`, the error
/// buffer), with a message that says what happened and, where one can, what to do.
pub(crate) fn classify(code: curl_sys::CURLcode, detail: &str, fallback: &str) -> HttpFailure {
    use HttpErrorKind as K;
    // libcurl's own words, when isahc passed them on (it does not for finished transfers).
    let said = |text: &str| {
        if detail.is_empty() {
            text.to_owned()
        } else {
            format!("{text} ({detail})")
        }
    };
    let (kind, message, unsent) = match code {
        curl_sys::CURLE_COULDNT_CONNECT => (
            K::ConnectionRefused,
            said("the connection was refused or the host cannot be reached: is the server running, on this port?"),
            true,
        ),
        curl_sys::CURLE_COULDNT_RESOLVE_HOST => {
            (K::NameResolution, said("the host name does not resolve"), true)
        }
        curl_sys::CURLE_COULDNT_RESOLVE_PROXY => {
            (K::Proxy, said("the proxy's host name does not resolve"), true)
        }
        curl_sys::CURLE_OPERATION_TIMEDOUT => (
            K::ConnectTimeout,
            said("no connection within the connect timeout"),
            true,
        ),
        curl_sys::CURLE_PEER_FAILED_VERIFICATION
        | curl_sys::CURLE_SSL_CONNECT_ERROR
        | curl_sys::CURLE_SSL_CERTPROBLEM
        | curl_sys::CURLE_SSL_CACERT_BADFILE
        | curl_sys::CURLE_SSL_CIPHER
        | curl_sys::CURLE_SSL_ISSUER_ERROR => {
            // libcurl's code says only that the handshake failed (its words, which would say
            // why, do not come through isahc): the second handshake tells the reason.
            let reason = match code {
                curl_sys::CURLE_SSL_CERTPROBLEM => TlsFailure::BadClientCertificate,
                _ => TlsFailure::Other,
            };
            (K::Tls(reason.clone()), said(&reason.to_string()), true)
        }
        curl_sys::CURLE_GOT_NOTHING => (
            K::HeadCutShort,
            said("the server closed the connection without a response"),
            false,
        ),
        // 8 is CURLE_WEIRD_SERVER_REPLY (named for FTP in curl-sys).
        curl_sys::CURLE_FTP_WEIRD_SERVER_REPLY | curl_sys::CURLE_UNSUPPORTED_PROTOCOL => (
            K::HeadCutShort,
            said("the response head is not HTTP"),
            false,
        ),
        // libcurl wanted to send the request again on a new connection and could not (the
        // body cannot be rewound, on purpose): the first connection closed before any answer.
        curl_sys::CURLE_SEND_FAIL_REWIND => (
            K::HeadCutShort,
            said("the connection closed after the request, before any response"),
            false,
        ),
        curl_sys::CURLE_RECV_ERROR | curl_sys::CURLE_SEND_ERROR => (
            K::HeadCutShort,
            said("the connection failed before the response head"),
            false,
        ),
        // isahc refused a line of the response head (or trailers): a name that is not a token,
        // a value with a control character. libcurl reports it as a failed write.
        curl_sys::CURLE_WRITE_ERROR => (
            K::HeadCutShort,
            said("a header line of the response cannot be read (a name that is not a token, or a control character in a value)"),
            false,
        ),
        curl_sys::CURLE_PARTIAL_FILE => (K::BodyCutShort, said("the body was cut short"), false),
        curl_sys::CURLE_HTTP2 | curl_sys::CURLE_HTTP2_STREAM => {
            (K::HeadCutShort, said("the HTTP/2 stream failed"), false)
        }
        curl_sys::CURLE_URL_MALFORMAT => (K::Other, said("the URL is not valid"), true),
        _ => (K::Other, said(fallback), false),
    };
    // A failure through a proxy is named the proxy's by the backend, which knows the proxy.
    HttpFailure::new(kind, message, unsent)
}

/// A body read error in words, with its cause (isahc alone says "unknown error").
pub(crate) fn io_failure(e: &std::io::Error) -> HttpFailure {
    let cause = e.get_ref().and_then(|inner| inner.source());
    let curl = cause.and_then(|c| c.downcast_ref::<curl::Error>());
    if let Some(c) = curl {
        let mut failure = classify(
            c.code(),
            c.extra_description().unwrap_or(""),
            &e.to_string(),
        );
        if failure.kind != HttpErrorKind::BodyCutShort {
            failure.message = format!("the body was cut short: {}", failure.message);
            failure.kind = HttpErrorKind::BodyCutShort;
        }
        return failure;
    }
    let message = match cause {
        Some(cause) => format!("the body was cut short: {e} ({cause})"),
        None => format!("the body was cut short: {e}"),
    };
    HttpFailure::new(HttpErrorKind::BodyCutShort, message, false)
}
