//! The host's own code cannot take a connection down: handlers (elicitation, sampling, roots)
//! that panic, refuse, never finish or give an answer that cannot be sent; progress callbacks
//! and observers that panic; on every entry point of every runtime (`connect_smol` or
//! `mcpwire::tokio::connect`, the driver on a thread of its own, the driver and the caller on
//! one executor; see `runtimes`), and under the Manager (smol). Against the demo server with
//! its `sample` and `roots` tools, which tell what the client answered. (A call's deadline
//! without the driver: `deadlines`.)

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::core::jsonrpc::ErrorObject;
use mcpwire::core::types::CreateMessageResult;
use mcpwire::core::CallError;
use mcpwire::{
    CallOptions, Client, ConnectOptions, ElicitAnswer, Era, Error, Event, HandlerFailure, Handlers,
    HostHandler, Root, ServerConfig,
};
use serde_json::json;

#[macro_use]
mod runtimes;
use runtimes::Rt;

/// The demo server with its tools that ask the host, waiting `wait_ms` for the host's answers.
fn demo(wait_ms: u64) -> ServerConfig {
    common::demo_with([
        "--host-requests".to_string(),
        "--request-timeout-ms".into(),
        wait_ms.to_string(),
    ])
}

/// What a handler does, call after call: the n-th call does `PLAN[n]` (then answers).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Act {
    /// Panics in the handler's future.
    Panic,
    /// Panics before giving a future (in the host's function itself).
    PanicAtOnce,
    /// Answers with an error of its choice.
    Refuse,
    /// Never finishes (and records that its future was dropped).
    Never,
    /// Gives an answer that cannot be sent (elicitation: a content that is no object).
    Unsendable,
    /// Answers.
    Answer,
}

/// The host's side: which act comes next, and whether a never-ending handler was dropped.
#[derive(Default)]
struct Host {
    calls: AtomicUsize,
    plan: std::sync::Mutex<Vec<Act>>,
    dropped: Arc<AtomicBool>,
}

impl Host {
    fn next(&self) -> Act {
        let n = self.calls.fetch_add(1, SeqCst);
        let plan = self.plan.lock().unwrap();
        plan.get(n).copied().unwrap_or(Act::Answer)
    }

    fn plan(&self, acts: &[Act]) {
        *self.plan.lock().unwrap() = acts.to_vec();
        self.calls.store(0, SeqCst);
    }
}

/// Sets a flag when dropped: a handler's future that never finishes carries one.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, SeqCst);
    }
}

/// Handlers of all three kinds that follow `host`'s plan.
fn handlers(host: &Arc<Host>) -> Handlers {
    let (e, s, r) = (host.clone(), host.clone(), host.clone());
    Handlers::new()
        .on_elicitation(move |_req| {
            let act = e.next();
            assert_ne!(act, Act::PanicAtOnce, "the host's bug, before any future");
            let flag = DropFlag(e.dropped.clone());
            async move {
                let _flag = flag;
                match act {
                    Act::Panic => panic!("the host's elicitation bug"),
                    Act::Refuse => Err(ErrorObject::new(-1, "the user said no")),
                    Act::Never => future::pending().await,
                    Act::Unsendable => Ok(ElicitAnswer::accept("a string, not a form")),
                    _ => Ok(ElicitAnswer::accept(json!({"name": "Ann"}))),
                }
            }
        })
        .on_sampling(move |request| {
            let act = s.next();
            assert_ne!(act, Act::PanicAtOnce, "the host's bug, before any future");
            let flag = DropFlag(s.dropped.clone());
            async move {
                let _flag = flag;
                match act {
                    Act::Panic => panic!("the host's sampling bug"),
                    Act::Refuse => Err(ErrorObject::new(-1, "the user said no")),
                    Act::Never => future::pending().await,
                    _ => {
                        let asked = request.messages[0].text_content();
                        Ok(CreateMessageResult::text("m-1", &format!("re: {asked}")))
                    }
                }
            }
        })
        .on_roots(move || {
            let act = r.next();
            assert_ne!(act, Act::PanicAtOnce, "the host's bug, before any future");
            let flag = DropFlag(r.dropped.clone());
            async move {
                let _flag = flag;
                // An `expect` on what the host thought could not be missing.
                let configured: Option<Vec<Root>> =
                    std::env::var("NO_SUCH_ROOTS_VAR").ok().map(|_| Vec::new());
                match act {
                    Act::Panic => Ok(configured.expect("the host's roots bug")),
                    Act::Refuse => Err(ErrorObject::new(-1, "the user said no")),
                    Act::Never => future::pending().await,
                    _ => Ok(vec![Root {
                        meta: None,
                        uri: "file:///work".into(),
                        name: None,
                    }]),
                }
            }
        })
}

