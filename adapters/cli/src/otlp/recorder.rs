//! The command line's `tracing` subscriber: it records the spans mcpwire makes (and the
//! command's own) as OpenTelemetry spans: W3C trace and span ids made here, the parent, the
//! name and kind (`otel.name`, `otel.kind`), start and end times, attributes, events, links
//! (`follows_from`) and the status (`otel.status_code`, or `error.type`). A span ends when its
//! last handle is dropped; what ended waits in a bounded buffer for the export.
//!
//! Only mcpwire's own spans and events are recorded (targets `mcpwire…`, level info and above),
//! so a dependency's diagnostics never reach the collector.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// The most ended spans kept for the export; past it, more are counted, not kept.
pub(crate) const MAX_SPANS: usize = 4096;
/// The most events kept on one span.
const MAX_EVENTS: usize = 128;
/// The most attributes kept on one span or event.
const MAX_ATTRIBUTES: usize = 64;

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Str(String),
    Int(i64),
    Bool(bool),
    Double(f64),
}

/// One event on a span.
#[derive(Debug, Clone)]
pub(crate) struct SpanEvent {
    pub(crate) time: u64,
    pub(crate) name: String,
    pub(crate) attributes: Vec<(String, Value)>,
}

/// One span as OpenTelemetry has it.
#[derive(Debug, Clone)]
pub(crate) struct SpanData {
    pub(crate) trace_id: [u8; 16],
    pub(crate) span_id: [u8; 8],
    pub(crate) parent: Option<[u8; 8]>,
    pub(crate) name: String,
    /// OTLP's `SpanKind`: 1 internal, 2 server, 3 client, 4 producer, 5 consumer.
    pub(crate) kind: i32,
    /// Nanoseconds since the Unix epoch.
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) attributes: Vec<(String, Value)>,
    pub(crate) dropped_attributes: u32,
    pub(crate) events: Vec<SpanEvent>,
    pub(crate) dropped_events: u32,
    /// Spans this one follows from: (trace id, span id).
    pub(crate) links: Vec<([u8; 16], [u8; 8])>,
    /// OTLP's `StatusCode` (0 unset, 1 ok, 2 error) and its message.
    pub(crate) status: (i32, String),
}

/// A span not yet ended: its handles, its callsite's metadata, and what it holds.
struct Live {
    refs: usize,
    metadata: &'static Metadata<'static>,
    data: SpanData,
}

#[derive(Default)]
struct Spans {
    next: u64,
    live: HashMap<u64, Live>,
    ended: Vec<SpanData>,
    dropped: u64,
}

/// The subscriber.
#[derive(Default)]
pub(crate) struct Recorder {
    spans: Mutex<Spans>,
}

