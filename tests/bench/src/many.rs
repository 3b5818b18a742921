//! The many-servers workload: one host running many servers at once, against floors measured in
//! the same batch.
//!
//! Each role runs in a process of its own (`mcpwire-bench-many ROLE ...`, one JSON line):
//!
//! - `floor-stdio`: spawns N `mcpwire serve-demo --tools T` and writes `initialize` to each as it
//!   is spawned, then reads each one's answer: spawn to all answered, the best a host can do.
//! - `manager-stdio`: `Manager::new` with the same N servers to all ready (connected, tools
//!   listed); then, idle, the host's resident memory growth per server; then `tools()` against
//!   a clone of a `Vec<Arc<Tool>>` of the same tools (its first call, which makes the host's
//!   list, apart), and `Manager::route` (what `call_tool` resolves before it
//!   calls) against a `HashMap` lookup of the qualified name, timed in loops in this process.
//! - `bare-stdio`: N bare `Client`s (`connect_smol`) to the same servers: spawn to the last
//!   connected (its handshake done: ready to be called, as the floor's answer read); once all
//!   are connected each lists its tools once (the list kept, as a host would): to the last
//!   listed, and the host's growth per server. The host's CPU at all connected is split by
//!   thread (`cpu_by_thread_ms`), as the Manager's at all ready.
//! - `manager-stdio-tokio`, `floor-stdio-lists`: see [`crate::many_start`].
//! - `crash`: N servers under one Manager; sequential calls (W1) to the servers that do not
//!   crash, first calm, then while a tenth of the servers are killed by their PID again and
//!   again (each about once a second, when ready; the Manager restarts them), then calm again:
//!   CPU per call of the crash phase against the calm ones, and the process's file descriptors,
//!   threads, children and resident memory before and after.
//! - `floor-http`, `manager-http`: the same start-up race against HTTP servers (the runner
//!   starts them): one `initialize` POST to each, all written first, then the answers read;
//!   against `Manager::new` to all ready.

use std::collections::HashMap;
use std::hint::black_box;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcpwire::hosts::ServerSettings;
use mcpwire::manager::backoff::RestartPolicy;
use mcpwire::manager::{CacheLocation, Manager, ManagerOptions, ServerState};
use mcpwire::{ConnectOptions, Era, ServerConfig, Tool};
use serde_json::{json, Value};

use crate::floor::INITIALIZE;
use crate::measure::{status_kib, threads};

/// The roles, each a process of its own.
pub const ROLES: [&str; 8] = [
    "floor-stdio",
    "floor-stdio-lists",
    "manager-stdio",
    "manager-stdio-tokio",
    "bare-stdio",
    "crash",
    "floor-http",
    "manager-http",
];

/// One role's parameters.
#[derive(Debug, Clone)]
pub struct ManyArgs {
    pub role: String,
    /// Stdio servers.
    pub servers: usize,
    /// Generated tools per stdio server (`serve-demo --tools`).
    pub tools: usize,
    /// The `mcpwire` command line binary (its `serve-demo` is the stdio server).
    pub cli: PathBuf,
    /// The HTTP servers' endpoints.
    pub urls: Vec<String>,
    /// Each phase of `crash`, in seconds.
    pub seconds: f64,
}

/// The `mcpwire` binary: `MCPWIRE_BENCH_CLI`, else the repository's release build
/// (`target/release/mcpwire`, which `run.sh` builds).
pub fn default_cli() -> PathBuf {
    std::env::var_os("MCPWIRE_BENCH_CLI")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::servers::bench_dir().join("../../target/release/mcpwire"))
}

fn usage() -> ! {
    eprintln!(
        "usage: mcpwire-bench-many <{}> [--servers N] [--tools N] [--cli PATH] [--urls A,B] \
         [--seconds S]",
        ROLES.join("|")
    );
    std::process::exit(2)
}

