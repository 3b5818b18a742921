//! The core machine behind a connection: stdio or Streamable HTTP.

use mcpwire_core::http::HttpClient;
use mcpwire_core::protocol::{ClientEvent, ClientProtocol, ServerNotification};
use mcpwire_core::stdio::StdioClient;

/// The transport machine of one connection, with its protocol layer.
pub(crate) enum Core {
    Stdio(StdioClient),
    Http(HttpClient),
}

impl Core {
    pub(crate) fn protocol(&self) -> &ClientProtocol {
        match self {
            Core::Stdio(c) => c.protocol(),
            Core::Http(c) => c.protocol(),
        }
    }

    pub(crate) fn protocol_mut(&mut self) -> &mut ClientProtocol {
        match self {
            Core::Stdio(c) => c.protocol_mut(),
            Core::Http(c) => c.protocol_mut(),
        }
    }

    pub(crate) fn poll_event(&mut self) -> Option<ClientEvent> {
        match self {
            Core::Stdio(c) => c.poll_event(),
            Core::Http(c) => c.poll_event(),
        }
    }

    pub(crate) fn poll_notification(&mut self) -> Option<ServerNotification> {
        match self {
            Core::Stdio(c) => c.poll_notification(),
            Core::Http(c) => c.poll_notification(),
        }
    }

    /// The stdio machine; only the stdio driver asks, and it drives only stdio connections.
    pub(crate) fn stdio(&mut self) -> &mut StdioClient {
        match self {
            Core::Stdio(c) => c,
            Core::Http(_) => unreachable!("the stdio driver drives a stdio connection"),
        }
    }

    /// The HTTP machine; only the HTTP driver asks.
    pub(crate) fn http(&mut self) -> &mut HttpClient {
        match self {
            Core::Http(c) => c,
            Core::Stdio(_) => unreachable!("the HTTP driver drives an HTTP connection"),
        }
    }
}
