//! [`Connection`]: one MCP client connection to one server, as one sans-IO machine.

mod event;
pub(crate) mod http;
mod input;
pub(crate) mod protocol;
mod reads;
mod stdio;
mod transport;

use std::time::Instant;

pub use event::Output;
pub use http::{ExchangeId, HttpAction, HttpMethod, HttpOptions, HttpRequest, CLOSE_GRACE};
pub use input::{AuthorizationInput, HttpInput, StdioInput};
pub use protocol::vocabulary::calls::McpCall;
pub use protocol::vocabulary::events::{Diagnostic, Event, OnProgress, Progress};
pub use protocol::{
    task_of, typed_result, CallError, CallId, CallOptions, CallOutcome, ChosenEra, ClientConfig,
    ClientError, Era, EraReason, HandlerFailure, HostHandler, ServerNotification, ServerRequest,
    TaskStatus, HANDLER_FAILED, MAX_PAGES,
};
pub use stdio::{ProcessAction, ProcessExit, ShutdownTimeouts, EXIT_AFTER_EOF_GRACE};

use crate::codec::jsonl::DEFAULT_MAX_LINE;
use crate::jsonrpc::{ErrorObject, Id, RawJson};
use crate::rpc::Responded;
use crate::tap::FrameObserver;
use http::sse::HttpSse;
use http::streamable::StreamableHttp;
use protocol::ClientProtocol;
use stdio::Stdio;

/// Inputs tolerated while outputs stay undrained before a debug build objects: a driver that
/// feeds the connection without draining [`Connection::poll_output`] breaks the drive rule.
const UNDRAINED_INPUTS_LIMIT: u32 = 1024;

/// The stdio transport's limits and waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StdioOptions {
    /// The waits of the graceful shutdown (default 2 s after stdin EOF, 2 s after SIGTERM).
    pub shutdown: ShutdownTimeouts,
    /// The longest stdout line accepted (default 16 MiB).
    pub max_line: usize,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            shutdown: ShutdownTimeouts::default(),
            max_line: DEFAULT_MAX_LINE,
        }
    }
}

/// The transport machine inside a connection: what one transport keeps (its decoder, its
/// exchanges or its process), beside the protocol it carries, which the connection owns.
#[derive(Debug)]
enum Transport {
    Stdio(Box<Stdio>),
    Streamable(Box<StreamableHttp>),
    /// The 2024-11-05 transport: pinned, or moved to from Streamable HTTP by `Era::Auto`.
    Sse(Box<HttpSse>),
}

