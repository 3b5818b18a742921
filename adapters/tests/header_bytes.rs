//! Header bytes no HTTP client should choke on, through each backend: request header names
//! and values holding every byte 0x00-0xFF (as Rust strings) and multi-byte UTF-8 are sent or
//! refused as an unsent `HttpFailure` naming the header; response heads holding every byte in
//! a header value, a header name, the reason phrase and the status are read or refused; and
//! whole connections (Streamable HTTP with an odd `Mcp-Session-Id`, the 2024-11-05 HTTP+SSE
//! transport with odd heads) end one way or the other. Never a panic, on any thread: a panic
//! hook counts them.
//!
//! The native HTTP/1.1 backend's own exchanges are tested beside it (`h1_backend.rs`); here it
//! is reached through `connect` (a plain `http://` URL reached directly). The isahc runs need
//! feature `libcurl` (a workspace build has it: the end-to-end tests turn it on); without it,
//! their helpers go unused.
#![cfg_attr(not(feature = "libcurl"), allow(dead_code, unused_imports))]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use futures_lite::AsyncReadExt;
use mcpwire::core::config::{HttpConfig, HttpKind};
use mcpwire::core::error::HttpErrorKind;
use mcpwire::core::{HttpMethod, HttpRequest};
#[cfg(feature = "libcurl")]
use mcpwire::IsahcBackend;
use mcpwire::{ConnectOptions, Era, HttpBackend, HttpClientOptions, ProxySetting, ServerConfig};
use serde_json::{json, Value};

#[macro_use]
mod runtimes;
use runtimes::{Kind, Rt};

/// Panics seen on the threads of this test binary other than the tests' own (a panic on a
/// test's thread fails that test by itself).
static PANICS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread runs a test.
    static TEST_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Counts every panic on a thread that is not a test's (then reports it as the default hook
/// does); marks the calling thread as a test's.
fn count_panics() {
    static HOOK: Once = Once::new();
    TEST_THREAD.with(|t| t.set(true));
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !TEST_THREAD.with(|t| t.get()) {
                PANICS.fetch_add(1, Ordering::SeqCst);
            }
            default(info);
        }));
    });
}

#[track_caller]
fn assert_no_panic() {
    assert_eq!(
        PANICS.load(Ordering::SeqCst),
        0,
        "a thread panicked (an executor's, libcurl's agent, a server's)"
    );
}

/// Header names and values holding each byte 0x00-0xFF as a Rust string: the byte as the
/// character U+0000-U+00FF (two bytes of UTF-8 from 0x80) and through a lossy conversion
/// (U+FFFD from 0x80), alone and within text; and multi-byte UTF-8.
fn every_byte() -> Vec<String> {
    let mut out = Vec::new();
    for b in 0u8..=255 {
        let c = char::from(b);
        out.push(format!("a{c}z"));
        out.push(c.to_string());
        out.push(String::from_utf8_lossy(&[b'a', b, b'z']).into_owned());
    }
    for s in ["café", "v\r\nX-Injected: 1", "日本", "\u{1F600}", "", " "] {
        out.push(s.to_owned());
    }
    out
}

/// What HTTP carries in a value, written out apart from the rule under test.
fn sendable_value(v: &str) -> bool {
    v.chars().all(|c| c == '\t' || (' '..='~').contains(&c))
}