thread_local! {
    /// The spans entered on this thread, innermost last.
    static STACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

impl Recorder {
    fn lock(&self) -> std::sync::MutexGuard<'_, Spans> {
        self.spans.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// This thread's current span, if it is one of ours.
    fn current_id() -> Option<u64> {
        STACK.with(|s| s.borrow().last().copied())
    }

    /// The trace context of the current span: `traceparent` (W3C Trace Context, sampled) and
    /// the span's name.
    pub(crate) fn traceparent(&self) -> Option<(String, String)> {
        let id = Self::current_id()?;
        let spans = self.lock();
        let span = &spans.live.get(&id)?.data;
        let tp = format!("00-{}-{}-01", hex(&span.trace_id), hex(&span.span_id));
        Some((tp, span.name.clone()))
    }

    /// The spans to export: those ended, then those still open, ended now; and how many were
    /// not kept.
    pub(crate) fn take(&self) -> (Vec<SpanData>, u64) {
        let mut spans = self.lock();
        let now = now_ns();
        let mut all = std::mem::take(&mut spans.ended);
        let mut open: Vec<&Live> = spans.live.values().collect();
        open.sort_by_key(|l| l.data.start);
        all.extend(open.into_iter().map(|l| SpanData {
            end: now,
            ..l.data.clone()
        }));
        (all, std::mem::take(&mut spans.dropped))
    }
}

impl Subscriber for Recorder {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        match wanted(metadata) {
            true => Interest::always(),
            false => Interest::never(),
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        wanted(metadata)
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::INFO)
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let metadata = attrs.metadata();
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let parent = match attrs.parent() {
            Some(p) => Some(p.into_u64()),
            None if attrs.is_contextual() => Self::current_id(),
            None => None,
        };
        let mut spans = self.lock();
        let parent = parent.and_then(|p| spans.live.get(&p)).map(|l| &l.data);
        let (trace_id, parent) = match parent {
            Some(p) => (p.trace_id, Some(p.span_id)),
            None => (trace_id(), None),
        };
        let mut data = SpanData {
            trace_id,
            span_id: random_u64().to_be_bytes(),
            parent,
            name: metadata.name().to_owned(),
            kind: 1,
            start: now_ns(),
            end: 0,
            attributes: Vec::new(),
            dropped_attributes: 0,
            events: Vec::new(),
            dropped_events: 0,
            links: Vec::new(),
            status: (0, String::new()),
        };
        fields.apply(&mut data);
        spans.next += 1;
        let id = spans.next;
        let live = Live {
            refs: 1,
            metadata,
            data,
        };
        spans.live.insert(id, live);
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut fields = Fields::default();
        values.record(&mut fields);
        if let Some(live) = self.lock().live.get_mut(&span.into_u64()) {
            fields.apply(&mut live.data);
        }
    }

    fn record_follows_from(&self, span: &Id, follows: &Id) {
        let mut spans = self.lock();
        let Some(other) = spans.live.get(&follows.into_u64()) else {
            return;
        };
        let link = (other.data.trace_id, other.data.span_id);
        if let Some(live) = spans.live.get_mut(&span.into_u64()) {
            live.data.links.push(link);
        }
    }

    fn event(&self, event: &Event<'_>) {
        let parent = match event.parent() {
            Some(p) => Some(p.into_u64()),
            None if event.is_contextual() => Self::current_id(),
            None => None,
        };
        let Some(parent) = parent else { return };
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut spans = self.lock();
        let Some(live) = spans.live.get_mut(&parent) else {
            return;
        };
        if live.data.events.len() >= MAX_EVENTS {
            live.data.dropped_events += 1;
            return;
        }
        let name = fields
            .message
            .take()
            .unwrap_or_else(|| event.metadata().name().to_owned());
        live.data.events.push(SpanEvent {
            time: now_ns(),
            name,
            attributes: fields.attributes,
        });
    }

    /// The span this thread is in (`Span::current()`: what mcpwire's Manager gives the
    /// supervisors of the servers added in it).
    fn current_span(&self) -> tracing_core::span::Current {
        let Some(id) = Self::current_id() else {
            return tracing_core::span::Current::none();
        };
        match self.lock().live.get(&id) {
            Some(live) => tracing_core::span::Current::new(Id::from_u64(id), live.metadata),
            None => tracing_core::span::Current::none(),
        }
    }

    fn enter(&self, span: &Id) {
        STACK.with(|s| s.borrow_mut().push(span.into_u64()));
    }

    fn exit(&self, span: &Id) {
        let id = span.into_u64();
        STACK.with(|s| {
            let mut stack = s.borrow_mut();
            if let Some(at) = stack.iter().rposition(|&x| x == id) {
                stack.remove(at);
            }
        });
    }

    fn clone_span(&self, id: &Id) -> Id {
        if let Some(live) = self.lock().live.get_mut(&id.into_u64()) {
            live.refs += 1;
        }
        id.clone()
    }

    fn try_close(&self, id: Id) -> bool {
        let mut spans = self.lock();
        let key = id.into_u64();
        let Some(live) = spans.live.get_mut(&key) else {
            return false;
        };
        live.refs -= 1;
        if live.refs > 0 {
            return false;
        }
        let Some(mut ended) = spans.live.remove(&key).map(|l| l.data) else {
            return false;
        };
        ended.end = now_ns();
        if spans.ended.len() < MAX_SPANS {
            spans.ended.push(ended);
        } else {
            spans.dropped += 1;
        }
        true
    }
}

/// Whether a span or event is recorded: mcpwire's own, at level info and above.
fn wanted(metadata: &Metadata<'_>) -> bool {
    metadata.target().starts_with("mcpwire") && *metadata.level() <= Level::INFO
}

/// The fields of a span or event as they are recorded: the `otel.*` ones read apart.
#[derive(Default)]
struct Fields {
    name: Option<String>,
    kind: Option<i32>,
    status: Option<i32>,
    status_message: Option<String>,
    message: Option<String>,
    attributes: Vec<(String, Value)>,
}

impl Fields {
    fn put(&mut self, field: &Field, value: Value) {
        let text = |v: &Value| match v {
            Value::Str(s) => s.clone(),
            other => format!("{other:?}"),
        };
        match field.name() {
            "otel.name" => self.name = Some(text(&value)),
            "otel.kind" => {
                self.kind = Some(match text(&value).to_ascii_lowercase().as_str() {
                    "server" => 2,
                    "client" => 3,
                    "producer" => 4,
                    "consumer" => 5,
                    _ => 1,
                })
            }
            "otel.status_code" => {
                self.status = Some(match text(&value).to_ascii_uppercase().as_str() {
                    "OK" => 1,
                    "ERROR" => 2,
                    _ => 0,
                })
            }
            "otel.status_description" => self.status_message = Some(text(&value)),
            "message" => self.message = Some(text(&value)),
            name => {
                self.attributes.retain(|(k, _)| k != name);
                self.attributes.push((name.to_owned(), value));
            }
        }
    }

