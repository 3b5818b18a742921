//! The Client's typed calls beyond tools against the built-in demo server, in both eras:
//! completion, resource templates, the log level and resource subscriptions (which the
//! stateless era carries otherwise).

mod common;

use mcpwire::core::types::ResourceTemplate;
use mcpwire::core::ClientError;
use mcpwire::{CallOptions, ChosenEra, CompletionRef, ConnectOptions, Era, Error};
use serde_json::{json, Map, Value};

use common::demo;

fn connect(era: Era) -> mcpwire::Client {
    let opts = ConnectOptions {
        era,
        ..ConnectOptions::default()
    };
    smol::block_on(mcpwire::connect_smol(&demo(), opts)).unwrap()
}

#[test]
fn completion_and_typed_templates_in_both_eras() {
    for era in [Era::Handshake, Era::Auto] {
        let client = connect(era);
        smol::block_on(async {
            let greet = CompletionRef::Prompt("greet".into());
            let r = client
                .complete(&greet, "name", "a", None, CallOptions::default())
                .await
                .unwrap();
            assert_eq!(r.completion.values, ["Ada", "Alan"]);
            assert_eq!(r.completion.total, Some(2));
            assert_eq!(r.completion.has_more, Some(false));
            let echo = CompletionRef::Resource("demo://echo/{text}".into());
            let mut context = Map::new();
            context.insert("unused".into(), json!("x"));
            let r = client
                .complete(&echo, "text", "L", Some(context), CallOptions::default())
                .await
                .unwrap();
            assert_eq!(r.completion.values, ["Linus"]);
            // An argument the prompt does not have is the server's error.
            let e = client
                .complete(&greet, "who", "", None, CallOptions::default())
                .await
                .unwrap_err();
            assert_eq!(e.server_error().map(|e| e.code), Some(-32602), "{e}");

            let templates: Vec<ResourceTemplate> = client.list_resource_templates().await.unwrap();
            assert_eq!(templates.len(), 1);
            assert_eq!(templates[0].uri_template, "demo://echo/{text}");
            assert_eq!(templates[0].name, "echo");
            client.close().await;
        });
    }
}

#[test]
fn set_log_level_in_both_eras() {
    let old = connect(Era::Handshake);
    let new = connect(Era::Auto);
    smol::block_on(async {
        assert_eq!(old.era(), Some(ChosenEra::Handshake));
        old.set_log_level("debug", CallOptions::default())
            .await
            .unwrap();
        // The demo server now logs the steps of slow.
        let mut notes = old.notifications();
        old.call_tool("slow", json!({"steps": 1, "interval_ms": 1}))
            .await
            .unwrap();
        let first = notes.next().await.unwrap();
        assert!(
            matches!(&first, mcpwire::ServerNotification::Log(m) if m.level == "debug"),
            "{first:?}"
        );
        let e = old
            .set_log_level("loud", CallOptions::default())
            .await
            .unwrap_err();
        assert_eq!(e.server_error().map(|e| e.code), Some(-32602), "{e}");

        // The stateless era has no logging/setLevel: the level goes in each request's _meta.
        assert_eq!(new.era(), Some(ChosenEra::Stateless));
        let mut notes = new.notifications();
        new.set_log_level("debug", CallOptions::default())
            .await
            .unwrap();
        new.call_tool("slow", json!({"steps": 1, "interval_ms": 1}))
            .await
            .unwrap();
        let first = notes.next().await.unwrap();
        assert!(
            matches!(&first, mcpwire::ServerNotification::Log(m) if m.level == "debug"),
            "{first:?}"
        );
        let e = new
            .set_log_level("loud", CallOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(e, Error::Client(ClientError::InvalidArgument(_))),
            "{e:?}"
        );
        old.close().await;
        new.close().await;
    });
}

#[test]
fn resource_subscriptions_in_both_eras() {
    let old = connect(Era::Handshake);
    let new = connect(Era::Auto);
    smol::block_on(async {
        let caps = old.server_info().unwrap().capabilities.resources.clone();
        assert_eq!(
            caps.as_ref().and_then(|r| r.get("subscribe")),
            Some(&Value::Bool(true))
        );
        // resources/subscribe in the handshake era; a subscriptions/listen in the stateless
        // one (the demo server takes only its own resources).
        for client in [&old, &new] {
            client
                .subscribe_resource("demo://readme", CallOptions::default())
                .await
                .unwrap();
            client
                .unsubscribe_resource("demo://readme", CallOptions::default())
                .await
                .unwrap();
        }
        let e = new
            .subscribe_resource("file:///elsewhere", CallOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(e, Error::Call(mcpwire::core::CallError::Declined(_))),
            "{e:?}"
        );
        old.close().await;
        new.close().await;
    });
}
