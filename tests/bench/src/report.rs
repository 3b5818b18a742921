//! The client's JSON line, and the runner's tables: per combination the median and range over
//! batches, and ratios to the floor and to rmcp computed within each batch.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::{ClientArgs, Impl, Outcome, Server, Workload};

/// The line a client prints.
pub fn client_line(args: &ClientArgs, out: &Outcome) -> Value {
    let w = &out.window;
    let mut line = json!({
        "impl": args.imp.name(),
        "server": args.server.name(),
        "workload": args.workload.name(),
        "ok": true,
        "calls": out.calls,
        "inflight": if args.workload == Workload::W2 { args.inflight } else { 1 },
        "bytes": args.message().len(),
        "wall_us": w.wall.as_secs_f64() * 1e6,
        "user_us": w.user.as_secs_f64() * 1e6,
        "sys_us": w.sys.as_secs_f64() * 1e6,
        "vcsw": w.voluntary,
        "ivcsw": w.involuntary,
        "ready_ms": out.ready_ms,
        "peak_rss_kib": out.peak_rss_kib,
        "rss_kib": out.rss_kib,
        "rss_anon_kib": out.rss_anon_kib,
        "threads": out.threads,
        "threads_started": out.threads_started,
        "era": out.era,
        "connections": out.connections,
    });
    match &w.syscalls {
        Some(Ok(c)) => {
            line["syscalls"] = json!(c.syscalls);
            line["connects"] = json!(c.connects);
            line["threads_new"] = json!(c.threads_new);
        }
        Some(Err(e)) => line["syscalls_error"] = json!(e),
        None => {}
    }
    if let Some(n) = w.allocations {
        line["allocations"] = json!(n);
    }
    if let Some(n) = w.bench_allocations {
        line["bench_allocations"] = json!(n);
    }
    line
}

/// The header of the W1 and W2 tables.
const CALLS_HEADER: &str = "| server | client | calls/s | CPU µs/call | ctx sw/call | syscalls/call | allocs/call | own allocs/call | threads started / alive | peak RSS MiB | CPU/call ÷ floor | CPU/call ÷ rmcp | CPU/call ÷ isahc-floor | calls/s ÷ floor | calls/s ÷ rmcp | TCP conns |";

/// One metric of a combination over batches.
fn f(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

/// The metrics the tables show, computed from one record.
fn metric(rec: &Value, name: &str) -> Option<f64> {
    let calls = f(rec, "calls")?;
    let per_call = |x: f64| (calls > 0.0).then(|| x / calls);
    match name {
        "calls_per_s" => {
            let wall = f(rec, "wall_us")?;
            (wall > 0.0 && calls > 0.0).then(|| calls / (wall / 1e6))
        }
        "cpu_us" => per_call(f(rec, "user_us")? + f(rec, "sys_us")?),
        "ctx" => per_call(f(rec, "vcsw")? + f(rec, "ivcsw")?),
        "wall_ms" => Some(f(rec, "wall_us")? / 1e3),
        "peak_mib" => Some(f(rec, "peak_rss_kib")? / 1024.0),
        "rss_mib" => Some(f(rec, "rss_kib")? / 1024.0),
        "rss_anon_mib" => Some(f(rec, "rss_anon_kib")? / 1024.0),
        "startup_ms" => f(rec, "startup_ms"),
        "threads" => f(rec, "threads"),
        "threads_started" => f(rec, "threads_started"),
        "echo_mib" => Some(f(rec, "bytes")? / 1048576.0),
        _ => None,
    }
}

fn median(mut xs: Vec<f64>) -> Option<(f64, f64, f64)> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    let med = if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    };
    Some((med, xs[0], xs[n - 1]))
}

