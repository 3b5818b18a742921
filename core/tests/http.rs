//! Streamable HTTP (handshake era) in memory: scripted exchanges with exact response bytes in
//! chosen splits, each asserted as a transcript of the requests emitted and the events produced;
//! and the client core against the demo server over an in-memory HTTP pairing.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use mcpwire_core::config::HttpConfig;
use mcpwire_core::jsonrpc::{Id, Message, Parsed, RawJson};
#[cfg(feature = "demo")]
use mcpwire_core::server::{DemoConfig, DemoServer};
use mcpwire_core::types::ClientCapabilities;
use mcpwire_core::McpCall;
use mcpwire_core::{
    AuthorizationInput, CallError, CallId, CallOptions, ClientConfig, ClientError, Connection,
    Diagnostic, Era, Event, ExchangeId, HttpAction, HttpInput, HttpMethod, HttpOptions,
    HttpRequest, LocalError, Output, ProcessExit, ServerNotification, ServerRequest, StdioInput,
};
use serde_json::{json, Value};

#[path = "http/auth.rs"]
mod auth;
#[path = "http/hostile.rs"]
mod hostile;
#[path = "http/review.rs"]
mod review;
#[path = "http/sessions.rs"]
mod sessions;
#[path = "http/sse.rs"]
mod sse;
#[path = "http/stateless.rs"]
mod stateless;

const URL: &str = "http://127.0.0.1:1/mcp";

struct H {
    c: Connection,
    now: Instant,
    /// Requests started and not yet answered, by exchange.
    open: HashMap<ExchangeId, HttpRequest>,
    /// One line per request started: `POST tools/call #1` or `GET`.
    log: Vec<String>,
    /// The session header of each request in `log`.
    sessions: Vec<Option<String>>,
    aborted: Vec<ExchangeId>,
    events: Vec<Event>,
}

fn describe(r: &HttpRequest) -> String {
    match r.method {
        HttpMethod::Post => {
            let m = match mcpwire_core::jsonrpc::parse(&r.body) {
                Ok(Parsed::Single(m)) => m,
                _ => return "POST ?".into(),
            };
            match m {
                Message::Request(q) => format!("POST {} #{}", q.method, q.id),
                Message::Notification(n) => format!("POST {}", n.method),
                Message::Response(r) => format!("POST response #{}", r.id.unwrap_or(Id::Num(-1))),
            }
        }
        HttpMethod::Get => match r.header("last-event-id") {
            Some(id) => format!("GET last-event-id={id}"),
            None => "GET".into(),
        },
        HttpMethod::Delete => "DELETE".into(),
    }
}

fn endpoint() -> HttpConfig {
    match mcpwire_core::config::ServerConfig::http(URL) {
        mcpwire_core::config::ServerConfig::Http(h) => h,
        _ => unreachable!(),
    }
}

fn caps() -> ClientCapabilities {
    ClientCapabilities {
        elicitation: Some(json!({"form": {}})),
        ..Default::default()
    }
}

impl H {
    fn new() -> H {
        Self::with(endpoint(), HttpOptions::default())
    }

    /// A connection in era `era`, its first outputs drained.
    fn in_era(era: Era) -> H {
        let config = ClientConfig {
            capabilities: caps(),
            era,
            ..ClientConfig::default()
        };
        Self::connect(config, endpoint(), HttpOptions::default())
    }

    fn with(server: HttpConfig, options: HttpOptions) -> H {
        let config = ClientConfig {
            capabilities: caps(),
            era: Era::Handshake,
            ..ClientConfig::default()
        };
        Self::connect(config, server, options)
    }

    /// A connection made with `config`, its first outputs drained.
    fn connect(config: ClientConfig, server: HttpConfig, options: HttpOptions) -> H {
        let now = Instant::now();
        let mut h = H {
            c: Connection::http(now, config, &server, options).unwrap(),
            now,
            open: HashMap::new(),
            log: Vec::new(),
            sessions: Vec::new(),
            aborted: Vec::new(),
            events: Vec::new(),
        };
        h.pump();
        h
    }

    /// Drains the connection: exchanges to start or abort, and the events.
    fn pump(&mut self) {
        while let Some(out) = self.c.poll_output() {
            match out {
                Output::Http(HttpAction::Start(r)) => {
                    self.log.push(describe(&r));
                    let session = r.header("mcp-session-id").map(str::to_owned);
                    self.sessions.push(session);
                    self.open.insert(r.exchange, r);
                }
                Output::Http(HttpAction::Abort(id)) => {
                    self.open.remove(&id);
                    self.aborted.push(id);
                }
                Output::Event(e) => self.events.push(e),
                other => panic!("not an HTTP output: {other:?}"),
            }
        }
    }

    /// The open exchange whose log line starts with `what`.
    fn find(&self, what: &str) -> ExchangeId {
        let mut ids: Vec<_> = self
            .open
            .iter()
            .filter(|(_, r)| describe(r).starts_with(what))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        *ids.last()
            .unwrap_or_else(|| panic!("no open {what}: {:?}", self.log))
    }

