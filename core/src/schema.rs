//! Tool schemas checked: a call's `structuredContent` against the tool's `outputSchema`, and a
//! call's arguments against its `inputSchema` (feature `schemas`).
//!
//! [`ToolSchemas::compile`] keeps the schemas of one `tools/list`; each is compiled once, at
//! the first check against it, and each call is then checked against them. JSON Schema 2020-12
//! is assumed when a schema names no `$schema`; drafts 2019-09, 7, 6 and 4 are honoured when
//! named. A `$ref` to anything outside the schema itself (another URL, a file) is never loaded:
//! such a schema cannot be used, and a call of its tool fails with
//! [`SchemaViolation::UnusableSchema`] rather than passing unchecked.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;

use crate::jsonrpc::RawJson;
use crate::types::{CallToolResult, Tool};

/// Why a call does not meet its tool's schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaViolation {
    /// The tool declares an `outputSchema` and its (successful) result has no
    /// `structuredContent`.
    #[error("the tool declares an output schema and the result has no structuredContent")]
    MissingStructuredContent,
    /// The value does not match the schema; the text says where and how.
    #[error("does not match the schema: {0}")]
    DoesNotMatch(String),
    /// The schema itself cannot be used: it is not a valid schema, or it refers to a document
    /// that is never fetched.
    #[error("the schema cannot be used: {0}")]
    UnusableSchema(String),
}

/// Which of a tool's schemas a check was against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaKind {
    /// `inputSchema`: the call's arguments.
    Input,
    /// `outputSchema`: the result's `structuredContent`.
    Output,
}

impl fmt::Display for SchemaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SchemaKind::Input => "arguments",
            SchemaKind::Output => "structured output",
        })
    }
}

/// A call of `tool` that breaks one of its schemas.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool}`: {kind} {violation}")]
pub struct SchemaError {
    /// The tool.
    pub tool: String,
    /// Which schema.
    pub kind: SchemaKind,
    /// How it was broken.
    pub violation: SchemaViolation,
}

/// One schema: compiled, or why it could not be.
#[derive(Debug, Clone)]
enum Compiled {
    Ready(boon::SchemaIndex),
    Unusable(String),
}

/// One of a tool's schemas, compiled at the first check against it: a listing compiles
/// nothing (a host may call few of the tools listed, and the first schema compiled loads the
/// JSON Schema meta-schemas, about a mebibyte kept for the process's life).
struct LazySchema {
    name: String,
    text: RawJson,
    compiled: OnceLock<(boon::Schemas, Compiled)>,
}

impl LazySchema {
    fn new(name: String, text: &RawJson) -> Self {
        LazySchema {
            name,
            text: text.clone(),
            compiled: OnceLock::new(),
        }
    }

    /// Checks `value` against the schema, compiling it first if this is its first check.
    fn check(&self, value: &Value) -> Result<(), SchemaViolation> {
        let (schemas, compiled) = self.compiled.get_or_init(|| {
            let mut schemas = boon::Schemas::new();
            let compiled = compile_into(&mut schemas, &self.name, self.text.get());
            (schemas, compiled)
        });
        check(schemas, compiled, value)
    }
}

/// The schemas of one `tools/list`, by tool name, each compiled when first needed. Kept from
/// a list's text ([`from_list`](Self::from_list)), they are found in it at the first check: a
/// connection that lists its tools and calls none reads the list once less.
pub struct ToolSchemas {
    /// The list they were kept from, until they are found in it.
    list: Option<RawJson>,
    by_name: OnceLock<ByName>,
}

/// Each tool's schemas, by tool name.
#[derive(Default)]
struct ByName {
    output: HashMap<String, LazySchema>,
    input: HashMap<String, LazySchema>,
}

impl fmt::Debug for ToolSchemas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let by_name = self.by_name();
        f.debug_struct("ToolSchemas")
            .field("output", &by_name.output.len())
            .field("input", &by_name.input.len())
            .finish()
    }
}

/// The loader of documents a schema refers to: refuses every one, so nothing is ever fetched
/// or read.
struct NoLoader;

impl boon::UrlLoader for NoLoader {
    fn load(&self, url: &str) -> Result<Value, Box<dyn std::error::Error>> {
        Err(format!("`{url}` is outside the schema and is not fetched").into())
    }
}

