//! When an exchange fails: after its request may have gone out (at most once decides what
//! happens to its call), or before any byte of it left (it may go once more).

use std::time::Instant;

use super::exchange::{Body, ExchangeKind, Role};
use super::Parked;
use super::StreamableHttp;
use crate::connection::http::ExchangeId;
use crate::connection::protocol::client::{ClientProtocol, TransportSignal};
use crate::connection::protocol::vocabulary::events::Event;
use crate::error::{ExchangeFailure, HttpError, HttpErrorKind};
use crate::rpc::LocalError;

impl StreamableHttp {
    /// The exchange failed (connection refused or reset, a body cut short).
    pub fn handle_failure(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        failure: &ExchangeFailure,
    ) {
        let reason = failure.message.as_str();
        let Some(ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        if self.initialized.is_gate(exchange)
            && ex.status.is_none()
            && failure.kind == HttpErrorKind::HeadTimeout
        {
            // The server never answered the notification: what waited behind it never left,
            // and it ends, saying why (sending it now would only race its own deadline).
            // Timed out as a request that waited behind it does: one kind, whichever deadline
            // passed first.
            let why = format!("the server never answered notifications/initialized ({reason})");
            protocol.fail_unsent(now, &why, Some(crate::rpc::Deadline::Idle));
        }
        if ex.status == Some(407) {
            // A proxy's refusal whose body was cut: the request never reached the server.
            let err = ex.error(ex.status_kind(), reason.to_owned(), &[]);
            self.fail_kind(protocol, now, &ex.kind, err);
            return;
        }
        match &ex.body {
            Body::Sse(_) => self.stream_ended(protocol, now, ex, Some(reason)),
            _ => {
                let mut err = ex.error(failure.kind.clone(), reason.to_owned(), &[]);
                err.hint = failure.hint.clone();
                match &ex.kind {
                    ExchangeKind::Get { stream } if stream.standalone => {
                        self.schedule_resume(protocol, now, stream.clone())
                    }
                    ExchangeKind::Get { stream } => {
                        self.schedule_resume(protocol, now, stream.clone())
                    }
                    // The POST may have reached the server: at most once decides.
                    ExchangeKind::Post {
                        request: Some(id), ..
                    } => {
                        let id = *id;
                        let reason = err.to_string().into();
                        let http = Some(Box::new(err));
                        let signal = TransportSignal::LostAfterSending { id, reason, http };
                        protocol.handle_transport(now, signal);
                    }
                    kind => {
                        if matches!(kind, ExchangeKind::Post { request: None, .. }) {
                            self.notes.push_back(Event::http_note(err.to_string()));
                        }
                        self.fail_kind(protocol, now, kind, err)
                    }
                }
            }
        }
    }

    /// `exchange`'s request never reached the server: no connection could be made, no byte of
    /// it was sent. That is no repeat: it is sent once more on a new exchange; if that fails so
    /// too, its request ends with the HTTP error.
    pub fn handle_unsent(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        failure: &ExchangeFailure,
    ) {
        let (again, bounces) = match self.exchanges.get(&exchange).map(|ex| &ex.kind) {
            Some(ExchangeKind::Post {
                replay: Some(body),
                resent: false,
                bounces,
                role,
                ..
            }) if !self.closing && *role != Role::Initialize => (body.to_bytes(), *bounces),
            Some(_) => return self.unsent_for_good(protocol, now, exchange, failure),
            None => return,
        };
        self.exchanges.remove(&exchange);
        // A request that ended meanwhile is dropped where it is sent (at most once).
        // Once more, in the session in use (or the next one, when it is being made).
        let parked = Parked {
            body: again,
            bounces,
            resent: true,
        };
        self.park_or_send(protocol, now, parked);
    }

    /// A request that could not be sent ends with the HTTP error (a GET is resumed later).
    fn unsent_for_good(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        failure: &ExchangeFailure,
    ) {
        let Some(ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        let reason = format!("not sent: {}", failure.message);
        let mut err = ex.error(failure.kind.clone(), reason, &[]);
        err.hint = failure.hint.clone();
        match &ex.kind {
            ExchangeKind::Get { stream } => self.schedule_resume(protocol, now, stream.clone()),
            ExchangeKind::Post { request: None, .. } => {
                self.notes.push_back(Event::http_note(err.to_string()))
            }
            kind => self.fail_kind(protocol, now, kind, err),
        }
    }

    pub(super) fn fail_exchange(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        err: HttpError,
    ) {
        if let Some(ex) = self.exchanges.remove(&exchange) {
            self.fail_kind(protocol, now, &ex.kind, err);
        }
    }

    /// Ends the request an exchange carried (if it is still pending) with `err`.
    pub(super) fn fail_kind(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        kind: &ExchangeKind,
        err: HttpError,
    ) {
        if let Some(id) = kind.awaiting() {
            if protocol.is_pending(id) {
                protocol.handle_transport(
                    now,
                    TransportSignal::RequestLost {
                        id,
                        error: LocalError::Http(Box::new(err)),
                    },
                );
            }
        }
    }
}
