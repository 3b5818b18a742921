//! Tools: what a complete `tools/list` tells the connection, and how a `tools/call` goes.
//!
//! A complete list says which tools are trusted to be repeatable; over HTTP, in the stateless
//! era, which tools' `x-mcp-header` marks break the rules (they are left out) and which headers
//! the others' calls carry; in the handshake era, which tools must be called in task mode; and
//! (feature `schemas`) the tools' schemas, each compiled at its first check.
//!
//! A `tools/call` made with [`McpCall`] is held until the tools are listed when the list
//! decides how it goes (see the `held` module). A call of a listed tool that declares an
//! `outputSchema` ends with [`CallError::Schema`] when its result has no `structuredContent` or
//! one that does not match; with [`CallOptions::check_arguments`] its arguments are checked
//! before anything is sent. A tool not in the last list (or with no list yet, or since
//! `notifications/tools/list_changed`) is not checked: the connection does not list the tools
//! for that alone, as a listing costs a round trip per page. A call made with
//! [`request`](ClientProtocol::request) is sent as it is.

use std::time::Instant;

use super::ClientProtocol;
use crate::connection::protocol::call::at_most_once::repeatable_tools;
use crate::connection::protocol::call::params::ParamsRef;
use crate::connection::protocol::call::tool_headers::{check_tools, ToolHeaders};
use crate::connection::protocol::era::ChosenEra;
use crate::connection::protocol::vocabulary::calls::McpCall;
#[cfg(feature = "schemas")]
use crate::connection::protocol::vocabulary::events::CallError;
use crate::connection::protocol::vocabulary::events::{
    CallId, CallOptions, ClientError, Diagnostic, Event,
};
use crate::jsonrpc::{Notification, RawJson};

impl ClientProtocol {
    /// A complete `tools/list` result, as the caller gets it.
    pub(super) fn tools_listed(&mut self, mut all: RawJson) -> RawJson {
        if self.over_http && self.handshake.era == Some(ChosenEra::Stateless) {
            let (rewritten, checked) = check_tools(&all);
            self.tool_headers = checked.headers;
            for (tool, reason) in checked.dropped {
                let d = Diagnostic::ToolDropped { tool, reason };
                self.events.push_back(Event::Diagnostic(d));
            }
            if let Some(rewritten) = rewritten {
                all = rewritten;
            }
        }
        if self.config.trust_tool_annotations {
            self.repeatable_tools = repeatable_tools(&all);
        }
        if self.handshake.era == Some(ChosenEra::Handshake) {
            self.task_tools = super::task_calls::task_required_tools(&all);
        }
        self.tools_listed = true;
        #[cfg(feature = "schemas")]
        {
            let schemas = crate::schema::ToolSchemas::from_list(&all);
            self.tool_schemas = Some(std::sync::Arc::new(schemas));
        }
        all
    }

    /// The tools' schemas from the last complete `tools/list`, until the tools change
    /// (feature `schemas`).
    #[cfg(feature = "schemas")]
    pub fn tool_schemas(&self) -> Option<std::sync::Arc<crate::schema::ToolSchemas>> {
        self.tool_schemas.clone()
    }

    /// A notification from the server: when the tools changed, their schemas are known again
    /// only at the next listing.
    pub(super) fn tools_changed(&mut self, n: &Notification) {
        #[cfg(feature = "schemas")]
        if n.method == "notifications/tools/list_changed" {
            self.tool_schemas = None;
        }
        #[cfg(not(feature = "schemas"))]
        let _ = n;
    }

    /// A `tools/call` made with [`McpCall`]: held until the tools are listed when the list
    /// decides how it goes, sent otherwise.
    pub(super) fn call_tool(
        &mut self,
        now: Instant,
        call: &McpCall,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        let params = call.params_ref();
        let for_tasks = !opts.detach_task && self.wants_tool_list();
        #[cfg(feature = "schemas")]
        let for_check = opts.check_arguments && self.tool_schemas.is_none();
        #[cfg(not(feature = "schemas"))]
        let for_check = false;
        if for_tasks || for_check {
            self.check_open("tools/call")?;
            let params = params.map(ParamsRef::to_map).unwrap_or_default();
            return self.hold_tool_call(now, params, opts);
        }
        self.send_tool_call(now, None, params, opts)
    }

    /// Sends a `tools/call` (for `held`, the call the connection held until now): its
    /// arguments checked first when asked, its result checked when it ends.
    pub(super) fn send_tool_call(
        &mut self,
        now: Instant,
        held: Option<CallId>,
        params: Option<ParamsRef<'_>>,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        #[cfg(feature = "schemas")]
        let tool = params.and_then(ParamsRef::tool);
        #[cfg(feature = "schemas")]
        if let (true, Some(schemas), Some(tool)) = (opts.check_arguments, &self.tool_schemas, tool)
        {
            let arguments = params.and_then(ParamsRef::arguments);
            if let Err(error) = schemas.check_input(tool, arguments) {
                let call = match held {
                    Some(call) => call,
                    None => CallId(self.engine.reserve_id()?),
                };
                self.end_call(
                    call,
                    Err(CallError::Schema {
                        error,
                        result: None,
                    }),
                );
                return Ok(call);
            }
        }
        #[cfg(feature = "schemas")]
        let checked = !opts.detach_task
            && tool.is_some_and(|t| {
                self.tool_schemas
                    .as_ref()
                    .is_some_and(|s| s.has_output_schema(t))
            });
        let method = std::borrow::Cow::Borrowed("tools/call");
        let call = self.request_ref(now, held, method, params, opts)?;
        #[cfg(feature = "schemas")]
        if let (true, Some(tool)) = (checked, tool) {
            self.output_checks.insert(call, tool.to_owned());
        }
        Ok(call)
    }

    /// A call's outcome, checked against its tool's `outputSchema` if it is a tool call with
    /// one (feature `schemas`).
    #[cfg(feature = "schemas")]
    pub(super) fn check_output(
        &mut self,
        call: CallId,
        outcome: Result<RawJson, CallError>,
    ) -> Result<RawJson, CallError> {
        if self.output_checks.is_empty() {
            return outcome;
        }
        let Some(tool) = self.output_checks.remove(&call) else {
            return outcome;
        };
        let (Ok(result), Some(schemas)) = (&outcome, &self.tool_schemas) else {
            return outcome;
        };
        match schemas.check_output_raw(&tool, result) {
            Ok(()) => outcome,
            Err(error) => {
                let result = outcome.ok();
                Err(CallError::Schema { error, result })
            }
        }
    }

    /// The `x-mcp-header` marks of the last `tools/list` (HTTP, stateless era).
    pub(crate) fn tool_headers(&self) -> &ToolHeaders {
        &self.tool_headers
    }
}
