//! The spans a call makes, after OpenTelemetry's MCP conventions (v0.1.0): recorded by a
//! subscriber of this test's own, their names and attributes asserted for a tool call, a
//! failed call, a tool's own error and a call that timed out; and the connection's span.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire::{CallOptions, ConnectOptions, Error};
use serde_json::{json, Map};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

mod common;

/// One span as recorded: its name, its fields, whether it closed, what it follows from.
#[derive(Debug, Clone, Default)]
struct Recorded {
    name: &'static str,
    fields: BTreeMap<String, String>,
    closed: bool,
    follows: Vec<u64>,
    parent: Option<u64>,
    /// The events told on it: their messages and fields.
    events: Vec<BTreeMap<String, String>>,
}

/// A subscriber that keeps every span and its fields.
#[derive(Clone, Default)]
struct Recorder {
    spans: Arc<Mutex<BTreeMap<u64, Recorded>>>,
    next: Arc<AtomicU64>,
    entered: Arc<Mutex<Vec<u64>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.to_string());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.to_string());
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let mut r = Recorded {
            name: attrs.metadata().name(),
            ..Default::default()
        };
        attrs.record(&mut Fields(&mut r.fields));
        r.parent = match attrs.parent() {
            Some(p) => Some(p.into_u64()),
            None if attrs.is_contextual() => self.entered.lock().unwrap().last().copied(),
            None => None,
        };
        self.spans.lock().unwrap().insert(id, r);
        Id::from_u64(id)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some(r) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            values.record(&mut Fields(&mut r.fields));
        }
    }
    fn record_follows_from(&self, span: &Id, follows: &Id) {
        if let Some(r) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            r.follows.push(follows.into_u64());
        }
    }
    fn event(&self, event: &Event<'_>) {
        let Some(parent) = event.parent() else { return };
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        if let Some(r) = self.spans.lock().unwrap().get_mut(&parent.into_u64()) {
            r.events.push(fields);
        }
    }
    fn enter(&self, span: &Id) {
        self.entered.lock().unwrap().push(span.into_u64());
    }
    fn exit(&self, _: &Id) {
        self.entered.lock().unwrap().pop();
    }
    fn try_close(&self, id: Id) -> bool {
        if let Some(r) = self.spans.lock().unwrap().get_mut(&id.into_u64()) {
            r.closed = true;
        }
        true
    }
}

impl Recorder {
    /// The spans named `name`, oldest first.
    fn named(&self, name: &str) -> Vec<(u64, Recorded)> {
        let spans = self.spans.lock().unwrap();
        let found = spans.iter().filter(|(_, r)| r.name == name);
        found.map(|(id, r)| (*id, r.clone())).collect()
    }
}

