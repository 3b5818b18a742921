//! Completion: suggestions for a prompt's or a resource template's argument.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The suggestions of a `completion/complete` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values, at most 100.
    #[serde(default)]
    pub values: Vec<String>,
    /// How many values there are in all, when the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more values than these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}
