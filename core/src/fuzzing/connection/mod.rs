//! The whole [`Connection`], driven as a driver would: one connection over stdio or Streamable
//! HTTP, fed a sequence of operations taken from the input (server bytes and plausible server
//! messages, the application's commands, process events or HTTP exchange events, time), with
//! every output drained after every operation.

mod input;
mod templates;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::config::{HttpConfig, ServerConfig};
use crate::connection::McpCall;
use crate::jsonrpc::{self, ErrorObject, Id, Message, Parsed, RawJson};
use crate::rpc::Limits;
use crate::types::ClientCapabilities;
use input::Input;

use crate::connection::{
    AuthorizationInput, CallId, CallOptions, ClientConfig, ClientError, Connection, Era, Event,
    ExchangeId, HttpAction, HttpInput, HttpMethod, HttpOptions, HttpRequest, Output, ProcessAction,
    ProcessExit, ShutdownTimeouts, StdioInput, StdioOptions,
};

/// At most this many operations per input, so that one run stays fast.
const MAX_OPS: usize = 256;
/// How many deadlines the final phase follows before it gives up.
const FINAL_DEADLINES: usize = 64;
/// An operation byte from this one up closes the connection there (one in 32).
const CLOSE: u8 = 248;
const URL: &str = "http://127.0.0.1:1/mcp";
/// The endpoint's origin, with the path's first slash.
const ORIGIN: &str = "http://127.0.0.1:1/";

/// How the body of an HTTP exchange was announced by its head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Json,
    Sse,
    Other,
}

/// An exchange the connection started and the harness has not finished.
#[derive(Debug)]
struct Exchange {
    method: HttpMethod,
    /// The id of our request the POST carried.
    request: Option<i64>,
    head: Option<Framing>,
}

/// The server process as the harness plays it (stdio).
#[derive(Debug, Default)]
struct Process {
    /// A process runs and its exit was not reported.
    alive: bool,
    stdout_open: bool,
    /// A `SpawnAgain` awaits its answer.
    spawn_asked: bool,
    stdin_closed: bool,
    /// The furthest shutdown step asked for the current process: 1 CloseStdin, 2 Terminate,
    /// 3 Kill.
    shutdown_step: u8,
    /// The first message written after a respawn must be `initialize`.
    expect_initialize: bool,
}

/// The harness: the connection, and what it knows independently of it.
struct Harness {
    conn: Connection,
    http: bool,
    now: Instant,
    ops: usize,
    /// The input's length, for the memory bounds.
    input_len: usize,
    /// Every call a command returned: whether its one `CallDone` came.
    calls: HashMap<CallId, bool>,
    /// Our requests seen going out and not yet answered by the harness: id and method.
    in_flight: Vec<(i64, String)>,
    /// Stdio: the ids of every request sent.
    sent_ids: HashSet<i64>,
    /// The ids of the requests of the handshake (`initialize`, `server/discover`).
    handshake_ids: Vec<i64>,
    /// Server requests surfaced and not answered.
    surfaced: Vec<Id>,
    /// HTTP: exchanges started and not yet finished or aborted.
    exchanges: BTreeMap<ExchangeId, Exchange>,
    /// HTTP: every exchange ever started.
    started: HashSet<ExchangeId>,
    sse_event_ids: u64,
    process: Process,
    ready_seen: bool,
    handshake_failed: bool,
    closed_seen: bool,
    /// Bytes handed out to be written or posted.
    out_bytes: usize,
    /// Every session the connection has had (a resume goes in the session of its stream).
    sessions: Vec<String>,
    /// HTTP: whether refusals ask for authorization.
    authorizing: bool,
    /// An authorization was asked for and not yet given or refused.
    auth_asked: bool,
    /// `tasks/cancel` requests sent (each may stay pending after its call ended).
    task_cancels: usize,
    tokens: u32,
}

/// A server message as text, with the id of our request it answers (if any).
struct Msg {
    text: String,
    answers: Option<i64>,
}

fn config_from(flags: u8, extra: u8) -> (ClientConfig, bool) {
    let era = match (flags >> 1) & 3 {
        1 => Era::Handshake,
        2 => Era::Stateless,
        _ => Era::Auto,
    };
    let all = {
        let elicitation = if extra & 0x04 == 0 {
            json!({"form": {}})
        } else {
            json!({"form": {}, "url": {}})
        };
        ClientCapabilities {
            elicitation: Some(elicitation),
            roots: Some(json!({"listChanged": true})),
            sampling: Some(json!({})),
            ..ClientCapabilities::default()
        }
        .with_tasks()
    };
    // Every capability declared, none, or (stateless era) declared when a server needs them.
    let (capabilities, capabilities_on_demand) = match (flags & 0x08 == 0, extra & 0x08 == 0) {
        (true, _) => (all, ClientCapabilities::default()),
        (false, true) => (ClientCapabilities::default(), ClientCapabilities::default()),
        (false, false) => (ClientCapabilities::default(), all),
    };
    let limits = if flags & 0x10 != 0 {
        Limits {
            max_pending: 3,
            max_inbound: 2,
            max_notifications: 2,
            ended_record: 4,
            max_served_tasks: 2,
        }
    } else {
        Limits::default()
    };
    let short = flags & 0x80 != 0;
    let config = ClientConfig {
        capabilities,
        capabilities_on_demand,
        era,
        limits,
        init_timeout: if short {
            Duration::from_millis(200)
        } else {
            Duration::from_secs(30)
        },
        probe_timeout: if short {
            Duration::from_millis(100)
        } else {
            Duration::from_secs(10)
        },
        max_input_rounds: if short { 2 } else { 16 },
        ..ClientConfig::default()
    };
    (config, short)
}

fn endpoint() -> HttpConfig {
    match ServerConfig::http(URL) {
        ServerConfig::Http(h) => h,
        ServerConfig::Stdio(_) => unreachable!("an HTTP server config"),
    }
}

fn id_json(id: i64, as_string: bool) -> Value {
    if as_string {
        Value::from(id.to_string())
    } else {
        Value::from(id)
    }
}

/// A JSON string made of the input's bytes (as letters), for states, cursors and texts.
fn text_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| char::from(b'a' + b % 26)).collect()
}

