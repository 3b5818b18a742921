//! `mcpwire watch`: the server's notifications and log messages, one a line, until Ctrl-C (or
//! `--count N`, or `--for SECONDS`).
//!
//! In the handshake era notifications come unasked and `--resource URI` sends
//! `resources/subscribe`; in the stateless era it opens one `subscriptions/listen` for the
//! three list changes and the `--resource` URIs (`resourceSubscriptions`), and reports the
//! subset the server acknowledged. Log messages are shown at `--log-level` and above.

use std::time::Duration;

use clap::Args;
use futures_lite::future;
use mcpwire::{CallOptions, ChosenEra, Client, ServerNotification};
use serde_json::{json, Value};

use crate::exit_codes;
use crate::failure::Failure;
use crate::server_logs;

/// `mcpwire watch`.
#[derive(Args, Debug)]
pub(crate) struct WatchArgs {
    /// Also follow this resource's updates (repeatable): resources/subscribe, or in the
    /// stateless era resourceSubscriptions of subscriptions/listen.
    #[arg(long = "resource", value_name = "URI")]
    resources: Vec<String>,
    /// Stop after N notifications (log messages count).
    #[arg(long, value_name = "N")]
    count: Option<u64>,
    /// Stop after SECONDS.
    #[arg(long = "for", value_name = "SECONDS")]
    duration: Option<f64>,
    /// One JSON object a line: {"method": …, "params": …}.
    #[arg(long)]
    pub(crate) json: bool,
}

/// A notification as a method and params; `None` for those that are not the server's own.
fn as_message(n: &ServerNotification) -> Option<(String, Value)> {
    Some(match n {
        ServerNotification::ToolsListChanged => {
            ("notifications/tools/list_changed".into(), json!({}))
        }
        ServerNotification::PromptsListChanged => {
            ("notifications/prompts/list_changed".into(), json!({}))
        }
        ServerNotification::ResourcesListChanged => {
            ("notifications/resources/list_changed".into(), json!({}))
        }
        ServerNotification::ResourceUpdated { uri } => (
            "notifications/resources/updated".into(),
            json!({ "uri": uri }),
        ),
        ServerNotification::Log(m) => (
            "notifications/message".into(),
            serde_json::to_value(m).unwrap_or(Value::Null),
        ),
        ServerNotification::Other(n) => {
            let params = n
                .params
                .as_ref()
                .and_then(|p| serde_json::from_str(p.get()).ok());
            (n.method.clone(), params.unwrap_or(Value::Null))
        }
        ServerNotification::ForSubscription { notification, .. } => {
            return as_message(notification)
        }
        _ => return None,
    })
}

/// The line for one notification, or `None` for one not shown (a log message below `min`).
fn line(n: &ServerNotification, min: server_logs::LogLevel, json: bool) -> Option<String> {
    if let ServerNotification::ForSubscription { notification, .. } = n {
        return line(notification, min, json);
    }
    if let ServerNotification::Log(m) = n {
        server_logs::line(m, min)?;
    }
    let (method, params) = as_message(n)?;
    if json {
        return Some(json!({"method": method, "params": params}).to_string());
    }
    Some(match n {
        ServerNotification::Log(m) => server_logs::line(m, min)?,
        ServerNotification::ResourceUpdated { uri } => format!("{method} {uri}"),
        _ if params.as_object().is_none_or(|p| p.is_empty()) => method,
        _ => format!("{method} {params}"),
    })
}

