//! mcpwire's own HTTP/1.1 client, for `http://` and `https://` servers, directly or through an
//! HTTP proxy: the request written with one `write`, the response read on the caller's own
//! reactor, no thread in between. Everything else (HTTP/2, SOCKS, an `https://` proxy URL) goes
//! to the backend it wraps (isahc; see [`fallback`], which also tells how ALPN decides the
//! version over TLS). The protocol itself is the core's sans-IO codec
//! ([`mcpwire_core::codec::http1`]); here are the backend, its pool of idle keep-alive
//! connections and the errors in the words the isahc backend uses; one connection, plain or
//! with TLS by rustls over the same socket, is [`conn`]; a response's body, [`body`]; the TCP
//! connect to a host's addresses, [`happy_eyeballs`]. Nothing here knows the driver or the
//! client, and nothing of libcurl's but the fallback it hands what it does not speak itself.
//!
//! At most once: a request is never sent twice by this backend. An idle connection is checked
//! before it is reused (a server that closed it is seen at once and a new one is opened); a
//! connection that fails after the request went out is the caller's to decide about.

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use async_io::{Async, Timer};
use futures_lite::FutureExt;
use mcpwire_core::codec::http1::{self, Http1Error};
use mcpwire_core::error::{redact_url, with_scheme, Hint, HttpErrorKind, TlsFailure};
use mcpwire_core::HttpRequest;

use self::body::Body;
use self::conn::{tls_error_of, tls_failure, Conn, READ_SIZE};
use self::fallback::Fallback;
use self::proxy::{pool_key, Hop};
use crate::future::BoxFuture;
use crate::http::backend::{check_headers, HttpBackend, HttpFailure, HttpResponse, HttpVersion};
use crate::http::options::{HttpClientOptions, HttpVersionChoice};
use crate::http::tls_diagnosis;

mod body;
mod conn;
mod fallback;
mod happy_eyeballs;
mod proxy;
#[cfg(test)]
mod tls_tests;

/// The most idle connections kept per host.
const MAX_IDLE_PER_HOST: usize = 32;

/// Plain `http://` over mcpwire's own HTTP/1.1 client; the rest through isahc, made when
/// first needed (its agent thread is not started for a connection that never uses it).
pub(crate) struct Http1Backend {
    pool: Arc<Pool>,
    connect_timeout: Duration,
    options: HttpClientOptions,
    /// The TLS configuration, made at the first `https://` request.
    tls: OnceLock<Result<Arc<rustls::ClientConfig>, (TlsFailure, String)>>,
    /// libcurl, for what this client does not speak.
    fallback: Arc<Fallback>,
    /// The last URL read (a connection sends most of its requests to one URL).
    last: Mutex<Option<Arc<Target>>>,
}

/// The most buffers kept for reuse, and the largest kept.
const SPARE_BUFFERS: usize = 8;
const SPARE_CAPACITY: usize = 64 * 1024;

/// Idle connections by `host:port`.
#[derive(Default)]
struct Pool {
    idle: Mutex<HashMap<String, Vec<Idle>>>,
    /// Buffers a finished request or response gave back, for the next one: no allocation a
    /// request for its bytes or its response's.
    spare: Mutex<Vec<Vec<u8>>>,
    lifetime: Duration,
    /// The servers (`host:port`) that have answered in HTTP.
    answered: tls_diagnosis::Answered,
}

struct Idle {
    conn: Conn,
    since: Instant,
}

impl Http1Backend {
    /// The backend for `options`, or `None` when they send everything through libcurl.
    pub(crate) fn for_options(options: &HttpClientOptions) -> Option<Self> {
        (!options.http1_via_libcurl).then(|| Http1Backend {
            pool: Arc::new(Pool {
                idle: Mutex::default(),
                spare: Mutex::default(),
                lifetime: options.idle_connection_lifetime,
                answered: Default::default(),
            }),
            connect_timeout: options.connect_timeout,
            options: options.clone(),
            tls: OnceLock::new(),
            fallback: Fallback::new(options),
            last: Mutex::new(None),
        })
    }

    /// Whether this client speaks HTTP/1.1 to `target` itself: over TLS, whatever the choice
    /// (ALPN decides; a server that agrees `h2` is handed to libcurl, see [`fallback`]); in
    /// clear, unless HTTP/2 with prior knowledge is the choice.
    fn wants(&self, target: &Target) -> bool {
        target.tls || self.options.version != HttpVersionChoice::Http2PriorKnowledge
    }

