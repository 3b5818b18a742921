//! The 2024-11-05 HTTP+SSE transport, with no IO.
//!
//! A `GET` opens one long SSE stream. Its first event, `endpoint`, names the URL to POST to
//! (resolved against the stream's URL, accepted only on the same origin). Every message goes
//! out as a POST there, and a 2xx is its acceptance; every message from the server comes back
//! as a `message` event on the one stream, routed by id. There is no session to renew and no
//! resumption: losing the stream ends every pending request by the at-most-once rule, and the
//! connection with it (reconnecting is the application's or a manager's choice).
//!
//! Reached two ways: pinned ([`HttpKind::Sse`](crate::config::HttpKind::Sse) in the server's
//! config: no probe), or found by [`Era::Auto`](crate::Era::Auto) when a Streamable HTTP
//! `initialize` is refused the way an older server refuses it; then the handshake, already
//! under way, starts again here.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use crate::codec::sse::{McpSseDecoder, SseDiagnostic, SseItem};
use crate::connection::http::headers::Headers as HeaderSet;
use crate::connection::http::initialized::{InitializedGate, BEHIND as INITIALIZED_BEHIND};
use crate::connection::http::switch::Switch;
use crate::connection::http::{ExchangeId, HttpAction, HttpMethod, HttpOptions, HttpRequest};
use crate::connection::protocol::client::{ClientProtocol, TransportSignal};
use crate::connection::protocol::vocabulary::events::{Diagnostic, Event};
use crate::error::Closed;
use crate::error::{redact_url, AuthorizationRequired, ExchangeFailure, HttpError, HttpErrorKind};
use crate::rpc::LocalError;
use crate::tap::{Direction, FrameObserver};

mod auth;

/// How the handshake starts once the endpoint is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// A new connection: `initialize` (this transport is of the handshake era).
    Fresh,
    /// Switched to from Streamable HTTP mid-handshake: the handshake starts again.
    Switched,
    /// Started.
    Done,
}

/// One POST in flight.
#[derive(Debug)]
struct Post {
    request: Option<i64>,
    body: Vec<u8>,
    resent: bool,
    status: Option<u16>,
    excerpt: Vec<u8>,
    /// The token it went with (see the `auth` module).
    generation: u64,
}

/// The client protocol over the 2024-11-05 HTTP+SSE transport.
pub struct HttpSse {
    url: String,
    headers: HeaderSet,
    /// Where messages are POSTed, once the stream named it.
    endpoint: Option<String>,
    start: Start,
    /// The GET stream.
    stream: Option<ExchangeId>,
    /// The token the stream went with.
    stream_generation: u64,
    decoder: McpSseDecoder,
    /// The cap on one event.
    max_event: usize,
    stream_status: Option<u16>,
    posts: HashMap<ExchangeId, Post>,
    /// Nothing else is POSTed until `notifications/initialized` is accepted.
    initialized: InitializedGate,
    next_exchange: ExchangeId,
    actions: VecDeque<HttpAction>,
    notes: VecDeque<Event>,
    observer: Option<Box<dyn FrameObserver>>,
    /// Until the `endpoint` event must have come.
    endpoint_deadline: Option<Instant>,
    /// How long the endpoint may take once the stream is asked for.
    init_timeout: Duration,
    /// Authorization (see the `auth` module).
    auth: SseAuth,
    closing: bool,
    /// Why Streamable HTTP was left, when it was: its refusal of `initialize`.
    refused: Option<HttpError>,
    /// Exchanges whose request cannot go as it is (a header no backend may be handed): never
    /// handed out, each ends as a request that did not leave.
    unsendable: Vec<(ExchangeId, ExchangeFailure)>,
}

impl std::fmt::Debug for HttpSse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSse")
            .field("url", &self.url)
            .field("endpoint", &self.endpoint)
            .field("posts", &self.posts.len())
            .finish_non_exhaustive()
    }
}

