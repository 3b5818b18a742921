//! A hostile HTTP server, one misbehaviour at a time, against each of mcpwire's HTTP clients.
//!
//! Each case (one `#[test]`, listed in the tables at the end) scripts the fault server
//! ([`mcpwire_tests::fault_http`]) to break one rule of HTTP/1.1 or of MCP on one exchange, and
//! runs against up to three client configurations at once, each on its own thread:
//!
//! - `native`: mcpwire's own HTTP/1.1 client (the default for a plain `http://` URL);
//! - `curl`: libcurl through isahc (`HttpClientOptions::http1_via_libcurl = true`);
//! - `sse`: the 2024-11-05 HTTP+SSE transport (config `type: "sse"`), where the case means
//!   something there (framing, control bytes and interim heads do; session ids do not);
//! - `tls`: mcpwire's own client over TLS, the fault server behind a TLS front
//!   ([`mcpwire_tests::tls_front`]), held to the `native` path's expectation;
//! - `tls-proxy`: the same through an HTTP proxy's `CONNECT` tunnel (the loopback proxy of
//!   [`mcpwire_tests::proxy`], which copies a tunnel's bytes as they are), held to the same.
//!
//! Every run asserts: no panic (the run is caught, and a panic fails the case with its message),
//! a typed error or the right answer within a deadline (and the whole run within a hard bound,
//! so that a hang fails instead of blocking), no message arriving twice at the server (the same
//! JSON-RPC id in the same session, or a second `notifications/initialized`), the connection
//! still usable afterwards where it should be (a follow-up call answered with its own answer,
//! never with bytes the server slipped in earlier), and a bounded `close`.
//!
//! Memory: the endless and huge cases run in a child process (this test binary again, for that
//! one test and one configuration), which measures its own peak resident memory over the
//! hostile exchange: the peak (`VmHWM`, reset through `/proc/self/clear_refs` just before)
//! against the resident memory just before (`VmRSS`). In the test process itself the peak would
//! be moved by every other test running in parallel. There the caps on one message are lowered
//! to 1 MiB and the bound is 32 MiB, while the server would go on for 5 s or 1 GiB: a client
//! that stops at its caps stays far below the bound, one that holds whatever comes does not.
//!
//! The outcome on each configuration is printed (`cargo test --test hostile_http --
//! --nocapture` shows them all, passing or not).

use std::collections::HashMap;
use std::io::Read;
use std::panic::AssertUnwindSafe;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::core::config::{HttpConfig, HttpKind};
use mcpwire::core::{CallError, LocalError};
use mcpwire::{
    CallOptions, Client, ConnectOptions, Era, Error, HttpClientOptions, HttpExchangeNote,
    HttpOptions, ProxySetting, ServerConfig,
};
use mcpwire_tests::fault_http::{FaultServer, Framing, Matcher, Recorded, Rule};
use mcpwire_tests::scenario::{tool_result, Runtime, HANDSHAKE_INIT};
use serde_json::{json, Value};

// ----- the client configurations -----

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    Native,
    Curl,
    Sse,
    /// The native client over TLS: held to `Native`'s expectation.
    Tls,
    /// The native client over TLS through a proxy's tunnel: held to `Native`'s expectation.
    TlsProxy,
}

const PATHS: [Path; 5] = [
    Path::Native,
    Path::Curl,
    Path::Sse,
    Path::Tls,
    Path::TlsProxy,
];

impl Path {
    fn name(self) -> &'static str {
        match self {
            Path::Native => "native",
            Path::Tls => "tls",
            Path::TlsProxy => "tls-proxy",
            Path::Curl => "curl",
            Path::Sse => "sse",
        }
    }

    fn from_name(name: &str) -> Option<Path> {
        PATHS.into_iter().find(|p| p.name() == name)
    }

    /// Where the case's expectation for this path is kept (`Tls` shares `Native`'s).
    fn index(self) -> usize {
        match self {
            Path::Tls | Path::TlsProxy => Path::Native as usize,
            other => other as usize,
        }
    }
}

// ----- what a case is -----

/// What the run's outcome must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// The right answer: the hostile call's own, or a handshake that holds.
    Answer,
    /// A typed error.
    Fail,
    /// The right answer or a typed error: the server broke a rule that a client may either
    /// reject or repair (RFC 9110 §5.5 lets a recipient replace a NUL or CR with a space).
    Either,
    /// `mcpwire::connect` itself refuses the configuration, before any request goes out.
    Refused,
}

/// The exchange the server answers in a hostile way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The POST of `tools/call` of the tool `hostile` (over HTTP+SSE: its acknowledgement; the
    /// answer comes on the stream).
    Call,
    /// Streamable HTTP: the `initialize` POST; HTTP+SSE: the GET of the event stream.
    Handshake,
    /// The POST of `notifications/initialized`.
    Initialized,
    /// The session's DELETE at close (Streamable HTTP).
    Delete,
    /// The standalone GET stream (Streamable HTTP).
    Get,
    /// HTTP+SSE: what the event stream sends in place of the hostile call's answer.
    Stream,
}

/// What the client does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Act {
    /// The handshake, the call of `hostile`, the follow-up call, the close.
    Call,
    /// The handshake (the outcome judged), the follow-up call, the close.
    Connect,
    /// The handshake; then `tools/list` and `tools/call` of `late` time out while they wait
    /// for `notifications/initialized` to be accepted; then, when the server accepts it after
    /// `answered_after`, the follow-up call; the close.
    BehindInitialized { answered_after: Option<Duration> },
}

/// The call made after the hostile exchange, on the same MCP connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FollowUp {
    /// It gets its own answer (never bytes the server slipped in before).
    Answered,
    /// It gets its own answer, or fails as never sent (it waited behind an exchange the
    /// hostile server never finished, and that one failed).
    AnsweredOrNotSent,
    /// It gets its own answer, or fails as one that may have run, not repeated: it may have
    /// gone out on a connection the server was closing at that very moment, a race no client
    /// can always win (RFC 9112 §9.3.1: a POST is not retried on its own).
    AnsweredOrMayHaveRun,
    /// None: the hostile exchange ended the connection.
    None,
}

/// What an honest server would send for the targeted exchange; the hostile scripts bend it.
#[derive(Debug, Clone)]
struct Answer {
    status_line: &'static str,
    /// Header lines besides the framing, each ending with CRLF.
    lines: String,
    /// The body, with the fault server's placeholders (`{{id}}`).
    body: String,
    /// The start of the body, to go on without end from.
    prefix: String,
    /// Whether the body is chunked (a stream) or has a length.
    chunked: bool,
}

impl Answer {
    fn for_target(target: Target, path: Path) -> Answer {
        let json = |body: String, prefix: &str| Answer {
            status_line: "HTTP/1.1 200 OK",
            lines: "Content-Type: application/json\r\n".into(),
            body,
            prefix: prefix.into(),
            chunked: false,
        };
        let accepted = Answer {
            status_line: "HTTP/1.1 202 Accepted",
            lines: String::new(),
            body: String::new(),
            prefix: String::new(),
            chunked: false,
        };
        let stream = |body: String, prefix: &str| Answer {
            status_line: "HTTP/1.1 200 OK",
            lines: "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n".into(),
            body,
            prefix: prefix.into(),
            chunked: true,
        };
        match (target, path) {
            (Target::Call, Path::Sse) => Answer {
                status_line: "HTTP/1.1 202 Accepted",
                lines: "Content-Type: text/plain\r\n".into(),
                body: "Accepted".into(),
                prefix: "Accepted".into(),
                chunked: false,
            },
            (Target::Call, _) => json(tool_result(OK), RESULT_PREFIX),
            (Target::Handshake, Path::Sse) => {
                stream(ENDPOINT_EVENT.into(), "event: endpoint\ndata: ")
            }
            (Target::Handshake, _) => Answer {
                lines: format!("Content-Type: application/json\r\nMcp-Session-Id: {SESSION}\r\n"),
                ..json(
                    HANDSHAKE_INIT.into(),
                    r#"{"jsonrpc":"2.0","id":{{id}},"result":{"x":""#,
                )
            },
            (Target::Initialized, _) => accepted,
            (Target::Delete, _) => Answer {
                status_line: "HTTP/1.1 200 OK",
                ..accepted
            },
            (Target::Get, _) => stream(": ready\n\n".into(), "data: "),
            (Target::Stream, _) => Answer {
                body: message(&stream_result(OK)),
                prefix: "event: message\ndata: ".into(),
                ..stream(String::new(), "")
            },
        }
    }