fn sendable_name(n: &str) -> bool {
    !n.is_empty()
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

/// Response heads holding byte `b` in a header value, a header name, the reason phrase, the
/// status code and a session id.
fn odd_heads(b: u8) -> Vec<Vec<u8>> {
    // Each connection answers once and closes, and says so (a client never reuses it).
    let end: &[u8] = b"\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
    vec![
        [&b"HTTP/1.1 200 OK\r\nX-Test: a"[..], &[b], b"z", end].concat(),
        [&b"HTTP/1.1 200 OK\r\nX"[..], &[b], b"Y: v", end].concat(),
        [&b"HTTP/1.1 200 O"[..], &[b], b"K", end].concat(),
        [&b"HTTP/1.1 2"[..], &[b], b"0 OK", end].concat(),
        [&b"HTTP/1.1 200 OK\r\nMcp-Session-Id: s"[..], &[b], end].concat(),
    ]
}

/// A request as the raw server read it.
struct Request {
    method: String,
    path: String,
    body: Vec<u8>,
}

/// What the raw server does after answering.
enum Then {
    KeepAlive,
    Close,
    /// Keep the connection open without reading it (an SSE stream, written elsewhere).
    Hold,
}

/// A raw HTTP/1.1 server on 127.0.0.1: each request is answered by `answer`, which writes
/// its response itself. Returns the address and the count of requests read.
fn raw_server(
    answer: impl Fn(&Request, &mut TcpStream) -> Then + Send + Sync + 'static,
) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let (answer, requests) = (Arc::new(answer), count.clone());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let (answer, requests) = (answer.clone(), requests.clone());
            std::thread::spawn(move || {
                let Ok(read_half) = conn.try_clone() else {
                    return;
                };
                let mut reader = BufReader::new(read_half);
                while let Some(request) = read_request(&mut reader) {
                    requests.fetch_add(1, Ordering::SeqCst);
                    match answer(&request, &mut conn) {
                        Then::KeepAlive => {}
                        Then::Close => return,
                        Then::Hold => {
                            // Parked until the test binary ends (the client closes it).
                            let mut sink = Vec::new();
                            let _ = reader.read_to_end(&mut sink);
                            return;
                        }
                    }
                }
            });
        }
    });
    (addr, count)
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line).ok()?;
    let first = String::from_utf8_lossy(&line).into_owned();
    let mut words = first.split_whitespace();
    let (method, path) = (words.next()?.to_owned(), words.next()?.to_owned());
    let mut length = 0usize;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        let text = String::from_utf8_lossy(&line).to_ascii_lowercase();
        if text.trim().is_empty() {
            break;
        }
        if let Some(v) = text.strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request { method, path, body })
}

fn post(url: &str, headers: Vec<(String, String)>) -> HttpRequest {
    HttpRequest {
        exchange: 0,
        method: HttpMethod::Post,
        url: url.to_owned(),
        headers,
        body: b"{}".to_vec(),
    }
}

fn direct() -> HttpClientOptions {
    let mut options = HttpClientOptions::default();
    options.proxy = ProxySetting::Direct;
    options
}

#[cfg(feature = "libcurl")]
fn isahc(options: &HttpClientOptions) -> Arc<IsahcBackend> {
    Arc::new(IsahcBackend::with_options(options).expect("an isahc backend"))
}

async fn drain(body: std::pin::Pin<Box<dyn futures_lite::AsyncRead + Send>>) {
    let mut body = body;
    let mut sink = Vec::new();
    let _ = body.read_to_end(&mut sink).await;
}

#[cfg(feature = "libcurl")]
#[test]
fn isahc_sends_or_refuses_a_request_header_with_any_byte_never_a_panic() {
    count_panics();
    let (addr, requests) = raw_server(|_, conn| {
        let _ = conn.write_all(b"HTTP/1.1 204 No Content\r\n\r\n");
        Then::KeepAlive
    });
    let url = format!("http://{addr}/mcp");
    let backend = isahc(&direct());
    let mut cases: Vec<(String, String)> = Vec::new();
    for s in every_byte() {
        cases.push(("X-Test".to_owned(), s.clone()));
        cases.push((s, "v".to_owned()));
    }
    smol::block_on(async {
        for (name, value) in cases {
            let before = requests.load(Ordering::SeqCst);
            let request = post(&url, vec![(name.clone(), value.clone())]);
            let outcome = backend.send(request).await;
            if sendable_name(&name) && sendable_value(&value) {
                let resp = outcome.unwrap_or_else(|f| panic!("{name:?}: {value:?}: {f:?}"));
                assert_eq!(resp.status, 204);
                drain(resp.body).await;
                assert_eq!(requests.load(Ordering::SeqCst), before + 1);
                continue;
            }
            let failure = outcome
                .err()
                .unwrap_or_else(|| panic!("{name:?}: {value:?} was sent"));
            match &failure.kind {
                HttpErrorKind::Header(e) => assert_eq!(e.name(), name),
                other => panic!("{name:?}: {value:?}: {other:?}"),
            }
            assert!(failure.unsent, "{failure:?}");
            assert_eq!(
                requests.load(Ordering::SeqCst),
                before,
                "{name:?}: {value:?}"
            );
        }
    });
    assert_no_panic();
}

