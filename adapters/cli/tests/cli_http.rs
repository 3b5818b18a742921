//! The command line's HTTP options against a real TLS server (our Python server under uvicorn,
//! with certificates this test generates: its own CA, a server certificate, a client CA and a
//! client certificate): `--cacert`, `--cert`/`--key`, `--danger-accept-invalid-certificates`,
//! `--proxy`, `--http1.1`, and the errors each failure ends with. A missing peer fails the test
//! unless `MCPWIRE_SKIP_PEERS=1`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers")
}

fn python() -> PathBuf {
    let python = peers().join("pyvenv/bin/python");
    assert!(
        python.exists(),
        "the Python peer is missing: run tests/peers/install-python.sh (or MCPWIRE_SKIP_PEERS=1)"
    );
    python
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn mcpwire(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpwire"))
        .args(args)
        // The environment's proxies stay out of it.
        .env_remove("https_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("http_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A folder of certificates, removed when dropped.
struct Certs(PathBuf);

impl Certs {
    fn generate() -> Certs {
        let dir = std::env::temp_dir().join(format!(
            "mcpwire-cli-tls-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let status = Command::new(python())
            .arg(peers().join("py_tls_certs.py"))
            .arg(&dir)
            .status()
            .unwrap();
        assert!(status.success(), "py_tls_certs.py failed");
        Certs(dir)
    }

    fn file(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for Certs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The Python server over TLS with mutual TLS (client certificates from `client-ca.pem`),
/// killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn mtls_server(certs: &Certs) -> Server {
    let port = free_port();
    let mut child = Command::new(python())
        .arg(peers().join("py_tls_server.py"))
        .args(["--port", &port.to_string()])
        .args(["--cert", &certs.file("server.pem")])
        .args(["--key", &certs.file("server-key.pem")])
        .args(["--client-ca", &certs.file("client-ca.pem")])
        .current_dir(peers())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("Uvicorn running on") {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the TLS server did not start in 30 s");
    Server {
        child,
        url: format!("https://127.0.0.1:{port}/mcp"),
    }
}

#[test]
fn https_with_an_extra_ca_and_a_client_certificate() {
    if std::env::var_os("MCPWIRE_SKIP_PEERS").is_some_and(|v| v == "1") {
        eprintln!("skipped because MCPWIRE_SKIP_PEERS=1");
        return;
    }
    let certs = Certs::generate();
    let server = mtls_server(&certs);
    let url = server.url.as_str();
    let (ca, cert, key) = (
        certs.file("ca.pem"),
        certs.file("client.pem"),
        certs.file("client-key.pem"),
    );

    // Not trusted: the reason, and what to do.
    let o = mcpwire(&["--http", url, "tools"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("unknown issuer"), "{}", text(&o));

    // Trusted, with the client certificate: the server's tools, in both eras' detection.
    let ok = [
        "--http", url, "--cacert", &ca, "--cert", &cert, "--key", &key,
    ];
    let o = mcpwire(&[&ok[..], &["tools"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("add"), "{}", text(&o));
    let o = mcpwire(
        &[
            &ok[..],
            &[
                "--http1.1",
                "--era",
                "handshake",
                "call",
                "add",
                "a=2",
                "b=40",
            ],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("42"), "{}", text(&o));

    // Unchecked certificates only when asked for by name, and said so.
    let o = mcpwire(&[
        "--http",
        url,
        "--danger-accept-invalid-certificates",
        "--cert",
        &cert,
        "--key",
        &key,
        "tools",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("warning: --danger-accept-invalid-certificates"));

    // --cert needs --key; a missing key file is a usage error naming it.
    let o = mcpwire(&["--http", url, "--cert", &cert, "tools"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let missing = Path::new(&certs.0)
        .join("nowhere-key.pem")
        .display()
        .to_string();
    let o = mcpwire(&[
        "--http", url, "--cacert", &ca, "--cert", &cert, "--key", &missing, "tools",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("the client key file"), "{}", text(&o));

    // A proxy that is not there: the proxy is named, and its credentials are not.
    let proxy = format!("http://alice:s3cret@127.0.0.1:{}", free_port());
    let o = mcpwire(&[&ok[..], &["--proxy", &proxy, "tools"]].concat());
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("through the proxy http://127.0.0.1:"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("s3cret"), "{}", text(&o));
    // ... and bypassed for this host with --noproxy.
    let o = mcpwire(
        &[
            &ok[..],
            &["--proxy", &proxy, "--noproxy", "127.0.0.1", "tools"],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    let o = mcpwire(&["--http", url, "--max-connections", "0", "tools"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}