pub fn parse(args: &[String]) -> ManyArgs {
    let mut it = args.iter();
    let role = it.next().cloned().unwrap_or_else(|| usage());
    if !ROLES.contains(&role.as_str()) && role != "manager-1000" {
        usage();
    }
    let mut a = ManyArgs {
        role,
        servers: 100,
        tools: 100,
        cli: default_cli(),
        urls: Vec::new(),
        seconds: 3.0,
    };
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--servers" => a.servers = value.parse().unwrap_or_else(|_| usage()),
            "--tools" => a.tools = value.parse().unwrap_or_else(|_| usage()),
            "--cli" => a.cli = PathBuf::from(value),
            "--urls" => a.urls = value.split(',').map(str::to_owned).collect(),
            "--seconds" => a.seconds = value.parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    a
}

/// The `main` of `mcpwire-bench-many`: one role, one JSON line; the exit code.
pub fn main(args: &[String]) -> i32 {
    let a = parse(args);
    // A host of many servers needs more descriptors than the usual soft limit (1 024 pipes
    // are 1 000 servers' stdout alone); mcpwire leaves the limit to the host.
    crate::thousand::raise_nofile();
    let result = match a.role.as_str() {
        "floor-stdio" => floor_stdio(&a),
        "manager-stdio" => manager_stdio(&a),
        "manager-stdio-tokio" => crate::many_start::manager_stdio_tokio(&a),
        "floor-stdio-lists" => crate::many_start::floor_stdio_lists(&a),
        "bare-stdio" => bare_stdio(&a),
        "crash" => crash(&a),
        "floor-http" => floor_http(&a),
        "manager-http" => manager_http(&a),
        "manager-1000" => crate::thousand::manager_1000(&a),
        _ => usage(),
    };
    let line = match result {
        Ok(mut v) => {
            v["suite"] = json!("many");
            v["role"] = json!(a.role);
            v["ok"] = json!(true);
            v
        }
        Err(e) => json!({"suite": "many", "role": a.role, "ok": false, "error": e}),
    };
    println!("{line}");
    i32::from(line["ok"] != json!(true))
}

/// The stdio server `i` of N: the demo server with its generated tools. Each has a variable of
/// its own in its environment, so that each is a server of its own to the Manager's cache too.
pub fn stdio_config(a: &ManyArgs, i: usize) -> ServerConfig {
    let mut config = ServerConfig::stdio(
        a.cli.to_string_lossy(),
        [
            "serve-demo".to_owned(),
            "--tools".to_owned(),
            a.tools.to_string(),
        ],
    );
    if let ServerConfig::Stdio(c) = &mut config {
        c.env
            .insert("MCPWIRE_BENCH_SERVER".to_owned(), i.to_string());
    }
    config
}

pub fn server_name(i: usize) -> String {
    format!("s{i:03}")
}

/// The handshake era pinned, as in the rest of the benchmark (the floors speak only it).
pub fn settings() -> ServerSettings {
    let mut s = ServerSettings::default();
    s.era = Some(Era::Handshake);
    s
}

pub fn options() -> ManagerOptions {
    let mut o = ManagerOptions::default();
    // Nothing written to the user's cache folder; the lists are still cached in memory.
    o.cache = CacheLocation::MemoryOnly;
    o
}

/// Waits (at most `limit`) until every server is ready.
pub fn wait_all_ready(manager: &Manager, limit: Duration) -> Result<(), String> {
    let all = manager.wait_until(|states| {
        states
            .iter()
            .all(|(_, s)| matches!(s, ServerState::Ready { .. }))
    });
    let timeout = async {
        smol::Timer::after(limit).await;
    };
    let done = smol::block_on(futures_lite::future::or(
        async {
            all.await;
            true
        },
        async {
            timeout.await;
            false
        },
    ));
    if done {
        return Ok(());
    }
    Err(not_ready(manager, limit))
}

/// The error of a start that ran out of `limit`: the first three servers not ready, and why.
pub fn not_ready(manager: &Manager, limit: Duration) -> String {
    let not: Vec<String> = manager
        .states()
        .into_iter()
        .filter(|(_, s)| !matches!(s, ServerState::Ready { .. }))
        .take(3)
        .map(|(n, s)| format!("{n}: {s:?}"))
        .collect();
    format!("not all ready within {limit:?}: {}", not.join("; "))
}

/// The host's own resident memory now: `VmRSS` and of it `RssAnon`, in KiB.
pub fn rss() -> (u64, u64) {
    (status_kib("VmRSS"), status_kib("RssAnon"))
}

