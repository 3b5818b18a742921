//! Tool calls held until the connection's own `tools/list` ends. One list serves every call
//! that waits for it; it is the connection's, and its outcome reaches no caller. A call is held:
//! - before it is sent, when the list decides how it goes: a handshake-era server that runs
//!   tool calls as tasks marks in its list the tools that must be called in task mode, and no
//!   list was had yet; or the call asks for its arguments to be checked (feature `schemas`)
//!   and no list is known. It is sent once the tools are listed, under the call it already
//!   is; when the list fails it ends with the list's error;
//! - after the server refused it with `-32020` (its `Mcp-Param-*` headers missing or not
//!   matching the tool's marks; over HTTP, in the stateless era): the tools are listed again,
//!   so their marks are current, then the call is sent once more (the server refused it
//!   before running it, so this repeats nothing). A second mismatch, or a list that fails,
//!   ends the call with the server's error.
//!
//! A held call gives up at its own timeout, counted from when it was held, and ends when it
//! is cancelled or the connection closes.

use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::{ClientProtocol, HeldCall, Waiting};
use crate::connection::protocol::call::input::Retry;
use crate::connection::protocol::call::params::ParamsRef;
use crate::connection::protocol::era::ChosenEra;
use crate::connection::protocol::vocabulary::events::{
    CallError, CallId, CallOptions, ClientError,
};
use crate::jsonrpc::RawJson;
use crate::rpc::LocalError;
use crate::types::codes::HEADER_MISMATCH;

/// A call's retry state and outcome, given back when they are not a mismatch to correct.
type NotAMismatch = (Option<Box<Retry>>, Result<RawJson, CallError>);

impl ClientProtocol {
    /// Holds a `tools/call` not yet sent until the tools are listed; lists them unless a list
    /// is in flight.
    pub(super) fn hold_tool_call(
        &mut self,
        now: Instant,
        params: Map<String, Value>,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        let call = CallId(self.engine.reserve_id()?);
        let deadline = now.checked_add(held_timeout(&opts));
        let list_timeout = opts.timeout;
        let waiting = Waiting::Unsent {
            params,
            opts,
            since: now,
        };
        self.held.calls.push(HeldCall {
            call,
            waiting,
            deadline,
        });
        self.list_tools_for_held(now, list_timeout);
        self.pump(now);
        Ok(call)
    }

