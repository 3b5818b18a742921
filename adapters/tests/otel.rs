//! OpenTelemetry as a host gets it (feature `opentelemetry`): `tracing-opentelemetry` carries
//! mcpwire's spans to the SDK's in-memory span exporter, and the global meter provider's
//! in-memory exporter takes the conventions' two histograms. Asserted: span names, kinds,
//! attributes, status, parent/child links, events, the `traceparent` the server received, and
//! the measures, for a tool call, a failed call, a timed-out call, a call with `input_required`
//! rounds and a server request answered by the host.
//!
//! The providers and the subscriber are global: the tests take turns (one lock), each reading
//! what its own calls made (spans by trace, measures as deltas since the last collection).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use mcpwire::core::types::ElicitResult;
use mcpwire::{CallOptions, ConnectOptions, ElicitAction, Era, Error, Handlers, Root};
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, TraceId, TracerProvider as _};
use opentelemetry::{global, KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, InMemoryMetricExporterBuilder, PeriodicReader, SdkMeterProvider,
    Temporality,
};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{json, Map};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

mod common;

/// The host's OpenTelemetry: its providers and their in-memory exporters.
struct Otel {
    spans: InMemorySpanExporter,
    metrics: InMemoryMetricExporter,
    meters: SdkMeterProvider,
    tracers: SdkTracerProvider,
    turn: Mutex<()>,
}

/// The host's OpenTelemetry, set up once: a tracer provider exporting to memory at each span's
/// end, `tracing-opentelemetry` as the global subscriber, W3C Trace Context as the global
/// propagator, and a meter provider whose reader exports deltas to memory.
fn otel() -> &'static Otel {
    static OTEL: OnceLock<Otel> = OnceLock::new();
    OTEL.get_or_init(|| {
        let spans = InMemorySpanExporter::default();
        let tracers = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(tracers.tracer("host"));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::set_global_default(subscriber).unwrap();
        global::set_text_map_propagator(TraceContextPropagator::new());
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
            tracers,
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
        self.tracers.force_flush().unwrap();
        self.spans.reset();
        turn
    }

    /// The spans ended so far in trace `trace`.
    fn spans_of(&self, trace: TraceId) -> Vec<SpanData> {
        let all = self.spans.get_finished_spans().unwrap();
        all.into_iter()
            .filter(|s| s.span_context.trace_id() == trace)
            .collect()
    }

    /// Every span ended so far.
    fn all_spans(&self) -> Vec<SpanData> {
        self.spans.get_finished_spans().unwrap()
    }

    /// The data points of histogram `name` since the turn began: each one's attributes, count
    /// and sum.
    fn histogram(&self, name: &str) -> Vec<(BTreeMap<String, String>, u64, f64)> {
        self.meters.force_flush().unwrap();
        let mut points = Vec::new();
        for rm in self.metrics.get_finished_metrics().unwrap() {
            for scope in rm.scope_metrics() {
                assert_eq!(scope.scope().name(), "mcpwire");
                for metric in scope.metrics().filter(|m| m.name() == name) {
                    assert_eq!(metric.unit(), "s");
                    let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else {
                        panic!("{name} is no f64 histogram");
                    };
                    for p in h.data_points() {
                        let bounds: Vec<f64> = p.bounds().collect();
                        assert_eq!(bounds.first(), Some(&0.01));
                        assert_eq!(bounds.last(), Some(&300.0));
                        assert_eq!(bounds.len(), 14);
                        points.push((attributes(p.attributes()), p.count(), p.sum()));
                    }
                }
            }
        }
        points
    }
}

/// Attributes as strings by key.
fn attributes<'a>(kvs: impl IntoIterator<Item = &'a KeyValue>) -> BTreeMap<String, String> {
    kvs.into_iter()
        .map(|kv| {
            let v = match &kv.value {
                Value::String(s) => s.to_string(),
                other => other.to_string(),
            };
            (kv.key.to_string(), v)
        })
        .collect()
}

