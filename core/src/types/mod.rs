//! The MCP messages a client sends and reads, as typed views over raw JSON.
//!
//! Every result type keeps the members this version does not know in `extra`, so nothing a server
//! sends is lost or rejected. Open-ended parts (schemas, content blocks, capabilities' inner
//! objects) stay `serde_json::Value`: they are the application's to read.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::jsonrpc::RawJson;

mod more;
mod sampling;
pub use more::*;
pub use sampling::{text_block, CreateMessageParams, CreateMessageResult, Role, SamplingMessage};

/// MCP's own JSON-RPC error codes (2026-07-28), beside JSON-RPC's
/// ([`jsonrpc::codes`](crate::jsonrpc::codes)). Each one proves a server speaks the stateless era.
pub mod codes {
    /// A request's `Mcp-*` headers disagree with its body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// The server needs a client capability the request did not declare.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// The server does not speak the request's protocol version.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// The tasks extension's id (2026-07-28: tasks moved from a capability to an extension).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The requests that read and change nothing, which a connection may send once more by itself
/// when one is lost after it may have reached the server.
pub(crate) const REPEATABLE_READS: [&str; 8] = [
    "ping",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/get",
    "completion/complete",
];

/// Whether a request of `method` only reads: those above, every other `…/list`, the start's
/// (`initialize`, `server/discover`), and reading a task or a skill. One that timed out changed
/// nothing.
pub(crate) fn only_reads(method: &str) -> bool {
    const OTHER_READS: [&str; 5] = [
        "initialize",
        "server/discover",
        "tasks/get",
        "tasks/result",
        "skills/get",
    ];
    method.ends_with("/list") || REPEATABLE_READS.contains(&method) || OTHER_READS.contains(&method)
}

/// The latest protocol version: the stateless era.
pub const LATEST_VERSION: &str = "2026-07-28";
/// The latest handshake-era version, offered in `initialize`.
pub const LATEST_HANDSHAKE_VERSION: &str = "2025-11-25";
/// The levels of `LoggingLevel`, from the least to the most severe.
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The stateless-era versions this client speaks, the newest first.
pub const STATELESS_VERSIONS: [&str; 1] = [LATEST_VERSION];
/// Handshake-era versions this client accepts in an `initialize` answer, newest first.
pub const HANDSHAKE_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Whether `version` is a handshake-era version this client speaks.
pub fn is_handshake_version(version: &str) -> bool {
    HANDSHAKE_VERSIONS.contains(&version)
}

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

/// A tool the server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Its name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of its arguments, exactly as the server sent it (every keyword, key order
    /// and number kept; `$ref`s are never resolved). [`Tool::input_schema_value`] parses it.
    #[serde(default = "empty_object")]
    pub input_schema: RawJson,
    /// JSON Schema of its structured output, exactly as the server sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<RawJson>,
    /// Hints (untrusted unless the server is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Icons to show for it, exactly as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<RawJson>,
    /// `_meta`, exactly as sent (an MCP App's `ui` lives here: [`Tool::ui`]).
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<RawJson>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn empty_object() -> RawJson {
    RawJson::from_string("{}".into()).expect("valid JSON")
}

impl Tool {
    /// The input schema as a JSON value (an empty object when it is not JSON of that kind).
    pub fn input_schema_value(&self) -> Value {
        self.input_schema
            .parse()
            .unwrap_or_else(|_| Value::Object(Map::new()))
    }

    /// The output schema as a JSON value, when the tool has one.
    pub fn output_schema_value(&self) -> Option<Value> {
        self.output_schema.as_ref().and_then(|s| s.parse().ok())
    }
}

/// One page of `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// The tools on this page.
    pub tools: Vec<Tool>,
    /// The cursor of the next page; absent at the end (an empty string is a cursor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Other members (`ttlMs`, `cacheScope`, `_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `tools/call` params (without `_meta`, which the protocol layer adds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallToolParams {
    /// The tool.
    pub name: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

/// The result of `tools/call`. An `isError` result is a result: the tool ran and failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Content blocks (text, image, audio, resource links, embedded resources).
    #[serde(default)]
    pub content: Vec<Value>,
    /// Structured output: any JSON value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool reports failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Read by hand rather than derived: a derived `flatten` buffers every member before sorting
/// them out (allocations for each key and value of every result); here the known members are
/// read in place and only the others are kept, their keys borrowed until then.
impl<'de> Deserialize<'de> for CallToolResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CallToolResult;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a tools/call result (an object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CallToolResult, A::Error> {
                let (mut content, mut structured, mut is_error) = (None, None, None);
                let mut extra = Map::new();
                while let Some(key) = map.next_key::<crate::jsonrpc::StrRef<'de>>()? {
                    match key.0.as_ref() {
                        "content" if content.is_none() => content = Some(map.next_value()?),
                        "structuredContent" if structured.is_none() => {
                            structured = Some(map.next_value::<Option<Value>>()?)
                        }
                        "isError" if is_error.is_none() => is_error = Some(map.next_value()?),
                        "content" | "structuredContent" | "isError" => {
                            return Err(A::Error::custom(format_args!(
                                "duplicate field `{}`",
                                key.0
                            )))
                        }
                        _ => {
                            let value = map.next_value()?;
                            extra.insert(key.0.into_owned(), value);
                        }
                    }
                }
                Ok(CallToolResult {
                    content: content.unwrap_or_default(),
                    structured_content: structured.flatten(),
                    is_error: is_error.unwrap_or_default(),
                    extra,
                })
            }
        }
        d.deserialize_map(V)
    }
}

