//! Authorization as one state of the HTTP machine: a `401` (or a `403` with
//! `error="insufficient_scope"`) parks the request that met it, and the driver is asked, once,
//! to authorize ([`AuthorizationRequired`]). Until it answers, new messages wait with the parked
//! ones. With a token ([`StreamableHttp::set_access_token`]) each waits no more: it goes again, a
//! request with its own JSON-RPC id (it was refused, never executed), in the session in use;
//! with a refusal ([`StreamableHttp::authorization_failed`]) each request ends with the error.
//!
//! The token goes as `Authorization: Bearer …` on every request (POST, GET, DELETE), in place
//! of any configured `Authorization` header. Each exchange remembers which token it went with:
//! a `401` to one sent before the current token is no news, and it goes once more with the
//! current one without asking the driver again (one authorization however many requests met
//! the refusal).

use std::time::Instant;

use super::exchange::{Exchange, ExchangeKind};
use super::{AuthParked, Parked, StreamableHttp, Waiting};
use crate::connection::http::challenge::{asks_for_authorization, end_waiting};
use crate::connection::http::ExchangeId;
use crate::connection::protocol::client::ClientProtocol;
use crate::connection::protocol::vocabulary::events::Event;
use crate::error::AuthorizationRequired;

impl Exchange {
    /// What a POST or GET must carry to be sent again: its body or its stream.
    fn into_parked(self) -> Option<AuthParked> {
        match self.kind {
            ExchangeKind::Post {
                replay: Some(m),
                bounces,
                ..
            } => Some(AuthParked::Post(Parked {
                body: m.to_bytes(),
                bounces,
                resent: false,
            })),
            ExchangeKind::Get { stream } => Some(AuthParked::Get(stream)),
            _ => None,
        }
    }
}

impl StreamableHttp {
    /// Whether `exchange`'s head (`status`, with these `WWW-Authenticate` values) refuses it for
    /// want of authorization and authorization is on: then it is parked (and aborted) and, unless
    /// an authorization is under way or the exchange went with an older token, the driver is
    /// asked to authorize. Returns whether it was taken.
    pub(super) fn refused_for_authorization(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        status: u16,
        challenges: Vec<String>,
    ) -> bool {
        let Some(ex) = self.exchanges.get(&exchange) else {
            return false;
        };
        if !self.auth.enabled
            || self.closing
            || protocol.is_closed()
            || !asks_for_authorization(status, ex.challenge.as_ref(), &challenges)
            || matches!(ex.kind, ExchangeKind::Delete)
        {
            return false;
        }
        let stale = ex.auth_generation < self.auth.generation;
        let challenge = ex.challenge.clone();
        let ex = self.exchanges.remove(&exchange).expect("present");
        self.actions
            .push_back(crate::connection::http::HttpAction::Abort(exchange));
        let Some(parked) = ex.into_parked() else {
            return true;
        };
        if stale && !self.auth.is_waiting() {
            // Sent before the current token: it goes again with it.
            self.release(protocol, now, parked);
            return true;
        }
        if !self.auth.is_waiting() {
            let refusal = AuthorizationRequired {
                status,
                url: self.shown_url.to_string(),
                challenges,
                challenge,
            };
            let note = Event::AuthorizationRequired(Box::new(refusal.clone()));
            self.notes.push_back(note);
            self.auth.waiting = Some(Waiting {
                refusal,
                parked: Vec::new(),
            });
        }
        match parked {
            AuthParked::Post(p) => self.auth.park_post(p),
            AuthParked::Get(s) => self.auth.park_get(s),
        }
        true
    }

    /// The driver authorized: `token` goes on every request from now on, and what waited is
    /// sent again.
    pub fn set_access_token(&mut self, protocol: &mut ClientProtocol, now: Instant, token: &str) {
        self.auth.header = Some(format!("Bearer {token}"));
        self.configured.set_authorization(self.auth.header.clone());
        self.auth.generation += 1;
        if protocol.is_closed() {
            // The connection ended while it waited: nothing goes any more.
            self.auth.clear();
        }
        if let Some(waiting) = self.auth.waiting.take() {
            for parked in waiting.parked {
                self.release(protocol, now, parked);
            }
        }
    }

    /// The driver could not authorize: every request that waited ends with the refusal that
    /// started it and `reason`; messages that are not requests are dropped, with a note.
    pub fn authorization_failed(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        reason: &str,
    ) {
        let Some(waiting) = self.auth.waiting.take() else {
            return;
        };
        let requests = waiting.parked.iter().filter_map(|parked| match parked {
            AuthParked::Post(p) => Some(request_id(&p.body)),
            AuthParked::Get(_) => None,
        });
        end_waiting(
            protocol,
            now,
            &mut self.notes,
            &waiting.refusal,
            reason,
            requests,
        );
    }

    /// Sends what waited for the authorization: a message in the session in use (or the next
    /// one, when it is being made), a stream if it is still wanted.
    fn release(&mut self, protocol: &mut ClientProtocol, now: Instant, parked: AuthParked) {
        match parked {
            AuthParked::Post(p) => self.park_or_send(protocol, now, p),
            AuthParked::Get(stream) => {
                // The standalone stream belongs to its session: once that session is lost, the
                // new session opens its own.
                let current = match &stream.session {
                    Some(tag) => self.session.is_current(tag),
                    None => self.session.id.is_none() && !self.session.renewing,
                };
                let wanted = (stream.standalone && current)
                    || stream.awaiting.is_some_and(|id| protocol.is_pending(id));
                if wanted && !self.closing {
                    self.open_get(protocol, now, stream);
                }
            }
        }
    }
}

/// The id of the request a parked body holds, if it holds one.
fn request_id(body: &[u8]) -> Option<i64> {
    match crate::jsonrpc::parse(body) {
        Ok(crate::jsonrpc::Parsed::Single(crate::jsonrpc::Message::Request(r))) => r.id.as_i64(),
        _ => None,
    }
}
