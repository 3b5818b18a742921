//! Our Python test server on the pinned `mcp` 2.3.0 SDK, over stdio, in both eras: Auto must
//! choose the stateless era (the server speaks 2026-07-28); pinned Legacy uses the handshake.
//! Each test on every runtime (the adapter crate's `runtimes` axis).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpwire::{
    CallOptions, ChosenEra, ConnectOptions, Direction, ElicitAction, ElicitResult, Era, Handlers,
};
use mcpwire_tests::scenario::tool_names;
use mcpwire_tests::{peers_skipped, python_stdio};
use serde_json::{json, Map, Value};

#[macro_use]
#[path = "../../adapters/tests/runtimes/mod.rs"]
mod runtimes;
use runtimes::Rt;

/// Answers every form: a field about a name gets "Ada", any other field "green".
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

fn run(rt: &Rt, era: Era) {
    rt.block_on(async {
        let asked = Arc::new(AtomicUsize::new(0));
        let stderr = Arc::new(Mutex::new(Vec::<String>::new()));
        let frames = Arc::new(Mutex::new(Vec::<(Direction, String)>::new()));
        let (s, f) = (stderr.clone(), frames.clone());
        let mut opts = ConnectOptions::default()
            .handlers(handlers(asked.clone()))
            .on_stderr(move |line| s.lock().unwrap().push(line.to_owned()))
            .observer(move |d, b: &[u8]| {
                f.lock()
                    .unwrap()
                    .push((d, String::from_utf8_lossy(b).into_owned()))
            });
        opts.era = era;
        let client = rt.connect(&python_stdio(), opts).await.unwrap();
        let modern = era == Era::Auto;
        let info = client.server_info().unwrap();
        if modern {
            assert_eq!(client.era(), Some(ChosenEra::Stateless));
            assert_eq!(info.protocol_version, "2026-07-28");
        } else {
            assert_eq!(client.era(), Some(ChosenEra::Handshake));
            assert_eq!(info.protocol_version, "2025-11-25");
        }
        assert_eq!(info.server_info.name, "mcpwire-py-server");

        let names = tool_names(&client).await;
        for t in ["add", "greet", "two_questions", "slow"] {
            assert!(names.iter().any(|n| n == t), "{t} missing: {names:?}");
        }

        let r = client
            .call_tool("add", json!({"a": 2, "b": 40}))
            .await
            .unwrap();
        assert_eq!(r.text(), "42");

        // The same handler answers the elicitation mid-call (handshake era) and the
        // input_required round (stateless era).
        let r = client.call_tool("greet", json!({})).await.unwrap();
        assert_eq!(r.text(), "Hello, Ada!");
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        let r = client.call_tool("two_questions", json!({})).await.unwrap();
        assert_eq!(r.text(), "Ada likes green");
        assert_eq!(asked.load(Ordering::SeqCst), 3);

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
        assert_eq!(steps.load(Ordering::SeqCst), 2);

        // Cancellation: a timeout sends notifications/cancelled and the server stops the task.
        let err = client
            .call_tool_with(
                "slow",
                json!({"steps": 20, "delay": 0.1}),
                CallOptions::default().timeout(Duration::from_millis(250)),
            )
            .await
            .unwrap_err();
        assert!(err.is_timeout(), "{err:?}");
        let deadline = Instant::now() + Duration::from_secs(5);
        while !stderr
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("slow cancelled"))
        {
            assert!(
                Instant::now() < deadline,
                "the server never saw the cancellation"
            );
            rt.sleep(Duration::from_millis(20)).await;
        }
        {
            let frames = frames.lock().unwrap();
            if modern {
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
            } else {
                assert!(frames
                    .iter()
                    .any(|(d, f)| *d == Direction::Incoming && f.contains("elicitation/create")));
            }
        }
        client.close().await;
    });
}

fn python_auto_chooses_the_stateless_era(rt: &Rt) {
    if peers_skipped("python_auto_chooses_the_stateless_era") {
        return;
    }
    run(rt, Era::Auto);
}

fn python_pinned_to_the_handshake_era(rt: &Rt) {
    if peers_skipped("python_pinned_to_the_handshake_era") {
        return;
    }
    run(rt, Era::Handshake);
}

on_every_runtime!(
    python_auto_chooses_the_stateless_era,
    python_pinned_to_the_handshake_era
);
