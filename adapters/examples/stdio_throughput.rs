//! Measures the stdio client against the built-in demo server: sequential calls per second and
//! the client's CPU time per call (driver and caller on one thread, then on smol's
//! multi-threaded executor), and peak memory with many calls in flight.
//!
//! ```sh
//! cargo build --release -p mcpwire --features demo --bin mcpwire-demo-server
//! cargo run --release -p mcpwire --example stdio_throughput -- [legacy|modern] [calls]
//! ```
//!
//! The server is `target/release/mcpwire-demo-server` (override with `MCPWIRE_DEMO_SERVER`, a
//! program that serves the demo on stdin and stdout, without arguments). CPU time is
//! this process's own (`getrusage(RUSAGE_SELF)`), so the server's work is not counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcpwire::{connect, ConnectOptions, Era, ServerConfig};
use serde_json::json;

/// The system allocator, counting allocations and reallocations (every thread's).
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call goes straight to the system allocator with the caller's arguments; the
// counter has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// This process's CPU time and context switches (voluntary and not), and the allocations
/// made so far (all threads).
fn usage() -> (Duration, i64, u64) {
    // SAFETY: getrusage writes into the struct we pass and has no other preconditions.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe {
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    (
        tv(usage.ru_utime) + tv(usage.ru_stime),
        usage.ru_nvcsw + usage.ru_nivcsw,
        ALLOCATIONS.load(Ordering::Relaxed),
    )
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_owned))
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn server() -> ServerConfig {
    let bin = std::env::var("MCPWIRE_DEMO_SERVER")
        .unwrap_or_else(|_| "target/release/mcpwire-demo-server".into());
    ServerConfig::stdio(bin, Vec::<String>::new())
}

fn options(era: Era) -> ConnectOptions {
    ConnectOptions {
        era,
        ..ConnectOptions::default()
    }
}

fn report(label: &str, calls: u32, wall: Duration, since: (Duration, i64, u64)) {
    let (cpu, switches, allocations) = usage();
    let per_call = |n: f64| n / calls as f64;
    println!(
        "{label:<30} {:>7.0} calls/s  {:>5.1} µs client CPU/call  {:>4.1} context switches/call  {:>5.1} allocations/call",
        calls as f64 / wall.as_secs_f64(),
        per_call((cpu - since.0).as_secs_f64() * 1e6),
        per_call((switches - since.1) as f64),
        per_call((allocations - since.2) as f64),
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let era = match args.next().as_deref() {
        Some("legacy") => Era::Handshake,
        _ => Era::Stateless,
    };
    let calls: u32 = args.next().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    // `one`: only the sequential run on one thread (to count its syscalls, say).
    let only_one_thread = args.next().as_deref() == Some("one");
    println!("era {era:?}, {calls} calls per run");

    // Driver and caller on one thread (smol::block_on also drives the IO reactor here, so no
    // message or wake-up crosses a thread).
    let ex = smol::LocalExecutor::new();
    smol::block_on(ex.run(async {
        let (client, driver) = connect(&server(), options(era)).unwrap();
        let driver = ex.spawn(driver);
        client.ready().await.unwrap();
        for _ in 0..200 {
            client
                .call_tool("echo", json!({"message": "warm"}))
                .await
                .unwrap();
        }
        let (t0, c0) = (Instant::now(), usage());
        for _ in 0..calls {
            client
                .call_tool("echo", json!({"message": "hi"}))
                .await
                .unwrap();
        }
        report("sequential, one thread", calls, t0.elapsed(), c0);
        drop(client);
        driver.await;
    }));
    if only_one_thread {
        return;
    }

    // The driver on smol's multi-threaded executor, the caller on this thread.
    smol::block_on(async {
        let client = mcpwire::connect_smol(&server(), options(era))
            .await
            .unwrap();
        for _ in 0..200 {
            client
                .call_tool("echo", json!({"message": "warm"}))
                .await
                .unwrap();
        }
        let (t0, c0) = (Instant::now(), usage());
        for _ in 0..calls {
            client
                .call_tool("echo", json!({"message": "hi"}))
                .await
                .unwrap();
        }
        report("sequential, multi-threaded", calls, t0.elapsed(), c0);

        // 100 in flight at a time.
        let (t0, c0) = (Instant::now(), usage());
        let rounds = calls / 100;
        for _ in 0..rounds {
            let batch: Vec<_> = (0..100)
                .map(|_| {
                    let c = client.clone();
                    smol::spawn(async move {
                        c.call_tool("echo", json!({"message": "hi"})).await.unwrap();
                    })
                })
                .collect();
            for t in batch {
                t.await;
            }
        }
        report(
            "100 in flight, multi-threaded",
            rounds * 100,
            t0.elapsed(),
            c0,
        );

        // 10 000 in flight at once.
        let before = peak_rss_kib();
        let t0 = Instant::now();
        let all: Vec<_> = (0..10_000)
            .map(|_| {
                let c = client.clone();
                smol::spawn(async move {
                    c.call_tool("echo", json!({"message": "hi"})).await.unwrap();
                })
            })
            .collect();
        for t in all {
            t.await;
        }
        println!(
            "10 000 in flight: {:.2} s, peak RSS {} KiB (before: {} KiB)",
            t0.elapsed().as_secs_f64(),
            peak_rss_kib(),
            before
        );
        client.close().await;
    });
}
