//! The floors: no SDK, no async runtime. Over stdio, blocking JSONL over the child's pipes; over
//! HTTP, HTTP/1.1 keep-alive written by hand over `std::net::TcpStream`s (one for sequential
//! calls, one per call in flight for W2, multiplexed with `poll`). The requests are the same
//! JSON the clients send; a response is checked by its id (stdio) and its echo's length.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::{announce_ready, begin, servers, ClientArgs, Outcome, Workload};

pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpwire-bench-floor","version":"0.1.0"}}}"#;
pub(crate) const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
pub(crate) const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

/// A `tools/call echo` request (`message` already a JSON string literal).
pub(crate) fn call(out: &mut Vec<u8>, id: u64, message_json: &str) {
    out.clear();
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.to_string().as_bytes());
    out.extend_from_slice(
        br#","method":"tools/call","params":{"name":"echo","arguments":{"message":"#,
    );
    out.extend_from_slice(message_json.as_bytes());
    out.extend_from_slice(b"}}}");
}

/// The integer id of a JSON-RPC message, found by a scan for `"id":` (enough for the answers
/// of these servers, whose texts hold no such key).
fn id_of(line: &[u8]) -> Option<u64> {
    let at = memfind(line, b"\"id\":")? + 5;
    let digits = line[at..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .fold(None, |n: Option<u64>, &b| {
            Some(n.unwrap_or(0) * 10 + u64::from(b - b'0'))
        });
    digits
}

pub(crate) fn memfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

pub(crate) fn check_len(body: &[u8], sent: usize) -> Result<(), String> {
    if body.len() >= sent && memfind(&body[..body.len().min(200)], b"\"error\"").is_none() {
        Ok(())
    } else {
        Err(format!(
            "bad answer ({} bytes): {}",
            body.len(),
            String::from_utf8_lossy(&body[..body.len().min(200)])
        ))
    }
}

pub fn run(args: &ClientArgs) -> Result<Outcome, String> {
    match &args.url {
        None => stdio(args),
        Some(url) => http(args, url),
    }
}

// ---- stdio ---------------------------------------------------------------------------------

struct Pipes {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl Pipes {
    fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        // One write of the whole line (the newline appended by the caller's buffer).
        self.stdin.write_all(bytes).map_err(|e| e.to_string())
    }

    fn send_line(&mut self, text: &str) -> Result<(), String> {
        let mut b = Vec::with_capacity(text.len() + 1);
        b.extend_from_slice(text.as_bytes());
        b.push(b'\n');
        self.send(&b)
    }

    /// The next line that carries an id (notifications are skipped); returns its id.
    fn next_answer(&mut self) -> Result<u64, String> {
        loop {
            self.line.clear();
            let n = self
                .stdout
                .read_until(b'\n', &mut self.line)
                .map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("the server closed its stdout".into());
            }
            if let Some(id) = id_of(&self.line) {
                return Ok(id);
            }
        }
    }

    fn answer_to(&mut self, id: u64) -> Result<(), String> {
        while self.next_answer()? != id {}
        Ok(())
    }
}