pub fn fds() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count() as u64)
        .unwrap_or(0)
}

/// This process's children: how many, and how many of them are zombies.
pub fn children() -> (u64, u64) {
    let me = std::process::id().to_string();
    let (mut all, mut zombies) = (0, 0);
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return (0, 0);
    };
    for entry in dir.flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("");
        if fields.next() == Some(me.as_str()) {
            all += 1;
            zombies += u64::from(state == "Z");
        }
    }
    (all, zombies)
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Median of a sample (sorted in place).
pub fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

/// The floors' servers: each spawned with piped stdin and stdout, `first` written to it.
pub fn spawn_floor_servers(a: &ManyArgs, first: &str) -> Result<Vec<Child>, String> {
    let mut children = Vec::with_capacity(a.servers);
    for i in 0..a.servers {
        let ServerConfig::Stdio(c) = stdio_config(a, i) else {
            unreachable!()
        };
        let mut child = Command::new(&c.command)
            .args(&c.args)
            .envs(&c.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", c.command))?;
        write_to(&mut child, first)?;
        children.push(child);
    }
    Ok(children)
}

/// Writes `text` to a floor server's stdin.
pub fn write_to(child: &mut Child, text: &str) -> Result<(), String> {
    let stdin = child.stdin.as_mut().expect("piped");
    stdin.write_all(text.as_bytes()).map_err(|e| e.to_string())
}

/// Reads a floor server's next line from `out`, which must be its `initialize` answer.
pub fn read_initialize_answer(out: &mut impl BufRead, line: &mut String) -> Result<(), String> {
    line.clear();
    out.read_line(line).map_err(|e| e.to_string())?;
    match line.contains("\"protocolVersion\"") {
        true => Ok(()),
        false => Err(format!("not an initialize answer: {line:.80}")),
    }
}

fn floor_stdio(a: &ManyArgs) -> Result<Value, String> {
    let init = format!("{INITIALIZE}\n");
    let started = Instant::now();
    let mut children = spawn_floor_servers(a, &init)?;
    let mut line = String::new();
    for child in &mut children {
        let mut out = BufReader::new(child.stdout.as_mut().expect("piped"));
        read_initialize_answer(&mut out, &mut line)?;
    }
    let ready = started.elapsed();
    let cpu_ms = host_cpu_ms();
    for child in &mut children {
        // Child::kill signals exactly this child's PID.
        let _ = child.kill();
        let _ = child.wait();
    }
    Ok(json!({"servers": a.servers, "ready_ms": ms(ready), "cpu_ms": cpu_ms}))
}

fn manager_stdio(a: &ManyArgs) -> Result<Value, String> {
    let before = rss();
    let threads_before = thread_cpu();
    let started = Instant::now();
    let manager = Manager::new(options());
    for i in 0..a.servers {
        manager.add_with(&server_name(i), stdio_config(a, i), settings());
    }
    wait_all_ready(&manager, Duration::from_secs(120))?;
    let ready = started.elapsed();
    let cpu_ms = host_cpu_ms();
    let by_thread = thread_cpu_delta(&threads_before, &thread_cpu());
    if std::env::var_os("MCPWIRE_BENCH_READY_ONLY").is_some() {
        // For a profile of the start-up alone.
        smol::block_on(manager.close());
        let out = json!({"servers": a.servers, "ready_ms": ms(ready), "cpu_ms": cpu_ms,
                         "cpu_by_thread_ms": by_thread});
        return Ok(out);
    }
    smol::block_on(smol::Timer::after(Duration::from_secs(1)));
    let idle = rss();

    // tools() against a clone of the same list of shared tools. The first call makes the
    // namespace and the host's list (no call made them yet); the others take that list.
    let t = Instant::now();
    let listed = black_box(manager.tools());
    let first_us = t.elapsed().as_secs_f64() * 1e6;
    let plain: Vec<Arc<Tool>> = listed.iter().map(|m| m.tool.clone()).collect();
    let (mut tools_us, mut clone_us) = (Vec::new(), Vec::new());
    for _ in 0..21 {
        let t = Instant::now();
        let x = black_box(manager.tools());
        tools_us.push(t.elapsed().as_secs_f64() * 1e6);
        drop(x);
        let t = Instant::now();
        let y = black_box(plain.clone());
        clone_us.push(t.elapsed().as_secs_f64() * 1e6);
        drop(y);
    }

    // Routing: what call_tool resolves before it calls, against a HashMap lookup of the
    // qualified name, over the same names in a scattered order.
    let names: Vec<String> = listed.iter().map(|m| m.qualified.clone()).collect();
    let map: HashMap<String, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i))
        .collect();
    let mut order: Vec<&str> = names.iter().map(String::as_str).collect();
    crate::runner::shuffle(&mut order, 7);
    let (mut route_ns, mut map_ns) = (Vec::new(), Vec::new());
    for _ in 0..21 {
        let t = Instant::now();
        for name in &order {
            let route = manager.route(black_box(name)).map_err(|e| e.to_string())?;
            black_box(&route);
        }
        route_ns.push(t.elapsed().as_secs_f64() * 1e9 / order.len() as f64);
        let t = Instant::now();
        for name in &order {
            black_box(map.get(black_box(*name)));
        }
        map_ns.push(t.elapsed().as_secs_f64() * 1e9 / order.len() as f64);
    }
    let out = json!({
        "servers": a.servers,
        "tools": listed.len(),
        "ready_ms": ms(ready),
        "cpu_ms": cpu_ms,
        "cpu_by_thread_ms": by_thread,
        "rss_growth_kib": idle.0.saturating_sub(before.0),
        "anon_growth_kib": idle.1.saturating_sub(before.1),
        "threads": threads(),
        "fds": fds(),
        "tools_us": median(&mut tools_us),
        "tools_first_us": first_us,
        "clone_us": median(&mut clone_us),
        "route_ns": median(&mut route_ns),
        "map_ns": median(&mut map_ns),
    });
    smol::block_on(manager.close());
    Ok(out)
}

