//! How an HTTP server is reached, as curl users spell it: `--cacert`, `--cert`/`--key`,
//! `--proxy`, `--noproxy`, `--http1.1`, `--http2`, `--http2-prior-knowledge`, `--connect-timeout`,
//! `--max-connections`, and the loudly named `--danger-accept-invalid-certificates`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use mcpwire::{ClientCertificate, ConnectOptions, HttpVersionChoice, ProxySetting};

use crate::exit_codes;
use crate::failure::Failure;

/// `--cacert FILE` must be a file that holds a PEM certificate: otherwise a usage error naming
/// it (else every server's certificate would be refused as from an unknown issuer, which would
/// not say why).
fn check_ca_file(file: &Path) -> Result<(), Failure> {
    let usage = |why: String| {
        Failure::new(
            exit_codes::USAGE,
            format!("--cacert {}: {why}", file.display()),
        )
    };
    let bytes = std::fs::read(file).map_err(|e| usage(format!("cannot be read: {e}")))?;
    match mcpwire::ca_pem_problem(file, &bytes) {
        Some(why) => Err(usage(why)),
        None => Ok(()),
    }
}

/// The HTTP client's options on the command line.
#[derive(Args, Debug, Default)]
pub(crate) struct HttpArgs {
    /// A CA certificate (PEM) to trust beside the system's roots, for https (repeatable).
    #[arg(long, global = true, value_name = "FILE")]
    cacert: Vec<PathBuf>,
    /// A client certificate (PEM) for servers that ask for one (mutual TLS); needs --key.
    #[arg(long, global = true, value_name = "FILE", requires = "key")]
    cert: Option<PathBuf>,
    /// The client certificate's private key (PEM, unencrypted); needs --cert.
    #[arg(long, global = true, value_name = "FILE", requires = "cert")]
    key: Option<PathBuf>,
    /// Accept any server certificate (unknown issuer, wrong name, expired): anyone on the path
    /// can read and change the traffic. For throwaway test servers only.
    #[arg(long, global = true)]
    danger_accept_invalid_certificates: bool,
    /// The proxy to go through (`http://[user:pass@]host:port`, `socks5h://…`); `""` for none.
    /// Default: the environment's, as curl reads it (`https_proxy`, `http_proxy`, `ALL_PROXY`,
    /// `NO_PROXY`).
    #[arg(long, short = 'x', global = true, value_name = "URL")]
    proxy: Option<String>,
    /// Hosts to reach without the proxy, comma-separated (`*` for all); with --proxy.
    #[arg(long, global = true, value_name = "LIST", requires = "proxy")]
    noproxy: Option<String>,
    /// Speak HTTP/1.1 only (the default), on mcpwire's own client.
    #[arg(
        long = "http1.1",
        global = true,
        conflicts_with_all = ["http2_prior_knowledge", "http2"]
    )]
    http1_1: bool,
    /// Speak HTTP/2 over TLS when the server agrees it (ALPN h2), HTTP/1.1 otherwise, as curl
    /// does: for many long streams to one server. `info` says which was spoken.
    #[arg(long, global = true, conflicts_with = "http2_prior_knowledge")]
    http2: bool,
    /// Speak HTTP/2 to a plain `http://` server without asking first (h2c).
    #[arg(long, global = true)]
    http2_prior_knowledge: bool,
    /// Seconds a TCP connect and TLS handshake may take (default 10).
    #[arg(long, global = true, value_name = "SECONDS")]
    connect_timeout: Option<f64>,
    /// The most connections open to the server at once (default 16); more requests queue.
    #[arg(long, global = true, value_name = "N")]
    max_connections: Option<usize>,
}

impl HttpArgs {
    /// Whether HTTP/2 was asked for (`--http2`).
    pub(crate) fn asks_http2(&self) -> bool {
        self.http2
    }

    /// Sets what was given on `options`; warns on stderr when certificates go unchecked.
    pub(crate) fn apply(&self, options: &mut ConnectOptions) -> Result<(), Failure> {
        for file in &self.cacert {
            check_ca_file(file)?;
        }
        let http = &mut options.http_client;
        http.tls.extra_ca_files.extend(self.cacert.iter().cloned());
        if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
            http.tls.client_certificate = Some(ClientCertificate {
                certificate_file: cert.clone(),
                key_file: key.clone(),
            });
        }
        if self.danger_accept_invalid_certificates {
            errln!(
                "warning: --danger-accept-invalid-certificates: the server's certificate is not \
                 checked; anyone on the path can read and change this connection"
            );
            http.tls.danger_accept_invalid_certificates = true;
        }
        match self.proxy.as_deref() {
            None => {}
            Some("") => http.proxy = ProxySetting::Direct,
            Some(url) => {
                http.proxy = ProxySetting::Url {
                    url: url.to_owned(),
                    no_proxy: self
                        .noproxy
                        .iter()
                        .flat_map(|l| l.split(','))
                        .map(|h| h.trim().to_owned())
                        .filter(|h| !h.is_empty())
                        .collect(),
                }
            }
        }
        if self.http1_1 {
            http.version = HttpVersionChoice::Http1Only;
        }
        if self.http2 {
            http.version = HttpVersionChoice::Http2;
        }
        if self.http2_prior_knowledge {
            http.version = HttpVersionChoice::Http2PriorKnowledge;
        }
        if let Some(secs) = self.connect_timeout {
            http.connect_timeout = Duration::try_from_secs_f64(secs)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    Failure::new(
                        exit_codes::USAGE,
                        format!("--connect-timeout {secs}: give a positive number of seconds"),
                    )
                })?;
        }
        if let Some(n) = self.max_connections {
            if n == 0 {
                return Err(Failure::new(
                    exit_codes::USAGE,
                    "--max-connections 0: give at least 1".to_owned(),
                ));
            }
            http.max_connections_per_host = n;
        }
        Ok(())
    }
}
