//! The answer to an elicitation, and an answer filled from a form's defaults.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The answer to an elicitation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// `accept`, `decline` or `cancel`.
    pub action: ElicitAction,
    /// The user's answers (form mode, on accept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
    /// `_meta`, sent as given.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted.
    Accept,
    /// Said no.
    Decline,
    /// Dismissed.
    Cancel,
}

impl ElicitResult {
    /// A declined elicitation.
    pub fn decline() -> Self {
        ElicitResult {
            meta: None,
            action: ElicitAction::Decline,
            content: None,
        }
    }
}

/// Why [`fill_from_defaults`] could not answer a form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("required fields without a default: {}", missing.join(", "))]
pub struct MissingDefaults {
    /// The required properties that have no default.
    pub missing: Vec<String>,
}

/// Answers an elicitation form from the requested schema's defaults: every property with a
/// `default` takes it; a required property without one is an error naming it.
pub fn fill_from_defaults(requested_schema: &Value) -> Result<Map<String, Value>, MissingDefaults> {
    let mut content = Map::new();
    let mut missing = Vec::new();
    let empty = Map::new();
    let properties = requested_schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, schema) in properties {
        if let Some(default) = schema.get("default") {
            content.insert(name.clone(), default.clone());
        }
    }
    if let Some(required) = requested_schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !content.contains_key(name) {
                missing.push(name.to_owned());
            }
        }
    }
    if missing.is_empty() {
        Ok(content)
    } else {
        Err(MissingDefaults { missing })
    }
}