    fn request(&self, id: ExchangeId) -> &HttpRequest {
        &self.open[&id]
    }

    /// Answers exchange `id`: head, then the body in the given pieces, then the end.
    fn answer(&mut self, id: ExchangeId, status: u16, headers: &[(&str, &str)], pieces: &[&[u8]]) {
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.c
            .handle_http(
                self.now,
                id,
                HttpInput::Head {
                    status,
                    headers: &headers,
                },
            )
            .unwrap();
        self.pump();
        for p in pieces {
            self.c
                .handle_http(self.now, id, HttpInput::Body(p))
                .unwrap();
            self.pump();
        }
        self.c.handle_http(self.now, id, HttpInput::End).unwrap();
        self.open.remove(&id);
        self.pump();
    }

    fn json(&mut self, id: ExchangeId, body: Value) {
        let text = body.to_string();
        self.answer(
            id,
            200,
            &[("Content-Type", "application/json")],
            &[text.as_bytes()],
        );
    }

    fn accepted(&mut self, id: ExchangeId) {
        self.answer(id, 202, &[], &[]);
    }

    /// Completes the handshake with a session; the standalone GET is refused with `get_status`.
    fn ready(get_status: u16) -> H {
        Self::ready_with(HttpOptions::default(), get_status)
    }

    /// [`H::ready`] for a connection made with `options`.
    fn ready_with(options: HttpOptions, get_status: u16) -> H {
        let mut h = H::with(endpoint(), options);
        h.handshake(Some("sess-1"));
        let get = h.find("GET");
        h.answer(get, get_status, &[], &[]);
        assert!(h.c.is_ready());
        h.log.clear();
        h.sessions.clear();
        h.events.clear();
        h
    }

    /// Answers the handshake: `initialize` (in session `session`, when given), then
    /// `notifications/initialized` accepted.
    fn handshake(&mut self, session: Option<&str>) {
        let init = self.find("POST initialize");
        self.initialize(init, session);
        let n = self.find("POST notifications/initialized");
        self.accepted(n);
    }

    /// Answers exchange `init`, an `initialize` request, with the server's result, in session
    /// `session` when given.
    fn initialize(&mut self, init: ExchangeId, session: Option<&str>) {
        let text = initialize_result(self.request_id(init)).to_string();
        let mut headers = vec![("Content-Type", "application/json")];
        if let Some(session) = session {
            headers.push(("Mcp-Session-Id", session));
        }
        self.answer(init, 200, &headers, &[text.as_bytes()]);
    }

    /// The JSON-RPC id of the request exchange `x` carries.
    fn request_id(&self, x: ExchangeId) -> Id {
        match mcpwire_core::jsonrpc::parse(&self.request(x).body) {
            Ok(Parsed::Single(Message::Request(r))) => r.id,
            other => panic!("not a request: {other:?}"),
        }
    }

    fn call(&mut self, name: &str, opts: CallOptions) -> CallId {
        let now = self.now;
        let call = self
            .c
            .call(now, &McpCall::call_tool(name, Some(json!({}))), opts)
            .unwrap();
        self.pump();
        call
    }

    fn outcome(&self, call: CallId) -> Option<&Result<RawJson, CallError>> {
        self.events.iter().find_map(|e| match e {
            Event::CallDone { call: c, outcome } if *c == call => Some(outcome),
            _ => None,
        })
    }

    /// Answers a renewal's `initialize` exchange with the new session `session`.
    fn renewed(&mut self, init: ExchangeId, session: &str) {
        self.initialize(init, Some(session));
    }

    fn advance_to_next_deadline(&mut self) {
        let t = self.c.poll_timeout().expect("a deadline");
        self.now = t;
        self.c.handle_timeout(t);
        self.pump();
    }
}

/// The server's answer to `initialize` request `id`: the handshake era's latest revision, with
/// tools.
fn initialize_result(id: Id) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}})
}

/// A refusal's challenge: the token is not valid; the resource metadata is named.
const CHALLENGE: &str = r#"Bearer error="invalid_token", resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp""#;

/// Every refusal the connection asked the host to authorize, in order.
fn refusals(h: &H) -> Vec<&mcpwire_core::AuthorizationRequired> {
    h.events
        .iter()
        .filter_map(|e| match e {
            Event::AuthorizationRequired(r) => Some(&**r),
            _ => None,
        })
        .collect()
}

/// A server's answer to a request in a session it does not know.
const EXPIRED: &[u8] =
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#;

fn result_line(id: i64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "ok"}]}})
        .to_string()
}

