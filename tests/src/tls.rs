//! TLS test servers: certificates generated per test by `tests/peers/py_tls_certs.py` into a
//! temporary folder, and our Python test server (`py_server.py`'s MCP server) serving
//! Streamable HTTP over TLS with one of them (`tests/peers/py_tls_server.py`).

use std::path::{Path, PathBuf};

use crate::{free_port, peers_dir, python, temp_dir, HttpPeer};

/// A folder of freshly generated certificates (see `py_tls_certs.py` for the full list),
/// removed when dropped. The server certificates name `127.0.0.1` and `localhost` unless their
/// name says otherwise.
#[derive(Debug)]
pub struct TlsCerts {
    dir: PathBuf,
}

impl TlsCerts {
    /// Generates every certificate into a new folder under the system's temporary directory.
    /// Panics with the generator's output when it fails.
    pub fn generate() -> TlsCerts {
        let dir = temp_dir("tls");
        // From here on a panic drops the guard, which removes the folder.
        let certs = TlsCerts { dir };
        let out = std::process::Command::new(python())
            .arg(peers_dir().join("py_tls_certs.py"))
            .arg(&certs.dir)
            .output()
            .expect("run py_tls_certs.py");
        assert!(
            out.status.success(),
            "py_tls_certs.py failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        certs
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A file of the folder, such as `ca.pem` or `client-key.pem`.
    pub fn file(&self, name: &str) -> PathBuf {
        let path = self.dir.join(name);
        assert!(path.is_file(), "no certificate file {}", path.display());
        path
    }

    /// The test CA's certificate, which signs `server`, `expired`, `notyetvalid` and
    /// `wrongname`.
    pub fn ca(&self) -> PathBuf {
        self.file("ca.pem")
    }

    /// The test CA's certificate as PEM text.
    pub fn ca_pem(&self) -> String {
        std::fs::read_to_string(self.ca()).expect("read ca.pem")
    }
}

impl Drop for TlsCerts {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Our Python test server over Streamable HTTP with TLS on a free port of 127.0.0.1, serving
/// the certificate `server` of `certs` (`"server"`, `"expired"`, `"notyetvalid"`,
/// `"wrongname"` or `"unknown-issuer"`, with its `-key.pem`). With `client_ca` (such as
/// `"client-ca.pem"`), it requires a client certificate signed by that CA. The guard's
/// [`HttpPeer::url`] is `https://127.0.0.1:PORT/mcp`. Panics with the install command when
/// the venv is missing.
pub fn python_https(certs: &TlsCerts, server: &str, client_ca: Option<&str>) -> HttpPeer {
    py_tls_server(certs, server, client_ca, &[], "Uvicorn running on")
}

/// A TLS endpoint on a free port of 127.0.0.1 that only makes handshakes, with the server
/// certificate `server` and, with `client_ca`, requiring a client certificate signed by it
/// (`py_tls_server.py --handshake-only`): unlike the MCP server under uvicorn, it sends the TLS
/// alert when it refuses one. It logs `py_tls_server: refused: ...` or `py_tls_server:
/// handshake done` per connection. The guard's [`HttpPeer::url`] is
/// `https://127.0.0.1:PORT/mcp`.
pub fn tls_handshake_only(certs: &TlsCerts, server: &str, client_ca: Option<&str>) -> HttpPeer {
    py_tls_server(
        certs,
        server,
        client_ca,
        &["--handshake-only"],
        "py_tls_server: listening",
    )
}

/// `py_tls_server.py ARGS` on a free port with the certificate `server` of `certs` (and the
/// client CA `client_ca`), ready once its stderr holds `ready`.
fn py_tls_server(
    certs: &TlsCerts,
    server: &str,
    client_ca: Option<&str>,
    args: &[&str],
    ready: &str,
) -> HttpPeer {
    let port = free_port();
    let mut command = std::process::Command::new(python());
    command
        .arg(peers_dir().join("py_tls_server.py"))
        .args(args)
        .args(["--port", &port.to_string()])
        .arg("--cert")
        .arg(certs.file(&format!("{server}.pem")))
        .arg("--key")
        .arg(certs.file(&format!("{server}-key.pem")));
    if let Some(ca) = client_ca {
        command.arg("--client-ca").arg(certs.file(ca));
    }
    let url = format!("https://127.0.0.1:{port}/mcp");
    HttpPeer::spawn(command, url, ready)
}
