//! Tools, their list, and `tools/call`'s params and result.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::jsonrpc::RawJson;

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
