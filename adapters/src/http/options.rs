//! How the default HTTP client reaches servers (mcpwire's own HTTP/1.1 client, and libcurl for
//! what it does not speak): TLS trust and client certificates, proxies, HTTP versions, and the
//! connection pool's limits; and the proxy a request goes through ([`ProxySetting::route`]).
//! Each field has a documented default; the defaults are what a curl user expects.

use std::path::PathBuf;
use std::time::Duration;

use super::url_parts::UrlParts;

/// How the default HTTP client reaches servers (part of
/// [`ConnectOptions`](crate::ConnectOptions)): mcpwire's own HTTP/1.1 client, and with feature
/// `libcurl`, `IsahcBackend` (libcurl) for HTTP/2, SOCKS and `https://` proxy URLs, both built
/// from these. Without that feature, options that ask for HTTP/2 fail at connect with
/// [`Error::FeatureMissing`](crate::Error::FeatureMissing). The defaults are beside each field.
///
/// `#[non_exhaustive]`: build one from the default, field by field:
///
/// ```
/// use std::time::Duration;
///
/// let mut http = mcpwire::HttpClientOptions::default();
/// http.connect_timeout = Duration::from_secs(3);
/// http.tls.extra_ca_files.push("corp-ca.pem".into());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpClientOptions {
    /// Certificate trust and client certificates for `https://` URLs.
    pub tls: TlsOptions,
    /// Which proxy to go through (default: the environment's, as curl reads it).
    pub proxy: ProxySetting,
    /// Which HTTP versions to speak (default: HTTP/1.1; see [`HttpVersionChoice`] for how
    /// ALPN decides over TLS).
    pub version: HttpVersionChoice,
    /// The most connections open to one host at a time (default 16). Exchanges beyond what
    /// they can carry wait in the connection's own queue, counted in
    /// [`HttpCounters::queued`](crate::HttpCounters::queued); over HTTP/2 one connection carries
    /// up to [`HttpClientOptions::streams_per_connection`] exchanges at once.
    pub max_connections_per_host: usize,
    /// The exchanges one HTTP/2 connection carries at once before more wait (default 100, the
    /// usual `SETTINGS_MAX_CONCURRENT_STREAMS`).
    pub streams_per_connection: usize,
    /// How long a TCP connect and TLS handshake may take (default 10 s), on either client,
    /// reported as [`HttpErrorKind::ConnectTimeout`](crate::core::error::HttpErrorKind).
    pub connect_timeout: Duration,
    /// How long an idle connection stays in the pool for reuse (default 60 s; libcurl counts
    /// whole seconds, so it is rounded up to one at least).
    pub idle_connection_lifetime: Duration,
    /// Whether HTTP/1.1 goes through libcurl (isahc) instead of mcpwire's own client (default
    /// `false`): the escape hatch, should a server or a network need libcurl's. mcpwire's own
    /// client speaks HTTP/1.1 to `http://` and `https://` servers, directly or through an HTTP
    /// proxy, on the connection's own reactor (about a third of the CPU and half the context
    /// switches of going through libcurl's thread); HTTP/2, SOCKS and `https://` proxy URLs
    /// always go through libcurl.
    ///
    /// Where libcurl differs: each request goes on a connection of its own, closed after its
    /// exchange (libcurl takes a pooled connection it looked at within the last second without
    /// looking again: a server's close right after its answer, or bytes it slipped in, would
    /// meet the next request), so that the outcomes are mcpwire's own client's, at the cost of
    /// a connect (and a TLS handshake) per request; over TLS, an answer that arrives together
    /// with the server's close of its socket without a TLS `close_notify` can be lost (libcurl's
    /// rustls reader drops what it read with the unexpected end), and the request then reports
    /// that it may have run, where mcpwire's own client delivers it. With feature `libcurl` only.
    #[cfg(feature = "libcurl")]
    pub http1_via_libcurl: bool,
}

impl Default for HttpClientOptions {
    fn default() -> Self {
        HttpClientOptions {
            tls: TlsOptions::default(),
            proxy: ProxySetting::default(),
            version: HttpVersionChoice::default(),
            max_connections_per_host: 16,
            streams_per_connection: 100,
            connect_timeout: Duration::from_secs(10),
            idle_connection_lifetime: Duration::from_secs(60),
            #[cfg(feature = "libcurl")]
            http1_via_libcurl: false,
        }
    }
}

