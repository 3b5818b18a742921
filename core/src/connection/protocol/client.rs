//! The client side of MCP in both eras, on the request engine.
//!
//! [`ClientProtocol`] turns calls into JSON-RPC requests and the peer's messages into typed
//! [`Event`]s. A transport machine (stdio, HTTP) feeds it messages and
//! [`TransportSignal`]s and carries what [`poll_transmit`](ClientProtocol::poll_transmit) hands
//! out; the connection drains its events (the drive rule of [`Connection`](crate::Connection)).
//!
//! What it does for the application:
//! - era detection ([`Era::Auto`]): a `server/discover` probe first, judged by
//!   [`judge_probe`]; the verdict holds for the connection;
//! - handshake era: `initialize`, accepting any handshake-era version the server answers with,
//!   then `notifications/initialized`; only `ping` before the answer; server requests surfaced
//!   at once, or refused with the error the protocol prescribes;
//! - stateless era: `_meta` on every request; `input_required` rounds surfaced as the same
//!   server requests as the handshake era's; `subscriptions/listen`;
//! - calls gated by the server's capabilities; every list over all pages (an empty-string cursor
//!   continues the list); progress routed to its call; typed notifications; every call ends
//!   exactly once.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::call::at_most_once::Repeat;
use super::call::input::{AwaitingInputs, Retry};
use super::call::listing::Listing;
use super::call::params::{self, ParamsRef, StatelessMeta};
use super::call::tool_headers::ToolHeaders;
use super::era::ChosenEra;
use super::handshake::{Ctx, Handshake, Phase};
use super::notifications::typed_notification;
pub(crate) use super::signal::{Signalled, TransportSignal};
use super::vocabulary::calls::{offered, offered_member, McpCall, Rules};
pub use super::vocabulary::client_config::ClientConfig;
use super::vocabulary::events::{
    CallError, CallId, CallOptions, ClientError, Event, ServerNotification,
};
use crate::error::Closed;
use crate::id_hash::IdHashing;
use crate::jsonrpc::{ErrorObject, Id, Message, RawJson};
use crate::rpc::{AppNotification, Engine, LocalError, RequestOptions, Responded};
use crate::types::{ClientCapabilities, InitializeResult};

#[derive(Debug)]
struct CallState {
    call: CallId,
    listing: Option<Box<Listing>>,
    retry: Option<Box<Retry>>,
    /// For a call safe to repeat: the request in flight, to send again once if it is lost.
    repeat: Option<Box<Repeat>>,
    /// A handshake-era `tools/call` sent in task mode: its options, to follow the task.
    task: Option<Box<CallOptions>>,
}

/// The handshake's view of the connection's parts (disjoint borrows of `self`).
macro_rules! cx {
    ($s:ident) => {
        Ctx {
            engine: &mut $s.engine,
            events: &mut $s.events,
            config: &$s.config,
            meta: &$s.meta,
        }
    };
}

mod held;
mod log_level;
mod lost;
mod outcomes;
mod outgoing;
mod refusals;
mod resource_subs;
mod rounds;
mod served;
mod signals;
mod task_calls;
mod tools;