/// A span's attributes as strings.
fn attrs(span: &SpanData) -> BTreeMap<String, String> {
    attributes(&span.attributes)
}

/// The one span named `name` among `spans`.
fn named<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let found: Vec<&SpanData> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one span {name:?}: {:?}", names(spans));
    found[0]
}

fn names(spans: &[SpanData]) -> Vec<String> {
    spans.iter().map(|s| s.name.to_string()).collect()
}

/// Options with the ready OpenTelemetry hook, and an elicitation and roots handler.
fn options(era: Era) -> ConnectOptions {
    let handlers = Handlers::new()
        .on_elicitation(|_| async move {
            Ok(ElicitResult {
                meta: None,
                action: ElicitAction::Accept,
                content: Some(serde_json::from_value(json!({"name": "Ada"})).unwrap()),
            })
        })
        .on_roots(|| async {
            Ok(vec![Root {
                uri: "file:///home/ada/project".into(),
                name: None,
                meta: None,
            }])
        });
    let mut options = ConnectOptions::default()
        .handlers(handlers)
        .trace_context(mcpwire::otel::trace_context);
    options.era = era;
    options
}

/// The host's own span around its work: the calls' spans are its children.
fn host_span(name: &'static str) -> tracing::Span {
    tracing::info_span!("host", otel.name = name)
}

