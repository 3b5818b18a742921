//! `mcpwire tools NAME`: one tool in words — its title, description and annotations, and each
//! argument with its type, whether it is required, its description, default and allowed values.

use mcpwire::Tool;
use serde_json::Value;

/// The text `mcpwire tools NAME` prints for `tool`.
pub(crate) fn tool_detail(tool: &Tool) -> String {
    let mut out = String::new();
    match &tool.title {
        Some(title) if title != &tool.name => out.push_str(&format!("{} ({title})\n", tool.name)),
        _ => out.push_str(&format!("{}\n", tool.name)),
    }
    if let Some(description) = tool.description.as_deref().filter(|d| !d.trim().is_empty()) {
        for line in description.trim_end().lines() {
            out.push_str(format!("  {line}").trim_end());
            out.push('\n');
        }
    }
    if let Some(hints) = tool.annotations.as_ref().and_then(annotations) {
        out.push_str(&format!("annotations: {hints}\n"));
    }
    // An MCP App's UI, and whether only that UI may call the tool.
    if let Some(uri) = tool.ui_resource_uri() {
        let only = if tool.is_app_only() {
            " (app only: not for the model)"
        } else {
            ""
        };
        out.push_str(&format!("app: {uri}{only}\n"));
    }
    out.push('\n');
    let schema = &tool.input_schema_value();
    let properties = schema.get("properties").and_then(Value::as_object);
    match properties {
        Some(props) if !props.is_empty() => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let rows: Vec<[String; 4]> = props
                .iter()
                .map(|(name, p)| {
                    let needed = if required.contains(&name.as_str()) {
                        "required"
                    } else {
                        "optional"
                    };
                    [name.clone(), type_of(p), needed.to_owned(), notes(p)]
                })
                .collect();
            out.push_str("arguments:\n");
            out.push_str(&table(&rows));
        }
        _ => out.push_str("arguments: none\n"),
    }
    if let Some(output) = &tool.output_schema_value() {
        if let Some(props) = output.get("properties").and_then(Value::as_object) {
            let fields: Vec<String> = props
                .iter()
                .map(|(name, p)| format!("{name} ({})", type_of(p)))
                .collect();
            out.push_str(&format!("structured output: {}\n", fields.join(", ")));
        }
    }
    out
}

/// Rows as aligned columns, indented; the last column as it is.
fn table(rows: &[[String; 4]]) -> String {
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    let mut out = String::new();
    for [name, kind, needed, notes] in rows {
        let line = format!("  {name:w0$}  {kind:w1$}  {needed:w2$}  {notes}");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A property's type in words: `string`, `integer|null`, `array of string`, `any`.
fn type_of(p: &Value) -> String {
    let base = match p.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ => {
            let alternatives = p
                .get("anyOf")
                .or_else(|| p.get("oneOf"))
                .and_then(Value::as_array);
            match alternatives {
                Some(alts) => alts.iter().map(type_of).collect::<Vec<_>>().join("|"),
                None if p.get("enum").is_some() => "enum".to_owned(),
                None => "any".to_owned(),
            }
        }
    };
    match p.get("items") {
        Some(items) if base == "array" => format!("array of {}", type_of(items)),
        _ => base,
    }
}

/// A property's description, default and allowed values, on one line.
fn notes(p: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(d) = p.get("description").and_then(Value::as_str) {
        let d = d.split_whitespace().collect::<Vec<_>>().join(" ");
        if !d.is_empty() {
            parts.push(d);
        }
    }
    if let Some(default) = p.get("default") {
        parts.push(format!("default: {default}"));
    }
    let values = p
        .get("enum")
        .or_else(|| p.pointer("/items/enum"))
        .and_then(Value::as_array);
    if let Some(values) = values {
        let list: Vec<String> = values.iter().map(Value::to_string).collect();
        parts.push(format!("one of: {}", list.join(", ")));
    }
    if let Some(c) = p.get("const") {
        parts.push(format!("always {c}"));
    }
    parts.join("; ")
}

/// The annotations in words: the hints set, each as `name=value`, and a title if any.
fn annotations(a: &Value) -> Option<String> {
    let map = a.as_object()?;
    let parts: Vec<String> = map
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s:?}"),
            other => format!("{k}={other}"),
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(v: Value) -> Tool {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn every_argument_with_its_type_need_description_default_and_values() {
        let t = tool(json!({
            "name": "search", "title": "Search the web",
            "description": "Searches.\nReturns the top hits.",
            "annotations": {"readOnlyHint": true, "openWorldHint": true},
            "inputSchema": {"type": "object", "required": ["query"], "properties": {
                "query": {"type": "string", "description": "What to look for,\n  in words."},
                "limit": {"type": "integer", "default": 10},
                "mode": {"type": "string", "enum": ["fast", "deep"], "default": "fast"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "since": {"type": ["string", "null"]},
                "extra": {}
            }},
            "outputSchema": {"type": "object", "properties": {"hits": {"type": "array"}}}
        }));
        let text = tool_detail(&t);
        assert_eq!(
            text,
            "search (Search the web)
  Searches.
  Returns the top hits.
annotations: openWorldHint=true, readOnlyHint=true

arguments:
  extra  any              optional
  limit  integer          optional  default: 10
  mode   string           optional  default: \"fast\"; one of: \"fast\", \"deep\"
  query  string           required  What to look for, in words.
  since  string|null      optional
  tags   array of string  optional
structured output: hits (array)
"
        );
    }

    #[test]
    fn a_tool_without_arguments_says_so() {
        let t = tool(json!({"name": "fail", "inputSchema": {"type": "object", "properties": {}}}));
        assert_eq!(tool_detail(&t), "fail\n\narguments: none\n");
        let t = tool(json!({"name": "x", "inputSchema": {"type": "object"}}));
        assert!(tool_detail(&t).ends_with("arguments: none\n"));
    }

    #[test]
    fn types_in_words() {
        assert_eq!(
            type_of(&json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})),
            "string|integer"
        );
        assert_eq!(type_of(&json!({"enum": [1, 2]})), "enum");
        assert_eq!(
            type_of(
                &json!({"type": "array", "items": {"type": "array", "items": {"type": "number"}}})
            ),
            "array of array of number"
        );
        assert_eq!(notes(&json!({"const": "v"})), "always \"v\"");
        assert_eq!(
            notes(&json!({"type": "array", "items": {"enum": ["a", "b"]}})),
            "one of: \"a\", \"b\""
        );
    }
}