fn stdio(args: &ClientArgs) -> Result<Outcome, String> {
    let (command, argv) = servers::stdio_command(args.server);
    let mut cmd = Command::new(command);
    cmd.args(argv)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    // SAFETY: prctl is async-signal-safe; the server dies with this process.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = BufReader::with_capacity(64 * 1024, child.stdout.take().expect("piped stdout"));
    let mut p = Pipes {
        child,
        stdin,
        stdout,
        line: Vec::new(),
    };
    let mut out = Outcome::default();
    p.send_line(INITIALIZE)?;
    p.answer_to(0)?;
    out.era = "handshake 2025-11-25".into();
    p.send_line(INITIALIZED)?;
    p.send_line(TOOLS_LIST)?;
    p.answer_to(1)?;
    if memfind(&p.line, b"\"echo\"").is_none() {
        return Err("the server has no echo tool".into());
    }
    out.ready_ms = crate::since_start_ms();
    announce_ready(args);

    let message = serde_json::to_string(&args.message()).expect("a string");
    let sent = args.message().len();
    let mut buf = Vec::new();
    let mut id = 2;
    if args.workload != Workload::Startup {
        call(&mut buf, id, "\"warm-up\"");
        buf.push(b'\n');
        p.send(&buf)?;
        p.answer_to(id)?;
        id += 1;
    }
    match args.workload {
        Workload::Startup => {}
        Workload::Idle => {
            std::thread::sleep(std::time::Duration::from_secs(1));
            crate::idle_figures(&mut out);
        }
        Workload::W1 | Workload::W3 => crate::sequential(args, &mut out, || {
            call(&mut buf, id, &message);
            buf.push(b'\n');
            p.send(&buf)?;
            p.answer_to(id)?;
            check_len(&p.line, sent)?;
            id += 1;
            Ok(())
        })?,
        Workload::W2 => {
            let n = args.calls();
            let meter = begin();
            let first = id;
            let mut sent_calls = 0;
            let mut done = 0;
            while sent_calls < n.min(args.inflight as u64) {
                call(&mut buf, first + sent_calls, &message);
                buf.push(b'\n');
                p.send(&buf)?;
                sent_calls += 1;
            }
            while done < n {
                let got = p.next_answer()?;
                if got < first || got >= first + sent_calls {
                    continue;
                }
                check_len(&p.line, sent)?;
                done += 1;
                if sent_calls < n {
                    call(&mut buf, first + sent_calls, &message);
                    buf.push(b'\n');
                    p.send(&buf)?;
                    sent_calls += 1;
                }
            }
            out.end(meter, n);
        }
    }
    // Close: stdin EOF, then wait for the server (killed if it lingers).
    drop(p.stdin);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        match p.child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(2))
            }
            _ => {
                let _ = p.child.kill();
                let _ = p.child.wait();
                break;
            }
        }
    }
    Ok(out)
}

// ---- HTTP ----------------------------------------------------------------------------------

/// One parsed response.
struct Response {
    status: u16,
    session: Option<String>,
    /// The JSON-RPC message (the JSON body, or the SSE event's data).
    json: Vec<u8>,
}

/// Where the reading of a response stands.
enum Body {
    /// The head is not complete yet.
    Head,
    /// `Content-Length` bytes from `start`.
    Length { start: usize, len: usize },
    /// Chunked: the next chunk's size line is at `at`; `data` holds what was decoded.
    Chunked { at: usize, data: Vec<u8> },
}

/// A connection's byte stream: the socket, or TLS over it.
trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// One HTTP/1.1 keep-alive connection.
struct Conn {
    stream: Box<dyn Stream>,
    /// The socket's descriptor, for `poll`.
    fd: i32,
    buf: Vec<u8>,
    body: Body,
    status: u16,
    session: Option<String>,
    sse: bool,
}

