//! The session of the handshake era, and its renewal as one state of the HTTP machine.
//!
//! Every exchange remembers the session it was sent in ([`SessionTag`]: the id and a
//! generation, bumped each time a session is lost). A 404 to a POST sent in the current session
//! means the server forgot it: one new session is made, new messages wait for it, and the
//! request that met the 404 is sent once more on it, since a 404 means it was not processed. A
//! 404 to a request sent in an older session, or during the renewal, is sent once more too and
//! starts nothing. Exchanges still open on their own streams finish on their own: their answers
//! route by id as always. A resume of an old session's stream that the server refuses ends that
//! one call as expired. Renewals that do not hold have a budget; when it is spent the
//! connection closes with [`LocalError::SessionRenewalFailed`] and every pending call ends.

use std::time::Instant;

use super::exchange::{Exchange, ExchangeKind, SessionTag, Standalone};
use super::{Parked, StreamableHttp};
use crate::connection::http::ExchangeId;
use crate::connection::protocol::client::{ClientProtocol, Signalled, TransportSignal};
use crate::connection::protocol::vocabulary::events::Event;
use crate::error::HttpErrorKind;
use crate::jsonrpc::{self, Parsed};
use crate::rpc::LocalError;

/// How many renewals one request may start by being the first to meet a 404 in the current
/// session: a request the server refuses every time must not renew sessions for everyone
/// until its deadline. Which 404 of a lost session arrives first is a matter of timing, so
/// the bound is generous. A 404 in a session already lost costs nothing: a renewal is under
/// way, and the request goes once more in the new session, until its own deadline.
pub(crate) const MAX_BOUNCES: u8 = 10;

impl StreamableHttp {
    /// A 2xx head for a request sent in `tag`'s session: the session works.
    pub(super) fn session_held(&mut self, tag: Option<&SessionTag>) {
        if tag.is_some_and(|t| self.session.is_current(t)) {
            self.session.in_a_row = 0;
            self.session.last_failure = None;
        }
    }