fn bare_stdio(a: &ManyArgs) -> Result<Value, String> {
    let before = rss();
    let threads_before = thread_cpu();
    let started = Instant::now();
    // All the clients connect (the handshake: ready to be called), as the floor's answers are
    // read: when the last was connected; then each lists its tools (the list kept, as a host
    // would): when the last had listed. The listings wait for the last handshake, so that no
    // server's listing is counted in another's connect.
    let clients = smol::block_on(futures::future::try_join_all((0..a.servers).map(|i| {
        let config = stdio_config(a, i);
        let options = ConnectOptions {
            era: Era::Handshake,
            ..ConnectOptions::default()
        };
        async move { mcpwire::connect_smol(&config, options).await }
    })))
    .map_err(|e| e.to_string())?;
    let ready = started.elapsed();
    let cpu_ms = host_cpu_ms();
    let by_thread = thread_cpu_delta(&threads_before, &thread_cpu());
    if std::env::var_os("MCPWIRE_BENCH_READY_ONLY").is_some() {
        // For a profile of the connects alone.
        smol::block_on(futures::future::join_all(clients.iter().map(|c| c.close())));
        let out = json!({"servers": a.servers, "ready_ms": ms(ready), "cpu_ms": cpu_ms,
                         "cpu_by_thread_ms": by_thread});
        return Ok(out);
    }
    let connected = smol::block_on(futures::future::try_join_all(clients.into_iter().map(
        |client| async move {
            let tools = client.list_tools().await.map_err(|e| e.to_string())?;
            Ok::<_, String>((client, tools))
        },
    )))?;
    let listed = started.elapsed();
    smol::block_on(smol::Timer::after(Duration::from_secs(1)));
    let idle = rss();
    let tools: usize = connected.iter().map(|c| c.1.len()).sum();
    let out = json!({
        "servers": a.servers,
        "tools": tools,
        "ready_ms": ms(ready),
        "listed_ms": ms(listed),
        "cpu_ms": cpu_ms,
        "cpu_by_thread_ms": by_thread,
        "rss_growth_kib": idle.0.saturating_sub(before.0),
        "anon_growth_kib": idle.1.saturating_sub(before.1),
        "threads": threads(),
        "fds": fds(),
    });
    smol::block_on(futures::future::join_all(
        connected.iter().map(|c| c.0.close()),
    ));
    Ok(out)
}

