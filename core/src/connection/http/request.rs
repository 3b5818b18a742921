//! What the HTTP transport asks of its driver: requests to make, exchanges to abort.

use crate::tap::{Direction, FrameObserver};

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

/// Why `request` cannot be handed to a backend: a header HTTP cannot carry. Every source of
/// a header is checked where it enters (the configuration, the session id, an event id, a
/// token); this is the last check before a backend, whoever gave the header.
pub(crate) fn unsendable(request: &HttpRequest) -> Option<crate::error::ExchangeFailure> {
    let error = request
        .headers
        .iter()
        .find_map(|(name, value)| crate::header::check(name, value).err())?;
    let message = format!("the request was not sent: {error}");
    Some(crate::error::ExchangeFailure::new(
        crate::error::HttpErrorKind::Header(error),
        message,
    ))
}

pub(crate) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The media type of a `Content-Type` value, lower-cased, without parameters (borrowed when it
/// is in lower case already, as servers write it).
pub(crate) fn media_type(value: &str) -> std::borrow::Cow<'_, str> {
    let media = value.split(';').next().unwrap_or("").trim();
    if media.bytes().any(|b| b.is_ascii_uppercase()) {
        media.to_ascii_lowercase().into()
    } else {
        media.into()
    }
}

/// Shows the observer the message a POST carries, as the POST is handed out.
pub(crate) fn tap_outgoing(observer: Option<&mut (dyn FrameObserver + '_)>, action: &HttpAction) {
    if let (Some(o), HttpAction::Start(r)) = (observer, action) {
        if r.method == HttpMethod::Post {
            o.frame(Direction::Outgoing, &r.body);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{HttpConfig, ServerConfig};
    use crate::connection::http::sse::HttpSse;
    use crate::connection::http::streamable::StreamableHttp;
    use crate::connection::http::{HttpAction, HttpOptions};
    use crate::connection::protocol::{ClientConfig, ClientProtocol, Era};
    use crate::error::HttpErrorKind;
    use crate::test_support::epoch;

    /// An endpoint whose configured header HTTP cannot carry, made without the checks of
    /// `Connection::http`: the last check, as requests are handed out, still holds.
    fn careless() -> HttpConfig {
        let ServerConfig::Http(mut server) = ServerConfig::http("http://127.0.0.1:1/mcp") else {
            unreachable!()
        };
        server.headers.insert("X-Name".into(), "caf\u{e9}".into());
        server
    }

    #[test]
    fn no_request_with_a_header_http_cannot_carry_is_handed_out() {
        let now = epoch();
        let config = ClientConfig {
            era: Era::Handshake,
            ..ClientConfig::default()
        };
        let mut protocol = ClientProtocol::new(config);
        protocol.set_over_http();
        protocol.start(now).unwrap();
        let mut client = StreamableHttp::new(&careless(), HttpOptions::default());
        client.after_input(&mut protocol, now);
        while let Some(action) = client.poll_action() {
            assert!(!matches!(action, HttpAction::Start(_)), "{action:?}");
        }
        assert!(protocol.is_closed());
        let mut events = Vec::new();
        while let Some(e) = protocol.poll_event() {
            events.push(format!("{e:?}"));
        }
        assert!(
            events
                .iter()
                .any(|e| e.contains("X-Name") && e.contains("U+00E9")),
            "{events:?}"
        );
    }

    #[test]
    fn the_http_sse_transport_hands_out_none_either() {
        let now = epoch();
        let config = ClientConfig {
            era: Era::Handshake,
            ..ClientConfig::default()
        };
        let mut protocol = ClientProtocol::new(config);
        protocol.set_over_http();
        let wait = std::time::Duration::from_secs(30);
        let mut client = HttpSse::new(now, &careless(), HttpOptions::default(), wait);
        client.after_input(&mut protocol, now);
        while let Some(action) = client.poll_action() {
            assert!(!matches!(action, HttpAction::Start(_)), "{action:?}");
        }
        assert!(super::unsendable(&super::HttpRequest {
            exchange: 0,
            method: super::HttpMethod::Get,
            url: String::new(),
            headers: vec![("X".into(), "\r".into())],
            body: Vec::new(),
        })
        .is_some_and(|f| matches!(f.kind, HttpErrorKind::Header(_))));
    }
}
