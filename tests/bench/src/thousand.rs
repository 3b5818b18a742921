//! A thousand stdio servers under one `Manager` (`--only many1000`, opt-in): the demo server
//! with 10 generated tools (`mcpwire serve-demo --tools 10`), each in a process of its own.
//!
//! Roles (in `mcpwire-bench-many`, one JSON line each):
//!
//! - `floor-stdio` with `--servers 1000 --tools 10`: the floor of the many-servers workload
//!   (spawn each, write `initialize`, read each answer), recorded as `floor-stdio-1000`;
//! - `manager-1000`: `Manager::new` with the 1 000 servers to all ready; after 1 s idle the
//!   host's resident memory growth per server and the servers' own (`VmRSS` and the
//!   proportional share `Pss`, from `/proc/PID/smaps_rollup`, averaged over the servers); then
//!   `call_tool` (`echo`) routed to ten of them spread over the thousand, one after the other,
//!   and `Manager::route` over every qualified name against a `HashMap` lookup; then the close,
//!   and how many children were left after it.
//!
//! Both raise their own soft `RLIMIT_NOFILE` to the hard limit first: a host of a thousand
//! servers needs more than the usual 1 024 descriptors, and mcpwire never changes the limit
//! itself.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use mcpwire::manager::Manager;
use serde_json::{json, Value};

use crate::many::{self, ManyArgs};

/// The servers of the row.
pub const SERVERS: usize = 1000;
/// Their generated tools each.
pub const TOOLS: usize = 10;

/// Raises this process's soft `RLIMIT_NOFILE` to its hard limit.
pub fn raise_nofile() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes one `rlimit` through a pointer to a live one.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: `setrlimit` reads one `rlimit` through a pointer to a live one.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    }
}

/// A field of `/proc/PID/FILE` in KiB (`VmRSS:`, `Pss:` …), 0 when it cannot be read.
fn proc_kib(pid: u32, file: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/{file}"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|rest| rest.trim_start_matches(':').split_whitespace().next())
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// The role `manager-1000`.
pub fn manager_1000(a: &ManyArgs) -> Result<Value, String> {
    raise_nofile();
    let before = many::rss();
    let started = Instant::now();
    let manager = Manager::new(many::options());
    for i in 0..a.servers {
        manager.add_with(
            &many::server_name(i),
            many::stdio_config(a, i),
            many::settings(),
        );
    }
    many::wait_all_ready(&manager, Duration::from_secs(150))?;
    let ready = started.elapsed();
    smol::block_on(smol::Timer::after(Duration::from_secs(1)));
    let idle = many::rss();

    // The servers' own memory.
    let pids: Vec<u32> = (0..a.servers)
        .filter_map(|i| manager.client(&many::server_name(i)).map(|c| c.pid()))
        .collect();
    let server_rss: u64 = pids.iter().map(|p| proc_kib(*p, "status", "VmRSS")).sum();
    let server_pss: u64 = pids
        .iter()
        .map(|p| proc_kib(*p, "smaps_rollup", "Pss"))
        .sum();

    // Calls routed to ten servers spread over the thousand, one after the other.
    let targets: Vec<String> = (0..10)
        .map(|k| format!("{}__echo", many::server_name(k * a.servers / 10)))
        .collect();
    let mut call_us = Vec::new();
    smol::block_on(async {
        for _ in 0..20 {
            for name in &targets {
                let t = Instant::now();
                let r = manager
                    .call_tool(name, json!({"message": "hi"}))
                    .await
                    .map_err(|e| format!("{name}: {e}"))?;
                call_us.push(t.elapsed().as_secs_f64() * 1e6);
                crate::check_echo("hi", &r.text())?;
            }
        }
        Ok::<(), String>(())
    })?;

    // Routing over every qualified name against a HashMap lookup.
    let listed = manager.tools();
    let names: Vec<String> = listed.iter().map(|m| m.qualified.clone()).collect();
    let map: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut order: Vec<&str> = names.iter().map(String::as_str).collect();
    crate::runner::shuffle(&mut order, 7);
    let (mut route_ns, mut map_ns) = (Vec::new(), Vec::new());
    for _ in 0..11 {
        let t = Instant::now();
        for name in &order {
            black_box(manager.route(black_box(name)).map_err(|e| e.to_string())?);
        }
        route_ns.push(t.elapsed().as_secs_f64() * 1e9 / order.len() as f64);
        let t = Instant::now();
        for name in &order {
            black_box(map.get(black_box(*name)));
        }
        map_ns.push(t.elapsed().as_secs_f64() * 1e9 / order.len() as f64);
    }
    let (fds, threads) = (many::fds(), crate::measure::threads());
    let t = Instant::now();
    smol::block_on(manager.close());
    let close_ms = many::ms(t.elapsed());
    drop(manager);
    // Every server ended and reaped (the close waits for them; a moment more for stragglers).
    let mut left = many::children();
    let until = Instant::now() + Duration::from_secs(5);
    while left.0 > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
        left = many::children();
    }
    let n = pids.len().max(1) as u64;
    Ok(json!({
        "servers": a.servers,
        "tools": listed.len(),
        "ready_ms": many::ms(ready),
        "rss_growth_kib": idle.0.saturating_sub(before.0),
        "anon_growth_kib": idle.1.saturating_sub(before.1),
        "server_rss_kib": server_rss / n,
        "server_pss_kib": server_pss / n,
        "call_us": many::median(&mut call_us),
        "route_ns": many::median(&mut route_ns),
        "map_ns": many::median(&mut map_ns),
        "fds": fds,
        "threads": threads,
        "close_ms": close_ms,
        "children_left": left.0,
        "zombies_left": left.1,
    }))
}

/// One batch of the row: the floor and the Manager with the thousand servers, in an order of
/// this batch's, each a process of its own; the records by role (`floor-stdio-1000`,
/// `manager-1000`).
pub fn batch(
    runner: &std::path::Path,
    batch: u32,
    log: &std::fs::File,
    timeout: Duration,
) -> Vec<(String, Value)> {
    let exe = runner.with_file_name("mcpwire-bench-many");
    let cli = many::default_cli();
    let mut roles = [
        ("floor-stdio", "floor-stdio-1000"),
        ("manager-1000", "manager-1000"),
    ];
    if batch % 2 == 1 {
        roles.reverse();
    }
    let mut out = Vec::new();
    for (role, recorded) in roles {
        let args: Vec<String> = vec![
            role.to_owned(),
            "--servers".into(),
            SERVERS.to_string(),
            "--tools".into(),
            TOOLS.to_string(),
            "--cli".into(),
            cli.to_string_lossy().into_owned(),
        ];
        let mut rec = match crate::runner::run_process(&exe, &args, &[], "-", log, timeout) {
            Ok((rec, _, process_ms)) => {
                let mut rec = rec;
                rec["process_ms"] = json!(process_ms);
                rec
            }
            Err(e) => json!({"suite": "many", "ok": false, "error": e}),
        };
        rec["role"] = json!(recorded);
        rec["batch"] = json!(batch);
        eprintln!(
            "  many1000/{recorded}: {}",
            match rec.get("ok") == Some(&Value::Bool(true)) {
                true => "ok".to_owned(),
                false => rec["error"].to_string(),
            }
        );
        out.push((recorded.to_owned(), rec));
    }
    out
}
