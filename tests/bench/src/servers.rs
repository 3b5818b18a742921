//! The servers: how to start them, where they live.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Server;

/// This crate's folder.
pub fn bench_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The repository's pinned peers.
pub fn peers_dir() -> PathBuf {
    bench_dir().join("../peers")
}

/// The Node binary: `MCPWIRE_BENCH_NODE`, else `node` on the PATH.
pub fn node() -> String {
    std::env::var("MCPWIRE_BENCH_NODE").unwrap_or_else(|_| "node".to_owned())
}

fn everything_entry() -> PathBuf {
    peers_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

fn python() -> PathBuf {
    peers_dir().join("pyvenv/bin/python")
}

/// Whether the server's files are installed (the reason when not).
pub fn available(server: Server) -> Result<(), String> {
    let need = match server {
        Server::Min => bench_dir().join("servers/min_server.mjs"),
        Server::EverythingStdio | Server::EverythingHttp => everything_entry(),
        Server::PythonHttp | Server::PythonHttps => python(),
        Server::MinHttps | Server::MinHttp => bench_dir().join("servers/min_https_server.mjs"),
    };
    if need.exists() {
        Ok(())
    } else {
        Err(format!(
            "{} is missing (install the peers: `(cd tests/peers && npm ci)` and \
             `tests/peers/install-python.sh`)",
            need.display()
        ))
    }
}

/// The command line of a stdio server.
pub fn stdio_command(server: Server) -> (String, Vec<String>) {
    let path = |p: PathBuf| p.to_string_lossy().into_owned();
    match server {
        Server::Min => (
            node(),
            vec![path(bench_dir().join("servers/min_server.mjs"))],
        ),
        Server::EverythingStdio => (node(), vec![path(everything_entry()), "stdio".into()]),
        _ => panic!("{} is not a stdio server", server.name()),
    }
}

/// The throwaway certificate of the https server (`localhost`, `127.0.0.1`; self-signed, so
/// every client trusts it as its own root): the one mcpwire's TLS tests use.
pub fn certificate() -> PathBuf {
    bench_dir().join("../../adapters/src/http/native/testdata/server.pem")
}

/// The certificate as PEM text.
pub fn certificate_pem() -> String {
    std::fs::read_to_string(certificate()).expect("the https server's certificate")
}

/// A free TCP port on 127.0.0.1.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local address").port()
}

/// An HTTP server child, killed by its PID when dropped.
pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    /// Starts the server on a free port of 127.0.0.1 and waits (up to 30 s) until the port
    /// accepts connections.
    pub fn start(server: Server) -> Result<HttpServer, String> {
        let port = free_port();
        let mut command = match server {
            Server::EverythingHttp => {
                let mut c = Command::new(node());
                // The preload binds the server to 127.0.0.1 (it would listen on every interface).
                c.arg("--import")
                    .arg(peers_dir().join("loopback-preload.mjs"))
                    .arg(everything_entry())
                    .arg("streamableHttp")
                    .env("PORT", port.to_string());
                c
            }
            Server::PythonHttp | Server::PythonHttps => {
                let mut c = Command::new(python());
                c.arg(bench_dir().join("servers/py_bench_server.py"))
                    .args(["--port", &port.to_string()]);
                if server == Server::PythonHttps {
                    c.arg("--tls-cert")
                        .arg(certificate())
                        .arg("--tls-key")
                        .arg(certificate().with_file_name("server-key.pem"));
                }
                c
            }
            Server::MinHttps => {
                let mut c = Command::new(node());
                c.arg(bench_dir().join("servers/min_https_server.mjs"))
                    .args(["--port", &port.to_string()])
                    .arg("--tls-cert")
                    .arg(certificate())
                    .arg("--tls-key")
                    .arg(certificate().with_file_name("server-key.pem"));
                c
            }
            Server::MinHttp => {
                let mut c = Command::new(node());
                c.arg(bench_dir().join("servers/min_https_server.mjs"))
                    .args(["--port", &port.to_string()]);
                c
            }
            _ => return Err(format!("{} is not an HTTP server", server.name())),
        };
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", server.name()))?;
        let scheme = if matches!(server, Server::PythonHttps | Server::MinHttps) {
            "https"
        } else {
            "http"
        };
        let mut s = HttpServer {
            child,
            url: format!("{scheme}://127.0.0.1:{port}/mcp"),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(s);
            }
            if let Ok(Some(status)) = s.child.try_wait() {
                return Err(format!(
                    "{} exited ({status}) before it listened",
                    server.name()
                ));
            }
            if Instant::now() > deadline {
                return Err(format!("{} did not listen within 30 s", server.name()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        // Child::kill signals exactly this child's PID.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
