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

use mcpwire_core::jsonrpc::{ErrorObject, RawJson};
#[cfg(feature = "tracing")]
use mcpwire_core::{jsonrpc::Id, CallId, Connection, LocalError, McpCall};
use mcpwire_core::{CallError, Event, Progress, ServerRequest};

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

/// The span of one connection (and with feature `opentelemetry`, its metrics' instruments).
#[derive(Debug, Clone)]
pub(crate) struct ConnectionSpan {
    #[cfg(feature = "tracing")]
    span: tracing::Span,
    /// Whether calls record `mcp.resource.uri` (the host opted in).
    #[cfg(feature = "tracing")]
    resource_uri: bool,
    #[cfg(feature = "opentelemetry")]
    meters: Option<std::sync::Arc<crate::otel::metrics::Meters>>,
}

// Without `tracing` the struct is empty and the impl derivable; with it, the span is `none`.
#[cfg_attr(not(feature = "tracing"), allow(clippy::derivable_impls))]
impl Default for ConnectionSpan {
    fn default() -> Self {
        ConnectionSpan {
            #[cfg(feature = "tracing")]
            span: tracing::Span::none(),
            #[cfg(feature = "tracing")]
            resource_uri: false,
            #[cfg(feature = "opentelemetry")]
            meters: None,
        }
    }
}

/// The span of one call: its request (or requests: re-issues and input rounds belong to it),
/// and with feature `opentelemetry` its measure. Dropped before its outcome was recorded (the
/// host dropped the call's future), it ends as a cancelled call.
#[derive(Debug)]
pub(crate) struct CallSpan {
    #[cfg(feature = "tracing")]
    span: tracing::Span,
    #[cfg(feature = "opentelemetry")]
    metric: Option<Box<crate::otel::metrics::Operation>>,
    /// Whether this is the call's own handle and its outcome is not recorded yet (a slot's
    /// copy never records one).
    #[cfg(feature = "tracing")]
    open: bool,
}

/// `error.type` of a call whose future was dropped before its outcome: the conventions define
/// no value for it (only `_OTHER`), so it is the word a host's cancellation has here.
#[cfg(feature = "tracing")]
const CANCELLED: &str = "cancelled";

/// The words of a call whose future was dropped before its outcome.
#[cfg(feature = "tracing")]
const DROPPED: &str = "the caller stopped waiting (its future was dropped)";

#[cfg(feature = "tracing")]
impl Drop for CallSpan {
    fn drop(&mut self) {
        if self.open {
            self.finish(Some((CANCELLED, DROPPED)), None);
        }
    }
}

/// What a call met on its way, told as an event on its span.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub(crate) enum CallNote<'a> {
    /// Its request was lost and sent again, with a new id.
    Reissued(&'a str),
    /// The server asked for input: round `round`, with `requests` input requests.
    InputRequired { round: u32, requests: usize },
    /// The HTTP session was renewed while the call was in flight.
    SessionRenewed,
}

#[cfg(feature = "tracing")]
impl ConnectionSpan {
    /// The span of the connection to `target` (a command line or a URL) at `peer`; its calls
    /// record `mcp.resource.uri` when `resource_uri` (the host opted in).
    pub(crate) fn new(target: &str, peer: &Peer, resource_uri: bool) -> ConnectionSpan {
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
            error.type = tracing::field::Empty,
        );
        if !span.is_disabled() {
            if let Some(address) = &peer.address {
                span.record("server.address", address.as_str());
            }
            if let Some(port) = peer.port {
                span.record("server.port", i64::from(port));
            }
        }
        ConnectionSpan {
            span,
            resource_uri,
            #[cfg(feature = "opentelemetry")]
            meters: Some(crate::otel::metrics::Meters::new(
                peer.transport,
                peer.address.as_deref(),
                peer.port,
            )),
        }
    }

    /// Records what `event` tells of the connection: once ready, the server's name, the era
    /// and the protocol version; a session renewed, as an event on the span.
    pub(crate) fn event(&self, event: &Event) {
        #[cfg(feature = "opentelemetry")]
        if let (Some(meters), Event::Ready { server, .. }) = (&self.meters, event) {
            meters.ready(&server.protocol_version);
        }
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

    /// The connection ended, with an error of kind `error` or none (the host closed it):
    /// with feature `opentelemetry`, the session's duration is measured (once).
    pub(crate) fn ended(&self, error: Option<&'static str>) {
        #[cfg(feature = "opentelemetry")]
        if let Some(meters) = &self.meters {
            meters.session_ended(error);
        }
        if let Some(kind) = error.filter(|_| !self.span.is_disabled()) {
            self.span.record("error.type", kind);
        }
    }
}

