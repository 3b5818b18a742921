//! A scripted fault-injection HTTP/1.1 server on raw TCP, to drive the Streamable HTTP client
//! through real sockets into the failures its machine is specified against.
//!
//! The server listens on `127.0.0.1` on a free port and serves each connection on its own
//! thread, request after request (keep-alive). A script is a list of [`Rule`]s: each request is
//! matched against them in order (by HTTP method, and for a POST by the JSON-RPC message in its
//! body) and the first rule that matches and is not used up answers it with its [`Step`]s: an
//! exact head, a body in chosen pieces with chosen pauses (chunked, or with a length that may
//! lie), silence, a close in the middle of the head or the body, an endless SSE event, or a wait
//! for another request. For hostile servers there are also heads written byte for byte with the
//! body framing they claim ([`Step::RawHead`]), bytes dribbled out one at a time
//! ([`Step::Dribble`]) and a unit of bytes repeated without end ([`Step::Flood`]). Bodies may
//! name the request's JSON-RPC id as `{{id}}` (and a later one as `{{id+1}}`), any value of the
//! request's body by JSON pointer (`{{/params/_meta/progressToken}}`), and the id of the latest
//! request of a given method as `{{id:METHOD}}`, so answers echo what the client chose.
//!
//! Every request is recorded ([`Recorded`]: method, target, headers, body, time, and the head's
//! bytes as they came) for assertions.
//! What the server noticed on its side (an unmatched request, a wait that timed out, a write
//! the client refused) is kept as [`notes`](FaultServer::notes).
//!
//! Dropping the server stops it: the listener and every connection are shut down and the
//! threads joined within about two seconds; a thread that does not end by then is left detached
//! (nothing in it blocks the test process from exiting).
//!
//! ```no_run
//! use mcpwire_tests::fault_http::{FaultServer, Rule};
//! let server = FaultServer::start(vec![
//!     Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", "s-1")],
//!         r#"{"jsonrpc":"2.0","id":{{id}},"result":{"protocolVersion":"2025-11-25",
//!             "capabilities":{"tools":{}},"serverInfo":{"name":"fault","version":"1"}}}"#),
//!     Rule::notifications().status(202),
//!     Rule::get().status(405),
//!     Rule::post("tools/call").once().silent(),
//! ]);
//! println!("{}", server.url());
//! ```

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::accept::{join_until, Acceptor};

/// How often blocked reads, writes and waits look at the stop flag.
const TICK: Duration = Duration::from_millis(25);
/// How long a drop waits for the connection threads.
const STOP_WAIT: Duration = Duration::from_secs(2);
/// The largest request head accepted (room for a client that echoes a huge header).
const MAX_HEAD: usize = 1024 * 1024;
/// The largest request body accepted.
const MAX_BODY: usize = 64 * 1024 * 1024;
/// How long one write may stay blocked by a client that does not read.
const WRITE_PATIENCE: Duration = Duration::from_secs(10);

/// Which requests a rule (or a [`Step::WaitFor`]) is about.
#[derive(Debug, Clone, Default)]
pub struct Matcher {
    method: Option<String>,
    rpc: Rpc,
    tool: Option<String>,
    headers: Vec<(String, Option<String>)>,
    fields: Vec<(String, Value)>,
}

#[derive(Debug, Clone, Default)]
enum Rpc {
    #[default]
    Any,
    /// A request or notification with this method.
    Method(String),
    /// A notification (a method, no id).
    Notification,
    /// A response (no method), with this id when given.
    Response(Option<Value>),
}

impl Matcher {
    /// Any request.
    pub fn any() -> Self {
        Self::default()
    }

    /// A POST carrying a request or notification with the JSON-RPC `method`.
    pub fn post(method: &str) -> Self {
        Matcher {
            method: Some("POST".into()),
            rpc: Rpc::Method(method.into()),
            ..Self::default()
        }
    }

    /// A POST carrying any notification.
    pub fn notifications() -> Self {
        Matcher {
            method: Some("POST".into()),
            rpc: Rpc::Notification,
            ..Self::default()
        }
    }

    /// A POST carrying any JSON-RPC response (the client's answer to a server request).
    pub fn responses() -> Self {
        Matcher {
            method: Some("POST".into()),
            rpc: Rpc::Response(None),
            ..Self::default()
        }
    }

    /// A POST carrying the JSON-RPC response with this `id`.
    pub fn response_to(id: Value) -> Self {
        Matcher {
            method: Some("POST".into()),
            rpc: Rpc::Response(Some(id)),
            ..Self::default()
        }
    }

    /// A GET.
    pub fn get() -> Self {
        Matcher {
            method: Some("GET".into()),
            ..Self::default()
        }
    }

    /// A DELETE.
    pub fn delete() -> Self {
        Matcher {
            method: Some("DELETE".into()),
            ..Self::default()
        }
    }

