//! Streamable HTTP, handshake era: the exchange machine, with no IO.
//!
//! [`StreamableHttp`] turns the client protocol's messages into HTTP exchanges and the responses back
//! into messages. Every message is a POST; the server's messages come back on the POST's
//! response (one JSON body, or an SSE stream) and on the optional standalone GET stream.
//! Messages are routed by JSON-RPC id, never by the stream or position they came on, and a
//! server request is handed to the application the moment it is decoded, from any stream.
//!
//! [`Connection`](crate::Connection) drives it: the exchanges it asks for are started, and
//! each one's head, body chunks, end or failure come back as inputs.

mod auth;
mod exchange;
mod failures;
mod headers;
mod initialized;
mod options;
mod request;
mod resume;
mod session;
mod stateless;
mod streams;
mod switch;
mod timeouts;

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

pub(crate) use auth::{asks_for_authorization, challenges, end_waiting};
use exchange::{Body, Exchange, ExchangeKind, Role, SessionTag, Standalone, Stream};
pub(crate) use headers::Headers as HeaderSet;
use headers::Headers;
pub(crate) use initialized::{InitializedGate, BEHIND as INITIALIZED_BEHIND};
pub use options::HttpOptions;
pub(crate) use request::{header, media_type, unsendable};
pub use request::{ExchangeId, HttpAction, HttpMethod, HttpRequest};
use resume::Resumes;
use session::{Parked, Session};

use crate::error::{ExchangeFailure, HttpError, HttpErrorKind};

use crate::connection::protocol::client::ClientProtocol;
use crate::connection::protocol::vocabulary::events::Event;
use crate::connection::protocol::ChosenEra;
use crate::connection::transport::hand_over;
use crate::jsonrpc::{self, Message, Parsed};
use crate::tap::{Direction, FrameObserver};

/// The client protocol over Streamable HTTP (handshake era).
pub struct StreamableHttp {
    url: String,
    /// The URL without credentials, for errors.
    shown_url: std::sync::Arc<str>,
    /// The configured headers.
    configured: Headers,
    config: HttpOptions,
    session: Session,
    exchanges: HashMap<ExchangeId, Exchange>,
    next_exchange: ExchangeId,
    actions: VecDeque<HttpAction>,
    resumes: Resumes,
    standalone: Standalone,
    notes: VecDeque<Event>,
    observer: Option<Box<dyn FrameObserver>>,
    closing: bool,
    /// After a close: the session is to be deleted once what was queued has gone.
    delete_when_drained: bool,
    /// After a close, when whatever is still in flight (the DELETE) is given up.
    close_deadline: Option<Instant>,
    /// Set while several exchanges fail at once: nothing new goes out until all have, so no
    /// request leaves in a session one of them is about to lose.
    holding: bool,
    /// Nothing else is POSTed until the first `notifications/initialized` is accepted.
    initialized: InitializedGate,
    /// `initialize` was refused as an older server refuses it, at this time: the connection
    /// moves to the 2024-11-05 HTTP+SSE transport ([`take_switch`](Self::take_switch)).
    wants_sse: Option<Instant>,
    /// Why the move was decided: the refusal of `initialize`.
    switch_error: Option<HttpError>,
    /// Authorization: the token, and what waits for one.
    auth: auth::Auth,
    /// Exchanges whose request cannot go as it is (a header no backend may be handed): never
    /// handed out, each ends as a request that did not leave.
    unsendable: Vec<(ExchangeId, ExchangeFailure)>,
}

/// What a connection that moves to the HTTP+SSE transport takes along.
pub(crate) struct Switch {
    pub(crate) url: String,
    pub(crate) headers: Headers,
    pub(crate) config: HttpOptions,
    pub(crate) observer: Option<Box<dyn FrameObserver>>,
    /// The first exchange id the new transport may use.
    pub(crate) next_exchange: ExchangeId,
    /// Exchanges still open, to abort.
    pub(crate) abort: Vec<ExchangeId>,
    /// When the move was decided.
    pub(crate) at: Instant,
    /// Why: the refusal of `initialize`, for the error if the HTTP+SSE transport is not there
    /// either.
    pub(crate) refused: Option<HttpError>,
}

