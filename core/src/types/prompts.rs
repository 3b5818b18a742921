//! Prompts, their list, and `prompts/get`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::jsonrpc::RawJson;

/// A prompt the server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// Its name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<Value>>,
    /// Icons to show for it, exactly as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<RawJson>,
    /// `_meta`, exactly as sent.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<RawJson>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One page of `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// The prompts on this page.
    pub prompts: Vec<Prompt>,
    /// The cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The prompt's messages.
    #[serde(default)]
    pub messages: Vec<Value>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
