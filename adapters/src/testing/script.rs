//! What a scripted server offers: its tools, prompts, resources, templates, completions and
//! the methods it fails, each answered by a closure of the test's.

use std::collections::HashMap;
use std::sync::Arc;

use mcpwire_core::jsonrpc::ErrorObject;
use serde_json::{json, Map, Value};

use super::call::{Boxed, ToolCall};

/// Which era a scripted server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServerEra {
    /// The stateless era (2026-07-28): `server/discover`, each request on its own `_meta`,
    /// questions to the client as `input_required` rounds, `list_changed` through
    /// `subscriptions/listen`.
    #[default]
    Stateless,
    /// The handshake era (`initialize`, up to 2025-11-25): a stateless-era request (the
    /// client's era probe included) is answered `-32601`, as an older server answers it;
    /// questions to the client are requests of the server's.
    Handshake,
}

/// A tool's result: its content, `structuredContent`, `isError`.
///
/// ```
/// use mcpwire::testing::ToolResult;
/// use serde_json::json;
///
/// let sum = ToolResult::text("42").structured(json!({"sum": 42}));
/// let failed = ToolResult::error("the disk is full");
/// # let _ = (sum, failed);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolResult(Map<String, Value>);

impl ToolResult {
    /// A result of one text block.
    pub fn text(text: &str) -> Self {
        let mut m = Map::new();
        m.insert("content".into(), json!([{"type": "text", "text": text}]));
        ToolResult(m)
    }

    /// A failed tool (`isError: true`) with one text block saying why: the call succeeds at
    /// the protocol level, the tool did not.
    pub fn error(text: &str) -> Self {
        let mut r = Self::text(text);
        r.0.insert("isError".into(), Value::Bool(true));
        r
    }

    /// Any result object, as it is written (`{"content": […], …}`); a non-object is kept as
    /// `structuredContent`.
    pub fn json(value: Value) -> Self {
        match value {
            Value::Object(m) => ToolResult(m),
            other => ToolResult::default().structured(other),
        }
    }

    /// With `structuredContent`.
    pub fn structured(mut self, value: Value) -> Self {
        self.0.insert("structuredContent".into(), value);
        self.0.entry("content").or_insert_with(|| json!([]));
        self
    }

    /// The result object.
    pub fn into_map(self) -> Map<String, Value> {
        let mut m = self.0;
        m.entry("content").or_insert_with(|| json!([]));
        m
    }
}

pub(super) type ToolFn =
    Arc<dyn Fn(ToolCall) -> Boxed<Result<ToolResult, ErrorObject>> + Send + Sync>;
pub(super) type PromptFn = Arc<dyn Fn(Value) -> Result<Value, ErrorObject> + Send + Sync>;
pub(super) type ReadFn = Arc<dyn Fn(&str) -> Result<String, ErrorObject> + Send + Sync>;
pub(super) type CompleteFn = Arc<dyn Fn(&Value, &Value) -> Vec<String> + Send + Sync>;

/// A resource or a template, and how it is read.
#[derive(Clone)]
pub(super) struct Readable {
    pub(super) definition: Value,
    pub(super) read: ReadFn,
}

/// Everything a scripted server offers.
#[derive(Clone)]
pub(super) struct Script {
    pub(super) name: String,
    pub(super) tools: Vec<(Value, ToolFn)>,
    pub(super) prompts: Vec<(Value, PromptFn)>,
    pub(super) resources: Vec<Readable>,
    pub(super) templates: Vec<Readable>,
    pub(super) completion: Option<CompleteFn>,
    /// Methods answered with an error whatever their params.
    pub(super) failures: HashMap<String, ErrorObject>,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            name: "scripted".into(),
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            completion: None,
            failures: HashMap::new(),
        }
    }
}

fn name_of(definition: &Value) -> &str {
    definition.get("name").and_then(Value::as_str).unwrap_or("")
}

impl Script {
    pub(super) fn capabilities(&self) -> Value {
        let mut c = json!({"tools": {"listChanged": true}, "prompts": {"listChanged": true},
                           "resources": {"listChanged": true}, "logging": {}});
        if self.completion.is_some() {
            c["completions"] = json!({});
        }
        c
    }

    /// Adds `definition` (a tool object with a `name`), replacing a tool of the same name.
    pub(super) fn add_tool(&mut self, definition: Value, f: ToolFn) {
        let name = name_of(&definition).to_owned();
        self.tools.retain(|(d, _)| name_of(d) != name);
        self.tools.push((definition, f));
    }

    pub(super) fn tool_list(&self) -> Vec<Value> {
        self.tools.iter().map(|(d, _)| d.clone()).collect()
    }

    pub(super) fn tool(&self, name: &str) -> Option<ToolFn> {
        let found = self.tools.iter().find(|(d, _)| name_of(d) == name);
        found.map(|(_, f)| f.clone())
    }

    pub(super) fn prompt_list(&self) -> Vec<Value> {
        self.prompts.iter().map(|(d, _)| d.clone()).collect()
    }

    pub(super) fn prompt(&self, name: &str) -> Option<PromptFn> {
        let found = self.prompts.iter().find(|(d, _)| name_of(d) == name);
        found.map(|(_, f)| f.clone())
    }

    pub(super) fn resource_list(&self) -> Vec<Value> {
        self.resources
            .iter()
            .map(|r| r.definition.clone())
            .collect()
    }

    pub(super) fn template_list(&self) -> Vec<Value> {
        self.templates
            .iter()
            .map(|r| r.definition.clone())
            .collect()
    }

    /// How `uri` is read, and its MIME type: a resource of that URI, else the first template
    /// whose text before its first `{` starts the URI.
    pub(super) fn reader(&self, uri: &str) -> Option<(ReadFn, String)> {
        let mime = |r: &Readable| {
            let m = r.definition.get("mimeType").and_then(Value::as_str);
            m.unwrap_or("text/plain").to_owned()
        };
        let exact = self
            .resources
            .iter()
            .find(|r| r.definition.get("uri").and_then(Value::as_str) == Some(uri));
        let templated = || {
            self.templates.iter().find(|r| {
                let t = r.definition.get("uriTemplate").and_then(Value::as_str);
                let prefix = t.unwrap_or("").split('{').next().unwrap_or("");
                !prefix.is_empty() && uri.starts_with(prefix)
            })
        };
        exact.or_else(templated).map(|r| (r.read.clone(), mime(r)))
    }
}
