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

/// A response head and its body, as a stream of bytes.
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body, read as it arrives.
    pub body: Pin<Box<dyn AsyncRead + Send>>,
}

/// The HTTP client the driver uses: send one request, get its response head and a body stream.
/// Dropping the future or the body aborts the exchange.
pub trait HttpBackend: Send + Sync + 'static {
    /// Starts `request`.
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, String>>;
}

/// The default backend: isahc (libcurl), with keep-alive connection reuse and no timeouts of
/// its own (deadlines are the core's).
pub struct IsahcBackend {
    client: isahc::HttpClient,
}

impl IsahcBackend {
    /// A backend with isahc's defaults.
    pub fn new() -> Result<Self, String> {
        let client = isahc::HttpClient::builder()
            .max_connections_per_host(256)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(IsahcBackend { client })
    }
}

impl HttpBackend for IsahcBackend {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, String>> {
        let client = self.client.clone();
        Box::pin(async move {
            let mut builder = isahc::Request::builder()
                .method(request.method.as_str())
                .uri(&request.url);
            for (k, v) in &request.headers {
                builder = builder.header(k.as_str(), v.as_str());
            }
            let body = match request.method {
                HttpMethod::Post => isahc::AsyncBody::from(request.body),
                _ => isahc::AsyncBody::empty(),
            };
            let req = builder.body(body).map_err(|e| e.to_string())?;
            let resp = client.send_async(req).await.map_err(|e| e.to_string())?;
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

enum Exchange {
    Sending(BoxFuture<Result<HttpResponse, String>>),
    Reading(Pin<Box<dyn AsyncRead + Send>>),
}

/// Reads per exchange per step before moving on to the others.
const READS_PER_STEP: usize = 16;

/// The exchanges in flight.
pub(crate) struct HttpIo {
    backend: Arc<dyn HttpBackend>,
    exchanges: HashMap<ExchangeId, Exchange>,
    read_buf: Box<[u8]>,
}

impl HttpIo {
    pub(crate) fn new(backend: Arc<dyn HttpBackend>) -> Self {
        HttpIo {
            backend,
            exchanges: HashMap::new(),
            read_buf: vec![0; 64 * 1024].into_boxed_slice(),
        }
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
        self.exchanges.retain(|id, ex| {
            if let Exchange::Sending(fut) = ex {
                match fut.as_mut().poll(cx) {
                    Poll::Ready(Ok(resp)) => {
                        progressed = true;
                        conn.handle_head(now, *id, resp.status, &resp.headers);
                        *ex = Exchange::Reading(resp.body);
                    }
                    Poll::Ready(Err(e)) => {
                        progressed = true;
                        conn.handle_failure(now, *id, &e);
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
                        conn.handle_failure(now, *id, &e.to_string());
                        return false;
                    }
                    Poll::Pending => break,
                }
            }
            true
        });
        progressed
    }

    fn carry_out(&mut self, _st: &mut ConnectionState, _now: Instant, output: Output) {
        match output {
            Output::Http(HttpAction::Start(request)) => {
                let id = request.exchange;
                let fut = self.backend.send(request);
                self.exchanges.insert(id, Exchange::Sending(fut));
            }
            // Dropping the future or the body aborts the exchange.
            Output::Http(HttpAction::Abort(id)) => {
                self.exchanges.remove(&id);
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
