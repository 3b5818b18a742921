//! A small loopback HTTP proxy on raw TCP, to see which requests a client sends through a
//! proxy and how.
//!
//! It listens on `127.0.0.1` at a free port and serves each client connection on its own thread:
//!
//! - `CONNECT host:port` opens a tunnel (counted in [`ProxyCounts::tunnels`]): it answers
//!   `200 Connection Established` and copies bytes both ways until either side closes;
//! - an absolute-form request (`POST http://127.0.0.1:PORT/mcp HTTP/1.1`, counted in
//!   [`ProxyCounts::requests`]) is forwarded on a new connection to the origin, in origin form,
//!   with the client's headers except the hop-by-hop ones and with `Connection: close`; the
//!   response is relayed as it comes, byte for byte (so a streamed SSE or chunked body streams
//!   through), with `Connection: close` in its head, and the client connection is closed after
//!   it.
//!
//! The same port also speaks SOCKS5 (no authentication, CONNECT only: counted in
//! [`ProxyCounts::socks_tunnels`]) for `socks5://` and `socks5h://` proxy URLs.
//!
//! A proxy made with [`Proxy::requiring`] wants Basic credentials and answers `407` without
//! them. Only loopback targets (`127.0.0.1`, `localhost`, `[::1]`) are reached; any other gets
//! `403`, as does a CONNECT to a port [`ProxyOptions::connect_ports`] leaves out; a target
//! nothing listens at gets `502`.
//!
//! With [`ProxyOptions::close_unannounced`] it behaves as tinyproxy does: the forwarded
//! response's head goes to the client without `Connection: close` (an HTTP/1.1 head the client
//! may take for a keep-alive connection), and the connection is closed after it all the same;
//! its `407` announces a body longer than the one it sends before it closes.
//!
//! [`ProxyPy`] runs a real forward proxy instead: the pinned `proxy.py`.
//! Each request line is kept ([`Proxy::log`]). Dropping the proxy stops it: the listener and
//! every socket are shut down and the threads joined within about two seconds (a thread that
//! does not end by then is left detached, its sockets shut).
//!
//! ```no_run
//! use mcpwire_tests::proxy::Proxy;
//! let proxy = Proxy::start();
//! println!("{}", proxy.url()); // http://127.0.0.1:PORT
//! assert_eq!(proxy.counts().requests, 0);
//! ```

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::accept::{join_until, Acceptor};

/// How often blocked reads look at the stop flag.
const TICK: Duration = Duration::from_millis(25);
/// How long a drop waits for the connection threads.
const STOP_WAIT: Duration = Duration::from_secs(2);
/// The largest request or response head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// How long connecting to the origin may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one write may stay blocked by a peer that does not read.
const WRITE_PATIENCE: Duration = Duration::from_secs(10);

/// What the proxy has seen so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyCounts {
    /// Client connections accepted.
    pub connections: u64,
    /// `CONNECT` tunnels opened.
    pub tunnels: u64,
    /// Absolute-form requests forwarded (or refused: see [`Proxy::log`]).
    pub requests: u64,
    /// SOCKS5 tunnels opened (`socks5://` or `socks5h://` proxy URLs; no authentication).
    pub socks_tunnels: u64,
    /// Requests and tunnels refused with `407` (or `401`: [`ProxyOptions::asks_with_401`]) for
    /// want of the right credentials (see [`Proxy::requiring`]).
    pub unauthorized: u64,
}

#[derive(Default)]
struct State {
    counts: ProxyCounts,
    /// Each `Proxy-Authorization` value received (`None` when absent), in order.
    authorizations: Vec<Option<String>>,
    log: Vec<String>,
    /// The sockets of each connection being served, by its index.
    sockets: Vec<(usize, TcpStream)>,
    threads: Vec<JoinHandle<()>>,
}

