//! Sampling (`sampling/createMessage`) as typed values: the server's request
//! ([`CreateMessageParams`], its messages [`SamplingMessage`]) and the host's answer
//! ([`CreateMessageResult`]). Content blocks are JSON values, as a tool result's are (text,
//! image, audio, `tool_use`, `tool_result`), read one block or a list, as the spec allows; every
//! member the types do not name is kept (`extra`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::tools::Tool;
use crate::jsonrpc::ErrorObject;

/// Who speaks a sampling message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// The user (or the results of tools given to the model).
    User,
    /// The model.
    Assistant,
}

/// Content sent as one block or a list of them, read as a list; written as one block when
/// there is one text, image or audio block (what every version of the spec reads), else as a
/// list (tool use came with lists: the spec's examples and its peers write them so).
mod one_or_many {
    use super::*;

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        Many(Vec<Value>),
        One(Value),
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
        Ok(match OneOrMany::deserialize(d)? {
            OneOrMany::Many(list) => list,
            OneOrMany::One(block) => vec![block],
        })
    }

    pub(super) fn serialize<S: Serializer>(blocks: &[Value], s: S) -> Result<S::Ok, S::Error> {
        match blocks {
            [one] if !matches!(block_type(one), Some("tool_use" | "tool_result")) => {
                one.serialize(s)
            }
            many => many.serialize(s),
        }
    }
}

/// The text of the text blocks among `blocks`, joined with newlines.
fn text_of(blocks: &[Value]) -> String {
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|c| block_type(c) == Some("text"))
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    texts.join("\n")
}

fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

/// A text content block.
pub fn text_block(text: &str) -> Value {
    serde_json::json!({"type": "text", "text": text})
}

/// One message of a sampling request's conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who speaks it.
    pub role: Role,
    /// Its content blocks (text, image, audio, `tool_use`, `tool_result`).
    #[serde(with = "one_or_many")]
    pub content: Vec<Value>,
    /// Other members (`_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SamplingMessage {
    /// A message of one text block.
    pub fn text(role: Role, text: &str) -> Self {
        SamplingMessage {
            role,
            content: vec![text_block(text)],
            extra: Map::new(),
        }
    }

    /// The text of its text blocks, joined with newlines.
    pub fn text_content(&self) -> String {
        text_of(&self.content)
    }
}

/// `sampling/createMessage` params; every member kept (`extra`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    /// The conversation.
    #[serde(default)]
    pub messages: Vec<SamplingMessage>,
    /// The most tokens to sample.
    #[serde(default)]
    pub max_tokens: u64,
    /// A system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Tools the model may use (sampling with tools), as the server described them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use them: `{"mode": "auto" | "required" | "none"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// Other members (`modelPreferences`, `temperature`, `stopSequences`, `includeContext`,
    /// `_meta`…).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CreateMessageParams {
    /// Checks the tool messages as the spec asks of a client, giving the `-32602` error to
    /// answer with: a user message with `tool_result` blocks holds nothing else, and each
    /// assistant `tool_use` is answered by a `tool_result` with its id in the next message.
    pub fn check_tool_messages(&self) -> Result<(), ErrorObject> {
        let invalid = |m: String| ErrorObject::new(crate::jsonrpc::codes::INVALID_PARAMS, m);
        for (i, message) in self.messages.iter().enumerate() {
            let content = &message.content;
            let results = content
                .iter()
                .filter(|b| block_type(b) == Some("tool_result"))
                .count();
            if results > 0 && results < content.len() {
                return Err(invalid(format!(
                    "message {i}: tool_result content mixed with other content"
                )));
            }
            let uses: Vec<&str> = content
                .iter()
                .filter(|b| block_type(b) == Some("tool_use"))
                .filter_map(|b| b.get("id").and_then(Value::as_str))
                .collect();
            if uses.is_empty() {
                continue;
            }
            let Some(next) = self.messages.get(i + 1) else {
                continue; // the last message: the model's own turn to answer
            };
            let answered: Vec<&str> = next
                .content
                .iter()
                .filter(|b| block_type(b) == Some("tool_result"))
                .filter_map(|b| b.get("toolUseId").and_then(Value::as_str))
                .collect();
            if let Some(missing) = uses.iter().find(|id| !answered.contains(id)) {
                return Err(invalid(format!(
                    "message {i}: tool_use {missing} has no tool_result in the next message"
                )));
            }
        }
        Ok(())
    }
}

