//! Resource subscriptions in the stateless era (2026-07-28), which removed
//! `resources/subscribe` and `resources/unsubscribe`: a [`McpCall::subscribe_resource`] there
//! opens a `subscriptions/listen` asking for `resourceSubscriptions: [uri]`, so that a
//! subscription means the same in both eras.
//!
//! - The subscribe call ends when the server acknowledges the listen: with `{}` when the
//!   acknowledgement names the resource, with [`CallError::Declined`] when it leaves it out
//!   (the listen is then ended); if the listen ends first, with how it ended.
//! - `notifications/resources/updated` on the listen arrive as the plain
//!   [`ServerNotification::ResourceUpdated`], as in the handshake era; the acknowledgement is
//!   the connection's own and is not reported.
//! - [`McpCall::unsubscribe_resource`] ends the listen (`notifications/cancelled` on stdio, its
//!   stream closed over HTTP) and ends at once.
//! - The listen is the connection's own: it ends without a `CallDone`. When the server ends it
//!   after the acknowledgement, or its stream is lost, a [`Diagnostic::SubscriptionEnded`]
//!   says so (subscribe again to follow the resource).
//!
//! One listen per resource keeps each subscription's end its own.

use std::time::Instant;

use serde_json::{json, Map, Value};

use super::{ClientProtocol, Sub};
use crate::connection::protocol::call::params::raw;
use crate::connection::protocol::notifications::subscription_of;
use crate::connection::protocol::vocabulary::calls::McpCall;
use crate::connection::protocol::vocabulary::events::{
    CallError, CallId, CallOptions, ClientError, Diagnostic, Event, ServerNotification,
};
use crate::jsonrpc::{Notification, RawJson};

fn empty() -> RawJson {
    raw(&Map::new())
}

impl ClientProtocol {
    /// `resources/subscribe` in the stateless era (see the module's text).
    pub(super) fn subscribe_by_listen(
        &mut self,
        now: Instant,
        call: &McpCall,
    ) -> Result<CallId, ClientError> {
        let uri = uri_of(call)?;
        let id = CallId(self.engine.reserve_id()?);
        match self.resource_subs.by_uri.get(&uri).copied() {
            Some(listen) => {
                let sub = self
                    .resource_subs
                    .by_listen
                    .get_mut(&listen)
                    .expect("one entry each way");
                if sub.acknowledged {
                    self.events.push_back(Event::CallDone {
                        call: id,
                        outcome: Ok(empty()),
                    });
                } else {
                    sub.waiting.push(id);
                }
            }
            None => {
                let asked = json!({ "resourceSubscriptions": [uri] });
                let listen = self.call(now, &McpCall::listen(asked), CallOptions::default())?;
                self.resource_subs.by_uri.insert(uri.clone(), listen);
                let sub = Sub {
                    uri,
                    waiting: vec![id],
                    acknowledged: false,
                };
                self.resource_subs.by_listen.insert(listen, sub);
            }
        }
        Ok(id)
    }

    /// `resources/unsubscribe` in the stateless era: the resource's listen ends; the call ends
    /// at once.
    pub(super) fn unsubscribe_by_listen(
        &mut self,
        now: Instant,
        call: &McpCall,
    ) -> Result<CallId, ClientError> {
        let uri = uri_of(call)?;
        let id = CallId(self.engine.reserve_id()?);
        if let Some(listen) = self.resource_subs.by_uri.remove(&uri) {
            let sub = self.resource_subs.by_listen.remove(&listen);
            for waiting in sub.into_iter().flat_map(|s| s.waiting) {
                let reason = Some(format!("unsubscribed from {uri}"));
                let cancelled = crate::rpc::LocalError::Cancelled { reason };
                self.events.push_back(Event::CallDone {
                    call: waiting,
                    outcome: Err(CallError::Local(cancelled)),
                });
            }
            self.resource_subs.ended.push(listen);
            self.cancel(now, listen, Some("unsubscribed".into()))?;
        }
        self.events.push_back(Event::CallDone {
            call: id,
            outcome: Ok(empty()),
        });
        Ok(id)
    }

