//! Tools: listing them and calling them. How a call goes is the core's (see
//! `mcpwire_core`'s tool calls): a call may wait for the tools to be listed first (a
//! handshake-era server that runs tool calls as tasks, or [`CallOptions::check_arguments`]
//! with no list yet), and with feature `schemas` (on by default) a call of a listed tool that
//! declares an `outputSchema` fails with [`Error::Schema`] when its result breaks it (the
//! result kept in the error). A tool not in the last list (or with no list yet, or since
//! `notifications/tools/list_changed`) is not checked.

use mcpwire_core::typed_result;
use mcpwire_core::types::{CallToolResult, ListToolsResult, Tool};
use mcpwire_core::{CallOptions, McpCall};
use serde_json::Value;

use super::handle::Client;
use crate::error::Error;

impl Client {
    /// Every tool, over all pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        self.list_tools_with(CallOptions::default()).await
    }

    /// Every tool, over all pages, with options. The connection keeps the tools' schemas for
    /// the calls that follow (feature `schemas`).
    pub async fn list_tools_with(&self, opts: CallOptions) -> Result<Vec<Tool>, Error> {
        let raw = self.send_call(&opts, McpCall::list_tools()).await?;
        Ok(typed_result::<ListToolsResult>(&raw, "tools/list")?.tools)
    }

    /// Calls a tool with the default options: a 30 s timeout without an answer
    /// ([`CallOptions::timeout`]), no progress, no limit on the total time. An `isError` result
    /// is `Ok`: the tool ran and reported failure. A result that breaks the tool's
    /// `outputSchema` is [`Error::Schema`] (feature `schemas`). For other options, see
    /// [`call_tool_with`](Self::call_tool_with).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
        self.call_tool_with(name, arguments, CallOptions::default())
            .await
    }

    /// Calls a tool with options (timeouts, progress, the arguments' check).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        opts: CallOptions,
    ) -> Result<CallToolResult, Error> {
        let call = McpCall::call_tool(name, Some(arguments));
        let raw = self.send_call(&opts, call).await?;
        Ok(typed_result(&raw, "tools/call")?)
    }

    /// The tools' compiled schemas from the last complete `tools/list`, if any (feature
    /// `schemas`): a host can check a result or arguments of its own with them.
    #[cfg(feature = "schemas")]
    pub fn tool_schemas(&self) -> Option<std::sync::Arc<mcpwire_core::schema::ToolSchemas>> {
        self.shared.lock().conn.tool_schemas()
    }
}
