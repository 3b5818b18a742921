//! The README's quickstart on smol: connect to a server over stdio, list its tools, call one,
//! close.
//!
//! ```sh
//! cargo install --locked mcpwire-cli      # the demo server: `mcpwire serve-demo`
//! cargo run -p mcpwire --example quickstart
//! cargo run -p mcpwire --example quickstart -- npx -y @modelcontextprotocol/server-everything
//! ```
//!
//! With arguments, they are the server's command line; without, `mcpwire serve-demo`.

use mcpwire::{ConnectOptions, ServerConfig};
use serde_json::json;

fn main() -> Result<(), mcpwire::Error> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        args = vec!["mcpwire".into(), "serve-demo".into()];
    }
    let server = ServerConfig::stdio(args[0].clone(), args[1..].to_vec());
    smol::block_on(async {
        let client = mcpwire::connect_smol(&server, ConnectOptions::default()).await?;
        println!("era: {:?}", client.era());
        let tools = client.list_tools().await?;
        for tool in &tools {
            println!("tool: {}", tool.name);
        }
        if tools.iter().any(|t| t.name == "add") {
            let sum = client.call_tool("add", json!({"a": 2, "b": 40})).await?;
            println!("2 + 40 = {}", sum.text());
        }
        client.close().await;
        Ok(())
    })
}
