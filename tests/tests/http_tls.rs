//! Streamable HTTP over TLS, on both HTTP stacks (mcpwire's own client, the default, and
//! libcurl through isahc, `http1_via_libcurl`), against our Python test server with certificates the test generates
//! (`tests/peers/py_tls_certs.py`): trust in an extra CA (file or PEM text) beside the
//! platform's roots, refusals of bad server certificates (unknown issuer, wrong name, expired,
//! not yet valid) and their acceptance only with `danger_accept_invalid_certificates`, and
//! client certificates (mutual TLS). Both eras run over TLS: `Era::Auto` detects the stateless
//! one, `Era::Handshake` pins the handshake.

use std::time::Duration;

use mcpwire::core::error::{HttpError, HttpErrorKind, TlsFailure};
use mcpwire::core::{CallError, LocalError};
use mcpwire::{ChosenEra, ClientCertificate, ConnectOptions, Era, ServerConfig};
use mcpwire_tests::peers_skipped;
use mcpwire_tests::scenario::run_against;
use mcpwire_tests::tls::{python_https, tls_handshake_only, TlsCerts};
use mcpwire_tests::HttpPeer;
use serde_json::json;

/// Runs `fut` on the runtime `MCPWIRE_TEST_RUNTIME` names, failing with the server's stderr
/// after 30 s.
fn block_on<T>(peer: &HttpPeer, fut: impl std::future::Future<Output = T>) -> T {
    run_against(peer, Duration::from_secs(30), fut)
}

/// The two HTTP stacks: mcpwire's own client (`false`) and libcurl (`true`).
const STACKS: [bool; 2] = [false, true];

/// The default options, on mcpwire's own HTTP client or (`libcurl`) through libcurl.
fn base(libcurl: bool) -> ConnectOptions {
    let mut options = ConnectOptions::default();
    options.http_client.http1_via_libcurl = libcurl;
    options
}

/// Options trusting the test CA (as a file) beside the platform's roots.
fn trusting(certs: &TlsCerts, libcurl: bool) -> ConnectOptions {
    let mut options = base(libcurl);
    options.http_client.tls.extra_ca_files = vec![certs.ca()];
    options
}

/// Options accepting any server certificate.
fn accepting_anything(libcurl: bool) -> ConnectOptions {
    let mut options = base(libcurl);
    options.http_client.tls.danger_accept_invalid_certificates = true;
    options
}

/// Connects to `url`, lists the tools and calls `add`; checks the era `options` asked for.
async fn use_server(url: &str, options: ConnectOptions) {
    let era = options.era;
    let client = mcpwire_tests::scenario::connect(&ServerConfig::http(url), options)
        .await
        .unwrap_or_else(|e| panic!("{url} ({era:?}): connect: {e}"));
    let expected = match era {
        Era::Handshake => ChosenEra::Handshake,
        _ => ChosenEra::Stateless,
    };
    assert_eq!(client.era(), Some(expected), "{url}");
    assert_eq!(
        client.server_info().unwrap().server_info.name,
        "mcpwire-py-server"
    );
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "add"), "{tools:?}");
    let r = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(r.text(), "42");
    client.close().await;
}

/// The error of a connection to `url` that must fail, shown with its source chain on stderr
/// (the words libcurl and rustls give are what the reasons are read from).
async fn refused(what: &str, url: &str, options: ConnectOptions) -> mcpwire::Error {
    let err = match mcpwire_tests::scenario::connect(&ServerConfig::http(url), options).await {
        Ok(client) => {
            client.close().await;
            panic!("{what}: {url} connected; it must be refused")
        }
        Err(err) => err,
    };
    eprintln!("{what}: {err}\n{what}: {err:?}");
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        eprintln!("{what}: caused by: {s}");
        source = s.source();
    }
    err
}

/// Whether the error's words contain each of `words` (ignoring case).
fn says(err: &mcpwire::Error, words: &[&str]) -> bool {
    let text = err.to_string().to_lowercase();
    words.iter().all(|w| text.contains(&w.to_lowercase()))
}

/// The HTTP exchange's failure in `err`, if that is what ended the connection.
fn http_error(err: &mcpwire::Error) -> Option<&HttpError> {
    let call = match err {
        mcpwire::Error::Handshake { error, .. } => error,
        mcpwire::Error::Call(error) => error,
        _ => return None,
    };
    match call {
        CallError::Local(LocalError::Http(e)) => Some(e),
        _ => None,
    }
}

/// Why the TLS handshake failed, if that is what `err` is.
fn tls_failure(err: &mcpwire::Error) -> Option<&TlsFailure> {
    match &http_error(err)?.kind {
        HttpErrorKind::Tls(failure) => Some(failure),
        _ => None,
    }
}

/// Asserts that `err` is a failed TLS handshake for `reason`, and says so in words.
fn assert_reason(what: &str, err: &mcpwire::Error, reason: TlsFailure, words: &[&str]) {
    assert_eq!(tls_failure(err), Some(&reason), "{what}: {err:?}");
    assert!(
        says(err, words),
        "{what}: the error does not say {words:?}: {err}"
    );
}

