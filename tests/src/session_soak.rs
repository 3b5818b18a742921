//! A hostile but legal handshake-era Streamable HTTP server that expires sessions at random
//! under load, to soak the client's session renewal.
//!
//! It serves one tool, `echo`, whose result is its `token` argument, so a misrouted answer is
//! visible. Every request is decided by a seeded generator: the session may expire (404, not
//! processed; its JSON-RPC error body carries the request's own id half the time), the call may be refused with a 500 (not processed), or processed and then
//! answered with JSON or SSE (random pieces, random line endings, a duplicate answer, an answer
//! to an unknown id), or its SSE stream dropped after the priming event (the client resumes
//! with `Last-Event-ID`; if the session has expired by then, the resume gets a 404), or its
//! connection reset before any answer, or answered too late. The server keeps the truth: what
//! it processed (and how often), and which calls lost their answer for which reason, so a test
//! can tell a failure the call earned from one it did not.
//!
//! Every response closes its connection (`Connection: close`), so no request meets a pooled
//! connection the server has already closed.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

/// How likely each fault is, in per mille of `tools/call` requests.
#[derive(Debug, Clone)]
pub struct Faults {
    /// The session expires: this request and every later one in it get a 404.
    pub expire: u32,
    /// A 500 before processing.
    pub error_500: u32,
    /// Processed, then the connection is closed before any answer.
    pub reset: u32,
    /// Processed, and the SSE stream dropped after its priming event.
    pub drop_stream: u32,
    /// Processed, and answered only after `late_by`.
    pub late: u32,
    /// How late a late answer is.
    pub late_by: Duration,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            expire: 30,
            error_500: 10,
            reset: 10,
            drop_stream: 60,
            late: 2,
            late_by: Duration::from_secs(3),
        }
    }
}

/// Why the server did not deliver a call's answer (by the call's token).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lost {
    /// A 500 before processing.
    Error500,
    /// Processed, then the connection was reset.
    Reset,
    /// Processed; its stream dropped, and the resume came after its session expired.
    SessionExpired,
    /// Processed and answered late.
    Late,
}

/// What the server saw.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    /// `initialize` requests.
    pub initializes: u64,
    /// Sessions expired by a fault.
    pub expiries: u64,
    /// 404s answered (requests in unknown sessions, resumes included).
    pub not_found: u64,
    /// Resumes (GET with `Last-Event-ID`) served.
    pub resumes: u64,
    /// `tools/call` requests processed.
    pub processed: u64,
    /// Tokens processed more than once.
    pub twice: u64,
}

#[derive(Default)]
struct Sess {
    alive: bool,
    /// Streams dropped after priming: event id → (token, the answer still due).
    pending: HashMap<String, (String, String)>,
}

struct State {
    faults: Faults,
    faulty: bool,
    rng: u64,
    sessions: HashMap<String, Sess>,
    next_session: u64,
    next_stream: u64,
    executions: HashMap<String, u32>,
    lost: HashMap<String, Lost>,
    counts: Counts,
}

impl State {
    /// A value in 0..1000.
    fn roll(&mut self) -> u32 {
        (self.next() % 1000) as u32
    }

    fn next(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// The soak server: listens on 127.0.0.1 until dropped.
pub struct SoakServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    state: Arc<Mutex<State>>,
    acceptor: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for SoakServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SoakServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl SoakServer {
    /// Starts the server with `faults`, its choices drawn from `seed`.
    pub fn start(faults: Faults, seed: u64) -> SoakServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("local address");
        let stop = Arc::new(AtomicBool::new(false));
        let state = Arc::new(Mutex::new(State {
            faults,
            faulty: true,
            rng: seed | 1,
            sessions: HashMap::new(),
            next_session: 0,
            next_stream: 0,
            executions: HashMap::new(),
            lost: HashMap::new(),
            counts: Counts::default(),
        }));
        let acceptor = {
            let stop = stop.clone();
            let state = state.clone();
            let seeds = Arc::new(AtomicU64::new(seed));
            std::thread::spawn(move || accept(listener, stop, state, seeds))
        };
        SoakServer {
            addr,
            stop,
            state,
            acceptor: Some(acceptor),
        }
    }

    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops injecting faults (every call from now on is answered at once, in JSON or SSE).
    pub fn calm(&self) {
        self.state.lock().unwrap().faulty = false;
    }

    /// What the server saw so far.
    pub fn counts(&self) -> Counts {
        self.state.lock().unwrap().counts.clone()
    }

    /// How often the call with `token` was processed.
    pub fn executions(&self, token: &str) -> u32 {
        let s = self.state.lock().unwrap();
        s.executions.get(token).copied().unwrap_or(0)
    }

    /// Why the answer of the call with `token` was not delivered, if the server knows of a
    /// reason.
    pub fn lost(&self, token: &str) -> Option<Lost> {
        self.state.lock().unwrap().lost.get(token).copied()
    }
}

impl Drop for SoakServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
    }
}