/// Certificate trust and client certificates (default: the platform's roots, no client
/// certificate, certificates checked).
///
/// `#[non_exhaustive]`: build one from the default, field by field
/// (`let mut tls = TlsOptions::default(); tls.extra_ca_pem = Some(pem);`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TlsOptions {
    /// Certificate authorities trusted beside the platform's roots, as PEM files. A file that
    /// cannot be read, or holds no PEM certificate, fails the connection at once.
    ///
    /// On Linux and other Unix systems with a CA bundle file (`SSL_CERT_FILE`, or the
    /// distribution's usual place), the bundle and these are trusted together. Where the
    /// system has no bundle file (macOS, Windows), these replace the platform's roots for the
    /// connection: name every authority the server's chain may need.
    pub extra_ca_files: Vec<PathBuf>,
    /// Certificate authorities trusted beside the platform's roots, as PEM text (the same rule
    /// as [`TlsOptions::extra_ca_files`]).
    pub extra_ca_pem: Vec<String>,
    /// The client certificate for servers that ask for one (mutual TLS).
    pub client_certificate: Option<ClientCertificate>,
    /// Accept any server certificate: unknown issuer, wrong name, expired. Anyone on the path
    /// can then read and change the traffic. For tests against throwaway servers only.
    pub danger_accept_invalid_certificates: bool,
}

/// A client certificate and its private key, as PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertificate {
    /// The certificate chain (PEM).
    pub certificate_file: PathBuf,
    /// Its private key (PEM, unencrypted).
    pub key_file: PathBuf,
}

/// Which proxy requests go through (`Debug` shows the proxy URL without credentials).
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProxySetting {
    /// The environment's, as curl reads it: `https_proxy`/`HTTPS_PROXY` for `https://` URLs,
    /// `http_proxy` (lower case only, as curl does) for `http://`, `ALL_PROXY` for both,
    /// `NO_PROXY` for hosts to reach directly.
    #[default]
    FromEnvironment,
    /// Never a proxy, whatever the environment says.
    Direct,
    /// This proxy (`http://host:port`; `socks5://…` and `socks5h://…` also work), with the
    /// hosts to reach directly (`NO_PROXY` syntax: names, domains with a leading dot, `*`).
    /// An `https://` URL goes through it in a CONNECT tunnel.
    Url {
        /// The proxy's URL; credentials in it (`http://user:password@host:port`) are used and
        /// never shown.
        url: String,
        /// Hosts reached directly. When empty, the environment's `no_proxy`/`NO_PROXY` applies,
        /// as curl reads it.
        no_proxy: Vec<String>,
    },
}

/// Which HTTP versions to speak.
///
/// Over TLS, ALPN decides, as curl has it: when HTTP/2 is allowed, mcpwire's own client offers
/// `h2` and `http/1.1` in its handshake; a server that agrees `h2` is spoken to in HTTP/2
/// through libcurl (and its later requests go there at once), one that agrees only `http/1.1`
/// (or nothing) in HTTP/1.1 by mcpwire's own client. No request goes in a version the server
/// did not agree; learning that a server agrees `h2` costs one handshake of mcpwire's own
/// client, which carries nothing, once per server and connection. The version each response came in
/// is in [`HttpExchangeNote::Response`](crate::HttpExchangeNote) and
/// [`HttpCounters::http2_responses`](crate::HttpCounters), and when HTTP/2 was asked for and
/// HTTP/1.1 was spoken, a diagnostic event says so. HTTP/2 with prior knowledge (h2c) is for
/// plain `http://` alone. Every choice but [`HttpVersionChoice::Http1Only`] needs feature
/// `libcurl`: without it, a connection whose options make another fails at connect with
/// [`Error::FeatureMissing`](crate::Error::FeatureMissing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpVersionChoice {
    /// HTTP/1.1, on mcpwire's own client over `http://` and `https://` alike (the default).
    #[default]
    Http1Only,
    /// HTTP/2 over TLS when the server agrees `h2` by ALPN, through libcurl: worth it for
    /// many long streams to one server over one connection. A server that agrees only
    /// HTTP/1.1 is spoken to in HTTP/1.1 (as `curl --http2` does), and a diagnostic event says
    /// so. Plain `http://` stays HTTP/1.1.
    Http2,
    /// HTTP/2 when the server's TLS agrees it by ALPN, HTTP/1.1 otherwise (plain `http://`
    /// stays HTTP/1.1 on mcpwire's own client).
    Negotiate,
    /// HTTP/2 with prior knowledge over plain `http://` (h2c), for servers known to speak it,
    /// through libcurl; a server that answers its preface in HTTP/1.1 fails the request as
    /// never sent, saying so. Over TLS, as [`HttpVersionChoice::Negotiate`]: never the preface
    /// without `h2` agreed.
    Http2PriorKnowledge,
}