/// Shows the observer the message a POST carries, as the POST is handed out.
pub(crate) fn tap_outgoing(observer: Option<&mut (dyn FrameObserver + '_)>, action: &HttpAction) {
    if let (Some(o), HttpAction::Start(r)) = (observer, action) {
        if r.method == HttpMethod::Post {
            o.frame(Direction::Outgoing, &r.body);
        }
    }
}

/// A JSON body over this many bytes is let go as soon as it is parsed.
const LARGE_BODY: usize = 64 * 1024;

/// How long a close waits for the session's DELETE before giving it up.
pub const CLOSE_GRACE: Duration = Duration::from_secs(2);

impl std::fmt::Debug for StreamableHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamableHttp")
            .field("url", &self.url)
            .field("session", &self.session)
            .field("exchanges", &self.exchanges.len())
            .finish_non_exhaustive()
    }
}

impl StreamableHttp {
    /// The exchange machine for the endpoint in `server`.
    pub fn new(server: &crate::config::HttpConfig, options: HttpOptions) -> Self {
        let auth = auth::Auth::new(options.authorization);
        StreamableHttp {
            url: server.url.clone(),
            shown_url: crate::error::redact_url(&server.url).into(),
            configured: Headers::new(&server.headers),
            config: options,
            session: Session::default(),
            exchanges: HashMap::new(),
            next_exchange: 0,
            actions: VecDeque::new(),
            resumes: Resumes::default(),
            standalone: Standalone::NotYet,
            notes: VecDeque::new(),
            observer: None,
            closing: false,
            delete_when_drained: false,
            close_deadline: None,
            holding: false,
            initialized: InitializedGate::default(),
            wants_sse: None,
            switch_error: None,
            auth,
            unsendable: Vec::new(),
        }
    }

    /// Installs the frame observer (it sees each message's JSON, never headers).
    pub fn set_observer(&mut self, observer: Box<dyn FrameObserver>) {
        self.observer = Some(observer);
    }

    /// The session the server assigned, if any.
    pub fn session(&self) -> Option<&str> {
        self.session.id.as_deref()
    }

    /// Closes: every call ends, open exchanges are aborted, and the session is deleted.
    pub fn close(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        if self.closing {
            return;
        }
        self.closing = true;
        self.close_deadline = Some(now + CLOSE_GRACE);
        // What was queued before the close still goes (a notification, an answer to the
        // server), within the grace: the queue is flushed into exchanges first, and those
        // exchanges are left to finish. Streams and the calls' own POSTs are aborted.
        self.flush(protocol, now);
        protocol.close(now, "closed by the client");
        // An overdue `notifications/initialized` is not waited for either: it has been
        // waited for as long as a caller would.
        let overdue = self.initialized.overdue().is_some();
        let mut ids: Vec<ExchangeId> = self
            .exchanges
            .iter()
            .filter(|(id, ex)| {
                !matches!(ex.kind, ExchangeKind::Post { request: None, .. })
                    || (overdue && self.initialized.is_gate(**id))
            })
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        for id in ids {
            self.exchanges.remove(&id);
            self.actions.push_back(HttpAction::Abort(id));
        }
        self.resumes.take_all();
        self.session.parked.clear();
        self.auth.clear();
        self.delete_when_drained = self.session.id.is_some();
        self.delete_if_drained(protocol, now);
    }

    /// After a close, the session is deleted once what was queued before it has gone.
    fn delete_if_drained(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        if !self.delete_when_drained || !self.exchanges.is_empty() {
            return;
        }
        self.delete_when_drained = false;
        let headers = self.headers(protocol, false, self.session.id.as_deref());
        let kind = ExchangeKind::Delete;
        let tag = self.session.tag();
        self.start_exchange(now, HttpMethod::Delete, headers, Vec::new(), kind, tag);
    }

