//! The exchange-level deadlines: a response head that does not come, a body whose bytes stop.
//!
//! A request's own answer is bounded by its call's deadlines (a server may hold the head of a
//! JSON answer as long as the tool runs), so the head timeout covers the exchanges that answer
//! nobody's call: notifications and responses POSTed (a 202 is due at once), GET streams and the
//! session's DELETE. The idle timeout covers the bodies read whole (JSON and error bodies) from
//! the head on; an SSE stream may be silent for as long as its calls run, so it has none.

use std::time::{Duration, Instant};

use super::exchange::{Body, ExchangeKind};
use super::StreamableHttp;
use crate::connection::http::ExchangeId;
use crate::connection::protocol::client::ClientProtocol;
use crate::error::{ExchangeFailure, HttpErrorKind};

/// How long the body of an error status is read for its excerpt, from its head: the status is
/// the news, and a server that dribbles or never ends its error body must not hold the request
/// until its own deadline.
pub(crate) const EXCERPT_WAIT: Duration = Duration::from_secs(1);

impl StreamableHttp {
    /// The head deadline for a new exchange of this kind, if it has one.
    pub(super) fn head_deadline(
        &self,
        now: Instant,
        kind: &ExchangeKind,
    ) -> Option<(Instant, HttpErrorKind)> {
        let timed = match kind {
            ExchangeKind::Post { request, .. } => request.is_none(),
            ExchangeKind::Get { .. } | ExchangeKind::Delete => true,
        };
        let at = now + self.config.head_timeout.filter(|_| timed)?;
        Some((at, HttpErrorKind::HeadTimeout))
    }

    /// After a head or a body chunk of `exchange`: a body read whole must keep its bytes
    /// coming; any other has no deadline of its own.
    pub(super) fn body_deadline(&mut self, now: Instant, exchange: ExchangeId) {
        let idle = self.config.body_idle_timeout;
        let Some(ex) = self.exchanges.get_mut(&exchange) else {
            return;
        };
        ex.deadline = match (&ex.body, idle) {
            // Counted from the head, never moved by the bytes that come.
            (Body::Error(_), _) if matches!(ex.deadline, Some((_, HttpErrorKind::Status))) => {
                ex.deadline.take()
            }
            (Body::Error(_), idle) => {
                let wait = idle.map_or(EXCERPT_WAIT, |i| i.min(EXCERPT_WAIT));
                Some((now + wait, HttpErrorKind::Status))
            }
            (Body::Json(_), Some(idle)) => Some((now + idle, HttpErrorKind::BodyTimeout)),
            _ => None,
        };
    }

    /// The earliest exchange deadline.
    pub(super) fn next_exchange_deadline(&self) -> Option<Instant> {
        self.exchanges
            .values()
            .filter_map(|ex| ex.deadline.as_ref().map(|(at, _)| *at))
            .min()
    }

    /// Ends the exchanges whose deadline has passed, as failures of that kind: the driver is
    /// told to abort them.
    pub(super) fn fire_exchange_deadlines(&mut self, protocol: &mut ClientProtocol, now: Instant) {
        let mut due: Vec<(ExchangeId, HttpErrorKind)> = self
            .exchanges
            .iter()
            .filter_map(|(id, ex)| match &ex.deadline {
                Some((at, kind)) if *at <= now => Some((*id, kind.clone())),
                _ => None,
            })
            .collect();
        // In the order they started.
        due.sort_unstable_by_key(|(id, _)| *id);
        self.holding = true;
        for (id, kind) in due {
            if !self.exchanges.contains_key(&id) {
                // Ended by an earlier one's failure (its request's end aborts it).
                continue;
            }
            if kind == HttpErrorKind::Status {
                // An error status's excerpt has been read long enough: the status is reported
                // with what came of its body.
                self.actions
                    .push_back(crate::connection::http::HttpAction::Abort(id));
                self.handle_end(protocol, now, id);
                continue;
            }
            let message = match kind {
                HttpErrorKind::HeadTimeout => format!(
                    "no response head within {:?}",
                    self.config.head_timeout.unwrap_or_default()
                ),
                _ => format!(
                    "no body bytes within {:?}",
                    self.config.body_idle_timeout.unwrap_or_default()
                ),
            };
            self.actions
                .push_back(crate::connection::http::HttpAction::Abort(id));
            self.handle_failure(protocol, now, id, &ExchangeFailure::new(kind, message));
        }
        self.holding = false;
    }
}
