//! mcpwire's own client over TLS against a TLS server the test scripts record by record (rustls
//! on a thread, on 127.0.0.1, with a throwaway certificate from `testdata/`; the client accepts
//! any certificate, as trust is not what these test): a TLS close followed by junk, a record
//! that does not decrypt after the request was read, a response the client did not ask for
//! held by the TLS layer, a body that lasts until the close cut by a bare end of the socket, a
//! first read of the handshake one byte long. Each must end, typed, within a bound: never a
//! hang, never a request called unsent that the server read, never a stale answer.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_lite::{AsyncReadExt, FutureExt};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};

use super::tests::{post, Client};
use crate::http::backend::{HttpFailure, HttpResponse};
use crate::http::options::{HttpClientOptions, ProxySetting};

type Tls = StreamOwned<ServerConnection, TcpStream>;

fn server_config() -> Arc<ServerConfig> {
    let cert = CertificateDer::from_pem_slice(include_bytes!("testdata/server.pem")).unwrap();
    let key = PrivateKeyDer::from_pem_slice(include_bytes!("testdata/server-key.pem")).unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    Arc::new(config)
}

/// A TLS server on 127.0.0.1: each connection's socket goes to `script` with the connection's
/// number, before any handshake (see [`handshake`]). Its URL, and the connections accepted.
fn serve(script: impl Fn(TcpStream, usize) + Send + Sync + 'static) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "https://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    let accepted = Arc::new(AtomicUsize::new(0));
    let (count, script) = (accepted.clone(), Arc::new(script));
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(sock) = sock else { return };
            let n = count.fetch_add(1, Ordering::SeqCst);
            let script = script.clone();
            std::thread::spawn(move || script(sock, n));
        }
    });
    (url, accepted)
}

/// The handshake, done as any TLS server does it.
fn handshake(sock: TcpStream) -> Tls {
    let mut tls = StreamOwned::new(ServerConnection::new(server_config()).unwrap(), sock);
    while tls.conn.is_handshaking() {
        if tls.conn.complete_io(&mut tls.sock).is_err() {
            break;
        }
    }
    tls
}

/// Reads one request (head, and the body its `Content-Length` gives).
fn read_request(tls: &mut Tls) -> io::Result<Vec<u8>> {
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        if tls.read(&mut byte)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        got.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&got).to_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    tls.read_exact(&mut body)?;
    got.extend(body);
    Ok(got)
}

/// `plaintext` as TLS records, then `then` as it is, in one write of the socket.
fn send_with(tls: &mut Tls, plaintext: &[u8], close: bool, then: &[u8]) {
    tls.conn.writer().write_all(plaintext).unwrap();
    if close {
        tls.conn.send_close_notify();
    }
    let mut out = Vec::new();
    while tls.conn.wants_write() {
        tls.conn.write_tls(&mut out).unwrap();
    }
    out.extend_from_slice(then);
    let _ = tls.sock.write_all(&out);
}

fn backend() -> Client {
    let mut options = HttpClientOptions {
        proxy: ProxySetting::Direct,
        ..HttpClientOptions::default()
    };
    options.tls.danger_accept_invalid_certificates = true;
    Client::new(&options)
}

/// Sends `post(url)` and reads the whole body, within 5 s (a hang fails the test).
fn exchange(backend: &Client, url: &str) -> Result<(u16, io::Result<Vec<u8>>), HttpFailure> {
    let run = async {
        let resp: HttpResponse = backend.send(post(url)).await?;
        let mut body = Vec::new();
        let mut reader = resp.body;
        let read = reader.read_to_end(&mut body).await.map(|_| body);
        Ok((resp.status, read))
    };
    let bound = async {
        async_io::Timer::after(Duration::from_secs(5)).await;
        panic!("the exchange did not end within 5 s");
    };
    smol::block_on(run.or(bound))
}

fn response(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[test]
fn junk_after_the_server_s_tls_close_is_ignored_not_spun_on() {
    let (url, _) = serve(|sock, _| {
        let mut tls = handshake(sock);
        if read_request(&mut tls).is_ok() {
            send_with(&mut tls, &response("\"ok\""), true, &[0x42; 8000]);
        }
        std::thread::sleep(Duration::from_secs(2));
    });
    let (status, body) = exchange(&backend(), &url).unwrap();
    assert_eq!((status, body.unwrap()), (200, b"\"ok\"".to_vec()));
}

#[test]
fn a_record_that_does_not_decrypt_after_the_request_was_read_may_have_run() {
    let (url, _) = serve(|sock, _| {
        let mut tls = handshake(sock);
        if read_request(&mut tls).is_ok() {
            // Application data that was never encrypted with the session's keys.
            let mut record = vec![0x17, 0x03, 0x03, 0x00, 0x20];
            record.extend([0x5a; 32]);
            let _ = tls.sock.write_all(&record);
        }
        std::thread::sleep(Duration::from_secs(1));
    });
    let failure = exchange(&backend(), &url).unwrap_err();
    assert!(!failure.unsent, "the server read the request: {failure:?}");
}

#[test]
fn an_answer_held_by_the_tls_layer_that_was_not_asked_for_is_never_read_as_the_next_one() {
    let (url, accepted) = serve(|sock, n| {
        let mut tls = handshake(sock);
        let mut first = true;
        while read_request(&mut tls).is_ok() {
            if n == 0 && first {
                // A response of exactly one client read (16 KiB), then one nobody asked for,
                // in the same flight.
                let head_len = response("").len() + 4;
                let body = format!("\"{}\"", "x".repeat(16 * 1024 - head_len - 2));
                let mut both = response(&body);
                assert_eq!(both.len(), 16 * 1024);
                both.extend(response("\"evil\""));
                send_with(&mut tls, &both, false, &[]);
                first = false;
            } else {
                send_with(&mut tls, &response("\"second\""), false, &[]);
            }
        }
    });
    let backend = backend();
    let (status, body) = exchange(&backend, &url).unwrap();
    assert_eq!(
        (status, body.unwrap().len()),
        (200, 16 * 1024 - response("").len() - 4)
    );
    let (_, second) = exchange(&backend, &url).unwrap();
    assert_eq!(second.unwrap(), b"\"second\"".to_vec());
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        2,
        "a new connection for the second"
    );
}

