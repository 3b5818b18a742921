//! Our Python test server (the pinned `mcp` 2.3.0 SDK) over Streamable HTTP, in each of its
//! modes: SSE responses (the default), plain JSON responses, stateless (no session), and
//! resumable (an event store, `retry: 300`, a tool that drops its stream mid-call); each with
//! the era detected (`Era::Auto` picks 2026-07-28) and with the handshake era pinned.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_io::Timer;
use futures_lite::future;
use mcpwire::{
    CallOptions, ChosenEra, ConnectOptions, Direction, ElicitAction, ElicitResult, Era, Handlers,
};
use mcpwire_tests::scenario::tool_names;
use mcpwire_tests::{peers_skipped, python_http, HttpPeer};
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Sse,
    Json,
    Stateless,
    Resumable,
}

impl Mode {
    fn args(self) -> &'static [&'static str] {
        match self {
            Mode::Sse => &[],
            Mode::Json => &["--json"],
            Mode::Stateless => &["--stateless"],
            Mode::Resumable => &["--resumable"],
        }
    }

    /// Whether the server can send requests to the client mid-call (only on a POST's SSE
    /// stream of a session).
    fn back_channel(self) -> bool {
        matches!(self, Mode::Sse | Mode::Resumable)
    }

    /// Whether progress reaches the client (JSON responses drop notifications).
    fn progress(self) -> bool {
        self != Mode::Json
    }
}

/// Answers every form: a field about a name gets "Ada", any other "green".
fn handlers(asked: Arc<AtomicUsize>) -> Handlers {
    Handlers::new().on_elicitation(move |req| {
        let asked = asked.clone();
        async move {
            asked.fetch_add(1, Ordering::SeqCst);
            let mut content = Map::new();
            if let Some(props) = req
                .requested_schema()
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
            {
                for key in props.keys() {
                    let v = if key.contains("name") { "Ada" } else { "green" };
                    content.insert(key.clone(), json!(v));
                }
            }
            Ok(ElicitResult {
                meta: None,
                action: ElicitAction::Accept,
                content: Some(content),
            })
        }
    })
}

type Frames = Arc<Mutex<Vec<(Direction, String)>>>;

fn run(mode: Mode) {
    for era in [Era::Auto, Era::Handshake] {
        let (config, peer) = python_http(mode.args());
        run_in(mode, era, config, &peer);
    }
}

fn run_in(mode: Mode, era: Era, config: mcpwire::ServerConfig, peer: &HttpPeer) {
    smol::block_on(future::or(scenario(mode, era, config, peer), async {
        Timer::after(Duration::from_secs(90)).await;
        panic!(
            "{mode:?}: not done within 90 s; server stderr:\n{}",
            peer.stderr().join("\n")
        )
    }));
}