    /// Starts the connection's own `tools/list`, unless one is in flight.
    fn list_tools_for_held(&mut self, now: Instant, timeout: Duration) {
        if self.held.list.is_some() {
            return;
        }
        let opts = CallOptions::default().timeout(timeout);
        match self.list(now, "tools/list", "tools", opts) {
            Ok(list) => self.held.list = Some(list),
            Err(e) => self.held.ended = Some(Err(CallError::of_refused(e))),
        }
    }

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
            && !self.held.fixed.contains(&call);
        let (retry, error) = match (retry, outcome) {
            (Some(retry), Err(CallError::Server(e)))
                if eligible && e.code == HEADER_MISMATCH && retry.method == "tools/call" =>
            {
                (retry, e)
            }
            (retry, outcome) => return Some((retry, outcome)),
        };
        self.held.fixed.insert(call);
        let deadline = now.checked_add(retry.opts.timeout);
        self.held.calls.push(HeldCall {
            call,
            waiting: Waiting::HeaderFix { retry, error },
            deadline,
        });
        self.list_tools_for_held(now, CallOptions::default().timeout);
        None
    }

    /// Whether `call` is the connection's own `tools/list`, in flight.
    pub(super) fn is_own_list(&self, call: CallId) -> bool {
        self.held.list == Some(call)
    }

    /// Whether `call` is one the connection made for itself, which no host's command returned:
    /// its own `tools/list`, or a `subscriptions/listen` carrying resource subscriptions.
    pub(super) fn is_connections_own(&self, call: CallId) -> bool {
        self.is_own_list(call) || self.is_resource_listen(call)
    }

    /// A call ended: whether it is the connection's own `tools/list` (then what waited for it
    /// goes on when [`resume_held`](Self::resume_held) runs).
    pub(super) fn own_list_ended(
        &mut self,
        call: CallId,
        outcome: &Result<RawJson, CallError>,
    ) -> bool {
        self.held.fixed.remove(&call);
        if self.held.list != Some(call) {
            return false;
        }
        self.held.list = None;
        self.held.ended = Some(outcome.as_ref().map(|_| ()).map_err(Clone::clone));
        true
    }

    /// After the list ended: each held call is sent (or sent once more), or, when the list
    /// failed, ends.
    pub(super) fn resume_held(&mut self, now: Instant) {
        let Some(listed) = self.held.ended.take() else {
            return;
        };
        for HeldCall { call, waiting, .. } in std::mem::take(&mut self.held.calls) {
            let sent = match (&listed, waiting) {
                (
                    Ok(()),
                    Waiting::Unsent {
                        params,
                        opts,
                        since,
                    },
                ) => {
                    let opts = CallOptions {
                        max_total: opts.max_total.map(|t| t.saturating_sub(now - since)),
                        ..opts
                    };
                    let params = Some(ParamsRef::Map(&params));
                    match self.send_tool_call(now, Some(call), params, opts) {
                        Ok(_) => Ok(()),
                        Err(e) => Err(CallError::of_refused(e)),
                    }
                }
                (Ok(()), Waiting::HeaderFix { retry, .. }) => self.send_retry(now, call, retry),
                (Err(e), Waiting::Unsent { .. }) => Err(e.clone()),
                (Err(_), Waiting::HeaderFix { error, .. }) => Err(CallError::Server(error)),
            };
            if let Err(e) = sent {
                self.end_call(call, Err(e));
            }
        }
    }

    /// Ends a held call, if `call` is one (cancelled).
    pub(super) fn end_held(&mut self, now: Instant, call: CallId, error: LocalError) -> bool {
        let Some(i) = self.held.calls.iter().position(|h| h.call == call) else {
            return false;
        };
        self.held.calls.remove(i);
        self.end_call(call, Err(CallError::Local(error)));
        self.drop_unwanted_list(now);
        true
    }

    /// When no call waits for the connection's own list any more, it is cancelled: nothing
    /// is left in flight that nobody awaits.
    fn drop_unwanted_list(&mut self, now: Instant) {
        let Some(list) = self.held.list.filter(|_| self.held.calls.is_empty()) else {
            return;
        };
        let id = self.current.get(&list).copied().unwrap_or(list.0);
        let reason = Some("no call waits for the list any more".to_owned());
        let _ = self.engine.cancel(now, id, reason);
        self.pump(now);
    }

    /// When the first held call gives up.
    pub(super) fn held_deadline(&self) -> Option<Instant> {
        self.held.calls.iter().filter_map(|h| h.deadline).min()
    }

    /// Ends the held calls whose own timeout has passed.
    pub(super) fn expire_held(&mut self, now: Instant) {
        let (due, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held.calls)
            .into_iter()
            .partition(|h| h.deadline.is_some_and(|d| d <= now));
        self.held.calls = rest;
        for HeldCall { call, waiting, .. } in due {
            let (which, after) = match &waiting {
                Waiting::Unsent { opts, .. } => match opts.max_total {
                    Some(total) if total < opts.timeout => (crate::rpc::Deadline::Total, total),
                    _ => (crate::rpc::Deadline::Idle, opts.timeout),
                },
                Waiting::HeaderFix { retry, .. } => {
                    (crate::rpc::Deadline::Idle, retry.opts.timeout)
                }
            };
            let timeout = LocalError::Timeout {
                which,
                despite_progress: false,
                method: "tools/call".into(),
                after,
            };
            self.end_call(call, Err(CallError::Local(timeout)));
        }
        self.drop_unwanted_list(now);
    }

    /// Ends every held call (the connection closes).
    pub(super) fn end_all_held(&mut self, error: &LocalError) {
        for HeldCall { call, .. } in std::mem::take(&mut self.held.calls) {
            self.end_call(call, Err(CallError::Local(error.clone())));
        }
    }
}

/// How long a call not yet sent waits for the list: its idle timeout, or its total if less.
fn held_timeout(opts: &CallOptions) -> Duration {
    opts.max_total.map_or(opts.timeout, |t| t.min(opts.timeout))
}
