//! The demo's tools that ask the client something of its host, offered when
//! [`DemoConfig::host_requests`](super::DemoConfig::host_requests) is on: `sample` asks for a
//! sampling (`sampling/createMessage`), `roots` for the client's roots (`roots/list`). Each
//! answers with what the client gave, or the error it answered with, in words: what a test of a
//! client's handlers needs to see what reached the server. In the stateless era each asks in an
//! `input_required` round.

use std::time::Instant;

use serde_json::{json, Value};

use super::words::{raw, text_result, with_result_type, META_CAPABILITIES};
use super::DemoServer;
use crate::jsonrpc::{ErrorObject, Id, RawJson};
use crate::rpc::{Origin, Outcome, Reply, RequestOptions};

/// The method `tool` asks with, and its params.
fn request_of(tool: &str, args: &Value) -> Option<(&'static str, Value)> {
    match tool {
        "sample" => {
            let prompt = args.get("prompt").and_then(Value::as_str).unwrap_or("hi");
            Some((
                "sampling/createMessage",
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                       "maxTokens": 20}),
            ))
        }
        "roots" => Some(("roots/list", json!({}))),
        _ => None,
    }
}

/// The tool's text for the client's answer to `method`.
fn told(method: &str, outcome: Result<&Value, String>) -> RawJson {
    let answer = match outcome {
        Ok(answer) => answer,
        Err(words) => return text_result(&words, true),
    };
    if method == "roots/list" {
        let uris: Vec<&str> = answer
            .get("roots")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("uri").and_then(Value::as_str))
            .collect();
        return text_result(&format!("roots: {}", uris.join(", ")), false);
    }
    let content = answer.get("content");
    let blocks: Vec<&Value> = match content {
        Some(Value::Array(list)) => list.iter().collect(),
        Some(one) => vec![one],
        None => Vec::new(),
    };
    let text: Vec<&str> = blocks
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let model = answer.get("model").and_then(Value::as_str).unwrap_or("?");
    text_result(&format!("{model} said: {}", text.join(" ")), false)
}

/// The words for an error the client answered with (as `ask` says them).
fn refused(e: &ErrorObject) -> String {
    format!("the client refused: {e}")
}

impl DemoServer {
    /// `sample` or `roots` (handshake era): the request to the client goes out; the call is
    /// answered when the client's answer comes ([`host_answered`](Self::host_answered)).
    pub(super) fn ask_host(
        &mut self,
        now: Instant,
        call: &Id,
        tool: &str,
        args: &Value,
    ) -> Option<Result<RawJson, ErrorObject>> {
        let (method, params) = request_of(tool, args)?;
        let opts = RequestOptions::new()
            .timeout(self.config.elicitation_timeout)
            .origin(Origin::PROTOCOL);
        match self.engine.request(now, method, Some(raw(&params)), opts) {
            Ok(id) => {
                self.host_asks.insert(id, call.clone());
                None
            }
            Err(e) => Some(Ok(text_result(&format!("cannot ask: {e}"), true))),
        }
    }

    /// The client's answer to our request `id`, if it was one of these: the call waiting for
    /// it gets its result. Returns whether it was.
    pub(super) fn host_answered(
        &mut self,
        now: Instant,
        id: i64,
        method: &str,
        outcome: &Outcome,
    ) -> bool {
        let Some(call) = self.host_asks.remove(&id) else {
            return false;
        };
        let result = match outcome {
            Ok(Reply::Result(r)) => told(method, Ok(&r.parse().unwrap_or(Value::Null))),
            Ok(Reply::Error(e)) => told(method, Err(refused(e))),
            Err(e) => told(method, Err(format!("no answer: {e}"))),
        };
        let _ = self.engine.respond(now, &call, Ok(result));
        true
    }

    /// `sample` or `roots` in the stateless era: an `input_required` round asking for it, then
    /// the answer in words.
    pub(super) fn modern_host_tool(&self, params: &Value) -> Result<RawJson, ErrorObject> {
        let tool = params.get("name").and_then(Value::as_str).unwrap_or("");
        let args = params.get("arguments").cloned().unwrap_or(json!({}));
        let (method, asked) = request_of(tool, &args).expect("only sample and roots come here");
        let capability = if method == "roots/list" {
            "roots"
        } else {
            "sampling"
        };
        let declared = params
            .pointer(&format!(
                "/_meta/{}/{capability}",
                META_CAPABILITIES.replace('/', "~1")
            ))
            .is_some();
        if !declared {
            return Err(ErrorObject {
                code: crate::types::codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                message: format!("this tool needs the {capability} capability"),
                data: Some(raw(&json!({"requiredCapabilities": {capability: {}}}))),
            });
        }
        match params.pointer("/inputResponses/host") {
            None => {
                let head = json!({"resultType": "input_required",
                    "inputRequests": {"host": {"method": method, "params": asked}},
                    "requestState": tool});
                Ok(raw(&head))
            }
            Some(answer) => Ok(with_result_type(&told(method, Ok(answer)))),
        }
    }
}