impl ToolSchemas {
    /// Keeps the schemas of `tools` (a complete `tools/list`); each is compiled at the first
    /// check against it. A schema that cannot be compiled is unusable: a call of its tool is
    /// then refused, never passed.
    pub fn compile(tools: &[Tool]) -> ToolSchemas {
        let mut this = ByName::default();
        for (i, tool) in tools.iter().enumerate() {
            if let Some(raw) = &tool.output_schema {
                let schema = LazySchema::new(format!("output/{i}"), raw);
                this.output.insert(tool.name.clone(), schema);
            }
            let schema = LazySchema::new(format!("input/{i}"), &tool.input_schema);
            this.input.insert(tool.name.clone(), schema);
        }
        ToolSchemas {
            list: None,
            by_name: OnceLock::from(this),
        }
    }

    /// Keeps the schemas of the tools in a complete `tools/list` result (`{"tools": [...]}`),
    /// as [`compile`](Self::compile) does, reading only each tool's name and schemas. A result
    /// of another shape keeps none.
    pub fn from_list(list: &RawJson) -> ToolSchemas {
        ToolSchemas {
            list: Some(list.clone()),
            by_name: OnceLock::new(),
        }
    }

    /// The tools' schemas, found in the list at the first call.
    fn by_name(&self) -> &ByName {
        self.by_name
            .get_or_init(|| self.list.as_ref().map(ByName::of_list).unwrap_or_default())
    }

