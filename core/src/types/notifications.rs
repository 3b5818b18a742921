//! The params of the notifications a client reads: progress and log lines.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `notifications/progress` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressParams {
    /// The token of the request this reports on.
    pub progress_token: Value,
    /// Progress so far (increases with each notification).
    pub progress: f64,
    /// The total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `_meta`, when the server sent one.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// `notifications/message` params (a log line from the server).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageParams {
    /// Severity (`debug` … `emergency`).
    pub level: String,
    /// The logger's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The payload.
    #[serde(default)]
    pub data: Value,
    /// `_meta`, when the server sent one.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}
