//! The Streamable HTTP transport's IO: carries out the core's exchanges with an HTTP client
//! (behind the small [`HttpBackend`] trait: the router's by default, see `http::router`) and
//! feeds their heads, body chunks, ends and failures to the connection, chunk by chunk, as they
//! arrive. It knows no backend: a body's read error says what it means itself
//! ([`HttpFailure::of_body_error`]).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use futures_lite::AsyncRead;
use mcpwire_core::error::redact_url;
use mcpwire_core::{Connection, ExchangeId, HttpAction, HttpInput, HttpRequest, Output};

use super::backend::{HttpBackend, HttpFailure, HttpResponse, HttpVersion};
use super::counters::{Admission, CounterCells};
use super::options::{HttpClientOptions, HttpVersionChoice};
use super::url_parts::UrlParts;
use crate::future::BoxFuture;
use crate::transport::{wrong_transport, TransportIo};

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
        /// The HTTP version, when the backend knows.
        version: Option<HttpVersion>,
        /// Whether it came on a connection an earlier exchange had used.
        reused_connection: bool,
    },
    /// A request waits: as many exchanges are in flight as the connection limit allows
    /// ([`HttpClientOptions::max_connections_per_host`]); it goes when one ends.
    Queued {
        /// The request's method.
        method: &'static str,
        /// The URL, without credentials.
        url: String,
        /// How many wait, this one included.
        waiting: usize,
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

/// The value of header `name` (case-insensitive).
fn header_value(headers: &[(String, String)], name: &str) -> Option<String> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
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
    version: Option<HttpVersion>,
    reused_connection: bool,
}

/// The exchanges in flight, and those waiting for room under the connection limit.
pub(crate) struct HttpIo {
    backend: Arc<dyn HttpBackend>,
    exchanges: HashMap<ExchangeId, Exchange>,
    admission: Admission,
    counters: Arc<CounterCells>,
    read_buf: Box<[u8]>,
    observer: Option<HttpExchangeObserver>,
    /// With an observer: each exchange's method and redacted URL, until its head or failure.
    started: HashMap<ExchangeId, (&'static str, String)>,
    /// HTTP/2 was asked for ([`HttpVersionChoice::Http2`]) and no response has said which
    /// version was spoken yet: the first one that came in HTTP/1.1 is told as a diagnostic.
    http2_asked: bool,
    /// Whether the requests go over TLS (read from the first one).
    over_tls: bool,
}

impl HttpIo {
    pub(crate) fn new(
        backend: Arc<dyn HttpBackend>,
        observer: Option<HttpExchangeObserver>,
        options: &HttpClientOptions,
        counters: Arc<CounterCells>,
    ) -> Self {
        HttpIo {
            backend,
            exchanges: HashMap::new(),
            admission: Admission::new(
                counters.clone(),
                options.max_connections_per_host,
                options.streams_per_connection,
            ),
            counters,
            read_buf: vec![0; 64 * 1024].into_boxed_slice(),
            observer,
            started: HashMap::new(),
            http2_asked: options.version == HttpVersionChoice::Http2,
            over_tls: false,
        }
    }

    /// The words for a response that came in HTTP/1.1 when HTTP/2 was asked for.
    fn spoke_http1(over_tls: bool) -> &'static str {
        if over_tls {
            "HTTP/2 was asked for, but the server's TLS did not agree h2 (ALPN): HTTP/1.1 is \
             spoken to it"
        } else {
            "HTTP/2 was asked for, but over plain http:// HTTP/1.1 is spoken (HTTP/2 with prior \
             knowledge, h2c, is a choice of its own)"
        }
    }