    /// Whether the TLS handshake offers `h2` (the options allow HTTP/2).
    fn offers_http2(&self) -> bool {
        self.options.version != HttpVersionChoice::Http1Only
    }

    /// Whether this client speaks to the server at `url` itself.
    pub(crate) fn speaks_to(&self, url: &str) -> bool {
        self.target(url).is_some()
    }

    /// Makes the TLS configuration now; why it cannot be made.
    pub(crate) fn prepare_tls(&self) -> Result<(), String> {
        self.tls_config().map(drop).map_err(|f| f.message)
    }

    /// The TLS configuration, made at the first `https://` request.
    fn tls_config(&self) -> Result<Arc<rustls::ClientConfig>, HttpFailure> {
        let made = self.tls.get_or_init(|| {
            let pem = (self.options.tls.trust_pem()).map_err(|e| (TlsFailure::Other, e))?;
            let alpn: &[&[u8]] = if self.offers_http2() {
                &[b"h2", b"http/1.1"]
            } else {
                &[b"http/1.1"]
            };
            let tls = &self.options.tls;
            crate::http::tls_config::client_config(tls, pem.as_deref(), alpn).map(Arc::new)
        });
        made.clone()
            .map_err(|(kind, e)| HttpFailure::new(HttpErrorKind::Tls(kind), e, true))
    }
}

/// The parts of an `http://` or `https://` URL this client may handle itself.
struct Target {
    /// The URL it was read from.
    url: String,
    /// Whether it is `https://`.
    tls: bool,
    /// `host:port` as written (the `Host` header).
    authority: String,
    /// The scheme and the authority: the pool's key (a TLS connection and a plain one to one
    /// port are not the same).
    key: String,
    host: String,
    port: u16,
    /// Path and query (`/` when empty).
    path: String,
    /// The HTTP proxy on the way, if any.
    proxy: Option<Arc<Hop>>,
}

impl Target {
    /// The request's target: the path, or the whole URL (without its fragment) for a request
    /// a proxy forwards.
    fn request_target(&self) -> &str {
        match &self.proxy {
            Some(_) if !self.tls => self.url.split('#').next().unwrap_or(&self.url),
            _ => &self.path,
        }
    }

    /// Whether a proxy forwards the request (a plain `http://` one through an HTTP proxy).
    fn forwarded(&self) -> bool {
        self.proxy.is_some() && !self.tls
    }

    /// `host:port`, as a `CONNECT` names it.
    fn host_and_port(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

fn target_of(url: &str) -> Option<Target> {
    let (tls, rest) = match url.strip_prefix("https://") {
        Some(rest) => (true, rest),
        None => (false, url.strip_prefix("http://")?),
    };
    let default_port = if tls { 443 } else { 80 };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    // Credentials in the URL, anything but visible ASCII (a name to encode, a space to
    // escape): libcurl's business.
    let visible = |t: &str| t.bytes().all(|b| (0x21..0x7f).contains(&b));
    if authority.is_empty() || authority.contains(['@', '%']) || !visible(rest) {
        return None;
    }
    let port_of = |p: &str| {
        (!p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse::<u16>().ok())
            .flatten()
    };
    let path = path.split('#').next().unwrap_or("");
    let path = match path {
        "" => "/".to_owned(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_owned(),
    };
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (host, rest) = v6.split_once(']')?;
            host.parse::<std::net::Ipv6Addr>().ok()?;
            let port = match rest.strip_prefix(':') {
                Some(p) => port_of(p)?,
                None if rest.is_empty() => default_port,
                None => return None,
            };
            (host.to_owned(), port)
        }
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_owned(), port_of(p)?),
            None => (authority.to_owned(), default_port),
        },
    };
    let scheme = if tls { "https" } else { "http" };
    Some(Target {
        url: url.to_owned(),
        tls,
        key: format!("{scheme}://{authority}"),
        proxy: None,
        authority: authority.to_owned(),
        host,
        port,
        path,
    })
}

impl Http1Backend {
    /// `url`'s parts when this client handles it, read once for a URL used again.
    fn target(&self, url: &str) -> Option<Arc<Target>> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = last.as_ref().filter(|t| t.url == url) {
            return Some(t.clone());
        }
        let mut target = target_of(url).filter(|t| self.wants(t))?;
        if let Some(route) = self.options.proxy.route(url) {
            // An HTTP proxy is spoken to here; an `https://` proxy URL or SOCKS, by libcurl.
            let hop = Arc::new(Hop::of(route)?);
            target.key = pool_key(&target.key, Some(&hop));
            target.proxy = Some(hop);
        }
        let target = Arc::new(target);
        *last = Some(target.clone());
        Some(target)
    }
}

