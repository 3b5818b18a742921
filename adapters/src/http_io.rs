//! The Streamable HTTP transport's IO: carries out the core's exchanges with an HTTP client
//! (isahc by default, behind the small [`HttpBackend`] trait) and feeds their heads, body chunks,
//! ends and failures to the connection, chunk by chunk, as they arrive.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use futures_lite::AsyncRead;
use mcpwire_core::{Connection, ExchangeId, HttpAction, HttpMethod, HttpRequest, Output};

use crate::client::ConnectionState;
use crate::dispatch::AppWork;
use crate::driver::TransportIo;
use crate::handlers::BoxFuture;
use crate::http_client::HttpClientOptions;

/// A response head and its body, as a stream of bytes.
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body, read as it arrives.
    pub body: Pin<Box<dyn AsyncRead + Send>>,
}

/// What an HTTP exchange shows of itself to
/// [`ConnectOptions::on_http_exchange`](crate::ConnectOptions::on_http_exchange): its method and URL as it goes out, then its
/// response's status, content type and session id, or why it failed. Never a request header,
/// and never the URL's credentials: `user:password@` is removed and the values of query
/// parameters named like secrets (`token`, `key`, `password`…) are replaced with `***`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpExchangeNote {
    /// A request goes out.
    Request {
        /// `GET`, `POST` or `DELETE`.
        method: &'static str,
        /// The URL, without credentials.
        url: String,
        /// The session it belongs to (its `Mcp-Session-Id`), if any.
        session: Option<String>,
    },
    /// Its response head came.
    Response {
        /// The request's method.
        method: &'static str,
        /// The request's URL, without credentials.
        url: String,
        /// The status code.
        status: u16,
        /// The response's `Content-Type`, if any.
        content_type: Option<String>,
        /// The session the response names (its `Mcp-Session-Id`), if any.
        session: Option<String>,
    },
    /// It ended without a response head.
    Failed {
        /// The request's method.
        method: &'static str,
        /// The request's URL, without credentials.
        url: String,
        /// Why.
        message: String,
    },
}

/// Sees each HTTP exchange start and get its response head (see [`HttpExchangeNote`]).
pub type HttpExchangeObserver = Arc<dyn Fn(&HttpExchangeNote) + Send + Sync>;

/// `url` without credentials: no `user:password@`, and the values of query parameters named
/// like secrets replaced with `***`.
pub(crate) fn redact_url(url: &str) -> String {
    let (scheme, rest) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => ("", url),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let (before_fragment, fragment) = tail.split_at(tail.find('#').unwrap_or(tail.len()));
    let Some((path, query)) = before_fragment.split_once('?') else {
        return format!("{scheme}{host}{tail}");
    };
    let query: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if secret_name(name) => format!("{name}=***"),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{scheme}{host}{path}?{}{fragment}", query.join("&"))
}

/// Whether a query parameter's name suggests its value is a secret.
fn secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    const PARTS: [&str; 7] = [
        "token",
        "secret",
        "passw",
        "auth",
        "credential",
        "signature",
        "key",
    ];
    PARTS.iter().any(|p| name.contains(p)) || matches!(name.as_str(), "sig" | "pwd" | "code")
}

/// The value of header `name` (case-insensitive).
fn header_value(headers: &[(String, String)], name: &str) -> Option<String> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
}

/// Why an exchange gave no response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpFailure {
    /// What went wrong, in words.
    pub message: String,
    /// Whether the request surely never reached the server: no connection could be made and no
    /// byte of it was sent (a refused connection, a name that does not resolve, a failed TLS
    /// handshake). It is then sent once more. When `false` the server may have received it and
    /// acted on it, so it is never sent again behind the caller's back (at most once).
    pub unsent: bool,
}

impl HttpFailure {
    /// A failure after which the request may have reached the server.
    pub fn maybe_sent(message: impl Into<String>) -> Self {
        HttpFailure {
            message: message.into(),
            unsent: false,
        }
    }
}

/// The HTTP client the driver uses: send one request, get its response head and a body stream.
/// Dropping the future or the body aborts the exchange. It must never send a request twice on
/// its own (at most once: the core decides what is repeated).
pub trait HttpBackend: Send + Sync + 'static {
    /// Starts `request`.
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, HttpFailure>>;
}