    /// Tells the observer, if any, how exchange `id` went: its head, or a failure. Told before
    /// the connection takes the head or the failure, so what the connection sends because of
    /// it (`initialize` after a refused probe) is seen after it.
    fn observe_end(
        observer: Option<&HttpExchangeObserver>,
        started: &mut HashMap<ExchangeId, (&'static str, String)>,
        id: ExchangeId,
        head: Result<Head, String>,
    ) {
        let (Some(observer), Some((method, url))) = (observer, started.remove(&id)) else {
            return;
        };
        observer(&match head {
            Ok(Head {
                status,
                content_type,
                session,
                version,
                reused_connection,
            }) => HttpExchangeNote::Response {
                method,
                url,
                status,
                content_type,
                session,
                version,
                reused_connection,
            },
            Err(message) => HttpExchangeNote::Failed {
                method,
                url,
                message,
            },
        });
    }

    /// Hands `request` to the backend.
    fn send(&mut self, request: HttpRequest) {
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

    /// Sends what waited, as far as there is room.
    fn admit_waiting(&mut self) {
        while let Some(request) = self.admission.next() {
            self.send(request);
        }
    }
}

impl TransportIo for HttpIo {
    fn read(
        &mut self,
        cx: &mut Context<'_>,
        conn: &mut Connection,
        now: Instant,
        _stderr_lines: &mut Vec<String>,
    ) -> bool {
        let mut progressed = false;
        let mut finished = 0usize;
        let mut saw_http2 = false;
        let observer = self.observer.as_ref();
        let started = &mut self.started;
        let counters = &self.counters;
        let (http2_asked, over_tls) = (&mut self.http2_asked, self.over_tls);
        self.exchanges.retain(|id, ex| {
            if let Exchange::Sending(fut) = ex {
                match fut.as_mut().poll(cx) {
                    Poll::Ready(Ok(resp)) => {
                        progressed = true;
                        if *http2_asked && resp.version.is_some() {
                            *http2_asked = false;
                            if resp.version == Some(HttpVersion::Http1) {
                                conn.handle_http(
                                    now,
                                    *id,
                                    HttpInput::Note(Self::spoke_http1(over_tls)),
                                )
                                .unwrap_or_else(wrong_transport);
                            }
                        }
                        let http2 = resp.version == Some(HttpVersion::Http2);
                        saw_http2 |= http2;
                        let reused = counters.response(resp.local_addr, http2);
                        if observer.is_some() {
                            let head = Head {
                                status: resp.status,
                                content_type: header_value(&resp.headers, "content-type"),
                                session: header_value(&resp.headers, "mcp-session-id"),
                                version: resp.version,
                                reused_connection: reused,
                            };
                            Self::observe_end(observer, started, *id, Ok(head));
                        }
                        conn.handle_http(
                            now,
                            *id,
                            HttpInput::Head {
                                status: resp.status,
                                headers: &resp.headers,
                            },
                        )
                        .unwrap_or_else(wrong_transport);
                        *ex = Exchange::Reading(resp.body);
                    }
                    Poll::Ready(Err(e)) => {
                        progressed = true;
                        finished += 1;
                        Self::observe_end(observer, started, *id, Err(e.message.clone()));
                        if e.unsent {
                            counters.unsent();
                            conn.handle_http(now, *id, HttpInput::Unsent(e.exchange_failure()))
                                .unwrap_or_else(wrong_transport);
                        } else {
                            conn.handle_http(now, *id, HttpInput::Failure(e.exchange_failure()))
                                .unwrap_or_else(wrong_transport);
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
                        finished += 1;
                        conn.handle_http(now, *id, HttpInput::End)
                            .unwrap_or_else(wrong_transport);
                        return false;
                    }
                    Poll::Ready(Ok(n)) => {
                        progressed = true;
                        // A body (a custom backend's) that says it read more than the buffer
                        // holds breaks the `AsyncRead` contract: its count is not trusted.
                        let n = n.min(self.read_buf.len());
                        conn.handle_http(now, *id, HttpInput::Body(&self.read_buf[..n]))
                            .unwrap_or_else(wrong_transport);
                    }
                    Poll::Ready(Err(e)) => {
                        progressed = true;
                        finished += 1;
                        let failure = HttpFailure::of_body_error(&e);
                        conn.handle_http(now, *id, HttpInput::Failure(failure.exchange_failure()))
                            .unwrap_or_else(wrong_transport);
                        return false;
                    }
                    Poll::Pending => break,
                }
            }
            true
        });
        if saw_http2 {
            self.admission.saw_http2();
        }
        for _ in 0..finished {
            self.admission.ended();
        }
        self.admit_waiting();
        progressed
    }

    fn carry_out(&mut self, _conn: &mut Connection, _now: Instant, output: Output) -> Option<u32> {
        match output {
            Output::Http(HttpAction::Start(request)) => {
                if self.http2_asked {
                    self.over_tls = UrlParts::read(&request.url).is_some_and(|p| p.is_https());
                }
                // What a queued request shows an observer (made only when there is one).
                let shown = self
                    .observer
                    .is_some()
                    .then(|| (request.method.as_str(), redact_url(&request.url)));
                match self.admission.offer(request) {
                    Some(request) => self.send(request),
                    None => {
                        if let (Some(observer), Some((method, url))) = (&self.observer, shown) {
                            observer(&HttpExchangeNote::Queued {
                                method,
                                url,
                                waiting: self.admission.waiting(),
                            });
                        }
                    }
                }
            }
            // Dropping the future or the body aborts the exchange.
            Output::Http(HttpAction::Abort(id)) => {
                if self.exchanges.remove(&id).is_some() {
                    self.admission.ended();
                    self.admit_waiting();
                } else {
                    self.admission.withdraw(id);
                }
                self.started.remove(&id);
            }
            other => debug_assert!(false, "not an HTTP output: {other:?}"),
        }
        None
    }

    fn write(&mut self, _cx: &mut Context<'_>) -> bool {
        false
    }

    fn is_idle(&self) -> bool {
        self.exchanges.is_empty() && self.admission.waiting() == 0
    }

    fn finish_reason(&self) -> &'static str {
        "closed by the client"
    }
}
