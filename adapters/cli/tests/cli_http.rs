//! The command line's HTTP options against a real TLS server (our Python server under uvicorn,
//! with certificates this test generates: its own CA, a server certificate, a client CA and a
//! client certificate): `--cacert`, `--cert`/`--key`, `--danger-accept-invalid-certificates`,
//! `--proxy`, `--http1.1`, and the errors each failure ends with. A missing peer fails the test
//! unless `MCPWIRE_SKIP_PEERS=1`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::peers::{free_port, peers, python, skipped, HttpPeer};
use common::{assert_contains, mcpwire_without_proxies, stdout_and_stderr};

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
fn mtls_server(certs: &Certs) -> HttpPeer {
    let port = free_port();
    let mut command = Command::new(python());
    command
        .arg(peers().join("py_tls_server.py"))
        .args(["--port", &port.to_string()])
        .args(["--cert", &certs.file("server.pem")])
        .args(["--key", &certs.file("server-key.pem")])
        .args(["--client-ca", &certs.file("client-ca.pem")])
        .current_dir(peers());
    HttpPeer::spawn(
        command,
        format!("https://127.0.0.1:{port}/mcp"),
        "Uvicorn running on",
    )
}

#[test]
fn https_with_an_extra_ca_and_a_client_certificate() {
    if skipped("https_with_an_extra_ca_and_a_client_certificate") {
        return;
    }
    let certs = Certs::generate();
    let server = mtls_server(&certs);
    let url = server.url();
    let (ca, cert, key) = (
        certs.file("ca.pem"),
        certs.file("client.pem"),
        certs.file("client-key.pem"),
    );

    // Not trusted: the reason, and what to do.
    let o = mcpwire_without_proxies(&["--http", url, "tools"]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
    assert_contains(&stdout_and_stderr(&o), "unknown issuer");

    // Trusted, with the client certificate: the server's tools, in both eras' detection.
    let ok = [
        "--http", url, "--cacert", &ca, "--cert", &cert, "--key", &key,
    ];
    let o = mcpwire_without_proxies(&[&ok[..], &["tools"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    assert_contains(&stdout_and_stderr(&o), "add");
    let o = mcpwire_without_proxies(
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
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    assert_contains(&stdout_and_stderr(&o), "42");

    // Unchecked certificates only when asked for by name, and said so.
    let o = mcpwire_without_proxies(&[
        "--http",
        url,
        "--danger-accept-invalid-certificates",
        "--cert",
        &cert,
        "--key",
        &key,
        "tools",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));
    assert!(stdout_and_stderr(&o).contains("warning: --danger-accept-invalid-certificates"));

    // --cert needs --key; a missing key file is a usage error naming it.
    let o = mcpwire_without_proxies(&["--http", url, "--cert", &cert, "tools"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout_and_stderr(&o));
    let missing = Path::new(&certs.0)
        .join("nowhere-key.pem")
        .display()
        .to_string();
    let o = mcpwire_without_proxies(&[
        "--http", url, "--cacert", &ca, "--cert", &cert, "--key", &missing, "tools",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout_and_stderr(&o));
    assert_contains(&stdout_and_stderr(&o), "the client key file");

    // A proxy that is not there: the proxy is named, and its credentials are not.
    let proxy = format!("http://alice:s3cret@127.0.0.1:{}", free_port());
    let o = mcpwire_without_proxies(&[&ok[..], &["--proxy", &proxy, "tools"]].concat());
    assert_eq!(o.status.code(), Some(3), "{}", stdout_and_stderr(&o));
    assert_contains(&stdout_and_stderr(&o), "the proxy http://127.0.0.1:");
    assert_contains(&stdout_and_stderr(&o), "cannot be reached");
    assert!(
        !stdout_and_stderr(&o).contains("s3cret"),
        "{}",
        stdout_and_stderr(&o)
    );
    // ... and bypassed for this host with --noproxy.
    let o = mcpwire_without_proxies(
        &[
            &ok[..],
            &["--proxy", &proxy, "--noproxy", "127.0.0.1", "tools"],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout_and_stderr(&o));

    let o = mcpwire_without_proxies(&["--http", url, "--max-connections", "0", "tools"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout_and_stderr(&o));
}

/// A URL's credentials never reach what is printed about it, a failed handshake included.
#[test]
fn a_urls_credentials_are_never_printed() {
    let url = format!(
        "http://user:pw-s3cret@127.0.0.1:{}/mcp?key=k3y-s3cret",
        free_port()
    );
    let o = mcpwire_without_proxies(&["--http", &url, "info"]);
    assert_ne!(o.status.code(), Some(0));
    let all = stdout_and_stderr(&o);
    assert!(!all.contains("s3cret"), "{all}");
    assert_contains(&all, "127.0.0.1");
}
