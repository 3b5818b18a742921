//! Tools: listing them and calling them, each call checked against the tool's schemas from the
//! last complete `tools/list` (feature `schemas`, on by default).
//!
//! A listing keeps the tools' schemas, each compiled at the first check against it; a call of
//! a listed tool that declares an `outputSchema` then fails with [`Error::Schema`] when its
//! result has no `structuredContent` or one that does not match (the result kept in the
//! error). A tool not
//! in the last list (or with no list yet, or since `notifications/tools/list_changed`) is not
//! checked: the client does not list tools on its own for that, as a listing costs a round trip
//! per page. Arguments are checked before
//! sending only when [`CallOptions::check_arguments`] asks; then the tools are listed first if
//! they never were.

use mcpwire_core::typed_result;
use mcpwire_core::types::{CallToolResult, ListToolsResult, Tool};
use mcpwire_core::McpCall;
use serde_json::Value;

use super::call_options::CallOptions;
use super::handle::Client;
use crate::error::Error;

impl Client {
    /// Every tool, over all pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        self.list_tools_with(CallOptions::default()).await
    }

    /// Every tool, over all pages, with options. The tools' schemas are kept for the
    /// calls that follow, each compiled at its first check (feature `schemas`).
    pub async fn list_tools_with(&self, opts: CallOptions) -> Result<Vec<Tool>, Error> {
        let raw = self.send_call(&opts, McpCall::list_tools()).await?;
        let tools = typed_result::<ListToolsResult>(&raw, "tools/list")?.tools;
        #[cfg(feature = "schemas")]
        {
            let compiled = mcpwire_core::schema::ToolSchemas::compile(&tools);
            self.shared.lock().tool_schemas = Some(std::sync::Arc::new(compiled));
        }
        Ok(tools)
    }

    /// Calls a tool. An `isError` result is `Ok`: the tool ran and reported failure. A result
    /// that breaks the tool's `outputSchema` is [`Error::Schema`] (feature `schemas`).
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
        // A handshake-era server that runs tool calls as tasks marks in its list the tools
        // that must be called in task mode: the tools are listed first if they never were.
        let wants_list = self.shared.lock().conn.wants_tool_list();
        if wants_list {
            self.list_tools_with(CallOptions::default().timeout(opts.timeout))
                .await?;
        }
        #[cfg(feature = "schemas")]
        if opts.check_arguments {
            if self.tool_schemas().is_none() {
                self.list_tools_with(CallOptions::default().timeout(opts.timeout))
                    .await?;
            }
            if let Some(schemas) = self.tool_schemas() {
                schemas
                    .check_input(name, Some(&arguments))
                    .map_err(|error| Error::Schema {
                        error,
                        result: None,
                    })?;
            }
        }
        let call = McpCall::call_tool(name, Some(arguments));
        let raw = self.send_call(&opts, call).await?;
        let result: CallToolResult = typed_result(&raw, "tools/call")?;
        #[cfg(feature = "schemas")]
        if let Some(schemas) = self.tool_schemas() {
            if let Err(error) = schemas.check_output(name, &result) {
                let result = Some(Box::new(result));
                return Err(Error::Schema { error, result });
            }
        }
        Ok(result)
    }

    /// The tools' compiled schemas from the last complete `tools/list`, if any (feature
    /// `schemas`): a host can check a result or arguments of its own with them.
    #[cfg(feature = "schemas")]
    pub fn tool_schemas(&self) -> Option<std::sync::Arc<mcpwire_core::schema::ToolSchemas>> {
        self.shared.lock().tool_schemas.clone()
    }
}
