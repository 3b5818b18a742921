//! The demo server's stateless-era requests (2026-07-28): each judged on its own `_meta`, with
//! no handshake: `server/discover`, `subscriptions/listen`, the tools that ask in
//! `input_required` rounds, and the rest served as in the handshake era.

use std::time::Instant;

use serde_json::{json, Value};

use super::words::{
    raw, with_result_type, INSTRUCTIONS, META_SERVER_INFO, META_SUBSCRIPTION, MODERN,
};
use super::DemoServer;
use crate::jsonrpc::{codes, ErrorObject, Request};

impl DemoServer {
    /// A stateless-era request: judged on its own `_meta`, no handshake.
    pub(super) fn modern_request(
        &mut self,
        now: Instant,
        r: &Request,
        params: &Value,
        version: Value,
    ) {
        if version != MODERN {
            let supported: Vec<&str> = std::iter::once(MODERN)
                .chain(crate::types::HANDSHAKE_VERSIONS)
                .collect();
            let error = ErrorObject {
                code: crate::types::codes::UNSUPPORTED_PROTOCOL_VERSION,
                message: "Unsupported protocol version".into(),
                data: Some(raw(&json!({"supported": supported, "requested": version}))),
            };
            let _ = self.engine.respond(now, &r.id, Err(error));
            return;
        }
        if let Some(answer) = self.modern_tasks(now, r, params) {
            let _ = self.engine.respond(now, &r.id, answer);
            return;
        }
        let answer = match r.method.as_ref() {
            "server/discover" => Ok(raw(&json!({
                "supportedVersions": [MODERN, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
                "capabilities": Self::capabilities(),
                "instructions": INSTRUCTIONS,
                "ttlMs": 60_000,
                "cacheScope": "public",
                "_meta": { META_SERVER_INFO: Self::server_info() }
            }))),
            "subscriptions/listen" => {
                let asked = params.get("notifications").cloned().unwrap_or(json!({}));
                let mut honoured = serde_json::Map::new();
                for key in [
                    "toolsListChanged",
                    "promptsListChanged",
                    "resourcesListChanged",
                ] {
                    if asked.get(key) == Some(&Value::Bool(true)) {
                        honoured.insert(key.into(), Value::Bool(true));
                    }
                }
                // Only the demo's own resources can change.
                let resources: Vec<&Value> = asked
                    .get("resourceSubscriptions")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|u| u.as_str().is_some_and(|u| u.starts_with("demo://")))
                    .collect();
                if !resources.is_empty() {
                    honoured.insert("resourceSubscriptions".into(), json!(resources));
                }
                let honoured = Value::Object(honoured);
                let ack = json!({"notifications": honoured, "_meta": { META_SUBSCRIPTION: r.id }});
                let _ = self.engine.notify(
                    now,
                    "notifications/subscriptions/acknowledged",
                    Some(raw(&ack)),
                );
                self.listens.push((r.id.clone(), honoured));
                return;
            }
            "tools/call"
                if self.config.host_requests
                    && matches!(
                        params.get("name").and_then(Value::as_str),
                        Some("sample" | "roots")
                    ) =>
            {
                let answer = self.modern_host_tool(params);
                let _ = self.engine.respond(now, &r.id, answer);
                return;
            }
            "tools/call"
                if matches!(
                    params.get("name").and_then(Value::as_str),
                    Some("ask" | "survey")
                ) =>
            {
                // Its results carry their own resultType.
                let answer = self.modern_input_tool(params);
                let _ = self.engine.respond(now, &r.id, answer);
                return;
            }
            "ping" | "initialize" | "logging/setLevel" => Err(ErrorObject::new(
                codes::METHOD_NOT_FOUND,
                format!("{} is not part of {MODERN}", r.method),
            )),
            _ => match self.serve(now, r) {
                Some(answer) => answer,
                None => return,
            },
        };
        let answer = answer.map(|result| with_result_type(&result));
        let _ = self.engine.respond(now, &r.id, answer);
    }
}