/// Where Unix systems keep their CA bundle, most common first.
#[cfg(all(unix, not(target_os = "macos")))]
const SYSTEM_BUNDLES: [&str; 5] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/pki/tls/cacert.pem",
    "/etc/ssl/cert.pem",
];

/// The system's CA bundle, as PEM, when it keeps one in a file.
fn system_bundle() -> Option<Vec<u8>> {
    if let Some(path) = std::env::var_os("SSL_CERT_FILE").filter(|p| !p.is_empty()) {
        return std::fs::read(path).ok();
    }
    #[cfg(all(unix, not(target_os = "macos")))]
    for path in SYSTEM_BUNDLES {
        if let Ok(pem) = std::fs::read(path) {
            return Some(pem);
        }
    }
    None
}

impl HttpClientOptions {
    /// The proxy a request to `url` goes through, as libcurl picks it (the explicit proxy, or
    /// the environment's; none for a host its `no_proxy` list names), without credentials and
    /// with the environment variable it came from: `http://proxy:3128 (from the environment
    /// variable https_proxy)`. `None` when the request goes directly.
    pub fn proxy_for(&self, url: &str) -> Option<String> {
        let route = self.proxy.route(url)?;
        Some(match route.variable {
            Some(var) => format!("{} (from the environment variable {var})", route.shown),
            None => route.shown,
        })
    }
}

impl TlsOptions {
    /// The PEM bundle to trust instead of the platform's verifier: the system bundle and the
    /// extra CAs, when there are extra CAs.
    pub(crate) fn trust_pem(&self) -> Result<Option<Vec<u8>>, String> {
        if self.extra_ca_files.is_empty() && self.extra_ca_pem.is_empty() {
            return Ok(None);
        }
        let mut pem = system_bundle().unwrap_or_default();
        for path in &self.extra_ca_files {
            let extra = std::fs::read(path)
                .map_err(|e| format!("cannot read the CA file {}: {e}", path.display()))?;
            if let Some(why) = ca_pem_problem(path, &extra) {
                return Err(format!("the CA file {} {why}", path.display()));
            }
            pem.push(b'\n');
            pem.extend_from_slice(&extra);
        }
        for (i, extra) in self.extra_ca_pem.iter().enumerate() {
            if !holds_a_certificate(extra.as_bytes()) {
                return Err(format!(
                    "extra CA PEM text {} of {} holds no PEM certificate \
                     (-----BEGIN CERTIFICATE-----)",
                    i + 1,
                    self.extra_ca_pem.len()
                ));
            }
            pem.push(b'\n');
            pem.extend_from_slice(extra.as_bytes());
        }
        Ok(Some(pem))
    }
}

/// Why the bytes of the CA file `file` cannot be trusted as a PEM bundle ("holds no PEM
/// certificate", with how to convert a DER file), or `None` when they hold a certificate.
pub fn ca_pem_problem(file: &std::path::Path, bytes: &[u8]) -> Option<String> {
    if holds_a_certificate(bytes) {
        return None;
    }
    let mut why = "holds no PEM certificate (-----BEGIN CERTIFICATE-----)".to_owned();
    if looks_like_der(bytes) {
        why.push_str(&format!(
            ": it looks like DER, which converts to PEM with \
             `openssl x509 -inform der -in {0} -out {0}.pem`",
            file.display()
        ));
    }
    Some(why)
}

/// Whether `pem` holds at least one PEM certificate that reads.
fn holds_a_certificate(pem: &[u8]) -> bool {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::pem_slice_iter(pem).any(|c| c.is_ok())
}

/// Whether `bytes` start as a DER certificate does (a SEQUENCE with a long-form length).
fn looks_like_der(bytes: &[u8]) -> bool {
    matches!(bytes, [0x30, 0x81..=0x84, ..])
}

/// The proxy a request goes through, as curl picks it (see [`ProxySetting::route`]).
pub(crate) struct ProxyRoute {
    /// The proxy's URL as given, credentials included: for libcurl only, never shown.
    pub(crate) url: String,
    /// The proxy's URL without credentials, to name it.
    pub(crate) shown: String,
    /// Whether the proxy's URL carries credentials.
    pub(crate) credentials: bool,
    /// The environment variable it was read from; `None` for an explicit proxy.
    pub(crate) variable: Option<&'static str>,
    /// Whether the proxy speaks HTTP for the request itself: a plain `http://` URL through an
    /// HTTP proxy goes to it in absolute form, and its answer (a `407` included) is the proxy's
    /// own HTTP. Otherwise it tunnels (a CONNECT for `https://`, SOCKS), and what comes through
    /// the tunnel is the server's.
    pub(crate) forwards: bool,
    /// Whether an `https://` URL goes through an HTTP proxy in a CONNECT tunnel.
    pub(crate) connect: bool,
}

