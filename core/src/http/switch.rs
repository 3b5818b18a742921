//! Finding the 2024-11-05 HTTP+SSE transport: with [`Era::Auto`], an `initialize` refused with
//! 400, 404 or 405 whose body is not its JSON-RPC answer says the URL may be an older server's
//! SSE stream. The connection then hands its protocol (the handshake under way) to
//! [`HttpSseClient`](crate::http_sse::HttpSseClient), which GETs the same URL.

use std::time::Instant;

use super::exchange::{Exchange, ExchangeKind, Role};
use super::{HttpClient, Switch};
use crate::jsonrpc::{self, Message, Parsed};
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
            request: Some(id),
            role: Role::Initialize,
            ..
        } = ex.kind
        else {
            return false;
        };
        let status = ex.status.unwrap_or(0);
        let answered = matches!(jsonrpc::parse(body),
            Ok(Parsed::Single(Message::Response(r))) if r.id.as_ref().and_then(|i| i.as_i64()) == Some(id));
        if !matches!(status, 400 | 404 | 405)
            || answered
            || self.protocol.config().era != Era::Auto
            || self.protocol.is_renewing()
            || self.closing
        {
            return false;
        }
        self.wants_sse = Some(now);
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
        })
    }
}
