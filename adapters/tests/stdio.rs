//! The stdio driver and the async Client against real processes: the built-in demo server (this
//! package's `mcpwire-demo-server`) and a scripted fault server, each test on every runtime
//! (see `runtimes`).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::core::jsonrpc::ErrorObject;
use mcpwire::core::{CallError, ClientError};
use mcpwire::core::{Deadline, LocalError};
use mcpwire::{
    CallOptions, ChosenEra, ConnectOptions, Direction, ElicitAction, ElicitResult, Era, Error,
    Handlers, Root, ServerConfig,
};
use serde_json::json;

#[macro_use]
mod runtimes;
use common::{alive, demo, gone_within};
use runtimes::Rt;

fn fault(mode: &str) -> ServerConfig {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/fault_server.py"
    );
    ServerConfig::stdio("python3", [script, mode])
}

fn with_elicitation() -> ConnectOptions {
    ConnectOptions::default().handlers(Handlers::new().on_elicitation(|req| async move {
        let name = req
            .message()
            .strip_prefix("name:")
            .unwrap_or("Ada")
            .to_string();
        Ok(ElicitResult {
            meta: None,
            action: ElicitAction::Accept,
            content: Some(serde_json::from_value(json!({ "name": name })).unwrap()),
        })
    }))
}

fn demo_server_end_to_end_in_both_eras(rt: &Rt) {
    end_to_end(rt, Era::Handshake);
    end_to_end(rt, Era::Auto);
}

