//! The params of our requests: the caller's members, the stateless era's `_meta` (protocol
//! version, capabilities, identity, progress token), and raw members echoed byte for byte.

use serde::ser::SerializeMap;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::jsonrpc::RawJson;
use crate::types::{ClientCapabilities, Implementation, LATEST_VERSION};

/// `_meta` keys of the stateless era.
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub(crate) const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// The stateless era's `_meta` for every request: who we are, what we speak and offer.
/// The stateless era's `_meta` of a connection: as a map (to merge a caller's into), and
/// serialized once (what most requests carry unchanged).
#[derive(Debug)]
pub(crate) struct StatelessMeta {
    map: Map<String, Value>,
    raw: Box<RawValue>,
}

impl StatelessMeta {
    /// The `_meta` for `client_info` and `capabilities`.
    pub(crate) fn new(client_info: &Implementation, capabilities: &ClientCapabilities) -> Self {
        let map = stateless_meta(client_info, capabilities);
        let raw = serde_json::value::to_raw_value(&map).expect("protocol values serialize");
        StatelessMeta { map, raw }
    }

    /// The `_meta` members every request of the connection carries.
    pub(crate) fn members(&self) -> &Map<String, Value> {
        &self.map
    }

    /// Asks for log messages at `level` and above on every request from now on
    /// (`io.modelcontextprotocol/logLevel`), or, with `None`, for none.
    pub(crate) fn set_log_level(&mut self, level: Option<&str>) {
        match level {
            Some(level) => self.map.insert(META_LOG_LEVEL.into(), Value::from(level)),
            None => self.map.remove(META_LOG_LEVEL),
        };
        self.raw = serde_json::value::to_raw_value(&self.map).expect("protocol values serialize");
    }

    /// The log level every request asks for, if any.
    pub(crate) fn log_level(&self) -> Option<&str> {
        self.map.get(META_LOG_LEVEL).and_then(Value::as_str)
    }
}

fn stateless_meta(
    client_info: &Implementation,
    capabilities: &ClientCapabilities,
) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(META_VERSION.into(), Value::from(LATEST_VERSION));
    let mut capabilities =
        serde_json::to_value(capabilities).unwrap_or_else(|_| Value::Object(Map::new()));
    // No session to announce a change of roots in: the server asks for them in each round.
    if let Some(Value::Object(roots)) = capabilities.get_mut("roots") {
        roots.remove("listChanged");
    }
    // Calls answered with a task are followed to their end: the extension is declared.
    if let Value::Object(caps) = &mut capabilities {
        // `tasks` (2025-11-25) is about the server's requests, which this era does not have.
        caps.remove("tasks");
        let extensions = caps
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(extensions) = extensions {
            extensions.insert(
                crate::types::TASKS_EXTENSION.into(),
                Value::Object(Map::new()),
            );
        }
    }
    meta.insert(META_CAPABILITIES.into(), capabilities);
    meta.insert(
        META_CLIENT_INFO.into(),
        serde_json::to_value(client_info).unwrap_or(Value::Null),
    );
    meta
}

