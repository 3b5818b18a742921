//! Tool parameters mirrored into HTTP headers (`x-mcp-header`, 2026-07-28, SEP-2243).
//!
//! A tool's `inputSchema` may mark a property with `"x-mcp-header": "Name"`: a call then sends
//! that argument's value as the header `Mcp-Param-Name`. Over HTTP a client must honour the
//! marks, and must drop from its list any tool whose marks break the rules: a name that is
//! empty, not an RFC 9110 token, or not unique (case-insensitively) within the tool; a mark on
//! a property that is not a string, an integer or a boolean; or a mark that cannot be reached
//! through `properties` alone (under `items`, `anyOf`, `$ref`…).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::jsonrpc::RawJson;

const MARK: &str = "x-mcp-header";

/// One header a tool's calls carry: `Mcp-Param-{name}`, from the argument at `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    pub(crate) name: String,
    /// Property names from the arguments' root to the value.
    pub(crate) path: Vec<String>,
}

/// The headers of the listed tools, by tool name.
#[derive(Debug, Default, Clone)]
pub(crate) struct ToolHeaders {
    by_tool: HashMap<String, Vec<ParamHeader>>,
}

/// What checking a `tools/list` result gave.
#[derive(Debug, Default)]
pub(crate) struct Checked {
    pub(crate) headers: ToolHeaders,
    /// The tools dropped, each with why.
    pub(crate) dropped: Vec<(String, String)>,
}

/// Checks each tool of a complete `tools/list` result, keeping each kept tool's JSON exactly
/// as the server sent it. Returns the list without the tools whose marks break the rules (or
/// `None` when every tool was kept), and what was found.
pub(crate) fn check_tools(list: &RawJson) -> (Option<RawJson>, Checked) {
    #[derive(Deserialize, Serialize)]
    struct Whole {
        tools: Vec<Box<RawValue>>,
        #[serde(flatten)]
        rest: Map<String, Value>,
    }
    let mut checked = Checked::default();
    let Ok(whole) = list.parse::<Whole>() else {
        return (None, checked);
    };
    let mut kept = Vec::with_capacity(whole.tools.len());
    for tool in whole.tools {
        let parsed: Value = serde_json::from_str(tool.get()).unwrap_or(Value::Null);
        let name = parsed
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        match marks_of(parsed.get("inputSchema").unwrap_or(&Value::Null)) {
            Ok(headers) => {
                if !headers.is_empty() {
                    checked.headers.by_tool.insert(name, headers);
                }
                kept.push(tool);
            }
            Err(why) => checked.dropped.push((name, why)),
        }
    }
    if checked.dropped.is_empty() {
        return (None, checked);
    }
    let whole = Whole {
        tools: kept,
        rest: whole.rest,
    };
    (RawJson::new(&whole).ok(), checked)
}

/// The valid marks of one input schema, or why they break the rules.
fn marks_of(schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    let mut path = Vec::new();
    walk(schema, &mut path, &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for h in &found {
        let lower = h.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!("x-mcp-header {:?} is used twice", h.name));
        }
        seen.push(lower);
    }
    Ok(found)
}

/// Where a schema node sits: reached through `properties` alone, or not.
fn walk(node: &Value, path: &mut Vec<String>, found: &mut Vec<ParamHeader>) -> Result<(), String> {
    let Value::Object(map) = node else {
        if let Value::Array(items) = node {
            for item in items {
                walk_unreachable(item)?;
            }
        }
        return Ok(());
    };
    if let Some(mark) = map.get(MARK) {
        if path.is_empty() {
            return Err("x-mcp-header on the schema's root".into());
        }
        found.push(ParamHeader {
            name: valid_name(mark)?,
            path: path.clone(),
        });
        primitive(map, mark)?;
    }
    for (key, value) in map {
        match key.as_str() {
            "properties" => {
                let Value::Object(props) = value else {
                    continue;
                };
                for (prop, schema) in props {
                    path.push(prop.clone());
                    walk(schema, path, found)?;
                    path.pop();
                }
            }
            MARK => {}
            _ => walk_unreachable(value)?,
        }
    }
    Ok(())
}

/// A part of a schema not reached through `properties` alone: no mark may sit in it.
fn walk_unreachable(node: &Value) -> Result<(), String> {
    match node {
        Value::Object(map) => {
            if map.contains_key(MARK) {
                return Err(
                    "x-mcp-header where it cannot be reached through properties alone".into(),
                );
            }
            map.values().try_for_each(walk_unreachable)
        }
        Value::Array(items) => items.iter().try_for_each(walk_unreachable),
        _ => Ok(()),
    }
}

/// A mark's header name, if it is a non-empty RFC 9110 token.
fn valid_name(mark: &Value) -> Result<String, String> {
    let Some(name) = mark.as_str() else {
        return Err(format!("x-mcp-header {mark} is not a string"));
    };
    if name.is_empty() || !name.bytes().all(crate::header::is_token_byte) {
        return Err(format!("x-mcp-header {name:?} is not a header name token"));
    }
    Ok(name.to_owned())
}

/// Whether the marked property is a string, an integer or a boolean.
fn primitive(property: &Map<String, Value>, mark: &Value) -> Result<(), String> {
    match property.get("type").and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => Ok(()),
        other => Err(format!(
            "x-mcp-header {mark} is on a property of type {}, not a string, integer or boolean",
            other.unwrap_or("(none)")
        )),
    }
}

