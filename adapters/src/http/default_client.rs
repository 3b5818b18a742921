//! The default HTTP client as a value of its own: for a host's requests beside its connections
//! (an exporter's, say), on the same stack as the connections' own.

use std::sync::Arc;

use super::backend::HttpBackend;
use super::options::HttpClientOptions;
use super::router::Router;

/// The HTTP client a connection uses when given none ([`ConnectOptions::http_backend`]
/// unset), made from `options`: mcpwire's own HTTP/1.1 client, and with feature `libcurl`
/// libcurl for what it does not speak. Each [`HttpBackend::send`] is one request, sent once,
/// whose response head and body stream come back; it runs on any executor (its sockets are
/// on async-io's reactor). Connections to one server are pooled.
///
/// ```no_run
/// use mcpwire::core::{HttpMethod, HttpRequest};
/// use mcpwire::{default_http_client, HttpClientOptions};
///
/// # smol::block_on(async {
/// let client = default_http_client(&HttpClientOptions::default());
/// let request = HttpRequest {
///     exchange: 0,
///     method: HttpMethod::Post,
///     url: "http://127.0.0.1:4318/v1/traces".into(),
///     headers: vec![("Content-Type".into(), "application/x-protobuf".into())],
///     body: Vec::new(),
/// };
/// let response = client.send(request).await;
/// # });
/// ```
///
/// [`ConnectOptions::http_backend`]: crate::ConnectOptions::http_backend
pub fn default_http_client(options: &HttpClientOptions) -> Arc<dyn HttpBackend> {
    Arc::new(Router::new(options))
}
