//! A `tools/call` refused with `-32020` (its `Mcp-Param-*` headers missing or not matching the
//! tool's marks): the tools are listed again, so their marks are current, then the call is sent
//! once more (the server refused it before running it, so this repeats nothing). A second
//! mismatch, or a list that fails, ends the call with the server's error.

use std::collections::HashSet;
use std::time::Instant;

use super::ClientProtocol;
use crate::connection::protocol::era::ChosenEra;
use crate::connection::protocol::events::{CallError, CallId, CallOptions};
use crate::connection::protocol::input::Retry;
use crate::jsonrpc::{ErrorObject, RawJson};
use crate::rpc::LocalError;
use crate::types::codes::HEADER_MISMATCH;

/// A call's retry state and outcome, given back when they are not a mismatch to correct.
type NotAMismatch = (Option<Box<Retry>>, Result<RawJson, CallError>);

/// Calls waiting for the tools to be listed again.
#[derive(Debug, Default)]
pub(super) struct HeaderFix {
    /// The connection's own `tools/list`, in flight.
    list: Option<CallId>,
    /// The calls to send once more when it ends, with the error each met and when each gives
    /// up waiting (its own timeout, counted from the mismatch).
    waiting: Vec<(CallId, Box<Retry>, ErrorObject, Option<Instant>)>,
    /// Calls already sent once more for a mismatch.
    fixed: HashSet<CallId>,
    /// How the list ended (listed or not), until what waited goes on.
    ended: Option<bool>,
}

impl ClientProtocol {
    /// Takes a call whose `tools/call` met `-32020` for one corrected retry (over HTTP, in the
    /// stateless era, once per call). Gives the retry and outcome back when it is not that.
    pub(super) fn header_mismatch(
        &mut self,
        now: Instant,
        call: CallId,
        retry: Option<Box<Retry>>,
        outcome: Result<RawJson, CallError>,
    ) -> Option<NotAMismatch> {
        let eligible = self.over_http
            && self.handshake.era == Some(ChosenEra::Stateless)
            && !self.header_fix.fixed.contains(&call);
        let (retry, error) = match (retry, outcome) {
            (Some(retry), Err(CallError::Server(e)))
                if eligible && e.code == HEADER_MISMATCH && retry.method == "tools/call" =>
            {
                (retry, e)
            }
            (retry, outcome) => return Some((retry, outcome)),
        };
        self.header_fix.fixed.insert(call);
        let deadline = now.checked_add(retry.opts.timeout);
        self.header_fix.waiting.push((call, retry, error, deadline));
        if self.header_fix.list.is_none() {
            match self.list(now, "tools/list", "tools", CallOptions::default()) {
                Ok(list) => self.header_fix.list = Some(list),
                Err(_) => self.header_fix.ended = Some(false),
            }
        }
        None
    }

    /// A call ended: whether it is the connection's own `tools/list` (then what waited for it
    /// goes on when [`resume_header_fixes`](Self::resume_header_fixes) runs).
    pub(super) fn header_call_ended(&mut self, call: CallId, listed: bool) -> bool {
        self.header_fix.fixed.remove(&call);
        if self.header_fix.list != Some(call) {
            return false;
        }
        self.header_fix.list = None;
        self.header_fix.ended = Some(listed);
        true
    }

    /// After the list ended: each waiting call is sent once more (or, when the list failed,
    /// ends with the server's error).
    pub(super) fn resume_header_fixes(&mut self, now: Instant) {
        let Some(listed) = self.header_fix.ended.take() else {
            return;
        };
        for (call, retry, error, _) in std::mem::take(&mut self.header_fix.waiting) {
            if !listed {
                self.end_call(call, Err(CallError::Server(error)));
                continue;
            }
            if let Err(e) = self.send_retry(now, call, retry) {
                self.end_call(call, Err(e));
            }
        }
    }

    /// Ends a call that waits for the list, if `call` is one (cancelled or closed).
    pub(super) fn end_header_fix(&mut self, call: CallId, error: LocalError) -> bool {
        let Some(i) = self
            .header_fix
            .waiting
            .iter()
            .position(|(c, ..)| *c == call)
        else {
            return false;
        };
        self.header_fix.waiting.remove(i);
        self.end_call(call, Err(CallError::Local(error)));
        true
    }

    /// When the first waiting call gives up.
    pub(super) fn header_fix_deadline(&self) -> Option<Instant> {
        self.header_fix.waiting.iter().filter_map(|w| w.3).min()
    }

    /// Ends the waiting calls whose own timeout has passed.
    pub(super) fn expire_header_fixes(&mut self, now: Instant) {
        let (due, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.header_fix.waiting)
            .into_iter()
            .partition(|w| w.3.is_some_and(|d| d <= now));
        self.header_fix.waiting = rest;
        for (call, retry, ..) in due {
            let timeout = LocalError::Timeout {
                which: crate::rpc::Deadline::Idle,
                despite_progress: false,
                method: retry.method.into(),
                after: retry.opts.timeout,
            };
            self.end_call(call, Err(CallError::Local(timeout)));
        }
    }

    /// Ends every call that waits for the list (the connection closes).
    pub(super) fn end_header_fixes(&mut self, error: &LocalError) {
        for (call, ..) in std::mem::take(&mut self.header_fix.waiting) {
            self.end_call(call, Err(CallError::Local(error.clone())));
        }
    }
}
