//! Finding the 2024-11-05 HTTP+SSE transport: with [`Era::Auto`] (or the handshake era pinned:
//! that transport is of the handshake era), an `initialize` refused with 400, 404 or 405 whose
//! body is no JSON-RPC message at all (a web server's "Cannot POST", "Method Not Allowed") says
//! the URL may be an older server's SSE stream; a JSON-RPC error, whatever its id, comes from a
//! Streamable HTTP server and is the handshake's answer. The connection then moves, with its protocol (the handshake under way), to
//! [`HttpSse`](crate::connection::http_sse::HttpSse), which GETs the same URL.

use std::time::Instant;

use super::exchange::{Exchange, ExchangeKind, Role};
use super::StreamableHttp;
use crate::connection::http::switch::Switch;
use crate::connection::protocol::client::{ClientProtocol, TransportSignal};
use crate::connection::protocol::Era;
use crate::jsonrpc;

impl StreamableHttp {
    /// Whether `ex`, an exchange whose body (`body`) has ended with an error status, is an
    /// `initialize` refused as an older server refuses it; if so, the switch begins.
    pub(super) fn refused_like_an_sse_server(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        ex: &Exchange,
        body: &[u8],
    ) -> bool {
        let ExchangeKind::Post {
            role: Role::Initialize,
            ..
        } = ex.kind
        else {
            return false;
        };
        let status = ex.status.unwrap_or(0);
        // JSON (whole or cut at the excerpt's length) comes from a JSON-RPC endpoint.
        let json = ex
            .content_type
            .as_deref()
            .map(crate::connection::http::media_type)
            .is_some_and(|m| m == "application/json");
        if !matches!(status, 400 | 404 | 405)
            || json
            || jsonrpc::parse(body).is_ok()
            || protocol.config().era == Era::Stateless
            || protocol.is_renewing()
            || self.closing
        {
            return false;
        }
        self.wants_sse = Some(now);
        let refused = "the Streamable HTTP initialize was refused".to_owned();
        self.switch_error = Some(ex.error(ex.status_kind(), refused, body));
        protocol.handle_transport(now, TransportSignal::TransportChanged);
        true
    }

    /// Whether the connection is to move to the HTTP+SSE transport now: asked for, and every
    /// action queued here handed out.
    pub(crate) fn wants_switch(&self) -> bool {
        self.wants_sse.is_some() && self.actions.is_empty()
    }

    /// What the connection takes to the HTTP+SSE transport, once this transport asks for the
    /// switch and every action it queued has been handed out.
    pub(crate) fn take_switch(&mut self, protocol: &mut ClientProtocol) -> Option<Switch> {
        if !self.actions.is_empty() {
            return None;
        }
        let at = self.wants_sse.take()?;
        self.closing = true;
        let mut abort: Vec<_> = Vec::new();
        for (id, ex) in std::mem::take(&mut self.exchanges) {
            abort.push(id);
            // A request in flight on the transport left behind (a ping made during the
            // handshake): lost after it may have been sent, by the at-most-once rule.
            if let Some(request) = ex.kind.awaiting().filter(|r| protocol.is_pending(*r)) {
                let reason = "the connection moved to the HTTP+SSE transport".into();
                let signal = TransportSignal::LostAfterSending {
                    id: request,
                    reason,
                    http: None,
                };
                protocol.handle_transport(at, signal);
            }
        }
        abort.sort_unstable();
        Some(Switch {
            url: self.url.clone(),
            headers: self.configured.clone(),
            config: self.config.clone(),
            observer: self.observer.take(),
            next_exchange: self.next_exchange,
            abort,
            at,
            refused: self.switch_error.take(),
        })
    }
}