    /// Whether the connection is closed and nothing is left in flight (what is still in flight
    /// when [`CLOSE_GRACE`] has passed is given up).
    pub fn is_finished(&self) -> bool {
        self.closing && self.exchanges.is_empty()
    }

    /// The headers of every request: ours, the session, the negotiated version, the configured.
    fn headers(
        &self,
        protocol: &ClientProtocol,
        accept_sse_only: bool,
        session: Option<&str>,
    ) -> Vec<(String, String)> {
        let version = protocol
            .server()
            .filter(|_| protocol.era() == Some(ChosenEra::Handshake))
            .map(|s| s.protocol_version.as_str());
        self.configured.request(accept_sse_only, session, version)
    }

    fn start_exchange(
        &mut self,
        now: Instant,
        method: HttpMethod,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
        kind: ExchangeKind,
        sent_in: Option<SessionTag>,
    ) -> ExchangeId {
        let id = self.next_exchange;
        self.next_exchange += 1;
        let url = self.shown_url.clone();
        let deadline = self.head_deadline(now, &kind);
        let mut exchange = Exchange::new(kind, sent_in, url);
        exchange.deadline = deadline;
        exchange.auth_generation = self.auth.generation;
        self.exchanges.insert(id, exchange);
        let request = HttpRequest {
            exchange: id,
            method,
            url: self.url.clone(),
            headers,
            body,
        };
        match request::unsendable(&request) {
            Some(failure) => self.unsendable.push((id, failure)),
            None => self.actions.push_back(HttpAction::Start(request)),
        }
        id
    }

    /// Moves what the protocol wants sent into POST exchanges, and opens the standalone stream
    /// once the handshake is done.
    fn flush(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        if self.holding {
            return;
        }
        self.withdraw_ended(protocol);
        if self.closing && self.close_deadline.is_none() {
            // The close's grace is over: what is still queued (held behind an exchange the
            // grace gave up) is not sent; a POST started now would have nothing to end it.
            while protocol.poll_transmit().is_some() {}
            return;
        }
        while !self.initialized_in_flight() {
            let Some(m) = protocol.poll_transmit() else {
                break;
            };
            self.flush_one(protocol, now, m);
        }
        if let Some(why) = self.initialized.overdue().cloned() {
            // The wait has outlasted a caller's: what is queued behind it ends now, as the
            // request that timed out there did (one budget, not one wait per request).
            protocol.fail_unsent(now, &why, Some(crate::rpc::Deadline::Idle));
        }
        // What a request not yet sent waits for, for its error if its deadline passes first.
        let behind = if self.auth.is_waiting() {
            Some("for an authorization")
        } else if self.session.renewing {
            Some("for a new session (the server had forgotten the previous one)")
        } else if self.initialized_in_flight() {
            Some(INITIALIZED_BEHIND)
        } else {
            None
        };
        protocol.hold(behind);
        if self.standalone == Standalone::NotYet
            && self.config.standalone_stream
            && protocol.era() == Some(ChosenEra::Handshake)
            && protocol.is_ready()
            && !self.session.renewing
            && !self.auth.is_waiting()
            && !self.closing
        {
            self.standalone = Standalone::Open;
            let stream = Stream {
                budget: self.config.resume_budget,
                standalone: true,
                session: self.session.tag(),
                ..Stream::default()
            };
            self.open_get(protocol, now, stream);
        }
        if self.closing {
            self.delete_if_drained(protocol, now);
        }
    }