/// Concurrent POSTs reach a server in any order, and a server may finish setting up the
/// session when it takes `notifications/initialized` (server-everything adds the tools the
/// client's capabilities allow then): a request made meanwhile waits for that POST's response
/// head, and goes at once after it. The GET stream does not wait.
/// An input of the other transport is refused in every build, and changes nothing: no output,
/// the same deadline, the same exchanges; the connection goes on.
#[test]
fn stdio_inputs_are_refused_over_http() {
    let mut h = H::new();
    let init = h.find("POST initialize");
    let deadline = h.c.poll_timeout();
    let now = h.now;
    let refused = [
        h.c.handle_stdio(now, StdioInput::Stdout(b"{}\n")),
        h.c.handle_stdio(now, StdioInput::StdoutEof),
        h.c.handle_stdio(
            now,
            StdioInput::Exit {
                exit: ProcessExit::UNKNOWN,
                stderr_tail: "",
            },
        ),
        h.c.handle_stdio(now, StdioInput::Respawned),
        h.c.handle_stdio(now, StdioInput::RespawnFailed("no")),
    ];
    for r in refused {
        assert!(
            matches!(
                r,
                Err(ClientError::WrongTransport {
                    transport: "HTTP",
                    ..
                })
            ),
            "{r:?}"
        );
    }
    assert_eq!(
        h.c.handle_stdio(now, StdioInput::StdoutEof)
            .unwrap_err()
            .to_string(),
        "the end of stdout is no input of a connection over HTTP"
    );
    assert!(
        h.c.poll_output().is_none(),
        "a refused input queued something"
    );
    assert_eq!(h.c.poll_timeout(), deadline);
    assert_eq!(h.open.keys().copied().collect::<Vec<_>>(), [init]);
    assert!(h.events.is_empty());
}

#[test]
fn the_first_request_waits_until_the_initialized_notification_is_accepted() {
    for refused in [false, true] {
        let mut h = H::new();
        let init = h.find("POST initialize");
        let body = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}})
        .to_string();
        let headers = [
            ("content-type", "application/json"),
            ("mcp-session-id", "abc"),
        ];
        h.answer(init, 200, &headers, &[body.as_bytes()]);
        let n = h.find("POST notifications/initialized");
        let first = h.call("x", CallOptions::default());
        let second = h.call("y", CallOptions::default());
        assert_eq!(
            h.log,
            [
                "POST initialize #0",
                "POST notifications/initialized",
                "GET"
            ]
        );
        // Accepted, or refused: either way the server has had it, and the requests go.
        match refused {
            false => h.accepted(n),
            true => h.answer(n, 400, &[("content-type", "text/plain")], &[b"no"]),
        }
        let mut calls = Vec::new();
        for call in [first, second] {
            let post = h.find(&format!("POST tools/call #{}", call.0));
            calls.push(post);
            h.json(post, serde_json::from_str(&result_line(call.0)).unwrap());
            assert!(matches!(h.outcome(call), Some(Ok(_))), "{:?}", h.events);
        }
        assert_eq!(h.log.len(), 5, "{:?}", h.log);
        // Later notifications do not hold anything back.
        h.c.notify(h.now, "notifications/roots/list_changed", None)
            .unwrap();
        let third = h.call("z", CallOptions::default());
        h.pump();
        assert!(
            h.log
                .iter()
                .any(|l| l == &format!("POST tools/call #{}", third.0)),
            "{:?}",
            h.log
        );
    }
}

#[test]
fn handshake_headers_session_and_no_standalone_stream() {
    let mut h = H::new();
    assert_eq!(h.log, ["POST initialize #0"]);
    let init = h.find("POST initialize");
    let r = h.request(init);
    assert_eq!(
        r.header("accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("mcp-session-id"), None);
    assert_eq!(r.header("mcp-protocol-version"), None);
    let body = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}})
    .to_string();
    h.answer(
        init,
        200,
        &[
            ("content-type", "application/json; charset=utf-8"),
            ("mcp-session-id", "abc"),
        ],
        &[body.as_bytes()],
    );
    assert_eq!(h.c.session(), Some("abc"));
    let n = h.find("POST notifications/initialized");
    assert_eq!(h.request(n).header("mcp-session-id"), Some("abc"));
    assert_eq!(
        h.request(n).header("mcp-protocol-version"),
        Some("2025-06-18")
    );
    h.accepted(n);
    let get = h.find("GET");
    assert_eq!(h.request(get).header("accept"), Some("text/event-stream"));
    assert_eq!(h.request(get).header("mcp-session-id"), Some("abc"));
    // Any 4xx on the optional GET: no standalone stream, and the connection lives on.
    h.answer(
        get,
        400,
        &[("content-type", "text/plain")],
        &[b"Bad Request"],
    );
    assert!(h.events.iter().any(|e| matches!(e,
        Event::Diagnostic(Diagnostic::Http(m)) if m.contains("no standalone stream"))));
    assert_eq!(
        h.log,
        [
            "POST initialize #0",
            "POST notifications/initialized",
            "GET"
        ]
    );
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    h.json(post, serde_json::from_str(&result_line(call.0)).unwrap());
    assert!(matches!(h.outcome(call), Some(Ok(_))));
}

/// An SSE body for a tools/call: priming, a progress notification, the response.
fn sse_body(id: i64, eol: &str) -> Vec<u8> {
    let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": id, "progress": 1, "total": 2}})
    .to_string();
    format!(
        ": keep-alive{eol}id: ev-1{eol}data: {eol}{eol}event: message{eol}id: ev-2{eol}data: {progress}{eol}{eol}id: ev-3{eol}data: {}{eol}{eol}",
        result_line(id)
    )
    .into_bytes()
}

