//! `mcpwire-bench run`: every client × server × workload as its own process, interleaved in
//! batches, then the passes that count syscalls, connects (`perf_event_open` in the client) and
//! allocations (one unless `--counting-passes` asks for more), then the tables.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::measure::COUNT_SYSCALLS_ENV;
use crate::report::Results;
use crate::servers::{self, HttpServer};
use crate::{Impl, Server, Workload};

struct Options {
    batches: u32,
    quick: bool,
    workloads: Vec<Workload>,
    impls: Vec<Impl>,
    /// Whether `--impls` named the clients (else the default set).
    impls_named: bool,
    servers: Vec<Server>,
    perf: bool,
    /// How many counting passes (with `perf`).
    counting_passes: u32,
    out: Option<PathBuf>,
    timeout: Duration,
    /// The many-servers workload (`--only many`).
    many: bool,
    /// A thousand servers under one Manager (`--only many1000`, never by default).
    many1000: bool,
}

fn list<T>(value: &str, parse: impl Fn(&str) -> Option<T>) -> Vec<T> {
    value
        .split(',')
        .map(|v| {
            parse(v).unwrap_or_else(|| {
                eprintln!("unknown name {v:?}");
                std::process::exit(2)
            })
        })
        .collect()
}

fn parse(args: &[String]) -> Options {
    let mut o = Options {
        batches: 3,
        quick: false,
        workloads: Workload::ALL.to_vec(),
        impls: Impl::ALL.to_vec(),
        impls_named: false,
        servers: Server::ALL.to_vec(),
        perf: true,
        counting_passes: 1,
        out: None,
        timeout: Duration::from_secs(180),
        many: true,
        many1000: false,
    };
    let mut batches_set = false;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next().cloned().unwrap_or_else(|| {
                eprintln!("{flag} needs a value");
                std::process::exit(2)
            })
        };
        match flag.as_str() {
            "--batches" => {
                o.batches = value().parse().unwrap_or(3);
                batches_set = true;
            }
            "--quick" => o.quick = true,
            "--only" => {
                // `many` is a workload of its own, beside the client × server ones.
                let value = value();
                let names: Vec<&str> = value.split(',').collect();
                o.many = names.contains(&"many");
                o.many1000 = names.contains(&"many1000");
                let rest: Vec<&str> = names
                    .into_iter()
                    .filter(|n| *n != "many" && *n != "many1000")
                    .collect();
                o.workloads = match rest.is_empty() {
                    true => Vec::new(),
                    false => list(&rest.join(","), Workload::parse),
                };
            }
            "--impls" => {
                o.impls = list(&value(), Impl::parse);
                o.impls_named = true;
            }
            "--servers" => o.servers = list(&value(), Server::parse),
            "--no-syscalls" => o.perf = false,
            "--counting-passes" => o.counting_passes = value().parse().unwrap_or(1).max(1),
            "--out" => o.out = Some(PathBuf::from(value())),
            "--timeout" => o.timeout = Duration::from_secs(value().parse().unwrap_or(180)),
            _ => {
                eprintln!("unknown option {flag}");
                std::process::exit(2)
            }
        }
    }
    if o.quick && !batches_set {
        o.batches = 1;
    }
    o
}

/// One combination.
#[derive(Clone, Copy)]
struct Combo {
    server: Server,
    imp: Impl,
    workload: Workload,
}

impl Combo {
    fn label(&self) -> String {
        format!(
            "{}/{}/{}",
            self.server.name(),
            self.imp.name(),
            self.workload.name()
        )
    }
}

/// The largest W3 echo sent to server-everything over HTTP, whose transport refuses request
/// bodies over 4 MiB.
const EVERYTHING_HTTP_MAX_ECHO: usize = 3 << 20;

/// The counts: the full workloads, or `--quick`'s smaller ones.
fn counts(quick: bool) -> [String; 8] {
    let (w1, w2, bytes) = if quick {
        (300, 1_000, 1 << 20)
    } else {
        (2_000, 10_000, 8 << 20)
    };
    [
        "--w1-calls".into(),
        w1.to_string(),
        "--w2-calls".into(),
        w2.to_string(),
        "--inflight".into(),
        "100".into(),
        "--w3-bytes".into(),
        bytes.to_string(),
    ]
}