/// How a proxy made with [`Proxy::with_options`] behaves beyond forwarding and tunnelling.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyOptions {
    /// Basic credentials it wants (`user:password`): a request or CONNECT without them gets
    /// `407 Proxy Authentication Required`.
    pub credentials: Option<String>,
    /// Answer as tinyproxy does: a forwarded response's head without `Connection: close`, then
    /// the connection closed anyway; a `407` whose announced body is cut short by the close.
    pub close_unannounced: bool,
    /// The only ports a CONNECT may reach (tinyproxy's `ConnectPort`); any other gets `403`.
    /// Empty: every port.
    pub connect_ports: Vec<u16>,
    /// Ask for the credentials as tinyproxy does: `401 Unauthorized` with
    /// `WWW-Authenticate: Basic realm="Tinyproxy"`, not `407`.
    pub asks_with_401: bool,
}

struct Shared {
    stop: AtomicBool,
    /// The `Proxy-Authorization` value required, if any.
    required: Mutex<Option<String>>,
    options: ProxyOptions,
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Keeps a clone of connection `index`'s socket `s` so that a drop can shut it down.
    fn track(&self, index: usize, s: &TcpStream) {
        if let Ok(clone) = s.try_clone() {
            self.lock().sockets.push((index, clone));
        }
    }

    /// Shuts down connection `index`'s sockets (which ends its helper threads) and forgets them.
    fn finish(&self, index: usize) {
        let mut st = self.lock();
        st.sockets.retain(|(i, s)| {
            if *i == index {
                let _ = s.shutdown(Shutdown::Both);
            }
            *i != index
        });
    }

    fn spawn(self: &Arc<Self>, name: String, f: impl FnOnce() + Send + 'static) {
        if let Ok(t) = std::thread::Builder::new().name(name).spawn(f) {
            self.lock().threads.push(t);
        }
    }
}

/// The proxy; stops when dropped.
pub struct Proxy {
    acceptor: Acceptor,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("addr", &self.addr())
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// Starts the proxy on `127.0.0.1` at a free port.
    pub fn start() -> Proxy {
        Self::with_options(ProxyOptions::default())
    }

    /// Starts a proxy that wants Basic credentials `user:password`: a request or CONNECT
    /// without them (in `Proxy-Authorization`) gets `407 Proxy Authentication Required`.
    pub fn requiring(user_password: &str) -> Proxy {
        Self::with_options(ProxyOptions {
            credentials: Some(user_password.to_owned()),
            ..ProxyOptions::default()
        })
    }

    /// Starts a proxy that behaves as `options` say.
    pub fn with_options(options: ProxyOptions) -> Proxy {
        let required = options.credentials.as_deref().map(basic);
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            required: Mutex::new(required),
            options,
            state: Mutex::new(State::default()),
        });
        let (s, stop) = (shared.clone(), shared.clone());
        let acceptor = Acceptor::start(
            "proxy-accept",
            move || stop.stopped(),
            move |stream, index| accepted(&s, stream, index),
        );
        Proxy { acceptor, shared }
    }

    /// Its address.
    pub fn addr(&self) -> SocketAddr {
        self.acceptor.addr()
    }

    /// Its URL, for a client's proxy setting: `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr())
    }

    /// What it has seen so far.
    pub fn counts(&self) -> ProxyCounts {
        self.shared.lock().counts.clone()
    }

    /// From now on, want Basic credentials `user:password` (`None`: none), as a proxy whose
    /// configuration changed would.
    pub fn set_credentials(&self, user_password: Option<&str>) {
        *self
            .shared
            .required
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = user_password.map(basic);
    }

    /// Each `Proxy-Authorization` value received so far (`None` where there was none), one
    /// per request or CONNECT.
    pub fn authorizations(&self) -> Vec<Option<String>> {
        self.shared.lock().authorizations.clone()
    }

    /// Each request line so far (`CONNECT 127.0.0.1:4433 HTTP/1.1`,
    /// `POST http://127.0.0.1:8000/mcp HTTP/1.1`), with ` -> 403` and the like appended when
    /// the proxy refused it.
    pub fn log(&self) -> Vec<String> {
        self.shared.lock().log.clone()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.acceptor.stop();
        let deadline = Instant::now() + STOP_WAIT;
        loop {
            let (sockets, threads) = {
                let mut st = self.shared.lock();
                (
                    std::mem::take(&mut st.sockets),
                    std::mem::take(&mut st.threads),
                )
            };
            for (_, s) in &sockets {
                let _ = s.shutdown(Shutdown::Both);
            }
            // Past the deadline, whatever is left is detached: its sockets are shut down.
            if threads.is_empty() || !join_until(threads, deadline) {
                break;
            }
        }
    }
}

