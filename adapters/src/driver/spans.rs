//! `tracing` spans after OpenTelemetry's semantic conventions for MCP
//! (`open-telemetry/semantic-conventions-genai`, `docs/gen-ai/mcp.md`, v0.1.0; the names
//! followed are listed in the observability guide): one span per request the client sends,
//! from the moment the call is made to its outcome, and one per connection (feature `tracing`).
//!
//! A `tracing` span's name is fixed where it is written, so the conventions' span name
//! (`{mcp.method.name} {target}`) goes in `otel.name`, kind and status in `otel.kind`,
//! `otel.status_code` and `otel.status_description`: the fields `tracing-opentelemetry` reads,
//! so a host using it gets OpenTelemetry spans named and attributed as the conventions say.
//!
//! The core reports facts (its events, what a connection reads as); the spans are made here.
//! When no subscriber listens, a span is disabled and nothing is computed or allocated for it.

use mcpwire_core::{CallError, Event, Progress};
#[cfg(feature = "tracing")]
use mcpwire_core::{CallId, Connection, LocalError, McpCall};

/// The function that gives each request's trace context entries
/// ([`ConnectOptions::trace_context`](crate::ConnectOptions::trace_context)).
pub type TraceContext =
    std::sync::Arc<dyn Fn() -> serde_json::Map<String, serde_json::Value> + Send + Sync>;

/// Where the server is, as the conventions name it: the transport (`pipe` for stdio and
/// streams, `tcp` for HTTP) and, over HTTP, the server's host and port.
#[derive(Debug, Clone, Default)]
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub(crate) struct Peer {
    pub(crate) transport: &'static str,
    pub(crate) address: Option<String>,
    pub(crate) port: Option<u16>,
}

impl Peer {
    /// A server over pipes (stdio, or streams the host gave).
    pub(crate) fn pipe() -> Peer {
        Peer {
            transport: "pipe",
            ..Peer::default()
        }
    }

    /// A server at `url` over HTTP: its host and port (the scheme's when the URL has none).
    pub(crate) fn of_url(url: &str) -> Peer {
        let parsed = url::Url::parse(url).ok();
        Peer {
            transport: "tcp",
            address: parsed.as_ref().and_then(|u| match u.host()? {
                // An IPv6 address without the URL's brackets.
                url::Host::Ipv6(a) => Some(a.to_string()),
                host => Some(host.to_string()),
            }),
            port: parsed.and_then(|u| u.port_or_known_default()),
        }
    }
}

/// The span of one connection.
#[derive(Debug, Clone)]
pub(crate) struct ConnectionSpan {
    #[cfg(feature = "tracing")]
    span: tracing::Span,
}

// Without `tracing` the struct is empty and the impl derivable; with it, the span is `none`.
#[cfg_attr(not(feature = "tracing"), allow(clippy::derivable_impls))]
impl Default for ConnectionSpan {
    fn default() -> Self {
        ConnectionSpan {
            #[cfg(feature = "tracing")]
            span: tracing::Span::none(),
        }
    }
}

/// The span of one call: its request (or requests: re-issues and input rounds belong to it).
#[derive(Debug, Clone)]
pub(crate) struct CallSpan {
    #[cfg(feature = "tracing")]
    span: tracing::Span,
}

#[cfg(feature = "tracing")]
impl ConnectionSpan {
    /// The span of the connection to `target` (a command line or a URL) at `peer`.
    pub(crate) fn new(target: &str, peer: &Peer) -> ConnectionSpan {
        let span = tracing::info_span!(
            target: "mcpwire::connection",
            "mcp.connection",
            otel.name = "mcp connection",
            mcpwire.target = target,
            mcp.server.name = tracing::field::Empty,
            mcpwire.era = tracing::field::Empty,
            mcp.protocol.version = tracing::field::Empty,
            network.transport = peer.transport,
            server.address = tracing::field::Empty,
            server.port = tracing::field::Empty,
        );
        if !span.is_disabled() {
            if let Some(address) = &peer.address {
                span.record("server.address", address.as_str());
            }
            if let Some(port) = peer.port {
                span.record("server.port", i64::from(port));
            }
        }
        ConnectionSpan { span }
    }