    /// Moves one message the protocol wants sent into a POST exchange (or parks it, or drops it
    /// with a note). What does not go out now is handed back to the protocol at once (see
    /// [`ClientProtocol::transmitted`]); what goes, once its POST is accepted.
    fn flush_one(&mut self, protocol: &mut ClientProtocol, now: Instant, m: Message) {
        if self.stateless(protocol) && !matches!(m, Message::Request(_)) {
            self.stateless_message(&m);
            return protocol.transmitted(m);
        }
        let body = m.to_bytes();
        let is_initialize = m.method() == Some("initialize");
        if self.auth.is_waiting() {
            // Everything waits for the authorization under way.
            self.auth.park_post(Parked {
                body,
                bounces: 0,
                resent: false,
            });
            return protocol.transmitted(m);
        }
        if self.session.renewing && !is_initialize {
            if matches!(m, Message::Response(_)) {
                // An answer to a server request of the session being replaced: the new
                // session never asked for it.
                let note = "an answer to a request of a lost session was not sent";
                self.notes.push_back(Event::http_note(note));
                return protocol.transmitted(m);
            }
            // New messages wait for the new session.
            let parked = Parked {
                body,
                bounces: 0,
                resent: false,
            };
            self.session.parked.push(parked);
            return protocol.transmitted(m);
        }
        self.post_attempt(protocol, now, body, m, false, 0);
    }

    /// POSTs one message (`body`, `m` encoded); `resent` when an earlier attempt never reached
    /// the server, `bounces` the 404s it met in sessions the server forgot.
    pub(super) fn post_attempt(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        body: Vec<u8>,
        m: Message,
        resent: bool,
        bounces: u8,
    ) {
        let is_initialize = m.method() == Some("initialize");
        let request = m.request_id();
        if !protocol.may_send(request) {
            // It ended while it waited (behind `notifications/initialized`, a renewal, an
            // authorization): it is dropped here, never sent.
            return protocol.transmitted(m);
        }
        let mut headers = if is_initialize {
            // The handshake goes without a session and before a version is agreed.
            let mut h = vec![(
                "Accept".to_string(),
                "application/json, text/event-stream".to_string(),
            )];
            self.configured.extend(&mut h, self.session.id.is_some());
            h
        } else {
            self.headers(protocol, false, self.session.id.as_deref())
        };
        headers.push(("Content-Type".into(), "application/json".into()));
        let (request, stateless) = match &m {
            Message::Request(r) if self.speaks_stateless(protocol, r) => {
                // No session in this era, not even one the configuration names.
                headers.retain(|(k, _)| !k.eq_ignore_ascii_case("mcp-session-id"));
                stateless::request_headers(r, protocol.tool_headers(), &mut headers);
                (r.id.as_i64(), true)
            }
            Message::Request(r) => (r.id.as_i64(), false),
            _ => (None, false),
        };
        let role = match m.method() {
            Some("initialize") => Role::Initialize,
            Some("server/discover") if protocol.era().is_none() => Role::Probe,
            _ => Role::Message,
        };
        let initialized = m.method() == Some("notifications/initialized");
        // Kept to send it once more: after a 404 in a lost session, an exchange that never
        // left, or a refusal for want of authorization (`initialize` included). The message
        // itself is kept, not a copy of its bytes: encoded again only if it is sent again.
        let kind = ExchangeKind::Post {
            request,
            replay: Some(m),
            bounces,
            role,
            stateless,
            resent,
        };
        let tag = self.session.tag().filter(|_| !is_initialize);
        let id = self.start_exchange(now, HttpMethod::Post, headers, body, kind, tag);
        if initialized {
            self.initialized
                .posted(Some("notifications/initialized"), id);
        }
    }

    /// Whether the POST of `notifications/initialized` still waits for its response head (an
    /// exchange with no head deadline is not waited for: nothing would end the wait).
    fn initialized_in_flight(&mut self) -> bool {
        let exchanges = &self.exchanges;
        self.initialized.holds(|id| {
            exchanges
                .get(&id)
                .is_some_and(|ex| ex.status.is_none() && ex.deadline.is_some())
        })
    }