    fn framing(&self) -> Framing {
        if self.chunked {
            Framing::Chunked
        } else {
            Framing::Length
        }
    }

    fn framing_line(&self) -> &'static str {
        if self.chunked {
            "Transfer-Encoding: chunked\r\n"
        } else {
            "Content-Length: {{length}}\r\n"
        }
    }

    /// A head: `status_line`, then `lines` (each ending with CRLF) before the answer's own
    /// header lines, then the blank line.
    fn head(&self, status_line: &[u8], lines: &[u8]) -> Vec<u8> {
        [status_line, b"\r\n", lines, self.lines.as_bytes(), b"\r\n"].concat()
    }

    /// The honest answer.
    fn honest(&self, rule: Rule) -> Rule {
        self.with_lines(rule, b"")
    }

    /// The honest answer with more header lines (before its own).
    fn with_lines(&self, rule: Rule, lines: &[u8]) -> Rule {
        let lines = [lines, self.framing_line().as_bytes()].concat();
        rule.raw_head(
            self.head(self.status_line.as_bytes(), &lines),
            self.framing(),
        )
        .body(&self.body)
    }

    /// The honest answer under another status line.
    fn with_status_line(&self, rule: Rule, status_line: &[u8]) -> Rule {
        rule.raw_head(
            self.head(status_line, self.framing_line().as_bytes()),
            self.framing(),
        )
        .body(&self.body)
    }

    /// The head with `framing_lines` in place of the honest framing header; the steps after
    /// it write the body as `framing` says.
    fn framed(&self, rule: Rule, framing_lines: &[u8], framing: Framing) -> Rule {
        rule.raw_head(
            self.head(self.status_line.as_bytes(), framing_lines),
            framing,
        )
    }
}

/// Turns the rule for the targeted exchange into the hostile answer.
type Hostile = Arc<dyn Fn(Rule, &Answer) -> Rule + Send + Sync>;
/// More checks of what the server recorded.
type Check = Arc<dyn Fn(&[Recorded]) -> Vec<String> + Send + Sync>;

/// What every request after `initialize` may carry as `Mcp-Session-Id`.
#[derive(Debug, Clone)]
struct SessionCheck {
    /// The bytes the server sent.
    sent: Vec<u8>,
    /// The id must be refused: no later request carries any `Mcp-Session-Id`.
    refuse: bool,
    /// A request may also carry none (an empty id taken for no session).
    allow_absent: bool,
}

/// One misbehaviour: where the server commits it, what the client does, and what each
/// configuration must make of it.
struct Case {
    target: Target,
    hostile: Hostile,
    act: Act,
    /// Per path (`None`: not run there).
    expect: [Option<Expect>; 3],
    /// A word the error must contain (case-insensitive).
    naming: Option<&'static str>,
    call_timeout: Duration,
    init_timeout: Duration,
    http: HttpOptions,
    /// The pause between the hostile call and the follow-up.
    gap: Duration,
    follow_up: FollowUp,
    /// The follow-up over libcurl, when it can promise less there (see
    /// [`Case::over_libcurl`]).
    curl_follow_up: Option<FollowUp>,
    memory: bool,
    /// Headers in the server's config.
    headers: Vec<(String, String)>,
    /// Rules before the defaults (Streamable HTTP).
    rules: Vec<Rule>,
    session: Option<SessionCheck>,
    /// A session id no request may ever carry (part of its raw bytes).
    never_session: Option<&'static [u8]>,
    check: Option<Check>,
    close_within: Duration,
}

const OK: &str = "ok";
const SESSION: &str = "s-1";
const RESULT_PREFIX: &str =
    r#"{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":""#;
const ENDPOINT_EVENT: &str = "event: endpoint\ndata: /message?s=1\n\n";
const INIT_OLD: &str = r#"{"jsonrpc":"2.0","id":{{id:initialize}},"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}}"#;
const MIB: u64 = 1024 * 1024;
/// How far past its own deadline an outcome may come.
const SLACK: Duration = Duration::from_millis(1500);
/// The hard bound on one run of a case on one path.
const RUN_LIMIT: Duration = Duration::from_secs(20);
/// The most a run of a memory case may grow the child's peak resident memory.
const MEMORY_BOUND: u64 = 32 * MIB;
/// Set in a child process: the path it runs the case on.
const CHILD_ENV: &str = "MCPWIRE_HOSTILE_CHILD";
const REPORT_MARK: &str = "HOSTILE-REPORT ";

fn hostile(f: impl Fn(Rule, &Answer) -> Rule + Send + Sync + 'static) -> Hostile {
    Arc::new(f)
}

impl Case {
    fn new(target: Target, act: Act, hostile: Hostile) -> Case {
        Case {
            target,
            hostile,
            act,
            expect: [None; 3],
            naming: None,
            call_timeout: Duration::from_secs(3),
            init_timeout: Duration::from_secs(5),
            http: HttpOptions::default(),
            gap: Duration::ZERO,
            follow_up: FollowUp::Answered,
            curl_follow_up: None,
            memory: false,
            headers: Vec::new(),
            rules: Vec::new(),
            session: None,
            never_session: None,
            check: None,
            close_within: Duration::from_secs(3),
        }
    }

    /// The hostile answer to the `tools/call` of `hostile`.
    fn call(f: impl Fn(Rule, &Answer) -> Rule + Send + Sync + 'static) -> Case {
        Case::new(Target::Call, Act::Call, hostile(f))
    }

    /// The hostile answer to the handshake (`initialize`, or the SSE stream's GET).
    fn handshake(f: impl Fn(Rule, &Answer) -> Rule + Send + Sync + 'static) -> Case {
        Case::new(Target::Handshake, Act::Connect, hostile(f))
    }

    /// A hostile answer to an exchange that answers no call, in the handshake or at close.
    fn exchange(target: Target, f: impl Fn(Rule, &Answer) -> Rule + Send + Sync + 'static) -> Case {
        Case::new(target, Act::Connect, hostile(f))
    }

    /// HTTP+SSE: the event stream sends this in place of the hostile call's answer.
    fn stream(f: impl Fn(Rule, &Answer) -> Rule + Send + Sync + 'static) -> Case {
        Case::new(Target::Stream, Act::Call, hostile(f)).only(Path::Sse, Expect::Fail)
    }

    /// On every path.
    fn all(mut self, e: Expect) -> Self {
        self.expect = [Some(e); 3];
        self
    }

    /// Over Streamable HTTP (native and curl) only.
    fn streamable(mut self, e: Expect) -> Self {
        self.expect = [Some(e), Some(e), None];
        self
    }

    /// On `path` only.
    fn only(mut self, path: Path, e: Expect) -> Self {
        self.expect = [None; 3];
        self.expect[path.index()] = Some(e);
        self
    }

    /// Over HTTP+SSE, this (or not at all).
    fn sse(mut self, e: Option<Expect>) -> Self {
        self.expect[Path::Sse.index()] = e;
        self
    }

    fn naming(mut self, word: &'static str) -> Self {
        self.naming = Some(word);
        self
    }

    /// Sub-second deadlines: the call's, the head and body-idle timeouts, and the handshake's
    /// when the handshake is what the server breaks (an honest one keeps the default, so that a
    /// loaded machine's slow TLS handshake or child start-up is not taken for the case failing).
    fn fast(mut self) -> Self {
        self.call_timeout = Duration::from_millis(600);
        if self.target == Target::Handshake {
            self.init_timeout = Duration::from_millis(800);
        }
        self.http.head_timeout = Some(Duration::from_millis(300));
        self.http.body_idle_timeout = Some(Duration::from_millis(300));
        self
    }

    /// Runs in a child process that measures its peak memory; the caps on one message are
    /// 1 MiB.
    fn memory(mut self) -> Self {
        self.memory = true;
        self.http.max_json_body = MIB as usize;
        self.http.max_event = MIB as usize;
        self
    }