/// The handler failures among the events waiting now.
fn failures(events: &mut mcpwire::Events) -> Vec<HandlerFailure> {
    let mut found = Vec::new();
    while let Some(Some(event)) = future::block_on(future::poll_once(events.next())) {
        if let Event::HandlerFailed(f) = event {
            found.push(f);
        }
    }
    found
}

/// The tool and the answer text of each handler kind when it answers.
fn tool_of(kind: HostHandler) -> (&'static str, &'static str) {
    match kind {
        HostHandler::Elicitation => ("ask", "hello, Ann"),
        HostHandler::Sampling => ("sample", "m-1 said: re: hi"),
        _ => ("roots", "roots: file:///work"),
    }
}

/// The server's words for the fixed error of a failed handler.
const FAILED: &str = "the client refused: the client's handler failed (code -32603)";

/// One handler kind through every act, on one connection: what the server got each time,
/// the failure told once, the later calls working, and no call outliving its timeout.
async fn every_act(rt: &Rt, client: &Client, host: &Host, kind: HostHandler) {
    let (tool, answered) = tool_of(kind);
    let mut events = client.events();
    let call = |opts: CallOptions| client.call_tool_with(tool, json!({}), opts);
    let mut acts = vec![Act::Panic, Act::PanicAtOnce, Act::Refuse];
    if kind == HostHandler::Elicitation {
        acts.push(Act::Unsendable);
    }
    acts.extend([Act::Never, Act::Never, Act::Answer]);
    host.plan(&acts);
    let mut nevers = 0;
    for act in acts {
        let started = Instant::now();
        if act == Act::Never {
            nevers += 1;
        }
        host.dropped.store(false, SeqCst);
        match act {
            Act::Panic | Act::PanicAtOnce | Act::Unsendable => {
                let r = call(CallOptions::default()).await.unwrap();
                assert_eq!(r.text(), FAILED, "{kind:?} {act:?}");
                // Told once, naming the handler and the server's request; its words never
                // went to the server.
                let told = failures(&mut events);
                assert_eq!(told.len(), 1, "{kind:?} {act:?}: {told:?}");
                assert_eq!(told[0].handler, kind);
                assert!(told[0].request.is_some(), "{:?}", told[0]);
                let why = match act {
                    Act::Unsendable => "not a JSON object but a string",
                    _ => "the host's",
                };
                assert!(told[0].reason.contains(why), "{act:?}: {}", told[0].reason);
            }
            Act::Refuse => {
                let r = call(CallOptions::default()).await.unwrap();
                assert_eq!(
                    r.text(),
                    "the client refused: the user said no (code -1)",
                    "{kind:?}"
                );
                assert!(failures(&mut events).is_empty(), "a refusal is no failure");
            }
            Act::Never if nevers == 1 => {
                // The server's own timeout (1 s) ends it: it tells us, and the handler is
                // dropped.
                let r = call(CallOptions::default()).await.unwrap();
                assert!(r.text().starts_with("no answer"), "{kind:?}: {}", r.text());
                let waited = started.elapsed();
                assert!(waited < Duration::from_secs(3), "{kind:?}: {waited:?}");
                for _ in 0..100 {
                    if host.dropped.load(SeqCst) {
                        break;
                    }
                    rt.sleep(Duration::from_millis(10)).await;
                }
                assert!(host.dropped.load(SeqCst), "{kind:?}: the handler was kept");
            }
            Act::Never => {
                // Our own timeout ends the call, on time; the handler holds up nothing.
                let opts = CallOptions::default().timeout(Duration::from_millis(300));
                let e = call(opts).await.unwrap_err();
                assert!(e.is_timeout(), "{kind:?}: {e}");
                let waited = started.elapsed();
                assert!(
                    waited < Duration::from_millis(300 + 700),
                    "{kind:?}: the call outlived its timeout: {waited:?}"
                );
                let r = client
                    .call_tool("echo", json!({"message": "meanwhile"}))
                    .await
                    .unwrap();
                assert_eq!(r.text(), "meanwhile");
            }
            Act::Answer => {
                let r = call(CallOptions::default()).await.unwrap();
                assert_eq!(r.text(), answered, "{kind:?}: a later handler works");
            }
        }
    }
    let r = client
        .call_tool("echo", json!({"message": "still here"}))
        .await
        .unwrap();
    assert_eq!(r.text(), "still here");
    assert!(client.closed_reason().is_none());
}

