//! The HTTP client behind the Streamable HTTP transport, as the driver's IO sees it: the small
//! [`HttpBackend`] trait (send one request, get its response head and a body stream), the
//! response it gives and the failure it reports, and how a body's read error says what it
//! means ([`BodyFailure`]). A leaf: the backends and the OAuth wrappers build on it, and it
//! imports nothing of the rest of the crate but the boxed future.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;

use futures_lite::AsyncRead;
use mcpwire_core::error::{ExchangeFailure, Hint, HttpErrorKind};
use mcpwire_core::header::HeaderError;
use mcpwire_core::HttpRequest;

use crate::future::BoxFuture;

/// A response head and its body, as a stream of bytes.
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body, read as it arrives.
    pub body: Pin<Box<dyn AsyncRead + Send>>,
    /// The HTTP version it came over, when the backend knows.
    pub version: Option<HttpVersion>,
    /// The local address of the connection it came on, when the backend knows (a reused
    /// connection shows the same address again).
    pub local_addr: Option<SocketAddr>,
}

impl HttpResponse {
    /// A response with no version or connection details.
    pub fn new(
        status: u16,
        headers: Vec<(String, String)>,
        body: Pin<Box<dyn AsyncRead + Send>>,
    ) -> Self {
        HttpResponse {
            status,
            headers,
            body,
            version: None,
            local_addr: None,
        }
    }
}

/// The HTTP version a response came over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpVersion {
    /// HTTP/1.0 or HTTP/1.1.
    Http1,
    /// HTTP/2.
    Http2,
    /// HTTP/3.
    Http3,
}

/// Why an exchange gave no response head, or its body ended early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpFailure {
    /// What kind of failure.
    pub kind: HttpErrorKind,
    /// What went wrong, in words.
    pub message: String,
    /// Whether the request surely never reached the server: no connection could be made and no
    /// byte of it was sent (a refused connection, a name that does not resolve, a failed TLS
    /// handshake). It is then sent once more. When `false` the server may have received it and
    /// acted on it, so it is never sent again behind the caller's back (at most once).
    pub unsent: bool,
    /// What a person may try, when the backend found it out (see
    /// [`HttpError::hint`](mcpwire_core::error::HttpError::hint)).
    pub hint: Option<Hint>,
}

impl HttpFailure {
    /// A failure of this kind.
    pub fn new(kind: HttpErrorKind, message: impl Into<String>, unsent: bool) -> Self {
        HttpFailure {
            kind,
            message: message.into(),
            unsent,
            hint: None,
        }
    }

    /// The failure with `hint`.
    pub fn with_hint(mut self, hint: Hint) -> Self {
        self.hint = Some(hint);
        self
    }

    /// A failure after which the request may have reached the server.
    pub fn maybe_sent(message: impl Into<String>) -> Self {
        Self::new(HttpErrorKind::Other, message, false)
    }

    /// The failure as the connection takes it.
    pub(crate) fn exchange_failure(&self) -> ExchangeFailure {
        ExchangeFailure {
            hint: self.hint.clone(),
            ..ExchangeFailure::new(self.kind.clone(), self.message.clone())
        }
    }

    /// What the read error `e` of a response's body means: the failure its backend put in it
    /// ([`BodyFailure`]), else the body cut short, in `e`'s words and its cause's.
    pub(crate) fn of_body_error(e: &io::Error) -> HttpFailure {
        let inner = e.get_ref();
        if let Some(BodyFailure(failure)) = inner.and_then(|i| i.downcast_ref::<BodyFailure>()) {
            return failure.clone();
        }
        let message = match inner.and_then(|i| i.source()) {
            Some(cause) => format!("the body was cut short: {e} ({cause})"),
            None => format!("the body was cut short: {e}"),
        };
        HttpFailure::new(HttpErrorKind::BodyCutShort, message, false)
    }

    /// A request refused for a header HTTP cannot carry: it never left.
    pub(crate) fn bad_header(error: HeaderError) -> Self {
        let message = format!("the request was not sent: {error}");
        Self::new(HttpErrorKind::Header(error), message, true)
    }
}

/// A body's read error that says what it means: a backend that knows its failures better than
/// an [`io::Error`] tells them (libcurl's codes) gives its body's errors with this inside, and
/// the transport takes the failure as it is ([`HttpFailure::of_body_error`]).
#[derive(Debug)]
pub(crate) struct BodyFailure(pub(crate) HttpFailure);

impl BodyFailure {
    /// The read error that carries `failure`, of `kind` (libcurl's bodies; the tests).
    #[cfg_attr(not(feature = "libcurl"), allow(dead_code))]
    pub(crate) fn into_io(self, kind: io::ErrorKind) -> io::Error {
        io::Error::new(kind, self)
    }
}

impl std::fmt::Display for BodyFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for BodyFailure {}

/// Checks each header of `request` by the rules every request header obeys
/// ([`mcpwire_core::header::check_configured`]): a backend never hands a client library a
/// header it would fail on (libcurl's wrapper panics on a value that is not UTF-8) or that
/// would change the request's framing (a CR or LF in a value, a `Content-Length` or
/// `Transfer-Encoding` of its own, a `Host`: mcpwire's requests never carry these, the client
/// library writes them). The first bad one is the failure, naming it.
pub(crate) fn check_headers(request: &HttpRequest) -> Result<(), HttpFailure> {
    for (name, value) in &request.headers {
        mcpwire_core::header::check_configured(name, value).map_err(HttpFailure::bad_header)?;
    }
    Ok(())
}

/// The HTTP client the driver uses: send one request, get its response head and a body stream.
/// Dropping the future or the body aborts the exchange. It must never send a request twice on
/// its own (at most once: the core decides what is repeated).
pub trait HttpBackend: Send + Sync + 'static {
    /// Starts `request`.
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, HttpFailure>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_error_means_what_its_backend_put_in_it_or_a_body_cut_short() {
        let failure = HttpFailure::new(HttpErrorKind::StaleConnection, "its words", true);
        let e = BodyFailure(failure.clone()).into_io(io::ErrorKind::UnexpectedEof);
        assert_eq!(HttpFailure::of_body_error(&e), failure);
        assert_eq!(e.to_string(), "its words");
        /// An error that says little of itself and names its cause, as isahc's do.
        #[derive(Debug)]
        struct Unknown(io::Error);
        impl std::fmt::Display for Unknown {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("unknown error")
            }
        }
        impl std::error::Error for Unknown {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        for (e, words) in [
            (
                io::Error::new(io::ErrorKind::UnexpectedEof, "gone"),
                "the body was cut short: gone",
            ),
            (
                io::Error::other(Unknown(io::Error::other("the cause"))),
                "the body was cut short: unknown error (the cause)",
            ),
        ] {
            let failure = HttpFailure::of_body_error(&e);
            assert_eq!(failure.kind, HttpErrorKind::BodyCutShort, "{words}");
            assert_eq!((failure.message.as_str(), failure.unsent), (words, false));
        }
    }
}