impl CallToolResult {
    /// The text of the text content blocks, joined with newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect();
        texts.join("\n")
    }
}

/// A prompt the server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// Its name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<Value>>,
    /// Icons to show for it, exactly as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<RawJson>,
    /// `_meta`, exactly as sent.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<RawJson>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One page of `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// The prompts on this page.
    pub prompts: Vec<Prompt>,
    /// The cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The prompt's messages.
    #[serde(default)]
    pub messages: Vec<Value>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A resource the server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type (`text/html;profile=mcp-app` for an MCP App's UI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons to show for it, exactly as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<RawJson>,
    /// `_meta`, exactly as sent.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<RawJson>,
    /// Other members (`annotations`, `size`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One page of `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// The resources on this page.
    pub resources: Vec<Resource>,
    /// The cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A resource template the server offers (RFC 6570 URI template).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// Its URI template, e.g. `file:///{path}`.
    pub uri_template: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of the resources it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons to show for it, exactly as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<RawJson>,
    /// `_meta`, exactly as sent.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<RawJson>,
    /// Other members (`annotations`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The suggestions of a `completion/complete` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values, at most 100.
    #[serde(default)]
    pub values: Vec<String>,
    /// How many values there are in all, when the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more values than these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// One page of `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// The templates on this page.
    pub resource_templates: Vec<ResourceTemplate>,
    /// The cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// The contents (text or blob).
    #[serde(default)]
    pub contents: Vec<Value>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `notifications/progress` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams {
    /// The token of the request this reports on.
    pub progress_token: Value,
    /// Progress so far (increases with each notification).
    pub progress: f64,
    /// The total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `_meta`, when the server sent one.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// `notifications/message` params (a log line from the server).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageParams {
    /// Severity (`debug` … `emergency`).
    pub level: String,
    /// The logger's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The payload.
    #[serde(default)]
    pub data: Value,
    /// `_meta`, when the server sent one.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// The answer to an elicitation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// `accept`, `decline` or `cancel`.
    pub action: ElicitAction,
    /// The user's answers (form mode, on accept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
    /// `_meta`, sent as given.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted.
    Accept,
    /// Said no.
    Decline,
    /// Dismissed.
    Cancel,
}

impl ElicitResult {
    /// A declined elicitation.
    pub fn decline() -> Self {
        ElicitResult {
            meta: None,
            action: ElicitAction::Decline,
            content: None,
        }
    }
}

/// Why [`fill_from_defaults`] could not answer a form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("required fields without a default: {}", missing.join(", "))]
pub struct MissingDefaults {
    /// The required properties that have no default.
    pub missing: Vec<String>,
}

/// Answers an elicitation form from the requested schema's defaults: every property with a
/// `default` takes it; a required property without one is an error naming it.
pub fn fill_from_defaults(requested_schema: &Value) -> Result<Map<String, Value>, MissingDefaults> {
    let mut content = Map::new();
    let mut missing = Vec::new();
    let empty = Map::new();
    let properties = requested_schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, schema) in properties {
        if let Some(default) = schema.get("default") {
            content.insert(name.clone(), default.clone());
        }
    }
    if let Some(required) = requested_schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !content.contains_key(name) {
                missing.push(name.to_owned());
            }
        }
    }
    if missing.is_empty() {
        Ok(content)
    } else {
        Err(MissingDefaults { missing })
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn answers_carry_their_meta_both_ways() {
        let meta: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"trace":"t-1"}"#).unwrap();
        let answer = super::ElicitResult {
            action: super::ElicitAction::Accept,
            content: None,
            meta: Some(meta.clone()),
        };
        let text = serde_json::to_string(&answer).unwrap();
        assert_eq!(text, r#"{"action":"accept","_meta":{"trace":"t-1"}}"#);
        let root: super::Root =
            serde_json::from_str(r#"{"uri":"file:///w","_meta":{"trace":"t-1"}}"#).unwrap();
        assert_eq!(root.meta, Some(meta));
        assert_eq!(
            serde_json::to_string(&root).unwrap(),
            r#"{"uri":"file:///w","_meta":{"trace":"t-1"}}"#
        );
    }

    #[test]
    fn a_tool_s_schemas_are_kept_exactly_as_sent() {
        let schema = r#"{"type":"object","$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"z":{"type":"integer","maximum":123456789012345678901234567890},"a":{"$ref":"https://example.com/never-fetched.json"}},"$defs":{"address":{"$anchor":"addr","type":"object"}},"if":{"required":["z"]},"then":{"required":["a"]},"additionalProperties":false}"#;
        let text = format!(
            r#"{{"tools":[{{"name":"t","inputSchema":{schema},"outputSchema":{schema}}}],"ttlMs":0}}"#
        );
        let list: ListToolsResult = serde_json::from_str(&text).unwrap();
        let tool = &list.tools[0];
        assert_eq!(tool.input_schema.get(), schema);
        assert_eq!(tool.output_schema.as_ref().unwrap().get(), schema);
        // And back out the same.
        let again = serde_json::to_string(&list).unwrap();
        assert!(again.contains(schema), "{again}");
        assert_eq!(tool.input_schema_value()["additionalProperties"], false);
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_fill_every_kind_of_field() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
            "nickname": {"type": "string"}
        }, "required": ["name"]});
        let content = fill_from_defaults(&schema).unwrap();
        assert_eq!(
            Value::Object(content),
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true})
        );
    }

    #[test]
    fn required_field_without_default_is_named() {
        let schema = json!({"properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert_eq!(
            fill_from_defaults(&schema).unwrap_err().missing,
            vec!["a".to_string()]
        );
    }

    #[test]
    fn call_result_keeps_unknown_members_and_any_structured_value() {
        let r: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "a"}, {"type": "image", "data": ""}, {"type": "text", "text": "b"}],
            "structuredContent": [1, 2],
            "isError": true,
            "resultType": "complete"
        }))
        .unwrap();
        assert_eq!(r.text(), "a\nb");
        assert_eq!(r.structured_content, Some(json!([1, 2])));
        assert!(r.is_error);
        assert_eq!(r.extra["resultType"], "complete");
    }

    #[test]
    fn empty_string_cursor_is_a_cursor() {
        let r: ListToolsResult =
            serde_json::from_value(json!({"tools": [], "nextCursor": ""})).unwrap();
        assert_eq!(r.next_cursor.as_deref(), Some(""));
        let r: ListToolsResult = serde_json::from_value(json!({"tools": []})).unwrap();
        assert_eq!(r.next_cursor, None);
    }
}

