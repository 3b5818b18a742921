//! The ways a test reaches a plain test server (the fault server, most of all): in clear, over
//! TLS (the server behind a [`TlsFront`]) on mcpwire's own client or on libcurl, or over TLS
//! through an HTTP proxy's tunnel ([`Proxy`]), so that one scenario holds on every stack.

use mcpwire::{ConnectOptions, ProxySetting, ServerConfig};

use crate::fault_http::FaultServer;
use crate::proxy::Proxy;
use crate::tls_front::TlsFront;

/// How a client reaches the fault server: in clear on mcpwire's own client, or over TLS (the
/// server behind a TLS front) on mcpwire's own client, on libcurl, or on mcpwire's own client
/// through an HTTP proxy's tunnel.
#[derive(Debug, Clone, Copy)]
pub enum Way {
    /// In clear, on mcpwire's own client.
    Clear,
    /// Over TLS, on mcpwire's own client.
    Tls,
    /// Over TLS, on libcurl.
    TlsLibcurl,
    /// Over TLS through an HTTP proxy's `CONNECT` tunnel, on mcpwire's own client.
    TlsProxy,
}

impl Way {
    /// Every way.
    pub const ALL: [Way; 4] = [Way::Clear, Way::Tls, Way::TlsLibcurl, Way::TlsProxy];

    /// The server's URL this way (a TLS front started for it when needed), the options, and
    /// the proxy (kept for as long as it is used).
    pub fn reach(self, server: &FaultServer) -> (ServerConfig, ConnectOptions, Option<Proxy>) {
        let mut options = ConnectOptions::default();
        if let Way::Clear = self {
            return (ServerConfig::http(server.url()), options, None);
        }
        options.http_client.tls.danger_accept_invalid_certificates = true;
        options.http_client.http1_via_libcurl = matches!(self, Way::TlsLibcurl);
        let proxy = matches!(self, Way::TlsProxy).then(Proxy::start);
        if let Some(proxy) = &proxy {
            options.http_client.proxy = ProxySetting::Url {
                url: proxy.url(),
                no_proxy: Vec::new(),
            };
        }
        let url = TlsFront::start(server.addr()).url();
        (ServerConfig::http(url), options, proxy)
    }
}