#[test]
fn a_body_until_the_close_cut_by_a_bare_end_of_the_socket_is_cut_short() {
    let (url, _) = serve(|sock, n| {
        let mut tls = handshake(sock);
        if read_request(&mut tls).is_ok() {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
            let body = if n == 0 {
                "{\"partial\":"
            } else {
                "{\"whole\":1}"
            };
            // The first ends with a bare end of the socket, the second with a TLS close.
            send_with(&mut tls, format!("{head}{body}").as_bytes(), n != 0, &[]);
            let _ = tls.sock.shutdown(Shutdown::Write);
        }
        std::thread::sleep(Duration::from_secs(1));
    });
    let backend = backend();
    let (status, body) = exchange(&backend, &url).unwrap();
    assert_eq!(status, 200);
    let e = body.unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{e}");
    let (_, whole) = exchange(&backend, &url).unwrap();
    assert_eq!(whole.unwrap(), b"{\"whole\":1}".to_vec());
}

#[test]
fn a_handshake_whose_first_read_is_one_byte_is_still_tls() {
    let (url, _) = serve(|mut sock, _| {
        let mut conn = ServerConnection::new(server_config()).unwrap();
        let mut split = true;
        while conn.is_handshaking() {
            if conn.wants_write() {
                let mut out = Vec::new();
                while conn.wants_write() {
                    conn.write_tls(&mut out).unwrap();
                }
                if std::mem::take(&mut split) {
                    // The server's first flight: its first byte alone, the rest a moment later.
                    let _ = sock.write_all(&out[..1]);
                    let _ = sock.flush();
                    std::thread::sleep(Duration::from_millis(100));
                    let _ = sock.write_all(&out[1..]);
                } else {
                    let _ = sock.write_all(&out);
                }
                continue;
            }
            match conn.read_tls(&mut sock) {
                Ok(0) | Err(_) => return,
                Ok(_) => {
                    if conn.process_new_packets().is_err() {
                        return;
                    }
                }
            }
        }
        let mut tls = StreamOwned::new(conn, sock);
        if read_request(&mut tls).is_ok() {
            send_with(&mut tls, &response("\"ok\""), false, &[]);
        }
        std::thread::sleep(Duration::from_secs(1));
    });
    let (status, body) = exchange(&backend(), &url).unwrap();
    assert_eq!((status, body.unwrap()), (200, b"\"ok\"".to_vec()));
}

#[test]
fn a_response_in_many_small_records_and_over_one_read_s_size_comes_whole_and_the_connection_is_reused(
) {
    // The head in records of 1 to 7 bytes, a body of 40 KiB (over one read's 16 KiB) in records
    // of 1 000, every record in one write of the socket: each read takes the plaintext of as
    // many records as rustls holds, up to the read's size, and the next request goes on the
    // same connection.
    let body: String = (0..40 * 1024)
        .map(|i| (b'a' + (i % 26) as u8) as char)
        .collect();
    let whole = response(&format!("\"{body}\""));
    let (url, accepted) = serve(move |sock, _| {
        let mut tls = handshake(sock);
        while read_request(&mut tls).is_ok() {
            let head_end = whole.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
            let (head, rest) = whole.split_at(head_end);
            let mut out = Vec::new();
            let mut sizes = (1..=7).cycle();
            let mut records: Vec<&[u8]> = Vec::new();
            let mut head = head;
            while !head.is_empty() {
                let (piece, more) = head.split_at(sizes.next().unwrap().min(head.len()));
                records.push(piece);
                head = more;
            }
            records.extend(rest.chunks(1000));
            for record in records {
                tls.conn.writer().write_all(record).unwrap();
                while tls.conn.wants_write() {
                    tls.conn.write_tls(&mut out).unwrap();
                }
            }
            if tls.sock.write_all(&out).is_err() {
                return;
            }
        }
    });
    let backend = backend();
    for _ in 0..2 {
        let (status, read) = exchange(&backend, &url).unwrap();
        let read = read.unwrap();
        assert_eq!(status, 200);
        assert_eq!(read.len(), 40 * 1024 + 2);
        assert_eq!(&read[1..41], &body.as_bytes()[..40]);
        assert_eq!(
            &read[read.len() - 41..read.len() - 1],
            &body.as_bytes()[body.len() - 40..]
        );
    }
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "the connection was reused"
    );
}