/// One MCP client connection to one server, over stdio or Streamable HTTP, in either protocol
/// era: a sans-IO state machine. It does no IO and reads no clock; a driver moves bytes and time
/// between it and the world.
///
/// # The face
///
/// - **four input verbs**: what the world did, each with the caller's `now`.
///   [`handle_stdio`](Self::handle_stdio) takes what the server process did ([`StdioInput`]:
///   stdout bytes, their end, the exit, a respawn done or failed);
///   [`handle_http`](Self::handle_http) what happened to one HTTP exchange ([`HttpInput`]: the
///   response head, each body chunk, the end, a failure, a request that never left);
///   [`handle_authorization`](Self::handle_authorization) how an authorization came out
///   ([`AuthorizationInput`]); [`handle_timeout`](Self::handle_timeout) that time passed. An
///   input of the other transport is refused with [`ClientError::WrongTransport`], in every
///   build, and changes nothing.
/// - **commands**: [`call`](Self::call) makes any MCP call built with [`McpCall`] (tools,
///   prompts, resources, skills, lists over all their pages, `ping`, `subscriptions/listen`,
///   any method as it is with [`McpCall::request`]), [`cancel`](Self::cancel),
///   [`respond`](Self::respond) to a server request, [`notify`](Self::notify),
///   [`roots_changed`](Self::roots_changed), [`close`](Self::close). Misuse returns a
///   [`ClientError`] at once and changes nothing.
/// - **one output verb**: [`poll_output`](Self::poll_output) hands out [`Output`]s in the order
///   they must be carried out: for stdio, process actions, then bytes to write; for HTTP,
///   exchanges to start or abort; then the application's [`Event`]s (diagnostics,
///   notifications, then the protocol's events in the order they happened: readiness, progress
///   before its call's end, server requests, and [`Event::Closed`] last of all). What the
///   connection learns is told there, as events.
/// - **time**: [`poll_timeout`](Self::poll_timeout) is the next deadline;
///   [`handle_timeout`](Self::handle_timeout) fires everything due. After `handle_timeout(t)`,
///   `poll_timeout()` is later than `t` or `None`.
/// - **reads**: where it stands ([`era`](Self::era), [`server`](Self::server),
///   [`is_ready`](Self::is_ready), [`is_closed`](Self::is_closed),
///   [`is_finished`](Self::is_finished), …).
///
/// After every input or command the connection hands what the protocol queued to its
/// transport, once: that is its one flush point.
///
/// # The drive rule
///
/// After every input, command or `handle_timeout`, drain [`poll_output`](Self::poll_output)
/// until it returns `None`; then wait for IO, a command, or the deadline from
/// [`poll_timeout`](Self::poll_timeout) (check it against your clock rather than trusting a
/// timer's wake-up). Debug builds panic when a driver keeps feeding inputs without draining.
///
/// ```
/// use std::time::Instant;
/// use mcpwire_core::{ClientConfig, Connection, Event, Output, StdioOptions};
///
/// // `now` comes from the driver's clock: the core never reads one.
/// # fn start(now: Instant) {
/// let mut conn = Connection::stdio(now, ClientConfig::default(), StdioOptions::default());
/// let mut stdin = Vec::new();
/// while let Some(out) = conn.poll_output() {
///     match out {
///         Output::Write(bytes) => stdin.extend_from_slice(&bytes),
///         Output::Process(action) => { /* signal, close stdin, spawn again */ }
///         Output::Event(event) => { /* hand it to the application */ }
///         _ => {}
///     }
/// }
/// // The era probe went out first: `server/discover`.
/// assert!(String::from_utf8(stdin).unwrap().contains("server/discover"));
/// // Now wait for stdout bytes (conn.handle_stdio), the exit, a command or the deadline.
/// assert!(conn.poll_timeout().is_some());
/// # }
/// # start(Instant::now());
/// ```
#[derive(Debug)]
pub struct Connection {
    /// The MCP protocol spoken: the handshake or the stateless era, the calls, the request
    /// engine.
    protocol: ClientProtocol,
    transport: Transport,
    /// Whether `poll_output` returned `None` since the last input.
    drained: bool,
    /// Inputs fed while outputs were left undrained.
    undrained_inputs: u32,
}

impl Connection {
    /// A connection to a server process the driver has just spawned; the handshake (or the era
    /// probe) starts at once.
    pub fn stdio(now: Instant, config: ClientConfig, options: StdioOptions) -> Connection {
        let mut protocol = ClientProtocol::new(config);
        protocol
            .start(now)
            .expect("a new connection starts its handshake");
        let stdio = Stdio::new(options.shutdown, options.max_line);
        Connection::new(protocol, Transport::Stdio(Box::new(stdio)))
    }