    /// Opens a GET for `stream`, in the session it belongs to (one sent before any session,
    /// such as the `initialize` stream, belongs to the session in use).
    fn open_get(&mut self, protocol: &mut ClientProtocol, now: Instant, mut stream: Stream) {
        if self.auth.is_waiting() {
            return self.auth.park_get(stream);
        }
        if stream.session.is_none() {
            stream.session = self.session.tag();
        }
        let session = stream.session.as_ref().map(|t| &*t.id);
        let mut headers = self.headers(protocol, true, session);
        if let Some(id) = &stream.last_event_id {
            headers.push(("Last-Event-ID".into(), id.clone()));
        }
        let tag = stream.session.clone();
        let kind = ExchangeKind::Get { stream };
        self.start_exchange(now, HttpMethod::Get, headers, Vec::new(), kind, tag);
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
        let session_header = header(headers, "mcp-session-id");
        let content_type = header(headers, "content-type");
        let (challenges, challenge) = auth::challenges(headers);
        let max_event = self.config.max_event;
        let Some(ex) = self.exchanges.get_mut(&exchange) else {
            return;
        };
        ex.status = Some(status);
        ex.content_type = content_type.map(str::to_owned);
        ex.challenge = challenge;
        if (300..400).contains(&status) {
            ex.location = header(headers, "location").map(str::to_owned);
        }
        if self.refused_for_authorization(protocol, now, exchange, status, challenges) {
            return self.after_input(protocol, now);
        }
        let ex = self.exchanges.get_mut(&exchange).expect("present");
        let media = content_type.map(media_type);
        let ok = (200..300).contains(&status);
        let in_lost_session = status == 404 && ex.sent_in.is_some();
        let answered = match &mut ex.kind {
            // Answered: it is never sent again (only a request that never left, one refused for
            // want of authorization, taken above, or a 404 in a session the server forgot is).
            // The message goes back to the protocol before the body is read.
            ExchangeKind::Post { replay, .. } if !in_lost_session => replay.take(),
            _ => None,
        };
        if let Some(m) = answered {
            protocol.transmitted(m);
        }
        let ex = self.exchanges.get_mut(&exchange).expect("present");
        if let ExchangeKind::Post {
            role: Role::Initialize,
            request: Some(id),
            ..
        } = ex.kind
        {
            // Only the `initialize` still awaited brings the session: a late answer to one
            // given up (timed out, replaced) must not take the place of the current one.
            if ok && session_header.is_some() && protocol.is_pending(id) {
                let assigned = session_header.unwrap_or_default();
                if let Err(e) = crate::header::check_session_id(assigned) {
                    // An id HTTP cannot carry back: the session cannot be used.
                    return self.unusable_session(protocol, now, exchange, e);
                }
                self.session.id = session_header.map(Into::into);
            }
        }
        let ex = self.exchanges.get_mut(&exchange).expect("present");
        ex.body = Body::for_head(&ex.kind, status, media.as_deref(), max_event);
        let max_json = self.config.max_json_body;
        let declared = header(headers, "content-length").and_then(|v| v.trim().parse::<u64>().ok());
        if let (Body::Json(buf), Some(n)) = (&mut ex.body, declared) {
            // Sized once for the length the head declares (within the cap): a large answer is
            // not copied from buffer to doubled buffer, nor kept in one twice its size.
            if n <= max_json as u64 {
                buf.reserve_exact(n as usize);
            }
        }
        if matches!(ex.body, Body::Json(_)) && declared.is_some_and(|n| n > max_json as u64) {
            // Refused from its head: nothing of it is read.
            let reason = format!(
                "the JSON body's Content-Length ({}) is over the {max_json}-byte cap",
                declared.unwrap_or_default()
            );
            let e = ex.error(HttpErrorKind::TooLarge, reason, &[]);
            self.fail_exchange(protocol, now, exchange, e);
            self.abort(exchange);
            return self.after_input(protocol, now);
        }
        let post = matches!(ex.kind, ExchangeKind::Post { .. });
        let request = matches!(
            ex.kind,
            ExchangeKind::Post {
                request: Some(_),
                role: Role::Message,
                ..
            }
        );
        if ok && request {
            let tag = ex.sent_in.clone();
            self.session_held(tag.as_ref());
        } else if status == 404 && post && ex.sent_in.is_some() {
            // A 404 to a POST that carried a session: the server no longer knows it, whatever
            // the body says (the specification's MUST; a JSON-RPC error carrying the request's
            // own id included). The body is not read: it could only delay the renewal.
            return self.session_refused(protocol, now, exchange);
        }
        self.body_deadline(now, exchange);
        self.after_input(protocol, now);
    }

