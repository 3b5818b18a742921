//! A Streamable HTTP server with a static bearer token: the URL from the command line, the
//! token from the environment (never printed), the era detected.
//!
//! ```sh
//! MCP_TOKEN=secret cargo run -p mcpwire --example http_bearer -- http://127.0.0.1:8000/mcp
//! ```

use mcpwire::{ConnectOptions, ServerConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(url) = std::env::args().nth(1) else {
        return Err("usage: http_bearer URL (the token in MCP_TOKEN)".into());
    };
    let token = std::env::var("MCP_TOKEN").map_err(|_| "set MCP_TOKEN to the bearer token")?;
    let mut server = ServerConfig::http(url);
    if let ServerConfig::Http(http) = &mut server {
        http.headers
            .insert("Authorization".into(), format!("Bearer {token}"));
    }
    smol::block_on(async {
        let client = mcpwire::connect_smol(&server, ConnectOptions::default()).await?;
        println!("era: {:?} ({:?})", client.era(), client.era_reason());
        println!("transport: {:?}", client.http_transport());
        for tool in client.list_tools().await? {
            println!("tool: {}", tool.name);
        }
        client.close().await;
        Ok(())
    })
}