/// The default backend: isahc (libcurl), with keep-alive connection reuse and no timeouts of
/// its own (deadlines are the core's).
pub struct IsahcBackend {
    client: isahc::HttpClient,
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
        Ok(IsahcBackend {
            client: options.build()?,
        })
    }
}

impl HttpBackend for IsahcBackend {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
        let client = self.client.clone();
        Box::pin(async move {
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
            let req = builder.body(body).map_err(|e| HttpFailure {
                message: e.to_string(),
                unsent: true,
            })?;
            let resp = client.send_async(req).await.map_err(|e| failure_of(&e))?;
            let status = resp.status().as_u16();
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
            })
        })
    }
}

/// What an isahc error means for the request: whether it surely never reached the server.
fn failure_of(e: &isahc::Error) -> HttpFailure {
    use isahc::error::ErrorKind as K;
    let unsent = matches!(
        e.kind(),
        K::ConnectionFailed
            | K::NameResolution
            | K::BadClientCertificate
            | K::BadServerCertificate
            | K::InvalidTlsConfiguration
            | K::TlsEngine
            | K::ClientInitialization
            | K::InvalidRequest
    );
    // libcurl's own words say more than isahc's "unknown error".
    let detail = std::error::Error::source(e).map(|s| s.to_string());
    let message = match detail {
        // libcurl wanted to send the request again on a new connection and could not (the body
        // cannot be rewound, on purpose): the first connection closed before any answer.
        Some(d) if d.contains("rewinding") => {
            "the connection closed after the request, before any response".to_owned()
        }
        Some(d) if !e.to_string().contains(&d) => format!("{e} ({d})"),
        _ => e.to_string(),
    };
    HttpFailure { message, unsent }
}

/// A body read error in words, with its cause (isahc alone says "unknown error").
fn io_failure(e: &std::io::Error) -> String {
    match e.get_ref().and_then(|inner| inner.source()) {
        Some(cause) => format!("the body was cut short: {e} ({cause})"),
        None => format!("the body was cut short: {e}"),
    }
}

enum Exchange {
    Sending(BoxFuture<Result<HttpResponse, HttpFailure>>),
    Reading(Pin<Box<dyn AsyncRead + Send>>),
}

/// Reads per exchange per step before moving on to the others.
const READS_PER_STEP: usize = 16;

/// What the observer sees of a response head.
struct Head {
    status: u16,
    content_type: Option<String>,
    session: Option<String>,
}

/// The exchanges in flight.
pub(crate) struct HttpIo {
    backend: Arc<dyn HttpBackend>,
    exchanges: HashMap<ExchangeId, Exchange>,
    read_buf: Box<[u8]>,
    observer: Option<HttpExchangeObserver>,
    /// With an observer: each exchange's method and redacted URL, until its head or failure.
    started: HashMap<ExchangeId, (&'static str, String)>,
}

impl HttpIo {
    pub(crate) fn new(
        backend: Arc<dyn HttpBackend>,
        observer: Option<HttpExchangeObserver>,
    ) -> Self {
        HttpIo {
            backend,
            exchanges: HashMap::new(),
            read_buf: vec![0; 64 * 1024].into_boxed_slice(),
            observer,
            started: HashMap::new(),
        }
    }