#[cfg(not(feature = "tracing"))]
impl ConnectionSpan {
    /// Without the `tracing` feature, no span.
    pub(crate) fn new(_target: &str, _peer: &Peer, _resource_uri: bool) -> ConnectionSpan {
        ConnectionSpan {}
    }

    /// Without the `tracing` feature, nothing is recorded.
    pub(crate) fn event(&self, _event: &Event) {}

    /// Without the `tracing` feature, nothing is recorded.
    pub(crate) fn ended(&self, _error: Option<&'static str>) {}
}

#[cfg(feature = "tracing")]
impl CallSpan {
    /// The span of `request`, made now (the caller's span, if any, is its parent; the
    /// connection's span is linked to it); with feature `opentelemetry`, its measure starts.
    pub(crate) fn start(connection: &ConnectionSpan, request: &McpCall) -> CallSpan {
        use tracing::field::Empty;
        // No subscriber was ever set: no span. A disabled span still costs its fields'
        // evaluation, and with `tracing`'s `log` feature (which another crate of the host may
        // turn on) a pass through `log` where it is made and where each handle is dropped.
        let span = if !tracing::dispatcher::has_been_set() {
            tracing::Span::none()
        } else {
            tracing::info_span!(
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
            mcp.resource.uri = Empty,
            jsonrpc.request.id = Empty,
            mcp.session.id = Empty,
            mcp.protocol.version = Empty,
            network.transport = Empty,
            server.address = Empty,
            server.port = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
            )
        };
        let method = request.method();
        let name = request.name();
        let target = name.filter(|_| matches!(method, "tools/call" | "prompts/get"));
        #[cfg(feature = "opentelemetry")]
        let metric = connection.meters.as_ref().map(|meters| {
            let uri = resource_uri(connection, request);
            let operation =
                crate::otel::metrics::Operation::start(meters, method, target, uri.as_deref());
            Box::new(operation)
        });
        let call = CallSpan {
            span,
            #[cfg(feature = "opentelemetry")]
            metric,
            open: true,
        };
        let span = &call.span;
        if span.is_disabled() {
            return call;
        }
        span.follows_from(&connection.span);
        match (method, target) {
            ("tools/call", Some(tool)) => {
                span.record("gen_ai.tool.name", tool);
                span.record("gen_ai.operation.name", "execute_tool");
            }
            ("prompts/get", Some(prompt)) => {
                span.record("gen_ai.prompt.name", prompt);
            }
            _ => {}
        }
        if let Some(uri) = resource_uri(connection, request) {
            span.record("mcp.resource.uri", uri.as_str());
        }
        match target {
            Some(target) => span.record("otel.name", format!("{method} {target}").as_str()),
            None => span.record("otel.name", method),
        };
        call
    }

    /// The same span, for the call's slot (its progress and what it meets are told there);
    /// the measure stays with the call.
    pub(crate) fn for_slot(&self) -> CallSpan {
        CallSpan {
            span: self.span.clone(),
            #[cfg(feature = "opentelemetry")]
            metric: None,
            open: false,
        }
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
    /// code in `rpc.response.status_code`, and the span's status. With feature
    /// `opentelemetry`, the call's duration is measured with the same attributes.
    pub(crate) fn ended(mut self, outcome: &Result<mcpwire_core::jsonrpc::RawJson, CallError>) {
        self.open = false;
        #[cfg(feature = "opentelemetry")]
        let measured = self.metric.is_some();
        #[cfg(not(feature = "opentelemetry"))]
        let measured = false;
        if self.span.is_disabled() && !measured {
            return;
        }
        let (kind, message, code) = match outcome {
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
                    return self.done(None, None);
                }
                let words = "the tool reported an error";
                ("tool_error".to_owned(), words.to_owned(), None)
            }
            Err(CallError::Server(e)) | Err(CallError::MissingCapability { error: e, .. }) => {
                let code = e.code.to_string();
                (code.clone(), e.message.clone(), Some(code))
            }
            Err(CallError::Local(local)) => (local_kind(local).to_owned(), local.to_string(), None),
            Err(other) => (call_error_kind(other).to_owned(), other.to_string(), None),
        };
        self.done(Some((&kind, &message)), code.as_deref());
    }

    /// Records a failure of kind `kind` (`error.type`) and its words.
    pub(crate) fn failed(self, kind: &str, message: &str) {
        self.done(Some((kind, message)), None);
    }

    /// The call ended: with a failure (its kind and words) and the JSON-RPC code, or none.
    fn done(mut self, failure: Option<(&str, &str)>, code: Option<&str>) {
        self.open = false;
        self.finish(failure, code);
    }

