//! What mcpwire's `tracing` instrumentation costs a call: "no cost when no one listens", and the
//! cost when a subscriber records everything.
//!
//! The mcpwire client binary (`mcpwire-bench-mcpwire`) is built three times (`tracing_cost.sh`):
//! without mcpwire's `tracing` feature (`--no-default-features`), with it (the default), and
//! with `opentelemetry` (`--features otel`). Each copy runs W1 (sequential `tools/call echo`)
//! with one of the subscribers [`install`] sets from `MCPWIRE_BENCH_SUBSCRIBER`:
//!
//! - `none`: no subscriber (every span disabled);
//! - `record`: [`Recorder`], which keeps every span of mcpwire's targets (every level) with all
//!   its fields, records, links and events, in memory;
//! - `otel` (the `otel` build): `tracing-opentelemetry` into the SDK's tracer provider with an
//!   in-memory span exporter (exported at each span's end), and the SDK's meter provider with
//!   an in-memory metric exporter as the global one (the conventions' histograms).
//!
//! [`main`] (`mcpwire-bench tracing-cost`) runs every variant against `min` (stdio) and
//! `python-http`, interleaved in batches, each run a process of its own, in three passes: a
//! timing pass (CPU µs a call), the counting pass (allocations and syscalls a call, as the
//! runner's), and an instruction pass under Valgrind's callgrind, which counts the user-space
//! instructions of every thread of the client inside the measured window only (the window
//! switches callgrind's instrumentation on and off with its client requests, [`window_start`]
//! and [`window_end`], which do nothing outside Valgrind). Valgrind, because the machines this
//! runs on may have no hardware counters (a virtual machine without a PMU: `perf stat -e
//! instructions:u` says "not supported").

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::measure::COUNT_SYSCALLS_ENV;
use crate::servers::HttpServer;
use crate::Server;

/// The environment variable naming the subscriber a client installs: `none`, `record`, `otel`.
pub const SUBSCRIBER_ENV: &str = "MCPWIRE_BENCH_SUBSCRIBER";

/// Installs the subscriber `MCPWIRE_BENCH_SUBSCRIBER` names, as the global default, before the
/// client connects. Exits the process when the build cannot give it.
pub fn install() {
    let wanted = std::env::var(SUBSCRIBER_ENV).unwrap_or_default();
    match wanted.as_str() {
        "" | "none" => {}
        #[cfg(feature = "tracing")]
        "record" => {
            tracing::subscriber::set_global_default(recorder::Recorder::default())
                .expect("no subscriber yet");
        }
        #[cfg(feature = "otel")]
        "otel" => otel::install(),
        other => {
            eprintln!("{SUBSCRIBER_ENV}={other}: not in this build");
            std::process::exit(2);
        }
    }
}

/// A Valgrind client request (`VALGRIND_DO_CLIENT_REQUEST` of `valgrind.h`, amd64): under
/// Valgrind the tool runs `request`; natively the sequence does nothing.
#[cfg(target_arch = "x86_64")]
fn client_request(request: u64) {
    let args: [u64; 6] = [request, 0, 0, 0, 0, 0];
    let mut result: u64 = 0;
    // SAFETY: Valgrind's "special instruction" sequence: four rotations of rdi that add up to
    // 128 bits (rdi is left as it was) and `xchg rbx, rbx` (no change); Valgrind recognizes it
    // and reads the request from the array `rax` points to (which lives across the asm), the
    // default result (0) in rdx. Natively nothing changes but the flags, which are not kept.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") result,
            in("rax") args.as_ptr(),
            options(nostack),
        );
    }
    let _ = result;
}

#[cfg(not(target_arch = "x86_64"))]
fn client_request(_request: u64) {}

/// callgrind's requests (`callgrind.h`): `VG_USERREQ_TOOL_BASE('C','T')` + 4 and + 5.
const CALLGRIND_START_INSTRUMENTATION: u64 = ((b'C' as u64) << 24 | (b'T' as u64) << 16) + 4;
const CALLGRIND_STOP_INSTRUMENTATION: u64 = CALLGRIND_START_INSTRUMENTATION + 1;