/// A tool call, a failed call and a timed-out call over stdio: each a client span, child of the
/// host's span and linked to the connection's, named and attributed as the conventions say;
/// the `traceparent` the server received names the call's span; the operation histogram has
/// one measure for each, and the session histogram one for the connection.
#[test]
fn calls_are_client_spans_children_of_the_hosts_and_measured() {
    let otel = otel();
    let _turn = otel.turn();
    let host = host_span("host work");
    let trace = host.context().span().span_context().trace_id();
    assert_ne!(
        trace,
        TraceId::INVALID,
        "the host's span is an OpenTelemetry one"
    );
    let echoed = smol::block_on(async {
        let _enter = host.enter();
        let (client, driver) = mcpwire::connect(&common::demo(), options(Era::Auto)).unwrap();
        let driver = smol::spawn(driver);
        client.ready().await.unwrap();
        let mut params = Map::new();
        params.insert("name".into(), json!("add"));
        params.insert("arguments".into(), json!({"a": 2, "b": 40}));
        let result = client
            .request("tools/call", Some(params), CallOptions::default())
            .await
            .unwrap();
        let result: serde_json::Value = serde_json::from_str(result.get()).unwrap();
        let refused = client.get_prompt("no-such-prompt", None).await.unwrap_err();
        assert!(refused.server_error().is_some(), "{refused:?}");
        let opts = CallOptions::default().timeout(Duration::from_millis(200));
        let slow = json!({"steps": 50, "interval_ms": 100});
        let late = client.call_tool_with("slow", slow, opts).await.unwrap_err();
        assert!(matches!(late, Error::Call(_)), "{late:?}");
        client.close().await;
        driver.await;
        result["_meta"]["traceparent"].as_str().unwrap().to_owned()
    });
    drop(host);
    let spans = otel.spans_of(trace);
    let host = named(&spans, "host work");

    // The tool call.
    let add = named(&spans, "tools/call add");
    assert_eq!(add.span_kind, SpanKind::Client);
    assert_eq!(add.parent_span_id, host.span_context.span_id());
    assert_eq!(add.status, Status::Unset);
    let a = attrs(add);
    for (k, v) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "add"),
        ("gen_ai.operation.name", "execute_tool"),
        ("mcp.protocol.version", "2026-07-28"),
        ("network.transport", "pipe"),
    ] {
        assert_eq!(a.get(k).map(String::as_str), Some(v), "{k}: {a:?}");
    }
    assert!(a["jsonrpc.request.id"].parse::<i64>().is_ok(), "{a:?}");
    assert!(!a.contains_key("error.type"), "{a:?}");
    // The server received the call's own span as the parent.
    let sent = format!(
        "00-{}-{}-01",
        add.span_context.trace_id(),
        add.span_context.span_id()
    );
    assert_eq!(echoed, sent);

    // Linked to the connection's span (a trace of its own: it outlives any one call).
    let conn = otel
        .all_spans()
        .into_iter()
        .find(|s| s.name == "mcp connection")
        .expect("the connection's span");
    let links: Vec<_> = add.links.iter().map(|l| l.span_context.span_id()).collect();
    assert_eq!(links, [conn.span_context.span_id()]);
    let c = attrs(&conn);
    assert_eq!(c["mcp.server.name"], "mcpwire-demo");
    assert_eq!(c["mcpwire.era"], "stateless");
    assert_eq!(c["network.transport"], "pipe");

    // The failed call: the server's JSON-RPC error.
    let refused = named(&spans, "prompts/get no-such-prompt");
    let r = attrs(refused);
    assert_eq!(refused.span_kind, SpanKind::Client);
    assert_eq!(r["gen_ai.prompt.name"], "no-such-prompt");
    let code = r["rpc.response.status_code"].clone();
    assert!(code.parse::<i64>().unwrap() < 0, "{r:?}");
    assert_eq!(r["error.type"], code);
    assert!(
        matches!(&refused.status, Status::Error { description } if !description.is_empty()),
        "{:?}",
        refused.status
    );

    // The timed-out call.
    let late = named(&spans, "tools/call slow");
    assert_eq!(attrs(late)["error.type"], "timeout");
    assert!(matches!(late.status, Status::Error { .. }));
    assert_eq!(late.parent_span_id, host.span_context.span_id());

    // The measures: one per call, with the span's attributes; one for the session.
    let ops = otel.histogram("mcp.client.operation.duration");
    let of = |name: &str| {
        let found: Vec<_> = ops
            .iter()
            .filter(|(a, _, _)| {
                a.get("gen_ai.tool.name").or(a.get("gen_ai.prompt.name")) == Some(&name.to_owned())
            })
            .collect();
        assert_eq!(found.len(), 1, "{name}: {ops:?}");
        found[0].clone()
    };
    let (a, count, _) = of("add");
    assert_eq!(count, 1);
    assert_eq!(a["mcp.method.name"], "tools/call");
    assert_eq!(a["gen_ai.operation.name"], "execute_tool");
    assert_eq!(a["mcp.protocol.version"], "2026-07-28");
    assert_eq!(a["network.transport"], "pipe");
    assert!(!a.contains_key("error.type"), "{a:?}");
    let (r, _, _) = of("no-such-prompt");
    assert_eq!(r["error.type"], code);
    assert_eq!(r["rpc.response.status_code"], code);
    let (t, _, sum) = of("slow");
    assert_eq!(t["error.type"], "timeout");
    assert!(
        sum >= 0.2,
        "the timed-out call took its timeout at least: {sum}"
    );
    let sessions = otel.histogram("mcp.client.session.duration");
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let (s, count, _) = &sessions[0];
    assert_eq!(*count, 1);
    assert_eq!(s["network.transport"], "pipe");
    assert_eq!(s["mcp.protocol.version"], "2026-07-28");
    assert!(!s.contains_key("error.type"), "the host closed it: {s:?}");
}

