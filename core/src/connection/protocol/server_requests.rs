//! Which of the server's requests the client serves: those its capabilities declare, with
//! params that keep the rules the client must check before the application sees them.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::vocabulary::events::ServerRequest;
use crate::jsonrpc::{codes, ErrorObject, Id};
use crate::types::{ClientCapabilities, CreateMessageParams};

/// Why a server's request is not surfaced, with the error that answers it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Refusal {
    /// The client's capabilities do not declare it (the error the protocol prescribes: an
    /// undeclared elicitation mode is invalid params, anything else an unknown method).
    Undeclared(ErrorObject),
    /// Declared, but its params break a rule the client checks (sampling with tools the client
    /// did not declare, tool messages out of order): invalid params.
    Invalid(ErrorObject),
}

impl Refusal {
    /// The error that answers the request.
    pub(crate) fn into_error(self) -> ErrorObject {
        match self {
            Refusal::Undeclared(e) | Refusal::Invalid(e) => e,
        }
    }
}

/// A stateless-era result's input requests (`inputRequests`), by key, each as the server wrote
/// it (read with [`read_input`]).
pub(crate) type InputRequests = BTreeMap<String, Box<RawValue>>;

/// One input request: its method, its params, and (for an elicitation) its fields in the order
/// the server wrote them.
pub(crate) fn read_input(raw: &RawValue) -> (String, Value, Vec<String>) {
    #[derive(Deserialize)]
    struct Head {
        #[serde(default)]
        method: String,
        #[serde(default)]
        params: Option<Box<RawValue>>,
    }
    let Ok(head) = serde_json::from_str::<Head>(raw.get()) else {
        return (String::new(), Value::Null, Vec::new());
    };
    let params = head.params.as_deref();
    let value = params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null);
    let fields = match (head.method.as_str(), params) {
        ("elicitation/create", Some(p)) => field_order(p.get()),
        _ => Vec::new(),
    };
    (head.method, value, fields)
}

/// The names of an elicitation's requested fields (`requestedSchema.properties`) in the order
/// the server wrote them, read from its raw `params`: a person is asked them in that order
/// (parsed params keep their keys sorted).
pub(crate) fn field_order(params: &str) -> Vec<String> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "requestedSchema", default)]
        schema: Option<Schema>,
    }
    #[derive(Deserialize)]
    struct Schema {
        #[serde(default)]
        properties: Option<Keys>,
    }
    /// An object's keys, in order; its values skipped.
    struct Keys(Vec<String>);
    impl<'de> Deserialize<'de> for Keys {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Keys;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Keys, A::Error> {
                    let mut keys = Vec::new();
                    while let Some(key) = map.next_key::<String>()? {
                        map.next_value::<serde::de::IgnoredAny>()?;
                        if !keys.contains(&key) {
                            keys.push(key);
                        }
                    }
                    Ok(Keys(keys))
                }
            }
            d.deserialize_map(Visit)
        }
    }
    serde_json::from_str::<Params>(params)
        .ok()
        .and_then(|p| p.schema?.properties)
        .map_or_else(Vec::new, |k| k.0)
}

/// The request to surface to the application, or why it is refused; `fields`, an
/// elicitation's fields in the server's order (see [`field_order`]).
pub(crate) fn admit(
    caps: &ClientCapabilities,
    id: Id,
    method: &str,
    params: Value,
    fields: Vec<String>,
) -> Result<ServerRequest, Refusal> {
    match method {
        "elicitation/create" => {
            let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
            if elicitation_mode_declared(caps.elicitation.as_ref(), mode) {
                return Ok(ServerRequest::Elicitation { id, params, fields });
            }
            Err(Refusal::Undeclared(ErrorObject::new(
                codes::INVALID_PARAMS,
                format!("elicitation mode {mode:?} was not declared by the client"),
            )))
        }
        "sampling/createMessage" => match &caps.sampling {
            Some(declared) => {
                check_sampling(declared, &params).map_err(Refusal::Invalid)?;
                Ok(ServerRequest::Sampling { id, params })
            }
            None => Err(not_found(method)),
        },
        "roots/list" if caps.roots.is_some() => Ok(ServerRequest::Roots { id }),
        other => Err(not_found(other)),
    }
}