#[test]
fn an_sse_response_in_any_split_and_line_ending_gives_the_same_outcome() {
    for eol in ["\n", "\r\n", "\r"] {
        for split in [1usize, 2, 7, 64, 100_000] {
            let mut h = H::ready(405);
            let opts = CallOptions {
                progress: true,
                ..CallOptions::default()
            };
            let call = h.call("x", opts);
            let post = h.find("POST tools/call");
            let body = sse_body(call.0, eol);
            let pieces: Vec<&[u8]> = body.chunks(split).collect();
            h.answer(post, 200, &[("Content-Type", "text/event-stream")], &pieces);
            let progress = h
                .events
                .iter()
                .filter(|e| matches!(e, Event::Progress { .. }))
                .count();
            assert_eq!(progress, 1, "eol {eol:?} split {split}");
            assert!(
                matches!(h.outcome(call), Some(Ok(_))),
                "eol {eol:?} split {split}: {:?}",
                h.events
            );
            assert_eq!(h.log, ["POST tools/call #1"], "nothing resumed");
        }
    }
}

#[test]
fn a_notification_instead_of_the_response_fails_the_request_at_once() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    h.json(
        post,
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}),
    );
    let Some(Err(CallError::Local(LocalError::Http(e)))) = h.outcome(call) else {
        panic!("{:?}", h.events)
    };
    assert_eq!(e.status, Some(200));
    assert!(e.reason.contains("no response"));
    // The notification itself was delivered.
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, Event::Notification(ServerNotification::Log(_)))));
}

#[test]
fn wrong_content_types_and_statuses_fail_that_request_only() {
    type Case<'a> = (u16, &'a [(&'a str, &'a str)], &'a [u8], &'a str);
    let cases: &[Case<'_>] = &[
        (200, &[("Content-Type", "text/html")], b"<html>hi</html>", "text/html"),
        (400, &[("Content-Type", "application/json")], br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#, "No valid session"),
        (405, &[], b"", ""),
        (406, &[("Content-Type", "text/plain")], b"Not Acceptable", "Not Acceptable"),
        (500, &[("Content-Type", "text/plain")], b"boom", "boom"),
        (503, &[], b"", ""),
    ];
    for (status, headers, body, needle) in cases {
        let mut h = H::ready(405);
        let call = h.call("x", CallOptions::default());
        let post = h.find("POST tools/call");
        h.answer(post, *status, headers, &[body]);
        let Some(Err(CallError::Local(LocalError::Http(e)))) = h.outcome(call) else {
            panic!("{status}: {:?}", h.events)
        };
        assert_eq!(e.status, Some(*status));
        assert!(
            e.body_excerpt.contains(needle)
                || e.content_type.as_deref().unwrap_or("").contains(needle),
            "{status}: {e:?}"
        );
        // The connection lives on.
        let next = h.call("y", CallOptions::default());
        let post = h.find("POST tools/call");
        h.json(post, serde_json::from_str(&result_line(next.0)).unwrap());
        assert!(matches!(h.outcome(next), Some(Ok(_))), "{status}");
    }
}

#[test]
fn a_401_carries_the_parsed_challenge() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    h.answer(
        post,
        401,
        &[("WWW-Authenticate", r#"Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource", scope="read""#)],
        &[],
    );
    let Some(Err(CallError::Local(LocalError::Http(e)))) = h.outcome(call) else {
        panic!()
    };
    let c = e.challenge.as_ref().unwrap();
    assert_eq!(c.scheme, "Bearer");
    assert_eq!(c.param("scope"), Some("read"));
}

#[test]
fn priming_retry_close_and_resume_completes_the_request() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    h.answer(
        post,
        200,
        &[("Content-Type", "text/event-stream")],
        &[b"id: ev-1\r\ndata: \r\nretry: 300\r\n\r\n"],
    );
    assert!(
        h.outcome(call).is_none(),
        "the stream ended, the request goes on"
    );
    assert_eq!(h.c.poll_timeout(), Some(h.now + Duration::from_millis(300)));
    h.advance_to_next_deadline();
    assert_eq!(h.log, ["POST tools/call #1", "GET last-event-id=ev-1"]);
    let get = h.find("GET");
    assert_eq!(h.request(get).header("mcp-session-id"), Some("sess-1"));
    let line = result_line(call.0);
    let body = format!("id: ev-2\ndata: {line}\n\n");
    h.answer(
        get,
        200,
        &[("Content-Type", "text/event-stream")],
        &[body.as_bytes()],
    );
    assert!(matches!(h.outcome(call), Some(Ok(_))));
    // No resume is left armed: the only deadline is none, or a later one.
    assert!(h.c.poll_timeout().is_none_or(|t| t > h.now));
}