#[cfg(feature = "libcurl")]
#[test]
fn isahc_refuses_a_bad_header_over_https_and_through_a_proxy_before_connecting() {
    count_panics();
    // Nothing listens on port 1: a failure that is not the header's would be a refused
    // connection.
    let mut through_proxy = HttpClientOptions::default();
    through_proxy.proxy = ProxySetting::Url {
        url: "http://127.0.0.1:1".into(),
        no_proxy: vec![],
    };
    let cases = [
        (direct(), "https://127.0.0.1:1/mcp"),
        (through_proxy.clone(), "http://127.0.0.1:1/mcp"),
        (through_proxy, "https://127.0.0.1:1/mcp"),
    ];
    for (options, url) in cases {
        let backend = isahc(&options);
        for (name, value) in [
            ("X-Name", "café"),
            ("Mcp-Session-Id", "caf\u{e9}"),
            ("X-Name", "a\r\nX-Injected: 1"),
            ("X Name", "v"),
            ("Nämé", "v"),
        ] {
            let request = post(url, vec![(name.into(), value.into())]);
            let failure = smol::block_on(backend.send(request))
                .err()
                .expect("refused");
            assert!(
                matches!(&failure.kind, HttpErrorKind::Header(e) if e.name() == name),
                "{url}: {failure:?}"
            );
            assert!(failure.unsent, "{failure:?}");
            // The message names the header (escaped when it is not printable ASCII).
            let shown: String = name.chars().flat_map(char::escape_default).collect();
            assert!(failure.message.contains(&shown), "{failure:?}");
            assert!(failure.message.is_ascii(), "{failure:?}");
        }
    }
    assert_no_panic();
}

#[cfg(feature = "libcurl")]
#[test]
fn isahc_reads_or_refuses_a_response_head_with_any_byte_never_a_panic() {
    count_panics();
    let mut heads: Vec<Vec<u8>> = (0u8..=255).flat_map(odd_heads).collect();
    heads.push(
        b"HTTP/1.1 200 OK\r\nMcp-Session-Id: caf\xc3\xa9\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".to_vec(),
    );
    heads.push(b"HTTP/1.1 200 OK\r\nMcp-Session-Id: caf\xe9\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".to_vec());
    let heads = Arc::new(heads);
    let answers = heads.clone();
    let (addr, _) = raw_server(move |_, conn| {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let _ = conn.write_all(&answers[n % answers.len()]);
        Then::Close
    });
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let url = format!("http://{addr}/mcp");
    let backend = isahc(&direct());
    let mut read = 0;
    smol::block_on(async {
        for head in heads.iter() {
            match backend.send(post(&url, vec![])).await {
                Ok(resp) => {
                    read += 1;
                    assert!((100..=999).contains(&resp.status), "{head:?}");
                    if head.windows(6).any(|w| w == b"caf\xe9\r\n") {
                        // Not UTF-8: kept lossily, for the core to judge.
                        let id = resp.headers.iter().find(|(k, _)| k == "mcp-session-id");
                        assert_eq!(id.map(|(_, v)| v.as_str()), Some("caf\u{FFFD}"));
                    }
                    drain(resp.body).await;
                }
                Err(failure) => {
                    assert_eq!(
                        failure.kind,
                        HttpErrorKind::HeadCutShort,
                        "{head:?}: {failure:?}"
                    );
                    assert!(!failure.unsent, "{head:?}: {failure:?}");
                }
            }
        }
    });
    assert!(read >= 5 * 60, "{read} of {} heads read", heads.len());
    assert_no_panic();
}

