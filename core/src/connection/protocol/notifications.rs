//! The server's notifications, typed, and those of a subscription (stateless era) told apart by
//! its id.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::call::params::META_SUBSCRIPTION;
use super::vocabulary::events::{CallId, ServerNotification};
use crate::jsonrpc::{Id, Notification};
use crate::types::LoggingMessageParams;

/// The subscription a stateless-era notification belongs to, from its `_meta`.
pub(crate) fn subscription_of(n: &Notification) -> Option<CallId> {
    #[derive(Deserialize)]
    struct P {
        #[serde(rename = "_meta", default)]
        meta: Option<Map<String, Value>>,
    }
    let p: P = n.params_as().ok()?;
    let id = p.meta?.get(META_SUBSCRIPTION)?.clone();
    let id: Id = serde_json::from_value(id).ok()?;
    id.as_i64().map(CallId)
}

pub(crate) fn typed_notification(n: Notification) -> ServerNotification {
    if let Some(subscription) = subscription_of(&n) {
        if n.method == "notifications/subscriptions/acknowledged" {
            let notifications = n
                .params_as::<Value>()
                .ok()
                .and_then(|p| p.get("notifications").cloned())
                .unwrap_or(Value::Null);
            return ServerNotification::SubscriptionAcknowledged {
                subscription,
                notifications,
            };
        }
        return ServerNotification::ForSubscription {
            subscription,
            notification: Box::new(typed_unsubscribed(n)),
        };
    }
    typed_unsubscribed(n)
}

fn typed_unsubscribed(n: Notification) -> ServerNotification {
    match n.method.as_str() {
        "notifications/tools/list_changed" => ServerNotification::ToolsListChanged,
        "notifications/prompts/list_changed" => ServerNotification::PromptsListChanged,
        "notifications/resources/list_changed" => ServerNotification::ResourcesListChanged,
        "notifications/resources/updated" => {
            #[derive(Deserialize)]
            struct P {
                uri: String,
            }
            match n.params_as::<P>() {
                Ok(p) => ServerNotification::ResourceUpdated { uri: p.uri },
                Err(_) => ServerNotification::Other(n),
            }
        }
        "notifications/elicitation/complete" => {
            #[derive(Deserialize)]
            struct P {
                #[serde(rename = "elicitationId")]
                elicitation_id: String,
            }
            match n.params_as::<P>() {
                Ok(p) => ServerNotification::ElicitationComplete {
                    elicitation_id: p.elicitation_id,
                },
                Err(_) => ServerNotification::Other(n),
            }
        }
        "notifications/message" => match n.params_as::<LoggingMessageParams>() {
            Ok(p) => ServerNotification::Log(p),
            Err(_) => ServerNotification::Other(n),
        },
        _ => ServerNotification::Other(n),
    }
}
