//! Our Python test server (the pinned `mcp` 2.3.0 SDK) through the public async Client: one
//! scenario over stdio and over Streamable HTTP on each stack (mcpwire's own client in clear,
//! libcurl over TLS) in each of its HTTP modes: SSE responses (the default), plain JSON
//! responses, stateless (no session), and resumable (an event store, `retry: 300`, a tool that
//! drops its stream mid-call). Each with the era detected (`Era::Auto` picks 2026-07-28) and
//! with the handshake era pinned.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpwire::{
    CallOptions, ChosenEra, ConnectOptions, Direction, ElicitAction, ElicitResult, Era, Handlers,
};
use mcpwire_tests::scenario::tool_names;
use mcpwire_tests::ways::{Reached, Setting, Transport};
use mcpwire_tests::{peers_skipped, python_http, python_stdio};
use serde_json::{json, Map, Value};

/// How the server serves: over stdio, or over HTTP in one of its modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Stdio,
    Sse,
    Json,
    Stateless,
    Resumable,
}

impl Mode {
    /// The server's options for HTTP in this mode.
    fn http_args(self) -> &'static [&'static str] {
        match self {
            Mode::Stdio | Mode::Sse => &[],
            Mode::Json => &["--json"],
            Mode::Stateless => &["--stateless"],
            Mode::Resumable => &["--resumable"],
        }
    }

    /// Whether the server can send requests to the client mid-call in the handshake era: over
    /// stdio, or on a POST's SSE stream of a session.
    fn back_channel(self) -> bool {
        matches!(self, Mode::Stdio | Mode::Sse | Mode::Resumable)
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

/// Runs the scenario in `mode` for each era of `eras`, in each setting over `transports`, a new
/// server for each run.
fn run(mode: Mode, eras: &[Era], transports: &[Transport]) {
    for setting in Setting::each(transports) {
        for &era in eras {
            let http = || python_http(mode.http_args()).1;
            let (peer, options) = Reached::start(setting.transport, python_stdio, http);
            let limit = Duration::from_secs(90);
            let context = || format!(" ({mode:?}, {era:?}, {setting}){}", peer.stderr_text());
            setting.run(limit, scenario(mode, era, setting, &peer, options), context);
        }
    }
}

/// The era detected or pinned, the tools, a call, elicitation mid-call (answered by the handler
/// where the server can ask, refused with a typed error where it cannot), progress, a stream
/// resumed (resumable mode), a timeout that cancels (on the wire where the era does), the
/// connection after it, and a quick close.
async fn scenario(mode: Mode, era: Era, setting: Setting, peer: &Reached, options: ConnectOptions) {
    let asked = Arc::new(AtomicUsize::new(0));
    let frames: Frames = Arc::default();
    let tap = frames.clone();
    let opts = ConnectOptions { era, ..options }
        .handlers(handlers(asked.clone()))
        .observer(move |d, b: &[u8]| {
            tap.lock()
                .unwrap()
                .push((d, String::from_utf8_lossy(b).into_owned()))
        });
    let client = setting
        .connect(&peer.config, opts)
        .await
        .unwrap_or_else(|e| panic!("{mode:?} {setting}: connect: {e}{}", peer.stderr_text()));
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
    for t in ["add", "greet", "two_questions", "slow"] {
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

    // Elicitation mid-call: answered by the handler where the server has a back-channel (the
    // stateless era asks as an input round of the call, which the same handler answers);
    // elsewhere the server refuses with a typed JSON-RPC error.
    let answerable = mode.back_channel() || stateless;
    let greet = client.call_tool("greet", json!({})).await;
    if answerable {
        let r = greet.unwrap_or_else(|e| panic!("{mode:?}: greet: {e:?}"));
        assert_eq!(r.text(), "Hello, Ada!");
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        let r = client.call_tool("two_questions", json!({})).await.unwrap();
        assert_eq!(r.text(), "Ada likes green");
        assert_eq!(asked.load(Ordering::SeqCst), 3);
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
            .unwrap_or_else(|e| panic!("drop_stream_then_finish: {e:?}{}", peer.stderr_text()));
        eprintln!("resumed call took {:?}", start.elapsed());
        assert_eq!(r.text(), "finished after the stream dropped");
        assert_eq!(
            steps.load(Ordering::SeqCst),
            2,
            "progress before and after the drop"
        );
    }

    // Cancellation: a timeout sends notifications/cancelled (over HTTP in the stateless era it
    // closes the call's stream instead, and posts nothing).
    let err = client
        .call_tool_with(
            "slow",
            json!({"steps": 20, "delay": 0.1}),
            CallOptions::default().timeout(Duration::from_millis(250)),
        )
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    let over_http = matches!(setting.transport, Transport::Http(_));
    let cancels = frames
        .lock()
        .unwrap()
        .iter()
        .filter(|(d, f)| *d == Direction::Outgoing && f.contains("notifications/cancelled"))
        .count();
    assert_eq!(cancels, usize::from(!(over_http && stateless)), "{mode:?}");
    // Over stateless HTTP, each POST is served by a transport of its own, so the cancellation
    // reaches no running request: the server finishes the call and its late answer is dropped.
    let reaches = !over_http || (mode != Mode::Stateless && !stateless);
    let seen = match reaches {
        true => {
            peer.wait_for_stderr("slow cancelled", Duration::from_secs(5))
                .await
        }
        false => peer.stderr().iter().any(|l| l.contains("slow cancelled")),
    };
    eprintln!("{mode:?} {era:?} {setting}: the server saw the cancellation: {seen}");
    if reaches {
        assert!(
            seen,
            "{mode:?} {setting}: the server never saw the cancellation{}",
            peer.stderr_text()
        );
    }
    // The connection lives on.
    let r = client
        .call_tool("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(r.text(), "2");

    {
        let frames = frames.lock().unwrap();
        if answerable {
            assert!(frames
                .iter()
                .any(|(d, f)| *d == Direction::Incoming && f.contains("elicitation/create")));
        }
        if stateless {
            assert!(frames
                .iter()
                .any(|(d, f)| *d == Direction::Incoming && f.contains("\"input_required\"")));
            // Every request carried the era's _meta.
            for (_, f) in frames.iter().filter(|(d, _)| *d == Direction::Outgoing) {
                let v: Value = serde_json::from_str(f).unwrap();
                if v.get("id").is_some() {
                    assert_eq!(
                        v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
                        "2026-07-28",
                        "{f}"
                    );
                }
            }
        }
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
fn python_auto_chooses_the_stateless_era() {
    if peers_skipped("python_auto_chooses_the_stateless_era") {
        return;
    }
    run(Mode::Stdio, &[Era::Auto], &[Transport::Stdio]);
}

#[test]
fn python_pinned_to_the_handshake_era() {
    if peers_skipped("python_pinned_to_the_handshake_era") {
        return;
    }
    run(Mode::Stdio, &[Era::Handshake], &[Transport::Stdio]);
}

const BOTH_ERAS: [Era; 2] = [Era::Auto, Era::Handshake];

#[test]
fn python_http_sse_mode() {
    if peers_skipped("python_http_sse_mode") {
        return;
    }
    run(Mode::Sse, &BOTH_ERAS, &Transport::HTTP_STACKS);
}

#[test]
fn python_http_json_mode() {
    if peers_skipped("python_http_json_mode") {
        return;
    }
    run(Mode::Json, &BOTH_ERAS, &Transport::HTTP_STACKS);
}

#[test]
fn python_http_stateless_mode() {
    if peers_skipped("python_http_stateless_mode") {
        return;
    }
    run(Mode::Stateless, &BOTH_ERAS, &Transport::HTTP_STACKS);
}

#[test]
fn python_http_resumable_mode() {
    if peers_skipped("python_http_resumable_mode") {
        return;
    }
    run(Mode::Resumable, &BOTH_ERAS, &Transport::HTTP_STACKS);
}