/// Prints notifications until the bound or the end of the connection (Ctrl-C is seen by the
/// caller, which closes the connection).
pub(crate) async fn run(
    client: &Client,
    a: WatchArgs,
    min: server_logs::LogLevel,
    timeout: Duration,
) -> Result<u8, Failure> {
    let limit = a
        .duration
        .map(|s| {
            Duration::try_from_secs_f64(s).map_err(|_| {
                Failure::new(
                    exit_codes::USAGE,
                    "--for must be a positive number of seconds",
                )
            })
        })
        .transpose()?;
    let mut notes = client.notifications();
    let stateless = client.era() == Some(ChosenEra::Stateless);
    if !stateless {
        for uri in &a.resources {
            let opts = CallOptions::default().timeout(timeout);
            client.subscribe_resource(uri, opts).await?;
            errln!("subscribed to {uri}");
        }
    }
    let print = async {
        let mut shown = 0u64;
        while a.count.is_none_or(|n| shown < n) {
            let Some(n) = notes.next().await else {
                errln!("the connection ended");
                return Ok(exit_codes::OK);
            };
            match &n {
                ServerNotification::SubscriptionAcknowledged { notifications, .. } => {
                    errln!("{}", listening_for(notifications));
                }
                ServerNotification::Dropped { count } => {
                    errln!("({count} notifications dropped: read too slowly)");
                }
                n => {
                    if let Some(text) = line(n, min, a.json) {
                        match a.json {
                            true => crate::output::json_line(&text),
                            false => outln!("{text}"),
                        }
                        shown += 1;
                    }
                }
            }
        }
        Ok(exit_codes::OK)
    };
    let listen = async {
        if !stateless {
            return future::pending().await;
        }
        let mut asked = json!({"toolsListChanged": true, "promptsListChanged": true,
                               "resourcesListChanged": true});
        if !a.resources.is_empty() {
            asked["resourceSubscriptions"] = json!(a.resources);
        }
        match client.listen(asked).await {
            Ok(_) => {
                errln!("the server ended the subscription");
                Ok(exit_codes::OK)
            }
            Err(e) => Err(listen_refused(e)),
        }
    };
    let bound = async {
        match limit {
            Some(d) => {
                smol::Timer::after(d).await;
                Ok(exit_codes::OK)
            }
            None => future::pending().await,
        }
    };
    // Ctrl-C ends it too, with 0 (see `one_server::run`).
    future::or(print, future::or(listen, bound)).await
}

/// The failure of `subscriptions/listen`: refused as unknown (-32601), it names the method
/// and the era that needs no such request (the server's error stays as it came for `--json`).
/// What the server acknowledged it will send on a `subscriptions/listen`, in words: "listening
/// for tool list changes, updates of file:///a".
fn listening_for(acknowledged: &Value) -> String {
    const KNOWN: [(&str, &str); 3] = [
        ("toolsListChanged", "tool list changes"),
        ("promptsListChanged", "prompt list changes"),
        ("resourcesListChanged", "resource list changes"),
    ];
    let empty = serde_json::Map::new();
    let all = acknowledged.as_object().unwrap_or(&empty);
    let on = |v: &Value| !(v.is_null() || v.as_bool() == Some(false));
    let mut parts: Vec<String> = KNOWN
        .iter()
        .filter(|(key, _)| all.get(*key).is_some_and(on))
        .map(|(_, words)| (*words).to_owned())
        .collect();
    let uris: Vec<&str> = all
        .get("resourceSubscriptions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !uris.is_empty() {
        parts.push(format!("updates of {}", uris.join(", ")));
    }
    // What this client does not know by name, by its own.
    let others = all.iter().filter(|(key, value)| {
        on(value) && *key != "resourceSubscriptions" && !KNOWN.iter().any(|(k, _)| k == key)
    });
    parts.extend(others.map(|(key, _)| key.clone()));
    match parts.is_empty() {
        true => "listening, for none of the notifications asked for (the server took none)".into(),
        false => format!("listening for {}", parts.join(", ")),
    }
}

fn listen_refused(e: mcpwire::Error) -> Failure {
    let unknown = e.server_error().is_some_and(|s| s.code == -32601);
    let mut f = Failure::from(e);
    if unknown {
        f.message = format!(
            "the server does not offer subscriptions/listen, the stateless era's way to \
             receive notifications ({}); try --era handshake, where they come unasked",
            f.message
        );
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_one_a_line_as_text_or_json() {
        let min = server_logs::LogLevel::Info;
        let n = ServerNotification::ToolsListChanged;
        assert_eq!(
            line(&n, min, false).as_deref(),
            Some("notifications/tools/list_changed")
        );
        let n = ServerNotification::ResourceUpdated {
            uri: "a://b".into(),
        };
        assert_eq!(
            line(&n, min, true).as_deref(),
            Some(r#"{"method":"notifications/resources/updated","params":{"uri":"a://b"}}"#)
        );
        let log = |level: &str| {
            ServerNotification::Log(mcpwire::core::types::LoggingMessageParams {
                level: level.into(),
                logger: None,
                data: json!("x"),
                meta: None,
            })
        };
        assert_eq!(line(&log("info"), min, false).as_deref(), Some("[info] x"));
        assert_eq!(line(&log("debug"), min, false), None);
        assert_eq!(line(&log("debug"), min, true), None);
    }

    #[test]
    fn what_a_listen_was_acknowledged_for_in_words() {
        let said = listening_for(&json!({
            "toolsListChanged": true,
            "promptsListChanged": false,
            "resourceSubscriptions": ["file:///a", "file:///b"],
            "somethingNew": true
        }));
        assert_eq!(
            said,
            "listening for tool list changes, updates of file:///a, file:///b, somethingNew"
        );
        assert!(listening_for(&json!({})).contains("none of the notifications"));
    }
}