/// The client protocol over one connection, in either era.
#[derive(Debug)]
pub struct ClientProtocol {
    config: ClientConfig,
    engine: Engine,
    handshake: Handshake,
    /// The stateless era's `_meta` for every request.
    meta: params::StatelessMeta,
    /// Calls by the id of their request now in flight.
    calls: HashMap<i64, CallState, IdHashing>,
    /// For calls past their first request: the request now in flight.
    current: HashMap<CallId, i64, IdHashing>,
    /// Stateless-era calls waiting for the application's inputs.
    awaiting: AwaitingInputs,
    /// The tools the last `tools/list` annotated read-only or idempotent (kept only when the
    /// configuration trusts annotations).
    repeatable_tools: HashSet<String>,
    /// The `x-mcp-header` marks of the last `tools/list` (HTTP, stateless era).
    tool_headers: ToolHeaders,
    /// Whether the transport is HTTP: marks are checked, and no fresh transport exists.
    over_http: bool,
    /// Tool calls waiting for the tools to be listed.
    held: Held,
    /// Resource subscriptions carried by listens (stateless era).
    resource_subs: ResourceSubs,
    /// What the stateless era's refusals (-32021, -32022) left.
    refusals: Refusals,
    /// Calls answered with a task, followed to their end.
    tasks: crate::connection::protocol::tasks::follow::Tasks,
    /// The tasks run for the server's requests (2025-11-25).
    served: super::tasks::served::ServedTasks,
    /// The tools the last `tools/list` says must be called in task mode (2025-11-25).
    task_tools: HashSet<String>,
    /// Whether a `tools/list` completed on this connection.
    tools_listed: bool,
    /// The tools' schemas from the last complete `tools/list`, until the tools change.
    #[cfg(feature = "schemas")]
    tool_schemas: Option<std::sync::Arc<crate::schema::ToolSchemas>>,
    /// Tool calls whose result is checked against their tool's `outputSchema`: the tool.
    #[cfg(feature = "schemas")]
    output_checks: HashMap<CallId, String, IdHashing>,
    events: VecDeque<Event>,
    transmit: VecDeque<Message>,
    /// Requests that left and ended here before their answer, for an HTTP transport to
    /// withdraw their exchanges.
    withdrawn: Vec<i64>,
}

impl ClientProtocol {
    /// A client that has not started.
    pub fn new(config: ClientConfig) -> Self {
        let meta = params::StatelessMeta::new(&config.client_info, &config.capabilities);
        let refusals = Refusals::new(
            &config.client_info,
            &config.capabilities,
            &config.capabilities_on_demand,
        );
        ClientProtocol {
            engine: Engine::new(config.limits.clone()),
            config,
            handshake: Handshake::new(),
            meta,
            calls: HashMap::default(),
            current: HashMap::default(),
            awaiting: AwaitingInputs::default(),
            repeatable_tools: HashSet::new(),
            tool_headers: ToolHeaders::default(),
            over_http: false,
            held: Default::default(),
            resource_subs: Default::default(),
            refusals,
            tasks: Default::default(),
            served: Default::default(),
            task_tools: HashSet::new(),
            tools_listed: false,
            #[cfg(feature = "schemas")]
            tool_schemas: None,
            #[cfg(feature = "schemas")]
            output_checks: HashMap::default(),
            events: VecDeque::new(),
            transmit: VecDeque::new(),
            withdrawn: Vec::new(),
        }
    }

    /// What the server told us about itself (its `initialize` answer, or in the stateless era
    /// what `server/discover` said, with version 2026-07-28), once known.
    pub fn server(&self) -> Option<&InitializeResult> {
        self.handshake.server.as_deref()
    }

    /// The era the connection settled on, once known.
    pub fn era(&self) -> Option<ChosenEra> {
        self.handshake.era
    }

    /// Why the connection speaks its era (the probe's answer, or the era pinned), once known.
    pub fn era_reason(&self) -> Option<super::era::EraReason> {
        self.handshake.era_reason
    }

    /// The configuration it was made with.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Whether the connection is ready for calls.
    pub fn is_ready(&self) -> bool {
        self.handshake.phase == Phase::Ready
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.handshake.phase == Phase::Closed
    }

    /// Whether a new handshake runs because the server forgot the session.
    pub fn is_renewing(&self) -> bool {
        self.handshake.renewing
    }

    /// Says the transport is HTTP: it cannot be started again (a probe that goes unanswered is
    /// an error, not a reason to fall back), and listed tools' `x-mcp-header` marks are checked.
    pub fn set_over_http(&mut self) {
        self.handshake.restartable = false;
        self.over_http = true;
    }

    /// Whether the era probe is in flight with [`Era::Auto`](super::Era::Auto): a transport
    /// lost now may be started again for the handshake.
    pub fn probe_may_restart(&self) -> bool {
        self.handshake.probe_may_restart(self.config.era)
    }