/// Asserts that no MCP request reached the server (the refusal happened in the TLS handshake).
fn assert_nothing_served(what: &str, peer: &HttpPeer) {
    let served: Vec<String> = peer
        .stderr()
        .into_iter()
        .filter(|l| l.contains("/mcp HTTP/"))
        .collect();
    assert!(served.is_empty(), "{what}: the server answered: {served:?}");
}

#[test]
fn an_extra_ca_file_or_pem_is_trusted_beside_the_platform_roots() {
    if peers_skipped("an_extra_ca_file_or_pem_is_trusted_beside_the_platform_roots") {
        return;
    }
    let certs = TlsCerts::generate();
    let peer = python_https(&certs, "server", None);
    let url = peer.url().to_owned();
    block_on(&peer, async {
        for libcurl in STACKS {
            // The platform's roots alone do not know the test CA.
            let err = refused("default trust", &url, base(libcurl)).await;
            let unknown = TlsFailure::UnknownIssuer;
            assert_reason("default trust", &err, unknown, &["unknown issuer"]);
            assert_nothing_served("default trust", &peer);

            // Trusted as a file: both eras, by IP address and by name.
            use_server(&url, trusting(&certs, libcurl)).await;
            let mut options = trusting(&certs, libcurl);
            options.era = Era::Handshake;
            use_server(&url, options).await;
            let by_name = url.replace("127.0.0.1", "localhost");
            use_server(&by_name, trusting(&certs, libcurl)).await;

            // Trusted as PEM text.
            let mut options = base(libcurl);
            options.http_client.tls.extra_ca_pem = vec![certs.ca_pem()];
            use_server(&url, options).await;
            let mut options = base(libcurl);
            options.http_client.tls.extra_ca_pem = vec![certs.ca_pem()];
            options.era = Era::Handshake;
            use_server(&url, options).await;
        }
    });
}

/// The platform's roots stay trusted beside an extra CA. The "platform" here is a CA bundle
/// named by `SSL_CERT_FILE` (read by the extra-CA path and, on Linux, by the platform verifier
/// used without one); a child run of this test binary gets it, since the variable is read per
/// process. The server's certificate is signed by the unrelated CA that this bundle holds,
/// while the extra CA is the test CA: the connection works only if both are trusted together.
#[test]
fn the_system_bundle_stays_trusted_beside_an_extra_ca() {
    if peers_skipped("the_system_bundle_stays_trusted_beside_an_extra_ca") {
        return;
    }
    let certs = TlsCerts::generate();
    let peer = python_https(&certs, "unknown-issuer", None);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "system_bundle_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SSL_CERT_FILE", certs.file("other-ca.pem"))
        .env(CHILD_URL, peer.url())
        .env(CHILD_CA, certs.ca())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed") && stderr.contains("connected"),
        "the child run failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

const CHILD_URL: &str = "MCPWIRE_TLS_TEST_CHILD_URL";
const CHILD_CA: &str = "MCPWIRE_TLS_TEST_CHILD_CA";

/// The child run of [`the_system_bundle_stays_trusted_beside_an_extra_ca`]; does nothing in
/// an ordinary run (without its variables).
#[test]
fn system_bundle_child() {
    let (Some(url), Some(ca)) = (std::env::var_os(CHILD_URL), std::env::var_os(CHILD_CA)) else {
        return;
    };
    let url = url.into_string().unwrap();
    mcpwire_tests::scenario::Runtime::from_env().block_on(async {
        for libcurl in STACKS {
            let mut options = base(libcurl);
            options.http_client.tls.extra_ca_files = vec![ca.clone().into()];
            use_server(&url, options).await;
            eprintln!("connected with an extra CA beside SSL_CERT_FILE (libcurl: {libcurl})");
            if cfg!(target_os = "linux") {
                use_server(&url, base(libcurl)).await;
                eprintln!("connected with the platform verifier reading SSL_CERT_FILE");
            }
        }
    });
}

/// A server with the bad certificate `server` is refused even with the test CA trusted, for
/// `reason` (which the error says in `words`), before any request reaches it; and accepted
/// with `danger_accept_invalid_certificates` (both eras).
fn bad_certificate_is_refused(server: &str, reason: TlsFailure, words: &[&str]) {
    let certs = TlsCerts::generate();
    let peer = python_https(&certs, server, None);
    let url = peer.url().to_owned();
    block_on(&peer, async {
        for libcurl in STACKS {
            let err = refused(server, &url, trusting(&certs, libcurl)).await;
            assert_reason(server, &err, reason.clone(), words);
            assert_nothing_served(server, &peer);

            use_server(&url, accepting_anything(libcurl)).await;
            let mut options = accepting_anything(libcurl);
            options.era = Era::Handshake;
            use_server(&url, options).await;
        }
    });
}