/// Which backend a connection uses.
#[derive(Clone)]
enum Backend {
    /// The default for a plain `http://` URL reached directly: mcpwire's own HTTP/1.1 client.
    Native,
    /// One isahc backend shared by every connection of the test (feature `libcurl`).
    #[cfg(feature = "libcurl")]
    Isahc(Arc<IsahcBackend>),
}

impl Backend {
    fn options(&self, init_timeout: Duration) -> ConnectOptions {
        let mut options = ConnectOptions {
            init_timeout,
            era: Era::Handshake,
            ..ConnectOptions::default()
        };
        options.http_client.proxy = ProxySetting::Direct;
        #[cfg(feature = "libcurl")]
        if let Backend::Isahc(b) = self {
            options.http_backend = Some(b.clone());
        }
        options
    }
}

/// The answer to a JSON-RPC request: `initialize` as a 2024-11-05 server, `{}` for others.
fn answer_to(request: &Value) -> Option<Value> {
    let id = request.get("id")?.clone();
    request.get("method")?;
    let result = match request["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": request["params"]["protocolVersion"].clone(),
            "capabilities": {},
            "serverInfo": {"name": "odd-heads", "version": "1"},
        }),
        _ => json!({}),
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// Connects to `config` for each case (`set` prepares the server for it) and closes; the
/// outcome may be anything but a panic or a hang.
fn connect_each<C>(
    rt: &Rt,
    backend: &Backend,
    config: &ServerConfig,
    cases: Vec<C>,
    set: impl Fn(C),
) {
    let mut slowest = (Duration::ZERO, 0, String::new());
    for (i, case) in cases.into_iter().enumerate() {
        set(case);
        let start = Instant::now();
        let options = backend.options(Duration::from_secs(3));
        let outcome = rt.block_on(async {
            match rt.connect(config, options).await {
                Ok(client) => {
                    client.close().await;
                    "connected".to_owned()
                }
                Err(e) => e.to_string(),
            }
        });
        if start.elapsed() > slowest.0 {
            slowest = (start.elapsed(), i, outcome);
        }
        assert_no_panic();
    }
    let (took, case, outcome) = slowest;
    assert!(
        took < Duration::from_secs(2),
        "case {case} took {took:?}: {outcome}"
    );
}

/// A Streamable HTTP server whose `initialize` answer carries `Mcp-Session-Id: <session>`
/// (raw bytes).
fn session_server(session: Arc<Mutex<Vec<u8>>>) -> String {
    let (addr, _) = raw_server(move |request, conn| {
        let head = |status: &str, extra: &[u8], body: &[u8]| {
            let start = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
                body.len()
            );
            [start.as_bytes(), extra, b"\r\n", body].concat()
        };
        let reply = match request.method.as_str() {
            "POST" => {
                let message: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
                match answer_to(&message) {
                    Some(answer) => {
                        let mut extra = Vec::new();
                        if message["method"] == "initialize" {
                            extra.extend_from_slice(b"Mcp-Session-Id: ");
                            extra.extend_from_slice(&session.lock().unwrap());
                            extra.extend_from_slice(b"\r\n");
                        }
                        head("200 OK", &extra, answer.to_string().as_bytes())
                    }
                    None => head("202 Accepted", b"", b""),
                }
            }
            "DELETE" => head("200 OK", b"", b""),
            _ => head("405 Method Not Allowed", b"", b""),
        };
        let _ = conn.write_all(&reply);
        Then::KeepAlive
    });
    format!("http://{addr}/mcp")
}

fn session_cases() -> Vec<Vec<u8>> {
    let mut cases: Vec<Vec<u8>> = (0u8..=255).map(|b| vec![b's', b, b'1']).collect();
    cases.push("café".as_bytes().to_vec());
    cases.push(b"caf\xe9".to_vec());
    cases.push(b"ok-session".to_vec());
    cases
}

