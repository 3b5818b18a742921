//! The isahc clients the options describe: libcurl's versions, proxy, pool and timeouts, and its
//! TLS trust and client certificate.

use std::time::Duration;

use crate::http::options::{HttpClientOptions, HttpVersionChoice, ProxySetting, TlsOptions};

/// The isahc client `options` describe. With `reuse` off, every connection is closed after its
/// exchange (for what libcurl speaks in HTTP/1.1: see [`IsahcBackend`](super::IsahcBackend)).
pub(super) fn client(
    options: &HttpClientOptions,
    trust_pem: Option<&[u8]>,
    reuse: bool,
) -> Result<isahc::HttpClient, String> {
    use isahc::config::{Configurable, RedirectPolicy, VersionNegotiation};
    let mut builder = isahc::HttpClient::builder();
    if !reuse {
        // No connection cache: libcurl closes each connection after its exchange
        // (CURLOPT_FORBID_REUSE), so none is ever taken again unlooked-at.
        builder = builder.connection_cache_size(0);
    }
    let mut builder = builder
        .max_connections_per_host(options.max_connections_per_host.max(1))
        .connection_cache_ttl(
            Duration::from_secs(options.idle_connection_lifetime.as_secs_f64().ceil() as u64)
                .max(Duration::from_secs(1)),
        )
        .connect_timeout(options.connect_timeout)
        // A redirect is reported with its location, never followed: a POST must not be
        // sent again somewhere else behind the caller's back.
        .redirect_policy(RedirectPolicy::None)
        .automatic_decompression(false)
        // HTTP/2 over TLS only when ALPN agrees it (libcurl's `CURL_HTTP_VERSION_2TLS`,
        // HTTP/1.1 otherwise, as curl has it); prior knowledge for plain `http://` only (an
        // `https://` request is given the former: see `IsahcBackend`).
        .version_negotiation(match options.version {
            HttpVersionChoice::Http1Only => VersionNegotiation::http11(),
            HttpVersionChoice::Negotiate | HttpVersionChoice::Http2 => {
                VersionNegotiation::latest_compatible()
            }
            HttpVersionChoice::Http2PriorKnowledge => VersionNegotiation::http2(),
        });
    builder = match &options.proxy {
        ProxySetting::FromEnvironment => builder,
        ProxySetting::Direct => builder.proxy(None),
        ProxySetting::Url { url, no_proxy } => {
            let uri = url
                .parse::<isahc::http::Uri>()
                .map_err(|e| format!("the proxy URL is not valid: {e}"))?;
            let builder = builder.proxy(Some(uri));
            if no_proxy.is_empty() {
                builder
            } else {
                builder.proxy_blacklist(no_proxy.iter().cloned())
            }
        }
    };
    builder = builder.tls_config(tls_config(&options.tls, trust_pem)?);
    builder.build().map_err(|e| e.to_string())
}

/// The isahc TLS configuration of `options`, trusting `pem` (from `TlsOptions::trust_pem`)
/// when given.
fn tls_config(options: &TlsOptions, pem: Option<&[u8]>) -> Result<isahc::tls::TlsConfig, String> {
    use isahc::tls::{Identity, PrivateKey, TlsConfig, TrustStore};
    let mut tls = TlsConfig::builder();
    if let Some(pem) = pem {
        tls = tls.trust_store(TrustStore::builder().certificate_from_pem(pem).build());
    }
    if let Some(cert) = &options.client_certificate {
        for (what, path) in [
            ("certificate", &cert.certificate_file),
            ("key", &cert.key_file),
        ] {
            if !path.is_file() {
                return Err(format!(
                    "the client {what} file {} does not exist",
                    path.display()
                ));
            }
        }
        tls = tls.identity(Identity::from_pem_file(
            &cert.certificate_file,
            Some(PrivateKey::from_pem_file(cert.key_file.clone(), None)),
        ));
    }
    if options.danger_accept_invalid_certificates {
        tls = tls.danger_accept_invalid_certs(true);
    }
    Ok(tls.build())
}
