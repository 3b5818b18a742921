//! A configuration file's contents as one ordered tree, whatever its syntax: JSON (with the
//! comments and trailing commas that VS Code, Zed and Gemini accept) and TOML (Codex) are read
//! into the same [`Node`], keys in the order they were written, so servers come out in file order
//! and every format is walked by the same code. (Neither `serde_json` nor `toml` keep the
//! order without an extra map crate; JSON goes through a serde visitor, TOML through the
//! spans of `toml`'s parse tree.)

use std::fmt;
use std::path::Path;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::error::ConfigError;

/// One value of the file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Node>),
    Object(Object),
}

/// An object (JSON) or table (TOML), in the order written. A key written twice keeps its
/// last value, as `JSON.parse` does, and is remembered so it can be reported.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Object {
    entries: Vec<(String, Node)>,
    duplicates: Vec<String>,
}

impl Object {
    /// The value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Removes `key` and returns its value.
    pub(crate) fn take(&mut self, key: &str) -> Option<Node> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(i).1)
    }

    /// Whether `key` is present.
    pub(crate) fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The keys and values, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Node)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The keys and values, in order, owned.
    pub(crate) fn into_entries(self) -> Vec<(String, Node)> {
        self.entries
    }

    /// The keys that were written more than once.
    pub(crate) fn duplicates(&self) -> &[String] {
        &self.duplicates
    }

    /// Adds `key` at the end (replacing an earlier value).
    pub(crate) fn push(&mut self, key: &str, value: Node) {
        self.insert(key.to_owned(), value);
    }

    fn insert(&mut self, key: String, value: Node) {
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => {
                slot.1 = value;
                if !self.duplicates.contains(&key) {
                    self.duplicates.push(key);
                }
            }
            None => self.entries.push((key, value)),
        }
    }
}

