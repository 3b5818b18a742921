//! The HTTP client behind the Streamable HTTP transport, as the driver's IO sees it: the small
//! [`HttpBackend`] trait (send one request, get its response head and a body stream), the
//! response it gives and the failure it reports. A leaf: the backends and the OAuth wrappers
//! build on it, and it imports nothing of the rest of the crate but the boxed future.

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

    /// A request refused for a header HTTP cannot carry: it never left.
    pub(crate) fn bad_header(error: HeaderError) -> Self {
        let message = format!("the request was not sent: {error}");
        Self::new(HttpErrorKind::Header(error), message, true)
    }
}

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