/// A small deterministic shuffle (xorshift), so each batch runs the combinations in another
/// order.
pub(crate) fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in (1..items.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        items.swap(i, (x % (i as u64 + 1)) as usize);
    }
}

/// The binary that runs `imp`'s client: its own (`mcpwire-bench-floor`, `-mcpwire`,
/// `-mcpwire-tokio`, `-rmcp`)
/// next to the runner when built, else the runner's binary, which has them all.
fn client_exe(runner: &Path, imp: Impl) -> PathBuf {
    let family = match imp {
        Impl::Floor => "floor",
        Impl::Mcpwire
        | Impl::Mcpwire1t
        | Impl::McpwireStateless
        | Impl::McpwireLibcurl
        | Impl::IsahcFloor => "mcpwire",
        Impl::McpwireTokio | Impl::McpwireTokioCt => "mcpwire-tokio",
        Impl::Rmcp | Impl::RmcpCt | Impl::RmcpKa => "rmcp",
    };
    let own = runner.with_file_name(format!("mcpwire-bench-{family}"));
    if own.exists() {
        own
    } else {
        runner.to_owned()
    }
}

/// Runs `exe` with `args`, its stderr to `log`, killed by its PID after `timeout`: its result
/// (the last JSON line with `ok`), the milliseconds to the first other line carrying `first`
/// (if any), and the process's milliseconds.
pub(crate) fn run_process(
    exe: &Path,
    args: &[String],
    envs: &[(&str, &str)],
    first: &str,
    log: &File,
    timeout: Duration,
) -> Result<(Value, Option<f64>, f64), String> {
    let stderr = log.try_clone().map_err(|e| e.to_string())?;
    let spawned = Instant::now();
    let mut child = Command::new(exe)
        .args(args)
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let pid = child.id();
    // The watchdog kills this one child (by its PID) if it overruns.
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if done_rx.recv_timeout(timeout) == Err(mpsc::RecvTimeoutError::Timeout) {
            // SAFETY: kill(2) on the PID of a child we have not reaped yet.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            return true;
        }
        false
    });
    let stdout = child.stdout.take().expect("piped stdout");
    let mut first_ms = None;
    let mut last = None;
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        // A result line says whether it went well; any other line carrying `first` is the
        // client's announcement.
        if v.get("ok").is_some() {
            last = Some(v);
        } else if v.get(first).is_some() && first_ms.is_none() {
            first_ms = Some(spawned.elapsed().as_secs_f64() * 1e3);
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let process_ms = spawned.elapsed().as_secs_f64() * 1e3;
    let _ = done_tx.send(());
    if watchdog.join().unwrap_or(false) {
        return Err(format!("killed after {} s", timeout.as_secs()));
    }
    let rec = last.ok_or_else(|| format!("no result line ({status})"))?;
    Ok((rec, first_ms, process_ms))
}

/// Runs one client process; returns its record (or why it failed).
fn run_one(
    exe: &Path,
    combo: Combo,
    url: Option<&str>,
    counts: &[String],
    count_syscalls: bool,
    log: &File,
    timeout: Duration,
) -> Result<Value, String> {
    let mut client_args: Vec<String> = vec![
        "client".into(),
        "--impl".into(),
        combo.imp.name().into(),
        "--server".into(),
        combo.server.name().into(),
        "--workload".into(),
        combo.workload.name().into(),
    ];
    let exe = &client_exe(exe, combo.imp);
    if let Some(url) = url {
        client_args.extend(["--url".into(), url.to_owned()]);
    }
    client_args.extend(counts.iter().cloned());
    if combo.server == Server::EverythingHttp && combo.workload == Workload::W3 {
        // server-everything's HTTP transport refuses request bodies over 4 MiB (413).
        client_args.extend(["--w3-bytes".into(), EVERYTHING_HTTP_MAX_ECHO.to_string()]);
    }
    let envs: &[(&str, &str)] = match count_syscalls {
        true => &[(COUNT_SYSCALLS_ENV, "1")],
        false => &[],
    };
    let (mut rec, startup_ms, process_ms) =
        run_process(exe, &client_args, envs, "ready_ms", log, timeout)?;
    if rec.get("ok") != Some(&Value::Bool(true)) {
        return Err(rec
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("failed")
            .to_owned());
    }
    rec["process_ms"] = json!(process_ms);
    if let Some(ms) = startup_ms {
        rec["startup_ms"] = json!(ms);
    }
    Ok(rec)
}