impl Harness {
    fn new(epoch: Instant, flags: u8, extra: u8, input_len: usize) -> Harness {
        let http = flags & 1 != 0;
        let (config, short) = config_from(flags, extra);
        let conn = if http {
            let server = endpoint();
            let small = flags & 0x40 != 0;
            let options = HttpOptions {
                max_json_body: if small { 256 } else { 64 * 1024 },
                max_event: if small { 256 } else { 64 * 1024 },
                resume_budget: if short { 1 } else { 3 },
                default_retry: if short {
                    Duration::from_millis(5)
                } else {
                    Duration::from_secs(1)
                },
                standalone_stream: flags & 0x20 != 0,
                renewal_budget: if short { 1 } else { 3 },
                // Short enough that the fuzzer's clock reaches them.
                head_timeout: Some(Duration::from_millis(if short { 20 } else { 2_000 })),
                body_idle_timeout: Some(Duration::from_millis(if short { 20 } else { 2_000 })),
                authorization: extra & 0x01 != 0,
            };
            Connection::http(epoch, config, &server, options).expect("every era is spoken")
        } else {
            let options = StdioOptions {
                shutdown: if short {
                    ShutdownTimeouts {
                        after_close_stdin: Duration::from_millis(50),
                        after_terminate: Duration::from_millis(50),
                    }
                } else {
                    ShutdownTimeouts::default()
                },
                max_line: if flags & 0x40 != 0 { 256 } else { 64 * 1024 },
            };
            Connection::stdio(epoch, config, options)
        };
        Harness {
            conn,
            http,
            now: epoch,
            ops: 0,
            input_len,
            calls: HashMap::new(),
            in_flight: Vec::new(),
            sent_ids: HashSet::new(),
            handshake_ids: Vec::new(),
            surfaced: Vec::new(),
            exchanges: BTreeMap::new(),
            started: HashSet::new(),
            sse_event_ids: 0,
            process: Process {
                alive: !http,
                stdout_open: !http,
                ..Process::default()
            },
            ready_seen: false,
            handshake_failed: false,
            closed_seen: false,
            out_bytes: 0,
            sessions: Vec::new(),
            authorizing: http && extra & 0x01 != 0,
            auth_asked: false,
            task_cancels: 0,
            tokens: 0,
        }
    }

    // ---- the drive rule, and the invariants checked after every drain ----

    /// The most one event may weigh (its debug form).
    fn event_bound(&self) -> usize {
        64 * 1024 + 16 * self.input_len
    }

    /// The most the connection may hand out to write or post, so far.
    fn output_bound(&self) -> usize {
        64 * 1024 + 4 * 1024 * self.ops + 16 * self.input_len
    }

    fn drain(&mut self) {
        while let Some(out) = self.conn.poll_output() {
            match out {
                Output::Write(bytes) => self.on_write(&bytes),
                Output::Process(action) => self.on_process(action),
                Output::Http(HttpAction::Start(request)) => self.on_start(request),
                Output::Http(HttpAction::Abort(id)) => self.on_abort(id),
                Output::Event(event) => self.on_event(event),
            }
        }
        self.check();
    }

    fn check(&self) {
        assert_eq!(
            self.conn.is_closed(),
            self.closed_seen,
            "is_closed() and the Closed event disagree"
        );
        if self.handshake_failed {
            assert!(
                self.closed_seen,
                "a failed handshake left the connection open"
            );
        }
        let open_calls = self.calls.values().filter(|done| !**done).count();
        if self.closed_seen {
            assert_eq!(open_calls, 0, "a call outlived the Closed event");
            assert_eq!(self.conn.pending_requests(), 0, "a request outlived Closed");
        }
        // Each open call has at most one request in flight, and the handshake one more; a
        // task's cancellation goes on its own after its call ended (no call awaits its answer,
        // and its deadline bounds it), so each one sent is allowed for.
        assert!(
            self.conn.pending_requests() <= open_calls + 1 + self.task_cancels,
            "requests pending without their call: {} for {open_calls} calls ({:?})",
            self.conn.pending_requests(),
            self.in_flight
        );
        assert!(
            self.out_bytes <= self.output_bound(),
            "{} bytes handed out after {} operations",
            self.out_bytes,
            self.ops
        );
    }

    /// Notes a message of ours going out: a request is now in flight.
    fn on_message_out(&mut self, m: &Message) {
        if let Message::Request(r) = m {
            let id = r.id.as_i64().expect("our request ids are numbers");
            if !self.http {
                // Over HTTP a request met by a forgotten session is sent again, on the new one.
                assert!(self.sent_ids.insert(id), "request id {id} sent twice");
            }
            if r.method == "initialize" || r.method == "server/discover" {
                self.handshake_ids.push(id);
            }
            if r.method == "tasks/cancel" {
                self.task_cancels += 1;
            }
            self.in_flight.push((id, r.method.to_string()));
        }
    }

    fn on_write(&mut self, bytes: &[u8]) {
        assert!(!self.http, "a stdin write on an HTTP connection");
        assert!(
            !self.process.stdin_closed,
            "a write after the process's stdin was closed"
        );
        assert!(bytes.ends_with(b"\n"), "a write that is not whole lines");
        self.out_bytes += bytes.len();
        for line in bytes[..bytes.len() - 1].split(|b| *b == b'\n') {
            let m = match jsonrpc::parse(line) {
                Ok(Parsed::Single(m)) => m,
                other => panic!("a line written is not one message: {other:?}"),
            };
            if std::mem::take(&mut self.process.expect_initialize) {
                assert_eq!(
                    m.method(),
                    Some("initialize"),
                    "the new process must see initialize first"
                );
            }
            self.on_message_out(&m);
        }
    }

    fn on_process(&mut self, action: ProcessAction) {
        assert!(!self.http, "a process action on an HTTP connection");
        let p = &mut self.process;
        match action {
            ProcessAction::CloseStdin => {
                p.stdin_closed = true;
                p.shutdown_step = p.shutdown_step.max(1);
            }
            ProcessAction::Terminate => p.shutdown_step = p.shutdown_step.max(2),
            ProcessAction::Kill => p.shutdown_step = p.shutdown_step.max(3),
            ProcessAction::SpawnAgain => {
                assert!(
                    !p.spawn_asked,
                    "a second SpawnAgain before the first was done"
                );
                // The driver ends the old process (it was killed, or had exited) and starts a
                // new one; its exit is not reported.
                p.spawn_asked = true;
                p.alive = false;
                p.stdout_open = false;
            }
        }
    }

