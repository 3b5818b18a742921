//! One exchange of mcpwire's own client in HTTP/1.1: the request written into one buffer
//! and sent with one `write`, on a pooled connection or a new one; the response head read
//! (after any interim `1xx`); the body handed on ([`Body`]). Its failures in its own words,
//! each saying whether the request surely never reached the server: a head cut short, a
//! stale pooled connection, a port that speaks TLS to a plain request.
//!
//! At most once: a request is never sent twice here. A connection that fails after the request
//! went out is the caller's to decide about.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use mcpwire_core::codec::http1::{self, Http1Error};
use mcpwire_core::error::{redact_url, with_scheme, Hint, HttpErrorKind, TlsFailure};
use mcpwire_core::HttpRequest;

use super::body::Body;
use super::conn::{tls_error_of, tls_failure, Conn, READ_SIZE};
use super::open::open;
use super::pool::Pool;
use super::target::Target;
use crate::http::backend::{HttpFailure, HttpResponse, HttpVersion};
use crate::http::tls_diagnosis;
use crate::runtime::Runtime;

/// How an exchange of this client went: done here, or not begun, its server's TLS having
/// agreed `h2` (the request is given back, unsent, for the router to send where HTTP/2 is
/// spoken).
pub(crate) enum Exchanged {
    /// The response, or why there is none.
    Done(Result<HttpResponse, HttpFailure>),
    /// The server's TLS agreed `h2`: nothing of the request was sent. (Without libcurl, `h2`
    /// is never offered, and the router fails the request unsent.)
    Http2(#[cfg_attr(not(feature = "libcurl"), allow(dead_code))] HttpRequest),
}

impl From<HttpFailure> for Exchanged {
    fn from(failure: HttpFailure) -> Self {
        Exchanged::Done(Err(failure))
    }
}

/// How a new connection is opened: on which runtime, within which timeout, with which TLS
/// configuration (`https://`).
pub(super) struct How {
    pub(super) runtime: Runtime,
    pub(super) connect_timeout: Duration,
    pub(super) tls: Option<Arc<rustls::ClientConfig>>,
}

/// One exchange with `target`: on an idle connection of `pool` or a new one (opened as `how`
/// says).
pub(super) async fn exchange(
    pool: Arc<Pool>,
    how: How,
    target: Arc<Target>,
    request: HttpRequest,
) -> Exchanged {
    match exchange_http1(pool, how, target, request).await {
        Ok(done) => done,
        Err(failure) => failure.into(),
    }
}

/// One exchange in HTTP/1.1 (see [`exchange`]).
async fn exchange_http1(
    pool: Arc<Pool>,
    how: How,
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
        None => (
            open(&how.runtime, &target, how.connect_timeout, how.tls.clone()).await?,
            false,
        ),
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
                Err(failure) => return Err(not_http(failure, &buf, &pool, &target, &how).await),
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
    how: &How,
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
    let timeout = how.connect_timeout;
    tls_diagnosis::port_hint(&how.runtime, failure, &target.url, timeout, false).await
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
