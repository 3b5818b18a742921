//! The many-servers start-up roles beside `manager-stdio` (see [`crate::many`]):
//!
//! - `manager-stdio-tokio`: the same N servers under `mcpwire::tokio::manager` on tokio's
//!   multi-thread runtime (its default workers, one a core), to all ready; compared with
//!   `manager-stdio` (the same on smol) in the same batch.
//! - `floor-stdio-lists`: a second floor, like for like with what the Manager asks of each
//!   server before it calls it ready: spawn each and write `initialize`; read each answer,
//!   then write `notifications/initialized` and the three listings (`tools/list`,
//!   `prompts/list`, `resources/list`, all at once); read the three answers (the bytes, not
//!   parsed). An explanation of the Manager's row, not its target (the issue's floor is
//!   `floor-stdio`).

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use mcpwire::manager::ServerState;
use serde_json::{json, Value};

use crate::floor::{INITIALIZE, INITIALIZED};
use crate::many::{
    ms, options, read_initialize_answer, server_name, settings, spawn_floor_servers, stdio_config,
    write_to, ManyArgs,
};

/// The role `manager-stdio-tokio`: `mcpwire::tokio::manager` on a multi-thread runtime.
pub fn manager_stdio_tokio(a: &ManyArgs) -> Result<Value, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let out = rt.block_on(async {
        let started = Instant::now();
        let manager = mcpwire::tokio::manager(options()).map_err(|e| e.to_string())?;
        for i in 0..a.servers {
            manager.add_with(&server_name(i), stdio_config(a, i), settings());
        }
        let all = manager.wait_until(|states| {
            states
                .iter()
                .all(|(_, s)| matches!(s, ServerState::Ready { .. }))
        });
        let limit = Duration::from_secs(120);
        if tokio::time::timeout(limit, all).await.is_err() {
            return Err(crate::many::not_ready(&manager, limit));
        }
        let ready = started.elapsed();
        let cpu_ms = crate::many::host_cpu_ms();
        let tools = manager.tools().len();
        let out = json!({
            "servers": a.servers,
            "tools": tools,
            "ready_ms": ms(ready),
            "cpu_ms": cpu_ms,
            "threads": crate::measure::threads(),
        });
        manager.close().await;
        Ok(out)
    })?;
    Ok(out)
}

/// The listings the Manager makes of a server that declares prompts and resources.
const LISTINGS: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"prompts/list"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":3,"method":"resources/list"}"#,
    "\n"
);

/// The role `floor-stdio-lists`.
pub fn floor_stdio_lists(a: &ManyArgs) -> Result<Value, String> {
    let init = format!("{INITIALIZE}\n");
    let after = format!("{INITIALIZED}\n{LISTINGS}");
    let started = Instant::now();
    let mut children = spawn_floor_servers(a, &init)?;
    let mut readers: Vec<_> = children
        .iter_mut()
        .map(|c| BufReader::new(c.stdout.take().expect("piped")))
        .collect();
    let mut line = String::new();
    // Each answer in turn, then its listings asked for at once.
    for (child, out) in children.iter_mut().zip(&mut readers) {
        read_initialize_answer(out, &mut line)?;
        write_to(child, &after)?;
    }
    let mut bytes = 0usize;
    for out in &mut readers {
        for _ in 0..3 {
            line.clear();
            out.read_line(&mut line).map_err(|e| e.to_string())?;
            if !line.contains("\"result\"") {
                return Err(format!("not a listing: {line:.80}"));
            }
            bytes += line.len();
        }
    }
    let ready = started.elapsed();
    let cpu_ms = crate::many::host_cpu_ms();
    for child in &mut children {
        // Child::kill signals exactly this child's PID.
        let _ = child.kill();
        let _ = child.wait();
    }
    Ok(
        json!({"servers": a.servers, "ready_ms": ms(ready), "cpu_ms": cpu_ms, "listed_bytes": bytes}),
    )
}
