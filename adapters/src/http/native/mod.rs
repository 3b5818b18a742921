//! mcpwire's own HTTP/1.1 client, for `http://` and `https://` servers, directly or through an
//! HTTP proxy: the request written with one `write`, the response read on the caller's own
//! reactor, no thread in between. It speaks HTTP/1.1 alone, to the targets the router gives it
//! (`http::router` decides which requests come here; this client knows no other); over TLS,
//! when HTTP/2 is allowed, its handshake offers `h2` too, and a server that agrees it gets its
//! request back unsent ([`Exchanged::Http2`]) for the router to send elsewhere. The protocol
//! itself is the core's sans-IO codec ([`mcpwire_core::codec::http1`]).
//!
//! Here: the client ([`Http1Client`]: its pool and its TLS configuration); a request's
//! [`target`], read once from its URL; one [`exchange`] (its request, its response head, its
//! failures in the words the libcurl backend uses too); the [`pool`] of idle keep-alive
//! connections and spare buffers; a response's [`body`]. The network is met in three files:
//! [`open`] (resolving, connecting, the proxy's tunnel, the TLS handshake, the connect
//! timeout's timers), [`conn`] (one connection's socket, plain or with TLS by rustls over it)
//! and [`happy_eyeballs`] (the TCP connect to a host's addresses). Through an HTTP proxy,
//! [`proxy`]. Nothing here knows the driver, the client or libcurl.
//!
//! At most once: a request is never sent twice by this client. An idle connection is checked
//! before it is reused (a server that closed it is seen at once and a new one is opened); a
//! connection that fails after the request went out is the caller's to decide about.

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcpwire_core::error::{HttpErrorKind, TlsFailure};
use mcpwire_core::HttpRequest;

use self::pool::Pool;
use crate::http::backend::{check_headers, HttpFailure};
use crate::http::options::{HttpClientOptions, HttpVersionChoice, TlsOptions};
use crate::runtime::Runtime;

pub(crate) use self::exchange::Exchanged;
pub(crate) use self::proxy::Hop;
pub(crate) use self::target::Target;

mod body;
mod conn;
mod exchange;
mod happy_eyeballs;
mod open;
mod pool;
mod proxy;
mod target;

/// mcpwire's own HTTP/1.1 client: its pool of idle connections and its TLS configuration, on
/// its connection's runtime.
pub(crate) struct Http1Client {
    pool: Arc<Pool>,
    /// The runtime its sockets, name lookups and timers are on (none: the ambient one at each
    /// request, see [`Runtime::ambient`]).
    runtime: Option<Runtime>,
    connect_timeout: Duration,
    tls_options: TlsOptions,
    /// Whether the TLS handshake offers `h2` (the options allow HTTP/2).
    offers_http2: bool,
    /// The TLS configuration, made at the first `https://` request.
    tls: OnceLock<Result<Arc<rustls::ClientConfig>, (TlsFailure, String)>>,
}

impl Http1Client {
    /// The client for `options` (nothing is connected yet), on the ambient runtime at each
    /// request until [`set_runtime`](Self::set_runtime).
    pub(crate) fn new(options: &HttpClientOptions) -> Self {
        Http1Client {
            pool: Arc::new(Pool::new(options.idle_connection_lifetime)),
            runtime: None,
            connect_timeout: options.connect_timeout,
            tls_options: options.tls.clone(),
            // Only libcurl speaks HTTP/2 here: without it, `h2` is never offered.
            offers_http2: cfg!(feature = "libcurl")
                && options.version != HttpVersionChoice::Http1Only,
            tls: OnceLock::new(),
        }
    }

    /// Its sockets, name lookups and timers go on `runtime` (a connection's) from now on.
    pub(crate) fn set_runtime(&mut self, runtime: Runtime) {
        self.runtime = Some(runtime);
    }

    /// Whether the TLS handshake offers `h2` as well as `http/1.1` (the options allow HTTP/2).
    #[cfg(feature = "libcurl")]
    pub(crate) fn offers_http2(&self) -> bool {
        self.offers_http2
    }

    /// Makes the TLS configuration now; why it cannot be made.
    pub(crate) fn prepare_tls(&self) -> Result<(), String> {
        self.tls_config().map(drop).map_err(|f| f.message)
    }

    /// The TLS configuration, made at the first `https://` request.
    fn tls_config(&self) -> Result<Arc<rustls::ClientConfig>, HttpFailure> {
        let made = self.tls.get_or_init(|| {
            let tls = &self.tls_options;
            let pem = tls.trust_pem().map_err(|e| (TlsFailure::Other, e))?;
            let alpn: &[&[u8]] = if self.offers_http2 {
                &[b"h2", b"http/1.1"]
            } else {
                &[b"http/1.1"]
            };
            crate::http::tls_config::client_config(tls, pem.as_deref(), alpn).map(Arc::new)
        });
        made.clone()
            .map_err(|(kind, e)| HttpFailure::new(HttpErrorKind::Tls(kind), e, true))
    }

    /// Sends `request` to `target`, on an idle connection or a new one. A header HTTP cannot
    /// carry fails it before anything is sent.
    pub(crate) fn send(
        &self,
        target: Arc<Target>,
        request: HttpRequest,
    ) -> impl Future<Output = Exchanged> + Send + 'static {
        let pool = self.pool.clone();
        let connect_timeout = self.connect_timeout;
        let ready = check_headers(&request)
            .and_then(|()| target.tls.then(|| self.tls_config()).transpose())
            .and_then(|tls| Ok((self.runtime()?, tls)));
        async move {
            match ready {
                Ok((runtime, tls)) => {
                    let how = exchange::How {
                        runtime,
                        connect_timeout,
                        tls,
                    };
                    exchange::exchange(pool, how, target, request).await
                }
                Err(failure) => failure.into(),
            }
        }
    }

    /// The runtime of this request: the client's, or the ambient one.
    fn runtime(&self) -> Result<Runtime, HttpFailure> {
        self.runtime
            .clone()
            .or_else(Runtime::ambient)
            .ok_or_else(|| {
                let message = "no async runtime to send the request on (mcpwire's HTTP client \
                           runs on smol, or on the tokio runtime current where it is used)";
                HttpFailure::new(HttpErrorKind::Other, message, true)
            })
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tls_tests;