fn not_found(method: &str) -> Refusal {
    Refusal::Undeclared(ErrorObject::new(
        codes::METHOD_NOT_FOUND,
        format!("method not found: {method}"),
    ))
}

/// A sampling request the application is not to see: tools offered to a client that did not
/// declare `sampling.tools`, or tool messages that break the spec's rules. Params the types do
/// not read are left to the application (only the tool rules are the client's to check).
fn check_sampling(declared: &Value, params: &Value) -> Result<(), ErrorObject> {
    let has_tools = params.get("tools").is_some() || params.get("toolChoice").is_some();
    if has_tools && declared.get("tools").is_none() {
        return Err(ErrorObject::new(
            codes::INVALID_PARAMS,
            "sampling with tools was not declared",
        ));
    }
    match CreateMessageParams::deserialize(params) {
        Ok(p) => p.check_tool_messages(),
        Err(_) => Ok(()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_elicitations_fields_keep_the_servers_order() {
        let params = r#"{"mode":"form","message":"m","requestedSchema":{"type":"object",
            "properties":{"zip":{"type":"string"},"name":{"properties":{"x":1}},"age":{}}}}"#;
        assert_eq!(field_order(params), ["zip", "name", "age"]);
        assert_eq!(
            field_order(r#"{"message":"no schema"}"#),
            Vec::<String>::new()
        );
        assert_eq!(field_order("not json"), Vec::<String>::new());
        let request = format!(r#"{{"method":"elicitation/create","params":{params}}}"#);
        let raw = RawValue::from_string(request).unwrap();
        let (method, value, fields) = read_input(&raw);
        assert_eq!(method, "elicitation/create");
        assert_eq!(value["message"], "m");
        assert_eq!(fields, ["zip", "name", "age"]);
        let raw = RawValue::from_string(r#"{"method":"roots/list"}"#.into()).unwrap();
        assert_eq!(
            read_input(&raw),
            ("roots/list".into(), Value::Null, Vec::new())
        );
    }

    fn sampling(caps: &ClientCapabilities, params: Value) -> Result<ServerRequest, Refusal> {
        admit(
            caps,
            Id::Num(1),
            "sampling/createMessage",
            params,
            Vec::new(),
        )
    }

    #[test]
    fn sampling_with_tools_needs_the_declaration_and_well_formed_tool_messages() {
        let plain_caps = ClientCapabilities {
            sampling: Some(json!({})),
            ..Default::default()
        };
        let tool_caps = plain_caps.clone().with_sampling_tools();
        let plain = json!({"maxTokens": 5, "messages": [
            {"role": "user", "content": {"type": "text", "text": "hi"}}]});
        assert!(sampling(&plain_caps, plain).is_ok());
        let with_tools = json!({"maxTokens": 5, "messages": [],
            "tools": [{"name": "f", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "auto"}});
        let Err(Refusal::Invalid(e)) = sampling(&plain_caps, with_tools.clone()) else {
            panic!("tools not declared")
        };
        assert_eq!(e.code, codes::INVALID_PARAMS);
        assert!(sampling(&tool_caps, with_tools.clone()).is_ok());
        let mixed = json!({"maxTokens": 5, "tools": [], "messages": [
            {"role": "user", "content": [
                {"type": "tool_result", "toolUseId": "u", "content": []},
                {"type": "text", "text": "x"}]}]});
        let Err(Refusal::Invalid(e)) = sampling(&tool_caps, mixed) else {
            panic!("a tool result mixed with text")
        };
        assert_eq!(e.code, codes::INVALID_PARAMS);
        // Not declared at all: an unknown method, whatever the params.
        let none = ClientCapabilities::default();
        let Err(Refusal::Undeclared(e)) = sampling(&none, with_tools) else {
            panic!("sampling not declared")
        };
        assert_eq!(e.code, codes::METHOD_NOT_FOUND);
    }
}
