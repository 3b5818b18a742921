//! Shared helpers for mcpwire's end-to-end tests against real third-party peers.
//!
//! The peers are pinned in `tests/peers` (npm) and installed by the test command. A test that
//! needs a peer fails loudly when it is missing, unless the run opts out explicitly with
//! `MCPWIRE_SKIP_PEERS=1`, in which case the test says so on stderr and passes nothing off as
//! tested.
#![deny(missing_docs)]

mod accept;
pub mod conformance_auth;
pub mod demo_http;
pub mod fault_http;
pub mod h2;
pub mod process;
pub mod proxy;
pub mod scenario;
pub mod session_soak;
pub mod tls;
pub mod tls_front;
pub mod ways;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcpwire::ServerConfig;

/// The folder with the pinned npm peers.
pub fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("peers")
}

/// Whether the run opted out of tests that need third-party peers.
pub fn peers_skipped(test: &str) -> bool {
    if std::env::var_os("MCPWIRE_SKIP_PEERS").is_some_and(|v| v == "1") {
        eprintln!("{test}: skipped because MCPWIRE_SKIP_PEERS=1");
        return true;
    }
    false
}

/// The entry point of the TypeScript "everything" server
/// (`@modelcontextprotocol/server-everything`, pinned). Panics with the install command when it
/// is missing.
pub fn everything_entry() -> PathBuf {
    let entry =
        peers_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.exists(),
        "server-everything is not installed at {}: run `npm ci` in tests/peers (the test command \
         does), or set MCPWIRE_SKIP_PEERS=1 to opt out",
        entry.display()
    );
    entry
}

/// The venv's Python, which runs our Python peers. Panics with the install command when it is
/// missing.
pub fn python() -> PathBuf {
    let python = peers_dir().join("pyvenv/bin/python");
    assert!(
        python.exists(),
        "the Python peer is not installed at {}: run tests/peers/install-python.sh (the test \
         command does), or set MCPWIRE_SKIP_PEERS=1 to opt out",
        python.display()
    );
    python
}

/// A new, not yet created folder `mcpwire-{what}-…` under the system's temporary directory.
pub fn temp_dir(what: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    std::env::temp_dir().join(format!(
        "mcpwire-{what}-{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    ))
}

/// The TypeScript "everything" server over stdio (`@modelcontextprotocol/server-everything`,
/// pinned). Panics with the install command when it is missing.
pub fn everything_stdio() -> ServerConfig {
    ServerConfig::stdio(
        "node",
        [
            everything_entry().to_string_lossy().into_owned(),
            "stdio".to_string(),
        ],
    )
}

/// Our Python test server (`tests/peers/py_server.py` on the pinned `mcp` 2.3.0) over stdio.
/// Panics with the install command when the venv is missing.
pub fn python_stdio() -> ServerConfig {
    let script = peers_dir().join("py_server.py");
    ServerConfig::stdio(
        python().to_string_lossy().into_owned(),
        [script.to_string_lossy().into_owned(), "stdio".to_string()],
    )
}

/// A free TCP port on 127.0.0.1 for a peer to listen on, checked free by binding it once and
/// released for the peer to take. It lies below the system's range of ephemeral ports: a port
/// the system hands out (`bind` to port 0) may meanwhile become the local port of an outgoing
/// connection of another test, and the peer then fails with "Address already in use". Never the
/// same port twice in one process; the system's choice when that range leaves no room.
pub fn free_port() -> u16 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let low = 10_000u32;
    let high = ephemeral_ports_start().min(u32::from(u16::MAX));
    if high > low + 1_000 {
        let span = high - low;
        // Processes that run at the same time start at other places.
        let seed = std::process::id().wrapping_mul(7_919) % span;
        for _ in 0..span {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let port = (low + (seed + n) % span) as u16;
            if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
                return port;
            }
        }
    }
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local address").port()
}

/// The first port of the system's ephemeral range (Linux: `ip_local_port_range`; elsewhere
/// 49152, where macOS and Windows start).
fn ephemeral_ports_start() -> u32 {
    #[cfg(target_os = "linux")]
    if let Ok(range) = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range") {
        if let Some(start) = range.split_whitespace().next().and_then(|n| n.parse().ok()) {
            return start;
        }
    }
    49_152
}