    /// Only a `tools/call` of the tool `name`.
    pub fn tool(mut self, name: &str) -> Self {
        self.tool = Some(name.into());
        self
    }

    /// Only requests whose header `name` is `value` (names are case-insensitive).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), Some(value.into())));
        self
    }

    /// Only requests without the header `name`.
    pub fn without_header(mut self, name: &str) -> Self {
        self.headers.push((name.into(), None));
        self
    }

    /// Only requests whose JSON body holds `value` at the JSON `pointer`
    /// (`/params/requestId`).
    pub fn field(mut self, pointer: &str, value: Value) -> Self {
        self.fields.push((pointer.into(), value));
        self
    }

    /// Whether `r` is one of the requests meant.
    pub fn matches(&self, r: &Recorded) -> bool {
        if let Some(m) = &self.method {
            if !m.eq_ignore_ascii_case(&r.method) {
                return false;
            }
        }
        for (name, want) in &self.headers {
            if r.header(name) != want.as_deref() {
                return false;
            }
        }
        let json = r.json();
        let method = json.as_ref().and_then(|v| v.get("method")?.as_str());
        let ok = match &self.rpc {
            Rpc::Any => true,
            Rpc::Method(m) => method == Some(m.as_str()),
            Rpc::Notification => {
                method.is_some() && json.as_ref().is_some_and(|v| v.get("id").is_none())
            }
            Rpc::Response(id) => {
                let v = json.as_ref();
                method.is_none()
                    && v.is_some_and(|v| v.get("result").is_some() || v.get("error").is_some())
                    && id
                        .as_ref()
                        .is_none_or(|id| v.and_then(|v| v.get("id")) == Some(id))
            }
        };
        let fields = self
            .fields
            .iter()
            .all(|(p, want)| json.as_ref().and_then(|v| v.pointer(p)) == Some(want));
        ok && fields
            && self.tool.as_deref().is_none_or(|t| {
                json.as_ref()
                    .and_then(|v| v.pointer("/params/name")?.as_str())
                    == Some(t)
            })
    }
}

/// How a response's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Length`: the total of the response's [`Step::Body`] pieces (and [`Step::Dribble`]
    /// bytes).
    Length,
    /// `Content-Length: n`, whatever follows (a length that lies, for a body cut short).
    FixedLength(usize),
    /// `Transfer-Encoding: chunked`: each body piece is one chunk; the last chunk is written when
    /// the steps run out (not when the connection is closed by a [`Step::Close`]).
    Chunked,
    /// No length: `Connection: close`, and the body ends when the connection does.
    CloseDelimited,
}

/// One thing the server does while answering a request.
#[derive(Debug, Clone)]
pub enum Step {
    /// Writes `HTTP/1.1 <status> <reason>`, the headers in order, the framing's header, and the
    /// blank line.
    Head {
        /// The status.
        status: u16,
        /// The headers, written as given.
        headers: Vec<(String, String)>,
        /// How the body is delimited.
        framing: Framing,
    },
    /// A head written exactly as given (status line, headers and the blank line: none is
    /// added), with the placeholders replaced and `{{length}}` standing for the total of the
    /// [`Step::Body`] and [`Step::Dribble`] bytes up to the next head. The body that follows is
    /// written as `framing` says, whatever the head claims: chunks (and the last chunk when the
    /// steps run out) when [`Framing::Chunked`], bytes as they are otherwise; the connection
    /// serves another request afterwards unless it is [`Framing::CloseDelimited`]. For heads
    /// no client should accept.
    RawHead {
        /// The head's bytes.
        bytes: Vec<u8>,
        /// How the steps that follow write the body.
        framing: Framing,
    },
    /// One piece of the body (one chunk when chunked), with the placeholders replaced. Empty pieces are skipped (an empty chunk would end the body).
    Body(Vec<u8>),
    /// One chunk of a chunked body written by hand, outside the head's framing: its size in
    /// hexadecimal, then `ext` exactly (chunk extensions, `;name=value`), CRLF, the data with
    /// the placeholders replaced, then `end` (CRLF in a valid chunk).
    Chunk {
        /// What follows the size on the chunk-size line.
        ext: Vec<u8>,
        /// The chunk's data.
        data: Vec<u8>,
        /// What follows the data.
        end: Vec<u8>,
    },
    /// These bytes (placeholders replaced) one at a time, `gap` apart, outside any framing: a
    /// head or a body that trickles in.
    Dribble {
        /// The bytes.
        bytes: Vec<u8>,
        /// The pause after each byte.
        gap: Duration,
    },
    /// Writes `unit` again and again, outside any framing, until `limit` has passed or
    /// `max_bytes` were written, the client stops reading, or the server stops (counted in
    /// [`FaultServer::endless_bytes`]): a flood of interim heads, header lines without end.
    Flood {
        /// What is repeated.
        unit: Vec<u8>,
        /// How long to go on at most.
        limit: Duration,
        /// How many bytes to write at most.
        max_bytes: u64,
    },
    /// These bytes exactly, outside any framing (the placeholders are replaced).
    Raw(Vec<u8>),
    /// Waits (bounded by the server's stop).
    Pause(Duration),
    /// Closes the connection at once.
    Close,
    /// Writes nothing more and keeps the connection open until the client closes it or the
    /// server stops.
    Silent,
    /// Waits until a request that matches arrives after this one (or `timeout` passes, which is
    /// noted), then goes on.
    WaitFor {
        /// The request awaited.
        what: Matcher,
        /// How long to wait at most.
        timeout: Duration,
    },
    /// Writes body pieces of `piece` bytes of `x` (an SSE field value that never ends) until
    /// `limit` has passed or `max_bytes` were written, the client stops reading, or the server
    /// stops. Bounded in time so that tests end.
    Endless {
        /// The size of each piece.
        piece: usize,
        /// How long to go on at most.
        limit: Duration,
        /// How many bytes to write at most.
        max_bytes: u64,
    },
}