impl HttpBackend for Http1Backend {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
        // A header HTTP cannot carry fails the request before anything is sent, whichever
        // client would have sent it.
        if let Err(failure) = check_headers(&request) {
            return Box::pin(async move { Err(failure) });
        }
        let Some(target) = self.target(&request.url) else {
            return self.fallback.send(request);
        };
        if target.tls && self.offers_http2() && self.fallback.speaks_http2(&target.key) {
            return self.fallback.send(request);
        }
        let pool = self.pool.clone();
        let connect_timeout = self.connect_timeout;
        let tls = match target.tls.then(|| self.tls_config()).transpose() {
            Ok(tls) => tls,
            Err(failure) => return Box::pin(async move { Err(failure) }),
        };
        let fallback = self.fallback.clone();
        Box::pin(async move {
            let key = target.key.clone();
            match exchange(pool, connect_timeout, tls, target, request).await {
                Exchanged::Done(done) => done,
                // The server agreed `h2`: libcurl speaks it (nothing of the request was sent).
                Exchanged::Http2(request) => {
                    fallback.spoke_http2(&key);
                    fallback.send(request).await
                }
            }
        })
    }
}

/// How an exchange of this client went: done here, or not begun, its server's TLS having
/// agreed `h2` (the request goes to libcurl).
enum Exchanged {
    Done(Result<HttpResponse, HttpFailure>),
    Http2(HttpRequest),
}

impl From<HttpFailure> for Exchanged {
    fn from(failure: HttpFailure) -> Self {
        Exchanged::Done(Err(failure))
    }
}

async fn exchange(
    pool: Arc<Pool>,
    connect_timeout: Duration,
    tls: Option<Arc<rustls::ClientConfig>>,
    target: Arc<Target>,
    request: HttpRequest,
) -> Exchanged {
    match exchange_http1(pool, connect_timeout, tls, target, request).await {
        Ok(done) => done,
        Err(failure) => failure.into(),
    }
}

/// One exchange in HTTP/1.1 (see [`exchange`]).
async fn exchange_http1(
    pool: Arc<Pool>,
    connect_timeout: Duration,
    tls: Option<Arc<rustls::ClientConfig>>,
    target: Arc<Target>,
    request: HttpRequest,
) -> Result<Exchanged, HttpFailure> {
    let method = request.method.as_str();
    let mut out = pool.buffer();
    let forwarded = target.forwarded();
    // The proxy's credentials go to the proxy alone: with a request it forwards, never
    // inside a tunnel.
    let with_proxy_header;
    let headers = match target.proxy.as_ref().and_then(|h| h.header()) {
        Some(header) if forwarded => {
            with_proxy_header = [request.headers.clone(), vec![header]].concat();
            &with_proxy_header
        }
        _ => &request.headers,
    };
    http1::write_request(
        &mut out,
        method,
        target.request_target(),
        &target.authority,
        headers,
        &request.body,
    )
    .map_err(|e| HttpFailure::new(HttpErrorKind::Other, e.to_string(), true))?;
    let with_body = !request.body.is_empty();
    // What a proxy forwards never goes on a reused connection: a proxy may close it without
    // saying so.
    let pooled = if forwarded {
        None
    } else {
        pool.take(&target.key)
    };
    let (mut conn, reused) = match pooled {
        Some(conn) => (conn, true),
        None => (open(&target, connect_timeout, tls).await?, false),
    };
    if conn.agreed_http2() {
        // ALPN chose HTTP/2: not this client's; nothing was sent on the connection.
        pool.recycle(out);
        return Ok(Exchanged::Http2(request));
    }
    drop(request);
    let local_addr = conn.local_addr;
    let mut buf = pool.buffer();
    buf.reserve(READ_SIZE);
    let mut sent = true;
    let head = match conn.write_all(&out).await {
        Ok(()) => {
            pool.recycle(out);
            // Nothing can be there before the server answers.
            conn.expect_nothing();
            match read_head(&mut conn, &mut buf, reused).await {
                Ok(head) => head,
                Err(failure) if reused || target.tls || target.proxy.is_some() => {
                    return Err(failure)
                }
                Err(failure) => {
                    return Err(not_http(failure, &buf, &pool, &target, connect_timeout).await)
                }
            }
        }
        // A server may answer before it has read the whole request (a 413 for a body too
        // big) and close: its answer, when it came, is the response.
        Err(e) => match read_head(&mut conn, &mut buf, reused).await {
            Ok(head) => {
                sent = false;
                head
            }
            Err(_) => {
                return Err(HttpFailure::new(
                    HttpErrorKind::HeadCutShort,
                    format!("the connection failed while sending the request ({e})"),
                    false,
                ))
            }
        },
    };
    if let Some(refusal) = target
        .proxy
        .as_ref()
        .filter(|_| forwarded)
        .and_then(|hop| hop.refused(head.status, &head.headers))
    {
        // The proxy's own answer to a request it was to forward: it went no further.
        return Err(refusal);
    }
    if !reused {
        // A pooled connection's server had answered already.
        pool.answered.insert(&target.key);
    }
    // A connection whose request was not all written is never reused, nor one a proxy
    // forwarded the request on, nor one whose request body the server refused: a server that
    // answers an error may not have read the body, and then closes the connection, often
    // unannounced and only a moment after its answer (as close-after-response relays do), too
    // late for the check at reuse to see.
    let keep_alive = head.keep_alive && sent && !forwarded && !(with_body && head.status >= 400);
    let body = Body::new(conn, buf, head.framing, keep_alive, pool, target);
    Ok(Exchanged::Done(Ok(HttpResponse {
        status: head.status,
        headers: head.headers,
        body: Box::pin(body),
        version: Some(HttpVersion::Http1),
        local_addr,
    })))
}