    /// A chunk of the body of `exchange`.
    pub fn handle_body(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        bytes: &[u8],
    ) {
        let max_json = self.config.max_json_body;
        let Some(ex) = self.exchanges.get_mut(&exchange) else {
            return;
        };
        match &mut ex.body {
            Body::Json(buf) => {
                if buf.len() + bytes.len() > max_json {
                    let e = self.exchanges[&exchange].error(
                        HttpErrorKind::TooLarge,
                        format!("JSON body over the {max_json}-byte cap"),
                        &[],
                    );
                    self.fail_exchange(protocol, now, exchange, e);
                    self.abort(exchange);
                    return;
                }
                buf.extend_from_slice(bytes);
            }
            Body::Sse(dec) => {
                dec.push(bytes);
                self.drain_sse(protocol, now, exchange);
            }
            Body::Error(buf) => {
                let room = crate::error::EXCERPT.saturating_sub(buf.len());
                buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
                if buf.len() >= crate::error::EXCERPT {
                    // The excerpt is full: the rest is not read.
                    self.actions.push_back(HttpAction::Abort(exchange));
                    return self.handle_end(protocol, now, exchange);
                }
            }
            Body::Waiting | Body::Ignored => {}
        }
        self.body_deadline(now, exchange);
        self.after_input(protocol, now);
    }

    /// Hands every message of a JSON body to the protocol; the tap sees the body as received.
    fn deliver_body(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        parsed: Parsed<Message>,
        body: &[u8],
    ) {
        if let Some(o) = self.observer.as_mut() {
            o.frame(Direction::Incoming, body);
        }
        hand_over(protocol, &mut self.notes, now, parsed);
    }

