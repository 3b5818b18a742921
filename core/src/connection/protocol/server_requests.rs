//! Which of the server's requests the client serves: those its capabilities declare.

use serde_json::Value;

use super::events::ServerRequest;
use crate::jsonrpc::{codes, ErrorObject, Id};
use crate::types::ClientCapabilities;

/// The request to surface to the application, or the error that refuses it (the one the
/// protocol prescribes: an undeclared elicitation mode is invalid params, anything else not
/// declared is an unknown method).
pub(crate) fn admit(
    caps: &ClientCapabilities,
    id: Id,
    method: &str,
    params: Value,
) -> Result<ServerRequest, ErrorObject> {
    match method {
        "elicitation/create" => {
            let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
            if elicitation_mode_declared(caps.elicitation.as_ref(), mode) {
                return Ok(ServerRequest::Elicitation { id, params });
            }
            Err(ErrorObject::new(
                codes::INVALID_PARAMS,
                format!("elicitation mode {mode:?} was not declared by the client"),
            ))
        }
        "sampling/createMessage" if caps.sampling.is_some() => {
            Ok(ServerRequest::Sampling { id, params })
        }
        "roots/list" if caps.roots.is_some() => Ok(ServerRequest::Roots { id }),
        other => Err(ErrorObject::new(
            codes::METHOD_NOT_FOUND,
            format!("method not found: {other}"),
        )),
    }
}

/// Whether the client's `elicitation` capability covers `mode` (`{}` means form only).
fn elicitation_mode_declared(cap: Option<&Value>, mode: &str) -> bool {
    let Some(cap) = cap else { return false };
    let has_form = cap.get("form").is_some();
    let has_url = cap.get("url").is_some();
    match mode {
        "form" => has_form || !has_url,
        "url" => has_url,
        _ => false,
    }
}
