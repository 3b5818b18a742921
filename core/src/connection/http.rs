//! The HTTP side of a connection: Streamable HTTP, or the 2024-11-05 HTTP+SSE transport, and
//! the move from the first to the second when `Era::Auto` finds an older server.

use crate::error::ExchangeFailure;
use std::time::Instant;

use crate::http::{ExchangeId, HttpAction, HttpClient};
use crate::http_sse::HttpSseClient;
use crate::protocol::ClientProtocol;
use crate::tap::FrameObserver;
use crate::transport::TransportNote;

/// Which HTTP transport a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpTransportKind {
    /// Streamable HTTP (2025-03-26 and later, both eras).
    Streamable,
    /// The 2024-11-05 HTTP+SSE transport: one GET stream, messages POSTed to its endpoint.
    Sse,
}

/// The HTTP transport machine inside a connection.
#[derive(Debug)]
pub(super) enum HttpTransport {
    Streamable(Box<HttpClient>),
    Sse(Box<HttpSseClient>),
}

/// Calls the same method on whichever transport is in use.
macro_rules! each {
    ($self:expr, $t:ident => $body:expr) => {
        match $self {
            HttpTransport::Streamable($t) => $body,
            HttpTransport::Sse($t) => $body,
        }
    };
}

impl HttpTransport {
    pub(super) fn kind(&self) -> HttpTransportKind {
        match self {
            HttpTransport::Streamable(_) => HttpTransportKind::Streamable,
            HttpTransport::Sse(_) => HttpTransportKind::Sse,
        }
    }

    pub(super) fn protocol(&self) -> &ClientProtocol {
        each!(self, t => t.protocol())
    }

    /// Tells the transport the time (new exchanges are timed from it, and a request refused as
    /// it is handed out ends at it).
    pub(super) fn touch(&mut self, now: Instant) {
        each!(self, t => t.touch(now))
    }

    pub(super) fn protocol_mut(&mut self) -> &mut ClientProtocol {
        each!(self, t => t.protocol_mut())
    }

    pub(super) fn set_observer(&mut self, observer: Box<dyn FrameObserver>) {
        each!(self, t => t.set_observer(observer))
    }

    pub(super) fn session(&self) -> Option<&str> {
        match self {
            HttpTransport::Streamable(h) => h.session(),
            HttpTransport::Sse(_) => None,
        }
    }

    pub(super) fn is_finished(&self) -> bool {
        each!(self, t => t.is_finished())
    }

    pub(super) fn handle_head(
        &mut self,
        now: Instant,
        exchange: ExchangeId,
        status: u16,
        headers: &[(String, String)],
    ) {
        self.touch(now);
        each!(self, t => t.handle_head(now, exchange, status, headers))
    }

    pub(super) fn handle_body(&mut self, now: Instant, exchange: ExchangeId, bytes: &[u8]) {
        self.touch(now);
        each!(self, t => t.handle_body(now, exchange, bytes))
    }

    pub(super) fn handle_end(&mut self, now: Instant, exchange: ExchangeId) {
        self.touch(now);
        each!(self, t => t.handle_end(now, exchange))
    }

    pub(super) fn handle_failure(
        &mut self,
        now: Instant,
        exchange: ExchangeId,
        failure: &ExchangeFailure,
    ) {
        self.touch(now);
        each!(self, t => t.handle_failure(now, exchange, failure))
    }

    pub(super) fn handle_unsent(
        &mut self,
        now: Instant,
        exchange: ExchangeId,
        failure: &ExchangeFailure,
    ) {
        self.touch(now);
        each!(self, t => t.handle_unsent(now, exchange, failure))
    }

    /// Streamable HTTP parks what a server refuses for want of authorization; the HTTP+SSE
    /// transport only carries the token.
    pub(super) fn set_access_token(&mut self, now: Instant, token: &str) {
        self.touch(now);
        match self {
            HttpTransport::Streamable(t) => t.set_access_token(now, token),
            HttpTransport::Sse(t) => t.set_access_token(token),
        }
    }

    pub(super) fn authorization_failed(&mut self, now: Instant, reason: &str) {
        self.touch(now);
        if let HttpTransport::Streamable(t) = self {
            t.authorization_failed(now, reason);
        }
    }

    pub(super) fn close(&mut self, now: Instant) {
        self.touch(now);
        each!(self, t => t.close(now))
    }

    /// The next action; when Streamable HTTP has handed out everything and asks to move to
    /// the HTTP+SSE transport, the move happens here (the old exchanges are aborted first).
    pub(super) fn poll_action(&mut self) -> Option<HttpAction> {
        if let Some(a) = each!(self, t => t.poll_action()) {
            return Some(a);
        }
        let HttpTransport::Streamable(h) = self else {
            return None;
        };
        let switch = h.take_switch()?;
        *self = HttpTransport::Sse(Box::new(HttpSseClient::switched(switch)));
        self.poll_action()
    }

    pub(super) fn poll_note(&mut self) -> Option<TransportNote> {
        each!(self, t => t.poll_note())
    }

    pub(super) fn poll_timeout(&self) -> Option<Instant> {
        each!(self, t => t.poll_timeout())
    }

    pub(super) fn handle_timeout(&mut self, now: Instant) {
        self.touch(now);
        each!(self, t => t.handle_timeout(now))
    }
}