#[test]
fn a_stream_that_ends_without_an_event_id_loses_its_request() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    h.answer(
        post,
        200,
        &[("Content-Type", "text/event-stream")],
        &[b": nothing\n\n"],
    );
    // The server read the call: it may have run it. A tools/call is not repeated.
    assert!(maybe_executed(h.outcome(call)), "{:?}", h.outcome(call));
    assert_eq!(h.log.iter().filter(|l| l.contains("tools/call")).count(), 1);
}

/// Whether a call ended as "may have been executed".
fn maybe_executed(outcome: Option<&Result<RawJson, CallError>>) -> bool {
    matches!(
        outcome,
        Some(Err(CallError::Local(LocalError::MaybeExecuted { .. })))
    )
}

#[test]
fn a_lost_read_is_reissued_once_with_a_new_id() {
    let mut h = H::ready(405);
    let now = h.now;
    let call =
        h.c.call(now, &McpCall::list_tools(), CallOptions::default())
            .unwrap();
    h.pump();
    // The POST goes, and its connection dies before any response byte.
    let post = h.find("POST tools/list");
    h.c.handle_http(h.now, post, HttpInput::Failure("connection reset".into()))
        .unwrap();
    h.open.remove(&post);
    h.pump();
    assert_eq!(h.outcome(call), None, "the caller sees nothing of it");
    let again = h.find("POST tools/list");
    assert_eq!(describe(h.request(again)), "POST tools/list #2");
    // A second loss ends it, saying it was sent again.
    h.c.handle_http(h.now, again, HttpInput::Failure("connection reset".into()))
        .unwrap();
    h.open.remove(&again);
    h.pump();
    assert!(maybe_executed(h.outcome(call)), "{:?}", h.outcome(call));
    let said = format!("{:?}", h.outcome(call));
    assert!(said.contains("already sent a second time"), "{said}");
    assert_eq!(
        h.log
            .iter()
            .filter(|l| l.starts_with("POST tools/list"))
            .count(),
        2
    );
    // Re-issued once more, a read that succeeds: the result is the call's.
    let call =
        h.c.call(h.now, &McpCall::list_tools(), CallOptions::default())
            .unwrap();
    h.pump();
    let post = h.find("POST tools/list");
    h.c.handle_http(h.now, post, HttpInput::Failure("connection reset".into()))
        .unwrap();
    h.open.remove(&post);
    h.pump();
    let again = h.find("POST tools/list");
    let id = match describe(h.request(again)).rsplit('#').next() {
        Some(id) => id.parse::<i64>().unwrap(),
        None => panic!(),
    };
    h.json(
        again,
        json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{"name": "t", "inputSchema": {}}]}}),
    );
    assert!(matches!(h.outcome(call), Some(Ok(_))), "{:?}", h.events);
}

#[test]
fn repeated_empty_resumes_spend_the_budget() {
    let options = HttpOptions {
        resume_budget: 3,
        ..HttpOptions::default()
    };
    let mut h = H::with(endpoint(), options);
    h.handshake(None);
    let get = h.find("GET");
    h.answer(get, 405, &[], &[]);
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    h.answer(
        post,
        200,
        &[("Content-Type", "text/event-stream")],
        &[b"id: a\ndata: \n\n"],
    );
    for _ in 0..3 {
        h.advance_to_next_deadline();
        let get = h.find("GET");
        h.answer(
            get,
            200,
            &[("Content-Type", "text/event-stream")],
            &[b"id: a\ndata: \n\n"],
        );
    }
    assert!(maybe_executed(h.outcome(call)), "{:?}", h.outcome(call));
    let gets = h
        .log
        .iter()
        .filter(|l| l.starts_with("GET last-event-id"))
        .count();
    assert_eq!(gets, 3);
    // The waits doubled without a retry field: 1 s, 2 s, 4 s.
}

#[test]
fn a_mid_body_drop_resumes_from_the_last_event_id() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Head {
            status: 200,
            headers: &[("content-type".into(), "text/event-stream".into())],
        },
    )
    .unwrap();
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Body(b"id: ev-9\ndata: \n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notif"),
    )
    .unwrap();
    h.c.handle_http(h.now, post, HttpInput::Failure("connection reset".into()))
        .unwrap();
    h.open.remove(&post);
    h.pump();
    assert!(h.outcome(call).is_none());
    h.advance_to_next_deadline();
    assert_eq!(h.log.last().unwrap(), "GET last-event-id=ev-9");
}

#[test]
fn an_endless_event_is_capped_and_the_stream_goes_on() {
    let options = HttpOptions {
        max_event: 1024,
        ..HttpOptions::default()
    };
    let mut h = H::with(endpoint(), options);
    h.handshake(None);
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Head {
            status: 200,
            headers: &[("content-type".into(), "text/event-stream".into())],
        },
    )
    .unwrap();
    h.c.handle_http(h.now, post, HttpInput::Body(b"id: 1\ndata: "))
        .unwrap();
    for _ in 0..1000 {
        h.c.handle_http(h.now, post, HttpInput::Body(&[b'x'; 1000]))
            .unwrap();
    }
    let line = result_line(call.0);
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Body(format!("\n\nid: 2\ndata: {line}\n\n").as_bytes()),
    )
    .unwrap();
    h.c.handle_http(h.now, post, HttpInput::End).unwrap();
    h.pump();
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, Event::Diagnostic(Diagnostic::Sse(_)))));
    assert!(matches!(h.outcome(call), Some(Ok(_))));
}