/// What the crash role compares before and after.
fn snapshot() -> Value {
    let (children, zombies) = children();
    let (rss, anon) = rss();
    json!({"fds": fds(), "threads": threads(), "children": children, "zombies": zombies,
           "rss_kib": rss, "anon_kib": anon})
}

/// Sequential calls to `names` in turn for `seconds`: calls made, CPU µs per call.
fn w1(manager: &Manager, names: &[String], seconds: f64) -> Result<(u64, f64), String> {
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let mut meter = crate::begin();
    let mut calls = 0u64;
    smol::block_on(async {
        while Instant::now() < until {
            for name in names {
                let r = manager
                    .call_tool(name, json!({"message": "hi"}))
                    .await
                    .map_err(|e| format!("{name}: {e}"))?;
                crate::check_echo("hi", &r.text())?;
                calls += 1;
            }
        }
        Ok::<(), String>(())
    })?;
    let w = meter.stop();
    Ok((calls, (w.user + w.sys).as_secs_f64() * 1e6 / calls as f64))
}

/// Kills the victims by their PID, each about once a second when it is ready, until `stop`:
/// how many were killed.
fn killer(manager: &Manager, victims: &[String], stop: &AtomicBool) -> u64 {
    let mut kills = 0;
    let period = Duration::from_secs_f64(1.0 / victims.len() as f64);
    let mut next = 0;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(period);
        let name = &victims[next % victims.len()];
        next += 1;
        if !matches!(manager.state(name), Some(ServerState::Ready { .. })) {
            continue;
        }
        if let Some(pid) = manager.client(name).map(|c| c.pid()) {
            if pid > 0 {
                // SAFETY: kill(2) on the PID of a server this process started (the Manager
                // reaps it).
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                kills += 1;
            }
        }
    }
    kills
}

/// `f` while the victims are killed again and again (see [`killer`]): what `f` gave, and the
/// kills.
fn while_killing<T>(manager: &Manager, victims: &[String], f: impl FnOnce() -> T) -> (T, u64) {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let k = s.spawn(|| killer(manager, victims, &stop));
        let r = f();
        stop.store(true, Ordering::Relaxed);
        (r, k.join().unwrap_or(0))
    })
}

/// CPU time of each of this process's threads so far, ns, by thread (`schedstat`'s first
/// field: time on a CPU), with its name.
pub fn thread_cpu() -> HashMap<u64, (String, u64)> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for entry in dir.flatten() {
        let Ok(tid) = entry.file_name().to_string_lossy().parse::<u64>() else {
            continue;
        };
        let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        let ns = std::fs::read_to_string(entry.path().join("schedstat"))
            .ok()
            .and_then(|t| t.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        out.insert(tid, (comm.trim().to_owned(), ns));
    }
    out
}

/// The CPU each thread spent between two [`thread_cpu`] readings, ms, summed by thread name
/// (the digits of a numbered name dropped: `blocking-3` counts as `blocking`); the calling
/// thread as `caller`.
fn thread_cpu_delta(a: &HashMap<u64, (String, u64)>, b: &HashMap<u64, (String, u64)>) -> Value {
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() } as u64;
    let mut by: std::collections::BTreeMap<String, f64> = Default::default();
    for (tid, (name, ns)) in b {
        let before = a.get(tid).map_or(0, |(_, n)| *n);
        let name = match *tid == me {
            true => "caller".to_owned(),
            false => name
                .trim_end_matches(|c: char| c.is_ascii_digit())
                .to_owned(),
        };
        *by.entry(name).or_default() += ns.saturating_sub(before) as f64 / 1e6;
    }
    json!(by)
}

