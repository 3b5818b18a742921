//! Why a TLS handshake failed. libcurl reports a failed certificate check with one code for
//! every reason, and isahc does not pass on its words; so after such a failure one more
//! handshake (no request in it) is made with rustls, the same TLS library libcurl uses here,
//! with the same trust and client certificate, and its error names the reason: an unknown
//! issuer, a name that does not match, an expired certificate, a client certificate wanted.

use std::io::Read;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use mcpwire_core::error::TlsFailure;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{AlertDescription, CertificateError, ClientConfig, ClientConnection, RootCertStore};

use crate::http_client::TlsOptions;

/// How long the second handshake may take in all.
const DIAGNOSIS_TIMEOUT: Duration = Duration::from_secs(5);
/// How long to wait, once the handshake is done, for a verdict on the client certificate.
const VERDICT_WAIT: Duration = Duration::from_millis(500);

/// The host and port of an `https://` URL.
fn host_and_port(url: &str) -> Option<(String, u16)> {
    let (scheme, host) = crate::http_client::scheme_and_host(url)?;
    let port = url::Url::parse(url).ok()?.port_or_known_default()?;
    (scheme == "https").then_some((host, port))
}

/// The client configuration that trusts what the backend trusts.
fn config(tls: &TlsOptions, extra_pem: Option<&[u8]>) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = match extra_pem {
        Some(pem) => {
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(pem).flatten() {
                // A bundle may hold certificates webpki cannot use; the others still count.
                let _ = roots.add(cert);
            }
            builder.with_root_certificates(roots)
        }
        None => {
            let verifier =
                rustls_platform_verifier::Verifier::new(provider).map_err(|e| e.to_string())?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
        }
    };
    match &tls.client_certificate {
        Some(c) => {
            let chain: Vec<CertificateDer<'static>> =
                CertificateDer::pem_file_iter(&c.certificate_file)
                    .map_err(|e| e.to_string())?
                    .collect::<Result<_, _>>()
                    .map_err(|e| e.to_string())?;
            let key = PrivateKeyDer::from_pem_file(&c.key_file).map_err(|e| e.to_string())?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| e.to_string())
        }
        None => Ok(builder.with_no_client_auth()),
    }
}

/// The reason a handshake with the server at `url` fails, and rustls's words for it; `None`
/// when it succeeds or cannot be tried.
pub(crate) fn diagnose(
    url: &str,
    tls: &TlsOptions,
    extra_pem: Option<&[u8]>,
) -> Option<(TlsFailure, String)> {
    let (host, port) = host_and_port(url)?;
    let config = config(tls, extra_pem).ok()?;
    let name = ServerName::try_from(host.clone()).ok()?;
    let addr = (host.as_str(), port).to_socket_addrs().ok()?.next()?;
    let mut sock = TcpStream::connect_timeout(&addr, DIAGNOSIS_TIMEOUT).ok()?;
    sock.set_read_timeout(Some(DIAGNOSIS_TIMEOUT)).ok()?;
    sock.set_write_timeout(Some(DIAGNOSIS_TIMEOUT)).ok()?;
    let mut conn = ClientConnection::new(Arc::new(config), name).ok()?;
    let mut outcome = Ok(());
    while conn.is_handshaking() && outcome.is_ok() {
        outcome = conn.complete_io(&mut sock).map(|_| ());
    }
    if outcome.is_ok() {
        // Over TLS 1.3 the server judges a client certificate after the client's side of the
        // handshake is done: its verdict is the first thing it sends.
        let mut byte = [0u8; 1];
        sock.set_read_timeout(Some(VERDICT_WAIT)).ok()?;
        outcome = match conn.complete_io(&mut sock) {
            Ok(_) => conn.reader().read(&mut byte).map(|_| ()),
            Err(e) => Err(e),
        };
    }
    let e = outcome.err()?;
    let error = e.get_ref()?.downcast_ref::<rustls::Error>()?;
    Some((reason_of(error), error.to_string()))
}

/// The kind of a rustls handshake error.
fn reason_of(error: &rustls::Error) -> TlsFailure {
    use rustls::Error as E;
    use CertificateError as C;
    match error {
        E::InvalidCertificate(c) => match c {
            C::UnknownIssuer => TlsFailure::UnknownIssuer,
            C::NotValidForName | C::NotValidForNameContext { .. } => TlsFailure::NameMismatch,
            C::Expired | C::ExpiredContext { .. } => TlsFailure::Expired,
            C::NotValidYet | C::NotValidYetContext { .. } => TlsFailure::NotYetValid,
            _ => TlsFailure::Other,
        },
        E::AlertReceived(
            AlertDescription::CertificateRequired
            | AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
            | AlertDescription::AccessDenied,
        ) => TlsFailure::ClientCertificate,
        _ => TlsFailure::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::host_and_port;

    #[test]
    fn hosts_and_ports_of_urls() {
        assert_eq!(
            host_and_port("https://a.example/mcp"),
            Some(("a.example".into(), 443))
        );
        assert_eq!(
            host_and_port("https://u:p@127.0.0.1:8443/mcp?x"),
            Some(("127.0.0.1".into(), 8443))
        );
        assert_eq!(host_and_port("https://[::1]:9/x"), Some(("::1".into(), 9)));
        assert_eq!(host_and_port("http://a.example/"), None);
    }
}