fn combos(o: &Options) -> Vec<Combo> {
    let mut v = Vec::new();
    for &server in &o.servers {
        for &imp in &o.impls {
            if matches!(imp, Impl::RmcpKa | Impl::IsahcFloor) && !server.is_http() {
                continue;
            }
            if imp == Impl::McpwireStateless && server != Server::PythonHttp {
                continue;
            }
            // Through libcurl only where it mattered: over TLS.
            if imp == Impl::McpwireLibcurl
                && !matches!(server, Server::PythonHttps | Server::MinHttps)
            {
                continue;
            }
            // The tokio rows, unless named: against the servers that show the client's own
            // cost (the stdio ones, the Python server, and the https server that is not the
            // bottleneck), which keeps `--quick` short.
            if matches!(imp, Impl::McpwireTokio | Impl::McpwireTokioCt)
                && !o.impls_named
                && matches!(server, Server::EverythingHttp | Server::PythonHttps)
            {
                continue;
            }
            for &workload in &o.workloads {
                // A smoke test measures the tokio rows' calls only, what they are there for.
                if matches!(imp, Impl::McpwireTokio | Impl::McpwireTokioCt)
                    && o.quick
                    && !o.impls_named
                    && !matches!(workload, Workload::W1 | Workload::W2)
                {
                    continue;
                }
                v.push(Combo {
                    server,
                    imp,
                    workload,
                });
            }
        }
    }
    v
}

/// The HTTP servers of one batch, started fresh and warmed up by a floor run.
fn start_servers(
    o: &Options,
    exe: &Path,
    log: &File,
) -> Result<BTreeMap<Server, HttpServer>, String> {
    let mut map = BTreeMap::new();
    for &server in o.servers.iter().filter(|s| s.is_http()) {
        let s = HttpServer::start(server)?;
        let warm = Combo {
            server,
            imp: Impl::Floor,
            workload: Workload::W1,
        };
        let counts = counts(true);
        if let Err(e) = run_one(exe, warm, Some(&s.url), &counts, false, log, o.timeout) {
            eprintln!("  warm-up of {} failed: {e}", server.name());
        }
        map.insert(server, s);
    }
    Ok(map)
}

/// A new file of raw results, `results/{prefix}-{seconds since the epoch}.jsonl` (the folder
/// made when it is not there).
pub fn results_file(prefix: &str) -> std::path::PathBuf {
    let results_dir = servers::bench_dir().join("results");
    let _ = std::fs::create_dir_all(&results_dir);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    results_dir.join(format!("{prefix}-{stamp}.jsonl"))
}

