//! Where a request of mcpwire's own client goes: a server's URL read once into what the
//! request and its connection need (the `Host`, the request target, the host and port to
//! connect to, the pool's key, the HTTP proxy on the way). The router makes it, for a URL it
//! gives this client, and keeps it for the next request to the same URL.

use std::sync::Arc;

use super::proxy::{pool_key, Hop};
use crate::http::url_parts::UrlParts;

/// The parts of an `http://` or `https://` URL this client carries requests to.
pub(crate) struct Target {
    /// The URL it was read from.
    pub(crate) url: String,
    /// Whether it is `https://`.
    pub(crate) tls: bool,
    /// The scheme and the authority, and the proxy on the way: the pool's key (a TLS connection
    /// and a plain one to one port are not the same, nor one through a proxy and one direct).
    pub(crate) key: String,
    /// `host:port` as written (the `Host` header).
    pub(super) authority: String,
    pub(super) host: String,
    pub(super) port: u16,
    /// Path and query (`/` when empty).
    pub(super) path: String,
    /// The HTTP proxy on the way, if any.
    pub(crate) proxy: Option<Arc<Hop>>,
}

impl Target {
    /// The target of `url`, whose parts are `parts` (written plainly: see
    /// [`UrlParts::written_plainly`]), through the HTTP proxy `hop` when there is one.
    pub(crate) fn new(url: &str, parts: &UrlParts<'_>, hop: Option<Hop>) -> Target {
        let tls = parts.is_https();
        let hop = hop.map(Arc::new);
        Target {
            url: url.to_owned(),
            tls,
            key: pool_key(parts.origin, hop.as_ref()),
            authority: parts.authority.to_owned(),
            host: parts.host.to_owned(),
            port: parts
                .port_or_default()
                .unwrap_or(if tls { 443 } else { 80 }),
            path: parts.path_and_query().into_owned(),
            proxy: hop,
        }
    }

    /// The request's target: the path, or the whole URL (without its fragment) for a request
    /// a proxy forwards.
    pub(super) fn request_target(&self) -> &str {
        match &self.proxy {
            Some(_) if !self.tls => self.url.split('#').next().unwrap_or(&self.url),
            _ => &self.path,
        }
    }

    /// Whether a proxy forwards the request (a plain `http://` one through an HTTP proxy).
    pub(super) fn forwarded(&self) -> bool {
        self.proxy.is_some() && !self.tls
    }

    /// `host:port`, as a `CONNECT` names it.
    pub(super) fn host_and_port(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}