/// The measured window opens: under callgrind (`--instr-atstart=no`), instructions are counted
/// from here, on every thread.
pub fn window_start() {
    client_request(CALLGRIND_START_INSTRUMENTATION);
}

/// The measured window closes: callgrind stops counting.
pub fn window_end() {
    client_request(CALLGRIND_STOP_INSTRUMENTATION);
}

#[cfg(feature = "tracing")]
mod recorder {
    //! A subscriber that keeps everything mcpwire's targets emit: every span (its fields,
    //! every record, its links, how often it was entered, when it closed) and every event with
    //! its fields, all kept in memory until the process ends.

    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::fmt::Debug;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Mutex;

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::subscriber::Interest;
    use tracing::{Event, Metadata, Subscriber};

    /// Fields as their names and `Debug` text.
    #[derive(Default)]
    struct Fields(Vec<(&'static str, String)>);

    impl Visit for Fields {
        fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
            self.0.push((field.name(), format!("{value:?}")));
        }
        fn record_str(&mut self, field: &Field, value: &str) {
            self.0.push((field.name(), value.to_owned()));
        }
    }

    /// One span as recorded.
    #[allow(dead_code)]
    struct Span {
        name: &'static str,
        parent: Option<u64>,
        fields: Fields,
        follows: Vec<u64>,
        entered: u64,
        refs: usize,
        closed: bool,
    }

    /// One event as recorded.
    #[allow(dead_code)]
    struct Recorded {
        span: Option<u64>,
        fields: Fields,
    }

    #[derive(Default)]
    pub struct Recorder {
        next: AtomicU64,
        spans: Mutex<HashMap<u64, Span>>,
        events: Mutex<Vec<Recorded>>,
    }

    thread_local! {
        /// The spans entered on this thread, innermost last.
        static ENTERED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    }

    fn current() -> Option<u64> {
        ENTERED.with(|e| e.borrow().last().copied())
    }

    fn ours(metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("mcpwire")
    }

    impl Subscriber for Recorder {
        fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
            if ours(metadata) {
                Interest::always()
            } else {
                Interest::never()
            }
        }

        fn enabled(&self, metadata: &Metadata<'_>) -> bool {
            ours(metadata)
        }

        fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
            Some(tracing::level_filters::LevelFilter::TRACE)
        }

        fn new_span(&self, attrs: &Attributes<'_>) -> Id {
            let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
            let mut fields = Fields::default();
            attrs.record(&mut fields);
            let parent = match (attrs.is_root(), attrs.parent()) {
                (true, _) => None,
                (false, Some(p)) => Some(p.into_u64()),
                (false, None) => current(),
            };
            let span = Span {
                name: attrs.metadata().name(),
                parent,
                fields,
                follows: Vec::new(),
                entered: 0,
                refs: 1,
                closed: false,
            };
            self.spans.lock().unwrap().insert(id, span);
            Id::from_u64(id)
        }

        fn record(&self, span: &Id, values: &Record<'_>) {
            if let Some(s) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
                values.record(&mut s.fields);
            }
        }

        fn record_follows_from(&self, span: &Id, follows: &Id) {
            if let Some(s) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
                s.follows.push(follows.into_u64());
            }
        }

        fn event(&self, event: &Event<'_>) {
            let mut fields = Fields::default();
            event.record(&mut fields);
            let span = match (event.is_root(), event.parent()) {
                (true, _) => None,
                (false, Some(p)) => Some(p.into_u64()),
                (false, None) => current(),
            };
            self.events.lock().unwrap().push(Recorded { span, fields });
        }

        fn enter(&self, span: &Id) {
            ENTERED.with(|e| e.borrow_mut().push(span.into_u64()));
            if let Some(s) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
                s.entered += 1;
            }
        }

        fn exit(&self, span: &Id) {
            ENTERED.with(|e| {
                let mut e = e.borrow_mut();
                if let Some(at) = e.iter().rposition(|&id| id == span.into_u64()) {
                    e.remove(at);
                }
            });
        }

        fn clone_span(&self, id: &Id) -> Id {
            if let Some(s) = self.spans.lock().unwrap().get_mut(&id.into_u64()) {
                s.refs += 1;
            }
            id.clone()
        }

        fn try_close(&self, id: Id) -> bool {
            let mut spans = self.spans.lock().unwrap();
            let Some(s) = spans.get_mut(&id.into_u64()) else {
                return false;
            };
            s.refs = s.refs.saturating_sub(1);
            s.closed = s.refs == 0;
            s.closed
        }
    }
}

