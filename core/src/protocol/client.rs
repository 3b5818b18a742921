//! The client side of MCP, handshake era (2024-11-05 … 2025-11-25), on the request engine.
//!
//! [`ClientProtocol`] turns application calls (`list_tools`, `call_tool`, …) into JSON-RPC
//! requests and the peer's messages into typed [`ClientEvent`]s. It knows nothing of bytes or
//! processes: a transport machine (stdio, HTTP) feeds it messages with
//! [`handle_message`](ClientProtocol::handle_message) and carries what
//! [`poll_transmit`](ClientProtocol::poll_transmit) hands out.
//!
//! The drive rule holds as everywhere in core: after every input or command, drain
//! [`poll_transmit`](ClientProtocol::poll_transmit), [`poll_event`](ClientProtocol::poll_event)
//! and [`poll_notification`](ClientProtocol::poll_notification) until each returns `None`, then
//! wait for IO or [`poll_timeout`](ClientProtocol::poll_timeout).
//!
//! What it does for the application:
//! - `initialize` offering [`LATEST_HANDSHAKE_VERSION`], accepting any handshake-era version the
//!   server answers with and failing clearly on any other; then `notifications/initialized`;
//! - nothing but `ping` before the initialize response; calls gated by the server's capabilities;
//! - server pings answered at once; server requests surfaced at once as events, or answered with
//!   the error protocol.md §12 prescribes when the client did not declare the capability;
//! - every list method over all pages (an empty-string cursor continues the list);
//! - progress routed to its call; notifications typed; every call ends exactly once.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::types::{
    is_handshake_version, ClientCapabilities, Implementation, InitializeParams, InitializeResult,
    LoggingMessageParams, ServerCapabilities, LATEST_HANDSHAKE_VERSION,
};
use crate::jsonrpc::{codes, ErrorObject, Id, Message, Notification, RawJson, Request};
use crate::rpc::{
    AppNotification, Diagnostic, Engine, EngineConfig, EngineError, LocalError, Origin, Output,
    RequestOptions, Responded,
};
use crate::rpc::{Outcome, Reply};

/// How many pages one list call may take before the server is judged to loop.
pub const MAX_PAGES: usize = 10_000;

/// Settings of one client connection.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Who we are.
    pub client_info: Implementation,
    /// The version offered in `initialize`.
    pub protocol_version: String,
    /// What we offer: declare only what handlers exist for.
    pub capabilities: ClientCapabilities,
    /// How long the handshake may take.
    pub init_timeout: Duration,
    /// The request engine's caps.
    pub engine: EngineConfig,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            client_info: Implementation::mcpwire(),
            protocol_version: LATEST_HANDSHAKE_VERSION.into(),
            capabilities: ClientCapabilities::default(),
            init_timeout: Duration::from_secs(30),
            engine: EngineConfig::default(),
        }
    }
}

/// One application call: a request, or for list methods every page of it. Its value is the id of
/// the call's first request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(pub i64);

/// Per-call options.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOptions {
    /// Idle timeout: how long without an answer (or, with `reset_on_progress`, without progress).
    pub timeout: Duration,
    /// Maximum total time, never reset.
    pub max_total: Option<Duration>,
    /// Whether a progress notification resets the idle timeout.
    pub reset_on_progress: bool,
    /// Whether to ask for progress notifications (adds a progress token).
    pub progress: bool,
}

impl Default for CallOptions {
    fn default() -> Self {
        CallOptions {
            timeout: crate::rpc::DEFAULT_TIMEOUT,
            max_total: None,
            reset_on_progress: false,
            progress: false,
        }
    }
}

/// Why a call did not give a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The server answered with a JSON-RPC error.
    #[error("server error: {0}")]
    Server(ErrorObject),
    /// The call ended here: timeout, cancellation, lost stream, closed connection.
    #[error(transparent)]
    Local(LocalError),
    /// The server's result does not have the shape the method defines.
    #[error("invalid result: {0}")]
    InvalidResult(String),
}

/// How a call ended: its raw result, or why there is none.
pub type CallOutcome = Result<RawJson, CallError>;