    /// Tells the observer, if any, how exchange `id` went: its head, or a failure.
    fn observe_end(&mut self, id: ExchangeId, head: Result<Head, String>) {
        let (Some(observer), Some((method, url))) = (&self.observer, self.started.remove(&id))
        else {
            return;
        };
        observer(&match head {
            Ok(Head {
                status,
                content_type,
                session,
            }) => HttpExchangeNote::Response {
                method,
                url,
                status,
                content_type,
                session,
            },
            Err(message) => HttpExchangeNote::Failed {
                method,
                url,
                message,
            },
        });
    }
}

impl TransportIo for HttpIo {
    fn read(
        &mut self,
        cx: &mut Context<'_>,
        conn: &mut Connection,
        now: Instant,
        _work: &mut AppWork,
    ) -> bool {
        let mut progressed = false;
        let mut ended: Vec<(ExchangeId, Result<Head, String>)> = Vec::new();
        let observed = self.observer.is_some();
        self.exchanges.retain(|id, ex| {
            if let Exchange::Sending(fut) = ex {
                match fut.as_mut().poll(cx) {
                    Poll::Ready(Ok(resp)) => {
                        progressed = true;
                        conn.handle_head(now, *id, resp.status, &resp.headers);
                        if observed {
                            let head = Head {
                                status: resp.status,
                                content_type: header_value(&resp.headers, "content-type"),
                                session: header_value(&resp.headers, "mcp-session-id"),
                            };
                            ended.push((*id, Ok(head)));
                        }
                        *ex = Exchange::Reading(resp.body);
                    }
                    Poll::Ready(Err(e)) if e.unsent => {
                        progressed = true;
                        conn.handle_unsent(now, *id, &e.message);
                        if observed {
                            ended.push((*id, Err(e.message)));
                        }
                        return false;
                    }
                    Poll::Ready(Err(e)) => {
                        progressed = true;
                        conn.handle_failure(now, *id, &e.message);
                        if observed {
                            ended.push((*id, Err(e.message)));
                        }
                        return false;
                    }
                    Poll::Pending => return true,
                }
            }
            let Exchange::Reading(body) = ex else {
                return true;
            };
            for _ in 0..READS_PER_STEP {
                match body.as_mut().poll_read(cx, &mut self.read_buf) {
                    Poll::Ready(Ok(0)) => {
                        progressed = true;
                        conn.handle_end(now, *id);
                        return false;
                    }
                    Poll::Ready(Ok(n)) => {
                        progressed = true;
                        conn.handle_body(now, *id, &self.read_buf[..n]);
                    }
                    Poll::Ready(Err(e)) => {
                        progressed = true;
                        conn.handle_failure(now, *id, &io_failure(&e));
                        return false;
                    }
                    Poll::Pending => break,
                }
            }
            true
        });
        for (id, head) in ended {
            self.observe_end(id, head);
        }
        progressed
    }

    fn carry_out(&mut self, _st: &mut ConnectionState, _now: Instant, output: Output) {
        match output {
            Output::Http(HttpAction::Start(request)) => {
                let id = request.exchange;
                if let Some(observer) = &self.observer {
                    let method = request.method.as_str();
                    let url = redact_url(&request.url);
                    observer(&HttpExchangeNote::Request {
                        method,
                        url: url.clone(),
                        session: request.header("mcp-session-id").map(str::to_owned),
                    });
                    self.started.insert(id, (method, url));
                }
                let fut = self.backend.send(request);
                self.exchanges.insert(id, Exchange::Sending(fut));
            }
            // Dropping the future or the body aborts the exchange.
            Output::Http(HttpAction::Abort(id)) => {
                self.exchanges.remove(&id);
                self.started.remove(&id);
            }
            other => debug_assert!(false, "not an HTTP output: {other:?}"),
        }
    }

    fn write(&mut self, _cx: &mut Context<'_>) -> bool {
        false
    }

    fn is_idle(&self) -> bool {
        self.exchanges.is_empty()
    }

    fn finish_reason(&self) -> &'static str {
        "closed by the client"
    }
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn urls_lose_their_credentials() {
        for (url, shown) in [
            ("http://host/mcp", "http://host/mcp"),
            ("https://user:pw@host:8080/mcp", "https://host:8080/mcp"),
            ("http://user@host/mcp?x=1", "http://host/mcp?x=1"),
            (
                "http://h/mcp?api_key=abc&x=1&token=t&Password=p",
                "http://h/mcp?api_key=***&x=1&token=***&Password=***",
            ),
            (
                "http://h/mcp?sig=s&flag#frag?token=x",
                "http://h/mcp?sig=***&flag#frag?token=x",
            ),
            ("http://h/a@b", "http://h/a@b"),
            ("http://u:p@h", "http://h"),
            ("http://u:p@h?access_token=1", "http://h?access_token=***"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
    }
}