/// A stateless call with two `input_required` rounds: each round an event on the call's span,
/// each input request a server span (`elicitation/create`), child of the call's span.
#[test]
fn input_rounds_are_events_on_the_calls_span_and_their_requests_its_children() {
    let otel = otel();
    let _turn = otel.turn();
    let host = host_span("survey");
    let trace = host.context().span().span_context().trace_id();
    smol::block_on(async {
        let _enter = host.enter();
        let (client, driver) = mcpwire::connect(&common::demo(), options(Era::Auto)).unwrap();
        let driver = smol::spawn(driver);
        let r = client.call_tool("survey", json!({})).await.unwrap();
        assert_eq!(r.text(), "Ada likes Ada");
        client.close().await;
        driver.await;
    });
    drop(host);
    let spans = otel.spans_of(trace);
    let call = named(&spans, "tools/call survey");
    let rounds: Vec<(String, String)> = call
        .events
        .iter()
        .filter(|e| e.name == "mcp input required")
        .map(|e| {
            let a = attributes(&e.attributes);
            (a["round"].clone(), a["requests"].clone())
        })
        .collect();
    let want = [("1", "1"), ("2", "1")].map(|(a, b)| (a.to_owned(), b.to_owned()));
    assert_eq!(rounds, want);
    let asked: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name == "elicitation/create")
        .collect();
    assert_eq!(asked.len(), 2, "{:?}", names(&spans));
    for s in asked {
        assert_eq!(s.span_kind, SpanKind::Server);
        assert_eq!(s.parent_span_id, call.span_context.span_id());
        let a = attrs(s);
        assert_eq!(a["mcp.method.name"], "elicitation/create");
        assert_eq!(a["mcpwire.input_round"], "true");
        assert!(!a.contains_key("jsonrpc.request.id"), "{a:?}");
        assert_eq!(s.status, Status::Unset);
    }
    let ops = otel.histogram("mcp.client.operation.duration");
    assert_eq!(ops.len(), 1, "one call, one measure: {ops:?}");
    assert_eq!(ops[0].0["gen_ai.tool.name"], "survey");
}

/// A server request of the handshake era (`roots/list`, a JSON-RPC request of the server's):
/// a server span of its own trace with the server's request id, linked to the connection.
#[test]
fn a_server_request_is_a_server_span_linked_to_the_connection() {
    let otel = otel();
    let _turn = otel.turn();
    smol::block_on(async {
        let config = common::demo_with(["--host-requests"]);
        let (client, driver) = mcpwire::connect(&config, options(Era::Handshake)).unwrap();
        let driver = smol::spawn(driver);
        let r = client.call_tool("roots", json!({})).await.unwrap();
        assert!(
            r.text().contains("file:///home/ada/project"),
            "{}",
            r.text()
        );
        client.close().await;
        driver.await;
    });
    let spans = otel.all_spans();
    let roots = named(&spans, "roots/list");
    assert_eq!(roots.span_kind, SpanKind::Server);
    let a = attrs(roots);
    assert_eq!(a["mcp.method.name"], "roots/list");
    assert_eq!(a["mcpwire.input_round"], "false");
    assert_eq!(a["mcp.protocol.version"], "2025-11-25");
    assert!(!a["jsonrpc.request.id"].is_empty(), "{a:?}");
    let conn = named(&spans, "mcp connection");
    let links: Vec<_> = roots
        .links
        .iter()
        .map(|l| l.span_context.span_id())
        .collect();
    assert_eq!(links, [conn.span_context.span_id()]);
    // The call that the server's request served is a client span of its own.
    let call = named(&spans, "tools/call roots");
    assert_eq!(call.span_kind, SpanKind::Client);
}

/// Without the hook's context (no span of the host's), the call's own span is still the
/// `traceparent`'s: the hook reads the call's span, current when it runs.
#[test]
fn the_hook_gives_the_calls_span_with_no_span_of_the_hosts() {
    let otel = otel();
    let _turn = otel.turn();
    let echoed = smol::block_on(async {
        let (client, driver) = mcpwire::connect(&common::demo(), options(Era::Auto)).unwrap();
        let driver = smol::spawn(driver);
        let mut params = Map::new();
        params.insert("name".into(), json!("add"));
        params.insert("arguments".into(), json!({"a": 1, "b": 1}));
        let result = client
            .request("tools/call", Some(params), CallOptions::default())
            .await
            .unwrap();
        client.close().await;
        driver.await;
        let v: serde_json::Value = serde_json::from_str(result.get()).unwrap();
        v["_meta"]["traceparent"].as_str().unwrap().to_owned()
    });
    let spans = otel.all_spans();
    let add = named(&spans, "tools/call add");
    assert_eq!(add.parent_span_id, opentelemetry::trace::SpanId::INVALID);
    let sent = format!(
        "00-{}-{}-01",
        add.span_context.trace_id(),
        add.span_context.span_id()
    );
    assert_eq!(echoed, sent);
}