/// Misuse of the client: returned at once by the command that misused it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The handshake has not completed yet (only `ping` may go before it).
    #[error("the connection is not initialized yet")]
    NotReady,
    /// The handshake was already started.
    #[error("the connection was already started")]
    AlreadyStarted,
    /// The server did not offer the capability this call needs.
    #[error("the server does not offer {0}")]
    NotSupported(&'static str),
    /// No such call is in progress.
    #[error("no call {0:?} is in progress")]
    UnknownCall(CallId),
    /// The request engine refused (closed, caps, duplicate token, unknown inbound id).
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// A request the server sent us, for the application to answer with
/// [`ClientProtocol::respond`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerRequest {
    /// `elicitation/create`: ask the user (form or url mode).
    Elicitation {
        /// The server's request id.
        id: Id,
        /// The request's params.
        params: Value,
    },
    /// `sampling/createMessage`: ask the host's model.
    Sampling {
        /// The server's request id.
        id: Id,
        /// The request's params.
        params: Value,
    },
    /// `roots/list`: which roots the host exposes.
    Roots {
        /// The server's request id.
        id: Id,
    },
}

impl ServerRequest {
    /// The server's id for this request.
    pub fn id(&self) -> &Id {
        match self {
            ServerRequest::Elicitation { id, .. }
            | ServerRequest::Sampling { id, .. }
            | ServerRequest::Roots { id } => id,
        }
    }
}

/// A notification from the server, typed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated`.
    ResourceUpdated {
        /// The resource.
        uri: String,
    },
    /// `notifications/message`: a log line.
    Log(LoggingMessageParams),
    /// Any other notification.
    Other(Notification),
    /// Notifications were dropped because the application read too slowly.
    Dropped {
        /// How many.
        count: u64,
    },
}

/// What the protocol layer reports to the application.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientEvent {
    /// The handshake completed.
    Ready(Box<InitializeResult>),
    /// The handshake failed; the connection is closed.
    HandshakeFailed(CallError),
    /// A call ended (exactly once per call).
    CallDone {
        /// The call.
        call: CallId,
        /// Its outcome.
        outcome: CallOutcome,
    },
    /// Progress of a call that asked for it.
    Progress {
        /// The call.
        call: CallId,
        /// Progress so far.
        progress: f64,
        /// Total, if known.
        total: Option<f64>,
        /// Message, if any.
        message: Option<String>,
    },
    /// The server asks something of us.
    ServerRequest(ServerRequest),
    /// The server cancelled one of its requests to us.
    ServerRequestCancelled {
        /// The server's request id.
        id: Id,
        /// Why.
        reason: Option<String>,
    },
    /// The peer misbehaved in a way that did not end the connection.
    Diagnostic(ProtocolDiagnostic),
    /// The connection ended; every call has ended.
    Closed {
        /// Why.
        reason: Arc<str>,
    },
}

/// Peer misbehaviour noted by the protocol layer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProtocolDiagnostic {
    /// From the request engine (unknown ids, bad progress, …).
    Engine(Diagnostic),
    /// A frame that was not a message (noise on stdout, an overlong line, bad JSON).
    Frame(crate::codec::jsonl::FrameError),
    /// A server request we could not serve, answered with an error.
    RefusedServerRequest {
        /// The server's request id.
        id: Id,
        /// Its method.
        method: String,
        /// The error we answered with.
        error: ErrorObject,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Initializing(i64),
    Ready,
    Closed,
}

/// A list call in progress: the pages gathered so far.
#[derive(Debug)]
struct Listing {
    method: &'static str,
    key: &'static str,
    items: Vec<Box<RawValue>>,
    pages: usize,
    opts: CallOptions,
}

#[derive(Debug)]
struct CallState {
    call: CallId,
    listing: Option<Box<Listing>>,
}

/// The handshake-era client protocol over one connection.
#[derive(Debug)]
pub struct ClientProtocol {
    config: ClientConfig,
    engine: Engine,
    phase: Phase,
    server: Option<Box<InitializeResult>>,
    /// Calls by the id of their request now in flight.
    calls: HashMap<i64, CallState>,
    /// For list calls past their first page: the request now in flight.
    current_page: HashMap<CallId, i64>,
    events: VecDeque<ClientEvent>,
    transmit: VecDeque<Message>,
}