/// A scripted answer: which requests, how many times, and the steps.
#[derive(Debug, Clone)]
pub struct Rule {
    matcher: Matcher,
    times: Option<usize>,
    steps: Vec<Step>,
}

impl Rule {
    /// A rule for the requests `matcher` describes, with no steps yet.
    pub fn new(matcher: Matcher) -> Self {
        Rule {
            matcher,
            times: None,
            steps: Vec::new(),
        }
    }

    /// A POST carrying a request or notification with the JSON-RPC `method`.
    pub fn post(method: &str) -> Self {
        Self::new(Matcher::post(method))
    }

    /// A POST carrying any notification.
    pub fn notifications() -> Self {
        Self::new(Matcher::notifications())
    }

    /// A POST carrying any JSON-RPC response.
    pub fn responses() -> Self {
        Self::new(Matcher::responses())
    }

    /// A GET.
    pub fn get() -> Self {
        Self::new(Matcher::get())
    }

    /// A DELETE.
    pub fn delete() -> Self {
        Self::new(Matcher::delete())
    }

    /// Any request.
    pub fn any() -> Self {
        Self::new(Matcher::any())
    }

    /// Only a `tools/call` of the tool `name`.
    pub fn tool(mut self, name: &str) -> Self {
        self.matcher = self.matcher.tool(name);
        self
    }