impl HttpSse {
    /// A client for the stream at `server`'s URL, pinned to this transport; the GET goes at
    /// once, the handshake once the endpoint is known, which must be within `init_timeout`.
    pub fn new(
        now: Instant,
        server: &crate::config::HttpConfig,
        options: HttpOptions,
        init_timeout: Duration,
    ) -> Self {
        let switch = Switch {
            url: server.url.clone(),
            headers: HeaderSet::new(&server.headers),
            config: options,
            observer: None,
            next_exchange: 0,
            abort: Vec::new(),
            at: now,
            refused: None,
        };
        Self::from_switch(now, switch, Start::Fresh, init_timeout)
    }

    /// The client a Streamable HTTP connection switches to when its `initialize` was refused
    /// the way an older server refuses it.
    pub(crate) fn switched(switch: Switch, init_timeout: Duration) -> Self {
        Self::from_switch(switch.at, switch, Start::Switched, init_timeout)
    }

    fn from_switch(now: Instant, switch: Switch, start: Start, init_timeout: Duration) -> Self {
        let mut client = HttpSse {
            url: switch.url,
            headers: switch.headers,
            decoder: McpSseDecoder::with_max_event_size(switch.config.max_event),
            max_event: switch.config.max_event,
            endpoint: None,
            start,
            stream: None,
            stream_generation: 0,
            stream_status: None,
            posts: HashMap::new(),
            initialized: InitializedGate::default(),
            next_exchange: switch.next_exchange,
            actions: switch.abort.into_iter().map(HttpAction::Abort).collect(),
            notes: VecDeque::new(),
            observer: switch.observer,
            endpoint_deadline: None,
            init_timeout,
            auth: SseAuth::new(switch.config.authorization),
            closing: false,
            refused: switch.refused,
            unsendable: Vec::new(),
        };
        client.open_stream(now);
        client
    }

    /// Installs the frame observer (it sees each message's JSON, never headers).
    pub fn set_observer(&mut self, observer: Box<dyn FrameObserver>) {
        self.observer = Some(observer);
    }

    fn start_exchange(
        &mut self,
        method: HttpMethod,
        url: String,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    ) -> ExchangeId {
        let exchange = self.next_exchange;
        self.next_exchange += 1;
        let request = HttpRequest {
            exchange,
            method,
            url,
            headers,
            body,
        };
        match crate::connection::http::unsendable(&request) {
            Some(failure) => self.unsendable.push((exchange, failure)),
            None => self.actions.push_back(HttpAction::Start(request)),
        }
        exchange
    }

    /// POSTs what the protocol wants sent, once the endpoint is known.
    fn flush(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        // A POST still waiting for a connection whose request ended is withdrawn.
        while let Some(id) = protocol.poll_withdrawn() {
            let carrying: Vec<ExchangeId> = self
                .posts
                .iter()
                .filter(|(_, p)| p.request == Some(id) && p.status.is_none())
                .map(|(x, _)| *x)
                .collect();
            for x in carrying {
                self.abort(x);
            }
        }
        if self.closing {
            return;
        }
        if self.auth.is_waiting() {
            protocol.hold(Some("for an authorization"));
            return;
        }
        if self.endpoint.is_none() {
            protocol.hold(Some("for the server to name its message endpoint"));
            return;
        }
        loop {
            let posts = &self.posts;
            if self
                .initialized
                .holds(|id| posts.get(&id).is_some_and(|p| p.status.is_none()))
            {
                protocol.hold(Some(INITIALIZED_BEHIND));
                if let Some(why) = self.initialized.overdue().cloned() {
                    // One budget with the callers' (see `InitializedGate`).
                    protocol.fail_unsent(now, &why, Some(crate::rpc::Deadline::Idle));
                }
                return;
            }
            protocol.hold(None);
            let Some(m) = protocol.poll_transmit() else {
                return;
            };
            let request = m.request_id();
            if let Some(id) = self.post(protocol, m.to_bytes(), request, false) {
                self.initialized.posted(m.method(), id);
            }
            // Encoded: the protocol takes it back.
            protocol.transmitted(m);
        }
    }

