//! The installed peers (`tests/peers`): Node's server-everything and the Python servers, and a
//! guard for a server started on a free loopback port.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers")
}

/// Whether `MCPWIRE_SKIP_PEERS=1` skips `test` (and says so).
pub fn skipped(test: &str) -> bool {
    let skip = std::env::var_os("MCPWIRE_SKIP_PEERS").is_some_and(|v| v == "1");
    if skip {
        eprintln!("{test}: skipped because MCPWIRE_SKIP_PEERS=1");
    }
    skip
}

/// server-everything's entry point, which must be installed.
pub fn everything_entry() -> PathBuf {
    let entry = peers().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.exists(),
        "server-everything is missing: run `npm ci` in tests/peers (or MCPWIRE_SKIP_PEERS=1)"
    );
    entry
}

/// The command line of server-everything over stdio.
pub fn everything_stdio() -> String {
    format!("node {} stdio", everything_entry().display())
}

/// The Python peers' interpreter, which must be installed.
pub fn python() -> PathBuf {
    let python = peers().join("pyvenv/bin/python");
    assert!(
        python.exists(),
        "the Python peer is missing: run tests/peers/install-python.sh (or MCPWIRE_SKIP_PEERS=1)"
    );
    python
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A peer serving HTTP on a loopback port; killed when dropped.
pub struct HttpPeer {
    child: Child,
    pub url: String,
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `command` and waits up to 30 s for a line on its stderr holding `ready`.
pub fn http_peer(mut command: Command, url: String, ready: &'static str) -> HttpPeer {
    let what = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let stderr = child.stderr.take().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let lines = seen.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains(ready) {
                let _ = tx.send(());
            }
            lines.lock().unwrap().push(line);
        }
    });
    // From here on a panic drops the guard, which kills the peer.
    let peer = HttpPeer { child, url };
    if rx.recv_timeout(Duration::from_secs(30)).is_err() {
        panic!(
            "{what} did not print {ready:?} within 30 s:\n{}",
            seen.lock().unwrap().join("\n")
        );
    }
    peer
}

/// The Python server over HTTP in `mode` (`http`: Streamable HTTP, or `sse`).
pub fn python_http(mode: &str) -> HttpPeer {
    let port = free_port();
    let mut command = Command::new(python());
    command
        .arg(peers().join("py_server.py"))
        .args([mode, "--port", &port.to_string()]);
    let path = if mode == "sse" { "sse" } else { "mcp" };
    http_peer(
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
    http_peer(
        command,
        format!("http://127.0.0.1:{port}/mcp"),
        "oauth server ready on",
    )
}