fn accept(
    listener: TcpListener,
    stop: Arc<AtomicBool>,
    state: Arc<Mutex<State>>,
    seeds: Arc<AtomicU64>,
) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let state = state.clone();
                let seed = seeds.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
                std::thread::spawn(move || {
                    let _ = serve(stream, &state, seed);
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

/// One request, read whole.
struct Request {
    method: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

fn read_request(stream: &mut TcpStream) -> std::io::Result<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 || buf.len() > 64 * 1024 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let method = lines
        .next()
        .and_then(|l| l.split(' ').next())
        .unwrap_or_default()
        .to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(Request {
        method,
        headers,
        body,
    })
}

/// How one `tools/call` is answered.
enum Answer {
    NotFound,
    Error500,
    Reset,
    Json(String),
    Sse {
        events: Vec<(String, String)>,
        drop_after_priming: bool,
    },
    Late(String),
}

fn serve(mut stream: TcpStream, state: &Mutex<State>, seed: u64) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut rng = Rng(seed | 1);
    let req = read_request(&mut stream)?;
    let session = req.headers.get("mcp-session-id").cloned();
    match req.method.as_str() {
        "GET" => {
            let Some(last) = req.headers.get("last-event-id").cloned() else {
                return respond(&mut stream, 405, &[], b"");
            };
            resume(&mut stream, state, session.as_deref(), &last, &mut rng)
        }
        "DELETE" => {
            if let Some(s) = session {
                state.lock().unwrap().sessions.remove(&s);
            }
            respond(&mut stream, 200, &[], b"")
        }
        "POST" => post(&mut stream, state, session.as_deref(), &req.body, &mut rng),
        _ => respond(&mut stream, 405, &[], b""),
    }
}

fn post(
    stream: &mut TcpStream,
    state: &Mutex<State>,
    session: Option<&str>,
    body: &[u8],
    rng: &mut Rng,
) -> std::io::Result<()> {
    let message: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let method = message["method"].as_str().unwrap_or_default().to_owned();
    let id = message["id"].clone();
    if method == "initialize" {
        let sid = {
            let mut s = state.lock().unwrap();
            s.next_session += 1;
            s.counts.initializes += 1;
            let sid = format!("soak-{}", s.next_session);
            s.sessions.insert(
                sid.clone(),
                Sess {
                    alive: true,
                    ..Sess::default()
                },
            );
            sid
        };
        let result = json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "soak", "version": "1"}}});
        let headers = [
            ("Content-Type", "application/json"),
            ("Mcp-Session-Id", sid.as_str()),
        ];
        return respond(stream, 200, &headers, result.to_string().as_bytes());
    }
    let alive = |s: &State| {
        session
            .and_then(|sid| s.sessions.get(sid))
            .is_some_and(|x| x.alive)
    };
    if id.is_null() || message.get("method").is_none() {
        // A notification or an answer: accepted in a live session.
        let ok = alive(&state.lock().unwrap());
        if !ok {
            state.lock().unwrap().counts.not_found += 1;
            return respond(stream, 404, &[], b"");
        }
        return respond(stream, 202, &[], b"");
    }
    let answer = {
        let mut s = state.lock().unwrap();
        decide(&mut s, session, &method, &message, &id)
    };
    match answer {
        Answer::NotFound => {
            // Half of them carry the request's own id, as some servers answer: still a
            // session the server forgot (the client must renew it, whatever the body says).
            let own = id.as_i64().is_some_and(|n| n % 2 == 0);
            let body = json!({"jsonrpc": "2.0", "id": if own { id.clone() } else { Value::Null },
                "error": {"code": -32001, "message": "Session not found"}});
            let headers = [("Content-Type", "application/json")];
            respond(stream, 404, &headers, body.to_string().as_bytes())
        }
        Answer::Error500 => respond(stream, 500, &[("Content-Type", "text/plain")], b"oops"),
        Answer::Reset => Ok(()),
        Answer::Json(text) => {
            let headers = [("Content-Type", "application/json")];
            respond_in_pieces(stream, 200, &headers, text.as_bytes(), rng)
        }
        Answer::Late(text) => {
            let late_by = state.lock().unwrap().faults.late_by;
            std::thread::sleep(late_by);
            respond(
                stream,
                200,
                &[("Content-Type", "application/json")],
                text.as_bytes(),
            )
        }
        Answer::Sse {
            events,
            drop_after_priming,
        } => {
            let mut body = Vec::new();
            let eol = ["\n", "\r\n", "\r"][rng.below(3)];
            for (i, (eid, data)) in events.iter().enumerate() {
                if drop_after_priming && i == 1 {
                    break;
                }
                body.extend_from_slice(format!("id: {eid}{eol}data: {data}{eol}{eol}").as_bytes());
            }
            let headers = [("Content-Type", "text/event-stream")];
            respond_in_pieces(stream, 200, &headers, &body, rng)
        }
    }
}

