//! The Streamable HTTP transport's IO and the HTTP clients behind it.
//!
//! At the bottom, the public [`HttpBackend`] trait and its response and failure
//! ([`backend`]), with the options the default client is built from ([`options`]) and the one
//! reader of URLs ([`url_parts`]). Over it, the default client, [`router`]: it decides which
//! backend carries each request, in one place. The backends: mcpwire's own HTTP/1.1 client for
//! `http://` and `https://` servers, directly or through an HTTP proxy ([`native`]: its pool, its
//! exchanges, its connections, plain or with TLS by rustls, and its connects; the TLS
//! configuration in [`tls_config`]), and isahc over libcurl for HTTP/2, SOCKS and `https://`
//! proxy URLs (`libcurl`, feature `libcurl`, which maps its own failures; without it the router
//! refuses what needs it). What both say of a proxy's failures
//! ([`proxy_words`]) and of TLS and a port ([`tls_diagnosis`]) is shared. Beside them, the
//! driver's side: the exchanges in flight, fed to the connection ([`io`]), and their counters
//! ([`counters`]). The backend trait knows no backend, the backends know neither each other nor
//! the router, and nothing here imports the client or the driver.

pub(crate) mod backend;
pub(crate) mod counters;
mod default_client;
pub(crate) mod io;
#[cfg(feature = "libcurl")]
mod libcurl;
mod native;
pub(crate) mod options;
mod proxy_words;
pub(crate) mod router;
mod tls_config;
mod tls_diagnosis;
mod url_parts;

pub use backend::{HttpBackend, HttpFailure, HttpResponse, HttpVersion};
pub use counters::HttpCounters;
pub use default_client::default_http_client;
pub use io::{HttpExchangeNote, HttpExchangeObserver};
#[cfg(feature = "libcurl")]
pub use libcurl::IsahcBackend;
pub use options::{
    ca_pem_problem, ClientCertificate, HttpClientOptions, HttpVersionChoice, ProxySetting,
    TlsOptions,
};