    /// No standalone GET stream: the requests go one after the other, so that the client has
    /// one connection to reuse, the one the hostile answer came on.
    fn one_connection(mut self) -> Self {
        self.http.standalone_stream = false;
        self
    }

    fn gap(mut self, gap: Duration) -> Self {
        self.gap = gap;
        self
    }

    fn follow_up(mut self, follow_up: FollowUp) -> Self {
        self.follow_up = follow_up;
        self
    }

    /// What libcurl can promise on the curl path, where it is less than the native client's:
    /// it reads a length the native client refuses. (Its HTTP/1.1 connections are never
    /// reused, so a close or bytes nobody asked for after an answer meet no later request, as
    /// on the native client.)
    fn over_libcurl(mut self, expect: Expect, follow_up: FollowUp) -> Self {
        self.expect[Path::Curl.index()] = Some(expect);
        self.curl_follow_up = Some(follow_up);
        self
    }

    /// The follow-up expected on `path`.
    fn follow_up_on(&self, path: Path) -> FollowUp {
        match (path, self.curl_follow_up) {
            (Path::Curl, Some(f)) => f,
            _ => self.follow_up,
        }
    }

    fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    fn rules(mut self, rules: Vec<Rule>) -> Self {
        self.rules = rules;
        self
    }

    fn session(mut self, check: SessionCheck) -> Self {
        self.session = Some(check);
        self
    }

    fn check(mut self, f: impl Fn(&[Recorded]) -> Vec<String> + Send + Sync + 'static) -> Self {
        self.check = Some(Arc::new(f));
        self
    }

    fn act(mut self, act: Act) -> Self {
        self.act = act;
        self
    }

    fn close_within(mut self, d: Duration) -> Self {
        self.close_within = d;
        self
    }
}

// ----- the scripts -----

/// An SSE `message` event.
fn message(json: &str) -> String {
    format!("event: message\ndata: {json}\n\n")
}

/// A tool result sent on the HTTP+SSE stream: it answers the latest `tools/call`.
fn stream_result(text: &str) -> String {
    tool_result(text).replace("{{id}}", "{{id:tools/call}}")
}

fn script(case: &Case, path: Path) -> Vec<Rule> {
    let answer = Answer::for_target(case.target, path);
    let hostile = |matcher: Matcher| (case.hostile)(Rule::new(matcher).once(), &answer);
    let call = || Matcher::post("tools/call").tool("hostile");
    if path != Path::Sse {
        let mut rules = vec![match case.target {
            Target::Call => hostile(call()),
            Target::Handshake => hostile(Matcher::post("initialize")),
            Target::Initialized => hostile(Matcher::post("notifications/initialized")),
            Target::Delete => hostile(Matcher::delete()),
            Target::Get => hostile(Matcher::get()),
            Target::Stream => unreachable!("HTTP+SSE only"),
        }];
        rules.extend(case.rules.iter().cloned());
        rules.extend([
            Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", SESSION)], HANDSHAKE_INIT),
            Rule::post("tools/call")
                .tool("ok")
                .json(200, &tool_result(OK)),
            Rule::notifications().status(202),
            Rule::get().status(405),
            Rule::delete().status(200),
        ]);
        return rules;
    }
    // HTTP+SSE: the stream names the endpoint, then answers on it what is POSTed.
    let honest = Answer::for_target(Target::Handshake, Path::Sse);
    let wait = Duration::from_secs(20);
    let get = Rule::new(Matcher::get()).once();
    let mut get = match case.target {
        Target::Handshake => hostile(Matcher::get()),
        _ => honest.honest(get),
    }
    .wait_for(Matcher::post("initialize"), wait)
    .body(message(INIT_OLD));
    if case.act == Act::Call {
        get = get.wait_for(call(), wait);
        get = match case.target {
            Target::Stream => (case.hostile)(get, &answer),
            _ => get.body(message(&stream_result(OK))),
        };
    }
    let get = get
        .wait_for(Matcher::post("tools/call").tool("ok"), wait)
        .body(message(&stream_result(OK)))
        .silent();
    let mut rules = Vec::new();
    match case.target {
        Target::Call => rules.push(hostile(call())),
        Target::Initialized => rules.push(hostile(Matcher::post("notifications/initialized"))),
        _ => {}
    }
    rules.extend([get, Rule::any().status(202)]);
    rules
}

fn config(case: &Case, path: Path, server: &FaultServer) -> ServerConfig {
    let (kind, url) = match path {
        Path::Sse => (
            HttpKind::Sse,
            format!("{}/sse", server.url().trim_end_matches("/mcp")),
        ),
        Path::Tls | Path::TlsProxy => {
            let front = mcpwire_tests::tls_front::TlsFront::start(server.addr());
            (HttpKind::Streamable, front.url())
        }
        _ => (HttpKind::Streamable, server.url()),
    };
    ServerConfig::Http(HttpConfig {
        kind,
        url,
        headers: case.headers.iter().cloned().collect(),
        extra: Default::default(),
    })
}

fn options(
    case: &Case,
    path: Path,
    proxy: Option<String>,
    notes: Arc<Mutex<Vec<String>>>,
) -> ConnectOptions {
    let mut http_client = HttpClientOptions::default();
    http_client.proxy = match proxy {
        Some(url) => ProxySetting::Url {
            url,
            no_proxy: Vec::new(),
        },
        None => ProxySetting::Direct,
    };
    http_client.http1_via_libcurl = path == Path::Curl;
    // The TLS front's certificate is a throwaway: trust is not what these cases test.
    http_client.tls.danger_accept_invalid_certificates = matches!(path, Path::Tls | Path::TlsProxy);
    ConnectOptions {
        era: Era::Handshake,
        init_timeout: case.init_timeout,
        http: case.http.clone(),
        http_client,
        on_http_exchange: Some(Arc::new(move |n: &HttpExchangeNote| {
            notes.lock().unwrap().push(format!("{n:?}"))
        })),
        ..ConnectOptions::default()
    }
}

// ----- running a case -----

/// How one path went.
#[derive(Debug, Default)]
struct Report {
    outcome: String,
    failures: Vec<String>,
    context: Vec<String>,
    /// The calls that failed as never sent (`tools/list`, or a tool's name): the server must
    /// never see them.
    unsent: Vec<String>,
}

impl Report {
    fn fail(&mut self, failure: impl Into<String>) {
        self.failures.push(failure.into());
    }

    /// Notes a call that failed as never sent.
    fn note_unsent(&mut self, call: &str, outcome: &Result<impl Sized, Error>) {
        if outcome.as_ref().is_err_and(not_sent) {
            self.unsent.push(call.to_owned());
        }
    }

    fn to_json(&self) -> Value {
        json!({"outcome": self.outcome, "failures": self.failures, "context": self.context})
    }

