//! Structured output, MCP Apps and the rest of the client surface end to end against the
//! built-in demo server, in both eras: a result that breaks its tool's `outputSchema` is a typed
//! error with the result kept, arguments are checked before sending when asked, the UI
//! extension is declared and a tool's `_meta.ui` and a `ui://` resource come through untouched.

mod common;

use std::sync::{Arc, Mutex};

#[cfg(feature = "schemas")]
use mcpwire::core::schema::{SchemaKind, SchemaViolation};
use mcpwire::core::types::{UI_EXTENSION, UI_MIME_TYPE};
#[cfg(feature = "schemas")]
use mcpwire::{CallOptions, Error};
use mcpwire::{ConnectOptions, Direction, Era, Handlers};
use serde_json::{json, Value};

/// A client of the demo server declaring the UI extension, and the requests it sends, as sent.
fn connect(era: Era) -> (mcpwire::Client, Arc<Mutex<Vec<Value>>>) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let log = sent.clone();
    let opts = ConnectOptions {
        era,
        handlers: Handlers::new().with_ui(),
        ..ConnectOptions::default()
    }
    .observer(move |direction: Direction, bytes: &[u8]| {
        let v: Value = serde_json::from_slice(bytes).unwrap_or_default();
        if direction == Direction::Outgoing && v.get("method").is_some() {
            log.lock().unwrap().push(v);
        }
    });
    (
        smol::block_on(mcpwire::connect_smol(&common::demo(), opts)).unwrap(),
        sent,
    )
}

#[cfg(feature = "schemas")]
fn tool_calls(sent: &Mutex<Vec<Value>>) -> usize {
    let sent = sent.lock().unwrap();
    sent.iter().filter(|m| m["method"] == "tools/call").count()
}

#[cfg(feature = "schemas")]
#[test]
fn structured_output_that_breaks_its_schema_is_a_typed_error_in_both_eras() {
    for era in [Era::Handshake, Era::Stateless] {
        let (client, _) = connect(era);
        smol::block_on(async {
            // Before any listing nothing is known of the schema: the result comes as sent.
            // (In the handshake era the demo server runs tool calls as tasks, so the client
            // lists its tools before the first call, to know which need task mode: the
            // schema is known from the start.)
            let first = client
                .call_tool("forecast", json!({"city": "Oslo", "break": "type"}))
                .await;
            match era {
                Era::Stateless => {
                    let unchecked = first.unwrap();
                    assert_eq!(unchecked.structured_content.unwrap()["temperature"], "warm");
                }
                _ => assert!(matches!(first, Err(Error::Schema { .. })), "{first:?}"),
            }

            client.list_tools().await.unwrap();
            let good = client
                .call_tool("forecast", json!({"city": "Oslo"}))
                .await
                .unwrap();
            assert_eq!(good.structured_content.unwrap()["city"], "Oslo");

            let wrong = client
                .call_tool("forecast", json!({"city": "Oslo", "break": "type"}))
                .await
                .unwrap_err();
            let Error::Schema { error, result } = &wrong else {
                panic!("{era:?}: {wrong:?}")
            };
            assert_eq!(
                (error.tool.as_str(), error.kind),
                ("forecast", SchemaKind::Output)
            );
            assert!(
                matches!(&error.violation, SchemaViolation::DoesNotMatch(why) if why.contains("/temperature")),
                "{error}"
            );
            // The raw result is kept for whoever wants it anyway.
            let kept = result.as_ref().unwrap();
            assert_eq!(
                kept.structured_content.as_ref().unwrap()["temperature"],
                "warm"
            );
            assert!(kept.text().contains("Oslo"));

            let missing = client
                .call_tool("forecast", json!({"city": "Oslo", "break": "missing"}))
                .await
                .unwrap_err();
            assert!(
                matches!(&missing, Error::Schema { error, .. }
                    if error.violation == SchemaViolation::MissingStructuredContent),
                "{missing:?}"
            );
            // A tool without an output schema, and an isError result, pass as they are.
            assert!(client.call_tool("fail", json!({})).await.unwrap().is_error);
            let sum = client.call_tool("add", json!({"a": 2, "b": 3})).await;
            assert_eq!(sum.unwrap().structured_content, Some(json!({"sum": 5})));
        });
    }
}

#[cfg(feature = "schemas")]
#[test]
fn arguments_are_checked_before_sending_only_when_asked() {
    for era in [Era::Handshake, Era::Stateless] {
        let (client, sent) = connect(era);
        smol::block_on(async {
            // Asked with no listing yet: the tools are listed first, then the call refused.
            let opts = CallOptions::default().check_arguments();
            let refused = client
                .call_tool_with("forecast", json!({"town": "Oslo"}), opts.clone())
                .await
                .unwrap_err();
            assert!(
                matches!(&refused, Error::Schema { error, result: None }
                    if error.kind == SchemaKind::Input),
                "{refused:?}"
            );
            assert_eq!(tool_calls(&sent), 0, "{era:?}: nothing was sent");
            let ok = client
                .call_tool_with("forecast", json!({"city": "Oslo"}), opts)
                .await;
            assert!(ok.is_ok(), "{ok:?}");
            // Not asked: the server sees the call and answers it.
            let server_says = client
                .call_tool("forecast", json!({"town": "Oslo"}))
                .await
                .unwrap_err();
            assert!(server_says.server_error().is_some(), "{server_says:?}");
            assert_eq!(tool_calls(&sent), 2);
        });
    }
}

#[test]
fn the_ui_extension_the_tool_meta_and_the_ui_resource_in_both_eras() {
    for era in [Era::Handshake, Era::Stateless] {
        let (client, sent) = connect(era);
        smol::block_on(async {
            let server = client.ready().await.unwrap();
            assert!(server.capabilities.extension(UI_EXTENSION).is_some());
            let tools = client.list_tools().await.unwrap();
            let forecast = tools.iter().find(|t| t.name == "forecast").unwrap();
            assert_eq!(
                forecast.ui().unwrap()["resourceUri"],
                "ui://demo/forecast.html"
            );
            assert_eq!(forecast.title.as_deref(), Some("Weather forecast"));
            assert!(forecast.icons.is_some());
            let app_only: Vec<&str> = tools
                .iter()
                .filter(|t| t.is_app_only())
                .map(|t| t.name.as_str())
                .collect();
            assert_eq!(app_only, ["forecast-refresh"]);

            let resources = client.list_resources().await.unwrap();
            let ui = resources.iter().find(|r| r.is_ui()).unwrap();
            let read = client.read_resource(&ui.uri).await.unwrap();
            assert_eq!(read.contents[0]["mimeType"], UI_MIME_TYPE);

            // Declared where the era puts capabilities.
            let sent = sent.lock().unwrap();
            let declared = match era {
                Era::Handshake => {
                    let init = sent.iter().find(|m| m["method"] == "initialize").unwrap();
                    init["params"]["capabilities"].clone()
                }
                _ => {
                    let list = sent.iter().find(|m| m["method"] == "tools/list").unwrap();
                    list["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"].clone()
                }
            };
            assert_eq!(
                declared["extensions"][UI_EXTENSION],
                json!({"mimeTypes": [UI_MIME_TYPE]}),
                "{era:?}"
            );
        });
    }
}
