//! A host that traces with OpenTelemetry: `tracing-opentelemetry` turns mcpwire's spans into
//! OpenTelemetry spans (named and attributed after OpenTelemetry's MCP conventions), the ready
//! hook `mcpwire::otel::trace_context` puts each call's trace context in its request's `_meta`,
//! and the conventions' metrics go to the global meter provider.
//!
//! ```sh
//! cargo run -p mcpwire --features opentelemetry --example otel
//! ```
//!
//! The server is the demo server of the command line (`mcpwire serve-demo`, on the `PATH`). It
//! answers a request that carried a `traceparent` with that `traceparent` in its result's
//! `_meta`: the example shows it names the call's own client span, so a server that traces
//! makes its span a child of the client's. A real host exports with OTLP (the
//! `opentelemetry-otlp` crate); this one keeps its spans and measures in memory to print them.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{global, KeyValue};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::{json, Map, Value};
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

use mcpwire::{CallOptions, ConnectOptions, ServerConfig};

fn main() -> Result<(), mcpwire::Error> {
    // The host's OpenTelemetry, set up once at its start: spans through tracing-opentelemetry,
    // W3C Trace Context as the propagator, and a meter provider.
    let spans = InMemorySpanExporter::default();
    let tracers = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(tracers.tracer("host"));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
        .expect("the only subscriber");
    global::set_text_map_propagator(TraceContextPropagator::new());
    let measures = InMemoryMetricExporter::default();
    let meters = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(measures.clone()).build())
        .build();
    global::set_meter_provider(meters.clone());

    // The one line mcpwire needs: each request carries the current trace context.
    let options = ConnectOptions::default().trace_context(mcpwire::otel::trace_context);
    let server = ServerConfig::stdio("mcpwire", ["serve-demo"]);
    let received = smol::block_on(
        async {
            let client = mcpwire::connect_smol(&server, options).await?;
            let mut params = Map::new();
            params.insert("name".into(), json!("add"));
            params.insert("arguments".into(), json!({"a": 2, "b": 40}));
            let result = client
                .request("tools/call", Some(params), CallOptions::default())
                .await?;
            client.close().await;
            let result: Value = serde_json::from_str(result.get()).expect("JSON");
            let received = result["_meta"]["traceparent"].as_str().unwrap_or("none");
            Ok::<_, mcpwire::Error>(received.to_owned())
        }
        // The host's own span: the call's span is its child.
        .instrument(tracing::info_span!("host", otel.name = "answer a question")),
    )?;
    tracers.force_flush().expect("flushed");
    meters.force_flush().expect("flushed");

    let finished = spans.get_finished_spans().expect("the spans");
    for span in &finished {
        let (trace, id) = (span.span_context.trace_id(), span.span_context.span_id());
        println!(
            "span {:?} ({:?}): trace {trace}, span {id}, parent {}",
            span.name, span.span_kind, span.parent_span_id
        );
    }
    let call = finished
        .iter()
        .find(|s| s.name == "tools/call add")
        .expect("the call's span");
    let attribute = |key: &str| {
        let found = call.attributes.iter().find(|kv| kv.key.as_str() == key);
        found.map(|kv: &KeyValue| kv.value.to_string())
    };
    println!(
        "the call: mcp.method.name={:?}, gen_ai.tool.name={:?}, network.transport={:?}",
        attribute("mcp.method.name").unwrap_or_default(),
        attribute("gen_ai.tool.name").unwrap_or_default(),
        attribute("network.transport").unwrap_or_default(),
    );
    println!("the server received traceparent {received}");
    let own = format!(
        "00-{}-{}-01",
        call.span_context.trace_id(),
        call.span_context.span_id()
    );
    println!(
        "the server's parent is the call's client span: {}",
        received == own
    );

    for resource in measures.get_finished_metrics().expect("the measures") {
        for scope in resource.scope_metrics() {
            for metric in scope.metrics() {
                if let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() {
                    let count: u64 = h.data_points().map(|p| p.count()).sum();
                    println!("{}: {count} measure(s)", metric.name());
                }
            }
        }
    }
    Ok(())
}