    /// A connection to a Streamable HTTP endpoint; the start (the era probe, or `initialize`
    /// with [`Era::Handshake`](crate::Era::Handshake)) begins at once.
    ///
    /// With [`Era::Auto`](crate::Era::Auto) a `server/discover` POST goes first: an answer means the stateless
    /// era; a 400, 404 or 405 whose body is not a 2026-07-28 error means an older server, and
    /// `initialize` follows; 401, 403 and 5xx are failures, never signs of the era, and so is
    /// no answer within the probe timeout.
    ///
    /// A configured header that HTTP cannot carry, or that the HTTP client sets itself
    /// (`Content-Length`, `Host`, …: see [`header::check_configured`](crate::header::check_configured)),
    /// is refused with [`ClientError::Header`]; a bad URL ([`check_url`](crate::config::check_url)), [`ClientError::Url`].
    pub fn http(
        now: Instant,
        config: ClientConfig,
        server: &crate::config::HttpConfig,
        options: HttpOptions,
    ) -> Result<Connection, ClientError> {
        crate::config::check_url(&server.url).map_err(ClientError::Url)?;
        // A header HTTP cannot carry, or one the HTTP client sets itself, is refused here,
        // before any backend sees it.
        for (name, value) in &server.headers {
            crate::header::check_configured(name, value).map_err(ClientError::Header)?;
        }
        if server.kind == crate::config::HttpKind::Sse {
            // Pinned to the 2024-11-05 transport: no probe; the handshake era, which starts
            // once the stream names its endpoint.
            let config = ClientConfig {
                era: crate::connection::protocol::Era::Handshake,
                ..config
            };
            let mut protocol = ClientProtocol::new(config);
            protocol.set_over_http();
            let init_timeout = protocol.config().init_timeout;
            let sse = HttpSse::new(now, server, options, init_timeout);
            let mut conn = Connection::new(protocol, Transport::Sse(Box::new(sse)));
            conn.after(now);
            return Ok(conn);
        }
        let mut protocol = ClientProtocol::new(config);
        protocol.set_over_http();
        protocol
            .start(now)
            .expect("a new connection starts its handshake");
        let http = StreamableHttp::new(server, options);
        let mut conn = Connection::new(protocol, Transport::Streamable(Box::new(http)));
        conn.after(now);
        Ok(conn)
    }

    fn new(protocol: ClientProtocol, transport: Transport) -> Connection {
        Connection {
            protocol,
            transport,
            drained: false,
            undrained_inputs: 0,
        }
    }

    /// Tells the connection what the wall clock read at `now`, in milliseconds since the Unix
    /// epoch: the only wall-clock time it is given. The tasks it runs for the server
    /// (2025-11-25) are stamped from it plus the time gone since (without it, their times
    /// count from 1970-01-01 at the first task). A driver gives it once, after making the
    /// connection.
    pub fn set_wall_clock(&mut self, now: Instant, unix_millis: u64) {
        self.protocol.set_wall_clock(now, unix_millis);
    }

    /// Installs the frame observer: it sees every message in and out (for HTTP, message bodies
    /// only, never headers).
    pub fn set_observer(&mut self, observer: Box<dyn FrameObserver>) {
        match &mut self.transport {
            Transport::Stdio(s) => s.set_observer(observer),
            Transport::Streamable(h) => h.set_observer(observer),
            Transport::Sse(h) => h.set_observer(observer),
        }
    }

    /// After an input or a command: what the protocol queued goes to the transport at `now`
    /// (over HTTP, exchanges are started and timed from it; over stdio, frames are encoded as
    /// they are handed out).
    fn after(&mut self, now: Instant) {
        match &mut self.transport {
            Transport::Stdio(_) => {}
            Transport::Streamable(h) => h.after_input(&mut self.protocol, now),
            Transport::Sse(h) => h.after_input(&mut self.protocol, now),
        }
    }

    /// Runs a command on the protocol at `now`, then hands what it queued to the transport.
    fn command<T>(&mut self, now: Instant, run: impl FnOnce(&mut ClientProtocol) -> T) -> T {
        self.drained = false;
        let out = run(&mut self.protocol);
        self.after(now);
        out
    }

    // ---- inputs ----

