//! mcpwire's end-to-end benchmark: whole client processes against real servers.
//!
//! `mcpwire-bench client ...` runs one measurement in this process and prints one JSON line;
//! `mcpwire-bench run ...` runs every combination as separate processes, interleaved in
//! batches, and prints the tables. See the README next to this crate.
//!
//! Each implementation also has a binary of its own (`mcpwire-bench-floor`,
//! `mcpwire-bench-mcpwire`, `mcpwire-bench-rmcp`) that links only its client, so that resident
//! memory is not inflated by the others' code; the runner uses those.

#[global_allocator]
static ALLOCATOR: measure::CountingAlloc = measure::CountingAlloc;

pub mod floor;
pub mod isahc_floor;
pub mod many;
pub mod many_start;
pub mod mcpwire_client;
pub mod measure;
pub mod report;
pub mod rmcp_client;
pub mod runner;
pub mod servers;
pub mod thousand;
pub mod tracing_cost;

use std::time::Instant;

use measure::{Meter, Window};

/// The client implementations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Impl {
    /// `connect_smol`: the driver on smol's executor thread, the caller in `block_on`.
    Mcpwire,
    /// `connect`: the driver and the caller polled on one thread.
    Mcpwire1t,
    /// rmcp on tokio's multi-thread runtime (its default HTTP client: no connection reuse).
    Rmcp,
    /// rmcp on tokio's current_thread runtime.
    RmcpCt,
    /// rmcp (multi-thread) over HTTP with a pooling reqwest client and 128 requests in flight.
    RmcpKa,
    /// No SDK: blocking JSONL over the pipes, or HTTP/1.1 keep-alive over one socket.
    Floor,
    /// HTTP only: isahc (libcurl) with keep-alive and no MCP client above it, the floor of
    /// mcpwire's HTTP design.
    IsahcFloor,
    /// `connect_smol` in the stateless era (2026-07-28), against the servers that speak it (the
    /// Python server): the era's request path beside the handshake era's in the same batch.
    McpwireStateless,
    /// `connect_smol` with HTTP/1.1 through libcurl (`http1_via_libcurl`): what https cost
    /// before mcpwire's own client spoke TLS.
    McpwireLibcurl,
    /// `connect` in a tokio host: the driver `tokio::spawn`ed on tokio's multi-thread runtime,
    /// the caller in `block_on`, no smol executor (async-io's reactor on its own thread).
    McpwireTokio,
    /// The same on tokio's current_thread runtime.
    McpwireTokioCt,
}

impl Impl {
    pub const ALL: [Impl; 11] = [
        Impl::Mcpwire,
        Impl::Mcpwire1t,
        Impl::McpwireStateless,
        Impl::McpwireLibcurl,
        Impl::McpwireTokio,
        Impl::McpwireTokioCt,
        Impl::Rmcp,
        Impl::RmcpCt,
        Impl::RmcpKa,
        Impl::Floor,
        Impl::IsahcFloor,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Impl::Mcpwire => "mcpwire",
            Impl::Mcpwire1t => "mcpwire-1t",
            Impl::Rmcp => "rmcp",
            Impl::RmcpCt => "rmcp-ct",
            Impl::RmcpKa => "rmcp-ka",
            Impl::Floor => "floor",
            Impl::IsahcFloor => "isahc-floor",
            Impl::McpwireStateless => "mcpwire-2026",
            Impl::McpwireLibcurl => "mcpwire-libcurl",
            Impl::McpwireTokio => "mcpwire-tokio",
            Impl::McpwireTokioCt => "mcpwire-tokio-ct",
        }
    }

    pub fn parse(s: &str) -> Option<Impl> {
        Impl::ALL.into_iter().find(|i| i.name() == s)
    }
}

/// The servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Server {
    /// `servers/min_server.mjs`: SDK-free Node, stdio.
    Min,
    /// server-everything over stdio.
    EverythingStdio,
    /// server-everything over Streamable HTTP (SSE responses).
    EverythingHttp,
    /// The Python SDK server over Streamable HTTP with JSON responses.
    PythonHttp,
    /// The same over TLS (uvicorn with a throwaway certificate every client trusts).
    PythonHttps,
    /// The minimal server's answers over Streamable HTTP with TLS (Node, no SDK): a server
    /// that is not the bottleneck of many calls in flight.
    MinHttps,
    /// The same answers over plain Streamable HTTP (Node, no SDK): the `http://` counterpart of
    /// `MinHttps`, a server that is not the bottleneck of many calls in flight.
    MinHttp,
}

impl Server {
    pub const ALL: [Server; 7] = [
        Server::Min,
        Server::EverythingStdio,
        Server::EverythingHttp,
        Server::PythonHttp,
        Server::PythonHttps,
        Server::MinHttps,
        Server::MinHttp,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Server::Min => "min",
            Server::EverythingStdio => "everything-stdio",
            Server::EverythingHttp => "everything-http",
            Server::PythonHttp => "python-http",
            Server::PythonHttps => "python-https",
            Server::MinHttps => "min-https",
            Server::MinHttp => "min-http",
        }
    }

    pub fn parse(s: &str) -> Option<Server> {
        Server::ALL.into_iter().find(|i| i.name() == s)
    }

    pub fn is_http(self) -> bool {
        matches!(
            self,
            Server::EverythingHttp
                | Server::PythonHttp
                | Server::PythonHttps
                | Server::MinHttps
                | Server::MinHttp
        )
    }
}

