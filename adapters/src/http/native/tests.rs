//! mcpwire's own client against servers on 127.0.0.1 that answer as scripted: keep-alive and
//! what ends it, bodies framed every way, a refused connection, and every byte in a request's
//! header and a response's head. Each request goes to the target its URL names, with no proxy
//! and HTTP/1.1 alone (what the router gives this client for such a URL).

use std::future::Future;
use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_io::Timer;
use futures_lite::AsyncReadExt;
use mcpwire_core::error::HttpErrorKind;
use mcpwire_core::{HttpMethod, HttpRequest};

use super::{Exchanged, Http1Client, Target};
use crate::http::backend::{HttpFailure, HttpResponse};
use crate::http::options::{HttpClientOptions, ProxySetting};
use crate::http::url_parts::UrlParts;

/// mcpwire's own client as these tests drive it.
pub(super) struct Client(Http1Client);

impl Client {
    /// The client for `options`, which name no proxy and offer HTTP/1.1 alone.
    pub(super) fn new(options: &HttpClientOptions) -> Client {
        Client(Http1Client::new(options))
    }

    /// Sends `request` to the target its URL names.
    pub(super) fn send(
        &self,
        request: HttpRequest,
    ) -> impl Future<Output = Result<HttpResponse, HttpFailure>> {
        let parts = UrlParts::read(&request.url).expect("a URL these tests wrote");
        let target = Arc::new(Target::new(&request.url, &parts, None));
        let exchange = self.0.send(target, request);
        async move {
            match exchange.await {
                Exchanged::Done(done) => done,
                Exchanged::Http2(_) => panic!("h2 agreed, though only http/1.1 was offered"),
            }
        }
    }
}

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
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
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

pub(crate) fn post(url: &str) -> HttpRequest {
    HttpRequest {
        exchange: 0,
        method: HttpMethod::Post,
        url: url.to_owned(),
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: b"{}".to_vec(),
    }
}

fn backend() -> Client {
    let options = HttpClientOptions {
        proxy: ProxySetting::Direct,
        ..HttpClientOptions::default()
    };
    Client::new(&options)
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