    /// Checks a raw `tools/call` result of `tool` as [`check_output`](Self::check_output)
    /// does, reading only its `isError` and `structuredContent`. A result of another shape is
    /// left to the caller's typed read.
    pub fn check_output_raw(&self, tool: &str, result: &RawJson) -> Result<(), SchemaError> {
        if !self.by_name().output.contains_key(tool) {
            return Ok(());
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Head {
            #[serde(default)]
            is_error: bool,
            #[serde(default)]
            structured_content: Option<Value>,
        }
        let Ok(head) = result.parse::<Head>() else {
            return Ok(());
        };
        self.check_result(tool, head.is_error, head.structured_content.as_ref())
    }

    /// Whether `tool` declared an `outputSchema`.
    pub fn has_output_schema(&self, tool: &str) -> bool {
        self.by_name().output.contains_key(tool)
    }

    /// Whether `tool` was in the list.
    pub fn knows(&self, tool: &str) -> bool {
        self.by_name().input.contains_key(tool)
    }

    /// Checks a result of `tool` against its `outputSchema`: a tool without one, or a result
    /// with `isError`, passes; a result without `structuredContent` or whose
    /// `structuredContent` does not match fails.
    pub fn check_output(&self, tool: &str, result: &CallToolResult) -> Result<(), SchemaError> {
        let structured = result.structured_content.as_ref();
        self.check_result(tool, result.is_error, structured)
    }

    /// [`check_output`](Self::check_output) on the two members it reads.
    fn check_result(
        &self,
        tool: &str,
        is_error: bool,
        structured: Option<&Value>,
    ) -> Result<(), SchemaError> {
        let Some(schema) = self.by_name().output.get(tool) else {
            return Ok(());
        };
        if is_error {
            return Ok(());
        }
        let fail = |violation| SchemaError {
            tool: tool.to_owned(),
            kind: SchemaKind::Output,
            violation,
        };
        let Some(value) = structured else {
            return Err(fail(SchemaViolation::MissingStructuredContent));
        };
        schema.check(value).map_err(fail)
    }

    /// Checks the arguments of a call of `tool` against its `inputSchema` (absent arguments
    /// are checked as `{}`). A tool not in the list passes: the server will say.
    pub fn check_input(&self, tool: &str, arguments: Option<&Value>) -> Result<(), SchemaError> {
        let Some(schema) = self.by_name().input.get(tool) else {
            return Ok(());
        };
        let empty = Value::Object(serde_json::Map::new());
        schema
            .check(arguments.unwrap_or(&empty))
            .map_err(|violation| SchemaError {
                tool: tool.to_owned(),
                kind: SchemaKind::Input,
                violation,
            })
    }
}

impl ByName {
    /// Each tool's schemas in a complete `tools/list` result; none in a result of another
    /// shape.
    fn of_list(list: &RawJson) -> ByName {
        #[derive(serde::Deserialize)]
        struct List {
            #[serde(default)]
            tools: Vec<Head>,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Head {
            name: String,
            #[serde(default)]
            input_schema: Option<RawJson>,
            #[serde(default)]
            output_schema: Option<RawJson>,
        }
        let list: List = list.parse().unwrap_or(List { tools: Vec::new() });
        let mut this = ByName::default();
        for (i, tool) in list.tools.into_iter().enumerate() {
            if let Some(raw) = &tool.output_schema {
                let schema = LazySchema::new(format!("output/{i}"), raw);
                this.output.insert(tool.name.clone(), schema);
            }
            if let Some(raw) = &tool.input_schema {
                let schema = LazySchema::new(format!("input/{i}"), raw);
                this.input.insert(tool.name, schema);
            }
        }
        this
    }
}

/// Compiles one schema, `text`, into `schemas`.
fn compile_into(schemas: &mut boon::Schemas, name: &str, text: &str) -> Compiled {
    let json: Value = match serde_json::from_str(text) {
        Ok(json) => json,
        Err(e) => return Compiled::Unusable(e.to_string()),
    };
    // Each schema is its own document under a base no loader serves; relative `$ref`s
    // resolve against it and are refused.
    let location = format!("mcpwire-tool:///{name}.json");
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V2020_12);
    compiler.use_loader(Box::new(NoLoader));
    if let Err(e) = compiler.add_resource(&location, json) {
        return Compiled::Unusable(format!("{e:#}"));
    }
    match compiler.compile(&location, schemas) {
        Ok(index) => Compiled::Ready(index),
        Err(e) => Compiled::Unusable(format!("{e:#}")),
    }
}

/// Checks `value` against a schema compiled into `schemas`.
fn check(
    schemas: &boon::Schemas,
    compiled: &Compiled,
    value: &Value,
) -> Result<(), SchemaViolation> {
    match compiled {
        Compiled::Unusable(why) => Err(SchemaViolation::UnusableSchema(why.clone())),
        Compiled::Ready(index) => schemas
            .validate(value, *index)
            .map_err(|e| SchemaViolation::DoesNotMatch(describe(&e))),
    }
}

/// How many of a value's errors are named (a large value may break its schema everywhere).
const MAX_NAMED: usize = 10;

/// The leaf errors, each as where in the value and what is wrong; past [`MAX_NAMED`], a count.
fn describe(error: &boon::ValidationError<'_, '_>) -> String {
    fn leaves(e: &boon::ValidationError<'_, '_>, out: &mut Vec<String>, total: &mut usize) {
        if e.causes.is_empty() {
            *total += 1;
            if out.len() < MAX_NAMED {
                out.push(format!("at '{}': {}", e.instance_location, e.kind));
            }
        } else {
            e.causes.iter().for_each(|c| leaves(c, out, total));
        }
    }
    let (mut out, mut total) = (Vec::new(), 0);
    leaves(error, &mut out, &mut total);
    if total > out.len() {
        out.push(format!("and {} more", total - out.len()));
    }
    out.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools(list: Value) -> Vec<Tool> {
        serde_json::from_value(list).unwrap()
    }

    fn result(v: Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    fn weather() -> ToolSchemas {
        ToolSchemas::compile(&tools(json!([{
            "name": "weather",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}},
                            "required": ["city"], "additionalProperties": false},
            "outputSchema": {"type": "object", "properties": {
                "temperature": {"type": "number"}, "conditions": {"type": "string"}},
                "required": ["temperature", "conditions"]}
        }, {"name": "plain", "inputSchema": {"type": "object"}}])))
    }

    #[test]
    fn a_schema_is_compiled_at_the_first_check_against_it_only() {
        let schemas = weather();
        let compiled = |s: &LazySchema| s.compiled.get().is_some();
        let by_name = schemas.by_name();
        assert!(!by_name
            .input
            .values()
            .chain(by_name.output.values())
            .any(compiled));
        let wrong = schemas.check_input("weather", Some(&json!({"town": "Oslo"})));
        assert_eq!(wrong.unwrap_err().kind, SchemaKind::Input);
        assert!(by_name.input["weather"].compiled.get().is_some());
        assert!(by_name.input["plain"].compiled.get().is_none());
        let right = json!({"city": "Oslo"});
        assert_eq!(schemas.check_input("weather", Some(&right)), Ok(()));
        assert_eq!(schemas.check_input("plain", None), Ok(()));
        assert!(!compiled(&by_name.output["weather"]));
        let r = result(json!({"content": [],
            "structuredContent": {"temperature": 21.5, "conditions": "sunny"}}));
        assert_eq!(schemas.check_output("weather", &r), Ok(()));
        assert!(compiled(&by_name.output["weather"]));
    }

    #[test]
    fn a_list_s_schemas_are_found_in_it_at_the_first_check_only() {
        let list = RawJson::new(&json!({"tools": [
            {"name": "weather", "inputSchema": {"type": "object", "required": ["city"]}},
            {"name": "plain", "inputSchema": {"type": "object"},
             "outputSchema": {"type": "object", "required": ["n"]}}
        ]}))
        .unwrap();
        let schemas = ToolSchemas::from_list(&list);
        assert!(schemas.by_name.get().is_none(), "read before any check");
        let e = schemas
            .check_input("weather", Some(&json!({})))
            .unwrap_err();
        assert_eq!(e.kind, SchemaKind::Input);
        assert!(schemas.by_name.get().is_some());
        assert!(schemas.knows("plain") && schemas.has_output_schema("plain"));
        assert!(!schemas.has_output_schema("weather") && !schemas.knows("other"));
        let other = ToolSchemas::from_list(&RawJson::new(&json!({"tools": 3})).unwrap());
        assert!(!other.knows("weather"));
        assert_eq!(other.check_input("weather", Some(&json!({}))), Ok(()));
    }

    #[test]
    fn matching_structured_content_passes() {
        let r = result(json!({"content": [],
            "structuredContent": {"temperature": 21.5, "conditions": "sunny"}}));
        assert_eq!(weather().check_output("weather", &r), Ok(()));
    }

    #[test]
    fn mismatching_structured_content_names_the_place() {
        let r = result(json!({"content": [],
            "structuredContent": {"temperature": "warm", "conditions": "sunny"}}));
        let e = weather().check_output("weather", &r).unwrap_err();
        assert_eq!(e.kind, SchemaKind::Output);
        let SchemaViolation::DoesNotMatch(why) = &e.violation else {
            panic!("{e:?}")
        };
        assert!(why.contains("/temperature"), "{why}");
    }

    #[test]
    fn a_result_without_structured_content_fails_when_a_schema_is_declared() {
        let r = result(json!({"content": [{"type": "text", "text": "21.5"}]}));
        let e = weather().check_output("weather", &r).unwrap_err();
        assert_eq!(e.violation, SchemaViolation::MissingStructuredContent);
        // Without a schema, or as an error result, nothing is asked of it.
        assert_eq!(weather().check_output("plain", &r), Ok(()));
        let failed = result(json!({"content": [], "isError": true}));
        assert_eq!(weather().check_output("weather", &failed), Ok(()));
    }

    #[test]
    fn arguments_are_checked_against_the_input_schema() {
        let s = weather();
        assert_eq!(
            s.check_input("weather", Some(&json!({"city": "Paris"}))),
            Ok(())
        );
        let e = s.check_input("weather", Some(&json!({"town": "Paris"})));
        assert!(matches!(
            e.unwrap_err().violation,
            SchemaViolation::DoesNotMatch(_)
        ));
        assert!(s.check_input("weather", None).is_err());
        assert_eq!(s.check_input("unknown", None), Ok(()));
    }

    #[test]
    fn older_drafts_are_honoured() {
        // Draft 4's boolean `exclusiveMaximum`, draft 7's `definitions`.
        let s = ToolSchemas::compile(&tools(json!([{
            "name": "d4", "inputSchema": {},
            "outputSchema": {"$schema": "http://json-schema.org/draft-04/schema#",
                "type": "object", "properties": {"n": {"type": "number", "maximum": 10,
                "exclusiveMaximum": true}}}
        }, {
            "name": "d7", "inputSchema": {},
            "outputSchema": {"$schema": "http://json-schema.org/draft-07/schema#",
                "definitions": {"n": {"type": "integer"}},
                "type": "object", "properties": {"n": {"$ref": "#/definitions/n"}}}
        }])));
        let ten = result(json!({"structuredContent": {"n": 10}}));
        assert!(s.check_output("d4", &ten).is_err());
        assert_eq!(s.check_output("d7", &ten), Ok(()));
        let half = result(json!({"structuredContent": {"n": 0.5}}));
        assert!(s.check_output("d7", &half).is_err());
    }

    #[test]
    fn a_network_ref_is_never_fetched_and_the_tool_fails_instead() {
        let s = ToolSchemas::compile(&tools(json!([{
            "name": "remote", "inputSchema": {},
            "outputSchema": {"$ref": "https://example.com/schema.json"}
        }, {
            "name": "file", "inputSchema": {},
            "outputSchema": {"$ref": "other.json"}
        }, {
            "name": "local", "inputSchema": {},
            "outputSchema": {"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/a"}
        }])));
        let r = result(json!({"structuredContent": "x"}));
        for tool in ["remote", "file"] {
            let e = s.check_output(tool, &r).unwrap_err();
            assert!(
                matches!(e.violation, SchemaViolation::UnusableSchema(_)),
                "{e}"
            );
        }
        assert_eq!(s.check_output("local", &r), Ok(()));
    }

    #[test]
    fn a_schema_that_is_not_a_schema_is_unusable_not_a_panic() {
        let s = ToolSchemas::compile(&tools(json!([{
            "name": "bad", "inputSchema": {"type": 12},
            "outputSchema": {"type": "no-such-type", "minimum": "x"}
        }])));
        let r = result(json!({"structuredContent": {}}));
        assert!(matches!(
            s.check_output("bad", &r).unwrap_err().violation,
            SchemaViolation::UnusableSchema(_)
        ));
        assert!(s.check_input("bad", None).is_err());
    }

    #[test]
    fn a_value_wrong_everywhere_names_ten_errors_and_counts_the_rest() {
        let s = ToolSchemas::compile(&tools(json!([{"name": "list", "inputSchema": {},
            "outputSchema": {"type": "array", "items": {"type": "integer"}}}])));
        let r = result(json!({"structuredContent": vec!["x"; 25]}));
        let e = s.check_output("list", &r).unwrap_err();
        let SchemaViolation::DoesNotMatch(why) = &e.violation else {
            panic!("{e:?}")
        };
        assert_eq!(why.matches("at '").count(), 10, "{why}");
        assert!(why.ends_with("and 15 more"), "{why}");
    }

    #[test]
    fn a_schema_that_refers_to_itself_forever_never_overflows() {
        let s = ToolSchemas::compile(&tools(json!([
            {"name": "loop", "inputSchema": {}, "outputSchema": {"$ref": "#"}},
            {"name": "pair", "inputSchema": {}, "outputSchema": {
                "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                "$ref": "#/$defs/a"}}
        ])));
        let r = result(json!({"structuredContent": {"x": [1, 2, 3]}}));
        for tool in ["loop", "pair"] {
            // Refused or passed, but answered.
            let _ = s.check_output(tool, &r);
        }
    }

    /// Any JSON, weighted towards schema keywords and their usual kinds of values.
    fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let keys = prop::sample::select(vec![
            "type",
            "properties",
            "items",
            "required",
            "$ref",
            "$defs",
            "anyOf",
            "allOf",
            "oneOf",
            "not",
            "if",
            "then",
            "else",
            "enum",
            "const",
            "minimum",
            "maxLength",
            "pattern",
            "format",
            "additionalProperties",
            "$schema",
            "$id",
            "$anchor",
            "$dynamicRef",
            "prefixItems",
            "contains",
            "dependentSchemas",
            "x",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(|n| json!(n)),
            prop::sample::select(vec![
                "object",
                "string",
                "#",
                "#/$defs/a",
                "integer",
                "^a+$",
                "(",
                "email",
                "http://json-schema.org/draft-04/schema#",
                "https://x.invalid/s.json",
                "urn:x",
            ])
            .prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((keys.clone(), inner), 0..5).prop_map(|kv| {
                    Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn any_schema_and_any_value_give_an_answer_never_a_panic(
            schema in any_json(),
            value in any_json(),
        ) {
            let list = json!([{"name": "t", "inputSchema": schema, "outputSchema": schema}]);
            let Ok(list) = serde_json::from_value::<Vec<Tool>>(list) else { return Ok(()) };
            let s = ToolSchemas::compile(&list);
            let r = CallToolResult {
                content: Vec::new(),
                structured_content: Some(value.clone()),
                is_error: false,
                extra: serde_json::Map::new(),
            };
            let _ = s.check_output("t", &r);
            let _ = s.check_input("t", Some(&value));
        }
    }

    #[test]
    fn compiled_schemas_cross_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<ToolSchemas>();
    }
}
