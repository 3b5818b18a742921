//! The TypeScript "everything" server (pinned `@modelcontextprotocol/server-everything`) through
//! the public async Client: one scenario over each transport, stdio and Streamable HTTP (in
//! clear, over TLS on mcpwire's own client and on libcurl, through a proxy's tunnel). Over HTTP
//! it answers every request on an SSE stream that opens with a priming event (an id and empty
//! data), holds a standalone GET stream that carries the requests not tied to a call
//! (`roots/list`), and answers an unknown session with 400.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::core::types::CreateMessageResult;
use mcpwire::core::CallError;
use mcpwire::core::{Deadline, LocalError};
use mcpwire::{
    CallOptions, ChosenEra, ConnectOptions, Direction, ElicitAction, ElicitResult, Error, Handlers,
    Root, ServerConfig, ServerNotification,
};
use mcpwire_tests::process::alive;
use mcpwire_tests::scenario::Runtime;
use mcpwire_tests::ways::{Reached, Setting, Transport};
use mcpwire_tests::{everything_stdio, peers_skipped, HttpPeer};
use serde_json::json;

type Frames = Arc<Mutex<Vec<(Direction, String)>>>;

/// server-everything's Streamable HTTP transport on a free port of 127.0.0.1.
fn everything_http() -> HttpPeer {
    mcpwire_tests::everything_http_mode("streamableHttp").0
}

/// Runs the scenario in each setting over `transports`, a new server for each.
fn over(transports: &[Transport]) {
    for setting in Setting::each(transports) {
        let (peer, options) = Reached::start(setting.transport, everything_stdio, everything_http);
        let limit = Duration::from_secs(60);
        let context = || format!(" ({setting}){}", peer.stderr_text());
        setting.run(limit, scenario(setting, &peer, options), context);
        assert!(
            peer.stderr().iter().all(|l| !l.contains("Error")),
            "{setting}: {}",
            peer.stderr().join("\n")
        );
    }
}

/// The handshake (the era detected), the roots asked for after it, the tools, calls with
/// server requests in their middle (elicitation, sampling, roots), progress, a timeout that
/// cancels on the wire with the connection living on, and a quick close.
async fn scenario(setting: Setting, peer: &Reached, options: ConnectOptions) {
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
    let options = options.handlers(handlers).observer(move |d, b: &[u8]| {
        tap.lock()
            .unwrap()
            .push((d, String::from_utf8_lossy(b).into_owned()))
    });
    let client = setting
        .connect(&peer.config, options)
        .await
        .unwrap_or_else(|e| panic!("{setting}: connect: {e}{}", peer.stderr_text()));
    let mut notifications = client.notifications();
    let info = client.server_info().unwrap();
    // Era::Auto: the server refused the 2026-07-28 probe, so the handshake era.
    assert_eq!(client.era(), Some(ChosenEra::Handshake), "{setting}");
    assert_eq!(info.protocol_version, "2025-11-25");
    assert_eq!(info.server_info.name, "mcp-servers/everything");

    // After the handshake the server asks for our roots (over HTTP on the standalone GET
    // stream: it belongs to no call), then logs what it got. Its first notifications are its
    // list changes and log messages.
    let deadline = Instant::now() + Duration::from_secs(10);
    while roots_asked.load(Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "{setting}: roots/list never came"
        );
        setting.runtime.sleep(Duration::from_millis(20)).await;
    }
    let mut first = None;
    let logged = future::or(
        async {
            while let Some(n) = notifications.next().await {
                let roots_logged = matches!(&n, ServerNotification::Log(l)
                    if l.data.to_string().contains("Roots updated"));
                first.get_or_insert(n);
                if roots_logged {
                    return true;
                }
            }
            false
        },
        async {
            setting.runtime.sleep(Duration::from_secs(10)).await;
            false
        },
    )
    .await;
    assert!(logged, "{setting}: the roots log never came");
    let first = first.expect("a notification came");
    assert!(
        matches!(
            first,
            ServerNotification::ToolsListChanged | ServerNotification::Log(_)
        ),
        "{setting}: {first:?}"
    );

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
            "{setting}: {expected} missing from {names:?}"
        );
    }

    // Over HTTP every answer below comes on an SSE stream that opens with a priming event.
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

    // Server requests in the middle of a call (over HTTP on the call's own stream).
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
    // The roots it was given after the handshake.
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
    assert_eq!(steps.load(Ordering::SeqCst), 2, "{setting}");

    // A timeout sends the cancellation (everything ignores it and keeps sending progress,
    // which is then late and dropped); the connection lives on.
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
        assert_eq!(cancels, 1, "{setting}");
        for method in ["roots/list", "elicitation/create", "sampling/createMessage"] {
            assert!(
                frames.iter().any(|(d, f)| *d == Direction::Incoming
                    && f.contains(&format!("\"{method}\""))),
                "{setting}: no {method} came"
            );
        }
        // The probe went first, then the handshake once the server refused it: over stdio
        // with a JSON-RPC error (a frame of its own), over HTTP with a status.
        assert!(
            frames[0].1.contains("\"server/discover\""),
            "{setting}: {}",
            frames[0].1
        );
        let handshake = match setting.transport {
            Transport::Stdio => 2,
            Transport::Http(_) => 1,
        };
        assert!(
            frames[handshake].1.contains("\"initialize\""),
            "{setting}: {}",
            frames[handshake].1
        );
    }
    let start = Instant::now();
    client.close().await;
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{setting}: close took {:?}",
        start.elapsed()
    );
}

#[test]
fn everything_over_stdio() {
    if peers_skipped("everything_over_stdio") {
        return;
    }
    over(&[Transport::Stdio]);
}

#[test]
fn everything_over_http() {
    if peers_skipped("everything_over_http") {
        return;
    }
    over(&Transport::HTTP);
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
    for rt in Runtime::ALL {
        let err = rt.run(
            Duration::from_secs(60),
            async {
                rt.connect(&config, ConnectOptions::default())
                    .await
                    .expect_err("a handshake on an unknown session")
            },
            || format!(" (on {rt}); server stderr:\n{}", peer.stderr().join("\n")),
        );
        let Error::Handshake {
            error: CallError::Local(LocalError::Http(e)),
            ..
        } = &err
        else {
            panic!("on {rt}: expected a handshake failure with an HTTP error, got {err:?}")
        };
        assert_eq!(e.status, Some(400), "on {rt}: {e:?}");
        assert!(
            e.body_excerpt.contains("No valid session ID provided"),
            "on {rt}: {e:?}"
        );
        assert_eq!(
            e.content_type
                .as_deref()
                .map(|c| c.starts_with("application/json")),
            Some(true),
            "on {rt}"
        );
    }
}

#[test]
fn close_escalates_when_the_server_ignores_stdin_eof() {
    if peers_skipped("close_escalates_when_the_server_ignores_stdin_eof") {
        return;
    }
    smol::block_on(async {
        let mut opts = ConnectOptions::default();
        opts.shutdown.after_close_stdin = Duration::from_millis(500);
        opts.shutdown.after_terminate = Duration::from_secs(2);
        let client = mcpwire::connect_smol(&everything_stdio(), opts)
            .await
            .unwrap();
        // With simulated logging running, the server no longer exits on stdin EOF.
        client
            .call_tool("toggle-simulated-logging", json!({}))
            .await
            .unwrap();
        let pid = client.pid();
        let start = Instant::now();
        client.close().await;
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(500), "closed after {took:?}");
        assert!(took < Duration::from_secs(5), "closed after {took:?}");
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(pid), "the server outlived close");
    });
}