impl Node {
    /// What kind of value this is, for messages (never the value itself).
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Number(_) => "a number",
            Node::String(_) => "a string",
            Node::Array(_) => "an array",
            Node::Object(_) => "an object",
        }
    }

    /// This value as JSON (unknown keys are handed to the caller this way).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::String(s) => Value::String(s.clone()),
            Node::Array(a) => Value::Array(a.iter().map(Node::to_json).collect()),
            Node::Object(o) => Value::Object(
                o.entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }

    /// The object inside, if this is one.
    pub(crate) fn as_object(&self) -> Option<&Object> {
        match self {
            Node::Object(o) => Some(o),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        // NaN and the infinities (TOML has them) are no JSON number: null, then a type error
        // where a number was expected.
        Ok(serde_json::Number::from_f64(v).map_or(Node::Null, Node::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::String(v))
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut object = Object::default();
        while let Some((key, value)) = map.next_entry::<String, Node>()? {
            object.insert(key, value);
        }
        Ok(Node::Object(object))
    }
}

/// Parses JSON, accepting `//` and `/* */` comments and trailing commas (JSONC, as VS Code,
/// Zed and Gemini write their files). A syntax error names the line and column (counted in
/// characters, from 1) and never quotes the text.
pub(crate) fn parse_json(path: &Path, text: &str) -> Result<Node, ConfigError> {
    let plain = strip_jsonc(text);
    serde_json::from_str::<Node>(&plain).map_err(|e| {
        let message = e.to_string();
        // serde_json appends " at line L column C"; the position is given separately.
        let message = match message.rfind(" at line ") {
            Some(i) => message[..i].to_owned(),
            None => message,
        };
        let column = char_column(&plain, e.line(), e.column());
        ConfigError::Syntax {
            path: path.to_owned(),
            line: e.line(),
            column,
            message,
        }
    })
}

/// Parses TOML. Tables keep the order their keys were first written in (by their position
/// in the text). A syntax error names the line and column (in characters, from 1) and never
/// quotes the text (the `toml` crate's own rendering shows the line, which may hold a secret).
pub(crate) fn parse_toml(path: &Path, text: &str) -> Result<Node, ConfigError> {
    match toml::de::DeTable::parse(text) {
        Ok(table) => Ok(table_node(table.get_ref())),
        Err(e) => {
            let offset = e.span().map_or(0, |s| s.start).min(text.len());
            let before = &text[..floor_char_boundary(text, offset)];
            let line = before.matches('\n').count() + 1;
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = before[line_start..].chars().count() + 1;
            Err(ConfigError::Syntax {
                path: path.to_owned(),
                line,
                column,
                message: e.message().trim_end().replace('\n', "; "),
            })
        }
    }
}

fn table_node(table: &toml::de::DeTable<'_>) -> Node {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    let mut object = Object::default();
    for (k, v) in entries {
        object.insert(k.get_ref().to_string(), toml_node(v.get_ref()));
    }
    Node::Object(object)
}

fn toml_node(value: &toml::de::DeValue<'_>) -> Node {
    use toml::de::DeValue;
    match value {
        DeValue::String(s) => Node::String(s.to_string()),
        // TOML integers are 64-bit signed, so every valid one fits.
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .map_or(Node::Null, |n| Node::Number(n.into())),
        DeValue::Float(f) => f
            .as_str()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Node::Null, Node::Number),
        DeValue::Boolean(b) => Node::Bool(*b),
        DeValue::Datetime(d) => Node::String(d.to_string()),
        DeValue::Array(items) => {
            Node::Array(items.iter().map(|v| toml_node(v.get_ref())).collect())
        }
        DeValue::Table(t) => table_node(t),
    }
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// serde_json's column counts bytes (the offending byte's, from 1); this counts characters.
fn char_column(text: &str, line: usize, byte_column: usize) -> usize {
    let Some(line_text) = text.split('\n').nth(line.saturating_sub(1)) else {
        return byte_column;
    };
    if byte_column == 0 {
        return 0;
    }
    let before = byte_column - 1;
    let end = floor_char_boundary(line_text, before.min(line_text.len()));
    line_text[..end].chars().count() + 1 + before.saturating_sub(line_text.len())
}

/// The text with comments, a leading byte-order mark and trailing commas replaced by spaces,
/// byte for byte, so that lines and columns are unchanged.
pub(crate) fn strip_jsonc(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    if out.starts_with(&[0xEF, 0xBB, 0xBF]) {
        out[..3].copy_from_slice(b"   ");
    }
    // First pass: comments.
    let mut i = 0;
    let mut in_string = false;
    while i < out.len() {
        let b = out[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b'/' && out.get(i + 1) == Some(&b'/') {
            while i < out.len() && out[i] != b'\n' {
                if out[i] != b'\r' {
                    out[i] = b' ';
                }
                i += 1;
            }
            continue;
        } else if b == b'/' && out.get(i + 1) == Some(&b'*') {
            let end = out[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map(|p| i + 2 + p + 2);
            // An unterminated comment is left for the parser to reject.
            if let Some(end) = end {
                for c in &mut out[i..end] {
                    if *c != b'\n' && *c != b'\r' {
                        *c = b' ';
                    }
                }
                i = end;
                continue;
            }
        }
        i += 1;
    }
    // Second pass: a comma followed only by white space before `}` or `]`.
    let mut in_string = false;
    let mut i = 0;
    while i < out.len() {
        let b = out[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b',' {
            let next = out[i + 1..].iter().find(|c| !c.is_ascii_whitespace());
            if matches!(next, Some(b'}') | Some(b']')) {
                out[i] = b' ';
            }
        }
        i += 1;
    }
    // Only ASCII bytes were replaced, and only outside multi-byte characters (a comment's
    // characters are replaced whole): the text is still UTF-8. Were it not, the bytes are
    // taken lossily rather than panic on a user's file.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(node: &Node) -> Vec<&str> {
        node.as_object().unwrap().iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn json_keys_keep_the_order_written() {
        let n = parse_json(Path::new("f"), r#"{"b": 1, "a": 2, "c": {"z": 1, "y": 2}}"#).unwrap();
        assert_eq!(keys(&n), ["b", "a", "c"]);
        assert_eq!(keys(n.as_object().unwrap().get("c").unwrap()), ["z", "y"]);
    }

    #[test]
    fn toml_keys_keep_the_order_written() {
        let n = parse_toml(Path::new("f"), "[t]\nb = 1\na = 2\n[s]\nx = true\n").unwrap();
        assert_eq!(keys(&n), ["t", "s"]);
        assert_eq!(keys(n.as_object().unwrap().get("t").unwrap()), ["b", "a"]);
    }

    #[test]
    fn comments_and_trailing_commas_are_blanked_in_place() {
        let text = "{\n  // a comment, with \"quotes\"\n  \"a\": \"//not a comment\", /* b */\n  \"b\": [1, 2,],\n}";
        let plain = strip_jsonc(text);
        assert_eq!(plain.len(), text.len());
        assert_eq!(plain.lines().count(), text.lines().count());
        let n = parse_json(Path::new("f"), text).unwrap();
        let o = n.as_object().unwrap();
        assert_eq!(o.get("a"), Some(&Node::String("//not a comment".into())));
        assert_eq!(o.get("b").map(Node::kind), Some("an array"));
    }

    #[test]
    fn a_duplicate_key_keeps_the_last_value_and_is_remembered() {
        let n = parse_json(Path::new("f"), r#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        let o = n.as_object().unwrap();
        assert_eq!(o.get("a"), Some(&Node::Number(3.into())));
        assert_eq!(o.duplicates(), ["a"]);
        assert_eq!(keys(&n), ["a", "b"]);
    }

    #[test]
    fn json_syntax_errors_name_line_and_column_in_characters() {
        let err = parse_json(Path::new("f.json"), "{\n  \"é\": 1\n  \"b\": 2\n}").unwrap_err();
        let ConfigError::Syntax {
            line,
            column,
            message,
            ..
        } = err
        else {
            panic!("{err:?}")
        };
        assert_eq!((line, column), (3, 3), "{message}");
        assert!(!message.contains(" at line "), "{message}");
    }

    #[test]
    fn toml_syntax_errors_name_line_and_column_without_quoting_the_line() {
        let text = "[mcp_servers.a]\ncommand = \"x\"\nenv = { KEY = \"sk-secret-value\" \n";
        let err = parse_toml(Path::new("c.toml"), text).unwrap_err();
        let ConfigError::Syntax {
            line,
            column,
            message,
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(*line, 3, "{message}");
        assert!(*column > 1, "{column}");
        assert!(!err.to_string().contains("sk-secret"), "{err}");
    }
}