    /// Only requests whose header `name` is `value`.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.matcher = self.matcher.header(name, value);
        self
    }

    /// Only requests without the header `name`.
    pub fn without_header(mut self, name: &str) -> Self {
        self.matcher = self.matcher.without_header(name);
        self
    }

    /// Answers one request only; later ones go to the rules after it.
    pub fn once(self) -> Self {
        self.times(1)
    }

    /// Answers `n` requests only.
    pub fn times(mut self, n: usize) -> Self {
        self.times = Some(n);
        self
    }

    /// Adds a step.
    pub fn step(mut self, step: Step) -> Self {
        self.steps.push(step);
        self
    }

    /// Writes the head, with `Content-Length` from the body pieces that follow.
    pub fn head(self, status: u16, headers: &[(&str, &str)]) -> Self {
        self.head_with(status, headers, Framing::Length)
    }

    /// Writes the head with `Transfer-Encoding: chunked`.
    pub fn head_chunked(self, status: u16, headers: &[(&str, &str)]) -> Self {
        self.head_with(status, headers, Framing::Chunked)
    }

    /// Writes the head with the given framing.
    pub fn head_with(self, status: u16, headers: &[(&str, &str)], framing: Framing) -> Self {
        self.step(Step::Head {
            status,
            headers: owned(headers),
            framing,
        })
    }

    /// Writes a head byte for byte, the body after it framed as `framing` says (see
    /// [`Step::RawHead`]).
    pub fn raw_head(self, bytes: impl AsRef<[u8]>, framing: Framing) -> Self {
        self.step(Step::RawHead {
            bytes: bytes.as_ref().to_vec(),
            framing,
        })
    }

    /// Writes one chunk by hand, with `ext` after its size (see [`Step::Chunk`]).
    pub fn chunk(self, ext: impl AsRef<[u8]>, data: impl AsRef<[u8]>) -> Self {
        self.chunk_ending(ext, data, b"\r\n")
    }

    /// Writes one chunk by hand, with `end` instead of the CRLF after its data.
    pub fn chunk_ending(
        self,
        ext: impl AsRef<[u8]>,
        data: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
    ) -> Self {
        self.step(Step::Chunk {
            ext: ext.as_ref().to_vec(),
            data: data.as_ref().to_vec(),
            end: end.as_ref().to_vec(),
        })
    }

    /// Writes bytes one at a time, `gap` apart (see [`Step::Dribble`]).
    pub fn dribble(self, bytes: impl AsRef<[u8]>, gap: Duration) -> Self {
        self.step(Step::Dribble {
            bytes: bytes.as_ref().to_vec(),
            gap,
        })
    }

    /// Writes `unit` again and again (see [`Step::Flood`]).
    pub fn flood(self, unit: impl AsRef<[u8]>, limit: Duration, max_bytes: u64) -> Self {
        self.step(Step::Flood {
            unit: unit.as_ref().to_vec(),
            limit,
            max_bytes,
        })
    }

    /// Writes one body piece.
    pub fn body(self, piece: impl AsRef<[u8]>) -> Self {
        self.step(Step::Body(piece.as_ref().to_vec()))
    }

    /// Writes bytes exactly, outside any framing.
    pub fn raw(self, bytes: impl AsRef<[u8]>) -> Self {
        self.step(Step::Raw(bytes.as_ref().to_vec()))
    }

    /// Waits.
    pub fn pause(self, d: Duration) -> Self {
        self.step(Step::Pause(d))
    }

    /// Closes the connection.
    pub fn close(self) -> Self {
        self.step(Step::Close)
    }

    /// Stays silent until the client goes away.
    pub fn silent(self) -> Self {
        self.step(Step::Silent)
    }

    /// Waits for a request that `what` matches.
    pub fn wait_for(self, what: Matcher, timeout: Duration) -> Self {
        self.step(Step::WaitFor { what, timeout })
    }

    /// Writes an endless SSE field value (see [`Step::Endless`]).
    pub fn endless(self, piece: usize, limit: Duration, max_bytes: u64) -> Self {
        self.step(Step::Endless {
            piece,
            limit,
            max_bytes,
        })
    }

    /// A status with an empty body.
    pub fn status(self, status: u16) -> Self {
        self.head(status, &[])
    }

    /// A status with headers and a body.
    pub fn status_with(self, status: u16, headers: &[(&str, &str)], body: &str) -> Self {
        self.head(status, headers).body(body)
    }

    /// A JSON body (`Content-Type: application/json`, with a length).
    pub fn json(self, status: u16, body: &str) -> Self {
        self.json_with(status, &[], body)
    }

    /// A JSON body with more headers.
    pub fn json_with(self, status: u16, headers: &[(&str, &str)], body: &str) -> Self {
        let mut h = vec![("Content-Type", "application/json")];
        h.extend_from_slice(headers);
        self.head(status, &h).body(body)
    }

    /// A `200 text/event-stream` chunked body: the pieces, each one chunk, `gap` apart.
    pub fn sse<S: AsRef<[u8]>>(self, pieces: &[S], gap: Duration) -> Self {
        self.sse_with(&[], pieces, gap)
    }

    /// [`sse`](Self::sse) with more headers.
    pub fn sse_with<S: AsRef<[u8]>>(
        self,
        headers: &[(&str, &str)],
        pieces: &[S],
        gap: Duration,
    ) -> Self {
        let mut h = vec![("Content-Type", "text/event-stream")];
        h.extend_from_slice(headers);
        let mut rule = self.head_chunked(200, &h);
        for (i, p) in pieces.iter().enumerate() {
            if i > 0 && !gap.is_zero() {
                rule = rule.pause(gap);
            }
            rule = rule.body(p);
        }
        rule
    }
}

fn owned(headers: &[(&str, &str)]) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Its position among all requests the server read (from 0).
    pub seq: usize,
    /// The connection it came on (from 0, in accept order).
    pub connection: usize,
    /// When its head and body had been read.
    pub at: Instant,
    /// The HTTP method.
    pub method: String,
    /// The request target (`/mcp`).
    pub target: String,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: Vec<u8>,
    /// The head's bytes as they came (request line and header lines, without the blank line):
    /// [`headers`](Self::headers) are read as UTF-8, lossily, so a byte that is not shows here
    /// only.
    pub head: Vec<u8>,
    /// The rule that answered it (its index in the script); `None` when none matched.
    pub rule: Option<usize>,
}

impl Recorded {
    /// The value of header `name` (case-insensitive); the first one if repeated.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The raw bytes of every value of header `name` (case-insensitive), without surrounding
    /// spaces, as the head carried them.
    pub fn raw_header_all(&self, name: &str) -> Vec<Vec<u8>> {
        self.head
            .split(|b| *b == b'\n')
            .skip(1)
            .filter_map(|line| {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                let colon = line.iter().position(|b| *b == b':')?;
                let (k, v) = (&line[..colon], &line[colon + 1..]);
                if !k.trim_ascii().eq_ignore_ascii_case(name.as_bytes()) {
                    return None;
                }
                Some(v.trim_ascii().to_vec())
            })
            .collect()
    }

    /// Every value of header `name`.
    pub fn header_all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The body as JSON, if it is.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The JSON-RPC method of the body.
    pub fn rpc_method(&self) -> Option<String> {
        Some(self.json()?.get("method")?.as_str()?.to_owned())
    }