impl ClientProtocol {
    /// A client that has not started its handshake.
    pub fn new(config: ClientConfig) -> Self {
        ClientProtocol {
            engine: Engine::new(config.engine.clone()),
            config,
            phase: Phase::Idle,
            server: None,
            calls: HashMap::new(),
            current_page: HashMap::new(),
            events: VecDeque::new(),
            transmit: VecDeque::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The server's answer to `initialize`, once the handshake completed.
    pub fn server(&self) -> Option<&InitializeResult> {
        self.server.as_deref()
    }

    /// Whether the handshake completed and the connection is open.
    pub fn is_ready(&self) -> bool {
        self.phase == Phase::Ready
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// The request engine, for its statistics.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Starts the handshake: sends `initialize`.
    pub fn start(&mut self, now: Instant) -> Result<(), ClientError> {
        if self.phase != Phase::Idle {
            return Err(ClientError::AlreadyStarted);
        }
        let params = InitializeParams {
            protocol_version: self.config.protocol_version.clone(),
            capabilities: self.config.capabilities.clone(),
            client_info: self.config.client_info.clone(),
        };
        let opts = RequestOptions::new()
            .timeout(self.config.init_timeout)
            .origin(Origin::PROTOCOL);
        let id = self
            .engine
            .request(now, "initialize", Some(raw(&params)), opts)?;
        self.phase = Phase::Initializing(id);
        self.pump(now);
        Ok(())
    }

    /// Sends any request and returns its call. Before the handshake completes only `ping` may go.
    pub fn request(
        &mut self,
        now: Instant,
        method: impl Into<Cow<'static, str>>,
        params: Option<Map<String, Value>>,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        let method = method.into();
        match self.phase {
            Phase::Ready => {}
            Phase::Closed => return Err(ClientError::Engine(EngineError::Closed)),
            _ if method == "ping" => {}
            _ => return Err(ClientError::NotReady),
        }
        let id = self.send(now, method, params, &opts)?;
        let call = CallId(id);
        self.calls.insert(
            id,
            CallState {
                call,
                listing: None,
            },
        );
        self.pump(now);
        Ok(call)
    }

    /// Sends one request of a call; adds the progress token when asked for.
    fn send(
        &mut self,
        now: Instant,
        method: Cow<'static, str>,
        params: Option<Map<String, Value>>,
        opts: &CallOptions,
    ) -> Result<i64, ClientError> {
        let mut ropts = RequestOptions::new()
            .timeout(opts.timeout)
            .reset_on_progress(opts.reset_on_progress);
        if let Some(total) = opts.max_total {
            ropts = ropts.max_total(total);
        }
        let mut params = params;
        if opts.progress {
            let token = self.engine.next_id();
            ropts = ropts.progress_token(token);
            let p = params.get_or_insert_with(Map::new);
            let meta = p
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                meta.insert("progressToken".into(), Value::from(token));
            }
        }
        let params = params.map(|p| raw(&p));
        Ok(self.engine.request(now, method, params, ropts)?)
    }

    /// Checks that the server offered `capability` (a key of its capabilities).
    fn require(&self, capability: &'static str) -> Result<(), ClientError> {
        match self.phase {
            Phase::Ready => {}
            Phase::Closed => return Err(ClientError::Engine(EngineError::Closed)),
            _ => return Err(ClientError::NotReady),
        }
        let caps: &ServerCapabilities = &self.server.as_ref().expect("ready").capabilities;
        let offered = match capability {
            "tools" => caps.tools.is_some(),
            "prompts" => caps.prompts.is_some(),
            "resources" => caps.resources.is_some(),
            "logging" => caps.logging.is_some(),
            "completions" => caps.completions.is_some(),
            other => caps.extra.contains_key(other),
        };
        if offered {
            Ok(())
        } else {
            Err(ClientError::NotSupported(capability))
        }
    }

    /// `tools/list` over all pages; the call's result is `{"tools": [...]}`.
    pub fn list_tools(&mut self, now: Instant, opts: CallOptions) -> Result<CallId, ClientError> {
        self.require("tools")?;
        self.list(now, "tools/list", "tools", opts)
    }

    /// `prompts/list` over all pages; the result is `{"prompts": [...]}`.
    pub fn list_prompts(&mut self, now: Instant, opts: CallOptions) -> Result<CallId, ClientError> {
        self.require("prompts")?;
        self.list(now, "prompts/list", "prompts", opts)
    }

    /// `resources/list` over all pages; the result is `{"resources": [...]}`.
    pub fn list_resources(
        &mut self,
        now: Instant,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        self.require("resources")?;
        self.list(now, "resources/list", "resources", opts)
    }

    /// `resources/templates/list` over all pages; the result is `{"resourceTemplates": [...]}`.
    pub fn list_resource_templates(
        &mut self,
        now: Instant,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        self.require("resources")?;
        self.list(now, "resources/templates/list", "resourceTemplates", opts)
    }

    /// `tools/call`. An `isError` result is a result.
    pub fn call_tool(
        &mut self,
        now: Instant,
        name: &str,
        arguments: Option<Value>,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        self.require("tools")?;
        let mut p = Map::new();
        p.insert("name".into(), Value::from(name));
        if let Some(args) = arguments {
            p.insert("arguments".into(), args);
        }
        self.request(now, "tools/call", Some(p), opts)
    }

    /// `prompts/get`.
    pub fn get_prompt(
        &mut self,
        now: Instant,
        name: &str,
        arguments: Option<Map<String, Value>>,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        self.require("prompts")?;
        let mut p = Map::new();
        p.insert("name".into(), Value::from(name));
        if let Some(args) = arguments {
            p.insert("arguments".into(), Value::Object(args));
        }
        self.request(now, "prompts/get", Some(p), opts)
    }

    /// `resources/read`.
    pub fn read_resource(
        &mut self,
        now: Instant,
        uri: &str,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        self.require("resources")?;
        let mut p = Map::new();
        p.insert("uri".into(), Value::from(uri));
        self.request(now, "resources/read", Some(p), opts)
    }

    /// `ping`; allowed before the handshake completes.
    pub fn ping(&mut self, now: Instant, opts: CallOptions) -> Result<CallId, ClientError> {
        self.request(now, "ping", None, opts)
    }

    fn list(
        &mut self,
        now: Instant,
        method: &'static str,
        key: &'static str,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        let id = self.send(now, Cow::Borrowed(method), None, &opts)?;
        let call = CallId(id);
        self.calls.insert(
            id,
            CallState {
                call,
                listing: Some(Box::new(Listing {
                    method,
                    key,
                    items: Vec::new(),
                    pages: 0,
                    opts,
                })),
            },
        );
        self.pump(now);
        Ok(call)
    }

    /// Cancels a call: it ends as cancelled, and the server is told (never for `initialize`).
    pub fn cancel(
        &mut self,
        now: Instant,
        call: CallId,
        reason: Option<String>,
    ) -> Result<(), ClientError> {
        let id = self.current_page.get(&call).copied().unwrap_or(call.0);
        if !self.calls.contains_key(&id) {
            return Err(ClientError::UnknownCall(call));
        }
        self.engine.cancel(now, id, reason)?;
        self.pump(now);
        Ok(())
    }

    /// Answers a server request (an elicitation, sampling or roots request) exactly once.
    pub fn respond(
        &mut self,
        now: Instant,
        id: &Id,
        answer: Result<RawJson, ErrorObject>,
    ) -> Result<Responded, ClientError> {
        let r = self.engine.respond(now, id, answer)?;
        self.pump(now);
        Ok(r)
    }

    /// Sends a notification (for example `notifications/roots/list_changed`).
    pub fn notify(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<RawJson>,
    ) -> Result<(), ClientError> {
        self.engine.notify(now, method, params)?;
        self.pump(now);
        Ok(())
    }

    /// Reports a frame the transport could not turn into a message; the connection lives on.
    pub fn handle_bad_frame(&mut self, error: crate::codec::jsonl::FrameError) {
        self.events
            .push_back(ClientEvent::Diagnostic(ProtocolDiagnostic::Frame(error)));
    }

    /// A message from the server.
    pub fn handle_message(&mut self, now: Instant, message: Message) {
        self.engine.handle_message(now, message);
        self.pump(now);
    }

    /// The connection ended (the process exited, the stream closed): every call ends with
    /// `error`, and the state is closed for good.
    pub fn handle_closed(&mut self, now: Instant, error: LocalError) {
        self.engine.close_with(now, error);
        self.pump(now);
    }

    /// Closes the connection from our side.
    pub fn close(&mut self, now: Instant, reason: &str) {
        self.engine.close(now, reason.to_owned());
        self.pump(now);
    }

    /// The earliest deadline.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.engine.poll_timeout()
    }

    /// Fires what is due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.engine.handle_timeout(now);
        self.pump(now);
    }

