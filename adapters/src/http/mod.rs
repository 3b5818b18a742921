//! The Streamable HTTP transport's IO and the HTTP clients behind it.
//!
//! At the bottom, the public [`HttpBackend`] trait and its response and failure
//! ([`backend`]), with the options the default backends are built from ([`options`]). Over it,
//! the backends: mcpwire's own HTTP/1.1 client for a plain `http://` server reached directly
//! ([`h1_backend`], its TCP connect trying the host's addresses side by side in
//! [`happy_eyeballs`]) and isahc over libcurl for the rest ([`isahc_backend`], with what
//! libcurl's failures mean in [`curl_errors`]), both explaining a failed TLS handshake with a
//! second one ([`tls_diagnosis`]). Beside them, the driver's side: the exchanges in flight, fed
//! to the connection ([`io`]), and their counters ([`counters`]). The backend trait knows no
//! backend, and nothing here imports the client or the driver.

pub(crate) mod backend;
pub(crate) mod counters;
mod curl_errors;
pub(crate) mod h1_backend;
mod happy_eyeballs;
pub(crate) mod io;
mod isahc_backend;
pub(crate) mod options;
mod tls_diagnosis;

pub use backend::{HttpBackend, HttpFailure, HttpResponse, HttpVersion};
pub use counters::HttpCounters;
pub use io::{HttpExchangeNote, HttpExchangeObserver};
pub use isahc_backend::IsahcBackend;
pub use options::{
    ca_pem_problem, ClientCertificate, HttpClientOptions, HttpVersionChoice, ProxySetting,
    TlsOptions,
};