    /// The JSON-RPC id of the body.
    pub fn rpc_id(&self) -> Option<Value> {
        self.json()?.get("id").cloned()
    }

    /// One line: `POST tools/call #1`, `POST notifications/initialized`, `POST response #0`,
    /// `GET`, `GET last-event-id=ev-1`, `DELETE`.
    pub fn describe(&self) -> String {
        match self.method.as_str() {
            "POST" => {
                let Some(v) = self.json() else {
                    return "POST ?".into();
                };
                let id = v.get("id").map(|i| format!(" #{i}")).unwrap_or_default();
                match v.get("method").and_then(Value::as_str) {
                    Some(m) => format!("POST {m}{id}"),
                    None => format!("POST response{id}"),
                }
            }
            "GET" => match self.header("last-event-id") {
                Some(id) => format!("GET last-event-id={id}"),
                None => "GET".into(),
            },
            other => other.to_owned(),
        }
    }
}

struct RuleState {
    rule: Rule,
    used: usize,
}

struct State {
    rules: Vec<RuleState>,
    requests: Vec<Recorded>,
    notes: Vec<String>,
    connections: usize,
    streams: Vec<TcpStream>,
    threads: Vec<JoinHandle<()>>,
}

struct Shared {
    stop: AtomicBool,
    endless_bytes: AtomicU64,
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking connection thread leaves the record consistent; keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    fn note(&self, text: String) {
        self.lock().notes.push(text);
        self.changed.notify_all();
    }
}

/// The scripted server; see the [module documentation](self).
pub struct FaultServer {
    acceptor: Acceptor,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FaultServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultServer")
            .field("addr", &self.addr())
            .finish_non_exhaustive()
    }
}

impl FaultServer {
    /// Starts serving `rules` on `127.0.0.1` at a free port.
    pub fn start(rules: Vec<Rule>) -> FaultServer {
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            endless_bytes: AtomicU64::new(0),
            state: Mutex::new(State {
                rules: rules
                    .into_iter()
                    .map(|rule| RuleState { rule, used: 0 })
                    .collect(),
                requests: Vec::new(),
                notes: Vec::new(),
                connections: 0,
                streams: Vec::new(),
                threads: Vec::new(),
            }),
            changed: Condvar::new(),
        });
        let (s, stop) = (shared.clone(), shared.clone());
        let acceptor = Acceptor::start(
            "fault-http-accept",
            move || stop.stopped(),
            move |stream, _| accepted(&s, stream),
        );
        FaultServer { acceptor, shared }
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.acceptor.addr()
    }

    /// The MCP endpoint: `http://127.0.0.1:<port>/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr())
    }

    /// Every request read so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.lock().requests.clone()
    }

    /// [`Recorded::describe`] of every request so far.
    pub fn log(&self) -> Vec<String> {
        self.shared
            .lock()
            .requests
            .iter()
            .map(Recorded::describe)
            .collect()
    }

    /// The requests that `what` matches.
    pub fn matching(&self, what: &Matcher) -> Vec<Recorded> {
        self.shared
            .lock()
            .requests
            .iter()
            .filter(|r| what.matches(r))
            .cloned()
            .collect()
    }

    /// Waits up to `timeout` until `n` requests that `what` matches have arrived; gives all of
    /// them, or `None` on timeout.
    pub fn wait_for_n(&self, what: &Matcher, n: usize, timeout: Duration) -> Option<Vec<Recorded>> {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.lock();
        loop {
            let found: Vec<Recorded> = st
                .requests
                .iter()
                .filter(|r| what.matches(r))
                .cloned()
                .collect();
            if found.len() >= n {
                return Some(found);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            st = self
                .shared
                .changed
                .wait_timeout(st, (deadline - now).min(TICK))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Waits up to `timeout` for a request that `what` matches; gives the first.
    pub fn wait_for(&self, what: &Matcher, timeout: Duration) -> Option<Recorded> {
        self.wait_for_n(what, 1, timeout)
            .and_then(|v| v.into_iter().next())
    }

    /// What the server noticed: unmatched requests, waits that timed out, writes that failed,
    /// clients that went away while it was silent.
    pub fn notes(&self) -> Vec<String> {
        self.shared.lock().notes.clone()
    }

    /// The notes about requests no rule matched (each was answered 500).
    pub fn unmatched(&self) -> Vec<String> {
        self.notes()
            .into_iter()
            .filter(|n| n.starts_with("no rule"))
            .collect()
    }

    /// How many connections were accepted.
    pub fn connections(&self) -> usize {
        self.shared.lock().connections
    }

    /// How many bytes [`Step::Endless`] steps have written.
    pub fn endless_bytes(&self) -> u64 {
        self.shared.endless_bytes.load(Ordering::SeqCst)
    }
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.changed.notify_all();
        self.acceptor.stop();
        let (streams, threads) = {
            let mut st = self.shared.lock();
            (
                std::mem::take(&mut st.streams),
                std::mem::take(&mut st.threads),
            )
        };
        for s in &streams {
            let _ = s.shutdown(Shutdown::Both);
        }
        // Whatever is left then is detached: its sockets are shut down, so it ends on its own.
        join_until(threads, Instant::now() + STOP_WAIT);
    }
}

/// Counts, keeps and serves an accepted connection on a thread of its own.
fn accepted(shared: &Arc<Shared>, stream: TcpStream) {
    let mut st = shared.lock();
    let index = st.connections;
    st.connections += 1;
    if let Ok(clone) = stream.try_clone() {
        st.streams.push(clone);
    }
    let s = shared.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("fault-http-conn-{index}"))
        .spawn(move || serve_connection(stream, index, s));
    if let Ok(t) = spawned {
        st.threads.push(t);
    }
}