/// Decides a request's fate, and records what the server did.
fn decide(
    s: &mut State,
    session: Option<&str>,
    method: &str,
    message: &Value,
    id: &Value,
) -> Answer {
    let live = session
        .and_then(|sid| s.sessions.get(sid))
        .is_some_and(|x| x.alive);
    if !live {
        s.counts.not_found += 1;
        return Answer::NotFound;
    }
    let faulty = s.faulty;
    let f = s.faults.clone();
    if faulty && s.roll() < f.expire {
        if let Some(x) = session.and_then(|sid| s.sessions.get_mut(sid)) {
            x.alive = false;
        }
        s.counts.expiries += 1;
        s.counts.not_found += 1;
        return Answer::NotFound;
    }
    let token = message["params"]["arguments"]["token"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if method != "tools/call" {
        let result = json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}});
        return Answer::Json(result.to_string());
    }
    if faulty && s.roll() < f.error_500 {
        s.lost.insert(token, Lost::Error500);
        return Answer::Error500;
    }
    // Processed from here on.
    s.counts.processed += 1;
    let n = s.executions.entry(token.clone()).or_insert(0);
    *n += 1;
    if *n == 2 {
        s.counts.twice += 1;
    }
    let result = json!({"jsonrpc": "2.0", "id": id, "result": {
        "content": [{"type": "text", "text": token}]}})
    .to_string();
    if faulty && s.roll() < f.reset {
        s.lost.insert(token, Lost::Reset);
        return Answer::Reset;
    }
    if faulty && s.roll() < f.late {
        s.lost.insert(token, Lost::Late);
        return Answer::Late(result);
    }
    let sse = s.roll() < 600;
    if !sse {
        return Answer::Json(result);
    }
    s.next_stream += 1;
    let stream = s.next_stream;
    let priming = format!("{stream}-0");
    let mut events = vec![(priming.clone(), String::new())];
    if faulty && s.roll() < 100 {
        // An answer to an id nobody asked with.
        let stray = json!({"jsonrpc": "2.0", "id": 999_999_999u64, "result": {}});
        events.push((format!("{stream}-s"), stray.to_string()));
    }
    events.push((format!("{stream}-1"), result.clone()));
    if faulty && s.roll() < 100 {
        // The same answer twice.
        events.push((format!("{stream}-2"), result.clone()));
    }
    let drop_after_priming = faulty && s.roll() < f.drop_stream;
    if drop_after_priming {
        if let Some(x) = session.and_then(|sid| s.sessions.get_mut(sid)) {
            x.pending.insert(priming, (token, result));
        }
    }
    Answer::Sse {
        events,
        drop_after_priming,
    }
}

/// A GET with `Last-Event-ID`: the rest of a dropped stream, or a 404 when its session is gone.
fn resume(
    stream: &mut TcpStream,
    state: &Mutex<State>,
    session: Option<&str>,
    last: &str,
    rng: &mut Rng,
) -> std::io::Result<()> {
    let due = {
        let mut s = state.lock().unwrap();
        s.counts.resumes += 1;
        let live = session
            .and_then(|sid| s.sessions.get(sid))
            .is_some_and(|x| x.alive);
        let found = session
            .and_then(|sid| s.sessions.get_mut(sid))
            .and_then(|x| x.pending.remove(last));
        match (live, found) {
            (true, Some((_, answer))) => Some(answer),
            (false, Some((token, _))) => {
                s.lost.insert(token, Lost::SessionExpired);
                s.counts.not_found += 1;
                None
            }
            (_, None) => {
                s.counts.not_found += 1;
                None
            }
        }
    };
    match due {
        Some(answer) => {
            let stream_id = last.trim_end_matches("-0");
            let body = format!("id: {stream_id}-1\ndata: {answer}\n\n");
            let headers = [("Content-Type", "text/event-stream")];
            respond_in_pieces(stream, 200, &headers, body.as_bytes(), rng)
        }
        None => respond(stream, 404, &[], b""),
    }
}

fn head(status: u16, headers: &[(&str, &str)], length: Option<usize>) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        202 => "Accepted",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Internal Server Error",
    };
    let mut h = format!("HTTP/1.1 {status} {reason}\r\nConnection: close\r\n");
    for (k, v) in headers {
        h.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(n) = length {
        h.push_str(&format!("Content-Length: {n}\r\n"));
    }
    h.push_str("\r\n");
    h.into_bytes()
}

fn respond(
    stream: &mut TcpStream,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<()> {
    let mut out = head(status, headers, Some(body.len()));
    out.extend_from_slice(body);
    stream.write_all(&out)?;
    stream.flush()
}

/// A response whose body goes in random pieces with short pauses (an SSE body without a
/// length: it ends with the connection).
fn respond_in_pieces(
    stream: &mut TcpStream,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
    rng: &mut Rng,
) -> std::io::Result<()> {
    let sse = headers.iter().any(|(_, v)| *v == "text/event-stream");
    let length = (!sse).then_some(body.len());
    stream.write_all(&head(status, headers, length))?;
    let mut rest = body;
    while !rest.is_empty() {
        let n = (1 + rng.below(64)).min(rest.len());
        stream.write_all(&rest[..n])?;
        stream.flush()?;
        rest = &rest[n..];
        if rng.below(8) == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    Ok(())
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }
}