/// Reads the response head (after any interim `1xx`), leaving what follows it in `buf`.
async fn read_head(
    conn: &mut Conn,
    buf: &mut Vec<u8>,
    reused: bool,
) -> Result<http1::ResponseHead, HttpFailure> {
    let mut reader = http1::HeadReader::default();
    // Whether any byte of a response came (an interim head drained from `buf` counts).
    let mut received = !buf.is_empty();
    loop {
        match reader.read(buf, false) {
            Ok(Some((head, used))) => {
                buf.drain(..used);
                if !head.is_interim() {
                    return Ok(head);
                }
            }
            Ok(None) => match conn.read_more(buf).await {
                Ok(0) => return Err(cut_head(received, buf, reused)),
                Ok(_) => received = true,
                Err(e) => return Err(failed_head(e, received, reused)),
            },
            Err(e) => return Err(bad_head(e)),
        }
    }
}

/// A new connection to a server that has not answered in HTTP yet, cut short before a response
/// head: when what came is a TLS record (a TLS server's alert), or nothing came and the port
/// answers a TLS ClientHello, the server speaks TLS there and the URL is most likely
/// `https://`. A TLS server reads no plain HTTP: the request was not read.
async fn not_http(
    failure: HttpFailure,
    buf: &[u8],
    pool: &Pool,
    target: &Target,
    connect_timeout: Duration,
) -> HttpFailure {
    if failure.kind != HttpErrorKind::HeadCutShort || pool.answered.has(&target.key) {
        return failure;
    }
    if tls_diagnosis::is_tls_record(buf) {
        let url = with_scheme(&redact_url(&target.url), "https");
        let message = "the server answered with a TLS record (an alert), not HTTP";
        return HttpFailure::new(HttpErrorKind::HeadCutShort, message, true)
            .with_hint(Hint::Https { url });
    }
    if !buf.is_empty() {
        return failure;
    }
    tls_diagnosis::port_hint(failure, &target.url, connect_timeout, false).await
}

fn cut_head(received: bool, buf: &[u8], reused: bool) -> HttpFailure {
    if !received && reused {
        return stale("the server had closed it");
    }
    let message = if !received {
        "the server closed the connection without a response"
    } else if buf.is_empty() {
        "the connection closed after an interim response, before the final one"
    } else {
        "the connection closed in the middle of the response head"
    };
    HttpFailure::new(HttpErrorKind::HeadCutShort, message, false)
}

fn failed_head(e: io::Error, received: bool, reused: bool) -> HttpFailure {
    // Under TLS 1.3 a server judges the client certificate after the client's side of the
    // handshake: its refusal is the first thing it sends, and the request was never read.
    // Any other TLS error may come after the server read the request: it may have run.
    let refused_certificate =
        |t: &&rustls::Error| tls_diagnosis::reason_of(t) == TlsFailure::ClientCertificate;
    if let Some(tls) = tls_error_of(&e)
        .filter(|_| !received && !reused)
        .filter(refused_certificate)
    {
        return tls_failure(tls);
    }
    if !received && reused {
        return stale(&format!("it failed: {e}"));
    }
    HttpFailure::new(
        HttpErrorKind::HeadCutShort,
        format!("the connection failed before the response head ({e})"),
        false,
    )
}