/// A call whose future the host drops (it stops waiting: a cancellation) ends its span as a
/// cancelled call: `error.type` `cancelled` and an error status; its measure is taken with the
/// same `error.type`.
#[test]
fn a_call_whose_future_is_dropped_ends_cancelled_and_is_measured_so() {
    let otel = otel();
    let _turn = otel.turn();
    let host = host_span("impatient");
    let trace = host.context().span().span_context().trace_id();
    smol::block_on(async {
        let _enter = host.enter();
        let (client, driver) = mcpwire::connect(&common::demo(), options(Era::Auto)).unwrap();
        let driver = smol::spawn(driver);
        client.ready().await.unwrap();
        let slow = json!({"steps": 50, "interval_ms": 100});
        let gave_up =
            common::within(Duration::from_millis(300), client.call_tool("slow", slow)).await;
        assert!(gave_up.is_none(), "the slow call ended first: {gave_up:?}");
        client.close().await;
        driver.await;
    });
    drop(host);
    let spans = otel.spans_of(trace);
    let host = named(&spans, "impatient");
    let slow = named(&spans, "tools/call slow");
    assert_eq!(slow.parent_span_id, host.span_context.span_id());
    let a = attrs(slow);
    assert_eq!(a["error.type"], "cancelled", "{a:?}");
    assert!(!a.contains_key("rpc.response.status_code"), "{a:?}");
    assert!(
        matches!(&slow.status, Status::Error { description } if description.contains("dropped")),
        "{:?}",
        slow.status
    );
    let ops = otel.histogram("mcp.client.operation.duration");
    let slow: Vec<_> = ops
        .iter()
        .filter(|(a, _, _)| a.get("gen_ai.tool.name").map(String::as_str) == Some("slow"))
        .collect();
    assert_eq!(slow.len(), 1, "{ops:?}");
    let (a, count, sum) = slow[0];
    assert_eq!(*count, 1);
    assert_eq!(a["error.type"], "cancelled", "{a:?}");
    assert!(*sum >= 0.3, "measured until it was dropped: {sum}");
}