/// A peer serving Streamable HTTP on 127.0.0.1, run as a child process. It is killed by its
/// PID when dropped. Its stderr is kept, line by line, for assertions and for failure messages.
pub struct HttpPeer {
    child: std::process::Child,
    url: String,
    stderr: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl std::fmt::Debug for HttpPeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpPeer")
            .field("pid", &self.child.id())
            .field("url", &self.url)
            .finish()
    }
}

impl HttpPeer {
    /// Starts `command` (stdout discarded, stderr kept) and waits up to 30 s for a stderr line
    /// containing `ready`. The peer's endpoint is `url`. Panics with its stderr when it exits
    /// or never gets ready.
    pub fn spawn(mut command: std::process::Command, url: String, ready: &str) -> HttpPeer {
        use std::io::BufRead;
        use std::process::Stdio;
        let what = format!("{command:?}");
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let pipe = child.stderr.take().expect("piped stderr");
        let lines = stderr.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                lines.lock().unwrap().push(line);
            }
        });
        // From here on a panic drops the guard, which kills the peer.
        let mut peer = HttpPeer { child, url, stderr };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            if peer.stderr().iter().any(|l| l.contains(ready)) {
                return peer;
            }
            if let Ok(Some(status)) = peer.child.try_wait() {
                panic!(
                    "{what} exited ({status}) before it listened:\n{}",
                    peer.stderr().join("\n")
                );
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{what} did not print {ready:?} within 30 s:\n{}",
                peer.stderr().join("\n")
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// The MCP endpoint.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The peer's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The stderr lines so far.
    pub fn stderr(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits up to `timeout` for a stderr line containing `needle`.
    pub fn wait_for_stderr(&self, needle: &str, timeout: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if self.stderr().iter().any(|l| l.contains(needle)) {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        // Child::kill signals exactly this child's PID.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Our Python test server over Streamable HTTP on a free port of 127.0.0.1, started with the
/// extra `args` (`--json`, `--stateless`, `--resumable`). Returns its config and the guard that
/// kills it. Panics with the install command when the venv is missing.
pub fn python_http(args: &[&str]) -> (ServerConfig, HttpPeer) {
    python_http_at(free_port(), args)
}

/// [`python_http`] on port `port` (to start a server again where a client knows it).
pub fn python_http_at(port: u16, args: &[&str]) -> (ServerConfig, HttpPeer) {
    let peer = py_server("http", "mcp", port, args);
    (ServerConfig::http(peer.url()), peer)
}

/// Our Python test server's 2024-11-05 HTTP+SSE transport (`py_server.py sse`) on a free port of
/// 127.0.0.1: its stream's URL (`/sse`) and the guard that kills it. Panics with the install
/// command when the venv is missing.
pub fn python_sse() -> (String, HttpPeer) {
    let peer = py_server("sse", "sse", free_port(), &[]);
    (peer.url().to_owned(), peer)
}

/// `py_server.py MODE --port PORT ARGS` under uvicorn, its endpoint at `/PATH`.
fn py_server(mode: &str, path: &str, port: u16, args: &[&str]) -> HttpPeer {
    let mut command = std::process::Command::new(python());
    command
        .arg(peers_dir().join("py_server.py"))
        .args([mode, "--port", &port.to_string()])
        .args(args);
    let url = format!("http://127.0.0.1:{port}/{path}");
    HttpPeer::spawn(command, url, "Uvicorn running on")
}

/// server-everything (pinned) serving HTTP in `mode` (`streamableHttp` or `sse`) on a free port
/// of 127.0.0.1 (our preload binds it there; it would listen on every interface otherwise).
/// Returns the guard that kills it and its endpoint: `/mcp`, or the stream's `/sse`. Panics
/// with the install command when it is missing.
pub fn everything_http_mode(mode: &str) -> (HttpPeer, String) {
    let entry = everything_entry();
    let port = free_port();
    let mut command = std::process::Command::new("node");
    command
        .arg("--import")
        .arg(peers_dir().join("loopback-preload.mjs"))
        .arg(entry)
        .arg(mode)
        .env("PORT", port.to_string());
    let (path, ready) = match mode {
        "sse" => ("sse", "running on port"),
        _ => ("mcp", "listening on port"),
    };
    let url = format!("http://127.0.0.1:{port}/{path}");
    (HttpPeer::spawn(command, url.clone(), ready), url)
}