    /// Records the call's end: its measure, and on its span a failure (its kind and words) and
    /// the JSON-RPC code.
    fn finish(&mut self, failure: Option<(&str, &str)>, code: Option<&str>) {
        #[cfg(feature = "opentelemetry")]
        if let Some(metric) = self.metric.take() {
            metric.ended(failure.map(|(kind, _)| kind), code);
        }
        let Some((kind, message)) = failure else {
            return;
        };
        if self.span.is_disabled() {
            return;
        }
        if let Some(code) = code {
            self.span.record("rpc.response.status_code", code);
        }
        self.span.record("error.type", kind);
        self.span.record("otel.status_code", "ERROR");
        self.span.record("otel.status_description", message);
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

    /// Tells what the call met (a re-issue, an input round, a session renewed) as an event on
    /// its span.
    pub(crate) fn note(&self, note: &CallNote<'_>) {
        if self.span.is_disabled() {
            return;
        }
        let span = &self.span;
        match *note {
            CallNote::Reissued(reason) => tracing::info!(
                target: "mcpwire::call",
                parent: span,
                reason,
                "mcp request reissued"
            ),
            CallNote::InputRequired { round, requests } => tracing::info!(
                target: "mcpwire::call",
                parent: span,
                round,
                requests,
                "mcp input required"
            ),
            CallNote::SessionRenewed => tracing::info!(
                target: "mcpwire::call",
                parent: span,
                "mcp session renewed"
            ),
        }
    }

    /// The call's span, as the parent of the spans of the server's requests its input rounds
    /// surface.
    pub(crate) fn parent(&self) -> &tracing::Span {
        &self.span
    }
}

/// The resource of a `resources/read`, `resources/subscribe` or `resources/unsubscribe`, when
/// the host opted in to `mcp.resource.uri`.
#[cfg(feature = "tracing")]
fn resource_uri(connection: &ConnectionSpan, request: &McpCall) -> Option<String> {
    let method = request.method();
    let resource = matches!(
        method,
        "resources/read" | "resources/subscribe" | "resources/unsubscribe"
    );
    if !connection.resource_uri || !resource {
        return None;
    }
    Some(request.params()?.get("uri")?.as_str()?.to_owned())
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

    /// Without the `tracing` feature, no span.
    pub(crate) fn for_slot(&self) -> CallSpan {
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
    pub(crate) fn ended(self, _outcome: &Result<mcpwire_core::jsonrpc::RawJson, CallError>) {}

    /// Without the `tracing` feature, nothing is recorded.
    pub(crate) fn failed(self, _kind: &str, _message: &str) {}

    /// Without the `tracing` feature, nothing is told.
    pub(crate) fn progress(&self, _update: &Progress) {}

    /// Without the `tracing` feature, nothing is told.
    pub(crate) fn note(&self, _note: &CallNote<'_>) {}
}

/// The span of one request the server sent the client, from the moment it is handed to the
/// host's handler to the answer (the conventions' server span: the client serves it).
#[derive(Debug)]
pub(crate) struct ServerRequestSpan {
    #[cfg(feature = "tracing")]
    span: tracing::Span,
}

#[cfg(feature = "tracing")]
impl ServerRequestSpan {
    /// The span of `request`, made now: a child of `round`, the span of the call whose input
    /// round asked for it, else a root linked to the connection's span (with feature
    /// `opentelemetry`, the child of the trace context the server put in the request's
    /// `_meta`, when it put one).
    pub(crate) fn start(
        connection: &ConnectionSpan,
        conn: &Connection,
        peer: &Peer,
        request: &ServerRequest,
        round: Option<&CallSpan>,
    ) -> ServerRequestSpan {
        let method = match request {
            ServerRequest::Elicitation { .. } => "elicitation/create",
            ServerRequest::Sampling { .. } => "sampling/createMessage",
            _ => "roots/list",
        };
        let meta = match request {
            ServerRequest::Elicitation { params, .. } | ServerRequest::Sampling { params, .. } => {
                params.get("_meta").and_then(|m| m.as_object())
            }
            _ => None,
        };
        let open = Open {
            connection,
            conn,
            peer,
            method,
        };
        open.span(request.id(), meta, round)
    }

    /// The span of the server's `ping` `id` (`meta` its `_meta`), which the connection
    /// answered itself: made and ended now.
    pub(crate) fn ping(
        connection: &ConnectionSpan,
        conn: &Connection,
        peer: &Peer,
        id: &Id,
        meta: Option<&serde_json::Map<String, serde_json::Value>>,
    ) {
        let open = Open {
            connection,
            conn,
            peer,
            method: "ping",
        };
        drop(open.span(id, meta, None));
    }

    /// Records the answer the host's handler gave (or the error it failed with).
    pub(crate) fn answered(self, answer: &Result<RawJson, ErrorObject>) {
        let Err(e) = answer else { return };
        if self.span.is_disabled() {
            return;
        }
        let code = e.code.to_string();
        self.span.record("error.type", code.as_str());
        self.span.record("rpc.response.status_code", code.as_str());
        self.span.record("otel.status_code", "ERROR");
        self.span
            .record("otel.status_description", e.message.as_str());
    }
}

/// What a server request's span is made from: the connection and the request's method.
#[cfg(feature = "tracing")]
struct Open<'a> {
    connection: &'a ConnectionSpan,
    conn: &'a Connection,
    peer: &'a Peer,
    method: &'static str,
}

#[cfg(feature = "tracing")]
impl Open<'_> {
    /// The span of request `id` (`meta` its `_meta`): a child of `round`, the span of the call
    /// whose input round asked for it, else a root linked to the connection's span (with
    /// feature `opentelemetry`, the child of the trace context in `meta`, when there is one).
    fn span(
        &self,
        id: &Id,
        meta: Option<&serde_json::Map<String, serde_json::Value>>,
        round: Option<&CallSpan>,
    ) -> ServerRequestSpan {
        use tracing::field::Empty;
        let method = self.method;
        let parent = round.and_then(|call| call.parent().id());
        let span = tracing::info_span!(
            target: "mcpwire::server_request",
            parent: parent,
            "mcp.server",
            otel.name = method,
            otel.kind = "server",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = method,
            mcpwire.input_round = round.is_some(),
            jsonrpc.request.id = Empty,
            mcp.session.id = Empty,
            mcp.protocol.version = Empty,
            network.transport = self.peer.transport,
            error.type = Empty,
            rpc.response.status_code = Empty,
        );
        if span.is_disabled() {
            return ServerRequestSpan { span };
        }
        if round.is_none() {
            // An input round's request is no JSON-RPC request of its own: its id is ours.
            match id {
                Id::Num(n) => span.record("jsonrpc.request.id", n.to_string().as_str()),
                Id::Str(s) => span.record("jsonrpc.request.id", s.as_str()),
            };
            span.follows_from(&self.connection.span);
            #[cfg(feature = "opentelemetry")]
            if let Some(meta) = meta {
                remote_parent(&span, meta);
            }
        }
        #[cfg(not(feature = "opentelemetry"))]
        let _ = meta;
        if let Some(session) = self.conn.session() {
            span.record("mcp.session.id", session);
        }
        if let Some(server) = self.conn.server() {
            span.record("mcp.protocol.version", server.protocol_version.as_str());
        }
        ServerRequestSpan { span }
    }
}

/// Makes the trace context the server put in its request's `params._meta` the span's parent
/// (read by the global propagator), when there is one.
#[cfg(feature = "opentelemetry")]
fn remote_parent(span: &tracing::Span, meta: &serde_json::Map<String, serde_json::Value>) {
    use ::opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    /// A request's `_meta` as a propagator's carrier.
    struct Meta<'a>(&'a serde_json::Map<String, serde_json::Value>);
    impl ::opentelemetry::propagation::Extractor for Meta<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key)?.as_str()
        }
        fn keys(&self) -> Vec<&str> {
            self.0.keys().map(String::as_str).collect()
        }
    }
    let cx = ::opentelemetry::global::get_text_map_propagator(|p| p.extract(&Meta(meta)));
    if cx.span().span_context().is_valid() {
        let _ = span.set_parent(cx);
    }
}

#[cfg(not(feature = "tracing"))]
impl ServerRequestSpan {
    /// Without the `tracing` feature, no span.
    pub(crate) fn start(
        _connection: &ConnectionSpan,
        _conn: &mcpwire_core::Connection,
        _peer: &Peer,
        _request: &ServerRequest,
        _round: Option<&CallSpan>,
    ) -> ServerRequestSpan {
        ServerRequestSpan {}
    }

    /// Without the `tracing` feature, no span.
    pub(crate) fn ping(
        _connection: &ConnectionSpan,
        _conn: &mcpwire_core::Connection,
        _peer: &Peer,
        _id: &mcpwire_core::jsonrpc::Id,
        _meta: Option<&serde_json::Map<String, serde_json::Value>>,
    ) {
    }

    /// Without the `tracing` feature, nothing is recorded.
    pub(crate) fn answered(self, _answer: &Result<RawJson, ErrorObject>) {}
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