#[cfg(feature = "otel")]
mod otel {
    //! A host's OpenTelemetry: `tracing-opentelemetry` (mcpwire's targets, every level) into
    //! the SDK's tracer provider, which hands each span to an in-memory exporter as it ends,
    //! and the SDK's meter provider with an in-memory exporter, global.

    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::Layer;

    pub fn install() {
        let tracers = SdkTracerProvider::builder()
            .with_simple_exporter(InMemorySpanExporter::default())
            .build();
        let ours = tracing_subscriber::filter::filter_fn(|m| m.target().starts_with("mcpwire"));
        let layer = tracing_opentelemetry::layer()
            .with_tracer(tracers.tracer("bench"))
            .with_filter(ours);
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::set_global_default(subscriber).expect("no subscriber yet");
        let reader = PeriodicReader::builder(InMemoryMetricExporter::default()).build();
        let meters = SdkMeterProvider::builder().with_reader(reader).build();
        opentelemetry::global::set_meter_provider(meters);
        // Kept for the process's life (the exporters with them).
        std::mem::forget(tracers);
    }
}

/// One build of the client and the subscriber it runs with.
#[derive(Clone, Copy)]
struct Variant {
    name: &'static str,
    /// The binary's name in the release folder.
    exe: &'static str,
    subscriber: &'static str,
}

const VARIANTS: [Variant; 5] = [
    Variant {
        name: "no `tracing` feature",
        exe: "mcpwire-bench-mcpwire-notracing",
        subscriber: "none",
    },
    Variant {
        name: "`tracing`, no subscriber",
        exe: "mcpwire-bench-mcpwire",
        subscriber: "none",
    },
    Variant {
        name: "`tracing`, recording subscriber",
        exe: "mcpwire-bench-mcpwire",
        subscriber: "record",
    },
    Variant {
        name: "`opentelemetry`, no subscriber, no meter provider",
        exe: "mcpwire-bench-mcpwire-otel",
        subscriber: "none",
    },
    Variant {
        name: "`opentelemetry`, tracing-opentelemetry + SDK (in memory)",
        exe: "mcpwire-bench-mcpwire-otel",
        subscriber: "otel",
    },
];

/// The figures of one run a call: CPU µs (timing pass), allocations and syscalls (counting
/// pass), instructions (callgrind pass).
#[derive(Default, Clone)]
struct Figures {
    cpu_us: Vec<f64>,
    allocs: Vec<f64>,
    own_allocs: Vec<f64>,
    syscalls: Vec<f64>,
    instructions: Vec<f64>,
}

fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// `mcpwire-bench tracing-cost [--batches N] [--calls N] [--servers min,python-http]
/// [--no-valgrind]`: the comparison, printed as a table and written to
/// `results/tracing-cost-<time>.md` (raw lines beside it).
pub fn main(args: &[String]) -> i32 {
    let mut batches = 3;
    let mut calls = 2_000u64;
    let mut valgrind = true;
    let mut servers = vec![Server::Min, Server::PythonHttp];
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--no-valgrind" => valgrind = false,
            "--batches" => batches = it.next().and_then(|v| v.parse().ok()).unwrap_or(3),
            "--calls" => calls = it.next().and_then(|v| v.parse().ok()).unwrap_or(2_000),
            "--servers" => {
                servers = it
                    .next()
                    .map(|v| v.split(',').filter_map(Server::parse).collect())
                    .unwrap_or_default()
            }
            _ => {
                eprintln!("usage: mcpwire-bench tracing-cost [--batches N] [--calls N] [--servers a,b] [--no-valgrind]");
                return 2;
            }
        }
    }
    let runner = std::env::current_exe().expect("current exe");
    // The variants whose build is there (`tracing_cost.sh` builds them all; with `--no-otel`
    // it leaves the `opentelemetry` build out).
    let built: Vec<bool> = VARIANTS
        .iter()
        .map(|v| runner.with_file_name(v.exe).exists())
        .collect();
    if !built[0] || !built[1] {
        eprintln!("the builds without and with `tracing` are needed: run tracing_cost.sh");
        return 1;
    }
    let raw_path = crate::runner::results_file("tracing-cost");
    let mut raw = File::create(&raw_path).expect("create the results file");
    let log = File::create(raw_path.with_extension("stderr.log")).expect("create the log");
    let mut figures: BTreeMap<(usize, usize), Figures> = BTreeMap::new();
    let mut failed = Vec::new();
    for batch in 0..batches {
        eprintln!("batch {}/{batches}", batch + 1);
        let mut http = BTreeMap::new();
        for &s in servers.iter().filter(|s| s.is_http()) {
            match HttpServer::start(s) {
                Ok(h) => {
                    http.insert(s, h);
                }
                Err(e) => {
                    eprintln!("{}: {e}", s.name());
                    return 1;
                }
            }
        }
        let mut order: Vec<(usize, usize, Pass)> = Vec::new();
        for v in (0..VARIANTS.len()).filter(|&v| built[v]) {
            for s in 0..servers.len() {
                order.push((v, s, Pass::Timing));
                order.push((v, s, Pass::Counting));
                if valgrind {
                    order.push((v, s, Pass::Instructions));
                }
            }
        }
        crate::runner::shuffle(&mut order, 0x5eed ^ batch as u64);
        // A warm-up of each HTTP server first (not recorded).
        for (&s, h) in &http {
            let exe = runner.with_file_name(VARIANTS[0].exe);
            let _ = run(&exe, s, Some(&h.url), calls, "none", Pass::Timing, &log);
        }
        for (v, s, pass) in order {
            let variant = VARIANTS[v];
            let server = servers[s];
            let url = http.get(&server).map(|h| h.url.as_str());
            let exe = runner.with_file_name(variant.exe);
            match run(&exe, server, url, calls, variant.subscriber, pass, &log) {
                Ok(rec) => {
                    use std::io::Write;
                    let line = serde_json::json!({
                        "variant": variant.name,
                        "server": server.name(),
                        "pass": pass.name(),
                        "batch": batch,
                        "record": rec,
                    });
                    let _ = writeln!(raw, "{line}");
                    let f = figures.entry((v, s)).or_default();
                    let per = |key: &str| rec.get(key).and_then(Value::as_f64);
                    match pass {
                        Pass::Timing => f.cpu_us.extend(per("cpu_us_per_call")),
                        Pass::Counting => {
                            f.allocs.extend(per("allocs_per_call"));
                            f.own_allocs.extend(per("own_allocs_per_call"));
                            f.syscalls.extend(per("syscalls_per_call"));
                        }
                        Pass::Instructions => f.instructions.extend(per("instructions_per_call")),
                    }
                }
                Err(e) => failed.push(format!(
                    "{} / {} / {}: {e}",
                    variant.name,
                    server.name(),
                    pass.name()
                )),
            }
        }
    }
    let table = table(&figures, &servers, batches);
    println!("{table}");
    for f in &failed {
        println!("failed: {f}");
    }
    let _ = std::fs::write(raw_path.with_extension("md"), &table);
    eprintln!("raw results in {}", raw_path.display());
    i32::from(!failed.is_empty())
}

/// The three passes of a run.
#[derive(Clone, Copy)]
enum Pass {
    Timing,
    Counting,
    Instructions,
}

impl Pass {
    fn name(self) -> &'static str {
        match self {
            Pass::Timing => "timing",
            Pass::Counting => "counting",
            Pass::Instructions => "instructions",
        }
    }
}

