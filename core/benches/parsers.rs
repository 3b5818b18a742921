//! Parser throughput: the SSE and JSONL decoders against `sse-stream`, a `memchr` newline scan and
//! `serde_json` envelope parsing, on generated bodies fed in chunks of 16 KiB, 1460 B, 64 B and
//! 7 B.
//!
//! ```text
//! cargo bench -p mcpwire-core --bench parsers
//! cargo bench -p mcpwire-core --bench parsers -- sse_1k     # one body only
//! ```
//!
//! Three passes:
//! 1. criterion measures every decoder on every body and chunk size, one benchmark after the
//!    other (1 s warm-up, 1.5 s measurement, 10 samples of whole bodies; `--warm-up-time`,
//!    `--measurement-time` and `--sample-size` override them);
//! 2. a paired pass then runs the decoders of each table row in turn, 7 rounds, and takes the
//!    fastest round of each: the ratios printed come from figures taken a fraction of a second
//!    apart, which the drifting load of a shared machine cannot skew the way it skews benchmarks
//!    run seconds apart (criterion's own medians are printed too, at the end);
//! 3. a counting global allocator counts the allocations per event, untimed.
//!
//! The clock is this thread's CPU time (wall time where there is no thread CPU clock), so that
//! time the machine gives to other processes is not counted. A full run takes about six minutes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::convert::Infallible;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use futures_util::Stream;
use mcpwire_core::codec::jsonl::JsonlDecoder;
use mcpwire_core::codec::sse::SseDecoder;
use mcpwire_core::jsonrpc::{self, Parsed};
use serde::Deserialize;
use serde_json::value::RawValue;

// ---------------------------------------------------------------------------------------------
// Counting allocator: counts allocations and reallocations while `COUNTING` is set. When it is
// not set (all timed runs) the only cost is one relaxed load per allocation.

struct CountingAlloc;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicU64 = AtomicU64::new(0);

