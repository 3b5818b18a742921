//! The handshake's words: implementations, capabilities, roots, `initialize`'s params and result.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An implementation's name and version (`clientInfo`, `serverInfo`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Implementation {
    /// mcpwire's own identity.
    pub fn mcpwire() -> Self {
        Implementation {
            name: "mcpwire".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            title: None,
            extra: Map::new(),
        }
    }
}

/// What a client offers: `roots`, `sampling`, `elicitation` and others, kept as JSON objects.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ClientCapabilities {
    /// `roots` (with `listChanged` in the handshake era).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<Value>,
    /// `sampling`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Value>,
    /// `elicitation` (`{}` means form only; `{"form":{},"url":{}}` both modes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<Value>,
    /// Other capabilities.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ClientCapabilities {
    /// Declares elicitation: form mode, and url mode too when `url` is set. Declare only what
    /// the application answers: a server request for anything undeclared is refused.
    pub fn with_elicitation(mut self, url: bool) -> Self {
        self.elicitation = Some(if url {
            serde_json::json!({"form": {}, "url": {}})
        } else {
            serde_json::json!({"form": {}})
        });
        self
    }

    /// Declares sampling (`sampling/createMessage`).
    pub fn with_sampling(mut self) -> Self {
        self.sampling = Some(Value::Object(Map::new()));
        self
    }

    /// Declares roots (`roots/list`), with `listChanged` in the handshake era: the host
    /// announces a change with [`Connection::roots_changed`](crate::Connection::roots_changed).
    pub fn with_roots(mut self) -> Self {
        self.roots = Some(serde_json::json!({"listChanged": true}));
        self
    }

    /// Whether nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.roots.is_none()
            && self.sampling.is_none()
            && self.elicitation.is_none()
            && self.extra.is_empty()
    }

    /// These capabilities and `other`'s together (objects merged member by member).
    pub fn union(&self, other: &ClientCapabilities) -> ClientCapabilities {
        let mut mine = serde_json::to_value(self).unwrap_or_else(|_| Value::Object(Map::new()));
        let theirs = serde_json::to_value(other).unwrap_or_else(|_| Value::Object(Map::new()));
        merge(&mut mine, theirs);
        serde_json::from_value(mine).unwrap_or_default()
    }

    /// Whether these capabilities cover `required` (a `ClientCapabilities` object as a server
    /// names it in `-32021`'s `data.requiredCapabilities`): every member it names, at every
    /// depth, is declared here.
    pub fn covers(&self, required: &Value) -> bool {
        let mine = serde_json::to_value(self).unwrap_or_else(|_| Value::Object(Map::new()));
        covers(&mine, required)
    }
}

/// Merges `from` into `into`: objects member by member, anything else replaced.
fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(into), Value::Object(from)) => {
            for (k, v) in from {
                match into.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        into.insert(k, v);
                    }
                }
            }
        }
        (into, from) => *into = from,
    }
}

/// Whether `have` declares every member `need` names (objects compared member by member; any
/// other value needs only to be present).
fn covers(have: &Value, need: &Value) -> bool {
    match need {
        Value::Object(need) => need.iter().all(|(k, v)| match have.get(k) {
            Some(h) => covers(h, v),
            None => false,
        }),
        _ => true,
    }
}

/// A root the host exposes to servers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `_meta`, sent as given.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The answer to `roots/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
}

/// What a server offers.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ServerCapabilities {
    /// `tools` (`listChanged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Value>,
    /// `prompts` (`listChanged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<Value>,
    /// `resources` (`subscribe`, `listChanged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Value>,
    /// `logging`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Value>,
    /// `completions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Value>,
    /// Other capabilities.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `initialize` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The version the client offers.
    pub protocol_version: String,
    /// What the client offers.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
}

/// `initialize` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The version the server chose.
    pub protocol_version: String,
    /// What the server offers.
    #[serde(default)]
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    #[serde(default)]
    pub server_info: Implementation,
    /// Instructions for the model, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