/// One W1 run of the client `exe` against `server`, in `pass`: its record, with the figures a
/// call the pass gives added (`instructions_per_call` from callgrind's output).
fn run(
    exe: &Path,
    server: Server,
    url: Option<&str>,
    calls: u64,
    subscriber: &str,
    pass: Pass,
    log: &File,
) -> Result<Value, String> {
    let mut args: Vec<String> = vec![
        "--impl".into(),
        "mcpwire".into(),
        "--server".into(),
        server.name().into(),
        "--workload".into(),
        "w1".into(),
        "--w1-calls".into(),
        calls.to_string(),
    ];
    if let Some(url) = url {
        args.extend(["--url".into(), url.to_owned()]);
    }
    let mut envs = vec![(SUBSCRIBER_ENV, subscriber)];
    let out_file = std::env::temp_dir().join(format!(
        "mcpwire-bench-callgrind-{}.out",
        std::process::id()
    ));
    let (program, args) = match pass {
        Pass::Timing => (exe.to_owned(), args),
        Pass::Counting => {
            envs.push((COUNT_SYSCALLS_ENV, "1"));
            (exe.to_owned(), args)
        }
        Pass::Instructions => {
            let mut v: Vec<String> = vec![
                "--tool=callgrind".into(),
                "--instr-atstart=no".into(),
                format!("--callgrind-out-file={}", out_file.display()),
                exe.display().to_string(),
            ];
            v.extend(args);
            (PathBuf::from("valgrind"), v)
        }
    };
    let timeout = Duration::from_secs(600);
    let (mut rec, _, _) =
        crate::runner::run_process(&program, &args, &envs, "ready_ms", log, timeout)?;
    if rec.get("ok") != Some(&Value::Bool(true)) {
        return Err(rec
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("failed")
            .to_owned());
    }
    let calls_done = rec.get("calls").and_then(Value::as_f64).unwrap_or(0.0);
    if calls_done == 0.0 {
        return Err(format!("no calls in the record: {rec}"));
    }
    let get = |k: &str| rec.get(k).and_then(Value::as_f64);
    let (user, sys) = (get("user_us"), get("sys_us"));
    let (allocations, bench) = (get("allocations"), get("bench_allocations"));
    let syscalls = get("syscalls");
    if let (Some(user), Some(sys)) = (user, sys) {
        rec["cpu_us_per_call"] = serde_json::json!((user + sys) / calls_done);
    }
    if let Some(a) = allocations {
        rec["allocs_per_call"] = serde_json::json!(a / calls_done);
        if let Some(b) = bench {
            rec["own_allocs_per_call"] = serde_json::json!((a - b) / calls_done);
        }
    }
    if let Some(s) = syscalls {
        rec["syscalls_per_call"] = serde_json::json!(s / calls_done);
    }
    if let Pass::Instructions = pass {
        let path = &out_file;
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let _ = std::fs::remove_file(path);
        let total = text
            .lines()
            .find_map(|l| l.strip_prefix("totals:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            .ok_or("no totals in callgrind's output")?;
        rec["instructions"] = serde_json::json!(total);
        rec["instructions_per_call"] = serde_json::json!(total / calls_done);
    }
    Ok(rec)
}

/// The table: per server and variant, the medians a call over the batches, and each figure's
/// ratio to the build without `tracing`.
fn table(
    figures: &BTreeMap<(usize, usize), Figures>,
    servers: &[Server],
    batches: usize,
) -> String {
    let mut t = format!(
        "W1, median of {batches} batches (each figure a process of its own); ratio to the build \
         without `tracing` in brackets\n\n| server | variant | instructions/call | allocs/call \
         (own) | syscalls/call | CPU µs/call |\n|---|---|---|---|---|---|\n"
    );
    for (s, server) in servers.iter().enumerate() {
        let base = figures.get(&(0, s)).cloned().unwrap_or_default();
        for (v, variant) in VARIANTS.iter().enumerate() {
            let Some(f) = figures.get(&(v, s)).cloned() else {
                continue;
            };
            let cell = |x: &[f64], b: &[f64], digits: usize| match (median(x), median(b)) {
                (Some(x), Some(b)) if v > 0 && b > 0.0 => {
                    format!("{x:.digits$} ({:+.1}%)", (x / b - 1.0) * 100.0)
                }
                (Some(x), _) => format!("{x:.digits$}"),
                _ => "–".into(),
            };
            t += &format!(
                "| {} | {} | {} | {} ({}) | {} | {} |\n",
                server.name(),
                variant.name,
                cell(&f.instructions, &base.instructions, 0),
                cell(&f.allocs, &base.allocs, 2),
                cell(&f.own_allocs, &base.own_allocs, 2),
                cell(&f.syscalls, &base.syscalls, 2),
                cell(&f.cpu_us, &base.cpu_us, 1),
            );
        }
    }
    t
}