    fn post(
        &mut self,
        protocol: &mut ClientProtocol,
        body: Vec<u8>,
        request: Option<i64>,
        resent: bool,
    ) -> Option<ExchangeId> {
        let endpoint = self.endpoint.clone()?;
        if !protocol.may_send(request) {
            // It ended while it waited: dropped here, never sent.
            return None;
        }
        let mut headers = vec![
            (
                "Accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
            ("Content-Type".to_string(), "application/json".to_string()),
        ];
        self.headers.extend(&mut headers, false);
        let id = self.start_exchange(HttpMethod::Post, endpoint, headers, body.clone());
        let post = Post {
            request,
            body,
            resent,
            status: None,
            excerpt: Vec::new(),
            generation: self.auth.generation,
        };
        self.posts.insert(id, post);
        Some(id)
    }

    /// The response head of `exchange`.
    pub fn handle_head(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        status: u16,
        headers: &[(String, String)],
    ) {
        if self.refused_for_authorization(protocol, now, exchange, status, headers) {
            return;
        }
        if Some(exchange) == self.stream {
            self.stream_status = Some(status);
            let sse = crate::connection::http::header(headers, "content-type")
                .map(crate::connection::http::media_type)
                .is_some_and(|m| m == "text/event-stream");
            if !(200..300).contains(&status) || !sse {
                let reason = if !(200..300).contains(&status) {
                    let challenge = crate::connection::http::header(headers, "www-authenticate")
                        .and_then(crate::error::AuthChallenge::parse);
                    let why = self.headers.status_reason(Some(status), challenge.as_ref());
                    format!("its event stream's GET got HTTP {status} ({why})")
                } else {
                    format!("its event stream's GET got HTTP {status} without an event stream")
                };
                self.abort(exchange);
                self.stream_lost(protocol, now, reason);
            }
        } else if let Some(post) = self.posts.get_mut(&exchange) {
            post.status = Some(status);
        }
        self.flush(protocol, now);
    }

    /// A chunk of the body of `exchange`.
    pub fn handle_body(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        bytes: &[u8],
    ) {
        if Some(exchange) == self.stream {
            self.decoder.push(bytes);
            self.drain(protocol, now);
        } else if let Some(post) = self.posts.get_mut(&exchange) {
            let room = crate::error::EXCERPT.saturating_sub(post.excerpt.len());
            post.excerpt
                .extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
        self.flush(protocol, now);
    }

    /// Hands each message of the stream to the protocol; takes the `endpoint` event.
    fn drain(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        loop {
            let observer = &mut self.observer;
            let tap = |data: &[u8]| {
                if let Some(o) = observer.as_mut() {
                    o.frame(Direction::Incoming, data);
                }
            };
            let Some(item) = self.decoder.next_item_observed(tap) else {
                return;
            };
            match item {
                SseItem::Message(m) => protocol.handle_message(now, m),
                SseItem::Diagnostic(SseDiagnostic::UnexpectedEventType { event_type, data })
                    if event_type == "endpoint" =>
                {
                    self.endpoint_event(protocol, now, &data)
                }
                SseItem::Diagnostic(d) => {
                    self.notes.push_back(Event::Diagnostic(Diagnostic::Sse(d)))
                }
            }
        }
    }

    /// The `endpoint` event: where to POST. A second one is noted and ignored.
    fn endpoint_event(&mut self, protocol: &mut ClientProtocol, now: Instant, data: &str) {
        if self.endpoint.is_some() {
            let note = format!("a second endpoint event ({data:?}) was ignored");
            self.notes.push_back(Event::http_note(note));
            return;
        }
        let Some(resolved) = crate::url::resolve(&self.url, data) else {
            return self.stream_lost(
                protocol,
                now,
                format!("the endpoint event {data:?} is not a URL"),
            );
        };
        if !crate::url::same_origin(&self.url, &resolved) {
            let reason =
                format!("the endpoint {resolved:?} is not on the stream's origin: refused");
            if let Some(id) = self.stream {
                self.abort(id);
            }
            return self.stream_lost(protocol, now, reason);
        }
        self.endpoint = Some(resolved);
        self.endpoint_deadline = None;
        match std::mem::replace(&mut self.start, Start::Done) {
            Start::Fresh => {
                // Refused only when already closed; the close then says why.
                let _ = protocol.start(now);
            }
            Start::Switched => {
                let _ = protocol.handle_transport(now, TransportSignal::Restarted);
            }
            Start::Done => {}
        }
    }

    /// The body of `exchange` ended.
    pub fn handle_end(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
    ) {
        if Some(exchange) == self.stream {
            self.decoder.finish();
            self.drain(protocol, now);
            self.stream = None;
            self.stream_lost(protocol, now, "the SSE stream ended".into());
        } else if let Some(post) = self.posts.remove(&exchange) {
            let status = post.status.unwrap_or(0);
            if !(200..300).contains(&status) {
                let kind = match status {
                    300..=399 => HttpErrorKind::Redirect { location: None },
                    _ => HttpErrorKind::Status,
                };
                self.refused(protocol, now, post, kind, "the message was refused".into());
            }
        }
        self.flush(protocol, now);
    }

    /// A POST answered with an error status: its request was not taken.
    fn refused(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        post: Post,
        kind: HttpErrorKind,
        reason: String,
    ) {
        let url = self.endpoint.as_deref().unwrap_or(&self.url);
        let err = HttpError {
            kind,
            url: redact_url(url),
            status: post.status,
            content_type: None,
            body_excerpt: crate::error::body_excerpt(&post.excerpt),
            challenge: None,
            reason,
            hint: None,
        };
        match post.request {
            Some(id) => {
                let error = LocalError::Http(Box::new(err));
                protocol.handle_transport(now, TransportSignal::RequestLost { id, error });
            }
            None => self.notes.push_back(Event::http_note(err.to_string())),
        }
    }

    /// `exchange` failed after its request may have gone out.
    pub fn handle_failure(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        failure: &ExchangeFailure,
    ) {
        let reason = failure.message.as_str();
        if Some(exchange) == self.stream {
            self.stream = None;
            let reason = match self.endpoint {
                None => format!("its event stream failed before naming the endpoint: {reason}"),
                Some(_) => format!("the SSE stream failed: {reason}"),
            };
            self.stream_lost(protocol, now, reason);
        } else if let Some(post) = self.posts.remove(&exchange) {
            let taken = post.status.is_some_and(|s| (200..300).contains(&s));
            match post.request {
                // Taken (a 2xx came): the answer comes on the stream; a failure reading the
                // empty rest of the response loses nothing.
                _ if taken => {}
                Some(id) => {
                    let reason = format!("the POST failed: {reason}").into();
                    let signal = TransportSignal::LostAfterSending {
                        id,
                        reason,
                        http: None,
                    };
                    protocol.handle_transport(now, signal);
                }
                None => self
                    .notes
                    .push_back(Event::http_note(format!("a POST failed: {reason}"))),
            }
        }
        self.flush(protocol, now);
    }

    /// `exchange`'s request never reached the server: a POST goes once more.
    pub fn handle_unsent(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        failure: &ExchangeFailure,
    ) {
        let reason = failure.message.as_str();
        if Some(exchange) == self.stream {
            self.stream = None;
            self.stream_lost(
                protocol,
                now,
                format!("its event stream could not be opened: {reason}"),
            );
        } else if let Some(post) = self.posts.remove(&exchange) {
            if post.resent || self.closing {
                self.refused(
                    protocol,
                    now,
                    post,
                    failure.kind.clone(),
                    format!("not sent: {reason}"),
                );
            } else {
                self.post(protocol, post.body, post.request, true);
            }
        }
        self.flush(protocol, now);
    }

    /// The one stream is gone: every pending request ends by the at-most-once rule, and the
    /// connection with it (before the endpoint, the handshake fails).
    fn stream_lost(&mut self, protocol: &mut ClientProtocol, now: Instant, reason: String) {
        if self.closing {
            return;
        }
        self.closing = true;
        self.endpoint_deadline = None;
        let mut ids: Vec<ExchangeId> = self.posts.keys().copied().chain(self.stream).collect();
        ids.sort_unstable();
        for id in ids {
            self.abort(id);
        }
        let signal = if self.endpoint.is_none() {
            // Found by Auto: the error is the Streamable HTTP refusal, with this added.
            TransportSignal::NoTransport(match self.refused.take() {
                Some(mut refused) => {
                    let reason = format!("no HTTP+SSE transport: {reason}");
                    refused.reason = format!("{}; {reason}", refused.reason);
                    LocalError::Http(Box::new(refused))
                }
                // Pinned: the transport the configuration names did not start, and why.
                None => LocalError::Closed(Closed::new(format!(
                    "the HTTP+SSE transport (2024-11-05) at {} did not start: {reason}",
                    redact_url(&self.url)
                ))),
            })
        } else {
            TransportSignal::Died(reason.into())
        };
        protocol.handle_transport(now, signal);
    }

    fn abort(&mut self, exchange: ExchangeId) {
        self.posts.remove(&exchange);
        if self.stream == Some(exchange) {
            self.stream = None;
        }
        self.actions.push_back(HttpAction::Abort(exchange));
    }

    /// Closes: every call ends, the stream and every POST are aborted.
    pub fn close(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        if self.closing {
            return;
        }
        self.closing = true;
        self.endpoint_deadline = None;
        protocol.close(now, "closed by the client");
        let mut ids: Vec<ExchangeId> = self.posts.keys().copied().chain(self.stream).collect();
        ids.sort_unstable();
        for id in ids {
            self.abort(id);
        }
    }

    /// Whether the connection is closed and nothing is left in flight.
    pub fn is_finished(&self) -> bool {
        self.closing && self.posts.is_empty() && self.stream.is_none()
    }

    /// After an input or a command: what the protocol wants sent goes.
    pub fn after_input(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        self.flush(protocol, now);
        while let Some((exchange, failure)) = self.unsendable.pop() {
            // Never handed to the backend: it ends as a request that did not leave.
            self.handle_unsent(protocol, now, exchange, &failure);
        }
    }

    /// The next exchange to start or abort (the tap sees a message as its POST is handed out).
    pub fn poll_action(&mut self) -> Option<HttpAction> {
        let action = self.actions.pop_front()?;
        crate::connection::http::tap_outgoing(self.observer.as_deref_mut(), &action);
        Some(action)
    }

    /// The next HTTP-level note for the application.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.notes.pop_front()
    }

    /// The earliest deadline of the transport: the endpoint's.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.endpoint_deadline
    }

