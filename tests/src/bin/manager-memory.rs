//! How much memory a Manager holding ten idle servers takes in the host's process: the
//! resident set before the Manager, and after its ten demo servers are ready and idle.
//!
//! `cargo run --release -p mcpwire-tests --bin manager-memory` (after building the
//! `demo-server` binary of this crate, which it runs).

use std::time::Duration;

use mcpwire::manager::{CacheLocation, Manager, ManagerOptions, ServerState};
use mcpwire::ServerConfig;

/// This process's resident set, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let server = std::env::current_exe()
        .expect("its own path")
        .with_file_name("demo-server");
    assert!(server.exists(), "build the demo-server binary first");
    let before = rss_kib();
    let mut options = ManagerOptions::default();
    options.cache = CacheLocation::MemoryOnly;
    let manager = Manager::new(options);
    for i in 0..10 {
        let config = ServerConfig::stdio(server.display().to_string(), Vec::<String>::new());
        manager.add(&format!("demo-{i}"), config);
    }
    smol::block_on(async {
        manager.wait_settled().await;
        assert!(manager
            .states()
            .iter()
            .all(|(_, s)| matches!(s, ServerState::Ready { .. })));
        async_io::Timer::after(Duration::from_millis(500)).await;
    });
    let after = rss_kib();
    println!(
        "resident set: {before} KiB before, {after} KiB with ten idle servers ({} KiB for the Manager and its ten connections)",
        after.saturating_sub(before)
    );
    smol::block_on(manager.close());
}