    fn from_json(v: &Value) -> Report {
        let strings = |k: &str| -> Vec<String> {
            v[k].as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        Report {
            outcome: v["outcome"].as_str().unwrap_or_default().to_owned(),
            failures: strings("failures"),
            context: strings("context"),
            unsent: Vec::new(),
        }
    }
}

/// Runs `case` on each of its paths at once and fails with what went wrong on each.
fn run(name: &str, case: Case) {
    if let Ok(which) = std::env::var(CHILD_ENV) {
        // A child process: one path, in this process, its report on stdout.
        let path = Path::from_name(&which).expect("a path name");
        let report = run_path(&case, path);
        println!("{REPORT_MARK}{}", report.to_json());
        return;
    }
    let case = Arc::new(case);
    let runs: Vec<(Path, mpsc::Receiver<Report>)> = PATHS
        .into_iter()
        .filter(|p| case.expect[p.index()].is_some())
        .map(|path| {
            let (tx, rx) = mpsc::channel();
            let (case, name) = (case.clone(), name.to_owned());
            std::thread::Builder::new()
                .name(format!("{name}-{}", path.name()))
                .spawn(move || {
                    let report = if case.memory {
                        run_child(&name, path)
                    } else {
                        run_path(&case, path)
                    };
                    let _ = tx.send(report);
                })
                .expect("spawn a run");
            (path, rx)
        })
        .collect();
    let deadline = Instant::now() + RUN_LIMIT + Duration::from_secs(5);
    let mut failed = Vec::new();
    for (path, rx) in runs {
        let wait = deadline.saturating_duration_since(Instant::now());
        let report = rx.recv_timeout(wait).unwrap_or_else(|_| Report {
            outcome: "no end".into(),
            failures: vec![format!(
                "the run did not end within {RUN_LIMIT:?}: it hangs"
            )],
            ..Report::default()
        });
        let verdict = if report.failures.is_empty() {
            "PASS"
        } else {
            "FAIL"
        };
        eprintln!(
            "{name} [{} on {}] {verdict}: {}",
            path.name(),
            Runtime::from_env(),
            report.outcome
        );
        if !report.failures.is_empty() {
            failed.push(format!(
                "[{}] outcome: {}\n  failures:\n    {}\n  context:\n    {}",
                path.name(),
                report.outcome,
                report.failures.join("\n    "),
                report.context.join("\n    ")
            ));
        }
    }
    assert!(failed.is_empty(), "{name}:\n{}", failed.join("\n"));
}

/// Runs `name` for `path` in a child process (this test binary again) and reads its report.
fn run_child(name: &str, path: Path) -> Report {
    let died = |why: String| Report {
        outcome: "child process failed".into(),
        failures: vec![why],
        ..Report::default()
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return died(format!("no test binary to run: {e}")),
    };
    let child = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, path.name())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return died(format!("cannot start the child: {e}")),
    };
    fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    }
    let out = drain(child.stdout.take().expect("piped stdout"));
    let err = drain(child.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + RUN_LIMIT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                // Our own child, by its PID.
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let (out, err) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    let report = out
        .lines()
        .find_map(|l| l.split_once(REPORT_MARK).map(|(_, report)| report))
        .and_then(|j| serde_json::from_str::<Value>(j).ok());
    match (report, status) {
        (Some(r), _) => Report::from_json(&r),
        (None, None) => died(format!(
            "the child did not end within {RUN_LIMIT:?}: it hangs\n{}",
            tail(&err)
        )),
        (None, Some(status)) => died(format!(
            "the child ended ({status}) without a report\n{}",
            tail(&err)
        )),
    }
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// Runs `case` on `path` in this process: its server, its client, its checks.
fn run_path(case: &Case, path: Path) -> Report {
    let server = FaultServer::start(script(case, path));
    let notes = Arc::new(Mutex::new(Vec::new()));
    let mut report = Report::default();
    let config = config(case, path, &server);
    // The proxy lives as long as the run.
    let proxy = (path == Path::TlsProxy).then(mcpwire_tests::proxy::Proxy::start);
    let options = options(case, path, proxy.as_ref().map(|p| p.url()), notes.clone());
    let expect = case.expect[path.index()].expect("a path the case runs on");
    let ran = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let follow_up = case.follow_up_on(path);
        drive(
            case,
            expect,
            follow_up,
            &server,
            &config,
            options,
            &mut report,
        )
    }));
    if let Err(panic) = ran {
        let text = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(not a string)".into());
        report.outcome = format!("PANIC: {text}");
        report.fail(format!("the client panicked: {text}"));
    }
    // Anything still on its way has arrived by now.
    std::thread::sleep(Duration::from_millis(100));
    let requests = server.requests();
    check_server(case, &requests, &mut report);
    if let Some(proxy) = &proxy {
        // What reached the server went through the proxy's tunnels.
        if !requests.is_empty() && proxy.counts().tunnels == 0 {
            report.fail(format!("no tunnel through the proxy: {:?}", proxy.counts()));
        }
    }
    report
        .context
        .push(format!("server saw: {:?}", server.log()));
    report
        .context
        .extend(server.notes().into_iter().map(|n| format!("server: {n}")));
    let notes = notes.lock().unwrap();
    let shown = notes.len().saturating_sub(12);
    report
        .context
        .extend(notes[shown..].iter().map(|n| format!("client: {n}")));
    report
}

/// Connects and acts, judging each outcome into `report`.
fn drive(
    case: &Case,
    expect: Expect,
    follow_up: FollowUp,
    server: &FaultServer,
    config: &ServerConfig,
    options: ConnectOptions,
    report: &mut Report,
) {
    // The connection and the case's waits run on the runtime the process is set to
    // (`MCPWIRE_TEST_RUNTIME`): smol, or tokio (the connection's sockets and timers tokio's).
    let rt = Runtime::from_env();
    rt.block_on(drive_on(
        rt, case, expect, follow_up, server, config, options, report,
    ))
}

/// [`drive`] inside the runtime `rt`.
#[allow(clippy::too_many_arguments)]
async fn drive_on(
    rt: Runtime,
    case: &Case,
    expect: Expect,
    follow_up: FollowUp,
    server: &FaultServer,
    config: &ServerConfig,
    options: ConnectOptions,
    report: &mut Report,
) {
    let probe = (case.memory && case.target == Target::Handshake).then(MemoryProbe::start);
    let (client, driver) = match rt.connect_with_driver(config, options) {
        Ok(pair) => pair,
        Err(e) => {
            report.outcome = format!("refused at connect: {e}");
            if expect != Expect::Refused {
                report.fail(format!("connect refused the configuration: {e}"));
            } else {
                check_naming(case, &e, report);
            }
            return;
        }
    };
    if expect == Expect::Refused {
        report.fail(format!(
            "connect accepted the configuration (headers {:?}) instead of refusing it",
            case.headers
        ));
    }
    let driver = async move {
        driver.await;
        future::pending::<Report>().await
    };
    let scenario = scenario(rt, case, expect, follow_up, server, &client, probe);
    let limit = async {
        rt.sleep(RUN_LIMIT).await;
        let mut r = Report::default();
        r.fail(format!(
            "the run did not end within {RUN_LIMIT:?}: it hangs"
        ));
        r
    };
    let done = future::or(driver, future::or(scenario, limit)).await;
    report.outcome = done.outcome;
    report.failures.extend(done.failures);
    report.context.extend(done.context);
    report.unsent.extend(done.unsent);
}

async fn scenario(
    rt: Runtime,
    case: &Case,
    expect: Expect,
    follow_up: FollowUp,
    server: &FaultServer,
    client: &Client,
    mut probe: Option<MemoryProbe>,
) -> Report {
    let mut r = Report::default();
    let started = Instant::now();
    let ready = client.ready().await;
    let connected = ready.is_ok();
    if case.act == Act::Connect {
        let outcome = ready.map(|_| OK.to_owned());
        judge(
            case,
            expect,
            &outcome,
            started.elapsed(),
            case.init_timeout,
            &mut r,
        );
        if let Some(p) = probe.take() {
            p.check(server, &mut r);
        }
    } else if let Err(e) = &ready {
        r.outcome = format!("the handshake failed: {}", short(e));
        r.fail(format!("the handshake failed: {e}"));
    }
    if connected {
        match case.act {
            Act::Call => {
                let probe = case.memory.then(MemoryProbe::start);
                let started = Instant::now();
                let outcome = client
                    .call_tool_with("hostile", json!({}), timeout(case.call_timeout))
                    .await
                    .map(|res| res.text());
                r.note_unsent("hostile", &outcome);
                judge(
                    case,
                    expect,
                    &outcome,
                    started.elapsed(),
                    case.call_timeout,
                    &mut r,
                );
                if let Some(p) = probe {
                    p.check(server, &mut r);
                }
            }
            Act::BehindInitialized { answered_after } => {
                behind_initialized(rt, case, client, answered_after, started, &mut r).await
            }
            Act::Connect => {}
        }
        let behind_for_good = matches!(
            case.act,
            Act::BehindInitialized {
                answered_after: None
            }
        );
        if follow_up != FollowUp::None && !behind_for_good {
            rt.sleep(case.gap).await;
            let outcome = client
                .call_tool_with("ok", json!({}), timeout(Duration::from_secs(3)))
                .await;
            r.note_unsent("ok", &outcome);
            match outcome {
                Ok(res) if res.text() == OK => {}
                Ok(res) => r.fail(format!(
                    "the follow-up call was answered {:?}, not its own answer {OK:?}",
                    res.text()
                )),
                Err(e) => match follow_up {
                    FollowUp::AnsweredOrNotSent if not_sent(&e) => r
                        .context
                        .push(format!("the follow-up call was not sent: {e}")),
                    FollowUp::AnsweredOrMayHaveRun if e.maybe_executed() => r
                        .context
                        .push(format!("the follow-up call may have run: {e}")),
                    _ => r.fail(format!("the follow-up call failed: {e}")),
                },
            }
        }
    }
    let closing = Instant::now();
    let closed = future::or(
        async {
            client.close().await;
            Some(())
        },
        async {
            rt.sleep(case.close_within + SLACK).await;
            None
        },
    );
    if closed.await.is_none() {
        r.fail(format!(
            "close did not end within {:?}",
            case.close_within + SLACK
        ));
    } else if closing.elapsed() > case.close_within {
        r.fail(format!(
            "close took {:?}, more than {:?}",
            closing.elapsed(),
            case.close_within
        ));
    }
    r
}