/// A parsed request before it is recorded.
struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    head: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn serve_connection(mut stream: TcpStream, index: usize, shared: Arc<Shared>) {
    let _ = stream.set_read_timeout(Some(TICK));
    let _ = stream.set_write_timeout(Some(TICK));
    let mut buf = Vec::new();
    loop {
        let req = match read_request(&mut stream, &mut buf, &shared) {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                shared.note(format!("connection {index}: bad request: {e}"));
                break;
            }
        };
        let close_asked = req
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let (record, steps) = {
            let mut st = shared.lock();
            let mut record = Recorded {
                seq: st.requests.len(),
                connection: index,
                at: Instant::now(),
                method: req.method,
                target: req.target,
                headers: req.headers,
                body: req.body,
                head: req.head,
                rule: None,
            };
            let found = st.rules.iter_mut().enumerate().find(|(_, r)| {
                r.rule.times.is_none_or(|n| r.used < n) && r.rule.matcher.matches(&record)
            });
            let steps = match found {
                Some((i, r)) => {
                    r.used += 1;
                    record.rule = Some(i);
                    r.rule.steps.clone()
                }
                None => {
                    let what = record.describe();
                    st.notes
                        .push(format!("no rule for request {}: {what}", record.seq));
                    let text = format!("no rule for {what}");
                    vec![
                        Step::Head {
                            status: 500,
                            headers: owned(&[("Content-Type", "text/plain")]),
                            framing: Framing::Length,
                        },
                        Step::Body(text.into_bytes()),
                    ]
                }
            };
            st.requests.push(record.clone());
            (record, steps)
        };
        shared.changed.notify_all();
        match run_steps(&mut stream, &record, &steps, &shared) {
            Ok(true) if !close_asked => {}
            Ok(_) => break,
            Err(e) => {
                shared.note(format!(
                    "connection {index}: answering {} failed: {e}",
                    record.describe()
                ));
                break;
            }
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
}

/// Reads more bytes into `buf`; `Ok(false)` at the end of the stream or when the server stops.
fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>, shared: &Shared) -> io::Result<bool> {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if shared.stopped() {
            return Ok(false);
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(false),
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                return Ok(true);
            }
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Reads one request; `Ok(None)` when the client closed between requests or the server stops.
fn read_request(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    shared: &Shared,
) -> io::Result<Option<Request>> {
    let head_end = loop {
        if let Some(i) = find(buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(invalid("request head too large"));
        }
        if !fill(stream, buf, shared)? {
            if buf.is_empty() {
                return Ok(None);
            }
            return Err(invalid("the client closed in the middle of a request head"));
        }
    };
    let raw_head = buf[..head_end].to_vec();
    let head = String::from_utf8_lossy(&raw_head).into_owned();
    buf.drain(..head_end + 4);
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err(invalid(format!("bad request line {line:?}")));
    };
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((k.trim().to_owned(), v.trim().to_owned()))
        })
        .collect();
    let mut req = Request {
        method: method.to_owned(),
        target: target.to_owned(),
        headers,
        body: Vec::new(),
        head: raw_head,
    };
    if req
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        write_bounded(stream, b"HTTP/1.1 100 Continue\r\n\r\n", shared)?;
    }
    let chunked = req
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        req.body = read_chunked(stream, buf, shared)?;
    } else if let Some(len) = req.header("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| invalid(format!("bad content-length {len:?}")))?;
        if len > MAX_BODY {
            return Err(invalid("request body too large"));
        }
        while buf.len() < len {
            if !fill(stream, buf, shared)? {
                return Err(invalid("the client closed in the middle of a request body"));
            }
        }
        req.body = buf.drain(..len).collect();
    }
    Ok(Some(req))
}