/// Counts and serves connection `index` on a thread of its own.
fn accepted(shared: &Arc<Shared>, stream: TcpStream, index: usize) {
    shared.lock().counts.connections += 1;
    shared.track(index, &stream);
    let s = shared.clone();
    shared.spawn(format!("proxy-conn-{index}"), move || {
        if let Err(e) = serve(stream, &s, index) {
            if !s.stopped() {
                s.lock().log.push(format!("connection {index}: {e}"));
            }
        }
        s.finish(index);
    });
}

/// A request or response head: its first line and headers, and the bytes read past it.
struct Head {
    line: String,
    headers: Vec<(String, String)>,
    rest: Vec<u8>,
}

/// Reads a head (up to the blank line); `None` when the peer closed before sending one.
fn read_head(stream: &mut TcpStream, shared: &Shared) -> io::Result<Option<Head>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::other("head too large"));
        }
        match stream.read(&mut chunk) {
            Ok(0) if buf.is_empty() => return Ok(None),
            Ok(0) => return Err(io::Error::other("closed in the middle of the head")),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if is_timeout(&e) => {
                if shared.stopped() {
                    return Ok(None);
                }
            }
            Err(e) => return Err(e),
        }
    };
    let text = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or_default().to_owned();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Ok(Some(Head {
        line,
        headers,
        rest: buf[end + 4..].to_vec(),
    }))
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// Writes all of `data`, waiting out timeouts up to [`WRITE_PATIENCE`].
fn write_all(stream: &mut TcpStream, mut data: &[u8], shared: &Shared) -> io::Result<()> {
    let deadline = Instant::now() + WRITE_PATIENCE;
    while !data.is_empty() {
        match stream.write(data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(e) if is_timeout(&e) => {
                if shared.stopped() || Instant::now() >= deadline {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Copies `from` to `to` until `from` ends (or the proxy stops), then shuts `to`'s writing
/// side.
fn pipe(mut from: TcpStream, mut to: TcpStream, shared: &Shared) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if write_all(&mut to, &buf[..n], shared).is_err() {
                    break;
                }
            }
            Err(e) if is_timeout(&e) => {
                if shared.stopped() {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// Whether `authority` (`host:port`) names this machine.
fn loopback(authority: &str) -> bool {
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if port.parse::<u16>().is_ok() => host,
        _ => return false,
    };
    matches!(host, "127.0.0.1" | "localhost" | "[::1]")
}

fn connect_origin(authority: &str, shared: &Shared, index: usize) -> io::Result<TcpStream> {
    let addr = std::net::ToSocketAddrs::to_socket_addrs(authority)?
        .next()
        .ok_or_else(|| io::Error::other("no address"))?;
    let s = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)?;
    let _ = s.set_nodelay(true);
    let _ = s.set_read_timeout(Some(TICK));
    let _ = s.set_write_timeout(Some(TICK));
    shared.track(index, &s);
    Ok(s)
}

fn refuse(client: &mut TcpStream, shared: &Shared, line: &str, status: &str) -> io::Result<()> {
    shared.lock().log.push(format!("{line} -> {status}"));
    let answer = format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    write_all(client, answer.as_bytes(), shared)
}

/// Serves one client connection: one CONNECT tunnel or one forwarded request. Its sockets are
/// shut down afterwards (by the caller), which ends the helper thread copying the other way.
fn serve(mut client: TcpStream, shared: &Arc<Shared>, index: usize) -> io::Result<()> {
    let _ = client.set_read_timeout(Some(TICK));
    let _ = client.set_write_timeout(Some(TICK));
    // A SOCKS5 greeting starts with its version byte; an HTTP request with a letter.
    let mut first = [0u8; 1];
    loop {
        match client.peek(&mut first) {
            Ok(0) => return Ok(()),
            Ok(_) => break,
            Err(e) if is_timeout(&e) => {
                if shared.stopped() {
                    return Ok(());
                }
            }
            Err(e) => return Err(e),
        }
    }
    if first[0] == 5 {
        return socks5(client, shared, index);
    }
    let Some(head) = read_head(&mut client, shared)? else {
        return Ok(());
    };
    let mut parts = head.line.split_whitespace();
    let (method, target) = (
        parts.next().unwrap_or_default().to_owned(),
        parts.next().unwrap_or_default().to_owned(),
    );
    let authorization = head
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("proxy-authorization"))
        .map(|(_, v)| v.clone());
    shared.lock().authorizations.push(authorization.clone());
    let required = shared
        .required
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    if let Some(required) = &required {
        if authorization.as_ref() != Some(required) {
            shared.lock().counts.unauthorized += 1;
            let asks_with_401 = shared.options.asks_with_401;
            let status = if asks_with_401 { 401 } else { 407 };
            shared.lock().log.push(format!("{} -> {status}", head.line));
            let answer = if asks_with_401 {
                "HTTP/1.1 401 Unauthorized\r\n\
                 WWW-Authenticate: Basic realm=\"Tinyproxy\"\r\n\
                 Content-Type: text/html\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            } else if shared.options.close_unannounced {
                // A page announced longer than it is, and the connection closed after it.
                "HTTP/1.1 407 Proxy Authentication Required\r\n\
                 Proxy-Authenticate: Basic realm=\"test proxy\"\r\n\
                 Content-Type: text/html\r\nContent-Length: 1024\r\n\r\n\
                 <html><body>Proxy Authentication Required</body></html>"
            } else {
                "HTTP/1.1 407 Proxy Authentication Required\r\n\
                 Proxy-Authenticate: Basic realm=\"test proxy\"\r\n\
                 Content-Length: 0\r\nConnection: close\r\n\r\n"
            };
            return write_all(&mut client, answer.as_bytes(), shared);
        }
    }

    if method.eq_ignore_ascii_case("CONNECT") {
        let ports = &shared.options.connect_ports;
        let port = target
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse::<u16>().ok());
        let port_refused = !ports.is_empty() && !port.is_some_and(|p| ports.contains(&p));
        if !loopback(&target) || port_refused {
            return refuse(&mut client, shared, &head.line, "403 Forbidden");
        }
        {
            let mut st = shared.lock();
            st.counts.tunnels += 1;
            st.log.push(head.line.clone());
        }
        let mut origin = match connect_origin(&target, shared, index) {
            Ok(o) => o,
            Err(_) => return refuse(&mut client, shared, &head.line, "502 Bad Gateway"),
        };
        write_all(
            &mut client,
            b"HTTP/1.1 200 Connection Established\r\n\r\n",
            shared,
        )?;
        write_all(&mut origin, &head.rest, shared)?;
        let (c, o) = (client.try_clone()?, origin.try_clone()?);
        let s = shared.clone();
        shared.spawn(format!("proxy-tunnel-up-{index}"), move || pipe(c, o, &s));
        pipe(origin, client, shared);
        return Ok(());
    }

    // An absolute-form request: http://authority/path.
    shared.lock().counts.requests += 1;
    let Some(after_scheme) = target.strip_prefix("http://") else {
        return refuse(&mut client, shared, &head.line, "400 Bad Request");
    };
    let (authority, path) = match after_scheme.find('/') {
        Some(i) => after_scheme.split_at(i),
        None => (after_scheme, "/"),
    };
    if !loopback(authority) {
        return refuse(&mut client, shared, &head.line, "403 Forbidden");
    }
    shared.lock().log.push(head.line.clone());
    let mut origin = match connect_origin(authority, shared, index) {
        Ok(o) => o,
        Err(_) => return refuse(&mut client, shared, &head.line, "502 Bad Gateway"),
    };
    let version = parts.next().unwrap_or("HTTP/1.1");
    let mut out = format!("{method} {path} {version}\r\n");
    for (k, v) in &head.headers {
        let hop = [
            "connection",
            "proxy-connection",
            "keep-alive",
            "proxy-authorization",
        ]
        .iter()
        .any(|h| k.eq_ignore_ascii_case(h));
        if !hop {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    write_all(&mut origin, out.as_bytes(), shared)?;
    write_all(&mut origin, &head.rest, shared)?;
    // The rest of the body (and nothing else: the client reads our `Connection: close`).
    let (c, o) = (client.try_clone()?, origin.try_clone()?);
    let s = shared.clone();
    shared.spawn(format!("proxy-body-{index}"), move || pipe(c, o, &s));

    // The response: its head with `Connection: close` (unless it closes unannounced), then
    // the rest as it comes; the connection closes after it either way.
    let Some(answer) = read_head(&mut origin, shared)? else {
        return Ok(());
    };
    let mut out = format!("{}\r\n", answer.line);
    for (k, v) in &answer.headers {
        let hop = ["connection", "keep-alive"]
            .iter()
            .any(|h| k.eq_ignore_ascii_case(h));
        if !hop {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    if !shared.options.close_unannounced {
        out.push_str("Connection: close\r\n");
    }
    out.push_str("\r\n");
    write_all(&mut client, out.as_bytes(), shared)?;
    write_all(&mut client, &answer.rest, shared)?;
    let to_client = client.try_clone()?;
    pipe(origin, to_client, shared);
    Ok(())
}

/// The pinned real forward proxy `proxy.py` (`tests/peers/python-requirements.txt`), run from
/// the Python peers' venv on `127.0.0.1` at a port it picks, with one acceptor (a child process
/// of its own). It forwards plain `http://` requests and opens CONNECT tunnels; with
/// credentials it wants them (`--basic-auth`) and answers `407` without them. It runs in a
/// process group of its own, which gets SIGTERM when it is dropped (SIGKILL after 3 s).
/// Panics with the install command when it is not installed.
pub struct ProxyPy {
    child: std::process::Child,
    port: u16,
    stderr: Arc<Mutex<Vec<String>>>,
    dir: std::path::PathBuf,
}

impl std::fmt::Debug for ProxyPy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyPy")
            .field("pid", &self.child.id())
            .field("port", &self.port)
            .finish()
    }
}

impl ProxyPy {
    /// Starts it; with `credentials` (`user:password`) it wants them. Waits up to 30 s for it
    /// to listen.
    pub fn start(credentials: Option<&str>) -> ProxyPy {
        use std::io::BufRead;
        use std::process::{Command, Stdio};
        let dir = crate::temp_dir("proxy-py");
        std::fs::create_dir_all(&dir).expect("a folder for proxy.py's port file");
        let port_file = dir.join("port");
        let mut command = Command::new(crate::python());
        command
            .args(["-m", "proxy", "--hostname", "127.0.0.1", "--port", "0"])
            .arg("--port-file")
            .arg(&port_file)
            .args(["--num-workers", "1", "--num-acceptors", "1"]);
        if let Some(credentials) = credentials {
            command.args(["--basic-auth", credentials]);
        }
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start proxy.py: {e}"));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let pipe = child.stderr.take().expect("piped stderr");
        let lines = stderr.clone();
        std::thread::spawn(move || {
            for line in io::BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                lines.lock().unwrap_or_else(|e| e.into_inner()).push(line);
            }
        });
        // From here on a panic drops the guard, which stops it.
        let mut proxy = ProxyPy {
            child,
            port: 0,
            stderr,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let written = std::fs::read_to_string(&port_file).unwrap_or_default();
            if let Some(port) = written
                .split_once('\n')
                .and_then(|(p, _)| p.trim().parse().ok())
            {
                proxy.port = port;
                return proxy;
            }
            if let Ok(Some(status)) = proxy.child.try_wait() {
                panic!(
                    "proxy.py exited ({status}) before it listened: is it installed? Run \
                     tests/peers/install-python.sh (the test command does), or set \
                     MCPWIRE_SKIP_PEERS=1 to opt out.\n{}",
                    proxy.stderr().join("\n")
                );
            }
            assert!(
                Instant::now() < deadline,
                "proxy.py did not listen within 30 s:\n{}",
                proxy.stderr().join("\n")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Its port on `127.0.0.1`.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its URL, for a client's proxy setting: `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Its stderr lines so far (its log).
    pub fn stderr(&self) -> Vec<String> {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Its access log so far: one line per request forwarded, tunnel closed or request
    /// refused, for example `127.0.0.1:40312 - CONNECT 127.0.0.1:4433 - 5120 bytes - 80.2ms`.
    pub fn access_log(&self) -> Vec<String> {
        self.stderr()
            .into_iter()
            .filter(|l| l.contains("access_log"))
            .collect()
    }
}

impl Drop for ProxyPy {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            // The group is the proxy and its acceptor: it was made for them alone.
            let group = format!("-{}", self.child.id());
            let signal = |name: &str| {
                let _ = std::process::Command::new("kill")
                    .args([name, "--", group.as_str()])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status();
            };
            signal("-TERM");
            let deadline = Instant::now() + Duration::from_secs(3);
            while !matches!(self.child.try_wait(), Ok(Some(_))) {
                if Instant::now() >= deadline {
                    signal("-KILL");
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Reads exactly `buf.len()` bytes, waiting out read timeouts until the proxy stops.
fn read_exact(stream: &mut TcpStream, buf: &mut [u8], shared: &Shared) -> io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        match stream.read(&mut buf[filled..]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => filled += n,
            Err(e) if is_timeout(&e) => {
                if shared.stopped() {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A SOCKS5 tunnel (RFC 1928): no authentication, CONNECT only, to a loopback target.
fn socks5(mut client: TcpStream, shared: &Arc<Shared>, index: usize) -> io::Result<()> {
    // Greeting: version, method count, methods. We take "no authentication" (0).
    let mut greeting = [0u8; 2];
    read_exact(&mut client, &mut greeting, shared)?;
    let mut methods = vec![0u8; usize::from(greeting[1])];
    read_exact(&mut client, &mut methods, shared)?;
    if !methods.contains(&0) {
        return write_all(&mut client, &[5, 0xff], shared);
    }
    write_all(&mut client, &[5, 0], shared)?;
    // Request: version, command, reserved, address type, address, port.
    let mut request = [0u8; 4];
    read_exact(&mut client, &mut request, shared)?;
    let host = match request[3] {
        1 => {
            let mut a = [0u8; 4];
            read_exact(&mut client, &mut a, shared)?;
            std::net::Ipv4Addr::from(a).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            read_exact(&mut client, &mut len, shared)?;
            let mut name = vec![0u8; usize::from(len[0])];
            read_exact(&mut client, &mut name, shared)?;
            String::from_utf8_lossy(&name).into_owned()
        }
        4 => {
            let mut a = [0u8; 16];
            read_exact(&mut client, &mut a, shared)?;
            format!("[{}]", std::net::Ipv6Addr::from(a))
        }
        _ => return Err(io::Error::other("unknown SOCKS5 address type")),
    };
    let mut port = [0u8; 2];
    read_exact(&mut client, &mut port, shared)?;
    let target = format!("{host}:{}", u16::from_be_bytes(port));
    let line = format!("SOCKS5 CONNECT {target}");
    // Replies: 0 success, 2 not allowed, 5 refused, 7 command not supported.
    let reply = |code: u8| [5, code, 0, 1, 0, 0, 0, 0, 0, 0];
    if request[1] != 1 {
        shared
            .lock()
            .log
            .push(format!("{line} -> unsupported command"));
        return write_all(&mut client, &reply(7), shared);
    }
    if !loopback(&target) {
        shared.lock().log.push(format!("{line} -> not allowed"));
        return write_all(&mut client, &reply(2), shared);
    }
    {
        let mut st = shared.lock();
        st.counts.socks_tunnels += 1;
        st.log.push(line.clone());
    }
    let origin = match connect_origin(&target, shared, index) {
        Ok(o) => o,
        Err(_) => {
            shared.lock().log.push(format!("{line} -> refused"));
            return write_all(&mut client, &reply(5), shared);
        }
    };
    write_all(&mut client, &reply(0), shared)?;
    let (c, o) = (client.try_clone()?, origin.try_clone()?);
    let s = shared.clone();
    shared.spawn(format!("proxy-socks-up-{index}"), move || pipe(c, o, &s));
    pipe(origin, client, shared);
    Ok(())
}

/// The `Proxy-Authorization` value of Basic credentials `user:password`.
fn basic(user_password: &str) -> String {
    format!("Basic {}", base64(user_password.as_bytes()))
}

/// Standard base64 with padding.
fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_pads() {
        assert_eq!(super::base64(b"alice:s3cret"), "YWxpY2U6czNjcmV0");
        assert_eq!(super::base64(b"ab"), "YWI=");
        assert_eq!(super::base64(b"a"), "YQ==");
    }
}