#[cfg(test)]
mod call_tool_result_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_call_tool_result_reads_its_members_and_keeps_the_others() {
        let text = r#"{"content":[{"type":"text","text":"hi"}],"structuredContent":{"n":1},
            "isError":true,"_meta":{"k":"v"},"caf\u00e9":2,"resultType":"complete"}"#;
        let r: CallToolResult = serde_json::from_str(text).unwrap();
        assert_eq!(r.content, vec![json!({"type": "text", "text": "hi"})]);
        assert_eq!(r.structured_content, Some(json!({"n": 1})));
        assert!(r.is_error);
        assert_eq!(r.extra["_meta"], json!({"k": "v"}));
        assert_eq!(r.extra["café"], 2, "an escaped key is read");
        assert_eq!(r.extra.len(), 3);
        // What it writes reads back the same.
        let again: CallToolResult =
            serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(again, r);
    }

    #[test]
    fn a_call_tool_result_defaults_and_refusals() {
        let r: CallToolResult = serde_json::from_str(r#"{"structuredContent":null}"#).unwrap();
        assert!(r.content.is_empty() && r.structured_content.is_none() && !r.is_error);
        assert!(r.extra.is_empty());
        let dup = serde_json::from_str::<CallToolResult>(r#"{"isError":true,"isError":false}"#);
        assert!(dup
            .unwrap_err()
            .to_string()
            .contains("duplicate field `isError`"));
        assert!(serde_json::from_str::<CallToolResult>(r#"{"content":null}"#).is_err());
        assert!(serde_json::from_str::<CallToolResult>(r#"{"isError":"yes"}"#).is_err());
        assert!(serde_json::from_str::<CallToolResult>("[]").is_err());
    }
}
