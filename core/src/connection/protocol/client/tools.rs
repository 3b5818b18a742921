//! What a complete `tools/list` tells the connection: which tools are trusted to be repeatable,
//! and (over HTTP, in the stateless era) which tools' `x-mcp-header` marks break the rules,
//! leaving them out, and which headers the others' calls carry.

use super::ClientProtocol;
use crate::connection::protocol::at_most_once::repeatable_tools;
use crate::connection::protocol::era::ChosenEra;
use crate::connection::protocol::events::{Diagnostic, Event};
use crate::connection::protocol::tool_headers::{check_tools, ToolHeaders};
use crate::jsonrpc::RawJson;

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
        all
    }

    /// The `x-mcp-header` marks of the last `tools/list` (HTTP, stateless era).
    pub(crate) fn tool_headers(&self) -> &ToolHeaders {
        &self.tool_headers
    }
}
