//! OpenTelemetry over Streamable HTTP (feature `opentelemetry`): a session renewed while a
//! call is in flight, and a call re-issued after its request was lost, each an event on the
//! call's span, whose attributes name the HTTP server; the measure of each call names it too.
//! Spans through `tracing-opentelemetry` to the SDK's in-memory exporter, measures through the
//! global meter provider to the in-memory metric exporter.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use mcpwire::{CallOptions, ConnectOptions, ServerConfig};
use mcpwire_tests::fault_http::{FaultServer, Rule};
use mcpwire_tests::scenario::{
    connect_handshake, handshake_rules, run, tool_result, HANDSHAKE_INIT,
};
use opentelemetry::trace::{SpanKind, TraceContextExt, TracerProvider as _};
use opentelemetry::{global, KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, InMemoryMetricExporterBuilder, PeriodicReader, SdkMeterProvider,
    Temporality,
};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

/// The host's OpenTelemetry: its providers and their in-memory exporters.
struct Otel {
    spans: InMemorySpanExporter,
    metrics: InMemoryMetricExporter,
    meters: SdkMeterProvider,
    turn: Mutex<()>,
}

/// Set up once: spans exported at their end, `tracing-opentelemetry` as the global subscriber,
/// a meter provider whose reader exports deltas.
fn otel() -> &'static Otel {
    static OTEL: OnceLock<Otel> = OnceLock::new();
    OTEL.get_or_init(|| {
        let spans = InMemorySpanExporter::default();
        let tracers = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(tracers.tracer("host"));
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
            .unwrap();
        let metrics = InMemoryMetricExporterBuilder::new()
            .with_temporality(Temporality::Delta)
            .build();
        let reader = PeriodicReader::builder(metrics.clone()).build();
        let meters = SdkMeterProvider::builder().with_reader(reader).build();
        global::set_meter_provider(meters.clone());
        Otel {
            spans,
            metrics,
            meters,
            turn: Mutex::new(()),
        }
    })
}

impl Otel {
    /// This test's turn: what earlier tests left is cleared.
    fn turn(&self) -> MutexGuard<'_, ()> {
        let turn = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        self.meters.force_flush().unwrap();
        self.metrics.reset();
        self.spans.reset();
        turn
    }

    /// The measures of `mcp.client.operation.duration` since the turn began: their attributes.
    fn operations(&self) -> Vec<BTreeMap<String, String>> {
        self.meters.force_flush().unwrap();
        let mut points = Vec::new();
        for rm in self.metrics.get_finished_metrics().unwrap() {
            for scope in rm.scope_metrics() {
                let ops = scope.metrics();
                for metric in ops.filter(|m| m.name() == "mcp.client.operation.duration") {
                    let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else {
                        panic!("no f64 histogram");
                    };
                    points.extend(h.data_points().map(|p| attributes(p.attributes())));
                }
            }
        }
        points
    }
}

/// Attributes as strings by key.
fn attributes<'a>(kvs: impl IntoIterator<Item = &'a KeyValue>) -> BTreeMap<String, String> {
    let string = |v: &Value| match v {
        Value::String(s) => s.to_string(),
        other => other.to_string(),
    };
    kvs.into_iter()
        .map(|kv| (kv.key.to_string(), string(&kv.value)))
        .collect()
}

/// The one span named `name` of the host's trace `host` (its own span named so).
fn call_span(otel: &Otel, host: &tracing::Span, name: &str) -> SpanData {
    let trace = host.context().span().span_context().trace_id();
    let spans = otel.spans.get_finished_spans().unwrap();
    let mut found: Vec<SpanData> = spans
        .into_iter()
        .filter(|s| s.span_context.trace_id() == trace && s.name == name)
        .collect();
    assert_eq!(found.len(), 1, "one span {name:?}");
    found.remove(0)
}

/// The names of the events on `span`.
fn events(span: &SpanData) -> Vec<String> {
    span.events.iter().map(|e| e.name.to_string()).collect()
}

/// The attributes every call to `server` has: the HTTP server's address and port.
fn assert_names_the_server(a: &BTreeMap<String, String>, server: &FaultServer) {
    let url = url_port(&server.url());
    assert_eq!(a["network.transport"], "tcp", "{a:?}");
    assert_eq!(a["server.address"], "127.0.0.1", "{a:?}");
    assert_eq!(a["server.port"], url, "{a:?}");
}