/// The params of one request, or `None` when it has none: `params` as the caller gave them,
/// `_meta` (ours in the stateless era, merged over the caller's, the progress token when
/// asked for, and the host's `context` entries beneath all of them), then `raw` members.
pub(crate) fn encode(
    params: Option<ParamsRef<'_>>,
    stateless_meta: Option<&StatelessMeta>,
    progress_token: Option<i64>,
    context: Option<&Map<String, Value>>,
    raw_members: &[(&str, &RawValue)],
) -> Option<RawJson> {
    let theirs = params.and_then(ParamsRef::meta);
    let context = context.filter(|c| !c.is_empty());
    let meta = match (stateless_meta, theirs, progress_token, context) {
        // The common case: ours alone, serialized once per connection.
        (Some(ours), None, None, None) => Some(Meta::Raw(&ours.raw)),
        // The caller's `_meta`, if any, goes out as it is, in its place.
        (None, _, None, None) => None,
        (ours, _, _, _) => {
            let mut meta = ours.map(|o| o.map.clone()).unwrap_or_default();
            for (k, v) in theirs.into_iter().flatten() {
                meta.entry(k.clone()).or_insert_with(|| v.clone());
            }
            for (k, v) in context.into_iter().flatten() {
                if !reserved_meta_key(k) {
                    meta.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            if let Some(token) = progress_token {
                meta.insert("progressToken".into(), Value::from(token));
            }
            Some(Meta::Map(meta))
        }
    };
    if params.is_none() && meta.is_none() && raw_members.is_empty() {
        return None;
    }
    Some(raw(&Params {
        base: params,
        meta,
        raw: raw_members,
    }))
}

/// Whether a `_meta` key is the protocol's, which the host's context entries never set: the
/// progress token and the keys the stateless era reserves (`io.modelcontextprotocol/*`).
pub(crate) fn reserved_meta_key(key: &str) -> bool {
    key == "progressToken" || key.starts_with("io.modelcontextprotocol/")
}

/// The `_meta` a request carries.
enum Meta<'a> {
    /// The connection's, serialized once.
    Raw(&'a RawValue),
    /// Merged for this request.
    Map(Map<String, Value>),
}

/// The params of a call as the caller gave them (without our `_meta`), borrowed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ParamsRef<'a> {
    /// Any members.
    Map(&'a Map<String, Value>),
    /// The two members of `tools/call`, kept apart: no map is built for them (a map, its node
    /// and its keys are three allocations a call).
    Tool {
        /// The tool's name.
        name: &'a str,
        /// Its arguments.
        arguments: Option<&'a Value>,
    },
}

impl<'a> ParamsRef<'a> {
    /// The tool a `tools/call` names.
    pub(crate) fn tool(self) -> Option<&'a str> {
        match self {
            ParamsRef::Map(m) => m.get("name")?.as_str(),
            ParamsRef::Tool { name, .. } => Some(name),
        }
    }

    /// The caller's own `_meta`, when it is an object.
    fn meta(self) -> Option<&'a Map<String, Value>> {
        match self {
            ParamsRef::Map(m) => match m.get("_meta") {
                Some(Value::Object(theirs)) => Some(theirs),
                _ => None,
            },
            ParamsRef::Tool { .. } => None,
        }
    }

    /// The members as a map of their own.
    /// A `tools/call`'s arguments, if any.
    #[cfg(feature = "schemas")]
    pub(crate) fn arguments(self) -> Option<&'a Value> {
        match self {
            ParamsRef::Map(m) => m.get("arguments"),
            ParamsRef::Tool { arguments, .. } => arguments,
        }
    }

    pub(crate) fn to_map(self) -> Map<String, Value> {
        match self {
            ParamsRef::Map(m) => m.clone(),
            ParamsRef::Tool { name, arguments } => tool_call_map(name, arguments.cloned()),
        }
    }
}

/// `tools/call`'s params as a map.
pub(crate) fn tool_call_map(name: &str, arguments: Option<Value>) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("name".into(), Value::from(name));
    if let Some(args) = arguments {
        p.insert("arguments".into(), args);
    }
    p
}

/// Params as sent: the caller's members, our `_meta`, and raw members echoed byte for byte.
struct Params<'a> {
    base: Option<ParamsRef<'a>>,
    meta: Option<Meta<'a>>,
    raw: &'a [(&'a str, &'a RawValue)],
}

