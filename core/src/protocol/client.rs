//! The client side of MCP in both eras, on the request engine.
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
//! - era detection ([`Era::Auto`]): a `server/discover` probe first, judged by
//!   [`judge_probe`]; the verdict holds for the connection;
//! - handshake era: `initialize` offering [`LATEST_HANDSHAKE_VERSION`], accepting any
//!   handshake-era version the server answers with and failing clearly on any other, then
//!   `notifications/initialized`; nothing but `ping` before the answer; server pings answered;
//!   server requests surfaced at once, or refused with the error protocol.md §12 prescribes;
//! - stateless era: `_meta` (version, capabilities, identity) on every request; the
//!   `input_required` loop for `tools/call`, `prompts/get` and `resources/read`, its input
//!   requests surfaced as the same [`ServerRequest`] events as the handshake era's, so the
//!   application cannot tell the eras apart; `subscriptions/listen`;
//! - calls gated by the server's capabilities; every list over all pages (an empty-string cursor
//!   continues the list); progress routed to its call; typed notifications; every call ends
//!   exactly once.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use serde::ser::SerializeMap;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::era::{judge_probe, ChosenEra, Era, Verdict, UNSUPPORTED_PROTOCOL_VERSION};
use super::events::{
    CallError, CallId, CallOptions, ClientError, ClientEvent, ProtocolDiagnostic,
    ServerNotification, ServerRequest,
};
use super::types::{
    is_handshake_version, ClientCapabilities, Implementation, InitializeParams, InitializeResult,
    LoggingMessageParams, ServerCapabilities, LATEST_HANDSHAKE_VERSION, LATEST_VERSION,
};
use crate::jsonrpc::{codes, ErrorObject, Id, Message, Notification, RawJson, Request};
use crate::rpc::{
    AppNotification, Engine, Limits, LocalError, Origin, Outcome, Output, Reply, RequestOptions,
    Responded,
};

/// How many pages one list call may take before the server is judged to loop.
pub const MAX_PAGES: usize = 10_000;

/// `_meta` keys of the stateless era.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

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
    /// Which era to speak; [`Era::Auto`] probes.
    pub era: Era,
    /// How long the `server/discover` probe may go unanswered before the server is taken for a
    /// handshake-era one (a cold `npx` can take seconds).
    pub probe_timeout: Duration,
    /// How many `input_required` rounds one call may take.
    pub max_input_rounds: usize,
    /// Caps on what the connection holds.
    pub limits: Limits,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            client_info: Implementation::mcpwire(),
            protocol_version: LATEST_HANDSHAKE_VERSION.into(),
            capabilities: ClientCapabilities::default(),
            init_timeout: Duration::from_secs(30),
            era: Era::Auto,
            probe_timeout: Duration::from_secs(10),
            max_input_rounds: 16,
            limits: Limits::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Probing(i64),
    /// The probe went unanswered: waiting for a fresh transport to start the handshake on.
    AwaitingTransport,
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
    /// The smallest `ttlMs` of the pages, and whether any page was private.
    ttl_ms: Option<u64>,
    private: bool,
    opts: CallOptions,
}

/// A stateless-era call that may need input rounds: what to send again.
#[derive(Debug)]
struct Retry {
    method: &'static str,
    params: Map<String, Value>,
    opts: CallOptions,
    rounds: usize,
    answers: Vec<(String, Box<RawValue>)>,
    outstanding: usize,
    request_state: Option<Box<RawValue>>,
}

#[derive(Debug)]
struct CallState {
    call: CallId,
    listing: Option<Box<Listing>>,
    retry: Option<Box<Retry>>,
}

/// The client protocol over one connection, in either era.
#[derive(Debug)]
pub struct ClientProtocol {
    config: ClientConfig,
    engine: Engine,
    phase: Phase,
    era: Option<ChosenEra>,
    restart_requested: bool,
    /// A new handshake runs because the server forgot the session: calls may go on.
    renewing: bool,
    server: Option<Box<InitializeResult>>,
    /// The stateless era's `_meta` for every request.
    meta: Map<String, Value>,
    /// Calls by the id of their request now in flight.
    calls: HashMap<i64, CallState>,
    /// For calls past their first request: the request now in flight.
    current: HashMap<CallId, i64>,
    /// Stateless-era calls waiting for the application's inputs.
    awaiting: HashMap<CallId, Box<Retry>>,
    /// The ids given to input requests, to route the application's answers.
    inputs: HashMap<Id, (CallId, String)>,
    events: VecDeque<ClientEvent>,
    transmit: VecDeque<Message>,
}

