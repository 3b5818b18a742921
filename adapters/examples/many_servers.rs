//! Many servers with the Manager, read from a host's configuration file: two demo servers (one
//! that speaks only the handshake era), each usable as it gets ready, their tools in one
//! namespace (`server__tool`).
//!
//! ```sh
//! cargo install --locked mcpwire-cli      # the demo server: `mcpwire serve-demo`
//! cargo run -p mcpwire --example many_servers
//! cargo run -p mcpwire --example many_servers -- path/to/mcpwire
//! ```
//!
//! The file is written to a temporary folder, in the `mcpServers` shape Claude Desktop, Cursor
//! and others use; a host's own file loads the same way (`Loader::load_host`).

use mcpwire::hosts::Loader;
use mcpwire::manager::{CacheLocation, Manager, ManagerOptions};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mcpwire = std::env::args().nth(1).unwrap_or_else(|| "mcpwire".into());
    let dir = std::env::temp_dir().join(format!("mcpwire-many-servers-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("mcp.json");
    let config = json!({"mcpServers": {
        "demo": {"command": mcpwire, "args": ["serve-demo"]},
        "old": {"command": mcpwire, "args": ["serve-demo", "--handshake-only"]},
    }});
    std::fs::write(&file, serde_json::to_vec_pretty(&config)?)?;

    let outcome = smol::block_on(async {
        let loaded = Loader::from_process()?.load_file(&file)?;
        for warning in &loaded.warnings {
            eprintln!("{warning}");
        }
        let options = ManagerOptions::default().cache(CacheLocation::MemoryOnly);
        let manager = Manager::from_loaded(&loaded, options);
        manager.wait_settled().await;
        for (name, state) in manager.states() {
            println!("{name}: {}", state.word());
        }
        let mut tools: Vec<String> = manager
            .tools()
            .iter()
            .map(|t| t.qualified.clone())
            .collect();
        tools.sort();
        println!(
            "{} tools, among them {}",
            tools.len(),
            tools[..2].join(", ")
        );
        let sum = manager
            .call_tool("old__add", json!({"a": 2, "b": 40}))
            .await?;
        println!("old__add: {}", sum.text());
        manager.close().await;
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}