/// The answer to `sampling/createMessage`: what the host's model said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who speaks it (the model: [`Role::Assistant`]).
    pub role: Role,
    /// Its content blocks (text, image, audio, or `tool_use` with sampling with tools), sent as
    /// one block when there is one.
    #[serde(with = "one_or_many")]
    pub content: Vec<Value>,
    /// The model that answered.
    pub model: String,
    /// Why sampling stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse`, or another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Other members (`_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CreateMessageResult {
    /// The model's text answer: one text block from the assistant, stopped at the end of its
    /// turn (`endTurn`).
    pub fn text(model: &str, text: &str) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content: vec![text_block(text)],
            model: model.to_owned(),
            stop_reason: Some("endTurn".into()),
            extra: Map::new(),
        }
    }

    /// The text of its text blocks, joined with newlines.
    pub fn text_content(&self) -> String {
        text_of(&self.content)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sampling_params_carry_tools_and_tool_choice() {
        let p: CreateMessageParams = serde_json::from_value(json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "weather?"}},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "u1",
                    "name": "forecast", "input": {"city": "Paris"}}]},
                {"role": "user", "content": [{"type": "tool_result", "toolUseId": "u1",
                    "content": [{"type": "text", "text": "sunny"}]}]}
            ],
            "maxTokens": 100,
            "tools": [{"name": "forecast", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "auto"},
            "temperature": 0.5
        }))
        .unwrap();
        assert_eq!(p.tools.as_ref().unwrap()[0].name, "forecast");
        assert_eq!(p.tool_choice, Some(json!({"mode": "auto"})));
        assert_eq!(p.extra["temperature"], 0.5);
        assert_eq!(p.check_tool_messages(), Ok(()));
    }

    #[test]
    fn sampling_tool_messages_that_break_the_rules_are_invalid_params() {
        let mixed: CreateMessageParams = serde_json::from_value(json!({"maxTokens": 1,
            "messages": [{"role": "user", "content": [
                {"type": "tool_result", "toolUseId": "u1", "content": []},
                {"type": "text", "text": "and more"}]}]}))
        .unwrap();
        assert_eq!(mixed.check_tool_messages().unwrap_err().code, -32602);
        let unanswered: CreateMessageParams = serde_json::from_value(json!({"maxTokens": 1,
            "messages": [
                {"role": "assistant", "content": {"type": "tool_use", "id": "u1", "name": "f", "input": {}}},
                {"role": "user", "content": {"type": "text", "text": "no result"}}]}))
        .unwrap();
        let e = unanswered.check_tool_messages().unwrap_err();
        assert!(e.message.contains("u1"), "{}", e.message);
    }

    #[test]
    fn messages_are_typed_and_content_is_one_block_or_a_list() {
        let p: CreateMessageParams = serde_json::from_value(json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "hi"}, "_meta": {"k": 1}},
                {"role": "assistant", "content": [{"type": "text", "text": "a"},
                    {"type": "text", "text": "b"}]}
            ],
            "maxTokens": 5
        }))
        .unwrap();
        assert_eq!(p.messages[0].role, Role::User);
        assert_eq!(p.messages[0].text_content(), "hi");
        assert_eq!(p.messages[0].extra["_meta"], json!({"k": 1}));
        assert_eq!(p.messages[1].text_content(), "a\nb");
        // Back out in the form each came in: one block as an object, two as a list.
        let again = serde_json::to_value(&p).unwrap();
        assert_eq!(
            again["messages"][0]["content"],
            json!({"type": "text", "text": "hi"})
        );
        assert_eq!(again["messages"][1]["content"].as_array().unwrap().len(), 2);
        let bad: Result<CreateMessageParams, _> =
            serde_json::from_value(json!({"messages": [{"role": "narrator", "content": []}]}));
        assert!(bad.is_err(), "a role the spec does not name");
    }

    #[test]
    fn a_result_is_written_as_the_spec_reads_it_and_keeps_what_it_does_not_name() {
        let r = CreateMessageResult::text("m-1", "hello");
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"role": "assistant", "content": {"type": "text", "text": "hello"},
                   "model": "m-1", "stopReason": "endTurn"})
        );
        let read: CreateMessageResult = serde_json::from_value(json!({
            "role": "assistant", "model": "m", "stopReason": "toolUse",
            "content": [{"type": "tool_use", "id": "u1", "name": "f", "input": {}}],
            "_meta": {"trace": "t"}
        }))
        .unwrap();
        assert_eq!(read.stop_reason.as_deref(), Some("toolUse"));
        assert_eq!(read.content[0]["type"], "tool_use");
        assert_eq!(read.extra["_meta"], json!({"trace": "t"}));
        assert_eq!(read.text_content(), "");
        // Tool use goes as a list, even alone.
        let again = serde_json::to_value(&read).unwrap();
        assert_eq!(again["content"][0]["type"], "tool_use");
    }
}