    /// Records what `event` tells of the connection: once ready, the server's name, the era
    /// and the protocol version; a session renewed, as an event on the span.
    pub(crate) fn event(&self, event: &Event) {
        if self.span.is_disabled() {
            return;
        }
        match event {
            Event::Ready { era, server } => {
                let span = &self.span;
                span.record("mcp.server.name", server.server_info.name.as_str());
                span.record("mcpwire.era", tracing::field::display(era));
                span.record("mcp.protocol.version", server.protocol_version.as_str());
            }
            Event::SessionRenewed(_) => tracing::info!(
                target: "mcpwire::connection",
                parent: &self.span,
                "mcp session renewed"
            ),
            _ => {}
        }
    }
}

#[cfg(not(feature = "tracing"))]
impl ConnectionSpan {
    /// Without the `tracing` feature, no span.
    pub(crate) fn new(_target: &str, _peer: &Peer) -> ConnectionSpan {
        ConnectionSpan {}
    }

    /// Without the `tracing` feature, nothing is recorded.
    pub(crate) fn event(&self, _event: &Event) {}
}

#[cfg(feature = "tracing")]
impl CallSpan {
    /// The span of `request`, made now (the caller's span, if any, is its parent; the
    /// connection's span is linked to it).
    pub(crate) fn start(connection: &ConnectionSpan, request: &McpCall) -> CallSpan {
        use tracing::field::Empty;
        let span = tracing::info_span!(
            target: "mcpwire::call",
            "mcp.client",
            otel.name = Empty,
            otel.kind = "client",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = request.method(),
            gen_ai.tool.name = Empty,
            gen_ai.prompt.name = Empty,
            gen_ai.operation.name = Empty,
            jsonrpc.request.id = Empty,
            mcp.session.id = Empty,
            mcp.protocol.version = Empty,
            network.transport = Empty,
            server.address = Empty,
            server.port = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
        );
        if span.is_disabled() {
            return CallSpan { span };
        }
        span.follows_from(&connection.span);
        let method = request.method();
        let name = request.name();
        match (method, name) {
            ("tools/call", Some(tool)) => {
                span.record("gen_ai.tool.name", tool);
                span.record("gen_ai.operation.name", "execute_tool");
            }
            ("prompts/get", Some(prompt)) => {
                span.record("gen_ai.prompt.name", prompt);
            }
            _ => {}
        }
        match name.filter(|_| matches!(method, "tools/call" | "prompts/get")) {
            Some(target) => span.record("otel.name", format!("{method} {target}").as_str()),
            None => span.record("otel.name", method),
        };
        CallSpan { span }
    }

    /// Runs `f` with the call's span current (the host's trace context hook sees it).
    pub(crate) fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
        self.span.in_scope(f)
    }

    /// Records what the connection knows once the call is issued as `id`: the request's id,
    /// the session, the protocol version, the transport and the server's address.
    pub(crate) fn issued(&self, conn: &Connection, peer: &Peer, id: CallId) {
        if self.span.is_disabled() {
            return;
        }
        let span = &self.span;
        span.record("jsonrpc.request.id", id.0.to_string().as_str());
        if let Some(session) = conn.session() {
            span.record("mcp.session.id", session);
        }
        if let Some(server) = conn.server() {
            span.record("mcp.protocol.version", server.protocol_version.as_str());
        }
        span.record("network.transport", peer.transport);
        if let Some(address) = &peer.address {
            span.record("server.address", address.as_str());
        }
        if let Some(port) = peer.port {
            span.record("server.port", i64::from(port));
        }
    }

    /// Records the call's outcome: for a result, nothing more (a tool's own error, `isError`,
    /// is `error.type` `tool_error`); for a failure, its kind in `error.type` (the JSON-RPC
    /// error's code, or a word for a local failure: `timeout`, `cancelled`, …), the JSON-RPC
    /// code in `rpc.response.status_code`, and the span's status.
    pub(crate) fn ended(&self, outcome: &Result<mcpwire_core::jsonrpc::RawJson, CallError>) {
        if self.span.is_disabled() {
            return;
        }
        let (kind, message) = match outcome {
            Ok(result) => {
                #[derive(serde::Deserialize)]
                struct IsError {
                    #[serde(rename = "isError", default)]
                    is_error: bool,
                }
                let tool_error = serde_json::from_str::<IsError>(result.get())
                    .map(|r| r.is_error)
                    .unwrap_or(false);
                if !tool_error {
                    return;
                }
                (
                    "tool_error".to_owned(),
                    "the tool reported an error".to_owned(),
                )
            }
            Err(CallError::Server(e)) | Err(CallError::MissingCapability { error: e, .. }) => {
                let code = e.code.to_string();
                self.span.record("rpc.response.status_code", code.as_str());
                (code, e.message.clone())
            }
            Err(CallError::Local(local)) => (local_kind(local).to_owned(), local.to_string()),
            Err(other) => (call_error_kind(other).to_owned(), other.to_string()),
        };
        self.failed(&kind, &message);
    }

    /// Tells a progress update of the call (or its task's status) as an event on its span.
    pub(crate) fn progress(&self, update: &Progress) {
        if self.span.is_disabled() {
            return;
        }
        tracing::info!(
            target: "mcpwire::call",
            parent: &self.span,
            progress = update.progress,
            total = update.total,
            progress_message = update.message.as_deref(),
            "mcp progress"
        );
    }

    /// Records a failure of kind `kind` (`error.type`) and its words.
    pub(crate) fn failed(&self, kind: &str, message: &str) {
        if self.span.is_disabled() {
            return;
        }
        self.span.record("error.type", kind);
        self.span.record("otel.status_code", "ERROR");
        self.span.record("otel.status_description", message);
    }
}