impl ProxySetting {
    /// The proxy a request to `url` goes through, as libcurl picks it; `None` when it goes
    /// directly.
    pub(crate) fn route(&self, url: &str) -> Option<ProxyRoute> {
        let parts = UrlParts::read(url)?;
        let https = parts.is_https();
        let plain = parts.is_http() && !https;
        let env = |names: &[&'static str]| {
            names.iter().find_map(|n| {
                std::env::var(n)
                    .ok()
                    .filter(|v| !v.is_empty())
                    .map(|v| (*n, v))
            })
        };
        let env_no_proxy = || {
            env(&["no_proxy", "NO_PROXY"])
                .map(|(_, v)| v)
                .unwrap_or_default()
        };
        let (proxy, variable, no_proxy) = match self {
            ProxySetting::Direct => return None,
            // With no list of its own, libcurl reads the environment's.
            ProxySetting::Url { url, no_proxy } if no_proxy.is_empty() => {
                (url.clone(), None, env_no_proxy())
            }
            ProxySetting::Url { url, no_proxy } => (url.clone(), None, no_proxy.join(",")),
            ProxySetting::FromEnvironment => {
                // curl reads `http_proxy` in lower case only.
                let named = if https {
                    env(&["https_proxy", "HTTPS_PROXY"])
                } else {
                    env(&["http_proxy"])
                };
                let (name, proxy) = named.or_else(|| env(&["all_proxy", "ALL_PROXY"]))?;
                (proxy, Some(name), env_no_proxy())
            }
        };
        if bypasses(&rule_host(parts.host), &no_proxy) {
            return None;
        }
        // A proxy without a scheme is an HTTP proxy, as curl reads it.
        let full = if proxy.contains("://") {
            proxy.trim().to_owned()
        } else {
            format!("http://{}", proxy.trim())
        };
        let parsed = UrlParts::read(&full);
        let http_proxy = parsed.is_some_and(|p| p.is_http());
        let credentials = parsed.is_some_and(|p| p.credentials().is_some());
        Some(ProxyRoute {
            shown: mcpwire_core::error::redact_url(&proxy),
            url: proxy,
            credentials,
            variable,
            forwards: http_proxy && plain,
            connect: http_proxy && https,
        })
    }
}

impl std::fmt::Debug for ProxySetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProxySetting::FromEnvironment => f.write_str("FromEnvironment"),
            ProxySetting::Direct => f.write_str("Direct"),
            ProxySetting::Url { url, no_proxy } => f
                .debug_struct("Url")
                .field("url", &mcpwire_core::error::redact_url(url))
                .field("no_proxy", no_proxy)
                .finish(),
        }
    }
}

/// A URL's host as a `NO_PROXY` rule names it: a name in lower case, an IPv6 address in its
/// shortest form (`::1`).
fn rule_host(host: &str) -> String {
    match host.parse::<std::net::Ipv6Addr>() {
        Ok(addr) => addr.to_string(),
        Err(_) => host.to_ascii_lowercase(),
    }
}