fn sessions_over(rt: &Rt, backend: Backend) {
    count_panics();
    let session = Arc::new(Mutex::new(Vec::new()));
    let url = session_server(session.clone());
    let config = ServerConfig::http(url);
    // A visible-ASCII session id connects: the server is one the transport can use.
    *session.lock().unwrap() = b"ok-session".to_vec();
    rt.block_on(async {
        let client = rt
            .connect(&config, backend.options(Duration::from_secs(5)))
            .await
            .expect("the plain Streamable HTTP server connects");
        client.close().await;
    });
    connect_each(rt, &backend, &config, session_cases(), |case| {
        *session.lock().unwrap() = case;
    });
    assert_no_panic();
}

/// mcpwire's own client runs on the connection's runtime: on each.
fn streamable_http_with_an_odd_session_id_over_the_native_backend(rt: &Rt) {
    sessions_over(rt, Backend::Native);
}

on_every_runtime!(streamable_http_with_an_odd_session_id_over_the_native_backend);

// On smol alone: libcurl reads and writes on its own thread whatever the runtime.
#[cfg(feature = "libcurl")]
#[test]
fn streamable_http_with_an_odd_session_id_over_isahc() {
    sessions_over(&Rt::new(Kind::Smol), Backend::Isahc(isahc(&direct())));
}

/// What the HTTP+SSE server puts in its heads for one connection.
#[derive(Clone, Default)]
struct SseCase {
    /// Header lines (each ending in CRLF) added to the GET's head.
    get_extra: Vec<u8>,
    /// Header lines added to each POST's head.
    post_extra: Vec<u8>,
    /// The reason phrase of each POST's `202`.
    post_reason: Vec<u8>,
}

/// The SSE stream the server holds open, if any.
type Held = Arc<Mutex<Option<TcpStream>>>;