/// The workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    /// Sequential calls.
    W1,
    /// Calls with many in flight.
    W2,
    /// One big echo.
    W3,
    /// Process start to the first `tools/list` answered.
    Startup,
    /// Resident memory after connect, one call and a second of idleness.
    Idle,
}

impl Workload {
    pub const ALL: [Workload; 5] = [
        Workload::W1,
        Workload::W2,
        Workload::W3,
        Workload::Startup,
        Workload::Idle,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Workload::W1 => "w1",
            Workload::W2 => "w2",
            Workload::W3 => "w3",
            Workload::Startup => "startup",
            Workload::Idle => "idle",
        }
    }

    pub fn parse(s: &str) -> Option<Workload> {
        Workload::ALL.into_iter().find(|i| i.name() == s)
    }
}

/// One client run's parameters.
#[derive(Debug, Clone)]
pub struct ClientArgs {
    pub imp: Impl,
    pub server: Server,
    pub workload: Workload,
    /// The HTTP server's endpoint (HTTP servers only; the runner starts them).
    pub url: Option<String>,
    /// W1's calls.
    pub w1_calls: u64,
    /// W2's calls.
    pub w2_calls: u64,
    /// W2's calls in flight.
    pub inflight: usize,
    /// W3's message size in bytes.
    pub w3_bytes: usize,
    /// Whether `--w3-bytes` was given.
    pub w3_bytes_set: bool,
}

impl ClientArgs {
    /// The calls the workload makes in the measured window.
    pub fn calls(&self) -> u64 {
        match self.workload {
            Workload::W1 => self.w1_calls,
            Workload::W2 => self.w2_calls,
            Workload::W3 => 1,
            Workload::Startup | Workload::Idle => 0,
        }
    }

    /// The argument of one echo call.
    pub fn message(&self) -> String {
        match self.workload {
            Workload::W3 => "x".repeat(self.w3_bytes),
            _ => "hi".to_owned(),
        }
    }
}

/// What one client run reports (one JSON line).
#[derive(Debug, Default)]
pub struct Outcome {
    pub window: Window,
    pub calls: u64,
    /// Milliseconds from this process's start to the first `tools/list` answered.
    pub ready_ms: f64,
    pub peak_rss_kib: u64,
    pub rss_kib: u64,
    /// Of the resident memory, what is the process's own (heap, stacks), not mapped files.
    pub rss_anon_kib: u64,
    pub threads: u64,
    /// Threads the process started up to then (ended or not; the main thread not counted).
    pub threads_started: u64,
    /// The protocol era or version the connection settled on, when the client says.
    pub era: String,
    /// TCP connections the client opened in all, when it can tell.
    pub connections: Option<u64>,
}

/// Checks an echo's text against what was sent (server-everything prefixes `Echo: `).
pub fn check_echo(sent: &str, got: &str) -> Result<(), String> {
    if got.len() >= sent.len() && got.ends_with(sent) {
        Ok(())
    } else {
        Err(format!(
            "echo mismatch: sent {} bytes, got {} bytes ({:?}...)",
            sent.len(),
            got.len(),
            &got[..got.len().min(60)]
        ))
    }
}

/// The process's start, as early as `main` sees it.
pub static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

pub fn since_start_ms() -> f64 {
    START.get().map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3)
}

/// For the startup workload: tells the runner at once that the first `tools/list` was answered
/// (the runner times spawn to this line), before the connection is closed.
pub fn announce_ready(args: &ClientArgs) {
    if args.workload == Workload::Startup {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{{\"ready_ms\":{:.3}}}", since_start_ms());
        let _ = out.flush();
    }
}

/// The idle workload's figures, taken after a second of idleness: resident memory now and at
/// its peak.
pub fn idle_figures(out: &mut Outcome) {
    out.rss_kib = measure::status_kib("VmRSS");
    out.rss_anon_kib = measure::status_kib("RssAnon");
    out.peak_rss_kib = measure::status_kib("VmHWM");
    out.threads = measure::threads();
    out.threads_started = measure::threads_started();
}

/// W1 and W3 for a blocking client: `calls` made one after the other in the measured window.
pub fn sequential(
    args: &ClientArgs,
    out: &mut Outcome,
    mut call: impl FnMut() -> Result<(), String>,
) -> Result<(), String> {
    let n = args.calls();
    let meter = begin();
    for _ in 0..n {
        call()?;
    }
    out.end(meter, n);
    Ok(())
}

/// After the handshake and `tools/list`, the workload of an async client: the warm-up call
/// (but for startup), then nothing (startup), `idle` and the idle figures, or the echo loops
/// ([`echo_workload`]). The futures are only awaited when the workload needs them.
pub async fn workload<E, Fut>(
    args: &ClientArgs,
    out: &mut Outcome,
    warm_up: impl std::future::Future<Output = Result<(), String>>,
    idle: impl std::future::Future<Output = ()>,
    echo: E,
) -> Result<(), String>
where
    E: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    if args.workload != Workload::Startup {
        warm_up.await?;
    }
    match args.workload {
        Workload::Startup => {}
        Workload::Idle => {
            idle.await;
            idle_figures(out);
        }
        Workload::W1 | Workload::W2 | Workload::W3 => echo_workload(args, out, echo).await?,
    }
    Ok(())
}

