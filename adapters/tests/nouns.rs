//! The Client's typed calls beyond tools against the built-in demo server, in both eras:
//! completion, resource templates, the log level and resource subscriptions, and the typed
//! errors of the calls the stateless era removed.

use mcpwire::core::types::ResourceTemplate;
use mcpwire::core::ClientError;
use mcpwire::{CallOptions, ChosenEra, CompletionRef, ConnectOptions, Era, Error, ServerConfig};
use serde_json::{json, Map, Value};

fn demo() -> ServerConfig {
    ServerConfig::stdio(
        env!("CARGO_BIN_EXE_mcpwire-demo-server"),
        Vec::<String>::new(),
    )
}

fn connect(era: Era) -> mcpwire::Client {
    let opts = ConnectOptions {
        era,
        ..ConnectOptions::default()
    };
    smol::block_on(mcpwire::connect_smol(&demo(), opts)).unwrap()
}

fn not_supported(result: Result<(), Error>) -> &'static str {
    match result {
        Err(Error::Client(ClientError::NotSupported(what))) => what,
        other => panic!("not a NotSupported: {other:?}"),
    }
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
fn set_log_level_in_the_handshake_era_and_a_typed_refusal_in_the_stateless_one() {
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

        assert_eq!(new.era(), Some(ChosenEra::Stateless));
        let what = not_supported(new.set_log_level("debug", CallOptions::default()).await);
        assert!(what.contains("io.modelcontextprotocol/logLevel"), "{what}");
        old.close().await;
        new.close().await;
    });
}

#[test]
fn subscribe_needs_the_capability_and_the_handshake_era() {
    let old = connect(Era::Handshake);
    let new = connect(Era::Auto);
    smol::block_on(async {
        // The demo server's resources capability has no subscribe: nothing is sent.
        let caps = old.server_info().unwrap().capabilities.resources.clone();
        assert_eq!(
            caps.as_ref().and_then(|r| r.get("subscribe")),
            None::<&Value>
        );
        let what = not_supported(
            old.subscribe_resource("demo://readme", CallOptions::default())
                .await,
        );
        assert!(what.contains("subscribe: true"), "{what}");
        let what = not_supported(
            new.subscribe_resource("demo://readme", CallOptions::default())
                .await,
        );
        assert!(what.contains("subscriptions/listen"), "{what}");
        let what = not_supported(
            new.unsubscribe_resource("demo://readme", CallOptions::default())
                .await,
        );
        assert!(what.contains("removed in 2026-07-28"), "{what}");
        old.close().await;
        new.close().await;
    });
}