fn timeout(d: Duration) -> CallOptions {
    CallOptions::default().timeout(d)
}

/// Judges an outcome that came after `took`, its own deadline being `deadline`.
fn judge(
    case: &Case,
    expect: Expect,
    outcome: &Result<String, Error>,
    took: Duration,
    deadline: Duration,
    r: &mut Report,
) {
    r.outcome = match outcome {
        Ok(text) => format!("answered {text:?} in {took:?}"),
        Err(e) => format!("{} in {took:?}", short(e)),
    };
    if took > deadline + SLACK {
        r.fail(format!(
            "the outcome took {took:?}, past its deadline of {deadline:?}"
        ));
    }
    match (expect, outcome) {
        (Expect::Answer | Expect::Either, Ok(text)) if text == OK => {}
        (_, Ok(text)) if text != OK => r.fail(format!(
            "answered {text:?}, which is not the answer the server sent ({OK:?})"
        )),
        (Expect::Fail, Ok(_)) => r.fail("answered where a typed error was due"),
        (Expect::Answer, Err(e)) => r.fail(format!("failed where the answer was due: {e}")),
        (Expect::Refused, _) => {}
        (_, Ok(_)) => {}
        (Expect::Fail | Expect::Either, Err(e)) => check_naming(case, e, r),
    }
}

/// Whether `e` says the call was never sent (so it did not run): `LocalError::NotSent`.
fn not_sent(e: &Error) -> bool {
    // By the variant's name, read from `Debug`.
    matches!(e, Error::Call(CallError::Local(local)) if format!("{local:?}").starts_with("NotSent"))
}

fn check_naming(case: &Case, e: &Error, r: &mut Report) {
    if let Some(word) = case.naming {
        let text = e.to_string();
        if !text
            .to_ascii_lowercase()
            .contains(&word.to_ascii_lowercase())
        {
            r.fail(format!("the error does not name {word:?}: {text}"));
        }
    }
}

/// The error's kind and words, in one line.
fn short(e: &Error) -> String {
    let kind = match e {
        Error::Call(CallError::Local(LocalError::Http(h))) => format!("Http({:?})", h.kind),
        Error::Call(CallError::Local(LocalError::Timeout { .. })) => "Timeout".into(),
        Error::MaybeExecuted { http: Some(h), .. } => format!("MaybeExecuted({:?})", h.kind),
        other => format!("{other:?}")
            .split(['(', ' ', '{'])
            .next()
            .unwrap_or_default()
            .to_owned(),
    };
    let text = e.to_string();
    let text: String = text.chars().take(300).collect();
    format!("error {kind}: {text}")
}

/// `tools/list` and `tools/call` of `late` wait behind `notifications/initialized` and time
/// out; when the server accepts the notification at last, the connection goes on.
async fn behind_initialized(
    rt: Runtime,
    case: &Case,
    client: &Client,
    answered_after: Option<Duration>,
    started: Instant,
    r: &mut Report,
) {
    let t = Instant::now();
    let listed = client.list_tools_with(timeout(case.call_timeout)).await;
    let list_took = t.elapsed();
    let t = Instant::now();
    let called = client
        .call_tool_with("late", json!({}), timeout(case.call_timeout))
        .await;
    let call_took = t.elapsed();
    r.note_unsent("tools/list", &listed);
    r.note_unsent("late", &called);
    r.outcome = format!(
        "tools/list: {} in {list_took:?}; tools/call: {} in {call_took:?}",
        listed
            .as_ref()
            .map_or_else(short, |t| format!("{} tools", t.len())),
        called.as_ref().map_or_else(short, |c| c.text()),
    );
    for (what, ok, took) in [
        ("tools/list", listed.is_ok(), list_took),
        ("tools/call", called.is_ok(), call_took),
    ] {
        if ok {
            r.fail(format!(
                "{what} answered while notifications/initialized was not accepted"
            ));
        }
        if took > case.call_timeout + SLACK {
            r.fail(format!("{what} failed after {took:?}, past its timeout"));
        }
    }
    if let Some(after) = answered_after {
        // Past the server's answer to the notification, and a little more.
        let waited = started.elapsed();
        rt.sleep(after.saturating_sub(waited) + Duration::from_millis(500))
            .await;
    }
}

/// What every run checks of what the server recorded.
fn check_server(case: &Case, requests: &[Recorded], r: &mut Report) {
    // No message twice: a request's id once per session (a session renewal sends a request
    // once more in the new session, as documented), one `notifications/initialized` per
    // session.
    let mut seen: HashMap<(Vec<Vec<u8>>, String, String), usize> = HashMap::new();
    for req in requests.iter().filter(|q| q.method == "POST") {
        let Some(body) = req.json() else { continue };
        let method = body["method"].as_str().unwrap_or("response").to_owned();
        let key = match body.get("id") {
            Some(id) => format!("{method} #{id}"),
            None if method == "notifications/initialized" => method,
            None if method == "notifications/cancelled" => {
                format!("{method} of #{}", body["params"]["requestId"])
            }
            None => continue,
        };
        let session = req.raw_header_all("mcp-session-id");
        *seen.entry((session, req.target.clone(), key)).or_default() += 1;
    }
    for ((session, target, key), n) in seen {
        if n > 1 {
            let session: Vec<String> = session
                .iter()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect();
            r.fail(format!(
                "the server received {key} {n} times (session {session:?}, target {target})"
            ));
        }
    }
    // A call its caller was told was never sent must never reach the server.
    for call in r.unsent.clone() {
        let reached = requests.iter().filter(|q| {
            let method = q.rpc_method().unwrap_or_default();
            let tool = q.json().and_then(|v| v.pointer("/params/name").cloned());
            (call == "tools/list" && method == "tools/list")
                || (method == "tools/call" && tool == Some(call.as_str().into()))
        });
        for q in reached {
            r.fail(format!(
                "the server received {} ({call}), which its caller was told was never sent",
                q.describe()
            ));
        }
    }
    if let Some(check) = &case.session {
        check_session(check, requests, r);
    }
    if let Some(evil) = case.never_session {
        for req in requests {
            for v in req.raw_header_all("mcp-session-id") {
                if v.windows(evil.len()).any(|w| w == evil) {
                    r.fail(format!(
                        "{} carried the session id {:?} smuggled into the head",
                        req.describe(),
                        String::from_utf8_lossy(&v)
                    ));
                }
            }
        }
    }
    if let Act::BehindInitialized { .. } = case.act {
        for req in requests {
            let method = req.rpc_method().unwrap_or_default();
            let late_call = method == "tools/call"
                && req.json().and_then(|v| v.pointer("/params/name").cloned())
                    == Some("late".into());
            if method == "tools/list" || late_call || method == "notifications/cancelled" {
                r.fail(format!(
                    "the server received {} after its caller was told it timed out",
                    req.describe()
                ));
            }
        }
    }
    if let Some(check) = &case.check {
        for failure in check(requests) {
            r.fail(failure);
        }
    }
}