#[test]
fn an_expired_certificate_is_refused() {
    if !peers_skipped("an_expired_certificate_is_refused") {
        bad_certificate_is_refused("expired", TlsFailure::Expired, &["expired"]);
    }
}

#[test]
fn a_certificate_not_yet_valid_is_refused() {
    if !peers_skipped("a_certificate_not_yet_valid_is_refused") {
        bad_certificate_is_refused("notyetvalid", TlsFailure::NotYetValid, &["not valid yet"]);
    }
}

#[test]
fn a_certificate_for_another_name_is_refused() {
    if !peers_skipped("a_certificate_for_another_name_is_refused") {
        bad_certificate_is_refused("wrongname", TlsFailure::NameMismatch, &["not valid for"]);
    }
}

#[test]
fn a_certificate_from_an_unknown_ca_is_refused() {
    if !peers_skipped("a_certificate_from_an_unknown_ca_is_refused") {
        bad_certificate_is_refused(
            "unknown-issuer",
            TlsFailure::UnknownIssuer,
            &["unknown issuer"],
        );
    }
}

#[test]
fn mutual_tls_needs_the_client_certificate() {
    if peers_skipped("mutual_tls_needs_the_client_certificate") {
        return;
    }
    let certs = TlsCerts::generate();
    let peer = python_https(&certs, "server", Some("client-ca.pem"));
    let url = peer.url().to_owned();
    let with_client = |cert: &str, key: &str, libcurl: bool| {
        let mut options = trusting(&certs, libcurl);
        options.http_client.tls.client_certificate = Some(ClientCertificate {
            certificate_file: certs.dir().join(cert),
            key_file: certs.dir().join(key),
        });
        options
    };
    block_on(&peer, async {
        for libcurl in STACKS {
            // Without a client certificate, or with one the server's CA did not sign: refused
            // before the request is read. Under TLS 1.3 the client's side of the handshake is done
            // before the server checks the certificate, and this server (Python's asyncio TLS)
            // then closes the connection without a TLS alert: libcurl sees the connection end
            // after it sent the request (code 56, "peer closed TCP connection without first
            // closing TLS connection"), with no word of certificates.
            refused("no client certificate", &url, trusting(&certs, libcurl)).await;
            refused(
                "a stranger's client certificate",
                &url,
                with_client("stranger.pem", "stranger-key.pem", libcurl),
            )
            .await;
            assert_nothing_served("refused client certificates", &peer);

            // With it: both eras.
            use_server(&url, with_client("client.pem", "client-key.pem", libcurl)).await;
            let mut options = with_client("client.pem", "client-key.pem", libcurl);
            options.era = Era::Handshake;
            use_server(&url, options).await;

            // A key that is not the certificate's: mcpwire's own client finds it when it reads
            // them, at connect, before any connection is made; libcurl in the handshake.
            let err = refused(
                "a key that is not the certificate's",
                &url,
                with_client("client.pem", "stranger-key.pem", libcurl),
            )
            .await;
            if libcurl {
                assert_eq!(
                    tls_failure(&err),
                    Some(&TlsFailure::BadClientCertificate),
                    "{err:?}"
                );
            } else {
                assert!(
                    matches!(&err, mcpwire::Error::HttpOptions { message, .. }
                        if message.contains("the client certificate cannot be used")),
                    "{err:?}"
                );
            }

            // A missing file is reported at connect, by name, before any connection is made.
            let err = refused(
                "a missing certificate file",
                &url,
                with_client("missing.pem", "client-key.pem", libcurl),
            )
            .await;
            assert!(says(&err, &["client certificate", "missing.pem"]), "{err}");
            let err = refused(
                "a missing key file",
                &url,
                with_client("client.pem", "missing-key.pem", libcurl),
            )
            .await;
            assert!(says(&err, &["missing-key.pem"]), "{err}");
        }
    });
}

/// A server that wants a client certificate and sends the TLS alert saying so
/// (`certificate_required` under TLS 1.3, after the client's side of the handshake is done and
/// the request went out) is named as such: a TLS failure, so the request is known not to have
/// run.
#[test]
fn a_server_wanting_a_client_certificate_is_named() {
    if peers_skipped("a_server_wanting_a_client_certificate_is_named") {
        return;
    }
    let certs = TlsCerts::generate();
    let peer = tls_handshake_only(&certs, "server", Some("client-ca.pem"));
    let url = peer.url().to_owned();
    block_on(&peer, async {
        for libcurl in STACKS {
            let err = refused("no client certificate", &url, trusting(&certs, libcurl)).await;
            assert!(
                peer.wait_for_stderr("refused:", Duration::from_secs(5)),
                "{:?}",
                peer.stderr()
            );
            let wanted = TlsFailure::ClientCertificate;
            assert_reason(
                "no client certificate",
                &err,
                wanted,
                &["client certificate"],
            );
        }
    });
}
