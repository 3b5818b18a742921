//! Measures the Streamable HTTP client against a running server: sequential calls per second,
//! the client's CPU time per call, and how many TCP connections the calls used.
//!
//! ```sh
//! tests/peers/pyvenv/bin/python tests/peers/py_server.py http --port 8765 [--json] &
//! cargo run --release -p mcpwire --example http_throughput -- http://127.0.0.1:8765/mcp [calls] [era]
//! ```
//!
//! `era` is `auto` (the default: detected), `handshake` or `stateless`.
//!
//! The server is asked `add(1, 2)` each time. Connections are counted from `/proc/net/tcp`:
//! every socket of this machine whose remote port is the server's (open or in TIME_WAIT), so run
//! it against a server port nothing else talks to.

use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::{ConnectOptions, Era, ServerConfig};
use serde_json::json;

fn cpu_time() -> Duration {
    // SAFETY: getrusage writes into the struct we pass and has no other preconditions.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe {
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Sockets whose remote port is `port` (the client ends of connections to the server).
fn connections_to(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter(|l| {
            l.split_whitespace()
                .nth(2)
                .and_then(|remote| remote.split(':').nth(1))
                .and_then(|p| u16::from_str_radix(p, 16).ok())
                == Some(port)
        })
        .count()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let url = args.next().expect("the server's URL");
    let calls: u32 = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let era = match args.next().as_deref() {
        Some("handshake") => Era::Handshake,
        Some("stateless") => Era::Stateless,
        _ => Era::Auto,
    };
    let port: u16 = url
        .rsplit(':')
        .next()
        .and_then(|p| p.split('/').next())
        .and_then(|p| p.parse().ok())
        .expect("a URL with a port");
    future::block_on(async {
        let options = ConnectOptions {
            era,
            ..ConnectOptions::default()
        };
        let client = mcpwire::connect_smol(&ServerConfig::http(&url), options)
            .await
            .unwrap();
        let before = connections_to(port);
        let (t0, c0) = (Instant::now(), cpu_time());
        for _ in 0..calls {
            client
                .call_tool("add", json!({"a": 1, "b": 2}))
                .await
                .unwrap();
        }
        let (wall, cpu) = (t0.elapsed(), cpu_time() - c0);
        let era = client.era().map(|e| e.to_string()).unwrap_or_default();
        println!(
            "{era} era, {calls} sequential calls: {:.0} calls/s, {:.0} µs client CPU per call, {} TCP connections (before the calls: {before})",
            calls as f64 / wall.as_secs_f64(),
            cpu.as_secs_f64() * 1e6 / calls as f64,
            connections_to(port),
        );
        client.close().await;
    });
}