#[cfg(not(feature = "tracing"))]
impl CallSpan {
    /// Without the `tracing` feature, no span.
    pub(crate) fn start(
        _connection: &ConnectionSpan,
        _request: &mcpwire_core::McpCall,
    ) -> CallSpan {
        CallSpan {}
    }

    /// Without the `tracing` feature, `f` alone.
    pub(crate) fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
        f()
    }

    /// Without the `tracing` feature, nothing is recorded.
    pub(crate) fn issued(
        &self,
        _conn: &mcpwire_core::Connection,
        _peer: &Peer,
        _id: mcpwire_core::CallId,
    ) {
    }

    /// Without the `tracing` feature, nothing is recorded.
    pub(crate) fn ended(&self, _outcome: &Result<mcpwire_core::jsonrpc::RawJson, CallError>) {}

    /// Without the `tracing` feature, nothing is recorded.
    pub(crate) fn failed(&self, _kind: &str, _message: &str) {}

    /// Without the `tracing` feature, nothing is told.
    pub(crate) fn progress(&self, _update: &Progress) {}
}

/// `error.type` for a call that ended here.
#[cfg(feature = "tracing")]
fn local_kind(e: &LocalError) -> &'static str {
    match e {
        LocalError::Timeout { .. } => "timeout",
        LocalError::NotSent { .. } => "not_sent",
        LocalError::Cancelled { .. } => "cancelled",
        LocalError::CancelledByPeer { .. } => "cancelled_by_server",
        LocalError::StreamLost => "stream_lost",
        LocalError::MaybeExecuted { .. } => "maybe_executed",
        LocalError::ResponseTooLarge { .. } => "response_too_large",
        LocalError::SessionExpired => "session_expired",
        LocalError::SessionRenewalFailed { .. } => "session_renewal_failed",
        LocalError::Http(_) => "http",
        LocalError::Closed(_) => "closed",
        _ => "_OTHER",
    }
}

/// `error.type` for a call that failed otherwise.
#[cfg(feature = "tracing")]
fn call_error_kind(e: &CallError) -> &'static str {
    match e {
        CallError::InvalidResult(_) => "invalid_result",
        CallError::Task { .. } => "task_failed",
        #[cfg(feature = "schemas")]
        CallError::Schema { .. } => "schema_mismatch",
        _ => "_OTHER",
    }
}

#[cfg(test)]
mod tests {
    use super::Peer;

    /// An HTTP server's address and port, as the conventions name them: the URL's host (no
    /// credentials, no brackets), its port or the scheme's.
    #[test]
    fn an_http_servers_address_and_port_come_from_its_url() {
        let of = |url: &str| {
            let p = Peer::of_url(url);
            (p.transport, p.address, p.port)
        };
        let tcp = |host: &str, port: u16| ("tcp", Some(host.to_owned()), Some(port));
        assert_eq!(of("http://example.com/mcp"), tcp("example.com", 80));
        assert_eq!(of("https://example.com/mcp"), tcp("example.com", 443));
        assert_eq!(
            of("http://u:secret@127.0.0.1:8931/mcp"),
            tcp("127.0.0.1", 8931)
        );
        assert_eq!(of("https://[::1]:9000/"), tcp("::1", 9000));
        assert_eq!(of("not a url"), ("tcp", None, None));
        assert_eq!(Peer::pipe().transport, "pipe");
    }
}