    /// Sets what these fields say on `span`.
    fn apply(self, span: &mut SpanData) {
        if let Some(name) = self.name {
            span.name = name;
        }
        if let Some(kind) = self.kind {
            span.kind = kind;
        }
        for (key, value) in self.attributes {
            if key == "error.type" && span.status.0 == 0 {
                span.status.0 = 2;
            }
            if let Some(at) = span.attributes.iter().position(|(k, _)| *k == key) {
                span.attributes[at].1 = value;
            } else if span.attributes.len() < MAX_ATTRIBUTES {
                span.attributes.push((key, value));
            } else {
                span.dropped_attributes += 1;
            }
        }
        if let Some(code) = self.status {
            span.status.0 = code;
        }
        if let Some(message) = self.status_message {
            span.status.1 = message;
        }
    }
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, Value::Str(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, Value::Str(value.to_owned()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::Int(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(v) => self.put(field, Value::Int(v)),
            Err(_) => self.put(field, Value::Str(value.to_string())),
        }
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::Bool(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, Value::Double(value));
    }
}

/// Nanoseconds since the Unix epoch.
fn now_ns() -> u64 {
    let since = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH);
    since.map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// A new trace id (16 bytes, never all zeros).
fn trace_id() -> [u8; 16] {
    let mut id = [0; 16];
    id[..8].copy_from_slice(&random_u64().to_be_bytes());
    id[8..].copy_from_slice(&random_u64().to_be_bytes());
    id
}

/// 64 random bits, never zero: std's per-process random hash keys (from the OS) over a counter
/// and the clock. Ids must be unique, not secret.
fn random_u64() -> u64 {
    static KEYS: OnceLock<std::collections::hash_map::RandomState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let mut h = KEYS.get_or_init(Default::default).build_hasher();
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_u64(now_ns());
        let n = h.finish();
        if n != 0 {
            return n;
        }
    }
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn spans_are_recorded_with_their_parent_kind_status_events_and_links() {
        let recorder = Arc::new(Recorder::default());
        let dispatch = tracing::Dispatch::from(recorder.clone());
        tracing::dispatcher::with_default(&dispatch, || {
            let root = tracing::info_span!(target: "mcpwire::command", "mcpwire", otel.name = "mcpwire call");
            let other = tracing::info_span!(target: "mcpwire::connection", "conn");
            assert!(tracing::Span::current().is_none());
            let _in = root.enter();
            // The current span is the one entered (the Manager's supervisors run in it).
            assert_eq!(tracing::Span::current().id(), root.id());
            let call = tracing::info_span!(
                target: "mcpwire::call",
                "mcp.client",
                otel.name = tracing::field::Empty,
                otel.kind = "client",
                error.type = tracing::field::Empty,
                n = 7u64,
            );
            call.follows_from(&other);
            call.record("otel.name", "tools/call add");
            let tp = call.in_scope(|| recorder.traceparent()).unwrap();
            assert!(tp.0.starts_with("00-") && tp.0.ends_with("-01"), "{tp:?}");
            assert_eq!(tp.1, "tools/call add");
            tracing::info!(target: "mcpwire::call", parent: &call, progress = 1.0, "mcp progress");
            call.record("error.type", "timeout");
            // Not ours: not recorded.
            tracing::info!(target: "other", parent: &call, "elsewhere");
            drop(call);
            let (spans, dropped) = recorder.take();
            assert_eq!(dropped, 0);
            // The call ended; the root and the connection are still open (ended now).
            assert_eq!(spans.len(), 3);
            let call = &spans[0];
            let root = spans.iter().find(|s| s.name == "mcpwire call").unwrap();
            let conn = spans.iter().find(|s| s.name == "conn").unwrap();
            assert_eq!(call.name, "tools/call add");
            assert_eq!((call.kind, root.kind), (3, 1));
            assert_eq!(call.trace_id, root.trace_id);
            assert_eq!(call.parent, Some(root.span_id));
            assert_eq!(
                tp.0,
                format!("00-{}-{}-01", hex(&call.trace_id), hex(&call.span_id))
            );
            assert_eq!(call.links, [(conn.trace_id, conn.span_id)]);
            assert_eq!(call.status.0, 2);
            assert!(call.attributes.contains(&("n".into(), Value::Int(7))));
            assert!(call
                .attributes
                .contains(&("error.type".into(), Value::Str("timeout".into()))));
            assert_eq!(call.events.len(), 1);
            assert_eq!(call.events[0].name, "mcp progress");
            assert!(call.end >= call.start);
        });
    }
}
