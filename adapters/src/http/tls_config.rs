//! The rustls client configuration [`TlsOptions`] describe, for mcpwire's own HTTP/1.1 client
//! and for the second handshake that explains a libcurl failure: the same trust either way.
//!
//! Trust: the platform's verifier (`rustls-platform-verifier`), or, when extra certificate
//! authorities are named, the system's bundle and those together (the PEM of
//! [`TlsOptions::trust_pem`], as libcurl is given it). A client certificate when configured;
//! any server certificate with `danger_accept_invalid_certificates` (the handshake's signatures
//! are still checked: only the certificate's trust, name and dates are not). `SSLKEYLOGFILE`
//! is honoured, for reading a packet capture.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::options::TlsOptions;
use mcpwire_core::error::TlsFailure;

/// The configuration trusting what `tls` trusts (`trust_pem` from [`TlsOptions::trust_pem`]),
/// offering `alpn` (none: no ALPN extension); or why it cannot be made, and of which kind (a
/// client certificate or key that cannot be used, or another reason).
///
/// A certificate in `trust_pem` that cannot be used is left out and the others trusted (libcurl
/// refuses the whole bundle then); a bundle with none fails earlier, in
/// [`TlsOptions::trust_pem`].
pub(crate) fn client_config(
    tls: &TlsOptions,
    trust_pem: Option<&[u8]>,
    alpn: &[&[u8]],
) -> Result<ClientConfig, (TlsFailure, String)> {
    let other = |e: String| (TlsFailure::Other, e);
    let bad = |e: String| (TlsFailure::BadClientCertificate, e);
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| other(e.to_string()))?;
    let builder = if tls.danger_accept_invalid_certificates {
        let verifier = AnyCertificate(provider);
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
    } else if let Some(pem) = trust_pem {
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(pem).flatten() {
            // A bundle may hold certificates webpki cannot use; the others still count.
            let _ = roots.add(cert);
        }
        builder.with_root_certificates(roots)
    } else {
        let verifier =
            rustls_platform_verifier::Verifier::new(provider).map_err(|e| other(e.to_string()))?;
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
    };
    let mut config = match &tls.client_certificate {
        Some(c) => {
            let chain: Vec<CertificateDer<'static>> =
                CertificateDer::pem_file_iter(&c.certificate_file)
                    .map_err(|e| {
                        bad(format!(
                            "the client certificate file {} cannot be read: {e}",
                            c.certificate_file.display()
                        ))
                    })?
                    .collect::<Result<_, _>>()
                    .map_err(|e| bad(e.to_string()))?;
            let key = PrivateKeyDer::from_pem_file(&c.key_file).map_err(|e| {
                bad(format!(
                    "the client key file {} cannot be read: {e}",
                    c.key_file.display()
                ))
            })?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| bad(format!("the client certificate cannot be used: {e}")))?
        }
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    config.key_log = Arc::new(rustls::KeyLogFile::new());
    Ok(config)
}

/// Accepts any server certificate; checks the handshake's signatures as usual.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.0.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.0.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