    fn on_start(&mut self, r: HttpRequest) {
        assert!(self.http, "an HTTP exchange on a stdio connection");
        assert!(self.started.insert(r.exchange), "an exchange id reused");
        // The endpoint, or (HTTP+SSE) a URL the stream's `endpoint` event named on its origin.
        assert!(
            r.url.starts_with(ORIGIN),
            "a request off the origin: {}",
            r.url
        );
        let mut names: Vec<String> = r.headers.iter().map(|(k, _)| k.to_lowercase()).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before, "a header twice: {:?}", r.headers);
        self.out_bytes += r.body.len();
        let mut request = None;
        let mut session = self.conn.session().map(str::to_owned);
        if let Some(s) = &session {
            if !self.sessions.contains(s) {
                self.sessions.push(s.clone());
            }
        }
        match r.method {
            HttpMethod::Post => {
                let m = match jsonrpc::parse(&r.body) {
                    Ok(Parsed::Single(m)) => m,
                    other => panic!("a POST body is not one message: {other:?}"),
                };
                if m.method() == Some("initialize") {
                    // The handshake goes without a session.
                    session = None;
                }
                if let Message::Request(q) = &m {
                    request = q.id.as_i64();
                }
                self.on_message_out(&m);
            }
            HttpMethod::Get => {
                assert!(r.body.is_empty());
                // A resume goes in its stream's session, which may since have been lost.
                let sent = r.header("mcp-session-id").map(str::to_owned);
                if sent != session && r.header("last-event-id").is_some() {
                    let s = sent.expect("a resume without its session");
                    assert!(self.sessions.contains(&s), "a resume in an unknown session");
                    session = Some(s);
                }
            }
            HttpMethod::Delete => {
                assert!(r.body.is_empty());
                assert!(self.conn.is_closed(), "a DELETE before the close");
            }
        }
        assert_eq!(
            r.header("mcp-session-id"),
            session.as_deref(),
            "a request without the session, or with another"
        );
        self.exchanges.insert(
            r.exchange,
            Exchange {
                method: r.method,
                request,
                head: None,
            },
        );
    }

    fn on_abort(&mut self, id: ExchangeId) {
        assert!(self.http);
        assert!(
            self.exchanges.remove(&id).is_some(),
            "an abort of exchange {id}, which is not open"
        );
    }

    fn on_event(&mut self, event: Event) {
        let size = format!("{event:?}").len();
        assert!(size <= self.event_bound(), "an event of {size} bytes");
        if self.closed_seen {
            // After the end only notes about what still arrives.
            assert!(
                matches!(event, Event::Diagnostic(_)),
                "an event after Closed: {event:?}"
            );
        }
        match event {
            Event::Ready { .. } => {
                assert!(!self.ready_seen, "Ready twice");
                self.ready_seen = true;
            }
            Event::HandshakeFailed(_) => self.handshake_failed = true,
            Event::SessionRenewed(_) => {
                assert!(
                    self.http && self.ready_seen,
                    "a session renewed out of place"
                );
            }
            Event::CallDone { call, .. } => match self.calls.get_mut(&call) {
                Some(done) => {
                    assert!(!*done, "{call:?} ended twice");
                    *done = true;
                }
                None => panic!("CallDone for {call:?}, which no command returned"),
            },
            Event::Progress { call, .. } => {
                assert_eq!(
                    self.calls.get(&call),
                    Some(&false),
                    "progress for {call:?}, which is not an open call"
                );
            }
            Event::ServerRequest(r) => self.surfaced.push(r.id().clone()),
            Event::TaskStatus { call, .. } => {
                assert_eq!(
                    self.calls.get(&call),
                    Some(&false),
                    "a task status for {call:?}, which is not an open call"
                );
            }
            Event::CallReissued { call, .. } | Event::InputRequired { call, .. } => {
                assert_eq!(
                    self.calls.get(&call),
                    Some(&false),
                    "a re-issue or input round for {call:?}, which is not an open call"
                );
            }
            Event::ServerRequestCancelled { .. }
            | Event::Notification(_)
            | Event::ServerPinged { .. } => {}
            Event::Diagnostic(d) => {
                // Its text must be producible and bounded too.
                assert!(d.to_string().len() <= self.event_bound());
            }
            Event::EraLeft { supported } => {
                assert!(!self.closed_seen, "the era left after Closed");
                assert!(!supported.is_empty(), "the era left for no version");
            }
            Event::Restarting { .. } => {
                assert!(!self.http, "a restart over HTTP");
                assert!(!self.closed_seen, "a restart after Closed");
            }
            Event::AuthorizationRequired(r) => {
                assert!(
                    self.http && self.authorizing,
                    "an authorization asked out of place"
                );
                assert!(!self.auth_asked, "asked twice for one authorization");
                assert!(matches!(r.status, 401 | 403), "{r:?}");
                self.auth_asked = true;
            }
            Event::Closed(_) => {
                assert!(!self.closed_seen, "Closed twice");
                self.closed_seen = true;
            }
            Event::HandlerFailed(f) => panic!("the connection runs no host code: {f}"),
        }
    }

    /// Answers an authorization asked for: a token, or a refusal.
    fn authorize(&mut self, op: u8) {
        if !self.auth_asked {
            return;
        }
        self.auth_asked = false;
        if op & 0x10 == 0 {
            self.tokens += 1;
            let token = format!("tok-{}", self.tokens);
            self.conn
                .handle_authorization(self.now, AuthorizationInput::Token(&token))
                .unwrap();
        } else {
            self.conn
                .handle_authorization(self.now, AuthorizationInput::Failed("refused"))
                .unwrap();
        }
        self.drain();
    }

    // ---- operations ----

    fn op(&mut self, op: u8, input: &mut Input<'_>) -> Option<()> {
        if op >= CLOSE {
            // A close in the middle: what follows meets a closing connection.
            self.close();
            return Some(());
        }
        match op % 24 {
            0..=5 => self.server_message(input),
            6 | 7 => self.raw(input),
            8 => self.transport_a(input),
            9 => self.transport_b(input),
            10 => self.transport_c(input),
            11 | 12 => self.call_tool(input),
            13 => self.list(input),
            14 => self.other_request(input),
            15 => self.cancel(input),
            16 => self.respond(input),
            17 => self.notify(input),
            18 | 19 => self.jump(op, input),
            20 | 21 => {
                self.jump_to_deadline();
                Some(())
            }
            22 => self.handshake(input),
            _ => self.endpoint(input),
        }
    }

    /// Whether the process can send stdout bytes now; if a respawn is asked, it is done instead.
    fn stdout_ready(&mut self) -> bool {
        if self.process.alive && self.process.stdout_open {
            return true;
        }
        if self.process.spawn_asked {
            self.respawn(true);
        }
        false
    }

    fn respawn(&mut self, ok: bool) {
        self.process.spawn_asked = false;
        if ok {
            self.process = Process {
                alive: true,
                stdout_open: true,
                expect_initialize: true,
                ..Process::default()
            };
            self.conn
                .handle_stdio(self.now, StdioInput::Respawned)
                .unwrap();
        } else {
            self.conn
                .handle_stdio(self.now, StdioInput::RespawnFailed("cannot spawn"))
                .unwrap();
        }
        self.drain();
    }

    /// Picks an open exchange that `want` accepts, or (sometimes) one that is not open.
    fn pick_exchange(&self, b: u8, want: impl Fn(&Exchange) -> bool) -> Option<ExchangeId> {
        if b % 8 == 7 {
            let gone = self
                .started
                .iter()
                .copied()
                .filter(|id| !self.exchanges.contains_key(id))
                .min();
            return Some(gone.unwrap_or(1_000_000 + u64::from(b)));
        }
        let open: Vec<ExchangeId> = self
            .exchanges
            .iter()
            .filter(|(_, e)| want(e))
            .map(|(id, _)| *id)
            .collect();
        match open.len() {
            0 => None,
            n => Some(open[usize::from(b / 8) % n]),
        }
    }

    fn head(
        &mut self,
        ex: ExchangeId,
        status: u16,
        content_type: Option<&str>,
        session: Option<&str>,
    ) {
        let mut headers = Vec::new();
        if let Some(ct) = content_type {
            headers.push(("Content-Type".to_owned(), ct.to_owned()));
        }
        if let Some(s) = session {
            headers.push(("Mcp-Session-Id".to_owned(), s.to_owned()));
        }
        if status == 401 {
            headers.push((
                "WWW-Authenticate".to_owned(),
                r#"Bearer resource_metadata="http://127.0.0.1:1/.well-known/x""#.to_owned(),
            ));
        }
        if status == 403 {
            headers.push((
                "WWW-Authenticate".to_owned(),
                r#"Bearer error="insufficient_scope", scope="more""#.to_owned(),
            ));
        }
        if let Some(e) = self.exchanges.get_mut(&ex) {
            let media = content_type.map(|c| c.to_ascii_lowercase());
            let ok = (200..300).contains(&status);
            e.head = Some(match media.as_deref() {
                Some(m) if ok && m.starts_with("application/json") => Framing::Json,
                Some(m) if ok && m.starts_with("text/event-stream") => Framing::Sse,
                _ => Framing::Other,
            });
        }
        self.conn
            .handle_http(
                self.now,
                ex,
                HttpInput::Head {
                    status,
                    headers: &headers,
                },
            )
            .unwrap();
        self.drain();
    }

    fn body(&mut self, ex: ExchangeId, bytes: &[u8]) {
        self.conn
            .handle_http(self.now, ex, HttpInput::Body(bytes))
            .unwrap();
        self.drain();
    }

    fn end(&mut self, ex: ExchangeId) {
        self.exchanges.remove(&ex);
        self.conn.handle_http(self.now, ex, HttpInput::End).unwrap();
        self.drain();
    }

    fn fail(&mut self, ex: ExchangeId) {
        self.exchanges.remove(&ex);
        self.conn
            .handle_http(self.now, ex, HttpInput::Failure("connection reset".into()))
            .unwrap();
        self.drain();
    }

    /// Bytes from the input: stdout (stdio), or a body chunk of an exchange (HTTP).
    fn raw(&mut self, input: &mut Input<'_>) -> Option<()> {
        let b = input.byte()?;
        let n = input.len()?;
        let bytes = input.bytes(n).to_vec();
        if self.http {
            if let Some(ex) = self.pick_exchange(b, |e| e.head.is_some()) {
                self.body(ex, &bytes);
            }
        } else if self.stdout_ready() {
            self.conn
                .handle_stdio(self.now, StdioInput::Stdout(&bytes))
                .unwrap();
            self.drain();
        }
        Some(())
    }

    /// HTTP: an `endpoint` event (the 2024-11-05 HTTP+SSE transport's first event) on an
    /// exchange whose head came: a path, a relative reference, another URL on the origin, one
    /// on another origin, or no URL at all.
    fn endpoint(&mut self, input: &mut Input<'_>) -> Option<()> {
        let b = input.byte()?;
        if !self.http {
            return Some(());
        }
        const DATA: [&str; 5] = [
            "/message?sessionId=1",
            "message",
            "http://127.0.0.1:1/other",
            "http://elsewhere:1/m",
            "://nowhere",
        ];
        let event = format!("event: endpoint\ndata: {}\n\n", DATA[usize::from(b % 5)]);
        if let Some(ex) = self.pick_exchange(b >> 3, |e| e.head.is_some()) {
            self.body(ex, event.as_bytes());
        }
        Some(())
    }

    /// Stdio: the end of stdout. HTTP: a response head.
    fn transport_a(&mut self, input: &mut Input<'_>) -> Option<()> {
        let b = input.byte()?;
        if !self.http {
            if self.stdout_ready() {
                self.process.stdout_open = false;
                self.conn
                    .handle_stdio(self.now, StdioInput::StdoutEof)
                    .unwrap();
                self.drain();
            }
            return Some(());
        }
        let s = input.byte()?;
        const STATUS: [u16; 12] = [200, 200, 200, 202, 204, 400, 401, 403, 404, 405, 500, 503];
        const TYPES: [Option<&str>; 6] = [
            Some("application/json"),
            Some("text/event-stream"),
            Some("application/json; charset=utf-8"),
            Some("Text/Event-Stream"),
            Some("text/plain"),
            None,
        ];
        const SESSIONS: [Option<&str>; 4] = [None, Some("s1"), Some("s2"), None];
        let status = STATUS[usize::from(s % 12)];
        let ct = TYPES[usize::from((s / 12) % 6)];
        let session = SESSIONS[usize::from(b % 4)];
        if let Some(ex) = self.pick_exchange(b >> 2, |e| e.head.is_none()) {
            self.head(ex, status, ct, session);
        }
        Some(())
    }

    /// Stdio: the process exits. HTTP: a body ends.
    fn transport_b(&mut self, input: &mut Input<'_>) -> Option<()> {
        let b = input.byte()?;
        if self.http {
            if let Some(ex) = self.pick_exchange(b, |e| e.head.is_some()) {
                self.end(ex);
            }
            return Some(());
        }
        if self.process.alive {
            self.exit(b);
        } else if self.process.spawn_asked {
            self.respawn(b & 1 == 0);
        }
        Some(())
    }

    fn exit(&mut self, b: u8) {
        let exit = match b % 4 {
            0 => ProcessExit {
                code: Some(0),
                signal: None,
            },
            1 => ProcessExit {
                code: Some(i32::from(b)),
                signal: None,
            },
            2 => ProcessExit {
                code: None,
                signal: Some(9),
            },
            _ => ProcessExit::UNKNOWN,
        };
        let tail = if b & 4 == 0 {
            ""
        } else {
            "panic: the server broke\n"
        };
        self.process.alive = false;
        self.conn
            .handle_stdio(
                self.now,
                StdioInput::Exit {
                    exit,
                    stderr_tail: tail,
                },
            )
            .unwrap();
        self.drain();
    }

    /// Stdio: a respawn is done or fails. HTTP: an exchange fails.
    fn transport_c(&mut self, input: &mut Input<'_>) -> Option<()> {
        let b = input.byte()?;
        if self.http {
            if let Some(ex) = self.pick_exchange(b, |_| true) {
                // A request lost before it left (sent once more), or after it may have left.
                let unsent =
                    b & 0x40 != 0 && self.exchanges.get(&ex).is_some_and(|e| e.head.is_none());
                if unsent {
                    self.exchanges.remove(&ex);
                    self.conn
                        .handle_http(self.now, ex, HttpInput::Unsent("connection refused".into()))
                        .unwrap();
                    self.drain();
                } else {
                    self.fail(ex);
                }
            }
        } else if self.process.spawn_asked {
            self.respawn(b % 4 != 3);
        }
        Some(())
    }

    fn options(b: u8, t: u8) -> CallOptions {
        let timeout = match b % 8 {
            0 => Duration::ZERO,
            1 => Duration::from_millis(u64::from(t) * 10),
            2 => Duration::from_secs(1),
            3 => Duration::MAX,
            _ => CallOptions::default().timeout,
        };
        CallOptions {
            timeout,
            max_total: (b & 0x08 != 0).then(|| Duration::from_millis(u64::from(t) * 20)),
            reset_on_progress: b & 0x10 != 0,
            progress: b & 0x20 != 0,
            safe_to_repeat: b & 0x40 != 0,
            detach_task: b & 0x80 != 0,
            check_arguments: t & 0x20 != 0,
            ..CallOptions::default()
        }
    }

    /// A command that makes a call: the call is new, and only an open connection accepts it.
    fn issued(&mut self, result: Result<CallId, ClientError>) {
        if let Ok(call) = result {
            assert!(!self.closed_seen, "a call accepted after Closed");
            assert!(
                self.calls.insert(call, false).is_none(),
                "{call:?} returned twice"
            );
        }
        self.drain();
    }

    fn call_tool(&mut self, input: &mut Input<'_>) -> Option<()> {
        let b = input.byte()?;
        let t = input.byte()?;
        const NAMES: [&str; 4] = ["add", "slow", "ask", ""];
        let args = (b & 0x40 != 0).then(|| json!({"a": 1, "b": t}));
        let opts = Self::options(b, t);
        let r = self.conn.call(
            self.now,
            &McpCall::call_tool(NAMES[usize::from(t % 4)], args),
            opts,
        );
        self.issued(r);
        Some(())
    }

    fn list(&mut self, input: &mut Input<'_>) -> Option<()> {
        let b = input.byte()?;
        let t = input.byte()?;
        let opts = Self::options(b, t);
        let r = match t % 4 {
            0 => self.conn.call(self.now, &McpCall::list_tools(), opts),
            1 => self.conn.call(self.now, &McpCall::list_prompts(), opts),
            2 => self.conn.call(self.now, &McpCall::list_resources(), opts),
            _ => self
                .conn
                .call(self.now, &McpCall::list_resource_templates(), opts),
        };
        self.issued(r);
        Some(())
    }

    fn other_request(&mut self, input: &mut Input<'_>) -> Option<()> {
        let b = input.byte()?;
        let t = input.byte()?;
        let opts = Self::options(b, t);
        let now = self.now;
        let r = match t % 8 {
            0 | 1 => self.conn.call(now, &McpCall::ping(), opts),
            2 => self
                .conn
                .call(now, &McpCall::get_prompt("greet", None), opts),
            3 => self
                .conn
                .call(now, &McpCall::read_resource("file:///a"), opts),
            4 => {
                let listen = McpCall::listen(json!({"toolsListChanged": true}));
                self.conn.call(now, &listen, opts)
            }
            // A typed tool call (it may wait for the tools' list), or one built by hand with
            // no params.
            5 if t & 0x10 != 0 => {
                self.conn
                    .call(now, &McpCall::call_tool("x", Some(json!({"n": t}))), opts)
            }
            5 => {
                let by_hand = McpCall::request("tools/call", None);
                self.conn.call(now, &by_hand, opts)
            }
            6 => {
                let by_hand = McpCall::request("completion/complete", None);
                self.conn.call(now, &by_hand, opts)
            }
            // What the stateless era carries otherwise: the log level, resource subscriptions.
            _ if t & 0x10 != 0 => {
                let call = match t % 3 {
                    0 => crate::connection::McpCall::set_log_level(
                        ["debug", "loud"][usize::from(t >> 7)],
                    ),
                    1 => crate::connection::McpCall::subscribe_resource("file:///a"),
                    _ => crate::connection::McpCall::unsubscribe_resource("file:///a"),
                };
                self.conn.call(now, &call, opts)
            }
            _ => {
                let mut p = serde_json::Map::new();
                p.insert("_meta".into(), json!({"k": t}));
                let by_hand = McpCall::request("logging/setLevel", Some(p));
                self.conn.call(now, &by_hand, opts)
            }
        };
        self.issued(r);
        Some(())
    }

    fn cancel(&mut self, input: &mut Input<'_>) -> Option<()> {
        let b = input.byte()?;
        let mut known: Vec<CallId> = self.calls.keys().copied().collect();
        known.sort_unstable();
        let call = match known.len() {
            n if n > 0 && b & 0x80 == 0 => known[usize::from(b) % n],
            // Ids no command returned: ones never used, the ids of the handshake's own requests,
            // and those of a call's later requests (a list's next page, a stateless retry),
            // which are no call of their own.
            _ => {
                let later: Vec<i64> = self
                    .in_flight
                    .iter()
                    .map(|(id, _)| *id)
                    .filter(|id| !self.calls.contains_key(&CallId(*id)))
                    .collect();
                match (b % 5, self.handshake_ids.len(), later.len()) {
                    (0, _, _) => CallId(-1 - i64::from(b)),
                    (1, _, _) => CallId(1_000_000 + i64::from(b)),
                    (2, n, _) if n > 0 => CallId(self.handshake_ids[usize::from(b / 5) % n]),
                    (3, _, n) if n > 0 => CallId(later[usize::from(b / 5) % n]),
                    _ => CallId(i64::MAX),
                }
            }
        };
        let open = self.calls.get(&call) == Some(&false) && !self.closed_seen;
        let reason = (b & 1 == 0).then(|| "the user gave up".to_owned());
        let r = self.conn.cancel(self.now, call, reason);
        self.drain();
        match r {
            Ok(()) => {
                assert!(
                    open,
                    "cancel of {call:?}, which is not an open call, was accepted"
                );
                assert_eq!(
                    self.calls.get(&call),
                    Some(&true),
                    "a cancelled call did not end"
                );
            }
            Err(e) => assert!(!open, "cancel of the open {call:?} was refused: {e}"),
        }
        Some(())
    }

    fn respond(&mut self, input: &mut Input<'_>) -> Option<()> {
        let b = input.byte()?;
        let id = match self.surfaced.len() {
            n if n > 0 && b & 0x80 == 0 => self.surfaced.remove(usize::from(b) % n),
            _ if b & 1 == 0 => Id::Num(i64::from(b % 8)),
            _ => Id::Str(format!("input/{}/k{}", b % 8, b % 3)),
        };
        let answer = if b & 0x40 == 0 {
            let v = json!({"action": "accept", "content": {"name": "Ada"}});
            Ok(RawJson::new(&v).expect("serializes"))
        } else {
            Err(ErrorObject::new(-32000, "declined"))
        };
        let first = self.conn.respond(self.now, &id, answer.clone());
        self.drain();
        if first.is_ok() {
            let again = self.conn.respond(self.now, &id, answer);
            self.drain();
            assert!(again.is_err(), "{id} answered twice");
        }
        Some(())
    }

    fn notify(&mut self, input: &mut Input<'_>) -> Option<()> {
        let b = input.byte()?;
        let method = if b & 1 == 0 {
            "notifications/roots/list_changed"
        } else {
            "notifications/x"
        };
        let params = (b & 2 != 0).then(|| RawJson::new(&json!({"n": b})).expect("serializes"));
        let r = self.conn.notify(self.now, method, params);
        if r.is_ok() {
            assert!(!self.closed_seen, "a notification accepted after Closed");
        }
        self.drain();
        Some(())
    }

    fn fire(&mut self) {
        let t = self.now;
        self.conn.handle_timeout(t);
        assert!(
            self.conn.poll_timeout().is_none_or(|d| d > t),
            "a deadline <= now stayed armed after handle_timeout"
        );
        self.drain();
        assert!(
            self.conn.poll_timeout().is_none_or(|d| d > t),
            "a deadline <= now armed while draining"
        );
    }

    fn jump(&mut self, op: u8, input: &mut Input<'_>) -> Option<()> {
        // The driver's authorization ends at some point in time, as a timer would.
        self.authorize(op);
        let by = if op & 0x20 == 0 {
            Duration::from_millis(u64::from(input.u16()?))
        } else {
            Duration::from_secs(u64::from(input.byte()?))
        };
        self.now += by;
        // Sometimes the driver is busy and the timer's turn comes later.
        if op & 0x40 == 0 {
            self.fire();
        }
        Some(())
    }

    /// Jumps exactly to the next deadline, as a driver's timer would.
    fn jump_to_deadline(&mut self) {
        if let Some(t) = self.conn.poll_timeout() {
            self.now = self.now.max(t);
        }
        self.fire();
    }

    fn close(&mut self) {
        self.conn.close(self.now);
        self.drain();
        assert!(self.closed_seen, "close() without Closed");
        assert!(
            self.calls.values().all(|done| *done),
            "a call left open after close()"
        );
        assert_eq!(self.conn.pending_requests(), 0);
    }

    // ---- server messages ----

    /// One of our requests in flight, or (sometimes, or when none is) an id never sent.
    fn pick_ours(&mut self, b: u8) -> (i64, Option<String>) {
        match self.in_flight.len() {
            n if n > 0 && b % 4 != 3 => {
                let (id, method) = self.in_flight.remove(usize::from(b / 4) % n);
                (id, Some(method))
            }
            _ => (
                match b % 3 {
                    0 => i64::from(b) + 500,
                    1 => -1,
                    _ => i64::from(b % 8),
                },
                None,
            ),
        }
    }

    /// The latest handshake request in flight (`initialize` or `server/discover`).
    fn handshake_in_flight(&mut self) -> Option<(i64, String)> {
        let i = self
            .in_flight
            .iter()
            .rposition(|(_, m)| m == "initialize" || m == "server/discover")?;
        Some(self.in_flight.remove(i))
    }

    /// A message built from a template: an answer, progress, a server request, a notification,
    /// a batch, or something that is not a message.
    fn template(&mut self, input: &mut Input<'_>, depth: u8) -> Option<Msg> {
        let t = input.byte()?;
        let p = input.byte()?;
        let q = input.byte()?;
        let state = if t & 0x80 != 0 {
            let n = input.len()?;
            text_of(input.bytes(n))
        } else {
            format!("st{q}")
        };
        let as_string = t & 0x40 != 0 && q & 0x40 != 0;
        Some(match t % 10 {
            0 => {
                let (id, method) = match self.handshake_in_flight() {
                    Some((id, m)) => (id, Some(m)),
                    None => self.pick_ours(q),
                };
                let result = templates::result_for(method.as_deref(), p, q, &state);
                Msg {
                    text: templates::response(id_json(id, as_string), result),
                    answers: Some(id),
                }
            }
            1..=3 => {
                let (id, method) = self.pick_ours(q);
                let result = templates::result_for(method.as_deref(), p, q, &state);
                Msg {
                    text: templates::response(id_json(id, as_string), result),
                    answers: Some(id),
                }
            }
            4 => {
                // Progress: a call's token is the id of its request in flight.
                let token = match self.in_flight.len() {
                    n if n > 0 && q & 3 != 3 => self.in_flight[usize::from(q / 4) % n].0,
                    _ => i64::from(q),
                };
                let mut params = json!({"progressToken": id_json(token, as_string), "progress": p});
                if q & 0x10 != 0 {
                    params["total"] = Value::from(255);
                }
                if q & 0x20 != 0 {
                    params["message"] = Value::from(state);
                }
                if p == 0xFF {
                    params["progress"] = Value::from("lots");
                }
                Msg {
                    text: json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
                        .to_string(),
                    answers: None,
                }
            }
            5 | 6 if q & 0x10 != 0 && p % 7 == 6 => {
                // One of the tasks methods, about the tasks run here for the server's requests.
                let id = templates::server_id(q);
                let (method, params) = templates::tasks_request(p, q, &state);
                Msg {
                    text: json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
                        .to_string(),
                    answers: None,
                }
            }
            5 | 6 => {
                let id = templates::server_id(q);
                let (method, mut params) = match p % 7 {
                    0 => (
                        "elicitation/create",
                        json!({"message": state, "requestedSchema": {}}),
                    ),
                    1 => (
                        "elicitation/create",
                        json!({"mode": "url", "url": "https://x", "message": "go"}),
                    ),
                    2 => (
                        "sampling/createMessage",
                        json!({"messages": [], "maxTokens": 1}),
                    ),
                    3 => ("roots/list", json!({})),
                    4 => ("ping", json!({})),
                    5 => ("elicitation/create", json!({"mode": "telepathy"})),
                    _ => ("tools/call", json!({"name": "x"})),
                };
                if q & 0x10 != 0 {
                    // Asked to run as a task here (a roots/list or ping keeps it unread).
                    params["task"] = templates::task_params(q);
                }
                Msg {
                    text: json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
                        .to_string(),
                    answers: None,
                }
            }
            7 => {
                // The newest call, or the request just before it (a resource subscription's
                // listen, which is the connection's own).
                let newest = self.calls.keys().map(|c| c.0).max().unwrap_or(0);
                let subscription = newest - i64::from(q & 1);
                let (method, params) = match p % 9 {
                    0 => ("notifications/tools/list_changed", json!({})),
                    1 => ("notifications/resources/updated", json!({"uri": state})),
                    2 => (
                        "notifications/message",
                        json!({"level": "info", "data": state}),
                    ),
                    3 => ("notifications/message", json!({"level": 3})),
                    4 => {
                        let id = match self.surfaced.first() {
                            Some(id) if q & 1 == 0 => {
                                serde_json::to_value(id).unwrap_or(Value::Null)
                            }
                            _ => templates::server_id(q),
                        };
                        (
                            "notifications/cancelled",
                            json!({"requestId": id, "reason": "late"}),
                        )
                    }
                    5 => (
                        "notifications/cancelled",
                        json!({"requestId": subscription, "reason": "bye"}),
                    ),
                    6 => (
                        "notifications/subscriptions/acknowledged",
                        json!({"notifications": {"toolsListChanged": true,
                                                 "resourceSubscriptions": [if q & 2 == 0 { "file:///a" } else { &state }]},
                               "_meta": {"io.modelcontextprotocol/subscriptionId": subscription}}),
                    ),
                    7 => (
                        "notifications/tools/list_changed",
                        json!({"_meta": {"io.modelcontextprotocol/subscriptionId": subscription}}),
                    ),
                    _ if q & 0x20 != 0 => {
                        // A pushed task status, for one of the tasks the templates create.
                        let status = ["working", "input_required", "completed", "failed"]
                            [usize::from(q % 4)];
                        let method = if q & 0x40 == 0 {
                            "notifications/tasks"
                        } else {
                            "notifications/tasks/status"
                        };
                        (
                            method,
                            json!({"taskId": format!("t{}", p % 3), "status": status,
                                "result": {"content": []},
                                "error": {"code": -1, "message": "m"}}),
                        )
                    }
                    _ => ("notifications/x", json!([1])),
                };
                Msg {
                    text: json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string(),
                    answers: None,
                }
            }
            8 if depth == 0 => {
                let a = self.template(input, 1)?;
                let b = self.template(input, 1)?;
                Msg {
                    text: format!("[{},{}]", a.text, b.text),
                    answers: a.answers.or(b.answers),
                }
            }
            _ => {
                const NOISE: [&str; 8] = [
                    "{}",
                    "[]",
                    "[1,2]",
                    "null",
                    r#"{"jsonrpc":"2.0"}"#,
                    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#,
                    "not json",
                    r#"{"jsonrpc":"2.0","id":0,"result":1,"error":{"code":1,"message":"x"}}"#,
                ];
                Msg {
                    text: NOISE[usize::from(p % 8)].to_owned(),
                    answers: None,
                }
            }
        })
    }

    fn server_message(&mut self, input: &mut Input<'_>) -> Option<()> {
        let m = self.template(input, 0)?;
        let f = input.byte()?;
        self.deliver(m, f);
        Some(())
    }

    /// Answers the handshake request in flight the way a good server does.
    fn handshake(&mut self, input: &mut Input<'_>) -> Option<()> {
        let p = input.byte()?;
        let f = input.byte()?;
        let Some((id, method)) = self.handshake_in_flight() else {
            return Some(());
        };
        let result = if method == "initialize" {
            templates::init_result(p & 0xC3)
        } else {
            templates::discover_result(p & 0x87)
        };
        let m = Msg {
            text: templates::response(Value::from(id), result),
            answers: Some(id),
        };
        self.deliver(m, f);
        Some(())
    }

    /// Carries a message to the client: a stdout line, or an HTTP body (JSON or an SSE event).
    fn deliver(&mut self, m: Msg, f: u8) {
        if !self.http {
            if !self.stdout_ready() {
                return;
            }
            let mut line = m.text.into_bytes();
            match f % 4 {
                0 | 1 => line.push(b'\n'),
                2 => line.extend_from_slice(b"\r\n"),
                // The line ends with the next one.
                _ => {}
            }
            let cut = usize::from(f >> 2) * line.len() / 64;
            for chunk in [&line[..cut], &line[cut..]] {
                if !chunk.is_empty() {
                    self.conn
                        .handle_stdio(self.now, StdioInput::Stdout(chunk))
                        .unwrap();
                    self.drain();
                }
            }
            return;
        }
        // HTTP: mostly on the exchange carrying the request it answers.
        let carrier = m.answers.and_then(|id| {
            self.exchanges
                .iter()
                .find(|(_, e)| e.request == Some(id) && e.head != Some(Framing::Other))
                .map(|(ex, _)| *ex)
        });
        let ex = match carrier {
            Some(ex) if f % 4 != 3 => ex,
            _ => match self.pick_exchange(f >> 2, |e| e.method != HttpMethod::Delete) {
                Some(ex) => ex,
                None => return,
            },
        };
        if self.exchanges.get(&ex).is_some_and(|e| e.head.is_none()) {
            let ct = if f & 0x10 == 0 {
                "application/json"
            } else {
                "text/event-stream"
            };
            let session = (f & 0x20 == 0).then_some("s1");
            self.head(ex, 200, Some(ct), session);
        }
        match self.exchanges.get(&ex).and_then(|e| e.head) {
            Some(Framing::Sse) => {
                let mut event = String::new();
                if f & 0x40 == 0 {
                    self.sse_event_ids += 1;
                    event.push_str(&format!("id: e{}\n", self.sse_event_ids));
                }
                if f & 0x80 != 0 {
                    event.push_str(&format!("retry: {}\n", u32::from(f) * 3));
                }
                if f & 0x04 != 0 {
                    event.push_str("event: message\r\n");
                }
                event.push_str(&format!("data: {}\n\n", m.text));
                let bytes = event.into_bytes();
                let cut = bytes.len() / 2;
                self.body(ex, &bytes[..cut]);
                if self.exchanges.contains_key(&ex) {
                    self.body(ex, &bytes[cut..]);
                }
                if f & 0x03 == 0 && self.exchanges.contains_key(&ex) {
                    self.end(ex);
                }
            }
            Some(Framing::Json) | Some(Framing::Other) => {
                self.body(ex, m.text.as_bytes());
                if f & 0x03 != 3 && self.exchanges.contains_key(&ex) {
                    self.end(ex);
                }
            }
            // Not open (an unknown exchange): the body goes nowhere.
            None => self.body(ex, m.text.as_bytes()),
        }
    }

    // ---- the end ----

    /// Closes, then plays the world until nothing is left: the process exits once asked to
    /// stop (stdio), open exchanges finish or are given up (HTTP), every deadline passes.
    fn finish(&mut self, mode: u8) {
        self.close();
        for _ in 0..FINAL_DEADLINES {
            if self.http {
                let open: Vec<ExchangeId> = self.exchanges.keys().copied().collect();
                for ex in open {
                    match mode % 3 {
                        0 => {
                            if self.exchanges.get(&ex).is_some_and(|e| e.head.is_none()) {
                                self.head(ex, 200, None, None);
                            }
                            if self.exchanges.contains_key(&ex) {
                                self.end(ex);
                            }
                        }
                        1 => self.fail(ex),
                        // Left to the close's deadline.
                        _ => {}
                    }
                }
            } else if self.process.spawn_asked {
                self.respawn(mode & 4 == 0);
                continue;
            } else if self.process.alive && self.process.shutdown_step > mode % 3 {
                self.exit(mode >> 3);
                continue;
            }
            match self.conn.poll_timeout() {
                Some(t) => {
                    self.now = self.now.max(t);
                    self.fire();
                }
                None if self.process.alive && self.process.shutdown_step > 0 => {
                    self.exit(mode >> 3);
                }
                None => break,
            }
        }
        assert!(self.calls.values().all(|done| *done), "a call never ended");
        assert_eq!(self.conn.pending_requests(), 0);
        assert_eq!(
            self.conn.poll_timeout(),
            None,
            "a deadline left after the end"
        );
        assert!(
            self.conn.is_finished(),
            "the connection is not finished after close and every deadline (process alive: {}) {:?} harness {:?}",
            self.process.alive, self.conn, self.exchanges
        );
    }
}