    /// Fires what is due.
    pub fn handle_timeout(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        if self.endpoint_deadline.is_some_and(|t| t <= now) {
            self.endpoint_deadline = None;
            if let Some(id) = self.stream {
                self.abort(id);
            }
            let reason = format!(
                "its event stream named no endpoint within {}",
                crate::rpc::outcome::DurationWords(self.init_timeout)
            );
            self.stream_lost(protocol, now, reason);
        }
        protocol.handle_timeout(now);
        let held = protocol.take_held_timeout();
        let posts = &self.posts;
        let holding = self
            .initialized
            .holds(|id| posts.get(&id).is_some_and(|p| p.status.is_none()));
        self.initialized.held_timed_out(holding, held);
        self.flush(protocol, now);
    }
}

/// Where authorization stands.
#[derive(Debug, Default)]
struct SseAuth {
    /// Whether a refusal parks what it refused and asks the driver.
    enabled: bool,
    /// Bumped with each token: the token an exchange went with.
    generation: u64,
    /// An authorization under way: the refusal that started it and what waits for it.
    waiting: Option<Waiting>,
}

#[derive(Debug)]
struct Waiting {
    refusal: AuthorizationRequired,
    /// Messages refused: their request id (if a request) and body.
    posts: Vec<(Option<i64>, Vec<u8>)>,
    /// Whether the GET stream waits to be opened again.
    stream: bool,
}

impl SseAuth {
    /// No token yet; `enabled`: whether refusals park what they refused.
    fn new(enabled: bool) -> SseAuth {
        SseAuth {
            enabled,
            ..SseAuth::default()
        }
    }

    /// Whether messages wait for an authorization.
    fn is_waiting(&self) -> bool {
        self.waiting.is_some()
    }
}