fn check_session(check: &SessionCheck, requests: &[Recorded], r: &mut Report) {
    let after_init = requests
        .iter()
        .skip_while(|q| q.rpc_method().as_deref() != Some("initialize"))
        .skip(1);
    let shown = |v: &[u8]| {
        let text = String::from_utf8_lossy(v);
        let text: String = text.chars().take(40).collect();
        format!("{text:?} ({} bytes)", v.len())
    };
    let handshake_held = requests
        .iter()
        .any(|q| q.method == "POST" && q.rpc_method().as_deref() == Some("tools/call"));
    for req in after_init {
        let values = req.raw_header_all("mcp-session-id");
        match values.as_slice() {
            [] if check.refuse || check.allow_absent || !handshake_held => {}
            [] => r.fail(format!("{} carried no session id", req.describe())),
            [v] if check.refuse => r.fail(format!(
                "{} carried the session id {} that should have been refused",
                req.describe(),
                shown(v)
            )),
            [v] if *v == check.sent => {}
            [v] => r.fail(format!(
                "{} carried the session id altered: {} where the server sent {}",
                req.describe(),
                shown(v),
                shown(&check.sent)
            )),
            more => r.fail(format!(
                "{} carried {} session ids",
                req.describe(),
                more.len()
            )),
        }
    }
}

/// The peak resident memory over an exchange, against the resident memory before it.
struct MemoryProbe {
    rss_before: u64,
}

impl MemoryProbe {
    fn start() -> Self {
        // Resets the peak (VmHWM) to the current resident size (Linux 4.0 and later).
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        MemoryProbe {
            rss_before: status_bytes("VmRSS:"),
        }
    }

    fn check(self, server: &FaultServer, r: &mut Report) {
        let grew = status_bytes("VmHWM:").saturating_sub(self.rss_before);
        let sent = server.endless_bytes();
        r.outcome.push_str(&format!(
            "; peak memory grew {} KiB while the server sent {} KiB without end",
            grew / 1024,
            sent / 1024
        ));
        if grew > MEMORY_BOUND {
            r.fail(format!(
                "peak memory grew {} MiB (bound {} MiB) while the server sent {} MiB",
                grew / MIB,
                MEMORY_BOUND / MIB,
                sent / MIB
            ));
        }
    }
}

/// A size line of `/proc/self/status`, in bytes (0 where there is none).
fn status_bytes(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

// ----- the hostile answers used by several cases -----

/// The honest answer with one more header line.
fn extra_line(line: &'static [u8]) -> impl Fn(Rule, &Answer) -> Rule {
    move |r, a| a.with_lines(r, line)
}

/// The honest answer under another status line.
fn status_line(line: &'static [u8]) -> impl Fn(Rule, &Answer) -> Rule {
    move |r, a| a.with_status_line(r, line)
}

/// The head with these framing lines, the honest body as it is, and the connection closed.
fn framing_lines(lines: &'static [u8]) -> impl Fn(Rule, &Answer) -> Rule {
    move |r, a| {
        a.framed(r, lines, Framing::CloseDelimited)
            .body(&a.body)
            .close()
    }
}

/// A chunked head; what follows is written by `body` outside the framing.
fn chunked(body: impl Fn(Rule, &Answer) -> Rule) -> impl Fn(Rule, &Answer) -> Rule {
    move |r, a| {
        body(
            a.framed(r, b"Transfer-Encoding: chunked\r\n", Framing::Length),
            a,
        )
    }
}

/// The `initialize` answer with this `Mcp-Session-Id`, byte for byte.
fn session_id(id: Vec<u8>) -> impl Fn(Rule, &Answer) -> Rule {
    move |r, a| {
        let head = [
            &b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: "[..],
            &id,
            b"\r\nContent-Length: {{length}}\r\n\r\n",
        ]
        .concat();
        r.raw_head(head, Framing::Length).body(&a.body)
    }
}

fn echoed(sent: &[u8]) -> SessionCheck {
    SessionCheck {
        sent: sent.to_vec(),
        refuse: false,
        allow_absent: false,
    }
}

fn refused(sent: &[u8]) -> SessionCheck {
    SessionCheck {
        refuse: true,
        ..echoed(sent)
    }
}

const ENDLESS: Duration = Duration::from_secs(5);
const ENDLESS_BYTES: u64 = 1024 * MIB;
const INTERIM: &[u8] = b"HTTP/1.1 102 Processing\r\n\r\n";

/// Defines one `#[test]` per case.
macro_rules! cases {
    ($($(#[$doc:meta])* $name:ident: $case:expr;)*) => {
        $(
            $(#[$doc])*
            #[test]
            fn $name() {
                run(stringify!($name), $case)
            }
        )*
    };
}

// ----- framing ambiguity -----

cases! {
    /// Both framings: RFC 9112 §6.3 lets `Transfer-Encoding` win, or the response be refused;
    /// either way it is never read by its length.
    te_and_content_length: Case::call(|r, a| {
        a.framed(r, b"Content-Length: 7\r\nTransfer-Encoding: chunked\r\n", Framing::Chunked)
            .body(&a.body)
    })
    .all(Expect::Either);
    /// Two lengths that differ: an unrecoverable framing error (RFC 9112 §6.3), even when the
    /// connection then closes and a client could read to its end.
    two_content_lengths: Case::call(framing_lines(
        b"Content-Length: {{length}}\r\nContent-Length: 3\r\n",
    ))
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either));
    negative_content_length: Case::call(framing_lines(b"Content-Length: -1\r\n"))
        .streamable(Expect::Fail)
        .sse(Some(Expect::Either));
    garbage_content_length: Case::call(framing_lines(b"Content-Length: abc\r\n"))
        .streamable(Expect::Fail)
        .sse(Some(Expect::Either));
    overflowing_content_length: Case::call(framing_lines(
        b"Content-Length: 99999999999999999999999\r\n",
    ))
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either))
    .over_libcurl(Expect::Either, FollowUp::Answered);
    /// A length of 1 TiB and a short body, then silence: nothing is set aside for the length.
    huge_content_length_then_silence: Case::call(|r, a| {
        a.framed(r, b"Content-Length: 1099511627776\r\n", Framing::Length)
            .body(&a.body)
            .silent()
    })
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either))
    .fast()
    .memory();
    content_length_longer_than_the_body_then_close: Case::call(|r, a| {
        a.framed(r, b"Content-Length: 100000\r\n", Framing::Length)
            .body(&a.body)
            .close()
    })
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either));
}

// ----- chunked abuse -----

cases! {
    chunk_size_not_hex: Case::call(chunked(|r, a| {
        r.raw("zz\r\n").raw(&a.body).raw("\r\n0\r\n\r\n").close()
    }))
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either));
    chunk_without_crlf_after_its_data: Case::call(chunked(|r, a| {
        r.chunk_ending("", &a.body, "XX").raw("0\r\n\r\n").close()
    }))
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either));
    /// Chunk extensions are allowed (RFC 9112 §7.1.1) and ignored.
    chunk_extensions: Case::call(chunked(|r, a| {
        r.chunk(";name=value;quoted=\"a b\"", &a.body).raw("0;last\r\n\r\n")
    }))
    .all(Expect::Answer);
    chunk_size_overflows: Case::call(chunked(|r, a| {
        r.raw("fffffffffffffffffffff\r\n").raw(&a.body).close()
    }))
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either));
    /// A chunk of 2^60 bytes that keeps coming: the body is capped, not the chunk trusted.
    chunk_size_huge_and_endless: Case::call(chunked(|r, a| {
        r.raw("fffffffffffffff\r\n").raw(&a.prefix).flood("x", ENDLESS, ENDLESS_BYTES)
    }))
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either))
    .fast()
    .memory();
    /// A trailer section is allowed (RFC 9112 §7.1.2) and ignored.
    chunk_trailers: Case::call(chunked(|r, a| {
        r.chunk("", &a.body).raw("0\r\nX-Trailer: yes\r\nX-Other: 1\r\n\r\n")
    }))
    .all(Expect::Answer);
    chunked_body_cut_short: Case::call(chunked(|r, a| r.raw("1000\r\n").raw(&a.body).close()))
        .streamable(Expect::Fail)
        .sse(Some(Expect::Either));
}

// ----- endless and dribbled heads and bodies (sub-second deadlines) -----

