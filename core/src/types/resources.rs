//! Resources and resource templates, their lists, and `resources/read`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::jsonrpc::RawJson;

/// A resource the server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type (`text/html;profile=mcp-app` for an MCP App's UI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons to show for it, exactly as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<RawJson>,
    /// `_meta`, exactly as sent.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<RawJson>,
    /// Other members (`annotations`, `size`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One page of `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// The resources on this page.
    pub resources: Vec<Resource>,
    /// The cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A resource template the server offers (RFC 6570 URI template).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// Its URI template, e.g. `file:///{path}`.
    pub uri_template: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of the resources it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons to show for it, exactly as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<RawJson>,
    /// `_meta`, exactly as sent.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<RawJson>,
    /// Other members (`annotations`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One page of `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// The templates on this page.
    pub resource_templates: Vec<ResourceTemplate>,
    /// The cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// The contents (text or blob).
    #[serde(default)]
    pub contents: Vec<Value>,
    /// Other members.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
