//! The installed peers (`tests/peers`): the shared test crate's helpers, and the command lines
//! and servers only the CLI's tests start.

use std::process::Command;

// Each test binary uses its own share of these.
#[allow(unused_imports)]
pub use mcpwire_tests::{
    everything_entry, free_port, peers_dir as peers, peers_skipped as skipped, python, HttpPeer,
};

/// The command line of server-everything over stdio.
pub fn everything_stdio() -> String {
    format!("node {} stdio", everything_entry().display())
}

/// The Python server over HTTP in `mode` (`http`: Streamable HTTP, or `sse`).
pub fn python_http(mode: &str) -> HttpPeer {
    let port = free_port();
    let mut command = Command::new(python());
    command
        .arg(peers().join("py_server.py"))
        .args([mode, "--port", &port.to_string()]);
    let path = if mode == "sse" { "sse" } else { "mcp" };
    HttpPeer::spawn(
        command,
        format!("http://127.0.0.1:{port}/{path}"),
        "Uvicorn running on",
    )
}

/// The Python MCP server that needs OAuth, with its own authorization server
/// (`py_oauth_server.py`); its URL is the MCP endpoint.
pub fn python_oauth() -> HttpPeer {
    let port = free_port();
    let mut command = Command::new(python());
    command
        .arg(peers().join("py_oauth_server.py"))
        .args(["--port", &port.to_string()]);
    HttpPeer::spawn(
        command,
        format!("http://127.0.0.1:{port}/mcp"),
        "oauth server ready on",
    )
}
