//! The SSE streams of the exchanges: each message handed to the protocol the moment it is
//! decoded, and a stream that ends or drops resumed with `Last-Event-ID` when the server made
//! that possible (or its request ended by the at-most-once rule when not).

use std::time::Instant;

use super::exchange::{Body, Exchange, ExchangeKind, Standalone, Stream};
use super::StreamableHttp;
use crate::codec::sse::SseItem;
use crate::connection::http::ExchangeId;
use crate::connection::protocol::client::{ClientProtocol, TransportSignal};
use crate::connection::protocol::vocabulary::events::{Diagnostic, Event};
use crate::error::HttpError;
use crate::rpc::LocalError;
use crate::tap::Direction;

/// An event id to resume from, when it can go back as `Last-Event-ID`. One HTTP cannot carry
/// (a control or non-ASCII character) leaves the stream with nothing to resume from: resuming
/// from an earlier id would replay what was already handled.
fn resumable(id: &str) -> Option<String> {
    crate::header::check("Last-Event-ID", id)
        .ok()
        .map(|()| id.to_owned())
}

impl StreamableHttp {
    /// Hands each message decoded from an SSE exchange to the protocol, at once.
    pub(super) fn drain_sse(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
    ) {
        loop {
            let Some(ex) = self.exchanges.get_mut(&exchange) else {
                return;
            };
            let (Body::Sse(dec), kind) = (&mut ex.body, &mut ex.kind) else {
                return;
            };
            let observer = &mut self.observer;
            let tap = |data: &[u8]| {
                if let Some(o) = observer.as_mut() {
                    o.frame(Direction::Incoming, data);
                }
            };
            let Some(item) = dec.next_item_observed(tap) else {
                return;
            };
            // A GET's stream keeps what a resume needs as it goes; a POST's is read at its end.
            if let ExchangeKind::Get { stream } = kind {
                if !dec.last_event_id().is_empty() {
                    stream.last_event_id = resumable(dec.last_event_id());
                }
                if dec.retry().is_some() {
                    stream.retry_ms = dec.retry();
                }
            }
            match item {
                SseItem::Message(m) => {
                    if let ExchangeKind::Get { stream } = kind {
                        stream.budget = self.config.resume_budget;
                        stream.attempts = 0;
                    }
                    protocol.handle_message(now, m);
                }
                SseItem::Diagnostic(d) => {
                    self.notes.push_back(Event::Diagnostic(Diagnostic::Sse(d)))
                }
            }
        }
    }

    /// An SSE stream ended or dropped: resume it if its answer is still due (or it is the
    /// standalone stream) and the server gave an event id to resume from. A stateless-era
    /// stream is never resumed (its event ids and `retry` mean nothing).
    pub(super) fn stream_ended(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        ex: Exchange,
        failure: Option<&str>,
    ) {
        let Body::Sse(dec) = &ex.body else { return };
        let stateless = matches!(
            ex.kind,
            ExchangeKind::Post {
                stateless: true,
                ..
            }
        );
        let mut stream = match ex.kind {
            ExchangeKind::Get { stream } => stream,
            ExchangeKind::Post { request, .. } => Stream {
                awaiting: request,
                budget: self.config.resume_budget,
                session: ex.sent_in.clone(),
                ..Stream::default()
            },
            ExchangeKind::Delete => return,
        };
        let due = stream.awaiting.is_some_and(|id| protocol.is_pending(id));
        if !due && !stream.standalone {
            // Answered: nothing to resume (nor its event id to copy).
            return;
        }
        if !dec.last_event_id().is_empty() {
            stream.last_event_id = resumable(dec.last_event_id());
        }
        if dec.retry().is_some() {
            stream.retry_ms = dec.retry();
        }
        if (stream.last_event_id.is_none() || stateless) && !stream.standalone {
            // Nothing to resume from: the answer is lost.
            let id = stream.awaiting.expect("due");
            let reason = failure.map_or("the stream ended without the response".into(), |r| {
                format!("the stream failed without the response: {r}")
            });
            let reason = reason.into();
            let signal = TransportSignal::LostAfterSending {
                id,
                reason,
                http: None,
            };
            protocol.handle_transport(now, signal);
            return;
        }
        self.schedule_resume(protocol, now, stream);
    }

    /// Resumes `stream` after the server's `retry` (or a backoff), within its budget.
    pub(super) fn schedule_resume(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        stream: Stream,
    ) {
        let spent = if self.closing {
            stream
        } else {
            match self
                .resumes
                .schedule(now, stream, self.config.default_retry)
            {
                Ok(()) => return,
                Err(spent) => spent,
            }
        };
        if let Some(id) = spent.awaiting {
            let reason = "the stream that was to carry the response could not be resumed";
            let signal = TransportSignal::LostAfterSending {
                id,
                reason: reason.into(),
                http: None,
            };
            protocol.handle_transport(now, signal);
        }
        if spent.standalone {
            self.standalone = Standalone::None;
        }
    }

    /// A GET that was refused: the standalone stream is not offered (any 4xx), or a resume
    /// failed (its request ends with the error; as expired when its session has been lost).
    pub(super) fn standalone_or_resume_refused(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        stream: Stream,
        err: HttpError,
    ) {
        if stream.standalone {
            let status = err.status.unwrap_or(0);
            if (500..600).contains(&status) {
                self.schedule_resume(protocol, now, stream);
                return;
            }
            self.standalone = Standalone::None;
            let note = if status == 401 || status == 403 {
                format!("the standalone stream needs authorization: {err}")
            } else {
                format!("the server offers no standalone stream: {err}")
            };
            self.notes.push_back(Event::http_note(note));
            return;
        }
        let Some(id) = stream.awaiting else { return };
        if stream
            .session
            .as_ref()
            .is_some_and(|t| !self.session.is_current(t))
        {
            // A resume in a session the server has since forgotten.
            return self.expired(protocol, now, id);
        }
        let error = LocalError::Http(Box::new(err));
        let signal = TransportSignal::RequestLost { id, error };
        protocol.handle_transport(now, signal);
    }
}