fn end_to_end(rt: &Rt, era: Era) {
    rt.block_on(async {
        let frames = Arc::new(Mutex::new(Vec::<(Direction, String)>::new()));
        let tap = frames.clone();
        let mut opts = with_elicitation().observer(move |d, b: &[u8]| {
            tap.lock()
                .unwrap()
                .push((d, String::from_utf8_lossy(b).into_owned()))
        });
        opts.era = era;
        let client = rt.connect(&demo(), opts).await.unwrap();
        let info = client.server_info().unwrap();
        assert_eq!(info.server_info.name, "mcpwire-demo");
        let modern = era == Era::Auto;
        if modern {
            assert_eq!(info.protocol_version, "2026-07-28");
            assert_eq!(client.era(), Some(ChosenEra::Stateless));
        } else {
            assert_eq!(info.protocol_version, "2025-11-25");
            assert_eq!(client.era(), Some(ChosenEra::Handshake));
        }

        let tools = client.list_tools().await.unwrap();
        let served = mcpwire::core::server::demo::tools();
        assert_eq!(tools.len(), served.as_array().unwrap().len());
        let r = client
            .call_tool("echo", json!({"message": "hi"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "hi");
        let r = client
            .call_tool("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap();
        assert_eq!(r.structured_content, Some(json!({"sum": 3})));
        let r = client.call_tool("fail", json!({})).await.unwrap();
        assert!(r.is_error, "an isError result is a result");
        let err = client.call_tool("nope", json!({})).await.unwrap_err();
        assert_eq!(err.server_error().map(|e| e.code), Some(-32602));

        let seen = Arc::new(AtomicUsize::new(0));
        let s = seen.clone();
        let opts = CallOptions::default().on_progress(move |p| {
            assert_eq!(p.total, Some(3.0));
            s.fetch_add(1, Ordering::SeqCst);
        });
        let r = client
            .call_tool_with("slow", json!({"steps": 3, "interval_ms": 20}), opts)
            .await
            .unwrap();
        assert_eq!(r.text(), "done after 3 steps");
        assert_eq!(seen.load(Ordering::SeqCst), 3);

        let r = client
            .call_tool("ask", json!({"question": "name:Grace"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "hello, Grace");

        let r = client.call_tool("big", json!({"mib": 8})).await.unwrap();
        assert_eq!(r.text().len(), 8 << 20);

        assert_eq!(client.list_prompts().await.unwrap()[0].name, "greet");
        let read = client.read_resource("demo://readme").await.unwrap();
        assert_eq!(read.contents[0]["text"], "mcpwire demo server");
        if modern {
            let r = client.call_tool("survey", json!({})).await.unwrap();
            assert_eq!(r.text(), "Ada likes Ada");
            assert!(matches!(client.ping().await, Err(Error::Client(_))));
        } else {
            client.ping().await.unwrap();
        }

        let pid = client.pid();
        assert!(alive(pid));
        client.close().await;
        assert!(
            gone_within(pid, Duration::from_secs(5)),
            "server {pid} still runs"
        );
        let frames = frames.lock().unwrap();
        if modern {
            assert!(frames[0].1.contains("\"server/discover\""));
            assert!(frames
                .iter()
                .any(|(d, f)| *d == Direction::Incoming && f.contains("input_required")));
        } else {
            assert!(frames[0].1.contains("\"initialize\""));
            assert!(frames
                .iter()
                .any(|(d, f)| *d == Direction::Incoming && f.contains("elicitation/create")));
        }
    });
}

fn a_timeout_is_cancelled_on_the_wire_and_a_dropped_call_too(rt: &Rt) {
    rt.block_on(async {
        let frames = Arc::new(Mutex::new(Vec::<String>::new()));
        let tap = frames.clone();
        let opts = ConnectOptions::default().observer(move |d, b: &[u8]| {
            if d == Direction::Outgoing {
                tap.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(b).into_owned());
            }
        });
        let client = rt.connect(&demo(), opts).await.unwrap();
        let err = client
            .call_tool_with(
                "slow",
                json!({"steps": 100, "interval_ms": 50}),
                CallOptions::default().timeout(Duration::from_millis(200)),
            )
            .await
            .unwrap_err();
        assert!(err.is_timeout(), "{err:?}");
        assert_eq!(
            err,
            Error::Call(CallError::Local(LocalError::Timeout {
                which: Deadline::Idle,
                despite_progress: false,
                method: "tools/call".into(),
                after: Duration::from_millis(200),
            }))
        );
        // A call whose future is dropped is cancelled.
        let call = client.call_tool("slow", json!({"steps": 100, "interval_ms": 50}));
        let raced = future::or(async { Some(call.await) }, async {
            rt.sleep(Duration::from_millis(100)).await;
            None
        })
        .await;
        assert!(raced.is_none());
        // With a reason the host chose, from any handle.
        client.clone().set_cancel_reason("interrupted");
        let call = client.call_tool("slow", json!({"steps": 100, "interval_ms": 50}));
        let raced = future::or(async { Some(call.await) }, async {
            rt.sleep(Duration::from_millis(100)).await;
            None
        })
        .await;
        assert!(raced.is_none());
        client
            .call_tool("echo", json!({"message": "still here"}))
            .await
            .unwrap();
        let frames = frames.lock().unwrap();
        let cancels: Vec<_> = frames
            .iter()
            .filter(|f| f.contains("notifications/cancelled"))
            .collect();
        assert_eq!(cancels.len(), 3, "{frames:#?}");
        assert!(cancels[1].contains("\"reason\":\"the caller stopped waiting\""));
        assert!(
            cancels[2].contains("\"reason\":\"interrupted\""),
            "{}",
            cancels[2]
        );
        assert_eq!(client.calls_in_flight(), 0);
    });
}

fn a_thousand_concurrent_calls_with_interleaved_elicitations(rt: &Rt) {
    rt.block_on(async {
        let client = rt.connect(&demo(), with_elicitation()).await.unwrap();
        let calls = (0..1000).map(|i| {
            let client = client.clone();
            async move {
                if i % 2 == 0 {
                    let r = client
                        .call_tool("ask", json!({"question": format!("name:n{i}")}))
                        .await
                        .unwrap();
                    assert_eq!(r.text(), format!("hello, n{i}"));
                } else {
                    let r = client
                        .call_tool("echo", json!({"message": format!("m{i}")}))
                        .await
                        .unwrap();
                    assert_eq!(r.text(), format!("m{i}"));
                }
            }
        });
        let tasks: Vec<_> = calls.map(|call| rt.spawn(call)).collect();
        for t in tasks {
            t.await;
        }
        assert_eq!(client.calls_in_flight(), 0);
        client.close().await;
    });
}

fn the_client_from_a_plain_thread_with_the_driver_on_another_executor(rt: &Rt) {
    let (client, driver) = rt
        .connect_with_driver(&demo(), ConnectOptions::default())
        .unwrap();
    let executor = rt.drive_on_thread(driver);
    let worker = std::thread::spawn(move || {
        future::block_on(async {
            client.ready().await.unwrap();
            let r = client
                .call_tool("echo", json!({"message": "from a plain thread"}))
                .await
                .unwrap();
            assert_eq!(r.text(), "from a plain thread");
        })
    });
    worker.join().unwrap();
    // The last handle went with the worker: the driver closes and ends.
    executor.join().unwrap();
}

fn the_client_and_driver_on_one_single_threaded_executor(rt: &Rt) {
    rt.with_driver_on_one_executor(&demo(), ConnectOptions::default(), |client| async move {
        for i in 0..100 {
            let r = client
                .call_tool("echo", json!({"message": format!("{i}")}))
                .await
                .unwrap();
            assert_eq!(r.text(), format!("{i}"));
        }
    });
}

/// Where a handler ran: its thread, whether inside a tokio runtime, its tokio task.
#[derive(Debug, Clone)]
struct Seat {
    thread: String,
    in_tokio: bool,
    task: Option<tokio::task::Id>,
}

/// The host's handlers run on the runtime the host chose for the connection, as tasks of their
/// own: on tokio inside the runtime (a handler awaits tokio's own timer, which panics
/// elsewhere), each in a task of its own (two at once have two task ids); on smol on its
/// global executor's threads. Never in the caller's task.
fn handlers_run_on_the_host_s_runtime_as_tasks_of_their_own(rt: &Rt) {
    let kind = rt.kind();
    let seats = Arc::new(Mutex::new(Vec::<Seat>::new()));
    let seen = seats.clone();
    let handlers = Handlers::new().on_elicitation(move |req| {
        let seen = seen.clone();
        async move {
            let seat = Seat {
                thread: std::thread::current().name().unwrap_or("").to_owned(),
                in_tokio: tokio::runtime::Handle::try_current().is_ok(),
                task: tokio::task::try_id(),
            };
            seen.lock().unwrap().push(seat);
            // The host's own timer, made here: on tokio, tokio's.
            kind.sleep_here(Duration::from_millis(50)).await;
            let name = req
                .message()
                .strip_prefix("name:")
                .unwrap_or("?")
                .to_owned();
            Ok(ElicitResult {
                meta: None,
                action: ElicitAction::Accept,
                content: Some(serde_json::from_value(json!({ "name": name })).unwrap()),
            })
        }
    });
    let opts = ConnectOptions {
        era: Era::Handshake,
        ..ConnectOptions::default()
    }
    .handlers(handlers);
    rt.block_on(async {
        let caller_task = tokio::task::try_id();
        let client = rt.connect(&demo(), opts).await.unwrap();
        let (a, b) = future::zip(
            client.call_tool("ask", json!({"question": "name:Ann"})),
            client.call_tool("ask", json!({"question": "name:Bob"})),
        )
        .await;
        assert_eq!(a.unwrap().text(), "hello, Ann");
        assert_eq!(b.unwrap().text(), "hello, Bob");
        client.close().await;
        let seats = seats.lock().unwrap().clone();
        assert_eq!(seats.len(), 2, "{seats:?}");
        match kind {
            runtimes::Kind::Smol => {
                for seat in &seats {
                    assert!(seat.thread.starts_with("smol-"), "{seats:?}");
                    assert!(!seat.in_tokio, "{seats:?}");
                }
            }
            _ => {
                for seat in &seats {
                    assert!(seat.in_tokio, "{seats:?}");
                    assert!(seat.task.is_some(), "not in a task: {seats:?}");
                    assert_ne!(seat.task, caller_task, "{seats:?}");
                }
                assert_ne!(seats[0].task, seats[1].task, "one task for both: {seats:?}");
            }
        }
    });
}

/// Outside a tokio runtime, tokio's entry points say so, typed, and start nothing.
#[test]
fn tokio_s_entry_points_outside_a_tokio_runtime_are_a_typed_error() {
    let marker = std::env::temp_dir().join(format!("mcpwire-never-{}", std::process::id()));
    let script = format!("touch {}", marker.display());
    let config = ServerConfig::stdio("sh", ["-c", script.as_str()]);
    let err = mcpwire::tokio::connect_with_driver(&config, ConnectOptions::default()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NoRuntime {
                runtime: "tokio",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("no tokio runtime"), "{err}");
    let err =
        smol::block_on(mcpwire::tokio::connect(&config, ConnectOptions::default())).unwrap_err();
    assert!(matches!(err, Error::NoRuntime { .. }), "{err:?}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(!marker.exists(), "a server was started");
}

fn handlers_for_sampling_and_roots_declare_their_capabilities(rt: &Rt) {
    // The demo server does not ask for these; the declared capabilities show in the handshake.
    rt.block_on(async {
        let frames = Arc::new(Mutex::new(Vec::<String>::new()));
        let tap = frames.clone();
        let handlers = Handlers::new()
            .on_sampling(|_| async { Err(ErrorObject::new(-1, "no model")) })
            .on_roots(|| async {
                Ok(vec![Root {
                    meta: None,
                    uri: "file:///tmp".into(),
                    name: None,
                }])
            });
        let opts = ConnectOptions::default()
            .handlers(handlers)
            .observer(move |_d, b: &[u8]| {
                tap.lock().unwrap().push(String::from_utf8_lossy(b).into())
            });
        let client = rt.connect(&demo(), opts).await.unwrap();
        client.close().await;
        let probe = frames.lock().unwrap()[0].clone();
        let v: serde_json::Value = serde_json::from_str(&probe).unwrap();
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({"sampling": {}, "roots": {},
                "extensions": {"io.modelcontextprotocol/tasks": {}}})
        );
    });
}

fn a_change_of_roots_is_announced_in_the_handshake_era_and_refused_elsewhere(rt: &Rt) {
    rt.block_on(async {
        let frames = Arc::new(Mutex::new(Vec::<String>::new()));
        let tap = frames.clone();
        let roots = || {
            Handlers::new().on_roots(|| async {
                Ok(vec![Root {
                    meta: None,
                    uri: "file:///srv/project".into(),
                    name: None,
                }])
            })
        };
        let opts = ConnectOptions {
            era: mcpwire::Era::Handshake,
            ..ConnectOptions::default()
        }
        .handlers(roots())
        .observer(move |d, b: &[u8]| {
            if d == Direction::Outgoing {
                tap.lock().unwrap().push(String::from_utf8_lossy(b).into())
            }
        });
        let client = rt.connect(&demo(), opts).await.unwrap();
        client.roots_changed().expect("announced");
        // It goes out before the next call's request.
        client.ping().await.unwrap();
        client.close().await;
        let sent: Vec<serde_json::Value> = frames
            .lock()
            .unwrap()
            .iter()
            .map(|f| serde_json::from_str(f).unwrap())
            .collect();
        assert_eq!(
            sent[0]["params"]["capabilities"]["roots"],
            json!({"listChanged": true}),
            "initialize declares it"
        );
        assert!(
            sent.iter()
                .any(|m| m["method"] == "notifications/roots/list_changed"),
            "{sent:?}"
        );

        // The stateless era has no session to tell; a connection without roots has none to
        // announce.
        let stateless = rt
            .connect(&demo(), ConnectOptions::default().handlers(roots()))
            .await
            .unwrap();
        let e = stateless.roots_changed().unwrap_err();
        assert!(
            matches!(e, Error::Client(ClientError::NotSupported(_))),
            "{e:?}"
        );
        stateless.close().await;
        let plain = rt
            .connect(&demo(), ConnectOptions::default())
            .await
            .unwrap();
        let e = plain.roots_changed().unwrap_err();
        assert!(matches!(e, Error::Client(ClientError::Config(_))), "{e:?}");
        plain.close().await;
    });
}

fn spawn_failure_names_the_command(rt: &Rt) {
    let err = rt
        .connect_with_driver(
            &ServerConfig::stdio("/nonexistent/mcp-server", ["--x"]),
            ConnectOptions::default(),
        )
        .unwrap_err();
    let Error::Spawn { command, message } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(command, "/nonexistent/mcp-server --x");
    assert!(!message.is_empty());
    assert!(err.to_string().contains("/nonexistent/mcp-server"));
}

fn early_exit_is_a_typed_error_with_status_and_stderr(rt: &Rt) {
    rt.block_on(async {
        let config =
            ServerConfig::stdio("sh", ["-c", "echo 'cannot start: missing key' >&2; exit 7"]);
        let err = rt
            .connect(&config, ConnectOptions::default())
            .await
            .unwrap_err();
        let Error::Handshake { target, error, .. } = &err else {
            panic!("{err:?}")
        };
        assert!(target.starts_with("sh -c"));
        let text = error.to_string();
        assert!(
            text.contains("exit code 7") && text.contains("missing key"),
            "{text}"
        );
    });
}

/// A server that writes something other than JSON-RPC on stdout and never answers: the
/// handshake's failure (its exit, or its timeout) names what it wrote instead, typed and in
/// words: how many lines, the first two, escaped and cut.
fn a_failed_handshake_names_what_the_server_wrote_on_stdout_instead(rt: &Rt) {
    rt.block_on(async {
        // It exits after one line.
        let config = ServerConfig::stdio("sh", ["-c", "echo 1"]);
        let err = rt
            .connect(&config, ConnectOptions::default())
            .await
            .unwrap_err();
        let Error::Handshake {
            stray: Some(stray), ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(
            (stray.lines, stray.first.as_slice()),
            (1, &["1".to_owned()][..])
        );
        let text = err.to_string();
        assert!(text.contains("the server exited (exit code 0)"), "{text}");
        assert!(
            text.ends_with("; the server wrote 1 line on stdout that is not JSON-RPC: \"1\""),
            "{text}"
        );
        // It stays, and writes a banner with a terminal control, then 200 more lines.
        let script = "printf 'Server v1 \\033[1mready\\033[0m\\nlistening\\n'; \
                      i=0; while [ $i -lt 200 ]; do echo log $i; i=$((i+1)); done; sleep 30";
        let config = ServerConfig::stdio("sh", ["-c", script]);
        let opts = ConnectOptions {
            init_timeout: Duration::from_millis(1500),
            ..ConnectOptions::default()
        };
        let err = rt.connect(&config, opts).await.unwrap_err();
        let Error::Handshake {
            error,
            stray: Some(stray),
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert!(
            matches!(error, CallError::Local(LocalError::Timeout { .. })),
            "{error:?}"
        );
        assert_eq!(stray.lines, 202, "{stray:?}");
        assert_eq!(
            stray.first,
            ["Server v1 \\u{1b}[1mready\\u{1b}[0m", "listening"]
        );
        let text = err.to_string();
        assert!(
            text.contains(
                "the server wrote 202 lines on stdout that are not JSON-RPC, the first 2: \
                 \"Server v1 \\u{1b}[1mready\\u{1b}[0m\", \"listening\""
            ),
            "{text}"
        );
        // A server that wrote only JSON-RPC has nothing of the kind.
        let config = ServerConfig::stdio("sh", ["-c", "exit 3"]);
        let err = rt
            .connect(&config, ConnectOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(err, Error::Handshake { stray: None, .. }),
            "{err:?}"
        );
    });
}

fn stdout_noise_is_skipped_and_never_answered(rt: &Rt) {
    rt.block_on(async {
        let frames = Arc::new(Mutex::new(Vec::<(Direction, String)>::new()));
        let tap = frames.clone();
        let opts = ConnectOptions::default().observer(move |d, b: &[u8]| {
            tap.lock()
                .unwrap()
                .push((d, String::from_utf8_lossy(b).into()))
        });
        let client = rt.connect(&fault("noise"), opts).await.unwrap();
        let r = client
            .call_tool("echo", json!({"message": "through the noise"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "through the noise");
        client.close().await;
        let frames = frames.lock().unwrap();
        let outgoing: Vec<_> = frames
            .iter()
            .filter(|(d, _)| *d == Direction::Outgoing)
            .map(|(_, f)| serde_json::from_str::<serde_json::Value>(f).unwrap())
            .collect();
        // The probe, initialize, initialized, tools/call — and no error answer to the noise.
        assert_eq!(outgoing.len(), 4, "{outgoing:#?}");
        assert_eq!(outgoing[0]["method"], "server/discover");
        assert!(frames.iter().any(|(_, f)| f == "this is not json"));
    });
}

fn a_20_mib_line_is_dropped_and_the_stream_resyncs(rt: &Rt) {
    rt.block_on(async {
        let client = rt
            .connect(&fault("huge-line"), ConnectOptions::default())
            .await
            .unwrap();
        let err = client
            .call_tool_with(
                "echo",
                json!({"message": "lost"}),
                CallOptions::default().timeout(Duration::from_secs(3)),
            )
            .await
            .unwrap_err();
        // The over-cap answer is dropped, and its call ends at once with an error that names
        // the cap (not after its timeout).
        assert!(
            matches!(
                err,
                Error::Call(CallError::Local(LocalError::ResponseTooLarge { limit }))
                    if limit == 16 * 1024 * 1024
            ),
            "{err:?}"
        );
        let r = client
            .call_tool("echo", json!({"message": "after"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "after");
        client.close().await;
    });
}

fn ten_mib_of_stderr_never_stalls_the_server(rt: &Rt) {
    rt.block_on(async {
        let lines = Arc::new(AtomicUsize::new(0));
        let l = lines.clone();
        let opts = ConnectOptions::default().on_stderr(move |_| {
            l.fetch_add(1, Ordering::Relaxed);
        });
        let client = rt.connect(&fault("stderr"), opts).await.unwrap();
        let r = client
            .call_tool("echo", json!({"message": "ok"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "ok");
        assert_eq!(lines.load(Ordering::Relaxed), 10 * 1024);
        client.close().await;
    });
}

fn exit_in_the_middle_of_a_request_ends_it_with_the_status_and_stderr_tail(rt: &Rt) {
    rt.block_on(async {
        let client = rt
            .connect(&fault("exit-mid"), ConnectOptions::default())
            .await
            .unwrap();
        let err = client
            .call_tool("echo", json!({"message": "x"}))
            .await
            .unwrap_err();
        // The call was written before the server died: it may have run, and it is not sent
        // again (at most once). The reason names the exit status and the end of stderr.
        assert!(err.maybe_executed(), "{err:?}");
        let Error::MaybeExecuted {
            reason, request, ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(request.method, "tools/call");
        assert!(
            reason.contains("exit code 3") && reason.contains("the tool crashed"),
            "{reason}"
        );
        // Later calls fail at once: the connection is closed, with the same reason.
        let again = client.ping().await.unwrap_err();
        assert_eq!(
            again,
            Error::Closed(mcpwire_core::Closed::new(reason.clone()))
        );
    });
}

fn an_answer_and_stderr_written_just_before_exit_are_not_lost(rt: &Rt) {
    // The exit may be reported before the pipes' readiness: what the server wrote before it
    // exited is read all the same, its last line even without a line end. Several rounds, for
    // the order varies.
    for (round, mode) in ["last-words", "last-words-unended"]
        .repeat(4)
        .into_iter()
        .enumerate()
    {
        rt.block_on(async {
            let lines = Arc::new(Mutex::new(Vec::<String>::new()));
            let seen = lines.clone();
            let opts = ConnectOptions::default()
                .on_stderr(move |l| seen.lock().unwrap().push(l.to_owned()));
            let client = rt.connect(&fault(mode), opts).await.unwrap();
            let message = format!("round {round}");
            let result = client
                .call_tool("echo", json!({ "message": message }))
                .await
                .unwrap();
            assert_eq!(result.text(), message);
            // The server is gone: the next call says so, and its stderr was read to the end.
            let err = client.ping().await.unwrap_err();
            assert!(
                err.to_string()
                    .contains(&format!("goodbye after {message}")),
                "{err}"
            );
            // The callback runs on the driver's thread, maybe after the end was reported.
            let want = [format!("goodbye after {message}")];
            for _ in 0..500 {
                if lines.lock().unwrap().len() >= want.len() {
                    break;
                }
                rt.sleep(Duration::from_millis(10)).await;
            }
            assert_eq!(*lines.lock().unwrap(), want);
        });
    }
}

fn close_reaps_a_grandchild(rt: &Rt) {
    rt.block_on(async {
        let grandchild = Arc::new(Mutex::new(None));
        let g = grandchild.clone();
        let opts = ConnectOptions::default().on_stderr(move |line| {
            if let Some(pid) = line.strip_prefix("grandchild ") {
                *g.lock().unwrap() = pid.trim().parse::<u32>().ok();
            }
        });
        let client = rt.connect(&fault("grandchild"), opts).await.unwrap();
        client.ping().await.ok();
        let pid = grandchild
            .lock()
            .unwrap()
            .expect("the server named its grandchild");
        assert!(alive(pid));
        client.close().await;
        assert!(
            gone_within(pid, Duration::from_secs(5)),
            "grandchild {pid} survived"
        );
    });
}

fn close_escalates_to_kill_for_a_server_that_ignores_eof_and_sigterm(rt: &Rt) {
    rt.block_on(async {
        let mut opts = ConnectOptions::default();
        opts.shutdown.after_close_stdin = Duration::from_millis(200);
        opts.shutdown.after_terminate = Duration::from_millis(200);
        let client = rt.connect(&fault("stubborn"), opts).await.unwrap();
        let pid = client.pid();
        let start = Instant::now();
        client.close().await;
        assert!(
            start.elapsed() >= Duration::from_millis(400),
            "it waited before each step"
        );
        assert!(gone_within(pid, Duration::from_secs(5)));
    });
}

fn dropping_the_driver_on_a_plain_thread_kills_the_server(rt: &Rt) {
    let pid = std::thread::scope(|s| {
        s.spawn(|| {
            let (client, driver) = rt
                .connect_with_driver(&fault("stubborn"), ConnectOptions::default())
                .unwrap();
            let pid = client.pid();
            drop(driver);
            drop(client);
            pid
        })
        .join()
        .unwrap()
    });
    assert!(gone_within(pid, Duration::from_secs(5)));
}

/// Auto detection against servers that cannot take the probe: one exits on it, one never
/// answers it. Either way the server is started again and the handshake runs on the new one.
fn auto_starts_the_server_again_when_the_probe_kills_it_or_goes_unanswered(rt: &Rt) {
    for mode in ["exit-before-init", "silent-before-init"] {
        rt.block_on(async {
            let frames = Arc::new(Mutex::new(Vec::<String>::new()));
            let tap = frames.clone();
            let mut opts = ConnectOptions::default().observer(move |d, b: &[u8]| {
                if d == Direction::Outgoing {
                    tap.lock()
                        .unwrap()
                        .push(String::from_utf8_lossy(b).into_owned());
                }
            });
            opts.probe_timeout = Duration::from_millis(300);
            let start = Instant::now();
            let client = rt.connect(&fault(mode), opts).await.unwrap();
            assert_eq!(client.era(), Some(ChosenEra::Handshake), "{mode}");
            let r = client
                .call_tool("echo", json!({"message": "second process"}))
                .await
                .unwrap();
            assert_eq!(r.text(), "second process");
            {
                let frames = frames.lock().unwrap();
                assert!(frames[0].contains("server/discover"), "{mode}: {frames:?}");
                assert!(frames[1].contains("\"initialize\""), "{mode}: {frames:?}");
            }
            if mode == "silent-before-init" {
                assert!(start.elapsed() >= Duration::from_millis(300));
            }
            client.close().await;
        });
    }
}

fn a_server_that_fails_to_start_is_not_started_again(rt: &Rt) {
    rt.block_on(async {
        // It exits with an error during the probe, answering nothing: a start-up failure.
        let config = ServerConfig::stdio("sh", ["-c", "echo 'boot failed' >&2; exit 1"]);
        let (client, driver) = rt
            .connect_with_driver(&config, ConnectOptions::default())
            .unwrap();
        rt.spawn(driver).detach();
        let mut events = client.events();
        let err = client.ready().await.unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Handshake { .. }), "{err:?}");
        let stderr = text.split("stderr:").nth(1).unwrap_or_default();
        assert_eq!(stderr.matches("boot failed").count(), 1, "{text}");
        assert!(text.contains("exit code 1"), "{text}");
        assert!(text.contains("before answering anything"), "{text}");
        while let Some(e) = events.next().await {
            assert!(
                !matches!(e, mcpwire::Event::Restarting { .. }),
                "started again: {e:?}"
            );
        }
    });
}

fn a_server_started_again_after_the_probe_shows_its_last_run_s_stderr_only(rt: &Rt) {
    rt.block_on(async {
        // It exits on the probe and says why: it is started again for the handshake, and
        // exits again.
        let config = ServerConfig::stdio(
            "sh",
            [
                "-c",
                "read l; echo 'run failed: request before initialize' >&2; exit 1",
            ],
        );
        let (client, driver) = rt
            .connect_with_driver(&config, ConnectOptions::default())
            .unwrap();
        rt.spawn(driver).detach();
        let mut events = client.events();
        let err = client.ready().await.unwrap_err();
        let text = err.to_string();
        let stderr = text.split("stderr:").nth(1).unwrap_or_default();
        assert_eq!(stderr.matches("run failed").count(), 1, "{text}");
        assert!(text.contains("exit code 1"), "{text}");
        // The restart was an event.
        let mut restarted = false;
        while let Some(e) = events.next().await {
            restarted |= matches!(e, mcpwire::Event::Restarting { .. });
        }
        assert!(restarted);
    });
}

fn a_failed_handshake_closes_the_server_gracefully_before_connect_returns(rt: &Rt) {
    rt.block_on(async {
        let marker = std::env::temp_dir().join(format!("mcpwire-eof-{}", std::process::id()));
        let _ = std::fs::remove_file(&marker);
        // It refuses initialize, then waits for stdin's end and notes it.
        let script = format!(
            r#"read l; echo '{{"jsonrpc":"2.0","id":0,"error":{{"code":-32600,"message":"no"}}}}'; cat >/dev/null; echo eof > {}"#,
            marker.display()
        );
        let config = ServerConfig::stdio("sh", ["-c", script.as_str()]);
        let options = ConnectOptions {
            era: Era::Handshake,
            ..ConnectOptions::default()
        };
        let err = rt.connect(&config, options).await.unwrap_err();
        assert!(matches!(err, Error::Handshake { .. }), "{err:?}");
        // The server saw stdin's end (a graceful close, not a kill) before connect returned.
        let seen = std::fs::read_to_string(&marker).unwrap_or_default();
        let _ = std::fs::remove_file(&marker);
        assert_eq!(seen.trim(), "eof");
    });
}

fn a_capability_declared_when_required_is_declared_for_the_call_that_needs_it(rt: &Rt) {
    rt.block_on(async {
        let frames = Arc::new(Mutex::new(Vec::<String>::new()));
        let tap = frames.clone();
        let mut opts = with_elicitation().observer(move |d, b: &[u8]| {
            if d == Direction::Outgoing {
                tap.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(b).into_owned());
            }
        });
        opts.handlers = opts.handlers.declare_when_required();
        let client = rt.connect(&demo(), opts).await.unwrap();
        assert_eq!(client.era(), Some(ChosenEra::Stateless));
        let r = client
            .call_tool("echo", json!({"message": "hi"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "hi");
        // The demo server's `ask` refuses a request without elicitation (-32021): it is sent
        // once more declaring it, and the user is asked.
        let r = client
            .call_tool("ask", json!({"question": "name:Grace"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "hello, Grace");
        let sent = frames.lock().unwrap().clone();
        let calls: Vec<&String> = sent.iter().filter(|f| f.contains("tools/call")).collect();
        let declares = |f: &str| f.contains(r#""elicitation":{"#);
        assert!(!declares(calls[0]), "echo declared nothing: {}", calls[0]);
        assert!(!declares(calls[1]), "ask's first request: {}", calls[1]);
        assert!(calls[2..].iter().all(|f| declares(f)), "{calls:?}");
        assert_eq!(
            calls.len(),
            4,
            "ask, once more, and its input round: {calls:?}"
        );
        client.close().await;
    });
}

on_every_runtime!(
    handlers_run_on_the_host_s_runtime_as_tasks_of_their_own,
    demo_server_end_to_end_in_both_eras,
    a_timeout_is_cancelled_on_the_wire_and_a_dropped_call_too,
    a_thousand_concurrent_calls_with_interleaved_elicitations,
    the_client_from_a_plain_thread_with_the_driver_on_another_executor,
    the_client_and_driver_on_one_single_threaded_executor,
    handlers_for_sampling_and_roots_declare_their_capabilities,
    a_change_of_roots_is_announced_in_the_handshake_era_and_refused_elsewhere,
    spawn_failure_names_the_command,
    early_exit_is_a_typed_error_with_status_and_stderr,
    a_failed_handshake_names_what_the_server_wrote_on_stdout_instead,
    stdout_noise_is_skipped_and_never_answered,
    a_20_mib_line_is_dropped_and_the_stream_resyncs,
    ten_mib_of_stderr_never_stalls_the_server,
    exit_in_the_middle_of_a_request_ends_it_with_the_status_and_stderr_tail,
    an_answer_and_stderr_written_just_before_exit_are_not_lost,
    close_reaps_a_grandchild,
    close_escalates_to_kill_for_a_server_that_ignores_eof_and_sigterm,
    dropping_the_driver_on_a_plain_thread_kills_the_server,
    auto_starts_the_server_again_when_the_probe_kills_it_or_goes_unanswered,
    a_server_that_fails_to_start_is_not_started_again,
    a_server_started_again_after_the_probe_shows_its_last_run_s_stderr_only,
    a_failed_handshake_closes_the_server_gracefully_before_connect_returns,
    a_capability_declared_when_required_is_declared_for_the_call_that_needs_it,
);