/// Whether `host` is reached directly by a `NO_PROXY` list, as curl reads one: `*` for every
/// host, else names and addresses separated by commas, each matching itself and (for names)
/// its subdomains; a leading dot is the same.
fn bypasses(host: &str, no_proxy: &str) -> bool {
    no_proxy
        .split(',')
        .map(|entry| entry.trim().trim_start_matches('.').to_ascii_lowercase())
        .filter(|entry| !entry.is_empty())
        .any(|entry| {
            entry == "*"
                || host == entry
                || host
                    .strip_suffix(entry.as_str())
                    .is_some_and(|before| before.ends_with('.'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_proxy_lists_as_curl_reads_them() {
        for (host, list, direct) in [
            ("a.example", "*", true),
            ("a.example", "example", true),
            ("aexample", "example", false),
            ("a.example", "a.example", true),
            ("b.a.example", ".a.example", true),
            ("b.a.example", "a.example", true),
            ("ba.example", "a.example", false),
            ("127.0.0.1", "localhost, 127.0.0.1", true),
            ("127.0.0.1", "", false),
        ] {
            assert_eq!(bypasses(host, list), direct, "{host} in {list:?}");
        }
    }

    #[test]
    fn a_ca_file_without_a_pem_certificate_is_refused_naming_it() {
        let dir = std::env::temp_dir().join(format!("mcpwire-ca-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (text, der) = (dir.join("notes.txt"), dir.join("ca.der"));
        std::fs::write(&text, "not a certificate").unwrap();
        std::fs::write(&der, [0x30, 0x82, 0x01, 0x0a]).unwrap();
        for (file, words) in [
            (&text, "holds no PEM certificate"),
            (&der, "looks like DER"),
        ] {
            let tls = TlsOptions {
                extra_ca_files: vec![file.clone()],
                ..TlsOptions::default()
            };
            let e = tls.trust_pem().unwrap_err();
            assert!(
                e.contains(&file.display().to_string()) && e.contains(words),
                "{e}"
            );
        }
        let tls = TlsOptions {
            extra_ca_pem: vec!["nothing".into()],
            ..TlsOptions::default()
        };
        let e = tls.trust_pem().unwrap_err();
        assert!(e.contains("holds no PEM certificate"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_proxy_for_a_url_is_named_without_credentials() {
        let options = HttpClientOptions {
            proxy: ProxySetting::Url {
                url: "http://alice:s3cret@proxy:3128".into(),
                no_proxy: vec!["internal".into()],
            },
            ..HttpClientOptions::default()
        };
        assert_eq!(
            options.proxy_for("https://mcp.example/mcp").as_deref(),
            Some("http://proxy:3128")
        );
        assert_eq!(options.proxy_for("https://a.internal/mcp"), None);
        let direct = HttpClientOptions {
            proxy: ProxySetting::Direct,
            ..HttpClientOptions::default()
        };
        assert_eq!(direct.proxy_for("http://x/mcp"), None);
    }

    #[test]
    fn an_explicit_proxy_is_shown_without_credentials() {
        let p = ProxySetting::Url {
            url: "http://alice:s3cret@proxy:3128".into(),
            no_proxy: vec!["internal".into()],
        };
        let shown = format!("{p:?}");
        assert!(
            !shown.contains("s3cret") && !shown.contains("alice"),
            "{shown}"
        );
        let route = p.route("https://mcp.example/mcp").unwrap();
        assert_eq!(route.shown, "http://proxy:3128");
        assert!(route.credentials && route.connect && !route.forwards);
        assert_eq!(route.variable, None);
        assert!(p.route("https://a.internal/mcp").is_none());
        // The host as the rule names it, whatever its letter case or its IPv6 spelling.
        assert!(p.route("https://A.Internal:8443/mcp").is_none());
        let v6 = ProxySetting::Url {
            url: "http://proxy:3128".into(),
            no_proxy: vec!["::1".into()],
        };
        assert!(v6.route("http://[0:0::1]:8000/mcp").is_none());
        assert!(v6.route("http://[::2]:8000/mcp").is_some());
        assert!(ProxySetting::Direct.route("http://x/").is_none());
    }

    #[test]
    fn a_route_says_whether_the_proxy_forwards_or_tunnels() {
        let via = |proxy: &str, url: &str| {
            let setting = ProxySetting::Url {
                url: proxy.into(),
                no_proxy: vec!["nothing.example".into()],
            };
            let route = setting.route(url).unwrap();
            (route.forwards, route.connect, route.credentials)
        };
        // (proxy, URL, forwards, CONNECT, credentials)
        for (proxy, url, forwards, connect, credentials) in [
            (
                "http://proxy:3128",
                "http://mcp.example/mcp",
                true,
                false,
                false,
            ),
            (
                "http://proxy:3128",
                "https://mcp.example/mcp",
                false,
                true,
                false,
            ),
            ("proxy:3128", "http://mcp.example/mcp", true, false, false),
            (
                "u:p@proxy:3128",
                "https://mcp.example/mcp",
                false,
                true,
                true,
            ),
            (
                "https://u@proxy:3128",
                "http://mcp.example/mcp",
                true,
                false,
                true,
            ),
            (
                "socks5://proxy:1080",
                "http://mcp.example/mcp",
                false,
                false,
                false,
            ),
            (
                "socks5h://u:p@proxy:1080",
                "https://mcp.example/mcp",
                false,
                false,
                true,
            ),
        ] {
            assert_eq!(
                via(proxy, url),
                (forwards, connect, credentials),
                "{proxy} for {url}"
            );
        }
    }
}
