//! What mcpwire's own client hands to libcurl (isahc): what it does not speak itself (HTTP/2,
//! SOCKS, `https://` proxy URLs), the backend made when first needed (its agent thread is not
//! started for a connection that never uses it); and the servers found to speak HTTP/2 over
//! TLS.
//!
//! Over TLS, ALPN decides the version, as curl has it. When the options allow HTTP/2, the
//! handshake offers `h2` and `http/1.1`: a server that agrees `http/1.1` (or nothing) is spoken
//! to here, in HTTP/1.1, and one that agrees `h2` is handed to libcurl, whose own handshake
//! agrees `h2` again; that server is remembered, so that its later requests go to libcurl at
//! once. The handshake that found `h2` carried no byte of the request: it goes once, on
//! libcurl's connection. Learning it costs one TLS handshake (through an HTTP proxy, one
//! tunnel) per server and connection, closed unused. HTTP/2 with prior knowledge (h2c) is for
//! `http://` alone.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

use mcpwire_core::error::HttpErrorKind;
use mcpwire_core::HttpRequest;

use crate::future::BoxFuture;
use crate::http::backend::{HttpBackend, HttpFailure, HttpResponse};
use crate::http::isahc_backend::IsahcBackend;
use crate::http::options::HttpClientOptions;

/// The isahc backend behind mcpwire's own client, and the servers that speak HTTP/2.
pub(super) struct Fallback {
    options: HttpClientOptions,
    backend: OnceLock<Result<Arc<IsahcBackend>, String>>,
    /// The servers (the pool's keys) whose TLS agreed `h2`.
    http2: Mutex<HashSet<String>>,
}

impl Fallback {
    /// The fallback for `options` (nothing is made yet).
    pub(super) fn new(options: &HttpClientOptions) -> Arc<Fallback> {
        Arc::new(Fallback {
            options: options.clone(),
            backend: OnceLock::new(),
            http2: Mutex::new(HashSet::new()),
        })
    }

    /// Sends `request` through libcurl.
    pub(super) fn send(
        &self,
        request: HttpRequest,
    ) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
        let made = self
            .backend
            .get_or_init(|| IsahcBackend::with_options(&self.options).map(Arc::new));
        match made {
            Ok(isahc) => isahc.send(request),
            Err(e) => {
                let failure = HttpFailure::new(HttpErrorKind::Other, e.clone(), true);
                Box::pin(async move { Err(failure) })
            }
        }
    }

    /// Whether the server `key` agreed `h2` in a TLS handshake of this client.
    pub(super) fn speaks_http2(&self, key: &str) -> bool {
        let known = self.http2.lock().unwrap_or_else(|e| e.into_inner());
        known.contains(key)
    }

    /// The server `key` agreed `h2`: its requests go to libcurl from now on.
    pub(super) fn spoke_http2(&self, key: &str) {
        let mut known = self.http2.lock().unwrap_or_else(|e| e.into_inner());
        if !known.contains(key) {
            known.insert(key.to_owned());
        }
    }
}
