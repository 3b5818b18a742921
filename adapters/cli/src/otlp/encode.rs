//! The OTLP request, in protobuf: an `ExportTraceServiceRequest`
//! (`opentelemetry/proto/collector/trace/v1/trace_service.proto`) with one `ResourceSpans`
//! (the resource's `service.name`), one `ScopeSpans` (scope `mcpwire`) and the spans. The few
//! messages it takes are written by hand: a protobuf writer is a length-prefixed tree of
//! varints, and writing it here costs less than the generated code and protobuf runtime of
//! `opentelemetry-proto` (prost, and tonic's types) in a command line that needs eight messages,
//! one way.

use super::recorder::{SpanData, SpanEvent, Value};

/// Protobuf's wire types.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;

/// The request for `spans` from service `service_name`.
pub(crate) fn request(service_name: &str, spans: &[SpanData]) -> Vec<u8> {
    let mut out = Vec::new();
    // ExportTraceServiceRequest.resource_spans = 1
    message(&mut out, 1, |rs| {
        // ResourceSpans.resource = 1: Resource.attributes = 1
        message(rs, 1, |resource| {
            key_value(
                resource,
                1,
                "service.name",
                &Value::Str(service_name.into()),
            );
            key_value(
                resource,
                1,
                "telemetry.sdk.name",
                &Value::Str("mcpwire".into()),
            );
            key_value(
                resource,
                1,
                "telemetry.sdk.language",
                &Value::Str("rust".into()),
            );
            let version = Value::Str(env!("CARGO_PKG_VERSION").into());
            key_value(resource, 1, "telemetry.sdk.version", &version);
        });
        // ResourceSpans.scope_spans = 2
        message(rs, 2, |ss| {
            // ScopeSpans.scope = 1: InstrumentationScope.name = 1, version = 2
            message(ss, 1, |scope| {
                string(scope, 1, "mcpwire");
                string(scope, 2, env!("CARGO_PKG_VERSION"));
            });
            for span in spans {
                // ScopeSpans.spans = 2
                message(ss, 2, |s| span_message(s, span));
            }
        });
    });
    out
}

/// One `Span`.
fn span_message(out: &mut Vec<u8>, span: &SpanData) {
    bytes(out, 1, &span.trace_id);
    bytes(out, 2, &span.span_id);
    if let Some(parent) = &span.parent {
        bytes(out, 4, parent);
    }
    string(out, 5, &span.name);
    varint_field(out, 6, span.kind as u64);
    fixed64(out, 7, span.start);
    fixed64(out, 8, span.end.max(span.start));
    for (k, v) in &span.attributes {
        key_value(out, 9, k, v);
    }
    if span.dropped_attributes > 0 {
        varint_field(out, 10, span.dropped_attributes.into());
    }
    for event in &span.events {
        message(out, 11, |e| event_message(e, event));
    }
    if span.dropped_events > 0 {
        varint_field(out, 12, span.dropped_events.into());
    }
    for (trace_id, span_id) in &span.links {
        // Span.Link: trace_id = 1, span_id = 2
        message(out, 13, |l| {
            bytes(l, 1, trace_id);
            bytes(l, 2, span_id);
        });
    }
    let (code, words) = &span.status;
    if *code != 0 {
        // Status: message = 2, code = 3
        message(out, 15, |s| {
            if !words.is_empty() {
                string(s, 2, words);
            }
            varint_field(s, 3, *code as u64);
        });
    }
}

/// One `Span.Event`: time = 1, name = 2, attributes = 3.
fn event_message(out: &mut Vec<u8>, event: &SpanEvent) {
    fixed64(out, 1, event.time);
    string(out, 2, &event.name);
    for (k, v) in &event.attributes {
        key_value(out, 3, k, v);
    }
}

/// A `KeyValue` (key = 1, value = 2: an `AnyValue`) as field `field`.
fn key_value(out: &mut Vec<u8>, field: u32, key: &str, value: &Value) {
    message(out, field, |kv| {
        string(kv, 1, key);
        message(kv, 2, |any| match value {
            Value::Str(s) => string(any, 1, s),
            Value::Bool(b) => varint_field(any, 2, u64::from(*b)),
            Value::Int(i) => varint_field(any, 3, *i as u64),
            Value::Double(d) => {
                tag(any, 4, FIXED64);
                any.extend_from_slice(&d.to_bits().to_le_bytes());
            }
        });
    });
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn varint_field(out: &mut Vec<u8>, field: u32, n: u64) {
    tag(out, field, VARINT);
    varint(out, n);
}

fn fixed64(out: &mut Vec<u8>, field: u32, n: u64) {
    tag(out, field, FIXED64);
    out.extend_from_slice(&n.to_le_bytes());
}

fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    tag(out, field, LEN);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn string(out: &mut Vec<u8>, field: u32, s: &str) {
    bytes(out, field, s.as_bytes());
}

/// A nested message as field `field`, written by `f`.
fn message(out: &mut Vec<u8>, field: u32, f: impl FnOnce(&mut Vec<u8>)) {
    let mut inner = Vec::new();
    f(&mut inner);
    bytes(out, field, &inner);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_fields_are_written_as_protobuf_has_them() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        let mut out = Vec::new();
        string(&mut out, 5, "hi");
        assert_eq!(out, [0x2a, 2, b'h', b'i']);
        let mut out = Vec::new();
        varint_field(&mut out, 3, (-1i64) as u64);
        assert_eq!(out.len(), 11, "a negative int64 takes ten bytes");
        let mut out = Vec::new();
        key_value(&mut out, 9, "k", &Value::Int(1));
        // KeyValue{key "k", value AnyValue{int_value 1}} as field 9.
        assert_eq!(out, [0x4a, 7, 0x0a, 1, b'k', 0x12, 2, 0x18, 1]);
    }
}