pub fn main(args: &[String]) -> i32 {
    let o = parse(args);
    let exe = std::env::current_exe().expect("current exe");
    for &s in &o.servers {
        if let Err(e) = servers::available(s) {
            eprintln!("{}: {e}", s.name());
            return 1;
        }
    }
    let out_path = o.out.clone().unwrap_or_else(|| results_file("run"));
    let log_path = out_path.with_extension("stderr.log");
    let mut out = File::create(&out_path).expect("create the results file");
    let log = File::create(&log_path).expect("create the log file");
    let perf = o.perf;
    let counts = counts(o.quick);
    let all = combos(&o);
    let started = Instant::now();
    eprintln!(
        "{} combinations{} × {} batches{}; results in {}",
        all.len(),
        if o.many { " and many servers" } else { "" },
        o.batches,
        if !perf || all.is_empty() {
            String::new()
        } else if o.counting_passes == 1 {
            " + one syscall-counting pass".to_owned()
        } else {
            format!(" + {} syscall-counting passes", o.counting_passes)
        },
        out_path.display()
    );
    let mut results = Results::new(o.batches as usize);
    let mut record = |rec: &Value| {
        let _ = writeln!(out, "{rec}");
    };
    let mut failed = Vec::new();
    let passes = o.batches
        + if perf && !all.is_empty() {
            o.counting_passes
        } else {
            0
        };
    for batch in 0..passes {
        let perf_pass = batch >= o.batches;
        if o.many && !perf_pass {
            eprintln!(
                "batch {}/{}: many servers ({:.0} s so far)",
                batch + 1,
                o.batches,
                started.elapsed().as_secs_f64()
            );
            for (role, rec) in crate::many::batch(&exe, batch, o.quick, &log, o.timeout) {
                record(&rec);
                match rec.get("ok") == Some(&Value::Bool(true)) {
                    true => {
                        results.many.entry(role).or_default().insert(batch, rec);
                    }
                    false => failed.push(format!(
                        "many/{role} (batch {}): {}",
                        batch + 1,
                        rec.get("error").and_then(Value::as_str).unwrap_or("failed")
                    )),
                }
            }
        }
        if o.many1000 && !perf_pass {
            eprintln!(
                "batch {}/{}: a thousand servers ({:.0} s so far)",
                batch + 1,
                o.batches,
                started.elapsed().as_secs_f64()
            );
            for (role, rec) in crate::thousand::batch(&exe, batch, &log, o.timeout) {
                record(&rec);
                match rec.get("ok") == Some(&Value::Bool(true)) {
                    true => {
                        results.many.entry(role).or_default().insert(batch, rec);
                    }
                    false => failed.push(format!(
                        "many1000/{role} (batch {}): {}",
                        batch + 1,
                        rec.get("error").and_then(Value::as_str).unwrap_or("failed")
                    )),
                }
            }
        }
        if all.is_empty() {
            continue;
        }
        let servers = match start_servers(&o, &exe, &log) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("cannot start the HTTP servers: {e}");
                return 1;
            }
        };
        let mut order: Vec<Combo> = all
            .iter()
            .copied()
            .filter(|c| {
                !perf_pass || matches!(c.workload, Workload::W1 | Workload::W2 | Workload::W3)
            })
            .collect();
        shuffle(&mut order, u64::from(batch) + 1);
        let what = if perf_pass {
            format!(
                "syscall pass {}/{}",
                batch - o.batches + 1,
                o.counting_passes
            )
        } else {
            format!("batch {}/{}", batch + 1, o.batches)
        };
        eprintln!(
            "{what}: {} runs ({:.0} s so far)",
            order.len(),
            started.elapsed().as_secs_f64()
        );
        for combo in order {
            let url = servers.get(&combo.server).map(|s| s.url.as_str());
            match run_one(&exe, combo, url, &counts, perf_pass, &log, o.timeout) {
                Ok(mut rec) => {
                    rec["batch"] = json!(batch);
                    rec["pass"] = json!(if perf_pass { "syscalls" } else { "timed" });
                    if let Some(e) = rec.get("syscalls_error") {
                        eprintln!("  {} (syscall pass): {e}", combo.label());
                    }
                    record(&rec);
                    let key = (combo.server, combo.imp, combo.workload);
                    if perf_pass {
                        results.perf.entry(key).or_default().insert(batch, rec);
                    } else {
                        results.timed.entry(key).or_default().insert(batch, rec);
                    }
                }
                Err(e) => {
                    eprintln!("  {} ({what}): {e}", combo.label());
                    record(&json!({
                        "impl": combo.imp.name(), "server": combo.server.name(),
                        "workload": combo.workload.name(), "batch": batch, "ok": false,
                        "error": e,
                    }));
                    failed.push(format!("{} ({what}): {e}", combo.label()));
                }
            }
        }
        drop(servers);
    }
    results.failed = failed;
    let elapsed = started.elapsed().as_secs_f64();
    let mut tables = format!(
        "## mcpwire-bench: {} batch(es){}{}, {:.0} s\n\nMedian (min–max) over batches; ratios are \
         computed within each batch, then summarised. Syscalls and allocations per call and TCP \
         connections opened during the window come from the passes that count them \
         (perf_event_open on the client's own threads; the allocations of every thread, and \
         apart, \"own\", those less the benchmark's side: building the arguments, reading \
         the answer's text).\n",
        o.batches,
        if o.quick { ", quick counts" } else { "" },
        if perf { "" } else { ", no syscall pass" },
        elapsed
    );
    tables.push_str(&results.tables());
    let _ = std::fs::write(out_path.with_extension("md"), &tables);
    let _ = writeln!(std::io::stdout().lock(), "{tables}");
    eprintln!(
        "done in {elapsed:.0} s; raw records in {}, tables in {}",
        out_path.display(),
        out_path.with_extension("md").display()
    );
    0
}
