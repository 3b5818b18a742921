//! HTTP/2 test servers, run as child processes from the pinned Python venv:
//!
//! - [`python_h2`]: our Python test server's MCP app (`py_server.py`'s, unchanged) under
//!   Hypercorn (`tests/peers/py_h2_server.py`), over TLS with ALPN `h2` (a throwaway CA and
//!   server certificate written into a temporary folder, removed on drop) or cleartext
//!   (HTTP/1.1, and h2c for clients with prior knowledge);
//! - [`h2_fault`]: a scripted h2c server (`tests/peers/py_h2_fault.py`, on the `h2` library)
//!   whose tools/call answers depend on the tool's name: a stream refused with
//!   `RST_STREAM(REFUSED_STREAM)` or left out by `GOAWAY` (not processed), a stream reset with
//!   `INTERNAL_ERROR` or a connection closed after the request was read (maybe processed).
//!
//! Both log every request on stderr with the client's address, so a test counts versions and
//! connections server-side ([`H2Peer::requests`]).

use std::path::PathBuf;

use mcpwire::{HttpClientOptions, ServerConfig};

use crate::{free_port, peers_dir, python, temp_dir, HttpPeer};

/// One request as the server logged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedRequest {
    /// The HTTP version, as the server names it (`"1.1"`, `"2"`); empty from the fault server,
    /// which speaks only HTTP/2.
    pub version: String,
    /// The client's `host:port`: one per TCP connection.
    pub client: String,
    /// `GET`, `POST`, `DELETE`.
    pub method: String,
    /// The JSON-RPC method of a POST's body (`-` for a response, a batch or no body).
    pub rpc: String,
    /// The tool of a tools/call, from the fault server (empty from Hypercorn).
    pub tool: String,
    /// The fault server's action (`answered`, `refused`, `goaway`, `reset`, `vanished`, `202`,
    /// `405`); empty from Hypercorn.
    pub action: String,
}

/// An HTTP/2-capable test server: killed by its PID and its temporary folder removed when
/// dropped.
#[derive(Debug)]
pub struct H2Peer {
    peer: HttpPeer,
    dir: Option<PathBuf>,
    prefix: &'static str,
}

impl H2Peer {
    /// The MCP endpoint (`https://127.0.0.1:PORT/mcp` or `http://…`).
    pub fn url(&self) -> &str {
        self.peer.url()
    }

    /// A config for the endpoint.
    pub fn config(&self) -> ServerConfig {
        ServerConfig::http(self.url())
    }

    /// The process guard (stderr, PID).
    pub fn peer(&self) -> &HttpPeer {
        &self.peer
    }

    /// The throwaway CA that signed the TLS server's certificate (`None` in cleartext).
    pub fn ca_file(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join("ca.pem"))
    }

    /// Default client options that trust [`H2Peer::ca_file`].
    pub fn client_options(&self) -> HttpClientOptions {
        let mut options = HttpClientOptions::default();
        options.tls.extra_ca_files.extend(self.ca_file());
        // HTTP/2 is a choice (HTTP/1.1 on mcpwire's own client is the default): over TLS,
        // asked for by ALPN.
        options.version = mcpwire::HttpVersionChoice::Http2;
        options
    }

    /// Every request logged so far, in order.
    pub fn requests(&self) -> Vec<ServedRequest> {
        let tag = format!("{}: request ", self.prefix);
        self.peer
            .stderr()
            .iter()
            .filter_map(|line| line.strip_prefix(&tag).map(parse_request))
            .collect()
    }

    /// The requests whose JSON-RPC method is `rpc`.
    pub fn requests_of(&self, rpc: &str) -> Vec<ServedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.rpc == rpc)
            .collect()
    }

    /// The server's stderr, for failure messages.
    pub fn stderr_text(&self) -> String {
        self.peer.stderr().join("\n")
    }
}

impl Drop for H2Peer {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn parse_request(fields: &str) -> ServedRequest {
    let mut r = ServedRequest {
        version: String::new(),
        client: String::new(),
        method: String::new(),
        rpc: String::new(),
        tool: String::new(),
        action: String::new(),
    };
    for field in fields.split_whitespace() {
        let Some((k, v)) = field.split_once('=') else {
            continue;
        };
        let slot = match k {
            "version" => &mut r.version,
            "client" => &mut r.client,
            "method" => &mut r.method,
            "rpc" => &mut r.rpc,
            "tool" => &mut r.tool,
            "action" => &mut r.action,
            _ => continue,
        };
        *slot = v.to_owned();
    }
    r
}

/// Our Python test server's MCP app under Hypercorn on a free port of 127.0.0.1, with the extra
/// `args` of `py_server.py http` (`--json`, `--stateless`, `--resumable`). With `tls`, it serves
/// `https://127.0.0.1:PORT/mcp` with a certificate from a throwaway CA
/// ([`H2Peer::ca_file`]) and offers `h2` by ALPN; without, `http://…` with HTTP/1.1 and h2c by
/// prior knowledge. Panics with the install command when the venv is missing.
pub fn python_h2(tls: bool, args: &[&str]) -> H2Peer {
    let port = free_port();
    let mut command = std::process::Command::new(python());
    command
        .arg(peers_dir().join("py_h2_server.py"))
        .args(["--port", &port.to_string()])
        .args(args);
    let dir = tls.then(|| temp_dir("h2"));
    if let Some(dir) = &dir {
        command.arg("--tls-dir").arg(dir);
    }
    let scheme = if tls { "https" } else { "http" };
    let url = format!("{scheme}://127.0.0.1:{port}/mcp");
    // Removes the folder should the spawn panic.
    let guard = DirGuard(dir);
    let peer = HttpPeer::spawn(command, url, "Running on");
    H2Peer {
        peer,
        dir: guard.take(),
        prefix: "py_h2_server",
    }
}

/// The h2c fault server (`py_h2_fault.py`) on a free port of 127.0.0.1: a minimal
/// handshake-era MCP server answering plain JSON. Its tools/call answers depend on the tool:
/// `refuse_once` (the first stream refused with `RST_STREAM(REFUSED_STREAM)`), `goaway_once`
/// (the first stream left out by `GOAWAY`), `reset` (`RST_STREAM(INTERNAL_ERROR)` after reading
/// it), `vanish` (the connection closed after reading it), any other name answered
/// `ok <name>`. Only clients with HTTP/2 prior knowledge can talk to it. Panics with the install
/// command when the venv is missing.
pub fn h2_fault() -> H2Peer {
    let port = free_port();
    let mut command = std::process::Command::new(python());
    command
        .arg(peers_dir().join("py_h2_fault.py"))
        .args(["--port", &port.to_string()]);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let peer = HttpPeer::spawn(command, url, "listening on");
    H2Peer {
        peer,
        dir: None,
        prefix: "py_h2_fault",
    }
}

struct DirGuard(Option<PathBuf>);

impl DirGuard {
    fn take(mut self) -> Option<PathBuf> {
        self.0.take()
    }
}

impl Drop for DirGuard {
    fn drop(&mut self) {
        if let Some(dir) = &self.0 {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