/// No byte of a response on a reused connection: a kind of its own, for the connection to
/// decide by the rule of at most once (this backend never sends anything twice itself).
fn stale(how: &str) -> HttpFailure {
    HttpFailure::new(
        HttpErrorKind::StaleConnection,
        format!("the request went on a reused connection and {how} before any response byte"),
        false,
    )
}

fn bad_head(e: Http1Error) -> HttpFailure {
    // The codec's words say which rule broke (over the limit, not HTTP/1.x, a bad length).
    HttpFailure::new(HttpErrorKind::HeadCutShort, e.to_string(), false)
}

/// A new connection to `target`: TCP (to its proxy, if it has one), then through an HTTP proxy
/// for `https://` a `CONNECT` tunnel, then the TLS handshake for `https://` (`tls`); the TCP
/// connect within the connect timeout, and the tunnel and the handshake within another.
async fn open(
    target: &Target,
    timeout: Duration,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> Result<Conn, HttpFailure> {
    let hop = target.proxy.as_deref();
    let (host, port) = match hop {
        Some(hop) => (hop.host.as_str(), hop.port),
        None => (target.host.as_str(), target.port),
    };
    let stream = connect(host, port, timeout).await.map_err(|f| match hop {
        Some(hop) => hop.connect_failed(f),
        None => f,
    })?;
    let mut conn = Conn::plain(stream);
    if hop.is_none() && tls.is_none() {
        return Ok(conn);
    }
    let what = if tls.is_some() {
        "TLS handshake"
    } else {
        "tunnel"
    };
    let setup = async {
        if let Some(hop) = hop.filter(|_| target.tls) {
            hop.tunnel(&mut conn, &target.host_and_port()).await?;
        }
        if let Some(config) = tls {
            conn.start_tls(config, &target.host).await?;
        }
        Ok(())
    };
    let timer = async {
        Timer::after(timeout).await;
        Err(HttpFailure::new(
            HttpErrorKind::ConnectTimeout,
            format!("no {what} within the connect timeout"),
            true,
        ))
    };
    setup.or(timer).await?;
    Ok(conn)
}

/// Connects to the first of the host's addresses that answers, the attempts overlapping as
/// Happy Eyeballs has them (an address that never answers does not hold up the others); the
/// name's resolution and the connects together within `timeout`.
async fn connect(
    host: &str,
    port: u16,
    timeout: Duration,
) -> Result<Async<TcpStream>, HttpFailure> {
    let attempt = async {
        let addrs = resolve(host, port).await?;
        happy_eyeballs::connect(addrs).await.map_err(|e| {
            HttpFailure::new(
                HttpErrorKind::ConnectionRefused,
                format!(
                    "the connection was refused or the host cannot be reached: is the server running, on this port? ({e})"
                ),
                true,
            )
        })
    };
    let timer = async {
        Timer::after(timeout).await;
        Err(HttpFailure::new(
            HttpErrorKind::ConnectTimeout,
            "no connection within the connect timeout",
            true,
        ))
    };
    let stream = attempt.or(timer).await?;
    // Small requests go out at once.
    let _ = stream.get_ref().set_nodelay(true);
    Ok(stream)
}

/// The host's addresses: an IP literal as it is, a name through the system's resolver (on a
/// blocking thread: it may take a while).
async fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>, HttpFailure> {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let host = host.to_owned();
    let found = smol::unblock(move || (host.as_str(), port).to_socket_addrs()).await;
    match found.map(|a| a.collect::<Vec<_>>()) {
        Ok(addrs) if !addrs.is_empty() => Ok(addrs),
        Ok(_) | Err(_) => Err(HttpFailure::new(
            HttpErrorKind::NameResolution,
            "the host name does not resolve",
            true,
        )),
    }
}

impl Pool {
    /// An empty buffer, one given back if there is one.
    fn buffer(&self) -> Vec<u8> {
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        spare.pop().unwrap_or_default()
    }

    /// Keeps `buf` for another request, unless it is large or enough are kept.
    fn recycle(&self, mut buf: Vec<u8>) {
        if buf.capacity() > SPARE_CAPACITY || buf.capacity() == 0 {
            return;
        }
        buf.clear();
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        if spare.len() < SPARE_BUFFERS {
            spare.push(buf);
        }
    }

    /// An idle connection to `authority` that is still open, if there is one.
    fn take(&self, authority: &str) -> Option<Conn> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = idle.get_mut(authority)?;
        while let Some(mut conn) = list.pop() {
            if conn.since.elapsed() < self.lifetime && conn.conn.is_open() {
                return Some(conn.conn);
            }
        }
        None
    }

    fn put(&self, authority: &str, conn: Conn) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if !idle.contains_key(authority) {
            idle.insert(authority.to_owned(), Vec::new());
        }
        let Some(list) = idle.get_mut(authority) else {
            return;
        };
        if list.len() < MAX_IDLE_PER_HOST {
            list.push(Idle {
                conn,
                since: Instant::now(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::options::ProxySetting;
    use futures_lite::AsyncReadExt;
    use mcpwire_core::HttpMethod;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A server on 127.0.0.1 that answers each request of each connection with `answer(n)`
    /// (n counts requests over all connections) and closes the connection after the answer
    /// when `close_after` says so. Returns its URL and the count of connections accepted.
    fn server(
        answer: impl Fn(usize) -> Vec<u8> + Send + Sync + 'static,
        close_after: impl Fn(usize) -> bool + Send + Sync + 'static,
    ) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let (answer, close_after) = (Arc::new(answer), Arc::new(close_after));
        let count = accepted.clone();
        let requests = Arc::new(AtomicUsize::new(0));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { return };
                count.fetch_add(1, Ordering::SeqCst);
                let (answer, close_after, requests) =
                    (answer.clone(), close_after.clone(), requests.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(conn.try_clone().unwrap());
                    let mut conn = conn;
                    loop {
                        let mut length = 0;
                        let mut line = String::new();
                        loop {
                            line.clear();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            if let Some(v) =
                                line.to_ascii_lowercase().strip_prefix("content-length:")
                            {
                                length = v.trim().parse().unwrap();
                            }
                            if line == "\r\n" {
                                break;
                            }
                        }
                        let mut body = vec![0; length];
                        std::io::Read::read_exact(&mut reader, &mut body).unwrap();
                        let n = requests.fetch_add(1, Ordering::SeqCst);
                        conn.write_all(&answer(n)).unwrap();
                        if close_after(n) {
                            return;
                        }
                    }
                });
            }
        });
        (url, accepted)
    }

    pub(super) fn post(url: &str) -> HttpRequest {
        HttpRequest {
            exchange: 0,
            method: HttpMethod::Post,
            url: url.to_owned(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: b"{}".to_vec(),
        }
    }

    fn backend() -> Http1Backend {
        let options = HttpClientOptions {
            proxy: ProxySetting::Direct,
            ..HttpClientOptions::default()
        };
        Http1Backend::for_options(&options).expect("direct http://")
    }

    async fn body_of(resp: HttpResponse) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        let mut reader = resp.body;
        reader.read_to_end(&mut body).await?;
        Ok(body)
    }

    #[test]
    fn sequential_requests_share_one_connection_and_chunked_bodies_arrive_whole() {
        let (url, accepted) = server(
            |n| {
                match n % 2 {
                0 => b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec(),
                _ => b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
                    .to_vec(),
            }
            },
            |_| false,
        );
        let backend = backend();
        smol::block_on(async {
            for i in 0..6 {
                let resp = backend.send(post(&url)).await.unwrap();
                assert_eq!(resp.status, 200);
                let want: &[u8] = if i % 2 == 0 { b"ok" } else { b"abcde" };
                assert_eq!(body_of(resp).await.unwrap(), want);
            }
        });
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "one keep-alive connection"
        );
    }

    #[test]
    fn a_connection_the_server_closed_while_idle_is_not_reused() {
        // The server closes each connection after its answer (an idle timeout in short).
        let (url, accepted) = server(
            |_| b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec(),
            |_| true,
        );
        let backend = backend();
        smol::block_on(async {
            for _ in 0..3 {
                let resp = backend.send(post(&url)).await.unwrap();
                assert_eq!(body_of(resp).await.unwrap(), b"ok");
                // Let the close arrive before the next request.
                Timer::after(Duration::from_millis(50)).await;
            }
        });
        assert_eq!(accepted.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_connection_that_carried_a_refused_request_is_not_reused() {
        // The server refuses the first request with a 400 and closes the connection a moment
        // after its answer without saying so (as servers that did not read the whole request,
        // and close-after-response relays, do): the next request must not go on it.
        let (url, accepted) = server(
            |n| match n {
                0 => b"HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\n\r\nno".to_vec(),
                _ => b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec(),
            },
            |n| {
                if n == 0 {
                    std::thread::sleep(Duration::from_millis(50));
                }
                n == 0
            },
        );
        let backend = backend();
        smol::block_on(async {
            let resp = backend.send(post(&url)).await.unwrap();
            assert_eq!(resp.status, 400);
            assert_eq!(body_of(resp).await.unwrap(), b"no");
            let resp = backend.send(post(&url)).await.unwrap();
            assert_eq!(body_of(resp).await.unwrap(), b"ok");
            // A GET (no body) refused keeps its connection: nothing of it went unread.
            let mut get = post(&url);
            get.method = HttpMethod::Get;
            get.body.clear();
            let resp = backend.send(get).await.unwrap();
            assert_eq!(body_of(resp).await.unwrap(), b"ok");
            let resp = backend.send(post(&url)).await.unwrap();
            assert_eq!(body_of(resp).await.unwrap(), b"ok");
        });
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            2,
            "a new connection after the 400 only"
        );
    }

    #[test]
    fn a_body_until_the_close_and_a_cut_one() {
        let (url, _) = server(
            |n| match n {
                0 => b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it".to_vec(),
                _ => b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort".to_vec(),
            },
            |_| true,
        );
        let backend = backend();
        smol::block_on(async {
            let resp = backend.send(post(&url)).await.unwrap();
            assert_eq!(body_of(resp).await.unwrap(), b"all of it");
            let resp = backend.send(post(&url)).await.unwrap();
            let err = body_of(resp).await.unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "{err}");
        });
    }

    #[test]
    fn nothing_listening_is_refused_and_unsent() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let backend = backend();
        let failure = smol::block_on(backend.send(post(&format!("http://127.0.0.1:{port}/mcp"))))
            .err()
            .expect("refused");
        assert_eq!(failure.kind, HttpErrorKind::ConnectionRefused);
        assert!(failure.unsent);
    }

    /// Header names and values holding each byte 0x00-0xFF as a Rust string: the byte as the
    /// character U+0000-U+00FF (two bytes of UTF-8 from 0x80), the byte through a lossy
    /// conversion (U+FFFD from 0x80), alone and within text; and multi-byte UTF-8.
    fn every_byte() -> Vec<String> {
        let mut out = Vec::new();
        for b in 0u8..=255 {
            let c = char::from(b);
            out.push(format!("a{c}z"));
            out.push(c.to_string());
            out.push(String::from_utf8_lossy(&[b'a', b, b'z']).into_owned());
        }
        for s in [
            "caf\u{e9}",
            "v\r\nX-Injected: 1",
            "\u{65e5}\u{672c}",
            "\u{1F600}",
            "",
            " ",
        ] {
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

    #[test]
    fn a_request_header_with_any_byte_is_sent_or_refused_unsent_never_a_panic() {
        let requests = Arc::new(AtomicUsize::new(0));
        let seen = requests.clone();
        let (url, _) = server(
            move |n| {
                seen.store(n + 1, Ordering::SeqCst);
                b"HTTP/1.1 204 No Content\r\n\r\n".to_vec()
            },
            |_| false,
        );
        let backend = backend();
        let mut cases: Vec<(String, String)> = Vec::new();
        for s in every_byte() {
            cases.push(("X-Test".to_owned(), s.clone()));
            cases.push((s, "v".to_owned()));
        }
        smol::block_on(async {
            for (name, value) in cases {
                let mut request = post(&url);
                request.headers.push((name.clone(), value.clone()));
                let before = requests.load(Ordering::SeqCst);
                let outcome = backend.send(request).await;
                if sendable_name(&name) && sendable_value(&value) {
                    let resp = outcome.unwrap_or_else(|f| panic!("{name:?}: {value:?}: {f:?}"));
                    assert_eq!(resp.status, 204);
                    body_of(resp).await.unwrap();
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
    }

    #[test]
    fn a_bad_request_header_is_refused_before_the_fallback_too() {
        // `https://` goes to isahc; nothing listens on port 1 either way.
        let backend = backend();
        for url in ["https://127.0.0.1:1/mcp", "http://user@127.0.0.1:1/mcp"] {
            let mut request = post(url);
            request.headers.push(("X-Name".into(), "caf\u{e9}".into()));
            let failure = smol::block_on(backend.send(request))
                .err()
                .expect("refused");
            assert!(
                matches!(&failure.kind, HttpErrorKind::Header(e) if e.name() == "X-Name"),
                "{failure:?}"
            );
            assert!(
                failure.unsent && failure.message.contains("X-Name"),
                "{failure:?}"
            );
        }
    }

    /// Response heads holding byte `b` in a header value, a header name, the reason phrase,
    /// the status code and a session id.
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

    #[test]
    fn a_response_head_with_any_byte_is_read_or_refused_never_a_panic() {
        let mut heads: Vec<Vec<u8>> = (0u8..=255).flat_map(odd_heads).collect();
        heads.push(
            b"HTTP/1.1 200 OK\r\nMcp-Session-Id: caf\xc3\xa9\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".to_vec(),
        );
        heads.push(
            b"HTTP/1.1 200 OK\r\nMcp-Session-Id: caf\xe9\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".to_vec(),
        );
        let count = heads.len();
        let heads = Arc::new(heads);
        let answers = heads.clone();
        let (url, _) = server(move |n| answers[n % answers.len()].clone(), |_| true);
        let backend = backend();
        let mut read = 0;
        smol::block_on(async {
            for head in heads.iter().take(count) {
                match backend.send(post(&url)).await {
                    Ok(resp) => {
                        read += 1;
                        assert!((100..=999).contains(&resp.status), "{head:?}");
                        // A value read lossily keeps U+FFFD for its bad bytes: the core judges.
                        let _ = body_of(resp).await;
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
        // The plain heads (b'x' and the like) were read.
        assert!(read >= 5 * 60, "{read} of {count} heads read");
    }

    #[test]
    fn urls_it_leaves_to_libcurl() {
        assert!(target_of("ftp://h/mcp").is_none());
        assert!(target_of("http://user:pw@h/mcp").is_none());
        for odd in [
            "http://h/a b",
            "http://h:+80/",
            "http://[localhost]/",
            "http://h/\u{e9}",
            "http://h:/",
        ] {
            assert!(target_of(odd).is_none(), "{odd}");
        }
        let t = target_of("http://[::1]:8080?x=1").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("::1", 8080, "/?x=1")
        );
        let t = target_of("http://localhost/a/b#frag").unwrap();
        assert_eq!(
            (t.authority.as_str(), t.port, t.path.as_str()),
            ("localhost", 80, "/a/b")
        );
        let t = target_of("https://example.com/mcp").unwrap();
        assert_eq!(
            (t.tls, t.port, t.key.as_str()),
            (true, 443, "https://example.com")
        );
        let direct = HttpClientOptions {
            proxy: ProxySetting::Direct,
            ..HttpClientOptions::default()
        };
        let native = Http1Backend::for_options(&direct).unwrap();
        assert!(native.speaks_to("http://h/mcp") && native.speaks_to("https://h/mcp"));
        // Over TLS, whatever the choice: ALPN decides, and a server that agrees `h2` is handed
        // to libcurl from the handshake on.
        for (version, https) in [
            (HttpVersionChoice::Http2, true),
            (HttpVersionChoice::Negotiate, true),
            (HttpVersionChoice::Http2PriorKnowledge, true),
        ] {
            let options = HttpClientOptions {
                version,
                ..direct.clone()
            };
            let backend = Http1Backend::for_options(&options).unwrap();
            assert_eq!(backend.speaks_to("https://h/mcp"), https, "{version:?}");
            let plain = version != HttpVersionChoice::Http2PriorKnowledge;
            assert_eq!(backend.speaks_to("http://h/mcp"), plain, "{version:?}");
        }
        let through_proxy = HttpClientOptions {
            proxy: ProxySetting::Url {
                url: "http://proxy:3128".into(),
                no_proxy: vec!["near".into()],
            },
            ..HttpClientOptions::default()
        };
        // An HTTP proxy is spoken to here; SOCKS and an `https://` proxy URL, by libcurl.
        let backend = Http1Backend::for_options(&through_proxy).unwrap();
        assert!(backend.speaks_to("http://far/mcp") && backend.speaks_to("https://far/mcp"));
        assert!(backend.speaks_to("https://near/mcp"));
        for proxy in ["socks5h://proxy:1080", "https://proxy:3129"] {
            let options = HttpClientOptions {
                proxy: ProxySetting::Url {
                    url: proxy.into(),
                    no_proxy: vec![],
                },
                ..HttpClientOptions::default()
            };
            let backend = Http1Backend::for_options(&options).unwrap();
            assert!(!backend.speaks_to("http://far/mcp"), "{proxy}");
            assert!(!backend.speaks_to("https://far/mcp"), "{proxy}");
        }
        let off = HttpClientOptions {
            http1_via_libcurl: true,
            ..HttpClientOptions::default()
        };
        assert!(Http1Backend::for_options(&off).is_none());
    }
}