    /// How the last session renewal failed, once (the connection stays open: the transport
    /// decides whether to try again or to give up).
    pub fn take_renewal_failure(&mut self) -> Option<CallError> {
        self.handshake.renewal_failed.take()
    }

    /// Starts the connection: the probe (`server/discover`) or, with
    /// [`Era::Handshake`](super::Era::Handshake), `initialize`.
    pub fn start(&mut self, now: Instant) -> Result<(), ClientError> {
        self.handshake.start(now, cx!(self))?;
        self.pump(now);
        Ok(())
    }

    /// Whether the probe failed in a way that needs a fresh transport (the server never
    /// answered, or died): the transport starts a new one and signals
    /// [`TransportSignal::Restarted`]. Reading clears it.
    pub fn take_restart_request(&mut self) -> bool {
        self.handshake.take_restart_request()
    }

    fn check_open(&self, method: &str) -> Result<(), ClientError> {
        if let Some(closed) = self.engine.closed() {
            return Err(ClientError::Closed(closed.clone()));
        }
        self.handshake.check_open(method)
    }

    /// Whether request `id` still awaits its answer.
    pub fn is_pending(&self, id: i64) -> bool {
        self.engine.is_pending(id)
    }

    /// Ends one request here: the transport lost what was to carry its answer.
    fn fail_request(&mut self, now: Instant, id: i64, error: LocalError) {
        if self.engine.fail(now, id, error).is_ok() {
            self.pump(now);
        }
    }

    /// The request engine, for its statistics.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Sends any request and returns its call. Before the handshake completes only `ping` may go.
    pub fn request(
        &mut self,
        now: Instant,
        method: impl Into<Cow<'static, str>>,
        params: Option<Map<String, Value>>,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        self.request_ref(
            now,
            None,
            method.into(),
            params.as_ref().map(ParamsRef::Map),
            opts,
        )
    }