/// This process's CPU time so far (user and system), ms.
pub fn host_cpu_ms() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is handed.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn crash(a: &ManyArgs) -> Result<Value, String> {
    let mut o = options();
    // Crashing servers come back soon, whatever their failures in a row.
    let mut restart = RestartPolicy::default();
    restart.initial = Duration::from_millis(100);
    restart.max = Duration::from_secs(1);
    restart.max_failures = None;
    o.restart = restart;
    let manager = Manager::new(o);
    for i in 0..a.servers {
        manager.add_with(&server_name(i), stdio_config(a, i), settings());
    }
    wait_all_ready(&manager, Duration::from_secs(120))?;
    let victims: Vec<String> = (0..a.servers.div_ceil(10)).map(server_name).collect();
    let calm: Vec<String> = (victims.len()..a.servers)
        .map(|i| format!("{}__echo", server_name(i)))
        .collect();
    // Warm-up, then the figures the run must leave as they were.
    w1(&manager, &calm, 0.2)?;
    smol::block_on(smol::Timer::after(Duration::from_millis(300)));
    let before = snapshot();

    let t0 = thread_cpu();
    let (calls_a, cpu_a) = w1(&manager, &calm, a.seconds)?;
    let t1 = thread_cpu();
    let (r, kills_b) = while_killing(&manager, &victims, || w1(&manager, &calm, a.seconds));
    let (calls_b, cpu_b) = r?;
    let t2 = thread_cpu();
    let (calls_c, cpu_c) = w1(&manager, &calm, a.seconds)?;
    let t3 = thread_cpu();
    wait_all_ready(&manager, Duration::from_secs(30))?;
    // The host's own restart work, measured without calls: the host's CPU while the victims
    // are killed and restarted and nothing else happens, less the same time idle.
    let sleep = || std::thread::sleep(Duration::from_secs_f64(a.seconds));
    let (idle0, i0) = (host_cpu_ms(), thread_cpu());
    sleep();
    let (idle1, i1) = (host_cpu_ms(), thread_cpu());
    let ((), kills_d) = while_killing(&manager, &victims, sleep);
    let (idle2, i2) = (host_cpu_ms(), thread_cpu());
    wait_all_ready(&manager, Duration::from_secs(30))?;
    smol::block_on(smol::Timer::after(Duration::from_millis(500)));
    let after = snapshot();
    let restart_ms = ((idle2 - idle1) - (idle1 - idle0)) / (kills_d.max(1) as f64);
    let out = json!({
        "servers": a.servers,
        "victims": victims.len(),
        "seconds": a.seconds,
        "kills": kills_b,
        "calls_calm": calls_a + calls_c,
        "calls_crash": calls_b,
        "cpu_us_calm": (cpu_a + cpu_c) / 2.0,
        "cpu_us_calm_before": cpu_a,
        "cpu_us_calm_after": cpu_c,
        "cpu_us_crash": cpu_b,
        // Per thread (ms) in each phase: calm, crashing, calm.
        "threads_calm_before": thread_cpu_delta(&t0, &t1),
        "threads_crash": thread_cpu_delta(&t1, &t2),
        "threads_calm_after": thread_cpu_delta(&t2, &t3),
        // Without calls: idle, then restarts alone.
        "idle_cpu_ms": idle1 - idle0,
        "restarts_alone_cpu_ms": idle2 - idle1,
        "restarts_alone_kills": kills_d,
        "threads_idle": thread_cpu_delta(&i0, &i1),
        "threads_restarts_alone": thread_cpu_delta(&i1, &i2),
        // The host's own CPU per restart, and what that is per call of the crash phase.
        "restart_cpu_ms": restart_ms,
        "restart_cpu_us_per_call": restart_ms * 1e3 * kills_b as f64 / calls_b.max(1) as f64,
        "before": before,
        "after": after,
    });
    smol::block_on(manager.close());
    Ok(out)
}

/// `host:port` and path of an `http://` URL.
fn split_url(url: &str) -> Result<(&str, &str), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("not an http:// URL: {url}"))?;
    Ok(rest.split_at(rest.find('/').unwrap_or(rest.len())))
}

fn floor_http(a: &ManyArgs) -> Result<Value, String> {
    let started = Instant::now();
    let mut conns = Vec::with_capacity(a.urls.len());
    for url in &a.urls {
        let (host, path) = split_url(url)?;
        let mut s = TcpStream::connect(host).map_err(|e| format!("{host}: {e}"))?;
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{INITIALIZE}",
            INITIALIZE.len()
        );
        s.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
        conns.push(s);
    }
    let mut buf = Vec::new();
    for s in &mut conns {
        buf.clear();
        s.read_to_end(&mut buf).map_err(|e| e.to_string())?;
        if measure_find(&buf, b"\"protocolVersion\"").is_none() {
            return Err(format!(
                "not an initialize answer: {:.80}",
                String::from_utf8_lossy(&buf)
            ));
        }
    }
    Ok(json!({"servers": a.urls.len(), "ready_ms": ms(started.elapsed())}))
}

