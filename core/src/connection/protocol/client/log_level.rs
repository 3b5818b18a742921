//! The log level in the stateless era (2026-07-28), which removed `logging/setLevel`: each
//! request asks for its own log messages with `io.modelcontextprotocol/logLevel` in its
//! `_meta`. A [`McpCall::set_log_level`] there sends nothing: every request from then on
//! carries the level, and the call ends at once. Without a level no request asks for logs, as
//! the revision says.

use serde_json::{Map, Value};

use super::ClientProtocol;
use crate::connection::protocol::call::params::raw;
use crate::connection::protocol::vocabulary::calls::McpCall;
use crate::connection::protocol::vocabulary::events::{CallId, ClientError, Event};
use crate::types::LOG_LEVELS as LEVELS;

impl ClientProtocol {
    /// `logging/setLevel` in the stateless era: the level goes on every request from now on;
    /// the call ends at once with an empty result.
    pub(super) fn request_log_level(&mut self, call: &McpCall) -> Result<CallId, ClientError> {
        let params = call.params();
        let level = params
            .as_ref()
            .and_then(|p| p.get("level"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if !LEVELS.contains(&level) {
            return Err(ClientError::InvalidArgument(format!(
                "log level {level:?} is none of {}",
                LEVELS.join(", ")
            )));
        }
        self.meta.set_log_level(Some(level));
        let call = CallId(self.engine.reserve_id()?);
        let outcome = Ok(raw(&Map::new()));
        self.events.push_back(Event::CallDone { call, outcome });
        Ok(call)
    }

    /// The log level each request asks for (stateless era), once one was set.
    pub fn log_level(&self) -> Option<&str> {
        self.meta.log_level()
    }
}
