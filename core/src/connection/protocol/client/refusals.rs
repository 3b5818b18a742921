//! The two refusals a stateless-era server may answer any request with, and what the connection
//! does about each, at most once per request (so it can never loop).
//!
//! - **`-32021`, a missing client capability.** When every capability the error's
//!   `data.requiredCapabilities` names is one this client can serve, and one it did not declare
//!   for the request (one of [`ClientConfig::capabilities_on_demand`](super::ClientConfig)),
//!   the request is sent once more with a new id, declaring them; the call's later requests
//!   (input rounds, pages) declare them too. Otherwise the call ends with
//!   [`CallError::MissingCapability`] naming them.
//! - **`-32022`, an unsupported protocol version, after detection** (a deploy behind a load
//!   balancer). When `data.supported` still holds a stateless-era version this client speaks,
//!   the newest is chosen and the request is sent once more with a new id; refused a second
//!   time, the call ends with the server's error. When it holds only other versions (the
//!   handshake era's), the call ends with [`CallError::VersionChanged`] and the connection
//!   closes saying so: the handshake is not made in the middle of a connection, whose calls
//!   and subscriptions were made in the other era. A new connection (the Manager makes one,
//!   detecting the era again) speaks what the server now speaks.
//!
//! What is sent again is what the connection keeps of the request: an input round's call
//! (`tools/call`, `prompts/get`, `resources/read`) or a call safe to repeat (the lists,
//! `completion/complete`, …). A request it keeps nothing of (a raw request of another method, a
//! listen) ends with the server's error.

use std::borrow::Cow;
use std::time::Instant;

use serde_json::Value;

use super::{CallState, ClientProtocol, Repeat};
use crate::connection::protocol::call::params::StatelessMeta;
use crate::connection::protocol::era::ChosenEra;
use crate::connection::protocol::vocabulary::events::{CallError, CallId, Event};
use crate::jsonrpc::{ErrorObject, RawJson};
use crate::types::codes::{MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION};
use crate::types::{ClientCapabilities, STATELESS_VERSIONS};

/// The error's `data`, read as JSON.
fn data(error: &ErrorObject) -> Value {
    error
        .data
        .as_ref()
        .and_then(|d| d.parse().ok())
        .unwrap_or(Value::Null)
}

impl ClientProtocol {
    /// The stateless `_meta` the requests of `call` carry (`None`: a call's first request).
    pub(super) fn meta_for(&self, call: Option<CallId>) -> &StatelessMeta {
        match (&self.refusals.wide, call) {
            (Some((_, wide)), Some(c)) if self.refusals.widened.contains(&c) => wide,
            _ => &self.meta,
        }
    }

    /// The capabilities `call`'s requests declare: what the server may ask it for.
    pub(super) fn declared_for(&self, call: CallId) -> &ClientCapabilities {
        match &self.refusals.wide {
            Some((all, _)) if self.refusals.widened.contains(&call) => all,
            _ => &self.config.capabilities,
        }
    }

    /// The capabilities of the handshake era's `initialize`: every one, those on demand too
    /// (a session's capabilities are fixed at its start).
    pub(crate) fn session_capabilities(&self) -> &ClientCapabilities {
        match &self.refusals.wide {
            Some((all, _)) => all,
            None => &self.config.capabilities,
        }
    }

    /// A call's request ended with `outcome`. A refusal the connection answers by sending the
    /// request once more is taken (`None`: the call goes on, or ended here); anything else is
    /// given back.
    pub(super) fn refused(
        &mut self,
        now: Instant,
        state: CallState,
        outcome: Result<RawJson, CallError>,
    ) -> Option<(CallState, Result<RawJson, CallError>)> {
        if self.handshake.era != Some(ChosenEra::Stateless) {
            return Some((state, outcome));
        }
        let error = match &outcome {
            Err(CallError::Server(e)) | Err(CallError::MissingCapability { error: e, .. }) => e,
            _ => return Some((state, outcome)),
        };
        let call = state.call;
        match error.code {
            MISSING_REQUIRED_CLIENT_CAPABILITY => {
                let required = data(error).get("requiredCapabilities").cloned();
                let serves = |r: &Value| {
                    let all = self.refusals.wide.as_ref().map(|(all, _)| all);
                    all.is_some_and(|all| all.covers(r))
                };
                let widen = !self.refusals.widened.contains(&call)
                    && required
                        .as_ref()
                        .is_some_and(|r| serves(r) && !self.config.capabilities.covers(r));
                if !widen {
                    return Some((state, outcome));
                }
                self.refusals.widened.insert(call);
                self.send_again(now, state, outcome)
            }
            UNSUPPORTED_PROTOCOL_VERSION => {
                let supported: Vec<String> = match data(error).get("supported") {
                    Some(Value::Array(v)) => v
                        .iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect(),
                    _ => Vec::new(),
                };
                if supported.is_empty() {
                    return Some((state, outcome));
                }
                let still = STATELESS_VERSIONS
                    .iter()
                    .any(|ours| supported.iter().any(|s| s == ours));
                if still {
                    // With one stateless version spoken, the newest both speak is ours already:
                    // a node that refused it is one the next attempt may not reach.
                    if !self.refusals.version_retried.insert(call) {
                        return Some((state, outcome));
                    }
                    return self.send_again(now, state, outcome);
                }
                let error = error.clone();
                let reason = format!(
                    "the server now speaks only {} (it refused {}); the handshake is not made \
                     again in the middle of a connection: connect again to speak it",
                    supported.join(", "),
                    STATELESS_VERSIONS.join(", ")
                );
                let left = Event::EraLeft {
                    supported: supported.clone(),
                };
                self.end_call(call, Err(CallError::VersionChanged { supported, error }));
                self.events.push_back(left);
                self.close(now, &reason);
                None
            }
            _ => Some((state, outcome)),
        }
    }

    /// Sends `state`'s request once more under a new id, from what the connection kept of it;
    /// gives `outcome` back when it kept nothing.
    fn send_again(
        &mut self,
        now: Instant,
        mut state: CallState,
        outcome: Result<RawJson, CallError>,
    ) -> Option<(CallState, Result<RawJson, CallError>)> {
        let call = state.call;
        if let Some(retry) = state.retry.take() {
            if let Err(e) = self.send_round(now, call, retry, false) {
                self.end_call(call, Err(e));
            }
            return None;
        }
        let Some(repeat) = state.repeat.as_deref() else {
            return Some((state, outcome));
        };
        let Repeat {
            method,
            params,
            opts,
            ..
        } = repeat.clone();
        let method: Cow<'static, str> = method;
        match self.send(now, Some(call), method, params.as_ref(), &opts, &[]) {
            Ok(id) => {
                self.calls.insert(id, state);
                self.current.insert(call, id);
            }
            Err(e) => self.end_call(call, Err(CallError::of_refused(e))),
        }
        None
    }
}
