//! The demo server's input rounds in the stateless era: `ask` and `survey` answer
//! `input_required` until the inputs they asked for come back with the request state they gave.

use serde_json::{json, Value};

use super::words::{
    decode_state, invalid, raw, text_result, with_result_type, ASK_STATE, META_CAPABILITIES,
    SURVEY_STATE_1, SURVEY_STATE_2,
};
use super::DemoServer;
use crate::jsonrpc::{ErrorObject, RawJson};

impl DemoServer {
    /// `ask` and `survey` in the stateless era: `input_required` rounds, each checking the
    /// `requestState` it gave and the inputs it asked for.
    pub(super) fn modern_input_tool(&self, params: &Value) -> Result<RawJson, ErrorObject> {
        let declared = params
            .pointer(&format!(
                "/_meta/{}/elicitation",
                META_CAPABILITIES.replace('/', "~1")
            ))
            .is_some();
        if !declared {
            return Err(ErrorObject {
                code: crate::types::codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                message: "this tool needs the elicitation capability".into(),
                data: Some(raw(&json!({"requiredCapabilities": {"elicitation": {}}}))),
            });
        }
        let state = params.get("requestState").and_then(Value::as_str);
        let responses = params.get("inputResponses");
        let answer = |key: &str| {
            responses
                .and_then(|r| r.get(key))
                .filter(|a| a.get("action").and_then(Value::as_str) == Some("accept"))
                .and_then(|a| {
                    a.pointer("/content/name")
                        .or_else(|| a.pointer("/content/color"))
                })
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let ask = |key: &str, message: &str, field: &str| {
            json!({ key: {"method": "elicitation/create", "params": {
                "mode": "form", "message": message,
                "requestedSchema": {"type": "object",
                    "properties": { field: {"type": "string", "default": "world"}},
                    "required": [field]}}}})
        };
        let round = |requests: Value, state: &str| {
            let head = json!({"resultType": "input_required", "inputRequests": requests});
            let text = head.to_string();
            let text = format!("{},\"requestState\":\"{state}\"}}", &text[..text.len() - 1]);
            Ok(RawJson::from_string(text).expect("a valid result"))
        };
        let stale = || Err(invalid("requestState does not match the inputs"));
        match params.get("name").and_then(Value::as_str) {
            Some("ask") => match (state, answer("name")) {
                (Some(s), None) if s == decode_state(ASK_STATE) => {
                    let action = responses
                        .and_then(|r| r.pointer("/name/action"))
                        .and_then(Value::as_str)
                        .unwrap_or("no answer");
                    Ok(with_result_type(&text_result(
                        &format!("the user chose {action}"),
                        false,
                    )))
                }
                (None, _) => {
                    let question = params
                        .pointer("/arguments/question")
                        .and_then(Value::as_str)
                        .unwrap_or("What is your name?");
                    // The state holds escapes, so a client that re-encodes it instead of
                    // echoing it byte for byte would still match; the check below compares
                    // the decoded text, as a server must.
                    round(ask("name", question, "name"), ASK_STATE)
                }
                (Some(s), Some(name)) if s == decode_state(ASK_STATE) => Ok(with_result_type(
                    &text_result(&format!("hello, {name}"), false),
                )),
                _ => stale(),
            },
            _ => match (state, answer("name"), answer("color")) {
                (None, _, _) => round(ask("name", "Your name?", "name"), SURVEY_STATE_1),
                (Some(SURVEY_STATE_1), Some(name), None) => round(
                    ask("color", "Your favourite colour?", "color"),
                    &format!("{SURVEY_STATE_2}:{name}"),
                ),
                (Some(s), None, Some(color)) if s.starts_with(SURVEY_STATE_2) => {
                    let name = &s[SURVEY_STATE_2.len() + 1..];
                    Ok(with_result_type(&text_result(
                        &format!("{name} likes {color}"),
                        false,
                    )))
                }
                _ => stale(),
            },
        }
    }
}