#[inline]
fn count() {
    if COUNTING.load(Ordering::Relaxed) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which `System` shares.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above; `ptr` came from this allocator, hence from `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Allocations (and reallocations) made by `f`.
fn allocations(f: impl FnOnce()) -> u64 {
    ALLOCS.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    f();
    COUNTING.store(false, Ordering::Relaxed);
    ALLOCS.load(Ordering::Relaxed)
}

// ---------------------------------------------------------------------------------------------
// The clock: CPU time of this thread, so that time the shared machine gives to other processes
// is not counted (wall time on platforms without a thread CPU clock).

/// Criterion measurement of this thread's CPU time, in nanoseconds.
struct CpuTime;

#[cfg(unix)]
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the C library knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(not(unix))]
fn thread_cpu_ns() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    EPOCH
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns() - start
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &Nanos
    }
}

/// Formats nanoseconds, and throughput in decimal units (MB/s, GB/s).
struct Nanos;

impl ValueFormatter for Nanos {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (div, unit) = match typical {
            t if t < 1e3 => (1.0, "ns"),
            t if t < 1e6 => (1e3, "µs"),
            t if t < 1e9 => (1e6, "ms"),
            _ => (1e9, "s"),
        };
        values.iter_mut().for_each(|v| *v /= div);
        unit
    }

    fn scale_throughputs(
        &self,
        typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let (per, what) = match *throughput {
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) => (n as f64, "B/s"),
            Throughput::Elements(n) => (n as f64, "elem/s"),
        };
        // Values are nanoseconds per iteration; rates are per second.
        let rate = per * 1e9 / typical;
        let (div, unit) = match (rate, what) {
            (r, "B/s") if r >= 1e9 => (1e9, "GB/s"),
            (r, "B/s") if r >= 1e6 => (1e6, "MB/s"),
            (_, "B/s") => (1e3, "kB/s"),
            (r, _) if r >= 1e6 => (1e6, "Melem/s"),
            _ => (1.0, "elem/s"),
        };
        values.iter_mut().for_each(|v| *v = per * 1e9 / *v / div);
        unit
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

// ---------------------------------------------------------------------------------------------
// Bodies.

/// A small deterministic generator (xorshift), so every run decodes the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Words of the text payloads: mostly ASCII, with two-, three- and four-byte characters and a few
/// JSON escapes.
const WORDS: &[&str] = &[
    "the",
    "tool",
    "returned",
    "a",
    "result",
    "for",
    "file",
    "line",
    "value",
    "request",
    "server",
    "client",
    "context",
    "resource",
    "token",
    "of",
    "and",
    "with",
    "in",
    "to",
    "héllo",
    "wörld",
    "naïve",
    "café",
    "Grüße",
    "señor",
    "déjà",
    "Ελληνικά",
    "данные",
    "日本語",
    "テキスト",
    "中文字符",
    "한국어",
    "—",
    "…",
    "✓",
    "→",
    "🚀",
    "😀",
    "\\\"quoted\\\"",
    "tab\\tsep",
    "two\\nlines",
    "path\\\\dir",
    "42",
    "3.14",
    "null",
    "true",
    "{braces}",
    "[x]",
];

/// Text of about `len` bytes (JSON string content, escapes included).
fn text(rng: &mut Rng, len: usize) -> String {
    let mut s = String::with_capacity(len + 32);
    while s.len() < len {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(WORDS[rng.below(WORDS.len())]);
    }
    s
}

/// A JSON-RPC message of about `len` bytes: mostly `tools/call` results, some progress
/// notifications (what a server streams).
fn message(rng: &mut Rng, seq: usize, len: usize) -> String {
    if rng.below(5) == 0 {
        let head = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"tok-{seq}","progress":{seq},"total":1000000,"message":""#
        );
        let body = text(rng, len.saturating_sub(head.len() + 3));
        format!("{head}{body}\"}}}}")
    } else {
        let head = format!(
            r#"{{"jsonrpc":"2.0","id":{seq},"result":{{"content":[{{"type":"text","text":""#
        );
        let tail = r#""}],"isError":false}}"#;
        let body = text(rng, len.saturating_sub(head.len() + tail.len()));
        format!("{head}{body}{tail}")
    }
}

/// One generated input: the bytes, and how many events (SSE) or lines (JSONL) they hold.
struct Body {
    name: &'static str,
    what: &'static str,
    bytes: &'static [u8],
    items: usize,
    /// The lines (JSONL) or event data (SSE), pre-split, for the baselines.
    lines: Vec<&'static [u8]>,
}

fn leak(v: Vec<u8>) -> &'static [u8] {
    Box::leak(v.into_boxed_slice())
}

/// An SSE body: each message as one `data` line, then a blank line, with the given line end.
fn sse_body(name: &'static str, what: &'static str, messages: &[String], eol: &str) -> Body {
    let total = messages.iter().map(|m| m.len() + 6 + 2 * eol.len()).sum();
    let mut out = Vec::with_capacity(total);
    for m in messages {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(m.as_bytes());
        out.extend_from_slice(eol.as_bytes());
        out.extend_from_slice(eol.as_bytes());
    }
    Body {
        name,
        what,
        bytes: leak(out),
        items: messages.len(),
        lines: Vec::new(),
    }
}

fn jsonl_body(name: &'static str, what: &'static str, messages: &[String]) -> Body {
    let mut out = Vec::with_capacity(messages.iter().map(|m| m.len() + 1).sum());
    for m in messages {
        out.extend_from_slice(m.as_bytes());
        out.push(b'\n');
    }
    let bytes = leak(out);
    let lines = bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    Body {
        name,
        what,
        bytes,
        items: messages.len(),
        lines,
    }
}

fn messages(rng: &mut Rng, n: usize, len: usize) -> Vec<String> {
    (0..n).map(|i| message(rng, i + 1, len)).collect()
}

fn sse_bodies() -> Vec<Body> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let kib = messages(&mut rng, 10_000, 1024);
    let mib = messages(&mut rng, 16, 1 << 20);
    let tiny: Vec<String> = (0..500_000).map(|i| format!("{{\"seq\":{i}}}")).collect();
    vec![
        sse_body("sse_1k", "10 000 events of ~1 KiB, LF", &kib, "\n"),
        sse_body("sse_1k_crlf", "10 000 events of ~1 KiB, CRLF", &kib, "\r\n"),
        sse_body("sse_1m", "16 events of 1 MiB, LF", &mib, "\n"),
        sse_body("sse_tiny", "500 000 events of ~20 B, LF", &tiny, "\n"),
    ]
}

fn jsonl_bodies() -> Vec<Body> {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    vec![
        jsonl_body(
            "jsonl_1k",
            "10 000 lines of ~1 KiB",
            &messages(&mut rng, 10_000, 1024),
        ),
        jsonl_body(
            "jsonl_120",
            "100 000 lines of ~120 B",
            &messages(&mut rng, 100_000, 120),
        ),
        jsonl_body(
            "jsonl_1m",
            "16 lines of 1 MiB",
            &messages(&mut rng, 16, 1 << 20),
        ),
    ]
}

const CHUNKS: [usize; 4] = [16 * 1024, 1460, 64, 7];

// ---------------------------------------------------------------------------------------------
// The decoders under test, each decoding a whole body. Each returns the number of events or
// lines, checked against the body.

fn sse_ours_ref(body: &[u8], chunk: usize) -> usize {
    let mut dec = SseDecoder::new();
    let mut n = 0;
    let mut drain = |dec: &mut SseDecoder| {
        while let Some(item) = dec.next_event_ref() {
            black_box(item.expect("no diagnostic").data);
            n += 1;
        }
    };
    for c in body.chunks(chunk) {
        dec.push(c);
        drain(&mut dec);
    }
    dec.finish();
    drain(&mut dec);
    n
}

fn sse_ours_owned(body: &[u8], chunk: usize) -> usize {
    let mut dec = SseDecoder::new();
    let mut n = 0;
    let mut drain = |dec: &mut SseDecoder| {
        while let Some(item) = dec.next_event() {
            black_box(item.expect("no diagnostic"));
            n += 1;
        }
    };
    for c in body.chunks(chunk) {
        dec.push(c);
        drain(&mut dec);
    }
    dec.finish();
    drain(&mut dec);
    n
}

/// `sse-stream` over a stream of `Bytes` chunks (pre-split, no copy: `Bytes::from_static`),
/// through `SseStream::from_bytes_stream` (its HTTP-body adapter), polled with a no-op waker: the
/// stream is always ready.
fn sse_stream(body: &'static [u8], chunk: usize) -> usize {
    let chunks = body
        .chunks(chunk)
        .map(|c| Ok::<Bytes, Infallible>(Bytes::from_static(c)));
    drain_sse_stream(pin!(sse_stream::SseStream::from_bytes_stream(
        futures_util::stream::iter(chunks)
    )))
}

/// The same through `SseByteStream::new`, which skips the HTTP-body adapter: what its documentation
/// recommends for a stream of bytes, and faster on small chunks.
fn sse_byte_stream(body: &'static [u8], chunk: usize) -> usize {
    let chunks = body
        .chunks(chunk)
        .map(|c| Ok::<Bytes, Infallible>(Bytes::from_static(c)));
    drain_sse_stream(pin!(sse_stream::SseByteStream::new(
        futures_util::stream::iter(chunks)
    )))
}

fn drain_sse_stream<S>(mut stream: std::pin::Pin<&mut S>) -> usize
where
    S: Stream<Item = Result<sse_stream::Sse, sse_stream::Error>>,
{
    let mut cx = Context::from_waker(Waker::noop());
    let mut n = 0;
    loop {
        match stream.as_mut().poll_next(&mut cx) {
            Poll::Ready(Some(event)) => {
                black_box(event.expect("sse-stream error"));
                n += 1;
            }
            Poll::Ready(None) => return n,
            Poll::Pending => unreachable!("an iterator stream is always ready"),
        }
    }
}

fn memchr_lines(body: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', body).count()
}

fn jsonl_frame(body: &[u8], chunk: usize) -> usize {
    let mut dec = JsonlDecoder::new();
    let mut n = 0;
    let mut drain = |dec: &mut JsonlDecoder| {
        while let Some(line) = dec.next_line() {
            black_box(line.expect("no overlong line"));
            n += 1;
        }
    };
    for c in body.chunks(chunk) {
        dec.push(c);
        drain(&mut dec);
    }
    dec.finish();
    drain(&mut dec);
    n
}

fn jsonl_frame_parse(body: &[u8], chunk: usize) -> usize {
    let mut dec = JsonlDecoder::new();
    let mut n = 0;
    let mut drain = |dec: &mut JsonlDecoder| {
        while let Some(line) = dec.next_line() {
            match jsonrpc::parse_ref(line.expect("no overlong line")) {
                Ok(Parsed::Single(m)) => {
                    black_box(m);
                }
                _ => panic!("not a single message"),
            }
            n += 1;
        }
    };
    for c in body.chunks(chunk) {
        dec.push(c);
        drain(&mut dec);
    }
    dec.finish();
    drain(&mut dec);
    n
}

/// The baseline envelope: what a minimal JSON-RPC reader borrows from a line.
#[derive(Deserialize)]
#[allow(dead_code)] // the fields are read through `black_box`
struct Envelope<'a> {
    jsonrpc: &'a str,
    #[serde(default, borrow)]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    method: Option<&'a str>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

/// `serde_json` parsing pre-split lines (bytes, so UTF-8 is validated as our parser does) into the
/// borrowed envelope.
fn serde_envelope(lines: &[&[u8]]) -> usize {
    for line in lines {
        let env: Envelope<'_> = serde_json::from_slice(line).expect("an envelope");
        black_box(env);
    }
    lines.len()
}

/// `jsonrpc::parse_ref` alone on the same pre-split lines.
fn parse_ref_only(lines: &[&[u8]]) -> usize {
    for line in lines {
        match jsonrpc::parse_ref(line) {
            Ok(Parsed::Single(m)) => {
                black_box(m);
            }
            _ => panic!("not a single message"),
        }
    }
    lines.len()
}

// ---------------------------------------------------------------------------------------------
// Criterion runs, and the table afterwards.

/// One benchmark run: where criterion writes its estimate, and the bytes one iteration decodes.
struct Ran {
    group: &'static str,
    func: &'static str,
    chunk: Option<usize>,
    bytes: u64,
}

static RAN: Mutex<Vec<Ran>> = Mutex::new(Vec::new());

fn bench(
    g: &mut BenchmarkGroup<'_, CpuTime>,
    body: &Body,
    func: &'static str,
    chunk: Option<usize>,
    run: impl Fn() -> usize,
) {
    let expected = body.items;
    g.throughput(Throughput::BytesDecimal(body.bytes.len() as u64));
    let routine = |b: &mut criterion::Bencher<'_, CpuTime>| {
        b.iter(|| assert_eq!(run(), expected, "{} {func}", body.name))
    };
    match chunk {
        Some(c) => g.bench_function(BenchmarkId::new(func, c), routine),
        None => g.bench_function(func, routine),
    };
    RAN.lock().unwrap().push(Ran {
        group: body.name,
        func,
        chunk,
        bytes: body.bytes.len() as u64,
    });
}

fn sse_benches(c: &mut Criterion<CpuTime>, bodies: &[Body]) {
    for body in bodies {
        let bytes = body.bytes;
        let mut g = c.benchmark_group(body.name);
        g.sampling_mode(SamplingMode::Flat);
        bench(&mut g, body, "memchr", None, || memchr_lines(bytes) / 2);
        for chunk in CHUNKS {
            bench(&mut g, body, "mcpwire_ref", Some(chunk), || {
                sse_ours_ref(bytes, chunk)
            });
            bench(&mut g, body, "mcpwire_owned", Some(chunk), || {
                sse_ours_owned(bytes, chunk)
            });
            bench(&mut g, body, "sse_stream", Some(chunk), || {
                sse_stream(bytes, chunk)
            });
            bench(&mut g, body, "sse_byte_stream", Some(chunk), || {
                sse_byte_stream(bytes, chunk)
            });
        }
        g.finish();
    }
}

fn jsonl_benches(c: &mut Criterion<CpuTime>, bodies: &[Body]) {
    for body in bodies {
        let bytes = body.bytes;
        let lines = &body.lines;
        let mut g = c.benchmark_group(body.name);
        g.sampling_mode(SamplingMode::Flat);
        // Figures that make a ratio are measured next to each other: the load of a shared
        // machine drifts over a run.
        for chunk in CHUNKS {
            if chunk == CHUNKS[0] {
                bench(&mut g, body, "memchr", None, || memchr_lines(bytes));
            }
            bench(&mut g, body, "frame", Some(chunk), || {
                jsonl_frame(bytes, chunk)
            });
            if chunk == CHUNKS[0] {
                bench(&mut g, body, "serde_envelope", None, || {
                    serde_envelope(lines)
                });
                bench(&mut g, body, "parse_ref", None, || parse_ref_only(lines));
            }
            bench(&mut g, body, "frame_parse", Some(chunk), || {
                jsonl_frame_parse(bytes, chunk)
            });
        }
        g.finish();
    }
}

/// Where criterion keeps its results: as criterion itself decides, except that without
/// `CARGO_TARGET_DIR` the target directory is found from this executable's path
/// (`<target>/release/deps/parsers-…`).
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return Path::new(&target).join("criterion");
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.join("criterion")))
        .unwrap_or_else(|| PathBuf::from("target/criterion"))
}

/// Median nanoseconds per iteration of one benchmark, if it ran in this process.
fn median_ns(dir: &Path, ran: &Ran, since: SystemTime) -> Option<f64> {
    let mut path = dir.join(ran.group).join(ran.func);
    if let Some(chunk) = ran.chunk {
        path.push(chunk.to_string());
    }
    path.push("new/estimates.json");
    let fresh = std::fs::metadata(&path).ok()?.modified().ok()? >= since;
    if !fresh {
        return None;
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    json["median"]["point_estimate"].as_f64()
}

/// MB/s (10^6 bytes per second) of every benchmark that ran, by (group, func, chunk).
struct Figures(Vec<(&'static str, &'static str, Option<usize>, f64)>);

impl Figures {
    fn get(&self, group: &str, func: &str, chunk: Option<usize>) -> Option<f64> {
        self.0
            .iter()
            .find(|(g, f, c, _)| *g == group && *f == func && *c == chunk)
            .map(|x| x.3)
    }
}

fn mbps(x: Option<f64>) -> String {
    x.map_or_else(|| "–".into(), |v| format!("{v:.0}"))
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}×", a / b),
        _ => "–".into(),
    }
}

fn ratio3(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:.3}×", a / b),
        _ => "–".into(),
    }
}

fn chunk_name(chunk: usize) -> String {
    if chunk >= 1024 && chunk % 1024 == 0 {
        format!("{} KiB", chunk / 1024)
    } else {
        format!("{chunk} B")
    }
}

fn sse_table(f: &Figures, bodies: &[Body], out: &mut String) {
    out.push_str(
        "\n### SSE (MB/s; ratios against `sse-stream` in the same run: A = `SseStream::from_bytes_stream`, \
         B = `SseByteStream::new`)\n\n\
         | body | chunk | mcpwire borrowed | mcpwire owned | sse-stream A | sse-stream B | borrowed / A | owned / A | borrowed / B | owned / B | memchr scan |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for body in bodies {
        let memchr = f.get(body.name, "memchr", None);
        for chunk in CHUNKS {
            let r = f.get(body.name, "mcpwire_ref", Some(chunk));
            let o = f.get(body.name, "mcpwire_owned", Some(chunk));
            let s = f.get(body.name, "sse_stream", Some(chunk));
            let b = f.get(body.name, "sse_byte_stream", Some(chunk));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                body.what,
                chunk_name(chunk),
                mbps(r),
                mbps(o),
                mbps(s),
                mbps(b),
                ratio(r, s),
                ratio(o, s),
                ratio(r, b),
                ratio(o, b),
                mbps(memchr),
            );
        }
    }
    out.push_str("\nmcpwire at 7 B chunks against itself at 16 KiB (target ≥ 0.05):\n\n");
    for body in bodies {
        let r = ratio3(
            f.get(body.name, "mcpwire_ref", Some(7)),
            f.get(body.name, "mcpwire_ref", Some(16 * 1024)),
        );
        let o = ratio3(
            f.get(body.name, "mcpwire_owned", Some(7)),
            f.get(body.name, "mcpwire_owned", Some(16 * 1024)),
        );
        let _ = writeln!(out, "- {}: borrowed {r}, owned {o}", body.what);
    }
}

/// `paired`: the baselines of each row were measured with it (under its chunk size).
fn jsonl_table(f: &Figures, bodies: &[Body], out: &mut String, paired: bool) {
    out.push_str(
        "\n### JSONL (MB/s; framing against a `memchr` scan of the same bytes; framing + `parse_ref` \
         against `serde_json` parsing the pre-split lines into a borrowed envelope, and against \
         `parse_ref` alone on the pre-split lines)\n\n\
         | body | chunk | framing | framing / memchr | framing + parse_ref | time / serde envelope | time / parse_ref alone |\n\
         |---|---|---:|---:|---:|---:|---:|\n",
    );
    for body in bodies {
        for chunk in CHUNKS {
            let base = paired.then_some(chunk);
            let memchr = f.get(body.name, "memchr", base);
            let serde = f.get(body.name, "serde_envelope", base);
            let parse = f.get(body.name, "parse_ref", base);
            let frame = f.get(body.name, "frame", Some(chunk));
            let fp = f.get(body.name, "frame_parse", Some(chunk));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                body.what,
                chunk_name(chunk),
                mbps(frame),
                ratio(frame, memchr),
                mbps(fp),
                // Time ratios are inverse throughput ratios.
                ratio(serde, fp),
                ratio(parse, fp),
            );
        }
    }
    out.push_str(
        "\n| body | memchr scan | serde envelope (pre-split) | parse_ref (pre-split) |\n|---|---:|---:|---:|\n",
    );
    for body in bodies {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            body.what,
            mbps(f.get(body.name, "memchr", None)),
            mbps(f.get(body.name, "serde_envelope", None)),
            mbps(f.get(body.name, "parse_ref", None)),
        );
    }
}

/// Allocations per event (SSE) or per line (JSONL), counted in an untimed pass: in the steady
/// state (decoding the body twice over in one stream, less decoding it once: what one more body
/// costs once the buffers have grown) and, in brackets, over the first body alone.
fn allocation_table(sse: &[&Body], jsonl: &[&Body], out: &mut String) {
    out.push_str(
        "\n### Allocations per event / line (allocations + reallocations; steady state, and in brackets the first body including buffer growth)\n\n\
         | body | chunk | mcpwire borrowed | mcpwire owned | sse-stream A | sse-stream B |\n|---|---|---:|---:|---:|---:|\n",
    );
    for body in sse {
        let twice = leak([body.bytes, body.bytes].concat());
        for chunk in [16 * 1024, 7] {
            let per = |f: &dyn Fn(&'static [u8]) -> usize| {
                let once = allocations(|| assert_eq!(f(body.bytes), body.items));
                let both = allocations(|| assert_eq!(f(twice), 2 * body.items));
                let n = body.items as f64;
                format!(
                    "{:.3} ({:.3})",
                    both.saturating_sub(once) as f64 / n,
                    once as f64 / n
                )
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                body.what,
                chunk_name(chunk),
                per(&|b| sse_ours_ref(b, chunk)),
                per(&|b| sse_ours_owned(b, chunk)),
                per(&|b| sse_stream(b, chunk)),
                per(&|b| sse_byte_stream(b, chunk)),
            );
        }
    }
    out.push_str("\n| body | chunk | JSONL framing | framing + parse_ref |\n|---|---|---:|---:|\n");
    for body in jsonl {
        let twice = leak([body.bytes, body.bytes].concat());
        for chunk in [16 * 1024, 7] {
            let per = |f: &dyn Fn(&'static [u8]) -> usize| {
                let once = allocations(|| assert_eq!(f(body.bytes), body.items));
                let both = allocations(|| assert_eq!(f(twice), 2 * body.items));
                let n = body.items as f64;
                format!(
                    "{:.3} ({:.3})",
                    both.saturating_sub(once) as f64 / n,
                    once as f64 / n
                )
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                body.what,
                chunk_name(chunk),
                per(&|b| jsonl_frame(b, chunk)),
                per(&|b| jsonl_frame_parse(b, chunk)),
            );
        }
    }
}

/// One decoder run over a whole body, for the paired pass: what it is, and the run.
type Run<'a> = (&'static str, Option<usize>, &'a dyn Fn() -> usize);

/// Runs `runs` in turn, `ROUNDS` times, rotating the order each round, and gives each one's
/// fastest CPU time per body (interference from the rest of a shared machine only ever adds
/// time). Figures that make a ratio are taken within the same rounds, a fraction of a second
/// apart, so that the machine's load, which drifts over seconds, weighs on both alike. Each timed run follows an untimed run of the same decoder, so that it finds the
/// body and its own buffers in the caches, as criterion's back-to-back iterations do; a run
/// shorter than 20 ms is repeated to last about that long.
fn paired(body: &Body, runs: &[Run<'_>], figures: &mut Figures) {
    const ROUNDS: usize = 7;
    let reps: Vec<u64> = runs
        .iter()
        .map(|(_, _, run)| {
            let start = thread_cpu_ns();
            assert_eq!(run(), body.items, "{}", body.name);
            (20_000_000 / (thread_cpu_ns() - start).max(1)).clamp(1, 100)
        })
        .collect();
    let mut times = vec![Vec::with_capacity(ROUNDS); runs.len()];
    for round in 0..ROUNDS {
        for k in 0..runs.len() {
            let i = (k + round) % runs.len();
            black_box(runs[i].2());
            let start = thread_cpu_ns();
            for _ in 0..reps[i] {
                black_box(runs[i].2());
            }
            times[i].push((thread_cpu_ns() - start) / reps[i]);
        }
    }
    for ((func, chunk, _), t) in runs.iter().zip(times) {
        let ns = t.into_iter().min().expect("rounds") as f64;
        figures
            .0
            .push((body.name, func, *chunk, body.bytes.len() as f64 / ns * 1e3));
    }
}

fn paired_sse(body: &Body, figures: &mut Figures) {
    let bytes = body.bytes;
    let memchr = || memchr_lines(bytes) / 2;
    paired(body, &[("memchr", None, &memchr)], figures);
    for chunk in CHUNKS {
        let r = || sse_ours_ref(bytes, chunk);
        let o = || sse_ours_owned(bytes, chunk);
        let s = || sse_stream(bytes, chunk);
        let b = || sse_byte_stream(bytes, chunk);
        let runs: [Run<'_>; 4] = [
            ("mcpwire_ref", Some(chunk), &r),
            ("mcpwire_owned", Some(chunk), &o),
            ("sse_stream", Some(chunk), &s),
            ("sse_byte_stream", Some(chunk), &b),
        ];
        paired(body, &runs, figures);
    }
}

fn paired_jsonl(body: &Body, figures: &mut Figures) {
    let bytes = body.bytes;
    let lines = &body.lines;
    let memchr = || memchr_lines(bytes);
    let serde = || serde_envelope(lines);
    let parse = || parse_ref_only(lines);
    let runs: [Run<'_>; 3] = [
        ("memchr", None, &memchr),
        ("serde_envelope", None, &serde),
        ("parse_ref", None, &parse),
    ];
    paired(body, &runs, figures);
    for chunk in CHUNKS {
        let f = || jsonl_frame(bytes, chunk);
        let fp = || jsonl_frame_parse(bytes, chunk);
        // The baselines again, in the same rounds as the framing they are set against.
        let mut per_chunk = Figures(Vec::new());
        let runs: [Run<'_>; 5] = [
            ("frame", Some(chunk), &f),
            ("frame_parse", Some(chunk), &fp),
            ("memchr", Some(chunk), &memchr),
            ("serde_envelope", Some(chunk), &serde),
            ("parse_ref", Some(chunk), &parse),
        ];
        paired(body, &runs, &mut per_chunk);
        figures.0.extend(per_chunk.0);
    }
}

fn main() {
    let since = SystemTime::now();
    let dir = criterion_dir();
    let sse = sse_bodies();
    let jsonl = jsonl_bodies();
    for body in &jsonl {
        assert_eq!(body.lines.len(), body.items);
    }

    let mut c = Criterion::default()
        .with_measurement(CpuTime)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_millis(1500))
        .sample_size(10)
        .output_directory(&dir)
        .configure_from_args();
    sse_benches(&mut c, &sse);
    jsonl_benches(&mut c, &jsonl);
    c.final_summary();

    let ran = std::mem::take(&mut *RAN.lock().unwrap());
    let criterion_figures = Figures(
        ran.iter()
            .filter_map(|r| {
                let ns = median_ns(&dir, r, since)?;
                Some((r.group, r.func, r.chunk, r.bytes as f64 / ns * 1e3))
            })
            .collect(),
    );
    if criterion_figures.0.is_empty() {
        // `--test`, `--list`, or a filter that matched nothing: no figures to show.
        return;
    }
    // The paired pass, for the bodies criterion measured in this run.
    let measured = |body: &Body| criterion_figures.0.iter().any(|f| f.0 == body.name);
    let mut figures = Figures(Vec::new());
    let paired_start = std::time::Instant::now();
    for body in sse.iter().filter(|b| measured(b)) {
        paired_sse(body, &mut figures);
    }
    for body in jsonl.iter().filter(|b| measured(b)) {
        paired_jsonl(body, &mut figures);
    }
    eprintln!("paired pass: {:.1} s", paired_start.elapsed().as_secs_f64());

    let mut out = String::from(
        "\n## Figures of this run\n\nMB/s = 10^6 bytes per second of CPU time of the decoding \
         thread. Main tables: the paired pass (the decoders of a row run in turn, 7 rounds, the \
         fastest of each). Criterion's own medians follow at the end.\n",
    );
    out.push_str("\n| body | bytes | events / lines | bytes not ASCII |\n|---|---:|---:|---:|\n");
    for body in sse.iter().chain(&jsonl) {
        let wide = body.bytes.iter().filter(|b| !b.is_ascii()).count();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.0} % |",
            body.what,
            body.bytes.len(),
            body.items,
            100.0 * wide as f64 / body.bytes.len() as f64
        );
    }
    sse_table(&figures, &sse, &mut out);
    jsonl_table(&figures, &jsonl, &mut out, true);
    let sse_measured: Vec<&Body> = sse.iter().filter(|b| measured(b)).collect();
    let jsonl_measured: Vec<&Body> = jsonl.iter().filter(|b| measured(b)).collect();
    allocation_table(&sse_measured, &jsonl_measured, &mut out);
    out.push_str(
        "\n## Criterion's medians (each benchmark measured on its own, one after the other)\n",
    );
    sse_table(&criterion_figures, &sse, &mut out);
    jsonl_table(&criterion_figures, &jsonl, &mut out, false);
    println!("{out}");
}
