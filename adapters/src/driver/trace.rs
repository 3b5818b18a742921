//! `tracing` events for what a connection reports beside calls (feature `tracing`, on by
//! default): diagnostics at `warn`, the rest at `debug`, each with the connection's target; a
//! failure of the host's own code at `error`.

use mcpwire_core::{Event, HandlerFailure};

/// Reports one event of the connection to `target` (a command line or a URL).
#[cfg(feature = "tracing")]
pub(crate) fn event(target: &str, event: &Event) {
    match event {
        Event::Diagnostic(d) => tracing::warn!(server = target, "mcp diagnostic: {d}"),
        Event::Ready { era, server } => tracing::debug!(
            server = target,
            era = %era,
            version = server.protocol_version.as_str(),
            "mcp connection ready"
        ),
        Event::HandshakeFailed(e) => tracing::warn!(server = target, "mcp handshake failed: {e}"),
        Event::SessionRenewed(_) => tracing::debug!(server = target, "mcp session renewed"),
        Event::Restarting { reason } => {
            tracing::info!(server = target, "restarting the mcp server: {reason}")
        }
        Event::ServerRequestCancelled { id, .. } => {
            tracing::debug!(server = target, "the server cancelled its request {id}")
        }
        Event::Closed(closed) => {
            tracing::debug!(server = target, "mcp connection: {closed}")
        }
        _ => {}
    }
}

/// Without the `tracing` feature, nothing is reported.
#[cfg(not(feature = "tracing"))]
pub(crate) fn event(_target: &str, _event: &Event) {}

/// Reports that host code failed (at `error`: a bug of the host's, which it should see).
#[cfg(feature = "tracing")]
pub(crate) fn handler_failed(failure: &HandlerFailure) {
    tracing::error!("mcp: {failure}");
}

/// Without the `tracing` feature, nothing is reported.
#[cfg(not(feature = "tracing"))]
pub(crate) fn handler_failed(_failure: &HandlerFailure) {}