/// A header value as the spec asks: as it is when it is safe plain ASCII (printable, no
/// leading or trailing space, not already looking like the sentinel), otherwise
/// `=?base64?{base64 of its UTF-8}?=`.
pub(crate) fn header_value(value: &str) -> String {
    let printable = value.bytes().all(|b| (0x20..0x7f).contains(&b));
    let trimmed = !value.starts_with(' ') && !value.ends_with(' ');
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    if printable && trimmed && !sentinel {
        return value.to_owned();
    }
    format!("=?base64?{}?=", base64(value.as_bytes()))
}

/// Standard base64 (RFC 4648, with padding).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

impl ToolHeaders {
    /// The `Mcp-Param-*` headers of a call of `tool` with `arguments` (a value that is null or
    /// absent sends no header).
    pub(crate) fn for_call(&self, tool: &str, arguments: Option<&Value>) -> Vec<(String, String)> {
        let Some(marks) = self.by_tool.get(tool) else {
            return Vec::new();
        };
        marks
            .iter()
            .filter_map(|h| {
                let mut v = arguments?;
                for key in &h.path {
                    v = v.get(key)?;
                }
                let text = match v {
                    Value::String(s) => header_value(s),
                    Value::Bool(b) => b.to_string(),
                    Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
                    _ => return None,
                };
                Some((format!("Mcp-Param-{}", h.name), text))
            })
            .collect()
    }

    /// Whether `tool` has marks.
    pub(crate) fn has(&self, tool: &str) -> bool {
        self.by_tool.contains_key(tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, properties: Value) -> Value {
        json!({"name": name, "inputSchema": {"type": "object", "properties": properties}})
    }

    #[test]
    fn base64_matches_the_rfc_vectors() {
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in vectors {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain:?}");
        }
    }

    #[test]
    fn unsafe_values_go_as_base64() {
        assert_eq!(header_value("get_weather"), "get_weather");
        assert_eq!(header_value("a b"), "a b");
        assert_eq!(header_value("café"), "=?base64?Y2Fmw6k=?=");
        assert_eq!(header_value(" lead"), "=?base64?IGxlYWQ=?=");
        assert_eq!(header_value("trail "), "=?base64?dHJhaWwg?=");
        assert_eq!(header_value("a\nb"), "=?base64?YQpi?=");
        assert_eq!(header_value("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
    }

    #[test]
    fn invalid_marks_drop_their_tool_and_valid_ones_give_headers() {
        let list = json!({"tools": [
            tool("valid_tool", json!({"region": {"type": "string", "x-mcp-header": "Region"}})),
            tool("empty", json!({"a": {"type": "string", "x-mcp-header": ""}})),
            tool("space", json!({"a": {"type": "string", "x-mcp-header": "My Header"}})),
            tool("colon", json!({"a": {"type": "string", "x-mcp-header": "A:B"}})),
            tool("non_ascii", json!({"a": {"type": "string", "x-mcp-header": "Régión"}})),
            tool("control", json!({"a": {"type": "string", "x-mcp-header": "A\nB"}})),
            tool("object", json!({"a": {"type": "object", "x-mcp-header": "A"}})),
            tool("array", json!({"a": {"type": "array", "x-mcp-header": "A"}})),
            tool("number", json!({"a": {"type": "number", "x-mcp-header": "A"}})),
            tool("null", json!({"a": {"type": "null", "x-mcp-header": "A"}})),
            tool("twice", json!({"a": {"type": "string", "x-mcp-header": "Dup"},
                                 "b": {"type": "string", "x-mcp-header": "dup"}})),
            tool("in_items", json!({"a": {"type": "array", "items":
                {"type": "string", "x-mcp-header": "A"}}})),
            tool("in_any_of", json!({"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}})),
            tool("plain", json!({"q": {"type": "string"}})),
        ]});
        let (rewritten, checked) = check_tools(&RawJson::new(&list).unwrap());
        let list: Value = rewritten.unwrap().parse().unwrap();
        let kept: Vec<&str> = list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(kept, ["valid_tool", "plain"]);
        assert_eq!(checked.dropped.len(), 12, "{:?}", checked.dropped);
        let args = json!({"region": "us-west1"});
        assert_eq!(
            checked.headers.for_call("valid_tool", Some(&args)),
            [("Mcp-Param-Region".to_string(), "us-west1".to_string())]
        );
    }

    #[test]
    fn values_are_encoded_and_null_or_absent_is_omitted() {
        let list = json!({"tools": [tool("t", json!({
            "s": {"type": "string", "x-mcp-header": "S"},
            "i": {"type": "integer", "x-mcp-header": "I"},
            "b": {"type": "boolean", "x-mcp-header": "B"},
            "e": {"type": "string", "x-mcp-header": "E"},
            "n": {"type": "string", "x-mcp-header": "N"},
            "u": {"type": "string", "x-mcp-header": "U"},
            "f": {"type": "number"},
        }))]});
        let (rewritten, checked) = check_tools(&RawJson::new(&list).unwrap());
        assert!(rewritten.is_none(), "every tool kept");
        let args = json!({"s": " lead", "i": 42, "b": false, "e": "", "n": null, "f": 1.5});
        let mut got = checked.headers.for_call("t", Some(&args));
        got.sort();
        let want: Vec<(String, String)> = [
            ("Mcp-Param-B", "false"),
            ("Mcp-Param-E", ""),
            ("Mcp-Param-I", "42"),
            ("Mcp-Param-S", "=?base64?IGxlYWQ=?="),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(got, want);
    }
}
