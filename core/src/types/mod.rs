//! The MCP messages a client sends and reads, as typed views over raw JSON.
//!
//! Every result type keeps the members this version does not know in `extra`, so nothing a server
//! sends is lost or rejected. Open-ended parts (schemas, content blocks, capabilities' inner
//! objects) stay `serde_json::Value`: they are the application's to read.

mod completion;
mod elicitation;
mod initialize;
mod more;
mod notifications;
mod prompts;
mod resources;
mod sampling;
mod tools;
mod versions;

pub use completion::{CompleteResult, Completion};
pub use elicitation::{fill_from_defaults, ElicitAction, ElicitResult, MissingDefaults};
pub use initialize::{
    ClientCapabilities, Implementation, InitializeParams, InitializeResult, ListRootsResult, Root,
    ServerCapabilities,
};
pub use more::{
    url_elicitations_required, UiVisibility, UI_EXTENSION, UI_MIME_TYPE, URL_ELICITATION_REQUIRED,
};
pub use notifications::{LoggingMessageParams, ProgressParams};
pub use prompts::{GetPromptResult, ListPromptsResult, Prompt};
pub use resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceTemplate,
};
pub use sampling::{text_block, CreateMessageParams, CreateMessageResult, Role, SamplingMessage};
pub use tools::{CallToolParams, CallToolResult, ListToolsResult, Tool};
pub use versions::{
    is_handshake_version, HANDSHAKE_VERSIONS, LATEST_HANDSHAKE_VERSION, LATEST_VERSION, LOG_LEVELS,
    STATELESS_VERSIONS, TASKS_EXTENSION,
};
pub(crate) use versions::{only_reads, REPEATABLE_READS};

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
    use serde_json::Value;

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
