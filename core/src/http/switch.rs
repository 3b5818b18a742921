//! Finding the 2024-11-05 HTTP+SSE transport: with [`Era::Auto`] (or the handshake era pinned:
//! that transport is of the handshake era), an `initialize` refused with 400, 404 or 405 whose
//! body is no JSON-RPC message at all (a web server's "Cannot POST", "Method Not Allowed") says
//! the URL may be an older server's SSE stream; a JSON-RPC error, whatever its id, comes from a
//! Streamable HTTP server and is the handshake's answer. The connection then hands its protocol (the handshake under way) to
//! [`HttpSseClient`](crate::http_sse::HttpSseClient), which GETs the same URL.

use std::time::Instant;

use super::exchange::{Exchange, ExchangeKind, Role};
use super::{HttpClient, Switch};
use crate::jsonrpc;
use crate::protocol::client::{ClientConfig, ClientProtocol, TransportSignal};
use crate::protocol::Era;

impl HttpClient {
    /// Whether `ex`, an exchange whose body (`body`) has ended with an error status, is an
    /// `initialize` refused as an older server refuses it; if so, the switch begins.
    pub(super) fn refused_like_an_sse_server(
        &mut self,
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
        if !matches!(status, 400 | 404 | 405)
            || jsonrpc::parse(body).is_ok()
            || self.protocol.config().era == Era::Stateless
            || self.protocol.is_renewing()
            || self.closing
        {
            return false;
        }
        self.wants_sse = Some(now);
        let refused = "the Streamable HTTP initialize was refused".to_owned();
        self.switch_error = Some(ex.error(refused, body));
        self.protocol
            .handle_transport(now, TransportSignal::TransportChanged);
        true
    }

    /// What the connection takes to the HTTP+SSE transport, once this transport asks for the
    /// switch and every action it queued has been handed out.
    pub(crate) fn take_switch(&mut self) -> Option<Switch> {
        if !self.actions.is_empty() {
            return None;
        }
        let at = self.wants_sse.take()?;
        self.closing = true;
        let placeholder = ClientProtocol::new(ClientConfig::default());
        let mut abort: Vec<_> = self.exchanges.drain().map(|(id, _)| id).collect();
        abort.sort_unstable();
        Some(Switch {
            protocol: std::mem::replace(&mut self.protocol, placeholder),
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
