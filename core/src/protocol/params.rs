//! The params of our requests: the caller's members, the stateless era's `_meta` (protocol
//! version, capabilities, identity, progress token), and raw members echoed byte for byte.

use serde::ser::SerializeMap;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::types::{ClientCapabilities, Implementation, LATEST_VERSION};
use crate::jsonrpc::RawJson;

/// `_meta` keys of the stateless era.
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub(crate) const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";

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
        let extensions = caps
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(extensions) = extensions {
            extensions.insert(super::tasks::EXTENSION.into(), Value::Object(Map::new()));
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
/// `_meta` (ours in the stateless era, merged over the caller's, and the progress token when
/// asked for), then `raw` members.
pub(crate) fn encode(
    params: Option<&Map<String, Value>>,
    stateless_meta: Option<&StatelessMeta>,
    progress_token: Option<i64>,
    raw_members: &[(&str, &RawValue)],
) -> Option<RawJson> {
    let theirs = match params.and_then(|p| p.get("_meta")) {
        Some(Value::Object(theirs)) => Some(theirs),
        _ => None,
    };
    let meta = match (stateless_meta, theirs, progress_token) {
        // The common case: ours alone, serialized once per connection.
        (Some(ours), None, None) => Some(Meta::Raw(&ours.raw)),
        (Some(ours), _, _) => {
            let mut meta = ours.map.clone();
            for (k, v) in theirs.into_iter().flatten() {
                meta.entry(k.clone()).or_insert_with(|| v.clone());
            }
            if let Some(token) = progress_token {
                meta.insert("progressToken".into(), Value::from(token));
            }
            Some(Meta::Map(meta))
        }
        (None, _, Some(token)) => {
            let mut meta = theirs.cloned().unwrap_or_default();
            meta.insert("progressToken".into(), Value::from(token));
            Some(Meta::Map(meta))
        }
        (None, _, None) => None,
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

/// The `_meta` a request carries.
enum Meta<'a> {
    /// The connection's, serialized once.
    Raw(&'a RawValue),
    /// Merged for this request.
    Map(Map<String, Value>),
}

/// Params as sent: the caller's members, our `_meta`, and raw members echoed byte for byte.
struct Params<'a> {
    base: Option<&'a Map<String, Value>>,
    meta: Option<Meta<'a>>,
    raw: &'a [(&'a str, &'a RawValue)],
}

impl serde::Serialize for Params<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(base) = self.base {
            for (k, v) in base {
                if !(k == "_meta" && self.meta.is_some()) {
                    m.serialize_entry(k, v)?;
                }
            }
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