/// W1, W2 and W3 for a client with an async `echo`: the calls one after the other, or (W2)
/// `inflight` workers taking calls from one counter, in the measured window.
pub async fn echo_workload<F, Fut>(
    args: &ClientArgs,
    out: &mut Outcome,
    echo: F,
) -> Result<(), String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let n = args.calls();
    let meter = begin();
    if args.workload == Workload::W2 {
        let next = std::sync::atomic::AtomicU64::new(0);
        let workers = (0..args.inflight).map(|_| async {
            while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < n {
                echo().await?;
            }
            Ok::<(), String>(())
        });
        futures::future::try_join_all(workers).await?;
    } else {
        for _ in 0..n {
            echo().await?;
        }
    }
    out.end(meter, n);
    Ok(())
}

/// Opens the measured window.
pub fn begin() -> Meter {
    let mut meter = Meter::default();
    meter.start();
    tracing_cost::window_start();
    meter
}

impl Outcome {
    /// Closes the measured window and takes the memory figures.
    pub fn end(&mut self, mut meter: Meter, calls: u64) {
        tracing_cost::window_end();
        self.window = meter.stop();
        self.calls = calls;
        self.peak_rss_kib = measure::status_kib("VmHWM");
        self.rss_kib = measure::status_kib("VmRSS");
        self.rss_anon_kib = measure::status_kib("RssAnon");
        self.threads = measure::threads();
        self.threads_started = measure::threads_started();
    }
}

pub fn usage() -> ! {
    eprintln!(
        "usage:\n  mcpwire-bench client --impl <{}> --server <{}> --workload <{}> [--url URL] \
         [--w1-calls N] [--w2-calls N] [--inflight N] [--w3-bytes N]\n  mcpwire-bench run \
         [--batches N] [--quick] [--only a,b] [--impls a,b] [--servers a,b] [--no-syscalls] [--timeout SECS] \
         [--out FILE]\n  mcpwire-bench report RESULTS.jsonl",
        Impl::ALL.map(Impl::name).join("|"),
        Server::ALL.map(Server::name).join("|"),
        Workload::ALL.map(Workload::name).join("|"),
    );
    std::process::exit(2)
}

pub fn parse_client(args: &[String]) -> ClientArgs {
    let mut c = ClientArgs {
        imp: Impl::Floor,
        server: Server::Min,
        workload: Workload::W1,
        url: None,
        w1_calls: 2_000,
        w2_calls: 10_000,
        inflight: 100,
        w3_bytes: 8 << 20,
        w3_bytes_set: false,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| usage());
        let num = || value.parse::<u64>().unwrap_or_else(|_| usage());
        match flag.as_str() {
            "--impl" => c.imp = Impl::parse(value).unwrap_or_else(|| usage()),
            "--server" => c.server = Server::parse(value).unwrap_or_else(|| usage()),
            "--workload" => c.workload = Workload::parse(value).unwrap_or_else(|| usage()),
            "--url" => c.url = Some(value.clone()),
            "--w1-calls" => c.w1_calls = num(),
            "--w2-calls" => c.w2_calls = num(),
            "--inflight" => c.inflight = num() as usize,
            // Given twice, the smaller wins (the runner caps it for a server).
            "--w3-bytes" if c.w3_bytes_set => c.w3_bytes = c.w3_bytes.min(num() as usize),
            "--w3-bytes" => {
                c.w3_bytes = num() as usize;
                c.w3_bytes_set = true;
            }
            _ => usage(),
        }
    }
    if c.server.is_http() && c.url.is_none() {
        eprintln!("--server {} needs --url", c.server.name());
        usage();
    }
    c
}

/// The clients of one binary.
pub type ClientFn = fn(&ClientArgs) -> Result<Outcome, String>;

/// Runs one client measurement with `client` and prints its line; the exit code.
/// The `main` of a one-implementation binary: its arguments (after an optional `client`) are a
/// client's; exits with [`client_main`]'s code.
pub fn client_binary(client: ClientFn) -> ! {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match args.first().map(String::as_str) {
        Some("client") => &args[1..],
        _ => &args[..],
    };
    std::process::exit(client_main(args, client))
}

pub fn client_main(args: &[String], client: ClientFn) -> i32 {
    START.get_or_init(Instant::now);
    let args = parse_client(args);
    let result = client(&args);
    let line = match &result {
        Ok(out) => report::client_line(&args, out),
        Err(e) => serde_json::json!({
            "impl": args.imp.name(),
            "server": args.server.name(),
            "workload": args.workload.name(),
            "ok": false,
            "error": e,
        }),
    };
    println!("{line}");
    i32::from(result.is_err())
}
