//! Output schemas and URL-mode elicitation against third-party peers: the TypeScript
//! "everything" server (`get-structured-content` declares an `outputSchema`;
//! `trigger-url-elicitation` asks for a URL-mode elicitation with its `elicitationId`, or fails
//! with `-32042`) and the Python SDK server (FastMCP gives `add` an `outputSchema` and a
//! `structuredContent`), in each era they speak.

use std::sync::{Arc, Mutex};

use mcpwire::core::schema::SchemaKind;
use mcpwire::{
    CallOptions, ChosenEra, ConnectOptions, Direction, ElicitAction, ElicitResult, Era, Error,
    Handlers,
};
use mcpwire_tests::{everything_stdio, peers_skipped, python_stdio};
use serde_json::json;

type Asked = (String, Option<String>);

#[test]
fn everything_s_structured_output_is_checked_and_its_url_elicitations_are_typed() {
    if peers_skipped("everything_s_structured_output_is_checked") {
        return;
    }
    // Each elicitation's mode and id, as the handler saw them.
    let seen: Arc<Mutex<Vec<Asked>>> = Default::default();
    let log = seen.clone();
    let handlers = Handlers::new()
        .on_elicitation(move |req| {
            let log = log.clone();
            async move {
                let id = req.elicitation_id().map(str::to_owned);
                log.lock().unwrap().push((req.mode().to_owned(), id));
                Ok(ElicitResult {
                    meta: None,
                    action: ElicitAction::Accept,
                    content: None,
                })
            }
        })
        .with_url_elicitation();
    let sent: Arc<Mutex<Vec<String>>> = Default::default();
    let tap = sent.clone();
    let opts =
        ConnectOptions::default()
            .handlers(handlers)
            .observer(move |d: Direction, b: &[u8]| {
                if d == Direction::Outgoing {
                    tap.lock()
                        .unwrap()
                        .push(String::from_utf8_lossy(b).into_owned());
                }
            });
    smol::block_on(async {
        let client = mcpwire::connect_smol(&everything_stdio(), opts)
            .await
            .unwrap();
        let tools = client.list_tools().await.unwrap();
        let structured = tools
            .iter()
            .find(|t| t.name == "get-structured-content")
            .unwrap();
        assert_eq!(
            structured.title.as_deref(),
            Some("Get Structured Content Tool")
        );
        let schemas = client.tool_schemas().unwrap();
        assert!(schemas.has_output_schema("get-structured-content"));
        // Its result meets its schema: checked, and given.
        let r = client
            .call_tool("get-structured-content", json!({"location": "Chicago"}))
            .await
            .unwrap();
        assert_eq!(r.structured_content.unwrap()["temperature"], 36);
        // Arguments outside the enum are refused before anything is sent, when asked.
        let calls_before = sent.lock().unwrap().len();
        let refused = client
            .call_tool_with(
                "get-structured-content",
                json!({"location": "Paris"}),
                CallOptions::default().check_arguments(),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&refused, Error::Schema { error, result: None } if error.kind == SchemaKind::Input),
            "{refused:?}"
        );
        assert_eq!(sent.lock().unwrap().len(), calls_before);

        // URL mode, the request path: the handler sees the mode and the id.
        let r = client
            .call_tool(
                "trigger-url-elicitation",
                json!({"url": "https://example.com/consent", "elicitationId": "e-1"}),
            )
            .await
            .unwrap();
        assert!(r.text().contains("e-1"), "{}", r.text());
        assert_eq!(
            seen.lock().unwrap().as_slice(),
            [("url".to_owned(), Some("e-1".to_owned()))]
        );
        // The error path: -32042, the elicitations it needs readable; the retry proceeds.
        let args = json!({"url": "https://example.com/consent", "errorPath": true});
        let e = client
            .call_tool("trigger-url-elicitation", args.clone())
            .await
            .unwrap_err();
        let needed = e.url_elicitations_required().expect("a -32042 error");
        assert_eq!(needed.len(), 1);
        assert_eq!(needed[0].mode(), "url");
        assert!(needed[0].elicitation_id().is_some());
        assert!(needed[0].url().unwrap().starts_with("https://"));
        let again = client.call_tool("trigger-url-elicitation", args).await;
        assert!(again.is_ok(), "{again:?}");
    });
}

fn python_add_is_checked(era: Era) {
    smol::block_on(async {
        let opts = ConnectOptions {
            era,
            ..ConnectOptions::default()
        };
        let client = mcpwire::connect_smol(&python_stdio(), opts).await.unwrap();
        let expected = match era {
            Era::Handshake => ChosenEra::Handshake,
            _ => ChosenEra::Stateless,
        };
        assert_eq!(client.era(), Some(expected));
        client.list_tools().await.unwrap();
        let schemas = client.tool_schemas().unwrap();
        assert!(schemas.has_output_schema("add"), "{era:?}");
        let r = client
            .call_tool("add", json!({"a": 2, "b": 40}))
            .await
            .unwrap();
        assert_eq!(r.structured_content, Some(json!({"result": 42})));
        let refused = client
            .call_tool_with(
                "add",
                json!({"a": "two", "b": 40}),
                CallOptions::default().check_arguments(),
            )
            .await
            .unwrap_err();
        assert!(matches!(refused, Error::Schema { .. }), "{refused:?}");
    });
}

#[test]
fn python_s_structured_output_is_checked_in_both_eras() {
    if peers_skipped("python_s_structured_output_is_checked_in_both_eras") {
        return;
    }
    python_add_is_checked(Era::Handshake);
    python_add_is_checked(Era::Auto);
}