    /// A notification from the server: the acknowledgement of one of our own listens is ours
    /// (taken: `true`, and not reported).
    pub(super) fn resource_sub_acknowledgement(&mut self, now: Instant, n: &Notification) -> bool {
        if n.method != "notifications/subscriptions/acknowledged" {
            return false;
        }
        let Some(listen) = subscription_of(n) else {
            return false;
        };
        let Some(sub) = self.resource_subs.by_listen.get_mut(&listen) else {
            return false;
        };
        let honoured: Option<Value> = n.params_as::<Value>().ok();
        let taken = honoured
            .as_ref()
            .and_then(|p| p.pointer("/notifications/resourceSubscriptions"))
            .and_then(Value::as_array)
            .is_some_and(|uris| uris.iter().any(|u| u.as_str() == Some(sub.uri.as_str())));
        sub.acknowledged = true;
        let waiting = std::mem::take(&mut sub.waiting);
        let outcome = match taken {
            true => Ok(empty()),
            false => Err(CallError::Declined(format!(
                "the server acknowledged the subscription without the resource {}",
                sub.uri
            ))),
        };
        for call in waiting {
            let outcome = outcome.clone();
            self.events.push_back(Event::CallDone { call, outcome });
        }
        if !taken {
            let uri = sub.uri.clone();
            self.resource_subs.by_listen.remove(&listen);
            self.resource_subs.by_uri.remove(&uri);
            self.resource_subs.ended.push(listen);
            // The engine refuses only a call that already ended, which needs nothing more.
            let _ = self.engine.cancel(now, listen.0, None);
        }
        true
    }

    /// A notification on its way to the application: one sent on our own listen is reported
    /// as the handshake era reports it.
    pub(super) fn resource_sub_notification(&self, n: ServerNotification) -> ServerNotification {
        match n {
            ServerNotification::ForSubscription {
                subscription,
                notification,
            } if self.resource_subs.by_listen.contains_key(&subscription) => *notification,
            other => other,
        }
    }

    /// Whether `call` is a `subscriptions/listen` the connection made to carry resource
    /// subscriptions.
    pub(super) fn is_resource_listen(&self, call: CallId) -> bool {
        self.resource_subs.by_listen.contains_key(&call) || self.resource_subs.ended.contains(&call)
    }

    /// A call ended: whether it is one of our own listens (then nothing is reported for it,
    /// and the subscribe calls waiting for it end with how it ended).
    pub(super) fn resource_listen_ended(
        &mut self,
        call: CallId,
        outcome: &Result<RawJson, CallError>,
    ) -> bool {
        if let Some(at) = self.resource_subs.ended.iter().position(|c| *c == call) {
            self.resource_subs.ended.swap_remove(at);
            return true;
        }
        let Some(sub) = self.resource_subs.by_listen.remove(&call) else {
            return false;
        };
        self.resource_subs.by_uri.remove(&sub.uri);
        let reason = match outcome {
            Ok(_) => "the server ended it".to_owned(),
            Err(e) => e.to_string(),
        };
        if sub.acknowledged {
            let d = Diagnostic::SubscriptionEnded {
                uri: sub.uri,
                reason,
            };
            self.events.push_back(Event::Diagnostic(d));
        } else {
            let outcome = match outcome {
                Err(e) => Err(e.clone()),
                Ok(_) => Err(CallError::Declined(format!(
                    "the server ended the subscription to {} before acknowledging it",
                    sub.uri
                ))),
            };
            for call in sub.waiting {
                let outcome = outcome.clone();
                self.events.push_back(Event::CallDone { call, outcome });
            }
        }
        true
    }
}

/// The `uri` a subscribe or unsubscribe call names.
fn uri_of(call: &McpCall) -> Result<String, ClientError> {
    call.params()
        .and_then(|p| p.get("uri").and_then(Value::as_str).map(str::to_owned))
        .ok_or_else(|| ClientError::InvalidArgument("a subscription needs a resource's uri".into()))
}