cases! {
    /// A head without end is refused at the limit, in the same words on every client (never
    /// libcurl's "unknown error").
    endless_head: Case::call(|r, _| {
        r.raw("HTTP/1.1 200 OK\r\nX-Filler: ").flood("x", ENDLESS, ENDLESS_BYTES)
    })
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either))
    .naming("the response head is over")
    .fast()
    .memory();
    endless_header_lines: Case::call(|r, _| {
        r.raw("HTTP/1.1 200 OK\r\n").flood("X-Filler: x\r\n", ENDLESS, ENDLESS_BYTES)
    })
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either))
    .naming("the response head is over")
    .fast()
    .memory();
    /// One byte of the head every 100 ms: the call's deadline ends it.
    dribbled_head: Case::call(|r, _| {
        r.dribble(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: yes\r\n\r\n",
            Duration::from_millis(100),
        )
    })
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either))
    .fast();
    endless_json_body: Case::call(|r, a| {
        a.framed(r, b"Transfer-Encoding: chunked\r\n", Framing::Chunked)
            .body(&a.prefix)
            .endless(64 * 1024, ENDLESS, ENDLESS_BYTES)
    })
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either))
    .fast()
    .memory();
    endless_body_until_close: Case::call(|r, a| {
        a.framed(r, b"Connection: close\r\n", Framing::CloseDelimited)
            .body(&a.prefix)
            .endless(64 * 1024, ENDLESS, ENDLESS_BYTES)
    })
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either))
    .fast()
    .memory();
    /// One byte of the body every 100 ms: never idle long enough for the idle timeout, so the
    /// call's deadline ends it.
    dribbled_body: Case::call(|r, a| {
        let head = a.head(a.status_line.as_bytes(), a.framing_line().as_bytes());
        r.raw_head(head, a.framing())
            .dribble(&a.body, Duration::from_millis(100))
    })
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either))
    .fast();
    /// The `notifications/initialized` POST's head trickles in: its head timeout ends it. What
    /// waited behind it goes on, or fails as never sent (and then never reaches the server).
    initialized_head_dribbled: Case::exchange(Target::Initialized, |r, _| {
        r.dribble("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", Duration::from_millis(100))
    })
    .all(Expect::Answer)
    .follow_up(FollowUp::AnsweredOrNotSent)
    .fast();
    /// The `notifications/initialized` POST's body stops: its idle timeout ends it.
    initialized_body_stalls: Case::exchange(Target::Initialized, |r, _| {
        r.raw("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
            .silent()
    })
    .all(Expect::Answer)
    .fast();
    /// The standalone GET's head trickles in: its head timeout ends it; calls are unaffected.
    get_head_dribbled: Case::exchange(Target::Get, |r, _| {
        r.dribble(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n",
            Duration::from_millis(100),
        )
    })
    .streamable(Expect::Answer)
    .fast();
    /// The DELETE at close is answered a byte every 100 ms: close ends on the head timeout.
    delete_head_dribbled: Case::exchange(Target::Delete, |r, _| {
        r.dribble("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", Duration::from_millis(100))
    })
    .streamable(Expect::Answer)
    .fast()
    .close_within(Duration::from_millis(1500));
    delete_never_answered: Case::exchange(Target::Delete, |r, _| r.silent())
        .streamable(Expect::Answer)
        .fast()
        .close_within(Duration::from_millis(1500));
}

// ----- interim responses -----

cases! {
    continue_then_the_answer: Case::call(|r, a| a.honest(r.raw("HTTP/1.1 100 Continue\r\n\r\n")))
        .all(Expect::Answer);
    a_flood_of_interim_heads_then_the_answer: Case::call(|r, a| {
        a.honest(r.raw(INTERIM.repeat(2000)))
    })
    .all(Expect::Either);
    an_endless_flood_of_interim_heads: Case::call(|r, _| r.flood(INTERIM, ENDLESS, ENDLESS_BYTES))
        .streamable(Expect::Fail)
        .sse(Some(Expect::Either))
        .fast()
        .memory();
    /// A 101 nobody asked for (no `Upgrade` was sent), then what would be the answer.
    switching_protocols_out_of_the_blue: Case::call(|r, a| {
        a.honest(r.raw(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
        ))
    })
    .streamable(Expect::Fail)
    .sse(Some(Expect::Either));
}

// ----- keep-alive tricks: the next request must not meet the dead connection -----

cases! {
    /// `Connection: close`: that connection is never used again.
    closes_after_the_answer_with_connection_close: Case::call(|r, a| {
        a.with_lines(r, b"Connection: close\r\n").close()
    })
    .all(Expect::Answer)
    .one_connection();
    /// The server closes at once, saying nothing: the next request may race the close.
    closes_after_the_answer_without_a_word: Case::call(|r, a| a.honest(r).close())
        .all(Expect::Answer)
        .one_connection()
        .follow_up(FollowUp::AnsweredOrMayHaveRun);
    closes_a_moment_after_the_answer_with_connection_close: Case::call(|r, a| {
        a.with_lines(r, b"Connection: close\r\n")
            .pause(Duration::from_millis(100))
            .close()
    })
    .all(Expect::Answer)
    .one_connection()
    .gap(Duration::from_millis(300));
    /// The server closes 100 ms after the answer, saying nothing: the close has arrived 200 ms
    /// before the next request, which must not go on that connection.
    closes_a_moment_after_the_answer_without_a_word: Case::call(|r, a| {
        a.honest(r).pause(Duration::from_millis(100)).close()
    })
    .all(Expect::Answer)
    .one_connection()
    .gap(Duration::from_millis(300));
    /// A whole second response 50 ms after the answer, answering the next id: it is there
    /// when the next request goes (200 ms after the answer), and must never be taken for its
    /// answer (a connection that holds bytes nobody asked for is not to be used again).
    a_stray_response_after_the_answer: Case::call(|r, a| {
        let smuggled = tool_result("smuggled").replace("{{id}}", "{{id+1}}");
        a.honest(r)
            .pause(Duration::from_millis(50))
            .raw_head(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                 Content-Length: {{length}}\r\n\r\n",
                Framing::Length,
            )
            .body(smuggled)
    })
    .all(Expect::Answer)
    .one_connection()
    .gap(Duration::from_millis(200));
    /// Bytes nobody asked for, 50 ms after the answer: that connection is not to be used again.
    stray_bytes_after_the_answer: Case::call(|r, a| {
        a.honest(r)
            .pause(Duration::from_millis(50))
            .raw("garbage\r\n\r\n")
    })
    .all(Expect::Answer)
    .one_connection()
    .gap(Duration::from_millis(200));
}

// ----- odd session ids (Streamable HTTP) -----

cases! {
    /// A Latin-1 byte: HTTP cannot carry it back as it came (RFC 9110 §5.5 obs-text), so the
    /// handshake fails naming the header; nothing is sent with an altered id.
    session_id_latin1_byte: Case::handshake(session_id(b"caf\xe9".to_vec()))
        .streamable(Expect::Fail)
        .naming("Mcp-Session-Id")
        .session(refused(b"caf\xe9"));
    session_id_utf8: Case::handshake(session_id("café".as_bytes().to_vec()))
        .streamable(Expect::Fail)
        .naming("Mcp-Session-Id")
        .session(refused("café".as_bytes()));
    session_id_with_a_space: Case::handshake(session_id(b"sess 1".to_vec()))
        .streamable(Expect::Either)
        .session(echoed(b"sess 1"));
    session_id_with_a_control_byte: Case::handshake(session_id(b"sess\x01id".to_vec()))
        .streamable(Expect::Either)
        .session(echoed(b"sess\x01id"));
    session_id_empty: Case::handshake(session_id(Vec::new()))
        .streamable(Expect::Either)
        .session(SessionCheck { allow_absent: true, ..echoed(b"") });
    session_id_of_100_kib: Case::handshake(session_id(vec![b'a'; 100 * 1024]))
        .streamable(Expect::Either)
        .session(echoed(&[b'a'; 100 * 1024]));
    /// A lone CR in a header value must not start a header of its own.
    session_id_smuggled_after_a_lone_cr: Case {
        never_session: Some(b"evil"),
        ..Case::handshake(extra_line(b"X-Odd: a\rMcp-Session-Id: evil\r\n"))
            .streamable(Expect::Either)
    };
}

// ----- control bytes -----