    /// A 404 to `exchange`, which was sent with a session: the server does not know it.
    pub(super) fn session_refused(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
    ) {
        let Some(ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        self.actions
            .push_back(crate::connection::http::HttpAction::Abort(exchange));
        if ex
            .sent_in
            .as_ref()
            .is_some_and(|t| self.session.is_current(t))
        {
            let note = format!(
                "HTTP 404 from {} to a POST in the session: the server no longer knows it, \
                 a new session is made",
                ex.url
            );
            self.notes.push_back(Event::http_note(note));
        }
        self.refused_in_session(protocol, now, ex);
    }

    /// What a 404 in a session means for the exchange that met it (already removed).
    pub(super) fn refused_in_session(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        ex: Exchange,
    ) {
        let Some(tag) = ex.sent_in else { return };
        // Whether this 404 is the one that finds the session lost (and starts a renewal).
        let first = self.session.is_current(&tag);
        self.session_lost(protocol, now, &tag);
        if self.closing {
            return;
        }
        match ex.kind {
            // Not processed: it may go once more, on the new session.
            ExchangeKind::Post {
                request: Some(id),
                replay: Some(body),
                bounces,
                ..
            } if (bounces < MAX_BOUNCES || !first) && protocol.is_pending(id) => {
                let bounces = bounces + u8::from(first);
                self.park_or_send(
                    protocol,
                    now,
                    Parked {
                        body: body.to_bytes(),
                        bounces,
                        resent: false,
                    },
                )
            }
            ExchangeKind::Post {
                request: Some(id), ..
            } => self.expired(protocol, now, id),
            ExchangeKind::Post { request: None, .. } => {
                let note = "a message sent in a session the server no longer knows was dropped";
                self.notes.push_back(Event::http_note(note));
            }
            ExchangeKind::Get { .. } | ExchangeKind::Delete => {}
        }
    }

    /// The server forgot the session `tag` names: if it is the current one, a renewal starts.
    fn session_lost(&mut self, protocol: &mut ClientProtocol, now: Instant, tag: &SessionTag) {
        if !self.session.is_current(tag) || self.closing {
            return;
        }
        self.session.generation += 1;
        self.session.id = None;
        self.renew(protocol, now);
    }

    /// Starts a renewal, or gives up when the budget of renewals in a row is spent.
    fn renew(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        if self.session.in_a_row >= self.config.renewal_budget {
            let reason = self.session.last_failure.clone().unwrap_or_else(|| {
                "each new session was lost before a request succeeded in it".into()
            });
            return self.give_up(protocol, now, reason);
        }
        self.session.in_a_row += 1;
        self.session.renewing = true;
        // The standalone stream belonged to the lost session; it opens again on the new one.
        let standalone: Vec<ExchangeId> = self
            .exchanges
            .iter()
            .filter(|(_, e)| matches!(&e.kind, ExchangeKind::Get { stream } if stream.standalone))
            .map(|(id, _)| *id)
            .collect();
        for id in standalone {
            self.abort(id);
        }
        self.resumes.drop_standalone();
        self.standalone = Standalone::NotYet;
        let signal = TransportSignal::SessionLost;
        if protocol.handle_transport(now, signal) != Signalled::Done {
            self.session.renewing = false;
            self.give_up(
                protocol,
                now,
                "the connection cannot make a new session".into(),
            );
        }
    }

    /// After each input: a renewal that finished releases what waited for it; one that failed
    /// is tried again within the budget.
    pub(super) fn settle(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        if !self.session.renewing || protocol.is_renewing() {
            return;
        }
        self.session.renewing = false;
        if let Some(failure) = protocol.take_renewal_failure() {
            self.session.last_failure = Some(failure.to_string());
            if !protocol.is_closed() {
                self.renew(protocol, now);
            }
            return;
        }
        // `notifications/initialized` goes first, then what waited.
        self.flush(protocol, now);
        for parked in std::mem::take(&mut self.session.parked) {
            self.send_parked(protocol, now, parked);
        }
    }

    /// Sends a message on the session, or keeps it until the new one is made.
    pub(super) fn park_or_send(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        parked: Parked,
    ) {
        if self.session.renewing {
            self.session.parked.push(parked);
        } else {
            self.send_parked(protocol, now, parked);
        }
    }

    /// Sends a message that waited: a request only if its caller still waits.
    fn send_parked(&mut self, protocol: &mut ClientProtocol, now: Instant, parked: Parked) {
        let Ok(Parsed::Single(m)) = jsonrpc::parse(&parked.body) else {
            return;
        };
        // `initialize` waits only for an authorization.
        self.post_attempt(protocol, now, parked.body, m, parked.resent, parked.bounces);
    }

    /// The server assigned a session id that cannot be sent back (see
    /// [`check_session_id`](crate::header::check_session_id)): the handshake fails with the
    /// error naming the header, or, when it came with a renewal, the connection ends.
    pub(super) fn unusable_session(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        error: crate::header::HeaderError,
    ) {
        let Some(ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        self.actions
            .push_back(crate::connection::http::HttpAction::Abort(exchange));
        let reason = format!("the server assigned a session id that cannot be used: {error}");
        if self.session.renewing {
            self.give_up(protocol, now, reason);
        } else {
            let err = ex.error(HttpErrorKind::Header(error), reason, &[]);
            self.fail_kind(protocol, now, &ex.kind, err);
        }
    }

    /// The session cannot be renewed: the connection closes, every pending call ends.
    fn give_up(&mut self, protocol: &mut ClientProtocol, now: Instant, reason: String) {
        let error = LocalError::SessionRenewalFailed {
            attempts: self.session.in_a_row,
            reason: reason.into(),
        };
        self.session.parked.clear();
        protocol.handle_transport(now, TransportSignal::Ended(error));
        // Closed as by the application: what the close queues still goes within the grace.
        self.closing = true;
        self.close_deadline = Some(now + crate::connection::http::CLOSE_GRACE);
        let mut ids: Vec<ExchangeId> = self.exchanges.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            self.abort(id);
        }
        self.resumes.take_all();
    }

    /// Request `rid`'s answer was due in a session the server forgot: it ends as expired
    /// (never sent again: it may have run).
    pub(super) fn expired(&mut self, protocol: &mut ClientProtocol, now: Instant, rid: i64) {
        let signal = TransportSignal::RequestLost {
            id: rid,
            error: LocalError::SessionExpired,
        };
        protocol.handle_transport(now, signal);
    }
}