pub(crate) fn header_value<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.split("\r\n").skip(1).find_map(|line| {
        let (k, v) = line.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The data of the SSE event that carries a JSON-RPC message (the last `data:` line that
/// starts with `{`).
pub(crate) fn sse_data(body: &[u8]) -> Vec<u8> {
    let mut found: &[u8] = &[];
    for line in body.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(data) = line.strip_prefix(b"data:") {
            let data = data.strip_prefix(b" ").unwrap_or(data);
            if data.first() == Some(&b'{') {
                found = data;
            }
        }
    }
    found.to_vec()
}

impl Conn {
    fn open(
        addr: &str,
        tls: Option<&std::sync::Arc<rustls::ClientConfig>>,
    ) -> Result<Conn, String> {
        let tcp = TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
        tcp.set_nodelay(true).map_err(|e| e.to_string())?;
        let fd = tcp.as_raw_fd();
        let stream: Box<dyn Stream> = match tls {
            // rustls's own blocking stream: the handshake runs at the first write.
            Some(config) => {
                let name = rustls::pki_types::ServerName::try_from("127.0.0.1")
                    .map_err(|e| e.to_string())?;
                let session = rustls::ClientConnection::new(config.clone(), name)
                    .map_err(|e| e.to_string())?;
                Box::new(rustls::StreamOwned::new(session, tcp))
            }
            None => Box::new(tcp),
        };
        Ok(Conn {
            stream,
            fd,
            buf: Vec::with_capacity(16 * 1024),
            body: Body::Head,
            status: 0,
            session: None,
            sse: false,
        })
    }

    /// Sends one request: the head and the body in one write.
    fn send(&mut self, req: &Request, method: &str, body: &[u8]) -> Result<(), String> {
        let mut msg = Vec::with_capacity(256 + body.len());
        write!(
            msg,
            "{method} {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: \
             application/json, text/event-stream\r\nContent-Length: {}\r\n",
            req.path,
            req.host,
            body.len()
        )
        .expect("write to a Vec");
        if let Some(s) = &req.session {
            write!(
                msg,
                "Mcp-Session-Id: {s}\r\nMcp-Protocol-Version: {}\r\n",
                req.version
            )
            .expect("write to a Vec");
        }
        msg.extend_from_slice(b"\r\n");
        msg.extend_from_slice(body);
        self.stream.write_all(&msg).map_err(|e| e.to_string())
    }

    /// Reads what is there (one `read`) and returns the response once complete.
    fn read_some(&mut self) -> Result<Option<Response>, String> {
        let len = self.buf.len();
        let room = (self.buf.capacity() - len).max(64 * 1024);
        self.buf.reserve(room);
        // SAFETY: the spare capacity is written by read before it is exposed.
        let spare = unsafe {
            std::slice::from_raw_parts_mut(
                self.buf.as_mut_ptr().add(len),
                self.buf.capacity() - len,
            )
        };
        let n = self.stream.read(spare).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the server closed the connection".into());
        }
        // SAFETY: read initialised n more bytes.
        unsafe { self.buf.set_len(len + n) };
        self.parse()
    }

    fn parse(&mut self) -> Result<Option<Response>, String> {
        loop {
            match &mut self.body {
                Body::Head => {
                    let Some(end) = memfind(&self.buf, b"\r\n\r\n") else {
                        return Ok(None);
                    };
                    let head = std::str::from_utf8(&self.buf[..end]).map_err(|e| e.to_string())?;
                    self.status = head
                        .split(' ')
                        .nth(1)
                        .and_then(|s| s.parse().ok())
                        .ok_or("bad status line")?;
                    self.session = header_value(head, "mcp-session-id").map(str::to_owned);
                    self.sse = header_value(head, "content-type")
                        .is_some_and(|t| t.starts_with("text/event-stream"));
                    let chunked = header_value(head, "transfer-encoding")
                        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"));
                    self.body = if chunked {
                        Body::Chunked {
                            at: end + 4,
                            data: Vec::new(),
                        }
                    } else {
                        let len = header_value(head, "content-length")
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(0);
                        Body::Length {
                            start: end + 4,
                            len,
                        }
                    };
                }
                Body::Length { start, len } => {
                    if self.buf.len() < *start + *len {
                        return Ok(None);
                    }
                    let body = self.buf[*start..*start + *len].to_vec();
                    let rest = *start + *len;
                    return Ok(Some(self.finish(body, rest)));
                }
                Body::Chunked { at, data } => loop {
                    let Some(eol) = memfind(&self.buf[*at..], b"\r\n") else {
                        return Ok(None);
                    };
                    let size_text = std::str::from_utf8(&self.buf[*at..*at + eol])
                        .map_err(|e| e.to_string())?;
                    let size =
                        usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                            .map_err(|_| format!("bad chunk size {size_text:?}"))?;
                    let from = *at + eol + 2;
                    if self.buf.len() < from + size + 2 {
                        return Ok(None);
                    }
                    if size == 0 {
                        let body = std::mem::take(data);
                        let rest = from + 2;
                        return Ok(Some(self.finish(body, rest)));
                    }
                    data.extend_from_slice(&self.buf[from..from + size]);
                    *at = from + size + 2;
                },
            }
        }
    }

    fn finish(&mut self, body: Vec<u8>, consumed: usize) -> Response {
        self.buf.drain(..consumed);
        self.body = Body::Head;
        let json = if self.sse { sse_data(&body) } else { body };
        Response {
            status: self.status,
            session: self.session.take(),
            json,
        }
    }

    /// One request and its response, blocking.
    fn roundtrip(&mut self, req: &Request, method: &str, body: &[u8]) -> Result<Response, String> {
        self.send(req, method, body)?;
        loop {
            if let Some(r) = self.read_some()? {
                return Ok(r);
            }
        }
    }
}

/// What every request carries.
struct Request {
    host: String,
    path: String,
    session: Option<String>,
    version: String,
}

fn ok(r: &Response, what: &str) -> Result<(), String> {
    if (200..300).contains(&r.status) {
        Ok(())
    } else {
        Err(format!(
            "{what}: HTTP {}: {}",
            r.status,
            String::from_utf8_lossy(&r.json[..r.json.len().min(200)])
        ))
    }
}

/// The TLS configuration of the https floor: HTTP/1.1, trusting the bench server's certificate.
fn tls_config() -> Result<std::sync::Arc<rustls::ClientConfig>, String> {
    use rustls::pki_types::pem::PemObject;
    let pem = crate::servers::certificate_pem();
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(pem.as_bytes()) {
        roots
            .add(cert.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(std::sync::Arc::new(config))
}

fn http(args: &ClientArgs, url: &str) -> Result<Outcome, String> {
    let (rest, tls) = match url.strip_prefix("https://") {
        Some(rest) => (rest, Some(tls_config()?)),
        None => (
            url.strip_prefix("http://").ok_or("only http(s):// URLs")?,
            None,
        ),
    };
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut req = Request {
        host: host.to_owned(),
        path: if path.is_empty() {
            "/".into()
        } else {
            path.to_owned()
        },
        session: None,
        version: String::new(),
    };
    let mut out = Outcome::default();
    let mut conn = Conn::open(host, tls.as_ref())?;
    let mut connections = 1;
    let init = conn.roundtrip(&req, "POST", INITIALIZE.as_bytes())?;
    ok(&init, "initialize")?;
    let value: serde_json::Value = serde_json::from_slice(&init.json).map_err(|e| e.to_string())?;
    req.version = value["result"]["protocolVersion"]
        .as_str()
        .ok_or("no protocolVersion")?
        .to_owned();
    req.session = init.session;
    out.era = format!("handshake {}", req.version);
    let r = conn.roundtrip(&req, "POST", INITIALIZED.as_bytes())?;
    ok(&r, "notifications/initialized")?;
    let r = conn.roundtrip(&req, "POST", TOOLS_LIST.as_bytes())?;
    ok(&r, "tools/list")?;
    if memfind(&r.json, b"\"echo\"").is_none() {
        return Err("the server has no echo tool".into());
    }
    out.ready_ms = crate::since_start_ms();
    announce_ready(&args.clone());

    let message = serde_json::to_string(&args.message()).expect("a string");
    let sent = args.message().len();
    let mut buf = Vec::new();
    let mut id = 2;
    if args.workload != Workload::Startup {
        call(&mut buf, id, "\"warm-up\"");
        let r = conn.roundtrip(&req, "POST", &buf)?;
        ok(&r, "tools/call")?;
        id += 1;
    }
    match args.workload {
        Workload::Startup => {}
        Workload::Idle => {
            std::thread::sleep(std::time::Duration::from_secs(1));
            crate::idle_figures(&mut out);
        }
        Workload::W1 | Workload::W3 => crate::sequential(args, &mut out, || {
            call(&mut buf, id, &message);
            let r = conn.roundtrip(&req, "POST", &buf)?;
            ok(&r, "tools/call")?;
            check_len(&r.json, sent)?;
            id += 1;
            Ok(())
        })?,
        Workload::W2 => {
            let n = args.calls();
            let k = args.inflight.max(1);
            let meter = begin();
            // One connection per call in flight (the first is the one set up above).
            let mut conns = vec![conn];
            while conns.len() < k {
                conns.push(Conn::open(host, tls.as_ref())?);
                connections += 1;
            }
            let mut sent_calls = 0;
            let mut done = 0;
            for c in conns.iter_mut().take(n as usize) {
                call(&mut buf, id + sent_calls, &message);
                c.send(&req, "POST", &buf)?;
                sent_calls += 1;
            }
            let mut fds: Vec<libc::pollfd> = conns
                .iter()
                .map(|c| libc::pollfd {
                    fd: c.fd,
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect();
            while done < n {
                // SAFETY: fds is a valid array of pollfd for its length.
                let ready =
                    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 30_000) };
                if ready <= 0 {
                    return Err("W2: no answer within 30 s".into());
                }
                for (i, fd) in fds.iter_mut().enumerate() {
                    if fd.revents == 0 {
                        continue;
                    }
                    fd.revents = 0;
                    let c = &mut conns[i];
                    if let Some(r) = c.read_some()? {
                        ok(&r, "tools/call")?;
                        check_len(&r.json, sent)?;
                        done += 1;
                        if sent_calls < n {
                            call(&mut buf, id + sent_calls, &message);
                            c.send(&req, "POST", &buf)?;
                            sent_calls += 1;
                        }
                    }
                }
            }
            out.end(meter, n);
            conn = conns.swap_remove(0);
        }
    }
    out.connections = Some(connections);
    // End the session.
    let _ = conn.roundtrip(&req, "DELETE", b"");
    Ok(out)
}
