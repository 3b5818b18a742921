//! The TypeScript "everything" server (pinned `@modelcontextprotocol/server-everything`) over
//! stdio, through the public async Client, each test on every runtime (the adapter crate's
//! `runtimes` axis: smol, tokio's multi-thread and current_thread runtimes).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpwire::core::types::CreateMessageResult;
use mcpwire::core::CallError;
use mcpwire::core::{Deadline, LocalError};
use mcpwire::{
    CallOptions, ConnectOptions, Direction, ElicitAction, ElicitResult, Error, Handlers, Root,
    ServerNotification,
};
use mcpwire_tests::{everything_stdio, peers_skipped};
use serde_json::json;

#[macro_use]
#[path = "../../adapters/tests/runtimes/mod.rs"]
mod runtimes;
use runtimes::Rt;

type Frames = Arc<Mutex<Vec<(Direction, String)>>>;

fn options(frames: &Frames) -> ConnectOptions {
    let tap = frames.clone();
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
        .on_roots(|| async {
            Ok(vec![Root {
                meta: None,
                uri: "file:///tmp".into(),
                name: Some("tmp".into()),
            }])
        });
    ConnectOptions::default()
        .handlers(handlers)
        .observer(move |d, b: &[u8]| {
            tap.lock()
                .unwrap()
                .push((d, String::from_utf8_lossy(b).into_owned()))
        })
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            let state = s.rsplit(')').next().unwrap_or("").trim_start().to_owned();
            !state.starts_with('Z')
        })
        .unwrap_or(false)
}

fn everything_over_stdio(rt: &Rt) {
    if peers_skipped("everything_over_stdio") {
        return;
    }
    rt.block_on(async {
        let frames: Frames = Default::default();
        let client = rt
            .connect(&everything_stdio(), options(&frames))
            .await
            .unwrap();
        let info = client.server_info().unwrap();
        // It speaks only the handshake era: the probe is refused and Auto falls back.
        assert_eq!(client.era(), Some(mcpwire::ChosenEra::Handshake));
        assert_eq!(info.protocol_version, "2025-11-25");
        assert_eq!(info.server_info.name, "mcp-servers/everything");

        let mut notifications = client.notifications();
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

        // The server asked for our roots after the handshake; it reports what it got.
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

        // A timeout: the cancellation goes on the wire.
        let err = client
            .call_tool_with(
                "trigger-long-running-operation",
                json!({"duration": 3, "steps": 3}),
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
        let cancels = frames
            .lock()
            .unwrap()
            .iter()
            .filter(|(d, f)| *d == Direction::Outgoing && f.contains("notifications/cancelled"))
            .count();
        assert_eq!(cancels, 1);

        // list_changed surfaced (the server sends several after the handshake).
        let first = notifications.next().await.unwrap();
        assert!(
            matches!(
                first,
                ServerNotification::ToolsListChanged | ServerNotification::Log(_)
            ),
            "{first:?}"
        );
        {
            let frames = frames.lock().unwrap();
            assert!(
                frames[0].1.contains("\"server/discover\""),
                "{}",
                frames[0].1
            );
            assert!(frames[2].1.contains("\"initialize\""), "{}", frames[2].1);
            assert!(frames
                .iter()
                .any(|(d, f)| *d == Direction::Incoming && f.contains("\"roots/list\"")));
        }
        client.close().await;
    });
}

fn close_escalates_when_the_server_ignores_stdin_eof(rt: &Rt) {
    if peers_skipped("close_escalates_when_the_server_ignores_stdin_eof") {
        return;
    }
    rt.block_on(async {
        let mut opts = ConnectOptions::default();
        opts.shutdown.after_close_stdin = Duration::from_millis(500);
        opts.shutdown.after_terminate = Duration::from_secs(2);
        let client = rt.connect(&everything_stdio(), opts).await.unwrap();
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

on_every_runtime!(
    everything_over_stdio,
    close_escalates_when_the_server_ignores_stdin_eof
);