#[test]
fn session_expiry_makes_a_new_session_and_sends_the_request_once_more() {
    let mut h = H::ready(405);
    // A call whose answer is due on an open stream of the old session.
    let streaming = h.call("slow", CallOptions::default());
    let stream = h.find("POST tools/call");
    h.c.handle_http(
        h.now,
        stream,
        HttpInput::Head {
            status: 200,
            headers: &[("content-type".into(), "text/event-stream".into())],
        },
    )
    .unwrap();
    h.pump();
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call #2");
    h.answer(
        post,
        404,
        &[("Content-Type", "application/json")],
        &[EXPIRED],
    );
    // The stream of the old session lives on: its call lost nothing.
    assert_eq!(h.outcome(streaming), None, "{:?}", h.events);
    assert!(!h.aborted.contains(&stream));
    let init = h.find("POST initialize");
    assert_eq!(h.request(init).header("mcp-session-id"), None);
    h.renewed(init, "sess-2");
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, Event::SessionRenewed(_))));
    let again = h.find("POST tools/call #2");
    assert_eq!(h.request(again).header("mcp-session-id"), Some("sess-2"));
    h.json(again, serde_json::from_str(&result_line(call.0)).unwrap());
    assert!(matches!(h.outcome(call), Some(Ok(_))));
    // The old stream's answer still routes by id.
    let line = result_line(streaming.0);
    h.c.handle_http(
        h.now,
        stream,
        HttpInput::Body(format!("data: {line}\n\n").as_bytes()),
    )
    .unwrap();
    h.c.handle_http(h.now, stream, HttpInput::End).unwrap();
    h.pump();
    assert!(
        matches!(h.outcome(streaming), Some(Ok(_))),
        "{:?}",
        h.events
    );
    assert_eq!(
        h.log,
        [
            "POST tools/call #1",
            "POST tools/call #2",
            "POST initialize #3",
            "POST notifications/initialized",
            "GET",
            "POST tools/call #2"
        ]
    );
}

#[test]
fn cancel_posts_a_notification_and_close_deletes_the_session() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let now = h.now;
    h.c.cancel(now, call, Some("stop".into())).unwrap();
    h.pump();
    assert_eq!(h.log.last().unwrap(), "POST notifications/cancelled");
    h.c.close(h.now);
    h.pump();
    // The cancellation queued before the close still goes: it is not aborted, and the session
    // is deleted once it has gone.
    assert_eq!(h.log.last().unwrap(), "POST notifications/cancelled");
    let cancelled = h.find("POST notifications/cancelled");
    assert!(!h.aborted.contains(&cancelled));
    h.accepted(cancelled);
    assert_eq!(h.log.last().unwrap(), "DELETE");
    let del = h.find("DELETE");
    assert_eq!(h.request(del).header("mcp-session-id"), Some("sess-1"));
    h.answer(del, 405, &[], &[]);
    assert!(h.c.is_finished());
}

// ----- the demo server over an in-memory HTTP pairing (feature `demo`) -----

/// A minimal Streamable HTTP server around the demo server: every request POST is answered
/// with an SSE stream that carries the server's messages related to it (its requests and
/// notifications) and ends with its response; no standalone GET stream (405).
#[cfg(feature = "demo")]
struct DemoHttp {
    server: DemoServer,
    /// Our request id (as the client sent it) → its open stream.
    streams: HashMap<i64, ExchangeId>,
    /// The stream that carries server requests made while a call is open.
    last_stream: Option<ExchangeId>,
}

