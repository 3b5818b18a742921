//! The Streamable HTTP driver: carries out the core's exchanges with an HTTP client (isahc by
//! default, behind the small [`HttpBackend`] trait) and feeds their heads, body chunks, ends
//! and failures back, chunk by chunk, as they arrive.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use async_io::Timer;
use futures_lite::AsyncRead;
use mcpwire_core::http::{ExchangeId, HttpAction, HttpMethod, HttpRequest};

use crate::client::{Shared, State};
use crate::dispatch::{Dispatch, StepOutput};
use crate::handlers::{BoxFuture, Handlers};

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

/// What happened to one exchange in one poll.
enum Happened {
    Head(u16, Vec<(String, String)>),
    Body(Vec<u8>),
    End,
    Failure(String),
}

/// Reads per exchange per poll before yielding to the others.
const READS_PER_POLL: usize = 16;

pub(crate) struct HttpDriver {
    shared: Arc<Shared>,
    backend: Arc<dyn HttpBackend>,
    exchanges: HashMap<ExchangeId, Exchange>,
    dispatch: Dispatch,
    timer: Timer,
    timer_at: Option<Instant>,
    closing: bool,
    read_buf: Box<[u8]>,
}

impl HttpDriver {
    pub(crate) fn new(
        shared: Arc<Shared>,
        backend: Arc<dyn HttpBackend>,
        handlers: Handlers,
    ) -> Self {
        HttpDriver {
            shared,
            backend,
            exchanges: HashMap::new(),
            dispatch: Dispatch::new(handlers),
            timer: Timer::never(),
            timer_at: None,
            closing: false,
            read_buf: vec![0; 64 * 1024].into_boxed_slice(),
        }
    }

    /// Under the lock: deadlines, commands, the exchanges to start or stop, the events.
    fn step(&mut self, cx: &mut Context<'_>, st: &mut State) -> (bool, StepOutput) {
        let mut progressed = false;
        match &st.driver_waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => st.driver_waker = Some(cx.waker().clone()),
        }
        let now = Instant::now();
        if st.close_requested && !self.closing {
            self.closing = true;
            st.core.http().close(now);
            progressed = true;
        }
        let http = st.core.http();
        if http.poll_timeout().is_some_and(|t| t <= now) {
            http.handle_timeout(now);
            progressed = true;
        }
        while let Some(action) = http.poll_action() {
            progressed = true;
            match action {
                HttpAction::Start(request) => {
                    let id = request.exchange;
                    let fut = self.backend.send(request);
                    self.exchanges.insert(id, Exchange::Sending(fut));
                }
                HttpAction::Abort(id) => {
                    self.exchanges.remove(&id);
                }
                _ => {}
            }
        }
        let out = self.dispatch.take_events(st);
        if st.core.protocol().engine().unread_notifications() > 0 {
            if let Some(w) = st.notification_waker.take() {
                w.wake();
            }
        }
        let next = st.core.http().poll_timeout();
        if next != self.timer_at {
            self.timer_at = next;
            match next {
                Some(t) => self.timer.set_at(t),
                None => self.timer = Timer::never(),
            }
        }
        (progressed, out)
    }

    /// Outside the lock: moves each exchange on as far as it can go now.
    fn poll_exchanges(&mut self, cx: &mut Context<'_>) -> Vec<(ExchangeId, Happened)> {
        let mut happened = Vec::new();
        let mut finished = Vec::new();
        for (id, ex) in self.exchanges.iter_mut() {
            if let Exchange::Sending(fut) = ex {
                match fut.as_mut().poll(cx) {
                    Poll::Ready(Ok(resp)) => {
                        happened.push((*id, Happened::Head(resp.status, resp.headers)));
                        *ex = Exchange::Reading(resp.body);
                    }
                    Poll::Ready(Err(e)) => {
                        happened.push((*id, Happened::Failure(e)));
                        finished.push(*id);
                        continue;
                    }
                    Poll::Pending => continue,
                }
            }
            if let Exchange::Reading(body) = ex {
                for _ in 0..READS_PER_POLL {
                    match body.as_mut().poll_read(cx, &mut self.read_buf) {
                        Poll::Ready(Ok(0)) => {
                            happened.push((*id, Happened::End));
                            finished.push(*id);
                            break;
                        }
                        Poll::Ready(Ok(n)) => {
                            happened.push((*id, Happened::Body(self.read_buf[..n].to_vec())));
                        }
                        Poll::Ready(Err(e)) => {
                            happened.push((*id, Happened::Failure(e.to_string())));
                            finished.push(*id);
                            break;
                        }
                        Poll::Pending => break,
                    }
                }
            }
        }
        for id in finished {
            self.exchanges.remove(&id);
        }
        happened
    }
}

impl Future for HttpDriver {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let shared = this.shared.clone();
        for _ in 0..64 {
            let (mut progressed, out, progress) = {
                let mut st = shared.lock();
                let (p, out) = this.step(cx, &mut st);
                (p, out, std::mem::take(&mut st.progress))
            };
            progressed |= this.dispatch.after_step(cx, &shared, out, progress);
            let happened = this.poll_exchanges(cx);
            if !happened.is_empty() {
                progressed = true;
                let mut st = shared.lock();
                let now = Instant::now();
                let http = st.core.http();
                for (id, h) in happened {
                    match h {
                        Happened::Head(status, headers) => {
                            http.handle_head(now, id, status, &headers)
                        }
                        Happened::Body(bytes) => http.handle_body(now, id, &bytes),
                        Happened::End => http.handle_end(now, id),
                        Happened::Failure(e) => http.handle_failure(now, id, &e),
                    }
                }
            }
            if this.timer_at.is_some() && Pin::new(&mut this.timer).poll(cx).is_ready() {
                this.timer_at = None;
                progressed = true;
            }
            {
                let mut st = shared.lock();
                if this.closing && st.core.http().is_finished() && this.exchanges.is_empty() {
                    st.finish("closed by the client");
                    return Poll::Ready(());
                }
            }
            if !progressed {
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl Drop for HttpDriver {
    fn drop(&mut self) {
        self.shared
            .lock()
            .finish("the connection driver was dropped");
    }
}