/// Params as sent: the caller's members, our `_meta`, and raw members echoed byte for byte.
struct Params<'a> {
    base: Option<&'a Map<String, Value>>,
    meta: Option<Map<String, Value>>,
    raw: &'a [(&'a str, &'a RawValue)],
}

impl serde::Serialize for Params<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(base) = self.base {
            for (k, v) in base {
                if !(k == "_meta" && self.meta.is_some()) {
                    m.serialize_entry(k, v)?;
                }
            }
        }
        if let Some(meta) = &self.meta {
            m.serialize_entry("_meta", meta)?;
        }
        for (k, v) in self.raw {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// How a stateless-era result reads.
enum ResultKind {
    Complete,
    InputRequired {
        requests: Map<String, Value>,
        state: Option<Box<RawValue>>,
    },
    Unknown(String),
}

fn result_kind(raw: &RawJson) -> Result<ResultKind, String> {
    // Most results are complete and many are big: look before parsing.
    if memchr::memmem::find(raw.get().as_bytes(), b"\"resultType\"").is_none() {
        return Ok(ResultKind::Complete);
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Head {
        #[serde(default)]
        result_type: Option<String>,
        #[serde(default)]
        input_requests: Option<Map<String, Value>>,
        #[serde(default)]
        request_state: Option<Box<RawValue>>,
    }
    let head: Head = raw.parse().map_err(|e| e.to_string())?;
    Ok(match head.result_type.as_deref() {
        None | Some("complete") => ResultKind::Complete,
        Some("input_required") => ResultKind::InputRequired {
            requests: head.input_requests.unwrap_or_default(),
            state: head.request_state,
        },
        Some(other) => ResultKind::Unknown(other.to_owned()),
    })
}

impl ClientProtocol {
    /// A client that has not started.
    pub fn new(config: ClientConfig) -> Self {
        let mut meta = Map::new();
        meta.insert(META_VERSION.into(), Value::from(LATEST_VERSION));
        meta.insert(
            META_CAPABILITIES.into(),
            serde_json::to_value(&config.capabilities)
                .unwrap_or_else(|_| Value::Object(Map::new())),
        );
        meta.insert(
            META_CLIENT_INFO.into(),
            serde_json::to_value(&config.client_info).unwrap_or(Value::Null),
        );
        ClientProtocol {
            engine: Engine::new(config.limits.clone()),
            config,
            phase: Phase::Idle,
            era: None,
            restart_requested: false,
            renewing: false,
            server: None,
            meta,
            calls: HashMap::new(),
            current: HashMap::new(),
            awaiting: HashMap::new(),
            inputs: HashMap::new(),
            events: VecDeque::new(),
            transmit: VecDeque::new(),
        }
    }

    /// What the server told us about itself (its `initialize` answer, or in the stateless era
    /// what `server/discover` said, with version 2026-07-28), once known.
    pub fn server(&self) -> Option<&InitializeResult> {
        self.server.as_deref()
    }

    /// The era the connection settled on, once known.
    pub fn era(&self) -> Option<ChosenEra> {
        self.era
    }

    /// Whether the connection is ready for calls.
    pub fn is_ready(&self) -> bool {
        self.phase == Phase::Ready
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// Whether a new handshake runs because the server forgot the session.
    pub fn is_renewing(&self) -> bool {
        self.renewing
    }

    /// The server forgot the session (HTTP, handshake era): runs the handshake again, offering
    /// the version negotiated before. Calls stay pending; the transport holds new requests until
    /// the handshake completes (see [`is_renewing`](Self::is_renewing)).
    pub fn renew_session(&mut self, now: Instant) -> Result<(), ClientError> {
        if self.renewing {
            return Ok(());
        }
        if self.phase != Phase::Ready || self.era != Some(ChosenEra::Handshake) {
            return Err(ClientError::NotReady);
        }
        let version = self
            .server
            .as_ref()
            .map(|s| s.protocol_version.clone())
            .unwrap_or_else(|| self.config.protocol_version.clone());
        self.renewing = true;
        self.send_initialize(now, version)
    }

    /// Whether request `id` still awaits its answer.
    pub fn is_pending(&self, id: i64) -> bool {
        self.engine.is_pending(id)
    }

    /// Ends one request here: the transport lost what was to carry its answer.
    pub fn fail_request(&mut self, now: Instant, id: i64, error: LocalError) {
        if self.engine.fail(now, id, error).is_ok() {
            self.pump(now);
        }
    }

    /// The request engine, for its statistics.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Starts the connection: the probe (`server/discover`) or, with [`Era::Handshake`],
    /// `initialize`.
    pub fn start(&mut self, now: Instant) -> Result<(), ClientError> {
        if self.phase != Phase::Idle {
            return Err(ClientError::AlreadyStarted);
        }
        if self.config.era == Era::Handshake {
            let version = self.config.protocol_version.clone();
            return self.send_initialize(now, version);
        }
        let timeout = match self.config.era {
            Era::Auto => self.config.probe_timeout,
            _ => self.config.init_timeout,
        };
        let opts = RequestOptions::new()
            .timeout(timeout)
            .origin(Origin::PROTOCOL);
        let params = Params {
            base: None,
            meta: Some(self.meta.clone()),
            raw: &[],
        };
        let id = self
            .engine
            .request(now, "server/discover", Some(raw(&params)), opts)?;
        self.phase = Phase::Probing(id);
        self.pump(now);
        Ok(())
    }

    fn send_initialize(&mut self, now: Instant, version: String) -> Result<(), ClientError> {
        let params = InitializeParams {
            protocol_version: version,
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

    /// Whether the probe failed in a way that needs a fresh transport (the server never
    /// answered, or died): the transport should start a new one and call
    /// [`transport_restarted`](Self::transport_restarted). Reading clears it.
    pub fn take_restart_request(&mut self) -> bool {
        std::mem::take(&mut self.restart_requested)
    }

    /// The transport died while the probe was in flight: with [`Era::Auto`] the probe ends as
    /// lost and a fresh transport is asked for (returns `true`); otherwise nothing is done.
    pub fn probe_transport_lost(&mut self, now: Instant) -> bool {
        match self.phase {
            Phase::Probing(id) if self.config.era == Era::Auto => {
                let _ = self.engine.fail(now, id, LocalError::StreamLost);
                self.pump(now);
                true
            }
            Phase::AwaitingTransport => true,
            _ => false,
        }
    }

    /// A fresh transport is up after a failed probe: the handshake starts on it.
    pub fn transport_restarted(&mut self, now: Instant) -> Result<(), ClientError> {
        if self.phase != Phase::AwaitingTransport {
            return Err(ClientError::AlreadyStarted);
        }
        self.era = Some(ChosenEra::Handshake);
        // Whatever was queued for the old transport (a cancellation of the probe) is not for
        // the new server, which must see `initialize` first.
        self.transmit.clear();
        let version = self.config.protocol_version.clone();
        self.send_initialize(now, version)
    }

    fn check_open(&self, method: &str) -> Result<(), ClientError> {
        match self.phase {
            Phase::Ready => Ok(()),
            Phase::Initializing(_) if self.renewing => Ok(()),
            Phase::Closed => Err(ClientError::Closed),
            _ if method == "ping" && self.era != Some(ChosenEra::Stateless) => Ok(()),
            _ => Err(ClientError::NotReady),
        }
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
        self.check_open(&method)?;
        let retry = match (&method, self.era) {
            (
                Cow::Borrowed(m @ ("tools/call" | "prompts/get" | "resources/read")),
                Some(ChosenEra::Stateless),
            ) => Some(Box::new(Retry {
                method: m,
                params: params.clone().unwrap_or_default(),
                opts: opts.clone(),
                rounds: 0,
                answers: Vec::new(),
                outstanding: 0,
                request_state: None,
            })),
            _ => None,
        };
        let id = self.send(now, method, params.as_ref(), &opts, &[])?;
        let call = CallId(id);
        self.calls.insert(
            id,
            CallState {
                call,
                listing: None,
                retry,
            },
        );
        self.pump(now);
        Ok(call)
    }

    /// Sends one request of a call: adds `_meta` in the stateless era and the progress token
    /// when asked for.
    fn send(
        &mut self,
        now: Instant,
        method: Cow<'static, str>,
        params: Option<&Map<String, Value>>,
        opts: &CallOptions,
        raw_members: &[(&str, &RawValue)],
    ) -> Result<i64, ClientError> {
        let mut ropts = RequestOptions::new()
            .timeout(opts.timeout)
            .reset_on_progress(opts.reset_on_progress);
        if let Some(total) = opts.max_total {
            ropts = ropts.max_total(total);
        }
        let modern = self.era == Some(ChosenEra::Stateless);
        let mut meta = if modern {
            let mut meta = self.meta.clone();
            if let Some(Value::Object(theirs)) = params.and_then(|p| p.get("_meta")) {
                for (k, v) in theirs {
                    meta.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            Some(meta)
        } else {
            None
        };
        if opts.progress {
            let token = self.engine.next_id();
            ropts = ropts.progress_token(token);
            let m = meta.get_or_insert_with(|| match params.and_then(|p| p.get("_meta")) {
                Some(Value::Object(theirs)) => theirs.clone(),
                _ => Map::new(),
            });
            m.insert("progressToken".into(), Value::from(token));
        }
        let body = if params.is_none() && meta.is_none() && raw_members.is_empty() {
            None
        } else {
            Some(raw(&Params {
                base: params,
                meta,
                raw: raw_members,
            }))
        };
        Ok(self.engine.request(now, method, body, ropts)?)
    }

    /// Checks that the server offered `capability` (a key of its capabilities).
    fn require(&self, capability: &'static str) -> Result<(), ClientError> {
        self.check_open("")?;
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

    /// `tools/list` over all pages; the call's result is `{"tools": [...]}` (with the smallest
    /// `ttlMs` and the `cacheScope` of the pages when the server gave them).
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

    /// `ping`: allowed before the handshake completes; gone from the stateless era.
    pub fn ping(&mut self, now: Instant, opts: CallOptions) -> Result<CallId, ClientError> {
        if self.era == Some(ChosenEra::Stateless) {
            return Err(ClientError::NotSupported("ping (removed in 2026-07-28)"));
        }
        self.request(now, "ping", None, opts)
    }

    /// `subscriptions/listen` (stateless era): asks for the notifications named in
    /// `notifications` (e.g. `{"toolsListChanged": true}`). The call stays open: its
    /// notifications arrive as [`ServerNotification::ForSubscription`] after a
    /// [`ServerNotification::SubscriptionAcknowledged`]; [`cancel`](Self::cancel) ends it.
    pub fn listen(&mut self, now: Instant, notifications: Value) -> Result<CallId, ClientError> {
        self.check_open("")?;
        if self.era != Some(ChosenEra::Stateless) {
            return Err(ClientError::NotSupported(
                "subscriptions/listen (the stateless era)",
            ));
        }
        let mut p = Map::new();
        p.insert("notifications".into(), notifications);
        let opts = CallOptions {
            // A subscription has no deadline: it lasts until one side ends it.
            timeout: Duration::MAX,
            ..CallOptions::default()
        };
        self.request(now, "subscriptions/listen", Some(p), opts)
    }

    fn list(
        &mut self,
        now: Instant,
        method: &'static str,
        key: &'static str,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        let id = self.send(now, Cow::Borrowed(method), None, &opts, &[])?;
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
                    ttl_ms: None,
                    private: false,
                    opts,
                })),
                retry: None,
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
        if self.awaiting.remove(&call).is_some() {
            // Waiting for our own inputs: nothing is in flight to tell the server about.
            self.inputs.retain(|_, (c, _)| *c != call);
            self.current.remove(&call);
            self.events.push_back(ClientEvent::CallDone {
                call,
                outcome: Err(CallError::Local(LocalError::Cancelled { reason })),
            });
            return Ok(());
        }
        let id = self.current.get(&call).copied().unwrap_or(call.0);
        if !self.calls.contains_key(&id) {
            return Err(ClientError::UnknownCall(call));
        }
        self.engine.cancel(now, id, reason)?;
        self.pump(now);
        Ok(())
    }

    /// Answers a server request (elicitation, sampling, roots) exactly once, in either era: in
    /// the handshake era as a JSON-RPC response, in the stateless era as one of the inputs of the
    /// call's next round.
    pub fn respond(
        &mut self,
        now: Instant,
        id: &Id,
        answer: Result<RawJson, ErrorObject>,
    ) -> Result<Responded, ClientError> {
        if let Some((call, key)) = self.inputs.remove(id) {
            self.input_answered(now, call, key, answer);
            return Ok(Responded::Sent);
        }
        let r = self.engine.respond(now, id, answer)?;
        self.pump(now);
        Ok(r)
    }

    /// Sends a notification.
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

    /// A message from the server.
    pub fn handle_message(&mut self, now: Instant, message: Message) {
        self.engine.handle_message(now, message);
        self.pump(now);
    }

    /// The connection ended (the process exited, the stream closed): every call ends with
    /// `error`, and the state is closed for good.
    pub fn handle_closed(&mut self, now: Instant, error: LocalError) {
        self.fail_awaiting(&error);
        self.engine.close_with(now, error);
        self.pump(now);
    }

    /// Closes the connection from our side.
    pub fn close(&mut self, now: Instant, reason: &str) {
        self.fail_awaiting(&LocalError::ConnectionClosed {
            reason: reason.into(),
        });
        self.engine.close(now, reason.to_owned());
        self.pump(now);
    }

    /// Ends the calls that wait for our own inputs (no request of theirs is pending).
    fn fail_awaiting(&mut self, error: &LocalError) {
        let mut calls: Vec<CallId> = self.awaiting.drain().map(|(c, _)| c).collect();
        calls.sort_unstable();
        self.inputs.clear();
        for call in calls {
            self.current.remove(&call);
            self.events.push_back(ClientEvent::CallDone {
                call,
                outcome: Err(CallError::Local(error.clone())),
            });
        }
    }

    /// The earliest deadline.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.engine.poll_timeout()
    }

    /// Fires what is due.
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
                    self.current.clear();
                    self.events.push_back(ClientEvent::Closed { reason });
                }
            }
        }
    }

    fn completed(&mut self, now: Instant, id: i64, outcome: Outcome) {
        match self.phase {
            Phase::Probing(p) if p == id => return self.probe_done(now, outcome),
            Phase::Initializing(i) if i == id => return self.handshake_done(now, outcome),
            _ => {}
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
        let outcome = match (state.listing, state.retry, outcome) {
            (Some(listing), _, Ok(page)) => match self.next_page(now, call, listing, &page) {
                Ok(None) => return,
                Ok(Some(all)) => Ok(all),
                Err(e) => Err(e),
            },
            (None, Some(retry), Ok(result)) => match result_kind(&result) {
                Ok(ResultKind::Complete) => Ok(result),
                Ok(ResultKind::InputRequired { requests, state }) => {
                    match self.input_round(call, retry, requests, state) {
                        Ok(Some(retry)) => match self.send_retry(now, call, retry) {
                            Ok(()) => return,
                            Err(e) => Err(e),
                        },
                        Ok(None) => return,
                        Err(e) => Err(e),
                    }
                }
                Ok(ResultKind::Unknown(t)) => Err(CallError::InvalidResult(format!(
                    "{}: unknown resultType {t:?}",
                    retry.method
                ))),
                Err(e) => Err(CallError::InvalidResult(format!("{}: {e}", retry.method))),
            },
            (None, None, Ok(result)) if self.era == Some(ChosenEra::Stateless) => {
                match result_kind(&result) {
                    Ok(ResultKind::Complete) => Ok(result),
                    Ok(ResultKind::InputRequired { .. }) => Err(CallError::InvalidResult(
                        "input_required is not allowed for this method".into(),
                    )),
                    Ok(ResultKind::Unknown(t)) => Err(CallError::InvalidResult(format!(
                        "unknown resultType {t:?}"
                    ))),
                    Err(e) => Err(CallError::InvalidResult(e)),
                }
            }
            (_, _, outcome) => outcome,
        };
        self.current.remove(&call);
        self.events
            .push_back(ClientEvent::CallDone { call, outcome });
    }

    /// Surfaces one round's input requests. Returns the retry to send at once when the round
    /// asks for nothing (state only), `None` when inputs are awaited.
    fn input_round(
        &mut self,
        call: CallId,
        mut retry: Box<Retry>,
        requests: Map<String, Value>,
        state: Option<Box<RawValue>>,
    ) -> Result<Option<Box<Retry>>, CallError> {
        retry.rounds += 1;
        if retry.rounds > self.config.max_input_rounds {
            return Err(CallError::InvalidResult(format!(
                "{} asked for input more than {} times",
                retry.method, self.config.max_input_rounds
            )));
        }
        retry.request_state = state;
        retry.answers.clear();
        retry.outstanding = requests.len();
        let mut surfaced = Vec::with_capacity(requests.len());
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            let params = request.get("params").cloned().unwrap_or(Value::Null);
            let id = Id::Str(format!("input/{}/{key}", call.0));
            let caps = &self.config.capabilities;
            let event = match method {
                "elicitation/create" => {
                    let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
                    elicitation_mode_declared(caps.elicitation.as_ref(), mode).then(|| {
                        ServerRequest::Elicitation {
                            id: id.clone(),
                            params,
                        }
                    })
                }
                "sampling/createMessage" => {
                    caps.sampling.is_some().then(|| ServerRequest::Sampling {
                        id: id.clone(),
                        params,
                    })
                }
                "roots/list" => caps
                    .roots
                    .is_some()
                    .then(|| ServerRequest::Roots { id: id.clone() }),
                _ => None,
            };
            match event {
                Some(e) => surfaced.push((id, key, e)),
                None => {
                    return Err(CallError::InvalidResult(format!(
                        "the server asked for input {key:?} by {method:?}, which this client did not declare"
                    )))
                }
            }
        }
        if surfaced.is_empty() {
            return Ok(Some(retry));
        }
        for (id, key, event) in surfaced {
            self.inputs.insert(id, (call, key));
            self.events.push_back(ClientEvent::ServerRequest(event));
        }
        self.awaiting.insert(call, retry);
        Ok(None)
    }

    fn input_answered(
        &mut self,
        now: Instant,
        call: CallId,
        key: String,
        answer: Result<RawJson, ErrorObject>,
    ) {
        let Some(retry) = self.awaiting.get_mut(&call) else {
            return;
        };
        match answer {
            Ok(value) => {
                retry.answers.push((key, value.into_raw()));
                retry.outstanding -= 1;
                if retry.outstanding > 0 {
                    return;
                }
                let retry = self.awaiting.remove(&call).expect("present");
                if let Err(e) = self.send_retry(now, call, retry) {
                    self.current.remove(&call);
                    self.events.push_back(ClientEvent::CallDone {
                        call,
                        outcome: Err(e),
                    });
                }
            }
            Err(error) => {
                self.awaiting.remove(&call);
                self.inputs.retain(|_, (c, _)| *c != call);
                self.current.remove(&call);
                self.events.push_back(ClientEvent::CallDone {
                    call,
                    outcome: Err(CallError::InputFailed { key, error }),
                });
            }
        }
        self.pump(now);
    }

    /// Sends the call again with a new id: the same method and params, the inputs, and the
    /// request state echoed byte for byte (left out when the server gave none).
    fn send_retry(
        &mut self,
        now: Instant,
        call: CallId,
        retry: Box<Retry>,
    ) -> Result<(), CallError> {
        let responses: std::collections::BTreeMap<&str, &RawValue> = retry
            .answers
            .iter()
            .map(|(k, v)| (k.as_str(), &**v))
            .collect();
        let responses = serde_json::value::to_raw_value(&responses)
            .map_err(|e| CallError::InvalidResult(e.to_string()))?;
        let mut members: Vec<(&str, &RawValue)> = Vec::with_capacity(2);
        if !retry.answers.is_empty() {
            members.push(("inputResponses", &responses));
        }
        if let Some(state) = &retry.request_state {
            members.push(("requestState", state));
        }
        let sent = self.send(
            now,
            Cow::Borrowed(retry.method),
            Some(&retry.params),
            &retry.opts,
            &members,
        );
        match sent {
            Ok(id) => {
                self.calls.insert(
                    id,
                    CallState {
                        call,
                        listing: None,
                        retry: Some(retry),
                    },
                );
                self.current.insert(call, id);
                self.pump(now);
                Ok(())
            }
            Err(ClientError::Closed) => Err(CallError::Local(LocalError::ConnectionClosed {
                reason: "connection closed".into(),
            })),
            Err(e) => Err(CallError::InvalidResult(e.to_string())),
        }
    }

    /// Takes one page of a list; sends the next request, or gives the whole list.
    fn next_page(
        &mut self,
        now: Instant,
        call: CallId,
        mut listing: Box<Listing>,
        page: &RawJson,
    ) -> Result<Option<RawJson>, CallError> {
        let parsed = parse_page(page.get(), listing.key)
            .map_err(|e| CallError::InvalidResult(format!("{}: {e}", listing.method)))?;
        let items = parsed.items.ok_or_else(|| {
            CallError::InvalidResult(format!("{} result has no {}", listing.method, listing.key))
        })?;
        let items: Vec<Box<RawValue>> = serde_json::from_str(items.get())
            .map_err(|e| CallError::InvalidResult(format!("{}: {e}", listing.method)))?;
        listing.items.extend(items);
        listing.pages += 1;
        // Caching hints: a missing or negative ttl is 0; the list is as fresh as its stalest
        // page, and private if any page is.
        if self.era == Some(ChosenEra::Stateless) || parsed.ttl_ms.is_some() {
            let ttl = parsed.ttl_ms.unwrap_or(0).max(0) as u64;
            listing.ttl_ms = Some(listing.ttl_ms.map_or(ttl, |t| t.min(ttl)));
        }
        listing.private |= parsed.cache_scope.as_deref() == Some("private");
        let Some(cursor) = parsed.next_cursor else {
            let mut all = Map::new();
            let items = std::mem::take(&mut listing.items);
            all.insert(
                listing.key.into(),
                serde_json::to_value(items).unwrap_or(Value::Null),
            );
            if let Some(ttl) = listing.ttl_ms {
                all.insert("ttlMs".into(), Value::from(ttl));
                let scope = if listing.private { "private" } else { "public" };
                all.insert("cacheScope".into(), Value::from(scope));
            }
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
        match self.send(now, Cow::Borrowed(listing.method), Some(&p), &opts, &[]) {
            Ok(id) => {
                self.calls.insert(
                    id,
                    CallState {
                        call,
                        listing: Some(listing),
                        retry: None,
                    },
                );
                self.current.insert(call, id);
                Ok(None)
            }
            Err(ClientError::Closed) => Err(CallError::Local(LocalError::ConnectionClosed {
                reason: "connection closed".into(),
            })),
            Err(e) => Err(CallError::InvalidResult(e.to_string())),
        }
    }

    fn probe_done(&mut self, now: Instant, outcome: Outcome) {
        match judge_probe(&outcome, self.config.era) {
            Verdict::Modern(discover) => {
                let described = discover
                    .as_ref()
                    .and_then(|raw| raw.parse::<Value>().ok())
                    .unwrap_or(Value::Null);
                let server_info = super::era::server_info_of(&described)
                    .and_then(|v| serde_json::from_value(v.clone()).ok())
                    .unwrap_or_default();
                let init = InitializeResult {
                    protocol_version: LATEST_VERSION.into(),
                    capabilities: described
                        .get("capabilities")
                        .and_then(|c| serde_json::from_value(c.clone()).ok())
                        .unwrap_or_default(),
                    server_info,
                    instructions: described
                        .get("instructions")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    extra: Map::new(),
                };
                self.era = Some(ChosenEra::Stateless);
                self.server = Some(Box::new(init.clone()));
                self.phase = Phase::Ready;
                self.events.push_back(ClientEvent::Ready(Box::new(init)));
            }
            Verdict::Handshake(version) => {
                self.era = Some(ChosenEra::Handshake);
                if let Err(e) = self.send_initialize(now, version) {
                    self.fail_handshake(now, CallError::InvalidResult(e.to_string()));
                }
            }
            Verdict::HandshakeOnNewProcess => {
                self.phase = Phase::AwaitingTransport;
                self.restart_requested = true;
            }
            Verdict::Fail(message) => {
                let error = match outcome {
                    Err(e) => CallError::Local(e),
                    Ok(Reply::Error(e)) if e.code != UNSUPPORTED_PROTOCOL_VERSION => {
                        CallError::Server(e)
                    }
                    _ => CallError::InvalidResult(message),
                };
                self.fail_handshake(now, error);
            }
        }
    }

    fn fail_handshake(&mut self, now: Instant, failure: CallError) {
        let reason = format!("handshake failed: {failure}");
        self.events.push_back(ClientEvent::HandshakeFailed(failure));
        self.phase = Phase::Closed;
        self.engine.close(now, reason);
        self.pump(now);
    }

    fn handshake_done(&mut self, now: Instant, outcome: Outcome) {
        let failure = match outcome {
            Ok(Reply::Result(r)) => match r.parse::<InitializeResult>() {
                Ok(init) if is_handshake_version(&init.protocol_version) => {
                    self.era = Some(ChosenEra::Handshake);
                    self.server = Some(Box::new(init.clone()));
                    self.phase = Phase::Ready;
                    // A closed engine cannot refuse here: it would have ended the handshake first.
                    let _ = self.engine.notify(now, "notifications/initialized", None);
                    let event = if std::mem::take(&mut self.renewing) {
                        ClientEvent::SessionRenewed(Box::new(init))
                    } else {
                        ClientEvent::Ready(Box::new(init))
                    };
                    self.events.push_back(event);
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
        self.fail_handshake(now, failure);
    }

    fn server_request(&mut self, now: Instant, r: Request) {
        let declared = |v: &Option<Value>| v.is_some();
        let caps = &self.config.capabilities;
        let params: Value = r.params_as().unwrap_or(Value::Null);
        let refusal =
            match r.method.as_str() {
                "ping" => {
                    let _ = self.engine.respond(now, &r.id, Ok(raw(&Map::new())));
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

/// The parts of one list page a listing needs; the items stay raw.
struct Page<'a> {
    items: Option<&'a RawValue>,
    next_cursor: Option<String>,
    ttl_ms: Option<i64>,
    cache_scope: Option<String>,
}

/// Reads one page of a list result whose items are under `key`.
fn parse_page<'a>(text: &'a str, key: &str) -> serde_json::Result<Page<'a>> {
    struct V<'k>(&'k str);
    impl<'de> serde::de::Visitor<'de> for V<'_> {
        type Value = Page<'de>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list result object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Page<'de>, A::Error> {
            let mut page = Page {
                items: None,
                next_cursor: None,
                ttl_ms: None,
                cache_scope: None,
            };
            while let Some(k) = m.next_key::<Cow<'de, str>>()? {
                match &*k {
                    k if k == self.0 => page.items = Some(m.next_value()?),
                    "nextCursor" => page.next_cursor = m.next_value()?,
                    "ttlMs" => page.ttl_ms = m.next_value::<Option<f64>>()?.map(|t| t as i64),
                    "cacheScope" => page.cache_scope = m.next_value()?,
                    _ => {
                        m.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
            }
            Ok(page)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let page = serde::Deserializer::deserialize_map(&mut de, V(key))?;
    de.end()?;
    Ok(page)
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

/// The subscription a stateless-era notification belongs to, from its `_meta`.
fn subscription_of(n: &Notification) -> Option<CallId> {
    #[derive(Deserialize)]
    struct P {
        #[serde(rename = "_meta", default)]
        meta: Option<Map<String, Value>>,
    }
    let p: P = n.params_as().ok()?;
    let id = p.meta?.get(META_SUBSCRIPTION)?.clone();
    let id: Id = serde_json::from_value(id).ok()?;
    id.as_i64().map(CallId)
}

fn typed_notification(n: Notification) -> ServerNotification {
    if let Some(subscription) = subscription_of(&n) {
        if n.method == "notifications/subscriptions/acknowledged" {
            let notifications = n
                .params_as::<Value>()
                .ok()
                .and_then(|p| p.get("notifications").cloned())
                .unwrap_or(Value::Null);
            return ServerNotification::SubscriptionAcknowledged {
                subscription,
                notifications,
            };
        }
        return ServerNotification::ForSubscription {
            subscription,
            notification: Box::new(typed_unsubscribed(n)),
        };
    }
    typed_unsubscribed(n)
}

fn typed_unsubscribed(n: Notification) -> ServerNotification {
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