cases! {
    header_value_with_nul: Case::call(extra_line(b"X-Odd: a\0b\r\n")).all(Expect::Either);
    header_value_with_a_lone_cr: Case::call(extra_line(b"X-Odd: a\rb\r\n")).all(Expect::Either);
    header_value_with_esc: Case::call(extra_line(b"X-Odd: a\x1b[31mb\r\n")).all(Expect::Either);
    header_value_with_del: Case::call(extra_line(b"X-Odd: a\x7fb\r\n")).all(Expect::Either);
    status_line_not_http: Case::call(status_line(b"XTTP/1.1 200 OK"))
        .streamable(Expect::Fail)
        .sse(Some(Expect::Either));
    status_line_icy: Case::call(status_line(b"ICY 200 OK"))
        .streamable(Expect::Fail)
        .sse(Some(Expect::Either));
    reason_phrase_with_control_bytes: Case::call(status_line(b"HTTP/1.1 200 O\x01K\x1b\x7f"))
        .all(Expect::Either);
}

// ----- the HTTP+SSE transport's event stream -----

cases! {
    sse_stream_status_line_not_http: Case::handshake(status_line(b"XTTP/1.1 200 OK"))
        .only(Path::Sse, Expect::Fail);
    sse_stream_header_with_nul: Case::handshake(extra_line(b"X-Odd: a\0b\r\n"))
        .only(Path::Sse, Expect::Either);
    sse_stream_te_and_content_length: Case::handshake(|r, a| {
        a.framed(r, b"Content-Length: 7\r\nTransfer-Encoding: chunked\r\n", Framing::Chunked)
            .body(&a.body)
    })
    .only(Path::Sse, Expect::Either);
    sse_stream_switching_protocols: Case::handshake(|r, a| {
        a.honest(r.raw("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"))
    })
    .only(Path::Sse, Expect::Fail);
    sse_stream_endless_head: Case::handshake(|r, _| {
        r.raw("HTTP/1.1 200 OK\r\nX-Filler: ").flood("x", ENDLESS, ENDLESS_BYTES)
    })
    .only(Path::Sse, Expect::Fail)
    .fast()
    .memory();
    sse_stream_dribbled_head: Case::handshake(|r, _| {
        r.dribble(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Slow: yes\r\n\r\n",
            Duration::from_millis(100),
        )
    })
    .only(Path::Sse, Expect::Fail)
    .fast();
    sse_stream_endless_interim_heads: Case::handshake(|r, _| {
        r.flood(INTERIM, ENDLESS, ENDLESS_BYTES)
    })
    .only(Path::Sse, Expect::Fail)
    .fast()
    .memory();
    /// An event that never ends in place of the answer: capped, and the call times out.
    sse_stream_endless_event: Case::stream(|r, a| {
        r.body(&a.prefix).endless(64 * 1024, ENDLESS, ENDLESS_BYTES)
    })
    .fast()
    .memory()
    .follow_up(FollowUp::None);
    /// Broken chunk framing in the stream: the stream, and with it the connection, is lost.
    sse_stream_chunk_size_not_hex: Case::stream(|r, _| r.raw("zz\r\n").silent())
        .follow_up(FollowUp::None);
    sse_stream_cut_in_the_middle_of_the_answer: Case::stream(|r, a| {
        r.raw("1000\r\n").raw(&a.prefix).raw(r#"{"jsonrpc":"2.0","id":{{id:tools/call}},"#).close()
    })
    .follow_up(FollowUp::None);
}

// ----- MCP-level hostility -----

/// A 404 with a body answering the request's own id (a JSON-RPC error): the specification says
/// a 404 to a request carrying a session id means the session is gone, so a new one is made
/// (`initialize` again, without the header) and the call goes once more, in it.
#[test]
fn session_404_carrying_the_requests_own_id_renews_the_session() {
    let expired =
        r#"{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32001,"message":"session expired"}}"#;
    let case = Case::call(move |r, _| r.header("mcp-session-id", SESSION).json(404, expired))
        .streamable(Expect::Answer)
        .rules(vec![
            Rule::post("initialize").once().json_with(
                200,
                &[("Mcp-Session-Id", SESSION)],
                HANDSHAKE_INIT,
            ),
            Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", "s-2")], HANDSHAKE_INIT),
            Rule::post("tools/call")
                .tool("hostile")
                .header("mcp-session-id", "s-2")
                .json(200, &tool_result(OK)),
        ])
        .check(|requests| {
            let mut failures = Vec::new();
            let of = |m: &str| -> Vec<&Recorded> {
                requests
                    .iter()
                    .filter(|q| q.rpc_method().as_deref() == Some(m))
                    .collect()
            };
            let inits = of("initialize");
            if inits.len() != 2 {
                failures.push(format!("{} initialize requests, not 2", inits.len()));
            } else if inits[1].header("mcp-session-id").is_some() {
                failures.push("the second initialize carried a session id".into());
            }
            let calls: Vec<&Recorded> = of("tools/call")
                .into_iter()
                .filter(|q| {
                    q.json().and_then(|v| v.pointer("/params/name").cloned())
                        == Some("hostile".into())
                })
                .collect();
            let sessions: Vec<Option<&str>> =
                calls.iter().map(|q| q.header("mcp-session-id")).collect();
            if sessions != [Some(SESSION), Some("s-2")] {
                failures.push(format!(
                    "the call went in sessions {sessions:?}, not once in each of {SESSION} and s-2"
                ));
            }
            failures
        });
    run(
        "session_404_carrying_the_requests_own_id_renews_the_session",
        case,
    );
}

/// `notifications/initialized` accepted only after 2 s: the requests that waited behind it
/// and timed out are never sent, nor cancelled (they never went), then or later.
#[test]
fn initialized_accepted_late_never_sends_the_timed_out_requests() {
    let late = Duration::from_secs(2);
    let case = Case::exchange(Target::Initialized, move |r, a| a.honest(r.pause(late)))
        .act(Act::BehindInitialized {
            answered_after: Some(late),
        })
        .all(Expect::Answer);
    let case = Case {
        call_timeout: Duration::from_millis(400),
        ..case
    };
    run(
        "initialized_accepted_late_never_sends_the_timed_out_requests",
        case,
    );
}

/// `notifications/initialized` never accepted: the requests that timed out behind it are not
/// sent at close either, and the close ends.
#[test]
fn initialized_never_accepted_sends_nothing_at_close() {
    let case = Case::exchange(Target::Initialized, |r, _| r.silent())
        .act(Act::BehindInitialized {
            answered_after: None,
        })
        .all(Expect::Answer);
    let case = Case {
        call_timeout: Duration::from_millis(400),
        ..case
    };
    run("initialized_never_accepted_sends_nothing_at_close", case);
}

// ----- the user's headers -----

/// A header of the config that the HTTP client owns (it frames the message or names the
/// host): refused by `connect`, naming it, before anything is sent.
fn reserved_header(name: &'static str, value: &str) -> Case {
    Case::handshake(|r, a| a.honest(r))
        .all(Expect::Refused)
        .naming(name)
        .header(name, value)
        .check(|requests| {
            if requests.is_empty() {
                Vec::new()
            } else {
                vec![format!(
                    "{} requests reached the server, the first with the head {:?}",
                    requests.len(),
                    String::from_utf8_lossy(&requests[0].head)
                )]
            }
        })
}

/// Every request carries exactly these `User-Agent` values.
fn user_agent(want: String) -> impl Fn(&[Recorded]) -> Vec<String> {
    move |requests| {
        requests
            .iter()
            .filter(|q| q.header_all("user-agent") != [want.as_str()])
            .map(|q| {
                format!(
                    "{} carried User-Agent {:?}, not [{want:?}]",
                    q.describe(),
                    q.header_all("user-agent")
                )
            })
            .collect()
    }
}

cases! {
    config_header_content_length: reserved_header("Content-Length", "5");
    config_header_transfer_encoding: reserved_header("Transfer-Encoding", "chunked");
    config_header_host: reserved_header("Host", "x");
    config_header_connection: reserved_header("Connection", "x");
    /// `User-Agent: mcpwire/<version>` on every request (this crate shares the workspace's
    /// version).
    user_agent_is_mcpwire: Case::handshake(|r, a| a.honest(r))
        .all(Expect::Answer)
        .check(user_agent(format!("mcpwire/{}", env!("CARGO_PKG_VERSION"))));
    /// The user's own `User-Agent` wins, alone.
    user_agent_of_the_user_wins: Case::handshake(|r, a| a.honest(r))
        .all(Expect::Answer)
        .header("User-Agent", "my-host/2.0")
        .check(user_agent("my-host/2.0".into()));
}