/// The port of `http://127.0.0.1:PORT/mcp`.
fn url_port(url: &str) -> String {
    let rest = url
        .strip_prefix("http://127.0.0.1:")
        .expect("a loopback URL");
    rest.split('/').next().unwrap().to_owned()
}

/// The server forgets the session while a call is in flight: the connection renews it and
/// sends the call again; the renewal is an event on the call's span (and the connection's),
/// which names the first session.
#[test]
fn a_renewal_is_an_event_on_the_span_of_the_call_in_flight() {
    let otel = otel();
    let _turn = otel.turn();
    let expired =
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#;
    let server = FaultServer::start(vec![
        Rule::post("initialize").once().json_with(
            200,
            &[("Mcp-Session-Id", "sess-1")],
            HANDSHAKE_INIT,
        ),
        Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", "sess-2")], HANDSHAKE_INIT),
        Rule::post("tools/call")
            .header("mcp-session-id", "sess-1")
            .json(404, expired),
        Rule::post("tools/call")
            .header("mcp-session-id", "sess-2")
            .json(200, &tool_result("on the new session")),
        Rule::notifications().status(202),
        Rule::get().status(405),
        Rule::delete().status(200),
    ]);
    let host = tracing::info_span!("host", otel.name = "renewal");
    run(async {
        let _enter = host.enter();
        let config = ServerConfig::http(server.url());
        let client = connect_handshake(&config, ConnectOptions::default()).await;
        let r = client.call_tool("add", json!({})).await.unwrap();
        assert_eq!(r.text(), "on the new session");
        client.close().await;
    });
    let span = call_span(otel, &host, "tools/call add");
    assert_eq!(span.span_kind, SpanKind::Client);
    assert_eq!(events(&span), ["mcp session renewed"]);
    let a = attributes(&span.attributes);
    assert_eq!(
        a["mcp.session.id"], "sess-1",
        "the session it was issued in"
    );
    assert_eq!(a["mcp.protocol.version"], "2025-11-25");
    assert!(!a.contains_key("error.type"), "{a:?}");
    assert_names_the_server(&a, &server);
    let ops = otel.operations();
    let add: Vec<_> = ops
        .iter()
        .filter(|o| o.get("gen_ai.tool.name").map(String::as_str) == Some("add"))
        .collect();
    assert_eq!(add.len(), 1, "{ops:?}");
    assert_names_the_server(add[0], &server);
}

/// A call marked safe to repeat whose request was lost after it went out: sent again with a
/// new id, the re-issue an event on its span, and one measure for the call.
#[test]
fn a_reissue_is_an_event_on_the_calls_span() {
    let otel = otel();
    let _turn = otel.turn();
    let mut rules = vec![
        Rule::post("tools/call").tool("charge").once().close(),
        Rule::post("tools/call")
            .tool("charge")
            .json(200, &tool_result("charged")),
    ];
    rules.extend(handshake_rules("sess-1", 405));
    let server = FaultServer::start(rules);
    let host = tracing::info_span!("host", otel.name = "reissue");
    run(async {
        let _enter = host.enter();
        let config = ServerConfig::http(server.url());
        let client = connect_handshake(&config, ConnectOptions::default()).await;
        let opts = CallOptions::default().safe_to_repeat();
        let r = client
            .call_tool_with("charge", json!({}), opts)
            .await
            .unwrap();
        assert_eq!(r.text(), "charged");
        client.close().await;
    });
    let span = call_span(otel, &host, "tools/call charge");
    assert_eq!(events(&span), ["mcp request reissued"]);
    let reason = attributes(&span.events.iter().next().unwrap().attributes);
    assert!(!reason["reason"].is_empty(), "{reason:?}");
    let a = attributes(&span.attributes);
    assert!(!a.contains_key("error.type"), "{a:?}");
    assert_names_the_server(&a, &server);
    let ops = otel.operations();
    let charge = ops
        .iter()
        .filter(|o| o.get("gen_ai.tool.name").map(String::as_str) == Some("charge"));
    assert_eq!(charge.count(), 1, "one measure for the call: {ops:?}");
}
