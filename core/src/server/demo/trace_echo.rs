//! The demo server shows the trace context a request carried: a result answering a request
//! whose `params._meta` held a `traceparent` carries that `traceparent` in its own `_meta`, so
//! that tests and people see what the client sent.

use serde_json::{Map, Value};

use super::DemoServer;
use crate::jsonrpc::{Id, Message, RawJson};

/// How many requests' trace contexts are held at once (a request never answered, cancelled
/// say, leaves its entry until the next answer to it; past this, no more are held).
const MAX_HELD: usize = 1024;

impl DemoServer {
    /// Keeps the `traceparent` of request `id`'s `params`, if it has one.
    pub(super) fn hold_trace(&mut self, id: &Id, params: &Value) {
        let Some(tp) = params.pointer("/_meta/traceparent") else {
            return;
        };
        if self.traces.len() < MAX_HELD {
            self.traces.insert(id.clone(), tp.clone());
        }
    }

    /// Adds to a response's result the `traceparent` its request carried.
    pub(super) fn echo_trace(&mut self, m: &mut Message) {
        let Message::Response(r) = m else { return };
        let Some(tp) = r.id.as_ref().and_then(|id| self.traces.remove(id)) else {
            return;
        };
        let Ok(result) = &r.outcome else { return };
        let Ok(Value::Object(mut result)) = serde_json::from_str::<Value>(result.get()) else {
            return;
        };
        let meta = result
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert("traceparent".into(), tp);
        }
        if let Ok(raw) = RawJson::new(&result) {
            r.outcome = Ok(raw);
        }
    }
}
