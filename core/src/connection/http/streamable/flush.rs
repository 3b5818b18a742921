//! What goes out: the protocol's messages as POSTs (or parked while a session or an
//! authorization is awaited), the standalone GET stream, and the close with its DELETE.

use std::time::Instant;

use super::exchange::{Exchange, ExchangeKind, Role, SessionTag, Standalone, Stream};
use super::stateless::request_headers;
use super::{Parked, StreamableHttp};
use crate::connection::http::initialized::BEHIND as INITIALIZED_BEHIND;
use crate::connection::http::{
    unsendable, ExchangeId, HttpAction, HttpMethod, HttpRequest, CLOSE_GRACE,
};
use crate::connection::protocol::client::ClientProtocol;
use crate::connection::protocol::vocabulary::events::Event;
use crate::connection::protocol::ChosenEra;
use crate::jsonrpc::Message;

impl StreamableHttp {
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
    pub(super) fn delete_if_drained(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        if !self.delete_when_drained || !self.exchanges.is_empty() {
            return;
        }
        self.delete_when_drained = false;
        let headers = self.headers(protocol, false, self.session.id.as_deref());
        let kind = ExchangeKind::Delete;
        let tag = self.session.tag();
        self.start_exchange(now, HttpMethod::Delete, headers, Vec::new(), kind, tag);
    }

    /// The headers of every request: ours, the session, the negotiated version, the configured.
    pub(super) fn headers(
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

    pub(super) fn start_exchange(
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
        match unsendable(&request) {
            Some(failure) => self.unsendable.push((id, failure)),
            None => self.actions.push_back(HttpAction::Start(request)),
        }
        id
    }

    /// Moves what the protocol wants sent into POST exchanges, and opens the standalone stream
    /// once the handshake is done.
    pub(super) fn flush(&mut self, protocol: &mut ClientProtocol, now: Instant) {
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
    pub(super) fn flush_one(&mut self, protocol: &mut ClientProtocol, now: Instant, m: Message) {
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
                request_headers(r, protocol.tool_headers(), &mut headers);
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
    pub(super) fn initialized_in_flight(&mut self) -> bool {
        let exchanges = &self.exchanges;
        self.initialized.holds(|id| {
            exchanges
                .get(&id)
                .is_some_and(|ex| ex.status.is_none() && ex.deadline.is_some())
        })
    }

    /// Opens a GET for `stream`, in the session it belongs to (one sent before any session,
    /// such as the `initialize` stream, belongs to the session in use).
    pub(super) fn open_get(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        mut stream: Stream,
    ) {
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
}
