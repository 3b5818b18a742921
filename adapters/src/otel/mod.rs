//! OpenTelemetry for hosts that use it (feature `opentelemetry`).
//!
//! With this feature a connection also takes the metrics of OpenTelemetry's MCP conventions
//! (v0.1.0) through the global meter provider: `mcp.client.operation.duration` for each call
//! and `mcp.client.session.duration` for each connection (see the
//! [observability guide](crate::guide::observability)). Set the meter provider before
//! connecting: a connection makes its instruments when it is made.
//!
//! [`trace_context`] is the ready hook for
//! [`ConnectOptions::trace_context`](crate::ConnectOptions::trace_context): it injects the
//! current OpenTelemetry context into each request's `_meta` through the global propagator.
//!
//! ```no_run
//! use mcpwire::ConnectOptions;
//! use opentelemetry::propagation::TextMapCompositePropagator;
//! use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
//!
//! // Once, at the host's start: W3C Trace Context and Baggage (or any propagator).
//! opentelemetry::global::set_text_map_propagator(TextMapCompositePropagator::new(vec![
//!     Box::new(TraceContextPropagator::new()),
//!     Box::new(BaggagePropagator::new()),
//! ]));
//! let options = ConnectOptions::default().trace_context(mcpwire::otel::trace_context);
//! # let _ = options;
//! ```

pub(crate) mod metrics;

use ::opentelemetry::propagation::Injector;
use ::opentelemetry::trace::TraceContextExt;
use serde_json::{Map, Value};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The trace context entries for a request's `_meta`: the current OpenTelemetry context,
/// injected by the global text-map propagator (`traceparent` and `tracestate` with W3C Trace
/// Context, `baggage` with W3C Baggage; whatever keys the propagator writes).
///
/// The current context is the current `tracing` span's when a `tracing-opentelemetry` layer
/// records it (the hook runs with the call's own span current, so `traceparent` names the
/// call's span), else OpenTelemetry's own current context. With no propagator set (the API's
/// default is a no-op) or no context, the entries are empty.
pub fn trace_context() -> Map<String, Value> {
    let span_context = tracing::Span::current().context();
    let cx = match span_context.has_active_span() {
        true => span_context,
        false => ::opentelemetry::Context::current(),
    };
    let mut entries = Meta(Map::new());
    ::opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&cx, &mut entries));
    entries.0
}

/// A request's `_meta` entries as a propagator's carrier.
struct Meta(Map<String, Value>);

impl Injector for Meta {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}