/// A number with about three significant digits.
fn num(x: f64) -> String {
    let a = x.abs();
    if a >= 10_000.0 {
        format!("{:.1}k", x / 1e3)
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

fn cell(stats: Option<(f64, f64, f64)>, batches: usize) -> String {
    match stats {
        None => "–".into(),
        Some((m, lo, hi)) if batches > 1 && lo != hi => {
            format!("{} ({}–{})", num(m), num(lo), num(hi))
        }
        Some((m, _, _)) => num(m),
    }
}

fn ratio_cell(stats: Option<(f64, f64, f64)>, batches: usize) -> String {
    // Two significant digits below 0.01 (a shared list against a copy), two decimals above.
    let digits = |r: f64| if r > 0.0 && r < 0.01 { 4 } else { 2 };
    match stats {
        None => "–".into(),
        Some((m, lo, hi)) if batches > 1 && lo != hi => {
            let d = digits(m);
            format!("{m:.d$}× ({lo:.d$}–{hi:.d$})")
        }
        Some((m, _, _)) => format!("{m:.*}×", digits(m)),
    }
}

type Key = (Server, Impl, Workload);

/// The records of the timed passes and of the counting passes, by combination and batch.
pub struct Results {
    pub timed: BTreeMap<Key, BTreeMap<u32, Value>>,
    pub perf: BTreeMap<Key, BTreeMap<u32, Value>>,
    /// The many-servers workload's records, by role and batch.
    pub many: BTreeMap<String, BTreeMap<u32, Value>>,
    pub failed: Vec<String>,
    pub batches: usize,
}

impl Results {
    /// Results read back from a raw JSON lines file (`mcpwire-bench report FILE`).
    pub fn from_jsonl(text: &str) -> Results {
        let mut r = Results::new(0);
        let mut batches = std::collections::BTreeSet::new();
        for line in text.lines() {
            let Ok(rec) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let name = |k: &str| rec.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            if name("suite") == "many" {
                let batch = rec.get("batch").and_then(Value::as_u64).unwrap_or(0) as u32;
                if rec.get("ok") == Some(&Value::Bool(true)) {
                    batches.insert(batch);
                    r.many.entry(name("role")).or_default().insert(batch, rec);
                } else {
                    r.failed.push(format!(
                        "many/{} (batch {}): {}",
                        name("role"),
                        batch + 1,
                        name("error")
                    ));
                }
                continue;
            }
            let (Some(server), Some(imp), Some(workload)) = (
                Server::parse(&name("server")),
                Impl::parse(&name("impl")),
                Workload::parse(&name("workload")),
            ) else {
                continue;
            };
            let batch = rec.get("batch").and_then(Value::as_u64).unwrap_or(0) as u32;
            if rec.get("ok") != Some(&Value::Bool(true)) {
                r.failed.push(format!(
                    "{}/{}/{} (batch {batch}): {}",
                    server.name(),
                    imp.name(),
                    workload.name(),
                    name("error")
                ));
                continue;
            }
            let key = (server, imp, workload);
            if rec.get("pass").and_then(Value::as_str) == Some("syscalls") {
                r.perf.entry(key).or_default().insert(batch, rec);
            } else {
                batches.insert(batch);
                r.timed.entry(key).or_default().insert(batch, rec);
            }
        }
        r.batches = batches.len();
        r
    }

    pub fn new(batches: usize) -> Results {
        Results {
            timed: BTreeMap::new(),
            perf: BTreeMap::new(),
            many: BTreeMap::new(),
            failed: Vec::new(),
            batches,
        }
    }

    fn stats(&self, key: Key, name: &str) -> Option<(f64, f64, f64)> {
        let runs = self.timed.get(&key)?;
        median(runs.values().filter_map(|r| metric(r, name)).collect())
    }

    /// The ratio of `name` to the same metric of `base` in the same batch, over batches.
    fn ratio(&self, key: Key, base: Impl, name: &str) -> Option<(f64, f64, f64)> {
        let runs = self.timed.get(&key)?;
        let bases = self.timed.get(&(key.0, base, key.2))?;
        median(
            runs.iter()
                .filter_map(|(b, r)| {
                    let x = metric(r, name)?;
                    let y = metric(bases.get(b)?, name)?;
                    (y > 0.0).then(|| x / y)
                })
                .collect(),
        )
    }

    /// A counting pass's figure from one record: per call, but for `connects`; `own_allocations`
    /// is the allocations less those of the benchmark's own side.
    fn perf_one(rec: &Value, event: &str) -> Option<f64> {
        let calls = f(rec, "calls")?;
        let count = match event {
            "own_allocations" => f(rec, "allocations")? - f(rec, "bench_allocations")?,
            _ => f(rec, event)?,
        };
        match event {
            "connects" => Some(count),
            _ => (calls > 0.0).then(|| count / calls),
        }
    }

    /// A counting pass's figure over the counting passes: median, min, max.
    fn perf_stats(&self, key: Key, event: &str) -> Option<(f64, f64, f64)> {
        let runs = self.perf.get(&key)?;
        median(
            runs.values()
                .filter_map(|r| Self::perf_one(r, event))
                .collect(),
        )
    }

    fn perf(&self, key: Key, event: &str) -> Option<f64> {
        self.perf_stats(key, event).map(|(m, _, _)| m)
    }

    fn perf_cell(&self, key: Key, event: &str) -> String {
        let passes = self.perf.get(&key).map_or(0, BTreeMap::len);
        cell(self.perf_stats(key, event), passes)
    }

    fn keys(&self, workload: Workload) -> Vec<Key> {
        let mut keys: Vec<Key> = self
            .timed
            .keys()
            .filter(|k| k.2 == workload)
            .copied()
            .collect();
        keys.sort();
        keys
    }

    /// The markdown tables.
    pub fn tables(&self) -> String {
        let b = self.batches;
        let mut s = String::new();
        let base_rmcp = Impl::Rmcp;
        for workload in Workload::ALL {
            let keys = self.keys(workload);
            if keys.is_empty() {
                continue;
            }
            let (title, header) = match workload {
                Workload::W1 => (
                    "W1: sequential calls",
                    CALLS_HEADER,
                ),
                Workload::W2 => (
                    "W2: calls with many in flight",
                    CALLS_HEADER,
                ),
                Workload::W3 => (
                    "W3: one big echo",
                    "| server | client | echo MiB | time ms | CPU ms | peak RSS MiB | syscalls | time ÷ floor | time ÷ rmcp | peak RSS ÷ floor | peak RSS ÷ rmcp |",
                ),
                Workload::Startup => (
                    "Startup: process spawn to the first tools/list answered",
                    "| server | client | startup ms | startup ÷ floor | startup ÷ rmcp |",
                ),
                Workload::Idle => (
                    "Idle: resident memory after connect, one call and 1 s idle",
                    "| server | client | RSS MiB | of it anonymous MiB | threads | RSS ÷ floor | RSS ÷ rmcp | anonymous ÷ floor | anonymous ÷ rmcp |",
                ),
            };
            let _ = writeln!(s, "\n### {title}\n");
            let _ = writeln!(s, "{header}");
            let cols = header.matches('|').count() - 1;
            let _ = writeln!(s, "|{}", "---|".repeat(cols));
            for key in keys {
                let (server, imp, _) = key;
                let mut row = format!("| {} | {} |", server.name(), imp.name());
                let mut push = |c: String| {
                    let _ = write!(row, " {c} |");
                };
                match workload {
                    Workload::W1 | Workload::W2 => {
                        push(cell(self.stats(key, "calls_per_s"), b));
                        push(cell(self.stats(key, "cpu_us"), b));
                        push(cell(self.stats(key, "ctx"), b));
                        push(self.perf_cell(key, "syscalls"));
                        push(self.perf_cell(key, "allocations"));
                        push(self.perf_cell(key, "own_allocations"));
                        push(self.threads_cell(key));
                        push(cell(self.stats(key, "peak_mib"), b));
                        push(ratio_cell(self.ratio(key, Impl::Floor, "cpu_us"), b));
                        push(ratio_cell(self.ratio(key, base_rmcp, "cpu_us"), b));
                        push(ratio_cell(self.ratio(key, Impl::IsahcFloor, "cpu_us"), b));
                        push(ratio_cell(self.ratio(key, Impl::Floor, "calls_per_s"), b));
                        push(ratio_cell(self.ratio(key, base_rmcp, "calls_per_s"), b));
                        push(self.connections(key));
                    }
                    Workload::W3 => {
                        push(cell(self.stats(key, "echo_mib"), 1));
                        push(cell(self.stats(key, "wall_ms"), b));
                        push(cell(
                            self.stats(key, "cpu_us")
                                .map(|(m, l, h)| (m / 1e3, l / 1e3, h / 1e3)),
                            b,
                        ));
                        push(cell(self.stats(key, "peak_mib"), b));
                        push(self.perf_cell(key, "syscalls"));
                        push(ratio_cell(self.ratio(key, Impl::Floor, "wall_ms"), b));
                        push(ratio_cell(self.ratio(key, base_rmcp, "wall_ms"), b));
                        push(ratio_cell(self.ratio(key, Impl::Floor, "peak_mib"), b));
                        push(ratio_cell(self.ratio(key, base_rmcp, "peak_mib"), b));
                    }
                    Workload::Startup => {
                        push(cell(self.stats(key, "startup_ms"), b));
                        push(ratio_cell(self.ratio(key, Impl::Floor, "startup_ms"), b));
                        push(ratio_cell(self.ratio(key, base_rmcp, "startup_ms"), b));
                    }
                    Workload::Idle => {
                        push(cell(self.stats(key, "rss_mib"), b));
                        push(cell(self.stats(key, "rss_anon_mib"), b));
                        push(
                            self.stats(key, "threads")
                                .map_or_else(|| "–".into(), |(m, _, _)| format!("{m:.0}")),
                        );
                        push(ratio_cell(self.ratio(key, Impl::Floor, "rss_mib"), b));
                        push(ratio_cell(self.ratio(key, base_rmcp, "rss_mib"), b));
                        push(ratio_cell(self.ratio(key, Impl::Floor, "rss_anon_mib"), b));
                        push(ratio_cell(self.ratio(key, base_rmcp, "rss_anon_mib"), b));
                    }
                }
                let _ = writeln!(s, "{row}");
            }
        }
        s.push_str(&self.many_table());
        if !self.failed.is_empty() {
            let _ = writeln!(s, "\n### Runs that failed\n");
            for f in &self.failed {
                let _ = writeln!(s, "- {f}");
            }
        }
        s
    }

    /// Threads the process started up to the end of the window (the main thread not counted)
    /// and threads alive then (the main thread counted), medians over batches.
    fn threads_cell(&self, key: Key) -> String {
        let started = self.stats(key, "threads_started");
        let alive = self.stats(key, "threads");
        match (started, alive) {
            (Some((s, _, _)), Some((a, _, _))) => format!("{s:.0} / {a:.0}"),
            (None, Some((a, _, _))) => format!("– / {a:.0}"),
            _ => "–".into(),
        }
    }

    /// TCP connections: opened during the measured window (the count of `connect` calls), and
    /// the client's own count for the whole connection where it keeps one (mcpwire, floor).
    fn connections(&self, key: Key) -> String {
        if !key.0.is_http() {
            return "–".into();
        }
        let window = self.perf(key, "connects");
        let own = self
            .timed
            .get(&key)
            .and_then(|runs| runs.values().find_map(|r| f(r, "connections")));
        match (window, own) {
            (Some(w), Some(o)) => format!("{w:.0} (all: {o:.0})"),
            (Some(w), None) => format!("{w:.0}"),
            (None, Some(o)) => format!("all: {o:.0}"),
            (None, None) => "–".into(),
        }
    }
}

impl Results {
    /// A figure of one many-servers role over batches.
    fn many_values(&self, role: &str, figure: &dyn Fn(&Value) -> Option<f64>) -> Vec<(u32, f64)> {
        self.many
            .get(role)
            .map(|runs| {
                runs.iter()
                    .filter_map(|(b, r)| Some((*b, figure(r)?)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The many-servers table: each measure against its baseline of the same batch.
    fn many_table(&self) -> String {
        if self.many.is_empty() {
            return String::new();
        }
        let b = self.batches;
        let get = |key: &'static str| move |r: &Value| f(r, key);
        let per_server = |key: &'static str| move |r: &Value| Some(f(r, key)? / f(r, "servers")?);
        let sub = |group: &'static str, key: &'static str| {
            move |r: &Value| r.get(group).and_then(|g| f(g, key))
        };
        type Figure<'a> = Box<dyn Fn(&Value) -> Option<f64> + 'a>;
        struct Row<'a> {
            what: String,
            role: &'a str,
            figure: Figure<'a>,
            base_role: &'a str,
            base: Figure<'a>,
            target: &'a str,
        }
        let count = |role: &str, key: &'static str| {
            self.many_values(role, &get(key))
                .first()
                .map_or_else(|| "?".to_owned(), |(_, n)| format!("{n:.0}"))
        };
        let n = count("manager-stdio", "servers");
        let tools = count("manager-stdio", "tools");
        let http = count("manager-http", "servers");
        let victims = count("crash", "victims");
        let crash_n = count("crash", "servers");
        let rows = vec![
            Row {
                what: format!("{n} stdio servers: `Manager::new` to all ready, ms (÷ spawn and `initialize` each)"),
                role: "manager-stdio",
                figure: Box::new(get("ready_ms")),
                base_role: "floor-stdio",
                base: Box::new(get("ready_ms")),
                target: "≤ 1.2×",
            },
            Row {
                what: "the same, ms (÷ spawn, `initialize`, then `initialized` and the three listings each)".into(),
                role: "manager-stdio",
                figure: Box::new(get("ready_ms")),
                base_role: "floor-stdio-lists",
                base: Box::new(get("ready_ms")),
                target: "–",
            },
            Row {
                what: format!("{n} stdio servers: `mcpwire::tokio::manager` (multi-thread) to all ready, ms (÷ `Manager::new` on smol)"),
                role: "manager-stdio-tokio",
                figure: Box::new(get("ready_ms")),
                base_role: "manager-stdio",
                base: Box::new(get("ready_ms")),
                target: "≤ 1.1×",
            },
            Row {
                what: format!("{n} bare `Client`s connected, ms (÷ spawn and `initialize` each)"),
                role: "bare-stdio",
                figure: Box::new(get("ready_ms")),
                base_role: "floor-stdio",
                base: Box::new(get("ready_ms")),
                target: "≤ 1.1×",
            },
            Row {
                what: format!("{n} bare `Client`s connected, then each listing its tools, ms (÷ the same floor)"),
                role: "bare-stdio",
                figure: Box::new(get("listed_ms")),
                base_role: "floor-stdio",
                base: Box::new(get("ready_ms")),
                target: "–",
            },
            Row {
                what: "host RSS growth per idle server, KiB (÷ per bare `Client`)".into(),
                role: "manager-stdio",
                figure: Box::new(per_server("rss_growth_kib")),
                base_role: "bare-stdio",
                base: Box::new(per_server("rss_growth_kib")),
                target: "≤ 1.2×",
            },
            Row {
                what: "of it anonymous (RssAnon), KiB (÷ per bare `Client`)".into(),
                role: "manager-stdio",
                figure: Box::new(per_server("anon_growth_kib")),
                base_role: "bare-stdio",
                base: Box::new(per_server("anon_growth_kib")),
                target: "–",
            },
            Row {
                what: format!("`tools()` over {tools} tools, µs (÷ cloning a `Vec<Arc<Tool>>` of the same tools)"),
                role: "manager-stdio",
                figure: Box::new(get("tools_us")),
                base_role: "manager-stdio",
                base: Box::new(get("clone_us")),
                target: "≤ 2×",
            },
            Row {
                what: "the first `tools()` once all are ready (the namespace and the list made), µs (÷ the same clone)".into(),
                role: "manager-stdio",
                figure: Box::new(get("tools_first_us")),
                base_role: "manager-stdio",
                base: Box::new(get("clone_us")),
                target: "–",
            },
            Row {
                what: "`call_tool` routing (`Manager::route`), ns (÷ a `HashMap` lookup of the qualified name)".into(),
                role: "manager-stdio",
                figure: Box::new(get("route_ns")),
                base_role: "manager-stdio",
                base: Box::new(get("map_ns")),
                target: "≤ 3×",
            },
            Row {
                what: format!("W1 CPU µs/call to the other {}, {victims} of {crash_n} crashing (÷ calm, same process)", count("crash", "servers").parse::<f64>().map_or(0.0, |s| s - victims.parse::<f64>().unwrap_or(0.0))),
                role: "crash",
                figure: Box::new(get("cpu_us_crash")),
                base_role: "crash",
                base: Box::new(get("cpu_us_calm")),
                target: "≤ 1.1×",
            },
            Row {
                what: "1 000 stdio servers (10 tools each): `Manager::new` to all ready, ms (÷ spawn and `initialize` each)".into(),
                role: "manager-1000",
                figure: Box::new(get("ready_ms")),
                base_role: "floor-stdio-1000",
                base: Box::new(get("ready_ms")),
                target: "–",
            },
            Row {
                what: "1 000 servers: `Manager::route`, ns (÷ a `HashMap` lookup of the qualified name)".into(),
                role: "manager-1000",
                figure: Box::new(get("route_ns")),
                base_role: "manager-1000",
                base: Box::new(get("map_ns")),
                target: "–",
            },
            Row {
                what: format!("{http} Python SDK servers over HTTP: `Manager::new` to all ready, ms (÷ one `initialize` POST to each)"),
                role: "manager-http",
                figure: Box::new(get("ready_ms")),
                base_role: "floor-http",
                base: Box::new(get("ready_ms")),
                target: "–",
            },
        ];
        let mut s = String::new();
        let _ = writeln!(s, "\n### Many servers\n");
        let _ = writeln!(
            s,
            "| measure | mcpwire | baseline | ratio (within batch) | target |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|");
        for row in rows {
            let xs = self.many_values(row.role, &row.figure);
            if xs.is_empty() {
                // A role of a workload not run (`many` or `many1000`).
                continue;
            }
            let ys = self.many_values(row.base_role, &row.base);
            let ratios: Vec<f64> = xs
                .iter()
                .filter_map(|(bx, x)| {
                    let (_, y) = ys.iter().find(|(by, _)| by == bx)?;
                    (*y > 0.0).then(|| x / y)
                })
                .collect();
            let stats = |v: &[(u32, f64)]| median(v.iter().map(|(_, x)| *x).collect());
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                row.what,
                cell(stats(&xs), b),
                cell(stats(&ys), b),
                ratio_cell(median(ratios), b),
                row.target
            );
        }
        // A thousand servers: the figures with no baseline.
        let thousand: Vec<String> = [
            (
                "host RSS growth per idle server, KiB",
                "rss_growth_kib",
                true,
            ),
            ("of it anonymous, KiB", "anon_growth_kib", true),
            ("each server's own RSS, KiB", "server_rss_kib", false),
            (
                "each server's proportional share (Pss), KiB",
                "server_pss_kib",
                false,
            ),
            ("the host's file descriptors", "fds", false),
            ("the host's threads", "threads", false),
            (
                "`call_tool` routed to ten of them one after the other, µs a call",
                "call_us",
                false,
            ),
            ("close of all, ms", "close_ms", false),
            ("children left after the close", "children_left", false),
        ]
        .iter()
        .filter_map(|(what, key, per)| {
            let values = match per {
                true => self.many_values("manager-1000", &per_server(key)),
                false => self.many_values("manager-1000", &get(key)),
            };
            let stats = median(values.iter().map(|(_, x)| *x).collect())?;
            Some(format!("{what} {}", cell(Some(stats), b)))
        })
        .collect();
        if !thousand.is_empty() {
            let _ = writeln!(
                s,
                "\nA thousand servers under one Manager, idle after all are ready: {}.",
                thousand.join("; ")
            );
        }
        // What the crash run leaves behind.
        let leaks: Vec<String> = self
            .many
            .get("crash")
            .map(|runs| {
                runs.iter()
                    .map(|(batch, r)| {
                        let pair = |k: &'static str| {
                            format!(
                                "{} {:.0}→{:.0}",
                                k,
                                sub("before", k)(r).unwrap_or(f64::NAN),
                                sub("after", k)(r).unwrap_or(f64::NAN)
                            )
                        };
                        // What the calls paid for the restarts: the extra CPU of the crash
                        // phase, per server killed.
                        let per_restart = (|| {
                            let extra = (f(r, "cpu_us_crash")? - f(r, "cpu_us_calm")?)
                                * f(r, "calls_crash")?;
                            Some(extra / f(r, "kills")?.max(1.0) / 1e3)
                        })();
                        format!(
                            "batch {}: {} kills (the host's extra CPU {:.1} ms a restart); {}, \
                             {}, {}, {}, RSS KiB {:.0}→{:.0}",
                            batch + 1,
                            f(r, "kills").unwrap_or(0.0),
                            per_restart.unwrap_or(f64::NAN),
                            pair("fds"),
                            pair("threads"),
                            pair("children"),
                            pair("zombies"),
                            sub("before", "rss_kib")(r).unwrap_or(f64::NAN),
                            sub("after", "rss_kib")(r).unwrap_or(f64::NAN),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        if !leaks.is_empty() {
            let _ = writeln!(
                s,
                "\nThe crash run, before the calm phase and after the servers are ready again: {}.",
                leaks.join("; ")
            );
        }
        s
    }
}
