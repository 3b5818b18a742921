//! The demo's words: the `_meta` keys and states it reads, the results and errors it answers
//! with, and the question its asking tools put.

use serde_json::{json, Map, Value};

use crate::jsonrpc::{codes, ErrorObject, RawJson};

/// The elicitation `ask` and `ask-task` send: the tool's `question` (or "What is your
/// name?"), a form of one required `name` defaulting to `world`.
pub(super) fn name_question(args: &Value) -> Value {
    let question = args
        .get("question")
        .and_then(Value::as_str)
        .unwrap_or("What is your name?");
    json!({
        "mode": "form",
        "message": question,
        "requestedSchema": {"type": "object",
            "properties": {"name": {"type": "string", "default": "world"}},
            "required": ["name"]}
    })
}

/// The prefix of the generated tools' names.
pub(super) const GENERATED: &str = "tool-";

/// Generated tool `n` (see [`DemoConfig::extra_tools`]).
pub(super) fn generated_tool(n: usize) -> Value {
    json!({"name": format!("{GENERATED}{n}"),
           "description": format!("Generated tool {n}: returns its message."),
           "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}},
                           "required": ["message"]}})
}

/// The stateless era's version and `_meta` keys.
pub(super) const MODERN: &str = "2026-07-28";
pub(super) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(super) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub(super) const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";
pub(super) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub(super) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// The JSON pointer to a `_meta` key of a request's params.
pub(super) fn meta_pointer(key: &str) -> String {
    format!("/_meta/{}", key.replace('/', "~1"))
}

/// The `requestState` of each round of the input-asking tools: opaque to the client, checked
/// here when it comes back.
pub(super) const ASK_STATE: &str = r"ask:round-1:\u00e9";
pub(super) const SURVEY_STATE_1: &str = "survey:1";
pub(super) const SURVEY_STATE_2: &str = "survey:2";

pub(super) const INSTRUCTIONS: &str =
    "A demo server: try the echo, add, slow, ask, survey, fail and big \
     tools, the task tools build, crawl, approve and doomed, and ask-task, which asks its \
     question as a task the client runs.";

/// The text a JSON string literal (without its quotes) stands for.
pub(super) fn decode_state(literal: &str) -> String {
    serde_json::from_str(&format!("\"{literal}\"")).expect("a valid literal")
}

/// A complete stateless-era result: the same object with `"resultType":"complete"` first.
pub(super) fn with_result_type(result: &RawJson) -> RawJson {
    let text = result.get();
    let body = text.trim_start().strip_prefix('{').unwrap_or("}");
    let joined = if body.trim_start().starts_with('}') {
        format!("{{\"resultType\":\"complete\"{body}")
    } else {
        format!("{{\"resultType\":\"complete\",{body}")
    };
    RawJson::from_string(joined).unwrap_or_else(|_| result.clone())
}

/// The `ask` tool's result from the client's elicitation answer.
pub(super) fn ask_answer(answer: &RawJson) -> RawJson {
    let v: Value = answer.parse().unwrap_or(Value::Null);
    match v.get("action").and_then(Value::as_str) {
        Some("accept") => {
            let name = v
                .pointer("/content/name")
                .and_then(Value::as_str)
                .unwrap_or("stranger");
            text_result(&format!("hello, {name}"), false)
        }
        Some(action @ ("decline" | "cancel")) => {
            text_result(&format!("the user chose {action}"), false)
        }
        _ => text_result("the client's answer had no valid action", true),
    }
}

pub(super) fn text_result(text: &str, is_error: bool) -> RawJson {
    let mut m = Map::new();
    m.insert("content".into(), json!([{"type": "text", "text": text}]));
    if is_error {
        m.insert("isError".into(), Value::Bool(true));
    }
    raw(&m)
}

pub(super) fn invalid(message: &str) -> ErrorObject {
    ErrorObject::new(codes::INVALID_PARAMS, message)
}

pub(super) fn raw<T: serde::Serialize + ?Sized>(value: &T) -> RawJson {
    RawJson::new(value).expect("JSON values serialize")
}