impl serde::Serialize for Params<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match self.base {
            Some(ParamsRef::Map(base)) => {
                for (k, v) in base {
                    if !(k == "_meta" && self.meta.is_some()) {
                        m.serialize_entry(k, v)?;
                    }
                }
            }
            // In a map's order (its keys sorted), so the bytes are the same either way.
            Some(ParamsRef::Tool { name, arguments }) => {
                if let Some(arguments) = arguments {
                    m.serialize_entry("arguments", arguments)?;
                }
                m.serialize_entry("name", name)?;
            }
            None => {}
        }
        match &self.meta {
            Some(Meta::Raw(meta)) => m.serialize_entry("_meta", meta)?,
            Some(Meta::Map(meta)) => m.serialize_entry("_meta", meta)?,
            None => {}
        }
        for (k, v) in self.raw {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Serializes a value we built; our own types always serialize.
pub(crate) fn raw<T: serde::Serialize + ?Sized>(value: &T) -> RawJson {
    RawJson::new(value).expect("protocol values serialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::protocol::vocabulary::calls::McpCall;
    use serde_json::json;

    /// A tool call's params, kept apart, go out as the same bytes as the map they stand for,
    /// with and without `_meta` and arguments; and the call still shows them as that map.
    #[test]
    fn a_tool_calls_params_are_the_bytes_of_their_map() {
        let meta = StatelessMeta::new(
            &Implementation {
                name: "t".into(),
                version: "1".into(),
                ..Default::default()
            },
            &ClientCapabilities::default(),
        );
        for arguments in [Some(json!({"b": [1, "x"], "a": null})), None] {
            let call = McpCall::call_tool("echo", arguments.clone());
            let map = tool_call_map("echo", arguments);
            assert_eq!(call.params().as_deref(), Some(&map));
            for (meta, token) in [(None, None), (Some(&meta), None), (Some(&meta), Some(7))] {
                let apart = encode(call.params_ref(), meta, token, None, &[]).unwrap();
                let whole = encode(Some(ParamsRef::Map(&map)), meta, token, None, &[]).unwrap();
                assert_eq!(apart.get(), whole.get());
            }
        }
        let (_, parts) = McpCall::call_tool("echo", None).into_parts();
        assert_eq!(parts, Some(tool_call_map("echo", None)));
        // However it was built, the same call is equal.
        let by_hand = McpCall::request("tools/call", Some(tool_call_map("echo", None)));
        assert_eq!(by_hand.params(), McpCall::call_tool("echo", None).params());
        assert_ne!(
            McpCall::call_tool("echo", None).params(),
            McpCall::call_tool("other", None).params()
        );
    }

    fn meta_of(raw: RawJson) -> Value {
        serde_json::from_str::<Value>(raw.get()).unwrap()["_meta"].clone()
    }

    fn context() -> Map<String, Value> {
        let Value::Object(m) = json!({
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "tracestate": "from=context",
            "progressToken": "context-token",
            "io.modelcontextprotocol/protocolVersion": "1999-01-01",
            "io.modelcontextprotocol/anything": "context",
        }) else {
            unreachable!()
        };
        m
    }

    /// The host's context entries go beneath the call's own `_meta` (which wins), never set
    /// the progress token nor a key the protocol reserves, in either era.
    #[test]
    fn context_entries_go_beneath_the_calls_own_and_never_over_reserved_keys() {
        let ours = StatelessMeta::new(&Implementation::default(), &ClientCapabilities::default());
        let Value::Object(params) = json!({"name": "t", "_meta": {"tracestate": "from=call"}})
        else {
            unreachable!()
        };
        let context = context();
        for stateless in [None, Some(&ours)] {
            for token in [None, Some(7)] {
                let p = Some(ParamsRef::Map(&params));
                let meta = meta_of(encode(p, stateless, token, Some(&context), &[]).unwrap());
                let why = format!("stateless: {}, token: {token:?}", stateless.is_some());
                assert_eq!(meta["traceparent"], context["traceparent"], "{why}");
                assert_eq!(meta["tracestate"], "from=call", "{why}");
                assert_eq!(meta.get("io.modelcontextprotocol/anything"), None, "{why}");
                match token {
                    Some(t) => assert_eq!(meta["progressToken"], t, "{why}"),
                    None => assert_eq!(meta.get("progressToken"), None, "{why}"),
                }
                match stateless {
                    Some(_) => assert_eq!(meta[META_VERSION], LATEST_VERSION, "{why}"),
                    None => assert_eq!(meta.get(META_VERSION), None, "{why}"),
                }
            }
        }
        // A tool call (no `_meta` of its own) and a request without params get them too.
        let call = McpCall::call_tool("echo", None);
        let meta = meta_of(encode(call.params_ref(), None, None, Some(&context), &[]).unwrap());
        assert_eq!(meta["tracestate"], "from=context");
        let meta = meta_of(encode(None, Some(&ours), None, Some(&context), &[]).unwrap());
        assert_eq!(meta["traceparent"], context["traceparent"]);
        assert_eq!(meta[META_VERSION], LATEST_VERSION);
        // No context (or an empty one): the bytes of before, `_meta` shared or absent.
        let empty = Map::new();
        for c in [None, Some(&empty)] {
            assert!(encode(None, None, None, c, &[]).is_none());
            let raw = encode(None, Some(&ours), None, c, &[]).unwrap();
            assert_eq!(meta_of(raw), Value::Object(ours.members().clone()));
        }
    }
}