    /// The body of `exchange` ended.
    pub fn handle_end(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
    ) {
        let Some(mut ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        match std::mem::replace(&mut ex.body, Body::Ignored) {
            Body::Json(buf) if !(200..300).contains(&ex.status.unwrap_or(0)) => {
                if !self.refusal_ended(protocol, now, &ex, &buf) {
                    let reason = self
                        .configured
                        .status_reason(ex.status, ex.challenge.as_ref());
                    let err = ex.error(ex.status_kind(), reason, &buf);
                    self.fail_kind(protocol, now, &ex.kind, err);
                }
            }
            Body::Json(mut buf) => {
                match jsonrpc::parse(&buf) {
                    Ok(parsed) => {
                        if let Some(o) = self.observer.as_mut() {
                            o.frame(Direction::Incoming, &buf);
                        }
                        // The messages own their parts: a large body is let go before they are
                        // handed over (only its start is kept, for an error), so it is not
                        // still held while the caller reads the answer out of them.
                        if buf.len() > LARGE_BODY {
                            buf.truncate(crate::error::EXCERPT);
                            buf.shrink_to_fit();
                        }
                        hand_over(protocol, &mut self.notes, now, parsed);
                    }
                    Err(e) => {
                        let err = ex.error(
                            HttpErrorKind::BadBody,
                            format!("the JSON body is not a message: {e}"),
                            &buf,
                        );
                        self.fail_kind(protocol, now, &ex.kind, err);
                    }
                }
                // Routed by id: if the body did not answer the request, it never will. (The
                // error is made only then: most bodies answer it.)
                if ex.kind.awaiting().is_some_and(|id| protocol.is_pending(id)) {
                    let err = ex.error(
                        HttpErrorKind::BadBody,
                        "the JSON body held no response for the request".into(),
                        &buf,
                    );
                    self.fail_kind(protocol, now, &ex.kind, err);
                }
            }
            Body::Sse(mut dec) => {
                dec.finish();
                self.exchanges.insert(
                    exchange,
                    Exchange {
                        body: Body::Sse(dec),
                        ..ex
                    },
                );
                self.drain_sse(protocol, now, exchange);
                let ex = self.exchanges.remove(&exchange).expect("present");
                self.stream_ended(protocol, now, ex, None);
            }
            Body::Error(buf) => {
                let (kind, reason) = match (ex.status, &ex.content_type) {
                    (Some(200..=299), Some(ct)) => (
                        HttpErrorKind::ContentType,
                        format!("unexpected content type {ct}"),
                    ),
                    (Some(200..=299), None) => (
                        HttpErrorKind::ContentType,
                        "a response without a content type".into(),
                    ),
                    _ => (
                        ex.status_kind(),
                        self.configured
                            .status_reason(ex.status, ex.challenge.as_ref()),
                    ),
                };
                let err = ex.error(kind, reason, &buf);
                if self.refusal_ended(protocol, now, &ex, &buf)
                    || self.refused_like_an_sse_server(protocol, now, &ex, &buf)
                {
                    // The probe or `initialize`, refused by an older server.
                } else if let ExchangeKind::Get { stream } = &ex.kind {
                    self.standalone_or_resume_refused(protocol, now, stream.clone(), err);
                } else if !matches!(ex.kind, ExchangeKind::Post { request: None, .. }) {
                    self.fail_kind(protocol, now, &ex.kind, err);
                } else {
                    self.notes.push_back(Event::http_note(err.to_string()));
                }
            }
            Body::Ignored | Body::Waiting => {
                if let ExchangeKind::Post {
                    request: Some(_), ..
                } = ex.kind
                {
                    let err = ex.error(
                        HttpErrorKind::BadBody,
                        "no response body for a request".into(),
                        &[],
                    );
                    self.fail_kind(protocol, now, &ex.kind, err);
                }
            }
        }
        self.after_input(protocol, now);
    }

    /// After an input or a command: a finished renewal releases what waited for it; then what
    /// the protocol wants sent goes.
    pub fn after_input(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        self.settle(protocol, now);
        self.flush(protocol, now);
        while let Some((exchange, failure)) = self.unsendable.pop() {
            // Never handed to the backend: it ends as a request that did not leave.
            self.handle_unsent(protocol, now, exchange, &failure);
        }
    }

    fn abort(&mut self, exchange: ExchangeId) {
        self.exchanges.remove(&exchange);
        self.actions.push_back(HttpAction::Abort(exchange));
    }

    /// The next exchange to start or abort. The tap sees a message as its POST is handed out
    /// (a message waiting for a new session is not sent yet; one sent once more is seen again).
    pub fn poll_action(&mut self) -> Option<HttpAction> {
        let action = self.actions.pop_front()?;
        tap_outgoing(self.observer.as_deref_mut(), &action);
        Some(action)
    }

    /// The next HTTP-level note for the application.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.notes.pop_front()
    }

    /// The earliest deadline of the exchanges: a head's or a body's, a resume's, the close's.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let close = self.close_deadline.filter(|_| !self.exchanges.is_empty());
        [self.resumes.next_at(), close, self.next_exchange_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Fires what is due: request deadlines, and resumes whose wait is over.
    pub fn handle_timeout(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        if self.close_deadline.is_some_and(|t| t <= now) {
            // The grace is over: whatever is still in flight, the DELETE included, is given up.
            self.close_deadline = None;
            self.delete_when_drained = false;
            let mut ids: Vec<ExchangeId> = self.exchanges.keys().copied().collect();
            ids.sort_unstable();
            for id in ids {
                self.abort(id);
            }
        }
        self.fire_exchange_deadlines(protocol, now);
        protocol.handle_timeout(now);
        let held = protocol.take_held_timeout();
        let holding = self.initialized_in_flight();
        self.initialized.held_timed_out(holding, held);
        for stream in self.resumes.take_due(now) {
            let still_due =
                stream.standalone || stream.awaiting.is_some_and(|id| protocol.is_pending(id));
            if still_due && !self.closing {
                self.open_get(protocol, now, stream);
            }
        }
        self.after_input(protocol, now);
    }
}
