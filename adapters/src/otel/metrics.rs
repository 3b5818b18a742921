//! The metrics of OpenTelemetry's MCP conventions (v0.1.0), feature `opentelemetry`:
//! `mcp.client.operation.duration` (one measure per call, from the moment it is made to its
//! outcome) and `mcp.client.session.duration` (one per connection, from its start to its end),
//! both histograms in seconds with the conventions' bucket boundaries, through the global meter
//! provider of the OpenTelemetry API (instrumentation scope `mcpwire`).
//!
//! The instruments are made when a connection is made: a host sets its meter provider
//! (`opentelemetry::global::set_meter_provider`) before it connects. With none set, the API's
//! no-op provider takes the measures and drops them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ::opentelemetry::metrics::Histogram;
use ::opentelemetry::{global, InstrumentationScope, KeyValue};

/// The conventions' explicit bucket boundaries for both histograms, in seconds.
const BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// One connection's instruments and what its measures share.
pub(crate) struct Meters {
    operation: Histogram<f64>,
    session: Histogram<f64>,
    started: Instant,
    /// `network.transport`, `server.address`, `server.port`.
    peer: Vec<KeyValue>,
    /// `mcp.protocol.version`, once the connection is ready.
    version: Mutex<Option<KeyValue>>,
    /// Whether the session's measure was taken (it is taken once).
    ended: AtomicBool,
}

impl std::fmt::Debug for Meters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meters").field("peer", &self.peer).finish()
    }
}

impl Meters {
    /// The instruments of a connection starting now over `transport` (`network.transport`),
    /// to the server at `address` and `port` when they are known.
    pub(crate) fn new(
        transport: &'static str,
        address: Option<&str>,
        port: Option<u16>,
    ) -> Arc<Meters> {
        let scope = InstrumentationScope::builder("mcpwire")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        let meter = global::meter_with_scope(scope);
        let operation = meter
            .f64_histogram("mcp.client.operation.duration")
            .with_unit("s")
            .with_description(
                "The duration of the MCP request or notification as observed on the sender \
                 from the time it was sent until the response or ack is received.",
            )
            .with_boundaries(BOUNDARIES.to_vec())
            .build();
        let session = meter
            .f64_histogram("mcp.client.session.duration")
            .with_unit("s")
            .with_description("The duration of the MCP session as observed on the MCP client.")
            .with_boundaries(BOUNDARIES.to_vec())
            .build();
        let mut attributes = vec![KeyValue::new("network.transport", transport)];
        if let Some(address) = address {
            attributes.push(KeyValue::new("server.address", address.to_owned()));
        }
        if let Some(port) = port {
            attributes.push(KeyValue::new("server.port", i64::from(port)));
        }
        Arc::new(Meters {
            operation,
            session,
            started: Instant::now(),
            peer: attributes,
            version: Mutex::new(None),
            ended: AtomicBool::new(false),
        })
    }

    /// The connection is ready, speaking protocol `version`.
    pub(crate) fn ready(&self, version: &str) {
        let version = KeyValue::new("mcp.protocol.version", version.to_owned());
        *self.version.lock().unwrap_or_else(|e| e.into_inner()) = Some(version);
    }

    /// The attributes every measure of the connection has.
    fn common(&self, attributes: &mut Vec<KeyValue>) {
        attributes.extend(self.peer.iter().cloned());
        if let Some(v) = &*self.version.lock().unwrap_or_else(|e| e.into_inner()) {
            attributes.push(v.clone());
        }
    }

    /// The session ended, with an error of kind `error` (`error.type`) or none: its duration
    /// is measured (once, whatever calls this again).
    pub(crate) fn session_ended(&self, error: Option<&'static str>) {
        if self.ended.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut attributes = Vec::with_capacity(5);
        self.common(&mut attributes);
        if let Some(kind) = error {
            attributes.push(KeyValue::new("error.type", kind));
        }
        let seconds = self.started.elapsed().as_secs_f64();
        self.session.record(seconds, &attributes);
    }
}

/// One call's measure, from the moment it was made.
#[derive(Debug)]
pub(crate) struct Operation {
    meters: Arc<Meters>,
    started: Instant,
    /// The call's own attributes: its method, its tool or prompt, its resource (opt-in).
    attributes: Vec<KeyValue>,
}

impl Operation {
    /// A call of `method` starting now; `target` its tool's or prompt's name, `uri` its
    /// resource's (only when the host opted in).
    pub(crate) fn start(
        meters: &Arc<Meters>,
        method: &str,
        target: Option<&str>,
        uri: Option<&str>,
    ) -> Operation {
        let mut attributes = Vec::with_capacity(12);
        attributes.push(KeyValue::new("mcp.method.name", method.to_owned()));
        match (method, target) {
            ("tools/call", Some(tool)) => {
                attributes.push(KeyValue::new("gen_ai.tool.name", tool.to_owned()));
                attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            }
            ("prompts/get", Some(prompt)) => {
                attributes.push(KeyValue::new("gen_ai.prompt.name", prompt.to_owned()));
            }
            _ => {}
        }
        if let Some(uri) = uri {
            attributes.push(KeyValue::new("mcp.resource.uri", uri.to_owned()));
        }
        Operation {
            meters: meters.clone(),
            started: Instant::now(),
            attributes,
        }
    }

    /// The call ended: with an error of kind `error` (`error.type`) and the JSON-RPC code
    /// `code` when the server answered with one, or with its result.
    pub(crate) fn ended(mut self, error: Option<&str>, code: Option<&str>) {
        let seconds = self.started.elapsed().as_secs_f64();
        self.meters.common(&mut self.attributes);
        if let Some(kind) = error {
            self.attributes
                .push(KeyValue::new("error.type", kind.to_owned()));
        }
        if let Some(code) = code {
            self.attributes
                .push(KeyValue::new("rpc.response.status_code", code.to_owned()));
        }
        self.meters.operation.record(seconds, &self.attributes);
    }
}