/// A `ping` of the server's, which the connection answers itself: a server span of its own
/// (`ping`, kind server, the server's request id), whose parent is the trace context the
/// server put in the ping's `_meta`, linked to the connection's span.
#[test]
fn a_servers_ping_is_a_server_span_child_of_the_context_it_carried() {
    use futures_lite::{AsyncBufReadExt, AsyncWriteExt, StreamExt};
    let otel = otel();
    let _turn = otel.turn();
    let remote_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let remote_span = "00f067aa0ba902b7";
    let answered = smol::block_on(async {
        let (server_reads, client_writes) = piper::pipe(64 * 1024);
        let (client_reads, mut server_writes) = piper::pipe(64 * 1024);
        // The server, by hand: it answers `initialize`, then pings the client once it is told
        // the client is initialized, and gives back the client's answer.
        let server = smol::spawn(async move {
            let mut lines = futures_lite::io::BufReader::new(server_reads).lines();
            while let Some(Ok(line)) = lines.next().await {
                let m: serde_json::Value = serde_json::from_str(&line).unwrap();
                let reply = match m["method"].as_str() {
                    Some("initialize") => json!({"jsonrpc": "2.0", "id": m["id"], "result": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "serverInfo": {"name": "pinger", "version": "1"},
                    }}),
                    Some("notifications/initialized") => json!({
                        "jsonrpc": "2.0", "id": "srv-ping", "method": "ping",
                        "params": {"_meta": {
                            "traceparent": format!("00-{remote_trace}-{remote_span}-01"),
                        }},
                    }),
                    _ if m["id"] == "srv-ping" => return m,
                    _ => continue,
                };
                let mut out = serde_json::to_vec(&reply).unwrap();
                out.push(b'\n');
                server_writes.write_all(&out).await.unwrap();
            }
            panic!("the client never answered the ping");
        });
        let (client, driver) = mcpwire::connect_streams(
            "pinger",
            client_reads,
            client_writes,
            options(Era::Handshake),
        );
        let driver = smol::spawn(driver);
        client.ready().await.unwrap();
        let answered =
            common::done_within(Duration::from_secs(10), "the ping's answer", server).await;
        client.close().await;
        common::done_within(Duration::from_secs(10), "the driver's end", driver).await;
        answered
    });
    assert_eq!(answered["result"], json!({}), "{answered}");
    let spans = otel.all_spans();
    let ping = named(&spans, "ping");
    assert_eq!(ping.span_kind, SpanKind::Server);
    assert_eq!(ping.span_context.trace_id().to_string(), remote_trace);
    assert_eq!(ping.parent_span_id.to_string(), remote_span);
    assert_eq!(ping.status, Status::Unset);
    let a = attrs(ping);
    assert_eq!(a["mcp.method.name"], "ping");
    assert_eq!(a["jsonrpc.request.id"], "srv-ping");
    assert_eq!(a["mcpwire.input_round"], "false");
    assert_eq!(a["mcp.protocol.version"], "2025-11-25");
    assert_eq!(a["network.transport"], "pipe");
    let conn = named(&spans, "mcp connection");
    let links: Vec<_> = ping
        .links
        .iter()
        .map(|l| l.span_context.span_id())
        .collect();
    assert_eq!(links, [conn.span_context.span_id()]);
}

/// The Manager's start-up work (each server's connection, its handshake and its listings) is
/// in the span of the host's code that added the server, though its supervisor runs as a task
/// of its own: the host's trace holds it.
#[test]
fn the_managers_start_up_listings_are_in_the_span_that_added_the_server() {
    use mcpwire::manager::{CacheLocation, Manager, ManagerOptions, ServerState};
    let otel = otel();
    let _turn = otel.turn();
    let host = host_span("start the servers");
    let trace = host.context().span().span_context().trace_id();
    let manager = {
        let _enter = host.enter();
        let mut o = ManagerOptions::default();
        o.cache = CacheLocation::MemoryOnly;
        let manager = Manager::new(o);
        manager.add("demo", common::demo());
        manager
    };
    smol::block_on(async {
        let ready = |s: &[(String, ServerState)]| {
            s.iter()
                .all(|(_, s)| matches!(s, ServerState::Ready { .. }))
        };
        common::done_within(Duration::from_secs(10), "ready", manager.wait_until(ready)).await;
        manager.close().await;
    });
    drop(host);
    let spans = otel.spans_of(trace);
    let host = named(&spans, "start the servers");
    let id = |s: &SpanData| s.span_context.span_id();
    let parent_of = |s: &SpanData| spans.iter().find(|p| id(p) == s.parent_span_id);
    // Each listing's span descends from the host's span.
    for method in ["tools/list", "prompts/list", "resources/list"] {
        let listing = spans
            .iter()
            .find(|s| s.name == method)
            .unwrap_or_else(|| panic!("no {method} in the host's trace: {:?}", names(&spans)));
        let mut at = listing;
        while let Some(up) = parent_of(at) {
            at = up;
        }
        assert_eq!(id(at), id(host), "{method} under the host's span");
        assert_eq!(listing.span_kind, SpanKind::Client);
    }
    // The connection's span too.
    let conn = named(&spans, "mcp connection");
    assert_eq!(conn.parent_span_id, id(host));
}