fn measure_find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn manager_http(a: &ManyArgs) -> Result<Value, String> {
    let started = Instant::now();
    let manager = Manager::new(options());
    for (i, url) in a.urls.iter().enumerate() {
        manager.add_with(&server_name(i), ServerConfig::http(url.clone()), settings());
    }
    wait_all_ready(&manager, Duration::from_secs(60))?;
    let ready = started.elapsed();
    let tools = manager.tools().len();
    smol::block_on(manager.close());
    Ok(json!({"servers": a.urls.len(), "tools": tools, "ready_ms": ms(ready)}))
}

/// How many stdio servers the workload runs: 100, or 20 with `--quick`.
pub fn servers(quick: bool) -> usize {
    if quick {
        20
    } else {
        100
    }
}

/// How many Python servers over HTTP the workload runs.
pub const HTTP_SERVERS: usize = 5;

/// One batch of the workload, each role in its own process in an order of this batch's: the
/// records by role. The runner's binary `runner` finds `mcpwire-bench-many` beside it; five
/// Python servers are started for the batch and killed by their PIDs at its end.
pub fn batch(
    runner: &std::path::Path,
    batch: u32,
    quick: bool,
    log: &std::fs::File,
    timeout: Duration,
) -> Vec<(String, Value)> {
    let exe = runner.with_file_name("mcpwire-bench-many");
    let cli = default_cli();
    let failed = |role: &str, e: String| json!({"suite": "many", "role": role, "ok": false, "error": e, "batch": batch});
    if !cli.exists() {
        let e = format!(
            "{} is missing: build it (cargo build --release -p mcpwire-cli) or set \
             MCPWIRE_BENCH_CLI",
            cli.display()
        );
        return ROLES
            .iter()
            .map(|r| (r.to_string(), failed(r, e.clone())))
            .collect();
    }
    let http: Result<Vec<crate::servers::HttpServer>, String> = std::thread::scope(|s| {
        let started: Vec<_> = (0..HTTP_SERVERS)
            .map(|_| s.spawn(|| crate::servers::HttpServer::start(crate::Server::PythonHttp)))
            .collect();
        started
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("panicked".into())))
            .collect()
    });
    let urls = match &http {
        Ok(servers) => servers
            .iter()
            .map(|s| s.url.clone())
            .collect::<Vec<_>>()
            .join(","),
        Err(_) => String::new(),
    };
    let mut roles: Vec<&str> = ROLES.to_vec();
    crate::runner::shuffle(&mut roles, u64::from(batch) + 11);
    let base = |role: &str| -> Vec<String> {
        let mut args = vec![
            role.to_owned(),
            "--servers".into(),
            servers(quick).to_string(),
            "--tools".into(),
            "100".into(),
            "--cli".into(),
            cli.to_string_lossy().into_owned(),
            "--seconds".into(),
            if quick { "1" } else { "3" }.into(),
        ];
        if role.ends_with("-http") {
            args.extend(["--urls".into(), urls.clone()]);
        }
        args
    };
    if http.is_ok() {
        // The Python servers' first answers are slow (imports on first use): a warm-up, not kept.
        let _ = crate::runner::run_process(&exe, &base("floor-http"), &[], "-", log, timeout);
    }
    let mut out = Vec::new();
    for role in roles {
        let rec = match (&http, role.ends_with("-http")) {
            (Err(e), true) => failed(role, format!("cannot start the Python servers: {e}")),
            _ => match crate::runner::run_process(&exe, &base(role), &[], "-", log, timeout) {
                Ok((mut rec, _, process_ms)) => {
                    rec["batch"] = json!(batch);
                    rec["process_ms"] = json!(process_ms);
                    rec
                }
                Err(e) => failed(role, e),
            },
        };
        eprintln!(
            "  many/{role}: {}",
            match rec.get("ok") == Some(&Value::Bool(true)) {
                true => "ok".to_owned(),
                false => rec["error"].to_string(),
            }
        );
        out.push((role.to_owned(), rec));
    }
    out
}