    /// The next message for the transport to carry.
    pub fn poll_transmit(&mut self) -> Option<Message> {
        self.transmit.pop_front()
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// The next notification from the server (a bounded queue: a slow reader loses the oldest and
    /// is told how many).
    pub fn poll_notification(&mut self) -> Option<ServerNotification> {
        Some(match self.engine.poll_notification()? {
            AppNotification::Dropped { count } => ServerNotification::Dropped { count },
            AppNotification::Notification(n) => typed_notification(n),
        })
    }

    /// Moves everything the engine produced into our queues, handling what is ours.
    fn pump(&mut self, now: Instant) {
        while let Some(out) = self.engine.poll_output() {
            match out {
                Output::Send(m) => self.transmit.push_back(m),
                Output::Completed { id, outcome, .. } => self.completed(now, id, outcome),
                Output::Progress(p) => {
                    let call = self.calls.get(&p.id).map(|c| c.call);
                    if let Some(call) = call {
                        self.events.push_back(ClientEvent::Progress {
                            call,
                            progress: p.progress,
                            total: p.total,
                            message: p.message,
                        });
                    }
                }
                Output::InboundRequest(r) => self.server_request(now, r),
                Output::InboundCancelled { id, reason } => self
                    .events
                    .push_back(ClientEvent::ServerRequestCancelled { id, reason }),
                Output::Diagnostic(d) => self
                    .events
                    .push_back(ClientEvent::Diagnostic(ProtocolDiagnostic::Engine(d))),
                Output::Closed { reason } => {
                    self.phase = Phase::Closed;
                    self.calls.clear();
                    self.current_page.clear();
                    self.events.push_back(ClientEvent::Closed { reason });
                }
            }
        }
    }

    fn completed(&mut self, now: Instant, id: i64, outcome: Outcome) {
        if self.phase == Phase::Initializing(id) {
            self.handshake_done(now, outcome);
            return;
        }
        let Some(state) = self.calls.remove(&id) else {
            return;
        };
        let outcome = match outcome {
            Ok(Reply::Result(r)) => Ok(r),
            Ok(Reply::Error(e)) => Err(CallError::Server(e)),
            Err(e) => Err(CallError::Local(e)),
        };
        let call = state.call;
        let outcome = match (state.listing, outcome) {
            (None, outcome) => outcome,
            (Some(listing), Ok(page)) => match self.next_page(now, call, listing, &page) {
                Ok(None) => return,
                Ok(Some(all)) => Ok(all),
                Err(e) => Err(e),
            },
            (Some(_), Err(e)) => Err(e),
        };
        self.current_page.remove(&call);
        self.events
            .push_back(ClientEvent::CallDone { call, outcome });
    }

    /// Takes one page of a list; sends the next request, or gives the whole list.
    fn next_page(
        &mut self,
        now: Instant,
        call: CallId,
        mut listing: Box<Listing>,
        page: &RawJson,
    ) -> Result<Option<RawJson>, CallError> {
        let parsed: Map<String, Value> = page
            .parse()
            .map_err(|e| CallError::InvalidResult(format!("{}: {e}", listing.method)))?;
        let items = parsed.get(listing.key).ok_or_else(|| {
            CallError::InvalidResult(format!("{} result has no {}", listing.method, listing.key))
        })?;
        let items: Vec<Box<RawValue>> = serde_json::from_value(items.clone())
            .map_err(|e| CallError::InvalidResult(format!("{}: {e}", listing.method)))?;
        listing.items.extend(items);
        listing.pages += 1;
        let cursor = match parsed.get("nextCursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.clone()),
            Some(other) => {
                return Err(CallError::InvalidResult(format!(
                    "{}: nextCursor is not a string: {other}",
                    listing.method
                )))
            }
        };
        let Some(cursor) = cursor else {
            let mut all = Map::new();
            let items = std::mem::take(&mut listing.items);
            all.insert(
                listing.key.into(),
                serde_json::to_value(items).unwrap_or(Value::Null),
            );
            return Ok(Some(raw(&all)));
        };
        if listing.pages >= MAX_PAGES {
            return Err(CallError::InvalidResult(format!(
                "{} did not end after {MAX_PAGES} pages",
                listing.method
            )));
        }
        let mut p = Map::new();
        p.insert("cursor".into(), Value::String(cursor));
        let opts = listing.opts.clone();
        match self.send(now, Cow::Borrowed(listing.method), Some(p), &opts) {
            Ok(id) => {
                self.calls.insert(
                    id,
                    CallState {
                        call,
                        listing: Some(listing),
                    },
                );
                self.current_page.insert(call, id);
                Ok(None)
            }
            Err(ClientError::Engine(EngineError::Closed)) => {
                Err(CallError::Local(LocalError::ConnectionClosed {
                    reason: "connection closed".into(),
                }))
            }
            Err(e) => Err(CallError::InvalidResult(e.to_string())),
        }
    }

    fn handshake_done(&mut self, now: Instant, outcome: Outcome) {
        let failure = match outcome {
            Ok(Reply::Result(r)) => match r.parse::<InitializeResult>() {
                Ok(init) if is_handshake_version(&init.protocol_version) => {
                    self.server = Some(Box::new(init.clone()));
                    self.phase = Phase::Ready;
                    // A closed engine cannot refuse here: it would have ended the handshake first.
                    let _ = self
                        .engine
                        .notify(now, "notifications/initialized", None);
                    self.events.push_back(ClientEvent::Ready(Box::new(init)));
                    return;
                }
                Ok(init) => CallError::InvalidResult(format!(
                    "the server answered with protocol version {:?}, which this client does not speak (it speaks {})",
                    init.protocol_version,
                    super::types::HANDSHAKE_VERSIONS.join(", ")
                )),
                Err(e) => CallError::InvalidResult(format!("initialize: {e}")),
            },
            Ok(Reply::Error(e)) => CallError::Server(e),
            Err(e) => CallError::Local(e),
        };
        let reason = format!("handshake failed: {failure}");
        self.events.push_back(ClientEvent::HandshakeFailed(failure));
        self.phase = Phase::Closed;
        self.engine.close(now, reason);
    }

    fn server_request(&mut self, now: Instant, r: Request) {
        let declared = |v: &Option<Value>| v.is_some();
        let caps = &self.config.capabilities;
        let params: Value = r.params_as().unwrap_or(Value::Null);
        let refusal =
            match r.method.as_str() {
                "ping" => {
                    let _ =
                        self.engine
                            .respond(now, &r.id, Ok(RawJson::new(&Map::new()).expect("{}")));
                    return;
                }
                "elicitation/create" => {
                    let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
                    if elicitation_mode_declared(caps.elicitation.as_ref(), mode) {
                        self.events.push_back(ClientEvent::ServerRequest(
                            ServerRequest::Elicitation { id: r.id, params },
                        ));
                        return;
                    }
                    ErrorObject::new(
                        codes::INVALID_PARAMS,
                        format!("elicitation mode {mode:?} was not declared by the client"),
                    )
                }
                "sampling/createMessage" if declared(&caps.sampling) => {
                    self.events
                        .push_back(ClientEvent::ServerRequest(ServerRequest::Sampling {
                            id: r.id,
                            params,
                        }));
                    return;
                }
                "roots/list" if declared(&caps.roots) => {
                    self.events
                        .push_back(ClientEvent::ServerRequest(ServerRequest::Roots {
                            id: r.id,
                        }));
                    return;
                }
                other => ErrorObject::new(
                    codes::METHOD_NOT_FOUND,
                    format!("method not found: {other}"),
                ),
            };
        let _ = self.engine.respond(now, &r.id, Err(refusal.clone()));
        self.events.push_back(ClientEvent::Diagnostic(
            ProtocolDiagnostic::RefusedServerRequest {
                id: r.id,
                method: r.method,
                error: refusal,
            },
        ));
    }
}

/// Whether the client's `elicitation` capability covers `mode` (`{}` means form only).
fn elicitation_mode_declared(cap: Option<&Value>, mode: &str) -> bool {
    let Some(cap) = cap else { return false };
    let has_form = cap.get("form").is_some();
    let has_url = cap.get("url").is_some();
    match mode {
        "form" => has_form || !has_url,
        "url" => has_url,
        _ => false,
    }
}

fn typed_notification(n: Notification) -> ServerNotification {
    match n.method.as_str() {
        "notifications/tools/list_changed" => ServerNotification::ToolsListChanged,
        "notifications/prompts/list_changed" => ServerNotification::PromptsListChanged,
        "notifications/resources/list_changed" => ServerNotification::ResourcesListChanged,
        "notifications/resources/updated" => {
            #[derive(Deserialize)]
            struct P {
                uri: String,
            }
            match n.params_as::<P>() {
                Ok(p) => ServerNotification::ResourceUpdated { uri: p.uri },
                Err(_) => ServerNotification::Other(n),
            }
        }
        "notifications/message" => match n.params_as::<LoggingMessageParams>() {
            Ok(p) => ServerNotification::Log(p),
            Err(_) => ServerNotification::Other(n),
        },
        _ => ServerNotification::Other(n),
    }
}

/// Serializes a value we built; our own types always serialize.
fn raw<T: serde::Serialize + ?Sized>(value: &T) -> RawJson {
    RawJson::new(value).expect("protocol values serialize")
}
