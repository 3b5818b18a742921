//! What libcurl's failures mean: its codes and its own words read as an [`HttpFailure`], for a
//! request the isahc backend sent ([`failure_of`]) and for a body it was reading when the
//! connection failed ([`body_failure`]).

use mcpwire_core::error::{HttpErrorKind, ProxyFailure, TlsFailure};

use crate::http::backend::HttpFailure;

/// libcurl's code for a failed proxy handshake (SOCKS), not named in curl-sys.
pub(super) const CURLE_PROXY: curl_sys::CURLcode = 97;

/// libcurl's code for something over its limits (a response head too large), not named in
/// curl-sys.
const CURLE_TOO_LARGE: curl_sys::CURLcode = 100;

/// The kind of a libcurl failure from its code and its own words (`detail`, the error
/// buffer), with a message that says what happened and, where one can, what to do.
pub(super) fn classify(code: curl_sys::CURLcode, detail: &str, fallback: &str) -> HttpFailure {
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
        curl_sys::CURLE_COULDNT_RESOLVE_PROXY => (
            K::Proxy(ProxyFailure::Unreachable),
            said("the proxy's host name does not resolve"),
            true,
        ),
        // A SOCKS proxy's handshake failed: it refused the connection, or wants credentials
        // (the backend asks which).
        CURLE_PROXY => (
            K::Proxy(ProxyFailure::Other),
            said("the proxy's handshake failed"),
            true,
        ),
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
        // body cannot be rewound, on purpose). It does so only for a reused connection from
        // which no byte of a response was counted (`Curl_retry_request`: a partial status line
        // is not counted): the stale connection of the native client, told as one, so that the
        // start's probe and `initialize` go once more as they do there.
        curl_sys::CURLE_SEND_FAIL_REWIND => (
            K::StaleConnection,
            said("the request went on a reused connection and it closed before any response"),
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
        curl_sys::CURLE_PARTIAL_FILE => (
            K::BodyCutShort,
            said("the body was cut short: the connection closed before the end of the body"),
            false,
        ),
        // A response head over libcurl's limits (a header line over 100 KiB, 300 KiB or 5000
        // lines in all): not read, as mcpwire's own client refuses one over its 64 KiB.
        CURLE_TOO_LARGE => (
            K::HeadCutShort,
            said("the response head is over libcurl's limit (100 KiB a header line, 300 KiB in all)"),
            false,
        ),
        curl_sys::CURLE_HTTP2 | curl_sys::CURLE_HTTP2_STREAM => {
            (K::HeadCutShort, said("the HTTP/2 stream failed"), false)
        }
        curl_sys::CURLE_URL_MALFORMAT => (K::Other, said("the URL is not valid"), true),
        _ => (K::Other, said(fallback), false),
    };
    // A failure through a proxy is named the proxy's by the backend, which knows the proxy.
    HttpFailure::new(kind, message, unsent)
}

/// A body read error of libcurl's in words, with its cause (isahc alone says "unknown error"):
/// in the words mcpwire's own client uses for a body cut short.
pub(super) fn body_failure(e: &std::io::Error) -> HttpFailure {
    let cause = e.get_ref().and_then(|inner| inner.source());
    let curl = cause.and_then(|c| c.downcast_ref::<curl::Error>());
    if let Some(c) = curl {
        let detail = c.extra_description().unwrap_or("");
        let mut failure = classify(c.code(), detail, &e.to_string());
        // A connection that ended under the body (over TLS without the server's TLS close,
        // libcurl's failed read) is the body cut short, not a head: said as such.
        let ended = match c.code() {
            curl_sys::CURLE_GOT_NOTHING => Some("closed"),
            curl_sys::CURLE_RECV_ERROR if detail.contains("closed") => Some("closed"),
            curl_sys::CURLE_RECV_ERROR | curl_sys::CURLE_SEND_FAIL_REWIND => Some("failed"),
            _ => None,
        };
        if let Some(how) = ended {
            failure.message =
                format!("the body was cut short: the connection {how} before the end of the body");
            if !detail.is_empty() {
                failure.message.push_str(&format!(" ({detail})"));
            }
        } else if failure.kind != HttpErrorKind::BodyCutShort {
            failure.message = format!("the body was cut short: {}", failure.message);
        }
        failure.kind = HttpErrorKind::BodyCutShort;
        return failure;
    }
    HttpFailure::of_body_error(e)
}

/// What an isahc error means: its kind, its words, and whether the request surely never
/// reached the server (then it may be sent again).
pub(super) fn failure_of(e: &isahc::Error) -> HttpFailure {
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