const KINDS: [HostHandler; 3] = [
    HostHandler::Elicitation,
    HostHandler::Sampling,
    HostHandler::Roots,
];

fn options(host: &Arc<Host>) -> ConnectOptions {
    let mut options = ConnectOptions::default().handlers(handlers(host));
    options.era = Era::Handshake;
    options
}

fn failing_handlers_cost_their_request_only_with_the_runtime_s_connect(rt: &Rt) {
    rt.block_on(async {
        let host = Arc::new(Host::default());
        let client = rt.connect(&demo(1000), options(&host)).await.unwrap();
        for kind in KINDS {
            every_act(rt, &client, &host, kind).await;
        }
        client.close().await;
    });
}

fn failing_handlers_cost_their_request_only_with_the_driver_on_its_own_thread(rt: &Rt) {
    let host = Arc::new(Host::default());
    let (client, driver) = rt.connect_with_driver(&demo(1000), options(&host)).unwrap();
    let executor = rt.drive_on_thread(driver);
    future::block_on(async {
        client.ready().await.unwrap();
        for kind in KINDS {
            every_act(rt, &client, &host, kind).await;
        }
    });
    drop(client);
    executor.join().unwrap();
}

fn failing_handlers_cost_their_request_only_on_one_single_threaded_executor(rt: &Rt) {
    let host = Arc::new(Host::default());
    rt.with_driver_on_one_executor(&demo(1000), options(&host), |client| async move {
        client.ready().await.unwrap();
        for kind in KINDS {
            every_act(rt, &client, &host, kind).await;
        }
    });
}

fn in_the_stateless_era_a_failing_handler_fails_its_call_only(rt: &Rt) {
    rt.block_on(async {
        let host = Arc::new(Host::default());
        let mut options = options(&host);
        options.era = Era::Stateless;
        let client = rt.connect(&demo(1000), options).await.unwrap();
        let mut events = client.events();
        for kind in KINDS {
            let (tool, answered) = tool_of(kind);
            host.plan(&[Act::Panic]);
            // The input could not be given: the call ends here with the fixed error (the
            // server asked in a round, and gets nothing).
            let e = client.call_tool(tool, json!({})).await.unwrap_err();
            match &e {
                Error::Call(CallError::InputFailed { error, .. }) => {
                    assert_eq!(error.code, -32603);
                    assert_eq!(error.message, mcpwire::HANDLER_FAILED);
                }
                other => panic!("{kind:?}: {other:?}"),
            }
            let told = failures(&mut events);
            assert_eq!(told.len(), 1, "{kind:?}: {told:?}");
            assert_eq!(told[0].handler, kind);
            // The next round asks again, and the handler answers.
            let r = client.call_tool(tool, json!({})).await.unwrap();
            assert_eq!(r.text(), answered, "{kind:?}");
        }
        client.close().await;
    });
}