#[cfg(feature = "demo")]
impl DemoHttp {
    fn serve(&mut self, h: &mut H) {
        for _ in 0..1000 {
            let pending: Vec<(ExchangeId, HttpRequest)> =
                h.open.iter().map(|(id, r)| (*id, r.clone())).collect();
            let mut moved = false;
            for (id, r) in pending {
                if self.streams.values().any(|s| *s == id) {
                    continue;
                }
                moved = true;
                match r.method {
                    HttpMethod::Get | HttpMethod::Delete => h.answer(id, 405, &[], &[]),
                    HttpMethod::Post => {
                        let Ok(Parsed::Single(m)) = mcpwire_core::jsonrpc::parse(&r.body) else {
                            panic!("bad body")
                        };
                        let request = match &m {
                            Message::Request(q) => q.id.as_i64(),
                            _ => None,
                        };
                        self.server.handle_message(h.now, m);
                        match request {
                            Some(rid) => {
                                h.c.handle_http(
                                    h.now,
                                    id,
                                    HttpInput::Head {
                                        status: 200,
                                        headers: &[(
                                            "content-type".into(),
                                            "text/event-stream".into(),
                                        )],
                                    },
                                )
                                .unwrap();
                                self.streams.insert(rid, id);
                                self.last_stream = Some(id);
                            }
                            None => {
                                h.answer(id, 202, &[], &[]);
                            }
                        }
                    }
                }
            }
            // Route the server's messages: a response to its request's stream (which then
            // ends), the rest on the latest open stream.
            while let Some(m) = self.server.poll_transmit() {
                moved = true;
                let target = match &m {
                    Message::Response(r) => {
                        r.id.as_ref()
                            .and_then(Id::as_i64)
                            .and_then(|i| self.streams.remove(&i))
                    }
                    _ => self
                        .last_stream
                        .filter(|s| self.streams.values().any(|v| v == s)),
                };
                let Some(ex) = target else { continue };
                let event = format!("data: {}\n\n", String::from_utf8(m.to_bytes()).unwrap());
                h.c.handle_http(h.now, ex, HttpInput::Body(event.as_bytes()))
                    .unwrap();
                if matches!(m, Message::Response(_)) {
                    h.c.handle_http(h.now, ex, HttpInput::End).unwrap();
                    h.open.remove(&ex);
                }
            }
            h.pump();
            if !moved {
                return;
            }
        }
        panic!("never idle");
    }
}

#[cfg(feature = "demo")]
#[test]
fn the_demo_server_over_http_with_an_elicitation_on_the_post_stream_and_no_get_stream() {
    let mut h = H::new();
    let mut demo = DemoHttp {
        server: DemoServer::new(DemoConfig::default()),
        streams: HashMap::new(),
        last_stream: None,
    };
    demo.serve(&mut h);
    assert!(h.c.is_ready(), "{:?}", h.events);
    let call = h.call("ask", CallOptions::default());
    demo.serve(&mut h);
    // The elicitation came on the tools/call stream, which is still open: the client answers
    // it with a new POST without waiting for that stream.
    let (id, _) = h
        .events
        .iter()
        .find_map(|e| match e {
            Event::ServerRequest(ServerRequest::Elicitation { id, params, .. }) => {
                Some((id.clone(), params.clone()))
            }
            _ => None,
        })
        .expect("the elicitation was dispatched at once");
    assert!(h.outcome(call).is_none());
    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let now = h.now;
    h.c.respond(now, &id, Ok(RawJson::new(&answer).unwrap()))
        .unwrap();
    h.pump();
    demo.serve(&mut h);
    let Some(Ok(result)) = h.outcome(call) else {
        panic!("{:?}", h.events)
    };
    let v: Value = result.parse().unwrap();
    assert_eq!(v["content"][0]["text"], "hello, Ada");
    // The demo runs tool calls as tasks in this era: the connection listed the tools first
    // (#2), then sent the call (#3; the call itself is #1).
    let tail: Vec<_> = h.log.iter().rev().take(2).rev().cloned().collect();
    assert_eq!(tail, ["POST tools/call #3", "POST response #0"]);
    assert!(
        h.log.iter().any(|l| l == "POST tools/list #2"),
        "{:?}",
        h.log
    );
}

#[test]
fn a_delete_that_never_finishes_is_given_up_after_the_grace() {
    let mut h = H::ready(405);
    h.c.close(h.now);
    h.pump();
    let del = h.find("DELETE");
    assert!(!h.c.is_finished());
    assert_eq!(h.c.poll_timeout(), Some(h.now + mcpwire_core::CLOSE_GRACE));
    h.advance_to_next_deadline();
    assert!(h.aborted.contains(&del));
    assert!(h.c.is_finished(), "close never hangs on the server");
    assert_eq!(h.c.poll_timeout(), None);
}

#[test]
fn configured_headers_go_on_every_request_but_never_replace_the_transports_own() {
    let mut http = endpoint();
    http.headers = [
        ("Authorization", "Bearer t"),
        ("mcp-session-id", "stale"),
        ("Accept", "text/html"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let mut h = H::with(http, HttpOptions::default());
    let init = h.find("POST initialize");
    let r = h.request(init);
    assert_eq!(r.header("authorization"), Some("Bearer t"));
    // The host's session id goes until the server assigns one of its own.
    assert_eq!(r.header("mcp-session-id"), Some("stale"));
    let accepts: Vec<_> = r
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("accept"))
        .collect();
    assert_eq!(accepts.len(), 1);
    let body = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}})
    .to_string();
    h.answer(
        init,
        200,
        &[
            ("Content-Type", "application/json"),
            ("Mcp-Session-Id", "real"),
        ],
        &[body.as_bytes()],
    );
    let n = h.find("POST notifications/initialized");
    let sessions: Vec<_> = h
        .request(n)
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(sessions, ["real"]);
    assert_eq!(h.request(n).header("authorization"), Some("Bearer t"));
}

