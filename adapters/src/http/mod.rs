//! The Streamable HTTP transport's IO and the HTTP clients behind it.
//!
//! At the bottom, the public [`HttpBackend`] trait and its response and failure
//! ([`backend`]), with the options the default backends are built from ([`options`]). Over it,
//! the backends: mcpwire's own HTTP/1.1 client for `http://` and `https://` servers reached
//! directly ([`native`]: its connections, plain or with TLS by rustls, and its connects; the
//! TLS configuration in [`tls_config`]) and isahc over libcurl for HTTP/2 and proxies
//! ([`isahc_backend`], with what libcurl's failures mean in [`curl_errors`], and a failed TLS
//! handshake explained by a second one in [`tls_diagnosis`]). Beside them, the driver's side:
//! the exchanges in flight, fed to the connection ([`io`]), and their counters ([`counters`]).
//! The backend trait knows no backend, and nothing here imports the client or the driver.

pub(crate) mod backend;
pub(crate) mod counters;
mod curl_errors;
pub(crate) mod io;
mod isahc_backend;
pub(crate) mod native;
pub(crate) mod options;
mod proxy_words;
mod tls_config;
mod tls_diagnosis;

pub use backend::{HttpBackend, HttpFailure, HttpResponse, HttpVersion};
pub use counters::HttpCounters;
pub use io::{HttpExchangeNote, HttpExchangeObserver};
pub use isahc_backend::IsahcBackend;
pub use options::{
    ca_pem_problem, ClientCertificate, HttpClientOptions, HttpVersionChoice, ProxySetting,
    TlsOptions,
};