/// Ends the stream the server holds, as a server does at the end of a session: isahc notices
/// a dropped body only when more of it comes, so an idle stream the client dropped would keep
/// its connection (and a place under the connection limit) until the server writes again.
fn hang_up(held: &Held) {
    if let Some(stream) = held.lock().unwrap().take() {
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
}

/// A 2024-11-05 server: `GET /sse` opens the stream (its head with the case's extra lines)
/// and names `/message`; each POST there is answered `202` (with the case's lines and reason)
/// and its answer, if any, goes on the stream.
fn sse_server(case: Arc<Mutex<SseCase>>, stream: Held) -> String {
    let (addr, _) = raw_server(move |request, conn| {
        let case = case.lock().unwrap().clone();
        match (request.method.as_str(), request.path.as_str()) {
            ("GET", "/sse") => {
                let head = [
                    &b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"[..],
                    &case.get_extra,
                    b"\r\nevent: endpoint\ndata: /message\n\n",
                ]
                .concat();
                // Kept before the endpoint goes: the POSTs it brings answer on this stream.
                hang_up(&stream);
                *stream.lock().unwrap() = conn.try_clone().ok();
                let _ = conn.write_all(&head);
                Then::Hold
            }
            ("POST", "/message") => {
                let head = [
                    &b"HTTP/1.1 202 "[..],
                    &case.post_reason,
                    b"\r\nContent-Length: 0\r\n",
                    &case.post_extra,
                    b"\r\n",
                ]
                .concat();
                let _ = conn.write_all(&head);
                let message: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
                if let (Some(answer), Some(sse)) =
                    (answer_to(&message), stream.lock().unwrap().as_mut())
                {
                    let _ = sse.write_all(format!("event: message\ndata: {answer}\n\n").as_bytes());
                }
                Then::KeepAlive
            }
            _ => {
                let _ = conn.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
                Then::KeepAlive
            }
        }
    });
    format!("http://{addr}/sse")
}

fn sse_cases() -> Vec<SseCase> {
    let plain = SseCase {
        post_reason: b"Accepted".to_vec(),
        ..SseCase::default()
    };
    let mut cases = vec![plain.clone()];
    for b in 0u8..=255 {
        let value = [&b"X-Test: a"[..], &[b], b"z\r\n"].concat();
        let name = [&b"X"[..], &[b], b"Y: v\r\n"].concat();
        cases.push(SseCase {
            get_extra: [value.clone(), name].concat(),
            ..plain.clone()
        });
        cases.push(SseCase {
            post_extra: value,
            post_reason: [&b"Acc"[..], &[b], b"epted"].concat(),
            ..plain.clone()
        });
    }
    cases.push(SseCase {
        get_extra: "X-Name: café\r\n".as_bytes().to_vec(),
        post_extra: b"Mcp-Session-Id: caf\xe9\r\n".to_vec(),
        ..plain
    });
    cases
}

fn sse_over(rt: &Rt, backend: Backend) {
    count_panics();
    let case = Arc::new(Mutex::new(SseCase::default()));
    let held = Held::default();
    let url = sse_server(case.clone(), held.clone());
    let config = ServerConfig::Http(HttpConfig {
        kind: HttpKind::Sse,
        url,
        headers: Default::default(),
        extra: Default::default(),
    });
    // The plain case connects: the server is one the transport can use.
    let plain = sse_cases().remove(0);
    *case.lock().unwrap() = plain;
    rt.block_on(async {
        let client = rt
            .connect(&config, backend.options(Duration::from_secs(5)))
            .await
            .expect("the plain HTTP+SSE server connects");
        client.close().await;
    });
    connect_each(rt, &backend, &config, sse_cases(), |c| {
        hang_up(&held);
        *case.lock().unwrap() = c;
    });
    assert_no_panic();
}

/// mcpwire's own client runs on the connection's runtime: on each.
fn http_sse_with_odd_heads_over_the_native_backend(rt: &Rt) {
    sse_over(rt, Backend::Native);
}

on_every_runtime!(http_sse_with_odd_heads_over_the_native_backend);

// On smol alone: libcurl reads and writes on its own thread whatever the runtime.
#[cfg(feature = "libcurl")]
#[test]
fn http_sse_with_odd_heads_over_isahc() {
    sse_over(&Rt::new(Kind::Smol), Backend::Isahc(isahc(&direct())));
}

// No runtime: the header is refused by `connect` itself, before any socket, timer or task.
#[test]
fn a_configured_header_that_cannot_be_sent_fails_the_connect_naming_it() {
    count_panics();
    let (addr, requests) = raw_server(|_, conn| {
        let _ = conn.write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n");
        Then::Close
    });
    let backends = [
        Backend::Native,
        #[cfg(feature = "libcurl")]
        Backend::Isahc(isahc(&direct())),
    ];
    for backend in &backends {
        for kind in [HttpKind::Streamable, HttpKind::Sse] {
            for (name, value) in [
                ("Content-Length", "5"),
                ("Host", "x"),
                ("X-Name", "café"),
                ("X-Name", "a\r\nX-Injected: 1"),
                ("X Name", "v"),
                ("Transfer-Encoding", "chunked"),
            ] {
                let config = ServerConfig::Http(HttpConfig {
                    kind,
                    url: format!("http://{addr}/mcp"),
                    headers: [(name.to_owned(), value.to_owned())].into(),
                    extra: Default::default(),
                });
                let options = backend.options(Duration::from_secs(3));
                let error = match mcpwire::connect(&config, options) {
                    Ok(_) => panic!("{name}: {value:?} was accepted"),
                    Err(e) => e,
                };
                match &error {
                    mcpwire::Error::Client(mcpwire::core::ClientError::Header(e)) => {
                        assert_eq!(e.name(), name)
                    }
                    other => panic!("{name}: {value:?}: {other:?}"),
                }
                let shown = error.to_string();
                assert!(shown.contains(name) && shown.is_ascii(), "{shown}");
            }
        }
    }
    assert_eq!(requests.load(Ordering::SeqCst), 0, "no request was sent");
    assert_no_panic();
}