#[test]
fn the_tap_sees_each_message_as_the_server_sent_it() {
    let mut h = H::new();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let tap = seen.clone();
    h.c.set_observer(Box::new(
        move |d: mcpwire_core::tap::Direction, b: &[u8]| {
            if d == mcpwire_core::tap::Direction::Incoming {
                tap.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(b).into_owned());
            }
        },
    ));
    // A JSON body with spaces and a key order of its own.
    let init = h.find("POST initialize");
    let body = r#"{ "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"}}, "id": 0, "jsonrpc": "2.0" }"#;
    h.answer(
        init,
        200,
        &[("Content-Type", "application/json")],
        &[body.as_bytes()],
    );
    let n = h.find("POST notifications/initialized");
    h.accepted(n);
    let get = h.find("GET");
    h.answer(get, 405, &[], &[]);
    // An SSE event, its data split across chunks.
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    let data = r#"{ "jsonrpc": "2.0", "id": 1, "result": {"content": []} }"#;
    let event = format!("id: e1\ndata: {data}\n\n");
    let (a, b) = event.as_bytes().split_at(20);
    h.answer(post, 200, &[("Content-Type", "text/event-stream")], &[a, b]);
    assert!(matches!(h.outcome(call), Some(Ok(_))), "{:?}", h.events);
    assert_eq!(*seen.lock().unwrap(), [body, data]);
}

#[test]
fn poll_timeout_moves_past_now_through_resumes_a_timeout_and_a_close() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    // The answer's stream gives an event id, then drops: resumes follow, each failing.
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Head {
            status: 200,
            headers: &[("content-type".into(), "text/event-stream".into())],
        },
    )
    .unwrap();
    h.c.handle_http(h.now, post, HttpInput::Body(b"id: 7\ndata: \n\n"))
        .unwrap();
    h.c.handle_http(h.now, post, HttpInput::Failure("connection reset".into()))
        .unwrap();
    h.open.remove(&post);
    h.pump();
    let mut steps = 0;
    let mut closed = false;
    while let Some(t) = h.c.poll_timeout() {
        assert!(t >= h.now, "a deadline in the past stayed armed");
        h.now = t;
        h.c.handle_timeout(t);
        h.pump();
        assert!(
            h.c.poll_timeout().is_none_or(|next| next > t),
            "a deadline <= now stayed armed"
        );
        // Every resume fails at once; the DELETE of the close never answers.
        let gets: Vec<ExchangeId> = h
            .open
            .iter()
            .filter(|(_, r)| r.method == HttpMethod::Get)
            .map(|(id, _)| *id)
            .collect();
        for get in gets {
            h.c.handle_http(h.now, get, HttpInput::Failure("connection refused".into()))
                .unwrap();
            h.open.remove(&get);
            h.pump();
        }
        if h.outcome(call).is_some() && !closed {
            closed = true;
            h.c.close(h.now);
            h.pump();
        }
        steps += 1;
        assert!(steps < 100, "time never settles");
    }
    // The resumes back off (1, 2, 4, 8, 16 s): the call's 30 s run out first.
    assert!(
        matches!(
            h.outcome(call),
            Some(Err(CallError::Local(LocalError::Timeout { .. })))
        ),
        "{:?}",
        h.outcome(call)
    );
    assert!(h.log.iter().filter(|l| l.starts_with("GET")).count() >= 4);
    assert!(closed && h.c.is_finished(), "{:?}", h.log);
}

#[test]
fn trusted_annotations_make_a_read_only_tool_repeatable_and_nothing_else() {
    for trust in [false, true] {
        let config = ClientConfig {
            capabilities: caps(),
            trust_tool_annotations: trust,
            era: Era::Handshake,
            ..ClientConfig::default()
        };
        let mut h = H::connect(config, endpoint(), HttpOptions::default());
        h.handshake(None);
        let get = h.find("GET");
        h.answer(get, 405, &[], &[]);
        let list =
            h.c.call(h.now, &McpCall::list_tools(), CallOptions::default())
                .unwrap();
        h.pump();
        let post = h.find("POST tools/list");
        h.json(
            post,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
                {"name": "get", "inputSchema": {}, "annotations": {"readOnlyHint": true}},
                {"name": "charge", "inputSchema": {}}
            ]}}),
        );
        assert!(matches!(h.outcome(list), Some(Ok(_))));
        for (tool, repeatable) in [("get", trust), ("charge", false)] {
            let call = h.call(tool, CallOptions::default());
            let post = h.find("POST tools/call");
            h.c.handle_http(h.now, post, HttpInput::Failure("connection reset".into()))
                .unwrap();
            h.open.remove(&post);
            h.pump();
            if repeatable {
                assert_eq!(h.outcome(call), None, "{tool}: re-issued");
                let again = h.find("POST tools/call");
                h.c.handle_http(h.now, again, HttpInput::Failure("connection reset".into()))
                    .unwrap();
                h.open.remove(&again);
                h.pump();
            }
            assert!(
                maybe_executed(h.outcome(call)),
                "{tool}: {:?}",
                h.outcome(call)
            );
        }
        let calls = h
            .log
            .iter()
            .filter(|l| l.starts_with("POST tools/call"))
            .count();
        assert_eq!(calls, if trust { 3 } else { 2 }, "{:?}", h.log);
    }
}
