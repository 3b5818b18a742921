//! The TypeScript "everything" server (pinned `@modelcontextprotocol/server-everything`) over
//! Streamable HTTP, through the public async Client. It answers every request on an SSE stream
//! that opens with a priming event (an id and empty data), holds a standalone GET stream that
//! carries the requests not tied to a call (`roots/list`), and answers an unknown session with
//! 400.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_io::Timer;
use futures_lite::future;
use mcpwire::core::types::CreateMessageResult;
use mcpwire::core::CallError;
use mcpwire::core::{Deadline, LocalError};
use mcpwire::{
    CallOptions, ChosenEra, ConnectOptions, Direction, ElicitAction, ElicitResult, Error, Handlers,
    Root, ServerConfig, ServerNotification,
};
use mcpwire_tests::scenario::run_against;
use mcpwire_tests::{peers_skipped, HttpPeer};
use serde_json::json;

type Frames = Arc<Mutex<Vec<(Direction, String)>>>;

/// server-everything's Streamable HTTP transport on a free port of 127.0.0.1.
fn everything_http() -> HttpPeer {
    mcpwire_tests::everything_http_mode("streamableHttp").0
}

#[test]
fn everything_over_http() {
    if peers_skipped("everything_over_http") {
        return;
    }
    let peer = everything_http();
    let roots_asked = Arc::new(AtomicUsize::new(0));
    let frames: Frames = Arc::default();
    let (r, tap) = (roots_asked.clone(), frames.clone());
    let handlers = Handlers::new()
        .on_elicitation(|req| async move {
            assert!(req.message().contains("Please provide inputs"));
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
        .on_roots(move || {
            r.fetch_add(1, Ordering::SeqCst);
            async {
                Ok(vec![Root {
                    meta: None,
                    uri: "file:///tmp".into(),
                    name: Some("tmp".into()),
                }])
            }
        });
    let options = ConnectOptions::default()
        .handlers(handlers)
        .observer(move |d, b: &[u8]| {
            tap.lock()
                .unwrap()
                .push((d, String::from_utf8_lossy(b).into_owned()))
        });
    run_against(&peer, Duration::from_secs(60), async {
        let client = mcpwire::connect_smol(&ServerConfig::http(peer.url()), options)
            .await
            .unwrap();
        let mut notifications = client.notifications();
        let info = client.server_info().unwrap();
        // Era::Auto: the server refused the 2026-07-28 probe, so the handshake era.
        assert_eq!(client.era(), Some(ChosenEra::Handshake));
        assert_eq!(info.protocol_version, "2025-11-25");
        assert_eq!(info.server_info.name, "mcp-servers/everything");

        // After the handshake the server asks for our roots on the standalone GET stream (it
        // belongs to no call), then logs what it got there too.
        let deadline = Instant::now() + Duration::from_secs(10);
        while roots_asked.load(Ordering::SeqCst) == 0 {
            assert!(
                Instant::now() < deadline,
                "roots/list never came on the GET stream"
            );
            Timer::after(Duration::from_millis(20)).await;
        }
        let logged = future::or(
            async {
                while let Some(n) = notifications.next().await {
                    if let ServerNotification::Log(l) = &n {
                        if l.data.to_string().contains("Roots updated") {
                            return true;
                        }
                    }
                }
                false
            },
            async {
                Timer::after(Duration::from_secs(10)).await;
                false
            },
        )
        .await;
        assert!(logged, "the roots log never came");

        let tools = client.list_tools().await.unwrap();
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        for expected in [
            "echo",
            "get-sum",
            "trigger-long-running-operation",
            "trigger-elicitation-request",
            "trigger-sampling-request",
            "get-roots-list",
        ] {
            assert!(
                names.contains(&expected),
                "{expected} missing from {names:?}"
            );
        }

        // Every answer below comes on an SSE stream that opens with a priming event.
        let r = client
            .call_tool("echo", json!({"message": "hello everything"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "Echo: hello everything");
        let r = client
            .call_tool("get-sum", json!({"a": 2, "b": 40}))
            .await
            .unwrap();
        assert!(r.text().contains("42"), "{}", r.text());

        // Server requests in the middle of a call, on the call's own stream.
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
        let r = client.call_tool("get-roots-list", json!({})).await.unwrap();
        assert!(r.text().contains("file:///tmp"), "{}", r.text());

        let steps = Arc::new(AtomicUsize::new(0));
        let s = steps.clone();
        let opts = CallOptions::default().on_progress(move |p| {
            assert_eq!(p.total, Some(2.0));
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

        // A timeout posts the cancellation (everything ignores it and keeps sending progress,
        // which is then late and dropped).
        let err = client
            .call_tool_with(
                "trigger-long-running-operation",
                json!({"duration": 2, "steps": 2}),
                CallOptions::default().timeout(Duration::from_millis(500)),
            )
            .await
            .unwrap_err();
        assert_eq!(
            err,
            Error::Call(CallError::Local(LocalError::Timeout {
                which: Deadline::Idle,
                despite_progress: false,
                method: "tools/call".into(),
                after: Duration::from_millis(500),
            }))
        );
        let r = client
            .call_tool("echo", json!({"message": "still here"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "Echo: still here");
        {
            let frames = frames.lock().unwrap();
            let cancels = frames
                .iter()
                .filter(|(d, f)| *d == Direction::Outgoing && f.contains("notifications/cancelled"))
                .count();
            assert_eq!(cancels, 1);
            assert!(frames
                .iter()
                .any(|(d, f)| *d == Direction::Incoming && f.contains("\"roots/list\"")));
            assert!(frames
                .iter()
                .any(|(d, f)| *d == Direction::Incoming && f.contains("elicitation/create")));
            assert!(frames
                .iter()
                .any(|(d, f)| *d == Direction::Incoming && f.contains("sampling/createMessage")));
        }
        let start = Instant::now();
        client.close().await;
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "close took {:?}",
            start.elapsed()
        );
    });
    assert!(
        peer.stderr().iter().all(|l| !l.contains("Error")),
        "{}",
        peer.stderr().join("\n")
    );
}

#[test]
fn an_unknown_session_is_a_typed_400() {
    if peers_skipped("an_unknown_session_is_a_typed_400") {
        return;
    }
    let peer = everything_http();
    // A session header the server never issued, set by the host's configuration: it goes out
    // with every request, the handshake included, and everything answers 400 (a TypeScript SDK
    // transport of its own would say 404).
    let mut config = ServerConfig::http(peer.url());
    if let ServerConfig::Http(h) = &mut config {
        h.headers
            .insert("Mcp-Session-Id".into(), "no-such-session".into());
    }
    let err = run_against(&peer, Duration::from_secs(60), async {
        mcpwire::connect_smol(&config, ConnectOptions::default())
            .await
            .expect_err("a handshake on an unknown session")
    });
    let Error::Handshake {
        error: CallError::Local(LocalError::Http(e)),
        ..
    } = &err
    else {
        panic!("expected a handshake failure with an HTTP error, got {err:?}")
    };
    assert_eq!(e.status, Some(400), "{e:?}");
    assert!(
        e.body_excerpt.contains("No valid session ID provided"),
        "{e:?}"
    );
    assert_eq!(
        e.content_type
            .as_deref()
            .map(|c| c.starts_with("application/json")),
        Some(true)
    );
}