async fn scenario(mode: Mode, era: Era, config: mcpwire::ServerConfig, peer: &HttpPeer) {
    let asked = Arc::new(AtomicUsize::new(0));
    let frames: Frames = Arc::default();
    let tap = frames.clone();
    let opts = ConnectOptions {
        era,
        ..ConnectOptions::default()
    };
    let opts = opts
        .handlers(handlers(asked.clone()))
        .observer(move |d, b: &[u8]| {
            tap.lock()
                .unwrap()
                .push((d, String::from_utf8_lossy(b).into_owned()))
        });
    let client = mcpwire::connect_smol(&config, opts)
        .await
        .unwrap_or_else(|e| panic!("{mode:?}: connect: {e}\n{}", peer.stderr().join("\n")));
    let info = client.server_info().unwrap();
    let stateless = era == Era::Auto;
    if stateless {
        // Detected: the server speaks 2026-07-28.
        assert_eq!(client.era(), Some(ChosenEra::Stateless), "{mode:?}");
        assert_eq!(info.protocol_version, "2026-07-28");
    } else {
        assert_eq!(client.era(), Some(ChosenEra::Handshake));
        assert_eq!(info.protocol_version, "2025-11-25");
    }
    assert_eq!(info.server_info.name, "mcpwire-py-server");

    let names = tool_names(&client).await;
    for t in ["add", "greet", "slow"] {
        assert!(
            names.iter().any(|n| n == t),
            "{mode:?}: {t} missing: {names:?}"
        );
    }
    assert_eq!(
        names.iter().any(|n| n == "drop_stream_then_finish"),
        mode == Mode::Resumable
    );

    let r = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(r.text(), "42");

    // Elicitation mid-call: answered by the handler where the server has a back-channel (or,
    // in the stateless era, as an input round of the call); elsewhere the server refuses with
    // a typed JSON-RPC error.
    let greet = client.call_tool("greet", json!({})).await;
    if mode.back_channel() || stateless {
        let r = greet.unwrap_or_else(|e| panic!("{mode:?}: greet: {e:?}"));
        assert_eq!(r.text(), "Hello, Ada!");
        assert_eq!(asked.load(Ordering::SeqCst), 1);
    } else {
        let err = greet.unwrap_err();
        let e = err
            .server_error()
            .unwrap_or_else(|| panic!("{mode:?}: greet: {err:?}"));
        assert_eq!(e.code, -32600, "{mode:?}: {e:?}");
        assert!(e.message.contains("back-channel"), "{mode:?}: {e:?}");
        assert_eq!(asked.load(Ordering::SeqCst), 0);
    }

    // Progress on the call's stream.
    let steps = Arc::new(AtomicUsize::new(0));
    let st = steps.clone();
    let opts = CallOptions::default().on_progress(move |p| {
        assert_eq!(p.total, Some(2.0));
        st.fetch_add(1, Ordering::SeqCst);
    });
    let r = client
        .call_tool_with("slow", json!({"steps": 2, "delay": 0.05}), opts)
        .await
        .unwrap();
    assert_eq!(r.text(), "done after 2 steps");
    let expected = if mode.progress() { 2 } else { 0 };
    assert_eq!(steps.load(Ordering::SeqCst), expected, "{mode:?}: progress");

    // A stream dropped mid-call, resumed with Last-Event-ID: the replayed progress, then the
    // result. (The server drops no 2026-07-28 stream; the fault-server tests cover a
    // stateless stream that drops.)
    if mode == Mode::Resumable && !stateless {
        let steps = Arc::new(AtomicUsize::new(0));
        let st = steps.clone();
        let opts = CallOptions::default()
            .timeout(Duration::from_secs(20))
            .on_progress(move |_| {
                st.fetch_add(1, Ordering::SeqCst);
            });
        let start = Instant::now();
        let r = client
            .call_tool_with("drop_stream_then_finish", json!({}), opts)
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "drop_stream_then_finish: {e:?}\n{}",
                    peer.stderr().join("\n")
                )
            });
        eprintln!("resumed call took {:?}", start.elapsed());
        assert_eq!(r.text(), "finished after the stream dropped");
        assert_eq!(
            steps.load(Ordering::SeqCst),
            2,
            "progress before and after the drop"
        );
    }

    // Cancellation: a timeout posts notifications/cancelled (in the stateless era it closes the
    // call's stream instead, and posts nothing).
    let err = client
        .call_tool_with(
            "slow",
            json!({"steps": 20, "delay": 0.1}),
            CallOptions::default().timeout(Duration::from_millis(250)),
        )
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    let cancels = frames
        .lock()
        .unwrap()
        .iter()
        .filter(|(d, f)| *d == Direction::Outgoing && f.contains("notifications/cancelled"))
        .count();
    assert_eq!(cancels, usize::from(!stateless), "{mode:?}");
    let seen = peer.wait_for_stderr("slow cancelled", Duration::from_secs(5));
    eprintln!("{mode:?} {era:?}: the server saw the cancellation: {seen}");
    // Stateless, each POST is served by a transport of its own, so the cancellation reaches
    // no running request: the server finishes the call and its late answer is dropped.
    if mode != Mode::Stateless && !stateless {
        assert!(
            seen,
            "{mode:?}: the server never saw the cancellation:\n{}",
            peer.stderr().join("\n")
        );
    }
    // The connection lives on.
    let r = client
        .call_tool("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(r.text(), "2");

    if mode.back_channel() || stateless {
        assert!(frames
            .lock()
            .unwrap()
            .iter()
            .any(|(d, f)| *d == Direction::Incoming && f.contains("elicitation/create")));
    }
    let start = Instant::now();
    client.close().await;
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "close took {:?}",
        start.elapsed()
    );
}

#[test]
fn python_http_sse_mode() {
    if peers_skipped("python_http_sse_mode") {
        return;
    }
    run(Mode::Sse);
}

#[test]
fn python_http_json_mode() {
    if peers_skipped("python_http_json_mode") {
        return;
    }
    run(Mode::Json);
}

#[test]
fn python_http_stateless_mode() {
    if peers_skipped("python_http_stateless_mode") {
        return;
    }
    run(Mode::Stateless);
}

#[test]
fn python_http_resumable_mode() {
    if peers_skipped("python_http_resumable_mode") {
        return;
    }
    run(Mode::Resumable);
}
