//! Real servers over the 2024-11-05 HTTP+SSE transport, through the public async Client: the
//! TypeScript "everything" server (pinned `@modelcontextprotocol/server-everything`; `GET /sse`,
//! `POST /message`), found from its `/sse` URL by `Era::Auto` and pinned with `type: "sse"`; and
//! the Python SDK's (`mcp` 2.3.0) SSE transport.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcpwire::core::config::{HttpConfig, HttpKind};
use mcpwire::core::types::CreateMessageResult;
use mcpwire::{
    CallOptions, ChosenEra, ConnectOptions, ElicitAction, ElicitResult, Era, Handlers, ServerConfig,
};
use mcpwire_tests::scenario::run_against;
use mcpwire_tests::{peers_skipped, HttpPeer};
use serde_json::json;

fn everything_sse() -> (HttpPeer, String) {
    mcpwire_tests::everything_http_mode("sse")
}

fn handlers() -> Handlers {
    Handlers::new()
        .on_elicitation(|_req| async move {
            Ok(ElicitResult {
                meta: None,
                action: ElicitAction::Accept,
                content: Some(serde_json::from_value(json!({"name": "Ann"})).unwrap()),
            })
        })
        .on_sampling(|params| async move {
            assert_eq!(params.max_tokens, 5);
            Ok(CreateMessageResult::text("fake", "hello"))
        })
}

#[test]
fn everything_over_http_sse_found_from_its_url() {
    if peers_skipped("everything_over_http_sse_found_from_its_url") {
        return;
    }
    let (peer, url) = everything_sse();
    run_against(&peer, Duration::from_secs(60), async {
        let start = Instant::now();
        let options = ConnectOptions::default().handlers(handlers());
        let client = mcpwire_tests::scenario::connect(&ServerConfig::http(url.clone()), options)
            .await
            .unwrap_or_else(|e| panic!("connect: {e}\n{}", peer.stderr().join("\n")));
        eprintln!("found the HTTP+SSE transport in {:?}", start.elapsed());
        assert_eq!(client.http_transport(), Some(HttpKind::Sse));
        assert_eq!(client.era(), Some(ChosenEra::Handshake));
        assert_eq!(
            client.server_info().unwrap().server_info.name,
            "mcp-servers/everything"
        );

        let tools = client.list_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "trigger-sampling-request"));
        let r = client
            .call_tool("echo", json!({"message": "over sse"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "Echo: over sse");

        // Server requests in the middle of a call, on the one stream.
        let r = client
            .call_tool("trigger-elicitation-request", json!({}))
            .await
            .unwrap();
        assert!(r.text().contains("Name: Ann"), "{}", r.text());
        let r = client
            .call_tool(
                "trigger-sampling-request",
                json!({"prompt": "hi", "maxTokens": 5}),
            )
            .await
            .unwrap();
        assert!(r.text().contains("\"model\": \"fake\""), "{}", r.text());

        let steps = Arc::new(AtomicUsize::new(0));
        let s = steps.clone();
        let opts = CallOptions::default().on_progress(move |_| {
            s.fetch_add(1, Ordering::SeqCst);
        });
        let r = client
            .call_tool_with(
                "trigger-long-running-operation",
                json!({"duration": 1, "steps": 2}),
                opts,
            )
            .await
            .unwrap();
        assert!(r.text().contains("completed"), "{}", r.text());
        assert_eq!(steps.load(Ordering::SeqCst), 2);
        client.close().await;
    });
}

#[test]
fn everything_over_http_sse_pinned_sends_no_probe() {
    if peers_skipped("everything_over_http_sse_pinned_sends_no_probe") {
        return;
    }
    let (peer, url) = everything_sse();
    run_against(&peer, Duration::from_secs(60), async {
        let config = ServerConfig::Http(HttpConfig {
            kind: HttpKind::Sse,
            url,
            headers: Default::default(),
            extra: Default::default(),
        });
        let frames = Arc::new(std::sync::Mutex::new(Vec::new()));
        let tap = frames.clone();
        let options = ConnectOptions {
            era: Era::Auto,
            ..ConnectOptions::default()
        }
        .observer(move |_d, b: &[u8]| {
            tap.lock()
                .unwrap()
                .push(String::from_utf8_lossy(b).into_owned())
        });
        let client = mcpwire_tests::scenario::connect(&config, options)
            .await
            .unwrap();
        assert_eq!(client.http_transport(), Some(HttpKind::Sse));
        let r = client
            .call_tool("get-sum", json!({"a": 2, "b": 40}))
            .await
            .unwrap();
        assert!(r.text().contains("42"), "{}", r.text());
        client.close().await;
        let frames = frames.lock().unwrap();
        assert!(
            !frames.iter().any(|f| f.contains("server/discover")),
            "a pinned transport costs no probe"
        );
        assert_eq!(
            frames
                .iter()
                .filter(|f| f.contains("\"initialize\""))
                .count(),
            1
        );
    });
}

#[test]
fn the_python_sdk_s_http_sse_transport_found_from_its_url() {
    if peers_skipped("the_python_sdk_s_http_sse_transport_found_from_its_url") {
        return;
    }
    // `mcp` 2.3.0 still serves the 2024-11-05 transport (`server.run("sse")`).
    let (url, peer) = mcpwire_tests::python_sse();
    run_against(&peer, Duration::from_secs(60), async {
        let options = ConnectOptions::default().handlers(handlers());
        let client = mcpwire_tests::scenario::connect(&ServerConfig::http(url), options)
            .await
            .unwrap_or_else(|e| panic!("connect: {e}\n{}", peer.stderr().join("\n")));
        assert_eq!(client.http_transport(), Some(HttpKind::Sse));
        assert_eq!(client.era(), Some(ChosenEra::Handshake));
        let r = client
            .call_tool("add", json!({"a": 2, "b": 40}))
            .await
            .unwrap();
        assert_eq!(r.text(), "42");
        // An elicitation in the middle of the call, on the one stream.
        let r = client.call_tool("greet", json!({})).await.unwrap();
        assert_eq!(r.text(), "Hello, Ann!");
        client.close().await;
    });
}