/// The whole connection: one [`Connection`] over stdio or Streamable HTTP (the first byte picks
/// the transport, the era and the limits), driven by operations taken from the input: stdout
/// bytes, HTTP heads, body chunks, ends and failures (on exchanges started, and unknown ones),
/// the HTTP+SSE transport's `endpoint` events (good, relative, off-origin, not a URL),
/// plausible server messages (handshake answers, results for requests in flight, progress,
/// server requests, notifications, batches, noise, in JSONL lines or JSON and SSE bodies), the
/// application's commands, process events, and time (jumps, and straight to the next deadline).
/// Every output is drained after every operation; at the end the connection is closed and the
/// world played until nothing is left.
///
/// Invariants: no panic; every call a command returned ends with exactly one `CallDone`, and
/// progress only comes for open calls; `Closed` comes at most once, with `is_closed()`, and only
/// diagnostics after it; no request pending without its call, nothing pending after `Closed`;
/// after `handle_timeout(t)`, `poll_timeout()` is `None` or later than `t`; a cancel is accepted
/// exactly for an open call and ends it; an answer to a server request goes once; stdio writes
/// are whole lines of one message each, none after stdin was closed, and a new process sees
/// `initialize` first; HTTP exchanges are fresh, carry no header twice, and only open ones are
/// aborted; what is handed out to write or post, and every event, stays within bounds linear in
/// the input; after the close and every deadline, the connection is finished.
pub fn connection(data: &[u8]) {
    // The harness's one epoch; the connection only ever sees offsets from it.
    let epoch = Instant::now();
    let mut input = Input { data };
    let flags = input.byte().unwrap_or(0);
    let extra = input.byte().unwrap_or(0);
    let mut h = Harness::new(epoch, flags, extra, data.len());
    h.drain();
    while h.ops < MAX_OPS {
        let Some(op) = input.byte() else { break };
        h.ops += 1;
        if h.op(op, &mut input).is_none() {
            break;
        }
    }
    h.finish(extra >> 3);
}

#[cfg(test)]
mod tests;