/// The fields of one call span, without the request's id (asserted apart: a number).
fn fields_of(r: &Recorded) -> BTreeMap<&str, &str> {
    let skip = ["jsonrpc.request.id"];
    let found = r.fields.iter().filter(|(k, _)| !skip.contains(&k.as_str()));
    found.map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

#[test]
fn calls_and_the_connection_make_spans_named_and_attributed_as_the_conventions_say() {
    let recorder = Recorder::default();
    let _default = tracing::subscriber::set_default(recorder.clone());
    let seen_current = Arc::new(Mutex::new(Vec::new()));
    let (entered, seen) = (recorder.entered.clone(), seen_current.clone());
    let options = ConnectOptions::default().trace_context(move || {
        // The call's span is current when the hook runs: a hook reading the current
        // OpenTelemetry context puts the client span's ids in `traceparent`.
        seen.lock()
            .unwrap()
            .push(entered.lock().unwrap().last().copied());
        Map::new()
    });
    smol::block_on(async {
        let (client, driver) = mcpwire::connect(&common::demo(), options).unwrap();
        let driver = smol::spawn(driver);
        client.ready().await.unwrap();

        // A tool call.
        let sum = client
            .call_tool("add", json!({"a": 2, "b": 40}))
            .await
            .unwrap();
        assert_eq!(sum.text(), "42");
        // A failed call: the server answers with a JSON-RPC error.
        let refused = client.get_prompt("no-such-prompt", None).await.unwrap_err();
        let Error::Call(mcpwire::core::CallError::Server(e)) = &refused else {
            panic!("{refused:?}")
        };
        let code = e.code.to_string();
        // A tool's own error (`isError`).
        let failed = client.call_tool("fail", json!({})).await.unwrap();
        assert!(failed.is_error, "{failed:?}");
        // A call with progress: each update an event on its span.
        let steps = json!({"steps": 3, "interval_ms": 5});
        let opts = CallOptions::default().progress();
        client.call_tool_with("slow", steps, opts).await.unwrap();
        // A call that timed out.
        let opts = CallOptions::default().timeout(Duration::from_millis(200));
        let slow = json!({"steps": 50, "interval_ms": 100});
        let late = client.call_tool_with("slow", slow, opts).await.unwrap_err();
        let Error::Call(mcpwire::core::CallError::Local(
            late @ mcpwire::core::LocalError::Timeout { .. },
        )) = &late
        else {
            panic!("{late:?}")
        };

        client.close().await;
        driver.await;

        let conn = recorder.named("mcp.connection");
        assert_eq!(conn.len(), 1, "{conn:?}");
        let (conn_id, conn) = &conn[0];
        let f = &conn.fields;
        assert_eq!(f["otel.name"], "mcp connection");
        assert_eq!(f["mcp.server.name"], "mcpwire-demo");
        assert_eq!(f["mcpwire.era"], "stateless");
        assert_eq!(f["mcp.protocol.version"], "2026-07-28");
        assert_eq!(f["network.transport"], "pipe");
        assert!(f["mcpwire.target"].contains("mcpwire-demo-server"), "{f:?}");

        let calls = recorder.named("mcp.client");
        let names: Vec<&str> = calls
            .iter()
            .map(|(_, r)| r.fields["otel.name"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "tools/call add",
                "prompts/get no-such-prompt",
                "tools/call fail",
                "tools/call slow",
                "tools/call slow"
            ]
        );
        for (id, r) in &calls {
            assert!(r.closed, "each call's span ends with it: {r:?}");
            assert_eq!(r.follows, [*conn_id], "linked to the connection's span");
            let request_id = &r.fields["jsonrpc.request.id"];
            assert!(request_id.parse::<i64>().is_ok(), "{r:?}");
            let _ = id;
        }
        let common = [
            ("otel.kind", "client"),
            ("mcp.protocol.version", "2026-07-28"),
            ("network.transport", "pipe"),
        ];
        fn with<'a>(
            common: &[(&'a str, &'a str)],
            pairs: &[(&'a str, &'a str)],
        ) -> BTreeMap<&'a str, &'a str> {
            let mut m: BTreeMap<&str, &str> = common.iter().copied().collect();
            m.extend(pairs.iter().copied());
            m
        }
        let want = |pairs: &[(&'static str, &'static str)]| with(&common, pairs);
        assert_eq!(
            fields_of(&calls[0].1),
            want(&[
                ("otel.name", "tools/call add"),
                ("mcp.method.name", "tools/call"),
                ("gen_ai.tool.name", "add"),
                ("gen_ai.operation.name", "execute_tool"),
            ])
        );
        let mut refused_fields = fields_of(&calls[1].1);
        assert_eq!(
            refused_fields.remove("otel.status_description"),
            Some(e.message.as_str())
        );
        assert_eq!(
            refused_fields,
            with(
                &common,
                &[
                    ("otel.name", "prompts/get no-such-prompt"),
                    ("mcp.method.name", "prompts/get"),
                    ("gen_ai.prompt.name", "no-such-prompt"),
                    ("error.type", code.as_str()),
                    ("rpc.response.status_code", code.as_str()),
                    ("otel.status_code", "ERROR"),
                ]
            )
        );
        let mut failed_fields = fields_of(&calls[2].1);
        assert!(failed_fields.remove("otel.status_description").is_some());
        assert_eq!(
            failed_fields,
            want(&[
                ("otel.name", "tools/call fail"),
                ("mcp.method.name", "tools/call"),
                ("gen_ai.tool.name", "fail"),
                ("gen_ai.operation.name", "execute_tool"),
                ("error.type", "tool_error"),
                ("otel.status_code", "ERROR"),
            ])
        );
        let progress = &calls[3].1;
        assert_eq!(progress.fields.get("error.type"), None, "{progress:?}");
        let told: Vec<(&str, &str)> = (progress.events.iter())
            .map(|e| (e["message"].as_str(), e["progress"].as_str()))
            .collect();
        assert_eq!(
            told,
            [
                ("mcp progress", "1"),
                ("mcp progress", "2"),
                ("mcp progress", "3")
            ]
        );
        let mut late_fields = fields_of(&calls[4].1);
        let words = late_fields.remove("otel.status_description").unwrap();
        assert_eq!(words, late.to_string());
        assert_eq!(
            late_fields,
            want(&[
                ("otel.name", "tools/call slow"),
                ("mcp.method.name", "tools/call"),
                ("gen_ai.tool.name", "slow"),
                ("gen_ai.operation.name", "execute_tool"),
                ("error.type", "timeout"),
                ("otel.status_code", "ERROR"),
            ])
        );
        // The hook ran once per call, each time inside that call's span.
        let seen = seen_current.lock().unwrap().clone();
        let ids: Vec<Option<u64>> = calls.iter().map(|(id, _)| Some(*id)).collect();
        assert_eq!(seen, ids);
    });
}
