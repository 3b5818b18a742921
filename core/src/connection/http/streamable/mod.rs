//! Streamable HTTP (2025-03-26 and later, both eras): the exchange machine, with no IO.
//!
//! [`StreamableHttp`] turns the client protocol's messages into HTTP exchanges and the responses back
//! into messages. Every message is a POST; the server's messages come back on the POST's
//! response (one JSON body, or an SSE stream) and on the optional standalone GET stream.
//! Messages are routed by JSON-RPC id, never by the stream or position they came on, and a
//! server request is handed to the application the moment it is decoded, from any stream.
//!
//! This file holds the machine's state (the exchanges, the session, the authorization) and its
//! outputs; each of its concerns extends it from a file of its own: what goes out
//! ([`flush`]), what comes back ([`responses`]), the SSE streams ([`streams`]), failures,
//! deadlines, the session's renewal, authorization, the stateless era, and the move to the
//! HTTP+SSE transport.

mod auth;
mod exchange;
mod failures;
mod flush;
mod responses;
mod resume;
mod session;
mod stateless;
mod streams;
mod switch;
mod timeouts;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use exchange::{Exchange, SessionTag, Standalone, Stream};
use resume::Resumes;

use super::headers::Headers;
use super::initialized::InitializedGate;
use super::options::HttpOptions;
use super::request::{tap_outgoing, ExchangeId, HttpAction};
use crate::connection::protocol::client::ClientProtocol;
use crate::connection::protocol::vocabulary::events::Event;
use crate::error::{AuthorizationRequired, ExchangeFailure, HttpError};
use crate::tap::FrameObserver;

/// The client protocol over Streamable HTTP (both eras).
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
    auth: Auth,
    /// Exchanges whose request cannot go as it is (a header no backend may be handed): never
    /// handed out, each ends as a request that did not leave.
    unsendable: Vec<(ExchangeId, ExchangeFailure)>,
}

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
        let auth = Auth::new(options.authorization);
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

    /// Whether the connection is closed and nothing is left in flight (what is still in flight
    /// when [`CLOSE_GRACE`] has passed is given up).
    pub fn is_finished(&self) -> bool {
        self.closing && self.exchanges.is_empty()
    }

    /// After an input or a command: a finished renewal releases what waited for it; then what
    /// the protocol wants sent goes.
    pub fn after_input(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        loop {
            self.settle(protocol, now);
            self.flush(protocol, now);
            let Some((exchange, failure)) = self.unsendable.pop() else {
                return;
            };
            // Never handed to the backend: it ends as a request that did not leave (and what
            // that ending queued goes on the next turn).
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
    }
}

/// Where the session stands.
#[derive(Debug, Default)]
pub(crate) struct Session {
    /// The id the server assigned, if any.
    pub(crate) id: Option<Arc<str>>,
    /// Bumped each time the server forgets a session.
    pub(crate) generation: u64,
    /// A new session is being made: new messages wait for it.
    pub(crate) renewing: bool,
    /// Renewals started since a request last succeeded in a session.
    pub(crate) in_a_row: u32,
    /// How the last renewal failed, for the reason of giving up.
    pub(crate) last_failure: Option<String>,
    /// Messages waiting for the new session.
    pub(crate) parked: Vec<Parked>,
}

/// A message waiting for the new session.
#[derive(Debug)]
pub(crate) struct Parked {
    pub(crate) body: Vec<u8>,
    /// The renewals it started (see [`MAX_BOUNCES`]).
    pub(crate) bounces: u8,
    /// Whether it was already sent once more because an attempt never left.
    pub(crate) resent: bool,
}

impl Session {
    /// The tag of an exchange sent now, when it carries the session.
    pub(crate) fn tag(&self) -> Option<SessionTag> {
        self.id.as_ref().map(|id| SessionTag {
            id: id.clone(),
            generation: self.generation,
        })
    }

    /// Whether `tag` is the session in use now.
    pub(crate) fn is_current(&self, tag: &SessionTag) -> bool {
        tag.generation == self.generation && !self.renewing
    }
}

/// Where authorization stands.
#[derive(Debug, Default)]
pub(crate) struct Auth {
    /// Whether a refusal parks the request and asks the driver (else it ends the request).
    pub(crate) enabled: bool,
    /// The `Authorization` value of every request, once a token is set.
    pub(crate) header: Option<String>,
    /// Bumped with each token: the token an exchange went with.
    pub(crate) generation: u64,
    /// An authorization is under way: what waits for it, and the refusal that started it.
    waiting: Option<Waiting>,
}

#[derive(Debug)]
struct Waiting {
    refusal: AuthorizationRequired,
    parked: Vec<AuthParked>,
}

/// What waits for the authorization.
#[derive(Debug)]
enum AuthParked {
    Post(Parked),
    Get(Stream),
}

impl Auth {
    /// No token yet; `enabled`: whether refusals park requests.
    pub(crate) fn new(enabled: bool) -> Auth {
        Auth {
            enabled,
            ..Auth::default()
        }
    }

    /// Whether requests wait for an authorization.
    pub(crate) fn is_waiting(&self) -> bool {
        self.waiting.is_some()
    }

    /// Keeps a message until the authorization ends.
    pub(crate) fn park_post(&mut self, parked: Parked) {
        if let Some(w) = self.waiting.as_mut() {
            w.parked.push(AuthParked::Post(parked));
        }
    }

    /// Keeps a stream to open until the authorization ends.
    pub(crate) fn park_get(&mut self, stream: Stream) {
        if let Some(w) = self.waiting.as_mut() {
            w.parked.push(AuthParked::Get(stream));
        }
    }

    /// Forgets what waits (the connection closes).
    pub(crate) fn clear(&mut self) {
        self.waiting = None;
    }
}