fn read_chunked(stream: &mut TcpStream, buf: &mut Vec<u8>, shared: &Shared) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(i) = find(buf, b"\r\n") {
                break i;
            }
            if !fill(stream, buf, shared)? {
                return Err(invalid("closed in a chunk size line"));
            }
        };
        let line = String::from_utf8_lossy(&buf[..line_end]).into_owned();
        let size = usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| invalid(format!("bad chunk size {line:?}")))?;
        buf.drain(..line_end + 2);
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                if let Some(i) = find(buf, b"\r\n") {
                    let blank = i == 0;
                    buf.drain(..i + 2);
                    if blank {
                        return Ok(body);
                    }
                    continue;
                }
                if !fill(stream, buf, shared)? {
                    return Err(invalid("closed in the trailers"));
                }
            }
        }
        if body.len() + size > MAX_BODY {
            return Err(invalid("request body too large"));
        }
        while buf.len() < size + 2 {
            if !fill(stream, buf, shared)? {
                return Err(invalid("closed in a chunk"));
            }
        }
        body.extend_from_slice(&buf[..size]);
        buf.drain(..size + 2);
    }
}

/// Writes all of `bytes`, waiting for a slow reader up to [`WRITE_PATIENCE`] and never past the
/// server's stop.
fn write_bounded(stream: &mut TcpStream, mut bytes: &[u8], shared: &Shared) -> io::Result<()> {
    let give_up = Instant::now() + WRITE_PATIENCE;
    while !bytes.is_empty() {
        if shared.stopped() {
            return Err(io::Error::other("the server is stopping"));
        }
        match stream.write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {
                if Instant::now() >= give_up {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client stopped reading",
                    ));
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Sleeps for `d`, waking early when the server stops.
fn pause(d: Duration, shared: &Shared) {
    let end = Instant::now() + d;
    while !shared.stopped() {
        let now = Instant::now();
        if now >= end {
            return;
        }
        std::thread::sleep((end - now).min(TICK));
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Replaces `{{id}}` with the request's JSON-RPC id, `{{id+N}}` with that id plus `N` (a
/// numeric id), `{{/a/b}}` with the value at that JSON pointer in the request's body, and
/// `{{id:METHOD}}` with the id of the latest recorded request of that method (`null` when there
/// is none).
fn substitute(bytes: &[u8], request: &Recorded, shared: &Shared) -> Vec<u8> {
    if find(bytes, b"{{").is_none() {
        return bytes.to_vec();
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some(start) = find(rest, b"{{") {
        out.extend_from_slice(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = find(after, b"}}") else {
            out.extend_from_slice(&rest[start..]);
            return out;
        };
        let name = String::from_utf8_lossy(&after[..end]).into_owned();
        let value = if name == "id" {
            request.rpc_id()
        } else if let Some(n) = name.strip_prefix("id+").and_then(|n| n.parse::<i64>().ok()) {
            request
                .rpc_id()
                .and_then(|id| id.as_i64())
                .map(|id| Value::from(id + n))
        } else if name.starts_with('/') {
            request.json().and_then(|v| v.pointer(&name).cloned())
        } else if let Some(method) = name.strip_prefix("id:") {
            shared
                .lock()
                .requests
                .iter()
                .rev()
                .find(|r| r.rpc_method().as_deref() == Some(method) && r.rpc_id().is_some())
                .and_then(Recorded::rpc_id)
        } else {
            out.extend_from_slice(&rest[start..start + 2 + end + 2]);
            rest = &after[end + 2..];
            continue;
        };
        out.extend_from_slice(value.unwrap_or(Value::Null).to_string().as_bytes());
        rest = &after[end + 2..];
    }
    out.extend_from_slice(rest);
    out
}

/// Runs the steps; `Ok(true)` when the connection may serve another request.
fn run_steps(
    stream: &mut TcpStream,
    request: &Recorded,
    steps: &[Step],
    shared: &Shared,
) -> io::Result<bool> {
    let mut framing: Option<Framing> = None;
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Head {
                status,
                headers,
                framing: f,
            } => {
                let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(*status));
                for (k, v) in headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                match f {
                    Framing::Length => {
                        let total = body_length(&steps[i + 1..], request, shared);
                        head.push_str(&format!("Content-Length: {total}\r\n"));
                    }
                    Framing::FixedLength(n) => head.push_str(&format!("Content-Length: {n}\r\n")),
                    Framing::Chunked => head.push_str("Transfer-Encoding: chunked\r\n"),
                    Framing::CloseDelimited => head.push_str("Connection: close\r\n"),
                }
                head.push_str("\r\n");
                write_bounded(stream, head.as_bytes(), shared)?;
                framing = Some(*f);
            }
            Step::RawHead { bytes, framing: f } => {
                let total = body_length(&steps[i + 1..], request, shared).to_string();
                let bytes = replace_all(bytes, b"{{length}}", total.as_bytes());
                let bytes = substitute(&bytes, request, shared);
                write_bounded(stream, &bytes, shared)?;
                framing = Some(*f);
            }
            Step::Body(piece) => {
                let piece = substitute(piece, request, shared);
                write_piece(stream, &piece, framing, shared)?;
            }
            Step::Chunk { ext, data, end } => {
                let data = substitute(data, request, shared);
                let mut framed = format!("{:x}", data.len()).into_bytes();
                framed.extend_from_slice(ext);
                framed.extend_from_slice(b"\r\n");
                framed.extend_from_slice(&data);
                framed.extend_from_slice(end);
                write_bounded(stream, &framed, shared)?;
            }
            Step::Dribble { bytes, gap } => {
                for byte in substitute(bytes, request, shared) {
                    write_bounded(stream, &[byte], shared)?;
                    pause(*gap, shared);
                }
            }
            Step::Flood {
                unit,
                limit,
                max_bytes,
            } => {
                // Units batched into writes of about 64 KiB.
                let unit = if unit.is_empty() { &b"x"[..] } else { unit };
                let batch = unit.repeat((64 * 1024 / unit.len()).max(1));
                let end = Instant::now() + *limit;
                let mut sent = 0u64;
                while Instant::now() < end && sent < *max_bytes && !shared.stopped() {
                    write_bounded(stream, &batch, shared)?;
                    sent += batch.len() as u64;
                    shared
                        .endless_bytes
                        .fetch_add(batch.len() as u64, Ordering::SeqCst);
                }
            }
            Step::Raw(bytes) => {
                let bytes = substitute(bytes, request, shared);
                write_bounded(stream, &bytes, shared)?;
            }
            Step::Pause(d) => pause(*d, shared),
            Step::Close => {
                let _ = stream.shutdown(Shutdown::Both);
                return Ok(false);
            }
            Step::Silent => {
                stay_silent(stream, request, shared);
                return Ok(false);
            }
            Step::WaitFor { what, timeout } => {
                let deadline = Instant::now() + *timeout;
                let mut st = shared.lock();
                loop {
                    if st
                        .requests
                        .iter()
                        .any(|r| r.seq > request.seq && what.matches(r))
                    {
                        break;
                    }
                    let now = Instant::now();
                    if now >= deadline || shared.stopped() {
                        st.notes.push(format!(
                            "request {} ({}): the awaited request never came",
                            request.seq,
                            request.describe()
                        ));
                        break;
                    }
                    st = shared
                        .changed
                        .wait_timeout(st, (deadline - now).min(TICK))
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
            Step::Endless {
                piece,
                limit,
                max_bytes,
            } => {
                let filler = vec![b'x'; (*piece).max(1)];
                let end = Instant::now() + *limit;
                let mut sent = 0u64;
                while Instant::now() < end && sent < *max_bytes && !shared.stopped() {
                    write_piece(stream, &filler, framing, shared)?;
                    sent += filler.len() as u64;
                    shared
                        .endless_bytes
                        .fetch_add(filler.len() as u64, Ordering::SeqCst);
                }
            }
        }
    }
    match framing {
        Some(Framing::Chunked) => {
            write_bounded(stream, b"0\r\n\r\n", shared)?;
            Ok(true)
        }
        Some(Framing::CloseDelimited) | None => Ok(false),
        Some(Framing::Length) | Some(Framing::FixedLength(_)) => Ok(true),
    }
}

/// The bytes of the body pieces (and dribbled bytes) in `steps` up to the next head, with the
/// placeholders replaced.
fn body_length(steps: &[Step], request: &Recorded, shared: &Shared) -> usize {
    steps
        .iter()
        .take_while(|s| !matches!(s, Step::Head { .. } | Step::RawHead { .. }))
        .map(|s| match s {
            Step::Body(b) | Step::Dribble { bytes: b, .. } => substitute(b, request, shared).len(),
            _ => 0,
        })
        .sum()
}

/// `bytes` with every `from` replaced by `to`.
fn replace_all(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some(at) = find(rest, from) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(to);
        rest = &rest[at + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

fn write_piece(
    stream: &mut TcpStream,
    piece: &[u8],
    framing: Option<Framing>,
    shared: &Shared,
) -> io::Result<()> {
    if piece.is_empty() {
        return Ok(());
    }
    if framing == Some(Framing::Chunked) {
        let mut framed = format!("{:x}\r\n", piece.len()).into_bytes();
        framed.extend_from_slice(piece);
        framed.extend_from_slice(b"\r\n");
        write_bounded(stream, &framed, shared)
    } else {
        write_bounded(stream, piece, shared)
    }
}

/// Keeps the connection open, writing nothing, until the client closes it or the server stops.
fn stay_silent(stream: &mut TcpStream, request: &Recorded, shared: &Shared) {
    let mut scratch = [0u8; 4096];
    loop {
        if shared.stopped() {
            return;
        }
        match stream.read(&mut scratch) {
            Ok(0) => {
                shared.note(format!(
                    "request {} ({}): the client closed while the server was silent",
                    request.seq,
                    request.describe()
                ));
                return;
            }
            Ok(_) => {}
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}