    /// Counts an input for the drive rule: a debug build objects to a driver that keeps
    /// feeding inputs without draining the outputs.
    fn input(&mut self) {
        if !self.drained {
            self.undrained_inputs += 1;
            debug_assert!(
                self.undrained_inputs <= UNDRAINED_INPUTS_LIMIT,
                "the drive rule: drain Connection::poll_output after every input"
            );
        }
        self.drained = false;
    }

    /// The transport a refusal names.
    fn transport_name(&self) -> &'static str {
        match self.transport {
            Transport::Stdio(_) => "stdio",
            Transport::Streamable(_) | Transport::Sse(_) => "HTTP",
        }
    }

    /// What the server process did (stdio). An HTTP connection refuses it with
    /// [`ClientError::WrongTransport`], changing nothing.
    pub fn handle_stdio(&mut self, now: Instant, input: StdioInput<'_>) -> Result<(), ClientError> {
        if !matches!(self.transport, Transport::Stdio(_)) {
            return Err(ClientError::WrongTransport {
                input: input.name(),
                transport: self.transport_name(),
            });
        }
        self.input();
        if let Transport::Stdio(s) = &mut self.transport {
            let p = &mut self.protocol;
            match input {
                StdioInput::Stdout(bytes) => s.handle_stdout(p, now, bytes),
                StdioInput::StdoutEof => s.handle_stdout_eof(p, now),
                StdioInput::Exit { exit, stderr_tail } => s.handle_exit(p, now, exit, stderr_tail),
                StdioInput::Respawned => s.handle_respawned(p, now),
                StdioInput::RespawnFailed(message) => s.handle_respawn_failed(p, now, message),
            }
        }
        self.after(now);
        Ok(())
    }

    /// What happened to HTTP exchange `exchange`: its response head, a body chunk, its end, its
    /// failure (see [`HttpInput`]), or a note of the HTTP client that carried it. A stdio
    /// connection refuses it with [`ClientError::WrongTransport`], changing nothing.
    pub fn handle_http(
        &mut self,
        now: Instant,
        exchange: ExchangeId,
        input: HttpInput<'_>,
    ) -> Result<(), ClientError> {
        if let Transport::Stdio(_) = self.transport {
            return Err(ClientError::WrongTransport {
                input: input.name(),
                transport: self.transport_name(),
            });
        }
        self.input();
        let p = &mut self.protocol;
        match (&mut self.transport, input) {
            (Transport::Stdio(_), _) => {}
            (_, HttpInput::Note(note)) => p.note_http(note),
            (Transport::Streamable(h), input) => match input {
                HttpInput::Head { status, headers } => {
                    h.handle_head(p, now, exchange, status, headers)
                }
                HttpInput::Body(bytes) => h.handle_body(p, now, exchange, bytes),
                HttpInput::End => h.handle_end(p, now, exchange),
                HttpInput::Failure(failure) => h.handle_failure(p, now, exchange, &failure),
                HttpInput::Unsent(failure) => h.handle_unsent(p, now, exchange, &failure),
                HttpInput::Note(_) => {}
            },
            (Transport::Sse(h), input) => match input {
                HttpInput::Head { status, headers } => {
                    h.handle_head(p, now, exchange, status, headers)
                }
                HttpInput::Body(bytes) => h.handle_body(p, now, exchange, bytes),
                HttpInput::End => h.handle_end(p, now, exchange),
                HttpInput::Failure(failure) => h.handle_failure(p, now, exchange, &failure),
                HttpInput::Unsent(failure) => h.handle_unsent(p, now, exchange, &failure),
                HttpInput::Note(_) => {}
            },
        }
        self.after(now);
        Ok(())
    }

    /// How an authorization asked for with [`Event::AuthorizationRequired`] came out, or a
    /// token given ahead of any refusal (HTTP; see [`AuthorizationInput`]). A stdio
    /// connection refuses it with [`ClientError::WrongTransport`], changing nothing.
    pub fn handle_authorization(
        &mut self,
        now: Instant,
        input: AuthorizationInput<'_>,
    ) -> Result<(), ClientError> {
        if let Transport::Stdio(_) = self.transport {
            return Err(ClientError::WrongTransport {
                input: "an authorization",
                transport: self.transport_name(),
            });
        }
        self.input();
        let refused;
        let input = match input {
            AuthorizationInput::Token(token) => {
                match crate::header::check("Authorization", &format!("Bearer {token}")) {
                    Ok(()) => AuthorizationInput::Token(token),
                    Err(e) => {
                        refused = format!("the access token is not usable: {e}");
                        AuthorizationInput::Failed(&refused)
                    }
                }
            }
            failed => failed,
        };
        let p = &mut self.protocol;
        match (&mut self.transport, input) {
            (Transport::Streamable(h), AuthorizationInput::Token(token)) => {
                h.set_access_token(p, now, token)
            }
            (Transport::Streamable(h), AuthorizationInput::Failed(reason)) => {
                h.authorization_failed(p, now, reason)
            }
            (Transport::Sse(h), AuthorizationInput::Token(token)) => {
                h.set_access_token(p, now, token)
            }
            (Transport::Sse(h), AuthorizationInput::Failed(reason)) => {
                h.authorization_failed(p, now, reason)
            }
            (Transport::Stdio(_), _) => {}
        }
        self.after(now);
        Ok(())
    }

    /// The tools' schemas from the last complete `tools/list`, until the tools change
    /// (feature `schemas`): a host can check a result or arguments of its own with them.
    #[cfg(feature = "schemas")]
    pub fn tool_schemas(&self) -> Option<std::sync::Arc<crate::schema::ToolSchemas>> {
        self.protocol.tool_schemas()
    }

    // ---- commands ----

    /// One MCP call built with [`McpCall`]: its capability checked, a list read over all its
    /// pages; any request ([`McpCall::request`], its params without `_meta`: the stateless
    /// era's is added), [`McpCall::ping`] (the one call allowed before the connection is ready)
    /// and [`McpCall::listen`] go this way too. The call is borrowed, so the caller may keep it
    /// (to send it again if it may have run).
    pub fn call(
        &mut self,
        now: Instant,
        call: &McpCall,
        options: CallOptions,
    ) -> Result<CallId, ClientError> {
        self.command(now, |p| p.call(now, call, options))
    }

    /// Tells the server the host's roots changed (`notifications/roots/list_changed`, handshake
    /// era): it asks for them again with `roots/list`. Refused, sending nothing, when the
    /// connection declared no roots, and in the stateless era (no session to tell: the server
    /// asks for roots in each round).
    pub fn roots_changed(&mut self, now: Instant) -> Result<(), ClientError> {
        if self.protocol.config().capabilities.roots.is_none() {
            return Err(ClientError::Config(
                "roots changed, but the connection declared no roots (set a roots handler)".into(),
            ));
        }
        if self.era() == Some(ChosenEra::Stateless) {
            return Err(ClientError::NotSupported(
                "announced roots changes in the stateless era (it asks for roots in each round)",
            ));
        }
        self.command(now, |p| {
            p.notify(now, "notifications/roots/list_changed", None)
        })
    }

    /// Sends a notification.
    pub fn notify(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<RawJson>,
    ) -> Result<(), ClientError> {
        self.command(now, |p| p.notify(now, method, params))
    }

    /// Cancels a call: it ends as cancelled, and the server is told (never for `initialize`).
    pub fn cancel(
        &mut self,
        now: Instant,
        call: CallId,
        reason: Option<String>,
    ) -> Result<(), ClientError> {
        self.command(now, |p| p.cancel(now, call, reason))
    }

    /// Answers a server request ([`Event::ServerRequest`]) exactly once, in either era: in the
    /// handshake era as a JSON-RPC response, in the stateless era as an input of the call's next
    /// round. An answer to a request the server cancelled is accepted and not sent. For a
    /// request the server asked to run as a task (2025-11-25, with the `tasks` capability
    /// declared), the connection answered at once with the task: this answer is the task's
    /// result ([`Responded::TaskResult`]), for the server to fetch.
    pub fn respond(
        &mut self,
        now: Instant,
        id: &Id,
        answer: Result<RawJson, ErrorObject>,
    ) -> Result<Responded, ClientError> {
        self.command(now, |p| p.respond(now, id, answer))
    }

    /// Closes the connection from our side: every pending call ends as closed; then, for stdio,
    /// the server's stdin is closed and it is given time to exit before it is terminated, then
    /// killed; for HTTP, open exchanges are aborted and the session is deleted. Closing twice
    /// does nothing more.
    pub fn close(&mut self, now: Instant) {
        self.drained = false;
        let p = &mut self.protocol;
        match &mut self.transport {
            Transport::Stdio(s) => s.close(p, now),
            Transport::Streamable(h) => h.close(p, now),
            Transport::Sse(h) => h.close(p, now),
        }
        self.after(now);
    }

    /// Gives back the buffer of an [`Output::Write`] once its bytes are written (stdio), so the
    /// next frames are encoded into it rather than into a new allocation. Optional.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        if let Transport::Stdio(s) = &mut self.transport {
            s.recycle(buf);
        }
    }

    // ---- outputs and time ----

    /// The next thing to do; see the type's docs for the order. `None` when everything is out.
    pub fn poll_output(&mut self) -> Option<Output> {
        let p = &mut self.protocol;
        let out = match &mut self.transport {
            Transport::Stdio(s) => s
                .poll_process_action(p)
                .map(Output::Process)
                .or_else(|| s.take_write(p).map(Output::Write))
                .or_else(|| s.poll_event().map(Output::Event)),
            Transport::Streamable(h) => match h.poll_action() {
                Some(action) => Some(Output::Http(action)),
                None => match h.poll_event() {
                    Some(event) => Some(Output::Event(event)),
                    // What Streamable HTTP had to say is out: the move may happen.
                    None if h.wants_switch() => return self.switch_to_sse(),
                    None => None,
                },
            },
            Transport::Sse(h) => h
                .poll_action()
                .map(Output::Http)
                .or_else(|| h.poll_event().map(Output::Event)),
        };
        let out = out.or_else(|| self.protocol.poll_event().map(Output::Event));
        if out.is_none() {
            self.drained = true;
            self.undrained_inputs = 0;
        }
        out
    }

    /// Streamable HTTP has handed out everything and asks to move to the 2024-11-05 HTTP+SSE
    /// transport (`initialize` was refused as an older server refuses it): the move happens
    /// here, the old exchanges aborted first.
    fn switch_to_sse(&mut self) -> Option<Output> {
        let Transport::Streamable(h) = &mut self.transport else {
            return None;
        };
        let switch = h.take_switch(&mut self.protocol)?;
        let at = switch.at;
        let init_timeout = self.protocol.config().init_timeout;
        self.transport = Transport::Sse(Box::new(HttpSse::switched(switch, init_timeout)));
        self.after(at);
        self.poll_output()
    }

    /// The earliest deadline: a call's, the probe's, an exchange's, a resume's, the shutdown's.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let transport = match &self.transport {
            Transport::Stdio(s) => s.poll_timeout(),
            Transport::Streamable(h) => h.poll_timeout(),
            Transport::Sse(h) => h.poll_timeout(),
        };
        [self.protocol.poll_timeout(), transport]
            .into_iter()
            .flatten()
            .min()
    }

    /// Fires everything due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.input();
        let p = &mut self.protocol;
        match &mut self.transport {
            Transport::Stdio(s) => s.handle_timeout(p, now),
            Transport::Streamable(h) => h.handle_timeout(p, now),
            Transport::Sse(h) => h.handle_timeout(p, now),
        }
        self.after(now);
    }
}
