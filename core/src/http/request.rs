//! What the HTTP transport asks of its driver: requests to make, exchanges to abort.

/// One HTTP exchange's id, chosen by the machine.
pub type ExchangeId = u64;

/// The HTTP methods the transport uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpMethod {
    /// `GET`: the standalone stream, or a resumed stream.
    Get,
    /// `POST`: every message.
    Post,
    /// `DELETE`: ending the session.
    Delete,
}

impl HttpMethod {
    /// The method's name.
    pub fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Post => "POST",
            HttpMethod::Delete => "DELETE",
        }
    }
}

/// An HTTP request for the driver to make.
///
/// Its `Debug` hides the values of `Authorization`, `Proxy-Authorization` and `Cookie`.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// The exchange this request starts; report its response under this id.
    pub exchange: ExchangeId,
    /// The method.
    pub method: HttpMethod,
    /// The URL.
    pub url: String,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body (empty for GET and DELETE).
    pub body: Vec<u8>,
}

impl std::fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| {
                let secret = ["authorization", "proxy-authorization", "cookie"]
                    .iter()
                    .any(|s| k.eq_ignore_ascii_case(s));
                (k.as_str(), if secret { "***" } else { v.as_str() })
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("exchange", &self.exchange)
            .field("method", &self.method)
            .field("url", &crate::error::redact_url(&self.url))
            .field("headers", &headers)
            .field("body", &String::from_utf8_lossy(&self.body))
            .finish()
    }
}

impl HttpRequest {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

/// What the driver is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpAction {
    /// Start this exchange.
    Start(HttpRequest),
    /// Stop this exchange: close its connection or stream, report nothing more for it.
    Abort(ExchangeId),
}

pub(crate) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The media type of a `Content-Type` value, lower-cased, without parameters.
pub(crate) fn media_type(value: &str) -> String {
    value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}