fn a_progress_callback_that_panics_is_told_once_a_time_and_the_call_goes_on(rt: &Rt) {
    rt.block_on(async {
        let client = rt
            .connect(&demo(1000), ConnectOptions::default())
            .await
            .unwrap();
        let mut events = client.events();
        let seen = Arc::new(AtomicUsize::new(0));
        let s = seen.clone();
        let opts = CallOptions::default().on_progress(move |p| {
            s.fetch_add(1, SeqCst);
            assert!(
                p.progress > 1.0,
                "the host's progress bug at {}",
                p.progress
            );
        });
        let r = client
            .call_tool_with("slow", json!({"steps": 3, "interval_ms": 10}), opts)
            .await
            .unwrap();
        assert!(!r.is_error, "{}", r.text());
        assert_eq!(seen.load(SeqCst), 3, "every update reached the callback");
        let told = failures(&mut events);
        assert_eq!(told.len(), 1, "{told:?}");
        assert_eq!(told[0].handler, HostHandler::Progress);
        assert!(told[0].call.is_some());
        assert!(told[0].reason.contains("the host's progress bug at 1"));
        client.close().await;
    });
}

fn an_observer_that_panics_is_told_and_called_again(rt: &Rt) {
    rt.block_on(async {
        let frames = Arc::new(AtomicUsize::new(0));
        let f = frames.clone();
        let options = ConnectOptions::default().observer(move |_d, _b: &[u8]| {
            let n = f.fetch_add(1, SeqCst);
            assert_ne!(n, 2, "the host's tap bug");
        });
        let client = rt.connect(&demo(1000), options).await.unwrap();
        let mut events = client.events();
        let r = client
            .call_tool("echo", json!({"message": "tapped"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "tapped");
        let before = frames.load(SeqCst);
        assert!(before > 3, "called again after its panic: {before}");
        let told = failures(&mut events);
        assert_eq!(told.len(), 1, "{told:?}");
        assert_eq!(told[0].handler, HostHandler::FrameObserver);
        client.close().await;
    });
}

mod manager {
    use super::*;
    use mcpwire::manager::backoff::RestartPolicy;
    use mcpwire::manager::{
        CacheLocation, Manager, ManagerError, ManagerEvent, ManagerOptions, ServerState,
    };

    /// The Manager's events until `done` says so (or 10 s pass).
    async fn events_until(
        manager: &Manager,
        done: impl Fn(&[ManagerEvent]) -> bool,
    ) -> Vec<ManagerEvent> {
        let mut seen = Vec::new();
        let until = Instant::now() + Duration::from_secs(10);
        while !done(&seen) && Instant::now() < until {
            let next = future::or(async { Some(manager.next_event().await) }, async {
                smol::Timer::after(Duration::from_millis(100)).await;
                None
            });
            if let Some(event) = next.await {
                seen.push(event);
            }
        }
        seen
    }

    fn failed_handlers(seen: &[ManagerEvent]) -> Vec<(&str, &HandlerFailure)> {
        seen.iter()
            .filter_map(|e| match e {
                ManagerEvent::HandlerFailed { server, failure } => Some((server.as_str(), failure)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn host_code_that_fails_under_the_manager_costs_nothing_else() {
        smol::block_on(async {
            let host = Arc::new(Host::default());
            let for_options = host.clone();
            let mut o = ManagerOptions::default();
            o.cache = CacheLocation::MemoryOnly;
            o.restart = RestartPolicy::immediate();
            o.restart.max_failures = Some(1);
            // The host's function that makes each server's options: it has a bug for one.
            o.connect_options = Arc::new(move |name: &str| {
                assert_ne!(name, "bad", "the host's options bug");
                ConnectOptions::default().handlers(handlers(&for_options))
            });
            let manager = Manager::new(o);
            // The Manager chooses each start's era: the handshake era, where the server asks.
            let mut settings = mcpwire::hosts::ServerSettings::default();
            settings.era = Some(Era::Handshake);
            manager.add_with("good", demo(1000), settings.clone());
            manager.add_with("bad", demo(1000), settings);
            manager.wait_settled().await;
            assert!(
                matches!(manager.state("good"), Some(ServerState::Ready { .. })),
                "{:?}",
                manager.state("good")
            );
            match manager.state("bad") {
                Some(ServerState::Failed { reason, .. }) => {
                    assert!(reason.contains("connect options"), "{reason}");
                    assert!(reason.contains("the host's options bug"), "{reason}");
                }
                other => panic!("{other:?}"),
            }
            let seen = events_until(&manager, |s| !failed_handlers(s).is_empty()).await;
            let told = failed_handlers(&seen);
            assert_eq!(told.len(), 1, "{seen:?}");
            assert_eq!(
                (told[0].0, told[0].1.handler),
                ("bad", HostHandler::ConnectOptions)
            );

            // A handler that panics on the good server: its request gets the fixed error, the
            // host an event, and the next call works.
            host.plan(&[Act::Panic]);
            let r = manager.call_tool("good__roots", json!({})).await.unwrap();
            assert_eq!(r.text(), FAILED);
            let seen = events_until(&manager, |s| !failed_handlers(s).is_empty()).await;
            let told = failed_handlers(&seen);
            assert_eq!(told.len(), 1, "{seen:?}");
            assert_eq!((told[0].0, told[0].1.handler), ("good", HostHandler::Roots));
            let r = manager.call_tool("good__roots", json!({})).await.unwrap();
            assert_eq!(r.text(), "roots: file:///work");
            assert!(manager.tools().iter().any(|t| t.server == "good"));
            manager.close().await;
        });
    }

    #[test]
    fn the_manager_s_calls_take_the_client_s_options() {
        smol::block_on(async {
            let mut o = ManagerOptions::default();
            o.cache = CacheLocation::MemoryOnly;
            let manager = Manager::new(o);
            manager.add("demo", demo(1000));
            manager.wait_settled().await;
            // A timeout, on time, typed.
            let started = Instant::now();
            let opts = CallOptions::default().timeout(Duration::from_millis(300));
            let e = manager
                .call_tool_with(
                    "demo__slow",
                    json!({"steps": 100, "interval_ms": 100}),
                    opts,
                )
                .await
                .unwrap_err();
            let waited = started.elapsed();
            match &e {
                ManagerError::Call { server, error } => {
                    assert_eq!(server, "demo");
                    assert!(error.is_timeout(), "{error}");
                }
                other => panic!("{other:?}"),
            }
            assert!(waited < Duration::from_millis(300 + 700), "{waited:?}");
            // Progress, to its callback.
            let steps = Arc::new(AtomicUsize::new(0));
            let s = steps.clone();
            let opts = CallOptions::default().on_progress(move |_| {
                s.fetch_add(1, SeqCst);
            });
            let r = manager
                .call_tool_with("demo__slow", json!({"steps": 3, "interval_ms": 10}), opts)
                .await
                .unwrap();
            assert!(!r.is_error);
            assert_eq!(steps.load(SeqCst), 3);
            // Cancellation: dropping the call's future cancels it; the next call works.
            let dropped = future::or(
                async {
                    let slow = json!({"steps": 100, "interval_ms": 100});
                    let _ = manager.call_tool("demo__slow", slow).await;
                    false
                },
                async {
                    smol::Timer::after(Duration::from_millis(100)).await;
                    true
                },
            )
            .await;
            assert!(dropped);
            let r = manager
                .call_tool("demo__echo", json!({"message": "after"}))
                .await
                .unwrap();
            assert_eq!(r.text(), "after");
            assert_eq!(manager.client("demo").unwrap().calls_in_flight(), 0);
            manager.close().await;
        });
    }
}

on_every_runtime!(
    failing_handlers_cost_their_request_only_with_the_runtime_s_connect,
    failing_handlers_cost_their_request_only_with_the_driver_on_its_own_thread,
    failing_handlers_cost_their_request_only_on_one_single_threaded_executor,
    in_the_stateless_era_a_failing_handler_fails_its_call_only,
    a_progress_callback_that_panics_is_told_once_a_time_and_the_call_goes_on,
    an_observer_that_panics_is_told_and_called_again,
);
