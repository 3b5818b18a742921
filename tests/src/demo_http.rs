//! The demo server (`mcpwire_core::server`) over Streamable HTTP, in this process: a small
//! HTTP/1.1 server on a free port of 127.0.0.1 that hands each POSTed message to one shared
//! demo server and answers with the response as `application/json` (a notification or a
//! response gets `202`; `GET` and `DELETE` get `405`). Requests the demo server answers later
//! (its `slow` tool) get `504`: this is for calls answered at once. Dropping it stops it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use mcpwire_core::jsonrpc::{parse, Message, Parsed};
use mcpwire_core::server::{DemoConfig, DemoServer};

use crate::accept::Acceptor;

/// The demo server over Streamable HTTP; stopped when dropped.
pub struct DemoHttp {
    acceptor: Acceptor,
    stopped: Arc<AtomicBool>,
}

impl DemoHttp {
    /// Starts it with the demo server's defaults.
    pub fn start() -> DemoHttp {
        let server = Arc::new(Mutex::new(DemoServer::new(DemoConfig::default())));
        let stopped = Arc::new(AtomicBool::new(false));
        let seen = stopped.clone();
        let acceptor = Acceptor::start(
            "demo-http",
            move || seen.load(Ordering::SeqCst),
            move |stream, _| {
                let server = server.clone();
                let _ = std::thread::Builder::new()
                    .name("demo-http-conn".into())
                    .spawn(move || serve(stream, &server));
            },
        );
        DemoHttp { acceptor, stopped }
    }

    /// Its endpoint, `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.acceptor.addr())
    }
}

impl Drop for DemoHttp {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.acceptor.stop();
    }
}

/// Serves one connection's requests until it ends.
fn serve(stream: TcpStream, server: &Mutex<DemoServer>) {
    let Ok(write_half) = stream.try_clone() else {
        return;
    };
    let mut out = write_half;
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let method = line.split(' ').next().unwrap_or("").to_owned();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let (status, answer) = match method.as_str() {
            "POST" => answer(server, &body),
            _ => ("405 Method Not Allowed", None),
        };
        let head = match &answer {
            Some(a) => format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                a.len()
            ),
            None => format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\n\r\n"),
        };
        let mut bytes = head.into_bytes();
        bytes.extend(answer.unwrap_or_default());
        if out.write_all(&bytes).is_err() {
            return;
        }
    }
}

/// The status and body answering one POSTed message.
fn answer(server: &Mutex<DemoServer>, body: &[u8]) -> (&'static str, Option<Vec<u8>>) {
    let Ok(Parsed::Single(message)) = parse(body) else {
        return ("400 Bad Request", None);
    };
    let Message::Request(request) = &message else {
        let mut server = server.lock().unwrap_or_else(|e| e.into_inner());
        server.handle_message(Instant::now(), message);
        while server.poll_transmit().is_some() {}
        return ("202 Accepted", None);
    };
    let id = Some(request.id.clone());
    let mut server = server.lock().unwrap_or_else(|e| e.into_inner());
    server.handle_message(Instant::now(), message);
    let mut found = None;
    while let Some(m) = server.poll_transmit() {
        if let Message::Response(r) = &m {
            if r.id == id {
                found = Some(serde_json::to_vec(&m).expect("a message serializes"));
            }
        }
    }
    match found {
        Some(body) => ("200 OK", Some(body)),
        None => ("504 Gateway Timeout", None),
    }
}