    /// [`request`](Self::request) with borrowed params: they are copied only where the call
    /// may need them again (a stateless round, a call safe to repeat). `held` is the call the
    /// request is sent for when the connection held it before sending (see the `held` module);
    /// otherwise the request's id names a new call.
    fn request_ref(
        &mut self,
        now: Instant,
        held: Option<CallId>,
        method: Cow<'static, str>,
        params: Option<ParamsRef<'_>>,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        self.check_open(&method)?;
        // The methods that may come back asking for input (however the name was spelled out).
        let rounds: Option<&'static str> = match method.as_ref() {
            "tools/call" => Some("tools/call"),
            "prompts/get" => Some("prompts/get"),
            "resources/read" => Some("resources/read"),
            _ => None,
        };
        let rounds = rounds.filter(|_| self.handshake.era == Some(ChosenEra::Stateless));
        let repeat = self.repeatable(&method, params, &opts).then(|| {
            let (method, params) = (method.clone(), params.map(ParamsRef::to_map));
            Box::new(Repeat::new(method, params, opts.clone()))
        });
        // A tool that must run as a task (2025-11-25) is called in task mode.
        let task = (method == "tools/call"
            && self.handshake.era == Some(ChosenEra::Handshake)
            && (opts.detach_task || self.task_mode(params)))
        .then(|| Box::new(opts.clone()));
        // `"task": {}` only for a call in task mode (made only then: it is an allocation).
        let task_member = task
            .is_some()
            .then(|| RawValue::from_string("{}".into()).expect("JSON"));
        let members: &[(&str, &RawValue)] = match &task_member {
            Some(member) => &[("task", member)],
            None => &[],
        };
        let (body, ropts) = self.encode(None, params, &opts, members);
        // A call that may be asked for input keeps what it sent, to send it again: the params
        // themselves, handed back by the transport once it has encoded them (`transmitted`).
        let retry = rounds.map(|m| Box::new(Retry::new(m, opts.clone())));
        let id = self.engine.request(now, method, body, ropts)?;
        let call = held.unwrap_or(CallId(id));
        if call.0 != id {
            self.current.insert(call, id);
        }
        self.calls.insert(
            id,
            CallState {
                call,
                listing: None,
                retry,
                repeat,
                task,
            },
        );
        self.pump(now);
        Ok(call)
    }

    /// Sends one request of `call` (`None`: a call's first): adds `_meta` in the stateless era
    /// and the progress token when asked for.
    fn send(
        &mut self,
        now: Instant,
        call: Option<CallId>,
        method: Cow<'static, str>,
        params: Option<&Map<String, Value>>,
        opts: &CallOptions,
        raw_members: &[(&str, &RawValue)],
    ) -> Result<i64, ClientError> {
        let (body, ropts) = self.encode(call, params.map(ParamsRef::Map), opts, raw_members);
        Ok(self.engine.request(now, method, body, ropts)?)
    }

    /// The params of one request of `call` as sent (see [`send`](Self::send)) and its options.
    fn encode(
        &mut self,
        call: Option<CallId>,
        params: Option<ParamsRef<'_>>,
        opts: &CallOptions,
        raw_members: &[(&str, &RawValue)],
    ) -> (Option<RawJson>, RequestOptions) {
        let mut ropts = RequestOptions::new()
            .timeout(opts.timeout)
            .reset_on_progress(opts.reset_on_progress);
        if let Some(total) = opts.max_total {
            ropts = ropts.max_total(total);
        }
        let stateless = self.handshake.era == Some(ChosenEra::Stateless);
        let progress_token = opts.progress.then(|| self.engine.next_id());
        if let Some(token) = progress_token {
            ropts = ropts.progress_token(token);
        }
        let meta = stateless.then(|| self.meta_for(call));
        (
            params::encode(
                params,
                meta,
                progress_token,
                opts.context_meta.as_ref(),
                raw_members,
            ),
            ropts,
        )
    }

    /// Checks that the server offered `capability` (a key of its capabilities).
    fn require(&self, capability: &'static str) -> Result<(), ClientError> {
        self.check_open("")?;
        let caps = &self.handshake.server.as_ref().expect("ready").capabilities;
        let refused = ClientError::NotSupported(capability);
        offered(caps, capability).then_some(()).ok_or(refused)
    }

    /// One of the typed MCP calls: checks that the server offers what it needs, then sends it
    /// (a list over all its pages).
    pub fn call(
        &mut self,
        now: Instant,
        call: &McpCall,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        match call.rules() {
            Rules::Plain => {}
            Rules::Ping => return self.ping(now, opts),
            Rules::Listen => return self.listen(now, call, opts),
        }
        if let Some(capability) = call.capability() {
            self.require(capability)?;
            if let Some((member, why)) = call.member() {
                let caps = self.server().map(|s| &s.capabilities);
                if !caps.is_some_and(|c| offered_member(c, capability, member)) {
                    return Err(ClientError::NotSupported(why));
                }
            }
        }
        if self.handshake.era == Some(ChosenEra::Stateless) {
            // What the stateless era removed, carried otherwise.
            match call.method() {
                "logging/setLevel" => return self.request_log_level(call),
                "resources/subscribe" => return self.subscribe_by_listen(now, call),
                "resources/unsubscribe" => return self.unsubscribe_by_listen(now, call),
                _ => {}
            }
        }
        match call.list() {
            Some((method, key)) => self.list(now, method, key, opts),
            None if call.method() == "tools/call" => self.call_tool(now, call, opts),
            None => {
                let method = call.method_cow().clone();
                self.request_ref(now, None, method, call.params_ref(), opts)
            }
        }
    }

    /// `ping`: allowed before the handshake completes; gone from the stateless era.
    fn ping(&mut self, now: Instant, opts: CallOptions) -> Result<CallId, ClientError> {
        if self.handshake.era == Some(ChosenEra::Stateless) {
            return Err(ClientError::NotSupported("ping (removed in 2026-07-28)"));
        }
        self.request(now, "ping", None, opts)
    }

    /// `subscriptions/listen` (stateless era): the call stays open, with no deadline: its
    /// notifications arrive as [`ServerNotification::ForSubscription`] after a
    /// [`ServerNotification::SubscriptionAcknowledged`]; [`cancel`](Self::cancel) ends it.
    fn listen(
        &mut self,
        now: Instant,
        call: &McpCall,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        self.check_open("")?;
        if self.handshake.era != Some(ChosenEra::Stateless) {
            return Err(ClientError::NotSupported(
                "subscriptions/listen (the stateless era)",
            ));
        }
        let opts = CallOptions {
            // A subscription has no deadline: it lasts until one side ends it.
            timeout: Duration::MAX,
            ..opts
        };
        let method = call.method_cow().clone();
        self.request_ref(now, None, method, call.params_ref(), opts)
    }

    fn list(
        &mut self,
        now: Instant,
        method: &'static str,
        key: &'static str,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        let id = self.send(now, None, Cow::Borrowed(method), None, &opts, &[])?;
        let call = CallId(id);
        let repeat = Some(Box::new(Repeat::new(method.into(), None, opts.clone())));
        let listing = Some(Box::new(Listing::new(method, key, opts)));
        self.calls.insert(
            id,
            CallState {
                call,
                listing,
                retry: None,
                repeat,
                task: None,
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
        if self.is_own_list(call) {
            // The connection's own list is no call of the application's.
            return Err(ClientError::UnknownCall(call));
        }
        let cancelled = LocalError::Cancelled {
            reason: reason.clone(),
        };
        if self.end_held(now, call, cancelled.clone()) {
            return Ok(());
        }
        if self.cancel_task(now, call, reason.clone()) {
            return Ok(());
        }
        if self.awaiting.remove(call).is_some() {
            // Waiting for our own inputs: nothing is in flight to tell the server about.
            self.end_call(call, Err(CallError::Local(cancelled)));
            return Ok(());
        }
        // The request now in flight for the call: its first, or a later page or round. An id
        // that is a later request's but no call's is not a call.
        let id = self.current.get(&call).copied().unwrap_or(call.0);
        if self.calls.get(&id).is_none_or(|state| state.call != call) {
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
        let answer = match self.awaiting.answer(id, answer) {
            Ok(answered) => {
                self.input_answered(now, answered);
                return Ok(Responded::Sent);
            }
            Err(answer) => answer,
        };
        let answer = match self.task_input(now, id, answer) {
            Ok(()) => return Ok(Responded::Sent),
            Err(answer) => answer,
        };
        let answer = match self.answer_task(now, id, answer) {
            Ok(responded) => return Ok(responded),
            Err(answer) => answer,
        };
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
        if let Message::Notification(n) = &message {
            if self.resource_sub_acknowledgement(now, n) {
                return self.pump(now);
            }
            self.task_pushed(now, n);
            self.tools_changed(n);
        }
        self.engine.handle_message(now, message);
        self.pump(now);
    }

    /// The connection ended (the process exited, the stream closed): every call ends with
    /// `error`, and the state is closed for good.
    fn handle_closed(&mut self, now: Instant, error: LocalError) {
        self.fail_awaiting(&error);
        self.engine.close_with(now, error);
        self.pump(now);
    }

    /// Closes the connection from our side.
    pub fn close(&mut self, now: Instant, reason: &str) {
        self.fail_awaiting(&LocalError::Closed(Closed::new(reason)));
        self.engine.close(now, reason.to_owned());
        self.pump(now);
    }

    /// Ends the calls that wait for our own inputs (no request of theirs is pending).
    fn fail_awaiting(&mut self, error: &LocalError) {
        for call in self.awaiting.drain() {
            self.end_call(call, Err(CallError::Local(error.clone())));
        }
        self.fail_tasks(error);
        self.end_all_held(error);
    }

    /// The earliest deadline.
    pub fn poll_timeout(&self) -> Option<Instant> {
        [
            self.engine.poll_timeout(),
            self.held_deadline(),
            self.tasks.poll_timeout(),
            self.served.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Fires what is due.
    pub fn handle_timeout(&mut self, now: Instant) {
        // Polls that come due go first: a poll's own deadline (a zero timeout) is then fired
        // by this same pass rather than left armed in the past.
        self.tasks_due(now);
        self.served_due(now);
        self.engine.handle_timeout(now);
        self.expire_held(now);
        self.pump(now);
    }

    /// The next event for the application: the server's notifications first (a bounded queue: a
    /// slow reader loses the oldest and is told how many), then what happened, in order.
    pub fn poll_event(&mut self) -> Option<Event> {
        if let Some(n) = self.engine.poll_notification() {
            return Some(Event::Notification(match n {
                AppNotification::Dropped { count } => ServerNotification::Dropped { count },
                AppNotification::Notification(n) => {
                    self.resource_sub_notification(typed_notification(n))
                }
            }));
        }
        self.events.pop_front()
    }
}

/// Why a call waits, and what it sends once the tools are listed.
#[derive(Debug)]
enum Waiting {
    /// Not sent yet: its params and options.
    Unsent {
        params: Map<String, Value>,
        opts: CallOptions,
        since: Instant,
    },
    /// Refused for its headers: its round, and the server's error.
    HeaderFix {
        retry: Box<Retry>,
        error: ErrorObject,
    },
}

#[derive(Debug)]
struct HeldCall {
    call: CallId,
    waiting: Waiting,
    /// When it gives up (its own timeout, counted from when it was held).
    deadline: Option<Instant>,
}

/// The calls waiting for the tools to be listed.
#[derive(Debug, Default)]
struct Held {
    /// The connection's own `tools/list`, in flight.
    list: Option<CallId>,
    calls: Vec<HeldCall>,
    /// Calls already sent once more for a mismatch.
    fixed: HashSet<CallId>,
    /// How the list ended, until what waited goes on.
    ended: Option<Result<(), CallError>>,
}

/// What the refusals left on the connection.
#[derive(Debug, Default)]
struct Refusals {
    /// The capabilities declared and those on demand together, with their `_meta` (none when
    /// nothing is on demand).
    wide: Option<(ClientCapabilities, StatelessMeta)>,
    /// Calls that declare the capabilities on demand too, since a `-32021`.
    widened: HashSet<CallId>,
    /// Calls sent once more after a `-32022`.
    version_retried: HashSet<CallId>,
}

impl Refusals {
    /// For a connection declaring `declared`, with `on_demand` to declare when asked.
    fn new(
        client_info: &crate::types::Implementation,
        declared: &ClientCapabilities,
        on_demand: &ClientCapabilities,
    ) -> Self {
        let wide = (!on_demand.is_empty()).then(|| {
            let all = declared.union(on_demand);
            let meta = StatelessMeta::new(client_info, &all);
            (all, meta)
        });
        Refusals {
            wide,
            ..Refusals::default()
        }
    }

    /// `call` ended: what was kept for it goes.
    fn forget(&mut self, call: CallId) {
        self.widened.remove(&call);
        self.version_retried.remove(&call);
    }
}

/// The connection's own listens for resource subscriptions.
#[derive(Debug, Default)]
struct ResourceSubs {
    /// By the listen call: its resource, and the subscribe calls waiting for its
    /// acknowledgement (none once acknowledged).
    by_listen: HashMap<CallId, Sub>,
    /// By resource: its listen.
    by_uri: HashMap<String, CallId>,
    /// Listens ended from here (unsubscribed, or declined), until their end comes back.
    ended: Vec<CallId>,
}

#[derive(Debug)]
struct Sub {
    uri: String,
    waiting: Vec<CallId>,
    acknowledged: bool,
}
