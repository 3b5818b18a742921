//! The Manager end to end: ten servers at once (demo servers, server-everything, the Python
//! server over stdio and HTTP, one that hangs, one that cannot be spawned, one that crashes
//! under its first call), restarts, crash/restart cycles that leave nothing behind, and the
//! cache serving a slow starter's tools before it is ready. Each test runs on smol and on
//! tokio's two runtimes, from one source.

use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcpwire::manager::backoff::RestartPolicy;
use mcpwire::manager::{
    CacheLocation, Manager, ManagerError, ManagerEvent, ManagerOptions, ServerState,
};
use mcpwire::ServerConfig;
use mcpwire_tests::process::alive;
use mcpwire_tests::scenario::run_within;
use mcpwire_tests::{
    everything_stdio, free_port, peers_skipped, python_http, python_http_at, python_stdio,
};
use serde_json::json;

fn demo() -> ServerConfig {
    ServerConfig::stdio(env!("CARGO_BIN_EXE_demo-server"), Vec::<String>::new())
}

/// A demo server that exits the moment its `n`-th `tools/call` arrives.
fn crasher(n: usize) -> ServerConfig {
    ServerConfig::stdio(
        env!("CARGO_BIN_EXE_demo-server"),
        ["--crash-on-call".to_owned(), n.to_string()],
    )
}

/// The runtime a test's Manager runs on: smol (`Manager::new`) or a tokio runtime
/// (`mcpwire::tokio::manager`), each test written once and run on smol and on tokio's
/// multi-thread and current_thread runtimes (`on_every_runtime!`).
struct Rt {
    tokio: Option<tokio::runtime::Runtime>,
}

#[derive(Clone, Copy)]
enum Kind {
    Smol,
    TokioMultiThread,
    TokioCurrentThread,
}

impl Rt {
    fn new(kind: Kind) -> Rt {
        let builder = match kind {
            Kind::Smol => None,
            Kind::TokioMultiThread => {
                let mut b = tokio::runtime::Builder::new_multi_thread();
                b.worker_threads(2);
                Some(b)
            }
            Kind::TokioCurrentThread => Some(tokio::runtime::Builder::new_current_thread()),
        };
        let tokio = builder.map(|mut b| b.enable_all().build().expect("a tokio runtime"));
        Rt { tokio }
    }

    /// A Manager on this runtime (from any thread).
    fn manager(&self, options: ManagerOptions) -> Manager {
        match &self.tokio {
            None => Manager::new(options),
            Some(rt) => {
                let _entered = rt.enter();
                mcpwire::tokio::manager(options).expect("inside the runtime")
            }
        }
    }

    /// Runs `f` on this runtime, failing when it takes longer than `limit`.
    fn run<T>(&self, limit: Duration, f: impl Future<Output = T>) -> T {
        match &self.tokio {
            None => run_within(limit, f, String::new),
            Some(rt) => rt.block_on(async {
                match tokio::time::timeout(limit, f).await {
                    Ok(done) => done,
                    Err(_) => panic!("not done within {} s", limit.as_secs()),
                }
            }),
        }
    }

    /// A wake-up after `after`, on this runtime's timer.
    async fn sleep(&self, after: Duration) {
        match &self.tokio {
            None => {
                async_io::Timer::after(after).await;
            }
            Some(_) => tokio::time::sleep(after).await,
        }
    }
}

/// One test per runtime for each function named: `fn name(rt: &Rt)` becomes a module `name`
/// with the tests `smol`, `tokio_multi_thread` and `tokio_current_thread`.
macro_rules! on_every_runtime {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn smol() {
                super::$name(&super::Rt::new(super::Kind::Smol))
            }

            #[test]
            fn tokio_multi_thread() {
                super::$name(&super::Rt::new(super::Kind::TokioMultiThread))
            }

            #[test]
            fn tokio_current_thread() {
                super::$name(&super::Rt::new(super::Kind::TokioCurrentThread))
            }
        }
    )*};
}

fn options() -> ManagerOptions {
    let mut o = ManagerOptions::default();
    o.cache = CacheLocation::MemoryOnly;
    o.jitter_seed = Some(7);
    o
}

/// Records the pid of each ready server's process.
fn note_pids(manager: &Manager, pids: &mut Vec<u32>) {
    for (name, _) in manager.states() {
        if let Some(pid) = manager.client(&name).map(|c| c.pid()).filter(|p| *p != 0) {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
    }
}

/// Waits up to 5 s for every process in `pids` to be gone; gives those still alive.
fn survivors(pids: &[u32]) -> Vec<u32> {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || Instant::now() > until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One run of the ten servers at a time: its runs on each runtime would otherwise start 21
/// servers (Node and Python among them) at once beside the rest of the suite, and the good
/// ones' start-up would be measured against the machine's load rather than the Manager.
static TEN_SERVERS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn ten_servers_start_at_once_and_a_hanging_one_holds_back_none(rt: &Rt) {
    if peers_skipped("ten_servers_start_at_once_and_a_hanging_one_holds_back_none") {
        return;
    }
    let _one_run = TEN_SERVERS.lock().unwrap_or_else(|e| e.into_inner());
    let (py_http, _py_peer) = python_http(&[]);
    let good: Vec<(&str, ServerConfig)> = vec![
        ("demo-a", demo()),
        ("demo-b", demo()),
        ("demo-c", demo()),
        ("everything", everything_stdio()),
        ("py-stdio", python_stdio()),
        ("py-http", py_http),
        ("crasher", crasher(1)),
    ];
    let mut options = options();
    options.startup_timeout = Duration::from_secs(8);
    // One failure is enough to give up on the ones that cannot start.
    options.restart = RestartPolicy::default();
    options.restart.max_failures = Some(1);
    let manager = rt.manager(options);
    let t0 = Instant::now();
    manager.add("hangs", ServerConfig::stdio("sleep", ["600"]));
    manager.add(
        "missing",
        ServerConfig::stdio("/nonexistent/mcpwire-no-such-server", Vec::<String>::new()),
    );
    for (name, config) in &good {
        manager.add(name, config.clone());
    }
    let mut pids = Vec::new();
    rt.run(Duration::from_secs(90), async {
        // Every good server is ready while the hanging one is still starting.
        let mut timeline: Vec<(Duration, String, &'static str)> = Vec::new();
        loop {
            let ManagerEvent::State { server, state } = manager.next_event().await else {
                continue;
            };
            timeline.push((t0.elapsed(), server.clone(), state.word()));
            let ready = good
                .iter()
                .filter(|(n, _)| matches!(manager.state(n), Some(ServerState::Ready { .. })))
                .count();
            if ready == good.len() {
                break;
            }
            assert!(
                !(server == "hangs" && state.settled()),
                "the hanging server's deadline fired before every good server was ready: {timeline:?}"
            );
        }
        assert!(
            matches!(manager.state("hangs"), Some(ServerState::Starting { .. })),
            "{timeline:?}"
        );
        eprintln!("timeline: {timeline:#?}");
        note_pids(&manager, &mut pids);
        // The namespace: every ready server's tools, qualified.
        let tools = manager.tools();
        for (name, _) in &good {
            assert!(
                tools
                    .iter()
                    .any(|t| &t.server == name && t.qualified.starts_with(&format!("{name}__"))),
                "{name} has no tools in {:?}",
                tools.iter().map(|t| &t.qualified).collect::<Vec<_>>()
            );
        }
        let r = manager
            .call_tool("demo-b__add", json!({"a": 2, "b": 40}))
            .await
            .expect("routed to demo-b");
        assert_eq!(r.text(), "42");
        let r = manager
            .call_tool("demo-c/add", json!({"a": 1, "b": 1}))
            .await
            .expect("server/tool accepted");
        assert_eq!(r.text(), "2");
        // The crasher dies under its call: a typed error, no retry; then it is restarted.
        let e = manager
            .call_tool("crasher__add", json!({"a": 1, "b": 1}))
            .await
            .expect_err("it crashed");
        assert!(
            matches!(e, ManagerError::ServerWentAway { ref server, .. } if server == "crasher"),
            "{e:?}"
        );
        manager
            .wait_until(|s| {
                s.iter().any(|(n, st)| n == "hangs" && st.settled())
                    && s.iter().any(|(n, st)| n == "missing" && st.settled())
            })
            .await;
        let Some(ServerState::Failed { reason, .. }) = manager.state("missing") else {
            panic!("missing: {:?}", manager.state("missing"))
        };
        assert!(reason.contains("cannot start"), "{reason}");
        let Some(ServerState::Failed { reason, .. }) = manager.state("hangs") else {
            panic!("hangs: {:?}", manager.state("hangs"))
        };
        // Its start-up timeout ran out: the Manager's own deadline, or the connection's (the
        // probe takes a third at most; `initialize` on a new process the rest, and the words
        // quote the whole budget).
        assert!(
            reason.contains("not ready within")
                || reason.contains("no answer to initialize within 8 s"),
            "{reason}"
        );
        // Calls to a failed server say so, with the reason.
        let e = manager
            .call_tool("demo-a__nothing", json!({}))
            .await
            .expect_err("no such tool");
        assert!(matches!(e, ManagerError::UnknownTool(_)), "{e:?}");
        note_pids(&manager, &mut pids);
        manager.close().await;
    });
    assert!(pids.len() >= 6, "{pids:?}");
    assert_eq!(survivors(&pids), Vec::<u32>::new(), "left behind");
}

fn a_hundred_crash_and_restart_cycles_leave_nothing_behind(rt: &Rt) {
    let cycles: usize = std::env::var("MCPWIRE_MANAGER_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let mut options = options();
    options.restart = RestartPolicy::immediate();
    let manager = rt.manager(options);
    manager.add("crasher", crasher(1));
    let t0 = Instant::now();
    let mut latencies = Vec::new();
    let mut pids = Vec::new();
    rt.run(Duration::from_secs(300), async {
        manager
            .wait_until(|s| matches!(s[0].1, ServerState::Ready { .. }))
            .await;
        pids.push(manager.client("crasher").expect("ready").pid());
        for i in 0..cycles {
            let e = manager
                .call_tool("crasher__add", json!({"a": 1, "b": 2}))
                .await
                .expect_err("it crashes on its first call");
            assert!(
                matches!(e, ManagerError::ServerWentAway { .. }),
                "cycle {i}: {e:?}"
            );
            let died = Instant::now();
            let old = pids.last().copied();
            // Ready again on a new process (the error can come before the state changes).
            manager
                .wait_until(|s| {
                    let now = manager.client("crasher").map(|c| c.pid());
                    matches!(s[0].1, ServerState::Ready { .. }) && now.is_some() && now != old
                })
                .await;
            latencies.push(died.elapsed());
            let client = manager.client("crasher").expect("ready");
            assert_eq!(client.calls_in_flight(), 0);
            pids.push(client.pid());
        }
        manager.close().await;
    });
    latencies.sort();
    eprintln!(
        "{cycles} cycles in {:?}; restart latency median {:?}, max {:?}",
        t0.elapsed(),
        latencies[latencies.len() / 2],
        latencies.last().unwrap()
    );
    assert_eq!(pids.len(), cycles + 1);
    assert_eq!(survivors(&pids), Vec::<u32>::new(), "left behind");
}

fn route_finds_a_tool_as_call_tool_does_and_follows_restarts(rt: &Rt) {
    let mut options = options();
    options.restart = RestartPolicy::immediate();
    let manager = rt.manager(options);
    manager.add("a", crasher(1));
    manager.add("b", demo());
    manager.add("my server", demo());
    rt.run(Duration::from_secs(60), async {
        manager
            .wait_until(|s| {
                s.iter()
                    .all(|(_, s)| matches!(s, ServerState::Ready { .. }))
            })
            .await;
        let r = manager.route("b__echo").expect("b's echo");
        assert_eq!(
            (r.server(), r.tool_name(), r.tool().qualified.as_str()),
            ("b", "echo", "b__echo")
        );
        // A name that had to change: found under it and as server/tool, and reported.
        let r = manager.route("my server/echo").expect("server/tool");
        assert_eq!(
            (r.server(), r.tool().qualified.as_str()),
            ("my server", "my_server__echo")
        );
        assert_eq!(
            manager
                .route("my_server__echo")
                .expect("qualified")
                .server(),
            "my server"
        );
        assert!(matches!(
            manager.route("nope__echo"),
            Err(ManagerError::UnknownTool(_))
        ));
        loop {
            if let ManagerEvent::Naming(note) = manager.next_event().await {
                assert!(format!("{note:?}").contains("my_server__"), "{note:?}");
                break;
            }
        }
        // `a` crashes under its first call and comes back on a new process: the same tools,
        // found the same way.
        let listed = manager.tools();
        let old = manager.client("a").map(|c| c.pid());
        let _ = manager.call_tool("a__add", json!({"a": 1, "b": 2})).await;
        manager
            .wait_until(|s| {
                let now = manager.client("a").map(|c| c.pid());
                matches!(s[0].1, ServerState::Ready { .. }) && now.is_some() && now != old
            })
            .await;
        let again = manager.tools();
        assert_eq!(again.len(), listed.len());
        assert!(again.iter().all(|t| !t.stale));
        assert_eq!(manager.route("a__add").expect("a's add").server(), "a");
        let echo = manager
            .call_tool("b__echo", json!({"message": "hi"}))
            .await
            .expect("b answers");
        assert_eq!(echo.text(), "hi");
        manager.close().await;
    });
}

fn the_cache_serves_a_slow_starter_s_tools_before_it_is_ready(rt: &Rt) {
    let dir = mcpwire_tests::temp_dir("manager-cache");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // One configuration (the same cache key) whose server is quick the first time and slow
    // the second: a script whose body changes between the runs.
    let script: PathBuf = dir.join("server.sh");
    let quick = format!("#!/bin/sh\nexec '{}'\n", env!("CARGO_BIN_EXE_demo-server"));
    std::fs::write(&script, &quick).unwrap();
    let config = ServerConfig::stdio("sh", [script.display().to_string()]);
    let cache = dir.join("cache");
    let with_cache = || {
        let mut o = options();
        o.cache = CacheLocation::At(cache.clone());
        o
    };
    rt.run(Duration::from_secs(60), async {
        let first = rt.manager(with_cache());
        first.add("slow", config.clone());
        first.wait_settled().await;
        assert!(matches!(
            first.state("slow"),
            Some(ServerState::Ready { .. })
        ));
        let live: Vec<String> = first.tools().iter().map(|t| t.qualified.clone()).collect();
        assert!(live.contains(&"slow__add".to_owned()), "{live:?}");
        // Its prompts and resources too.
        let prompts: Vec<String> = first
            .prompts()
            .iter()
            .map(|p| p.item.name.clone())
            .collect();
        assert!(prompts.contains(&"greet".to_owned()), "{prompts:?}");
        let resources: Vec<String> = first
            .resources()
            .iter()
            .map(|r| r.item.uri.clone())
            .collect();
        assert!(
            resources.contains(&"demo://readme".to_owned()),
            "{resources:?}"
        );
        first.close().await;

        std::fs::write(&script, format!("#!/bin/sh\nsleep 3\n{}", &quick[10..])).unwrap();
        let second = rt.manager(with_cache());
        second.add("slow", config.clone());
        let cached = second.tools();
        assert!(matches!(
            second.state("slow"),
            Some(ServerState::Starting { .. })
        ));
        assert!(
            !cached.is_empty() && cached.iter().all(|t| t.stale),
            "{cached:?}"
        );
        let names: Vec<String> = cached.iter().map(|t| t.qualified.clone()).collect();
        assert_eq!(names, live, "the cached namespace is the live one");
        let cached_prompts = second.prompts();
        assert!(cached_prompts.iter().all(|p| p.stale), "{cached_prompts:?}");
        let names: Vec<String> = cached_prompts.iter().map(|p| p.item.name.clone()).collect();
        assert_eq!(names, prompts);
        assert!(second.resources().iter().all(|r| r.stale));
        // Not callable until ready: the state says why.
        let e = second
            .call_tool("slow__add", json!({"a": 1, "b": 1}))
            .await
            .expect_err("starting");
        assert!(matches!(e, ManagerError::NotReady { .. }), "{e:?}");
        second.wait_settled().await;
        assert!(second.tools().iter().all(|t| !t.stale));
        assert_eq!(
            second
                .call_tool("slow__add", json!({"a": 1, "b": 1}))
                .await
                .unwrap()
                .text(),
            "2"
        );
        second.close().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server that fails serves its cached tools, prompts and resources, all marked stale: the
/// same for the three lists.
fn a_failed_server_serves_all_its_cached_lists_stale(rt: &Rt) {
    let dir = mcpwire_tests::temp_dir("manager-failed");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let script: PathBuf = dir.join("server.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nexec '{}'\n", env!("CARGO_BIN_EXE_demo-server")),
    )
    .unwrap();
    let config = ServerConfig::stdio("sh", [script.display().to_string()]);
    let cache = dir.join("cache");
    let with_cache = || {
        let mut o = options();
        o.cache = CacheLocation::At(cache.clone());
        o.restart.max_failures = Some(1);
        o
    };
    rt.run(Duration::from_secs(60), async {
        let first = rt.manager(with_cache());
        first.add("flaky", config.clone());
        first.wait_settled().await;
        let counts = (
            first.tools().len(),
            first.prompts().len(),
            first.resources().len(),
        );
        assert!(counts.0 > 0 && counts.1 > 0 && counts.2 > 0, "{counts:?}");
        first.close().await;

        // The next run's server exits at once: the Manager gives up on it.
        std::fs::write(&script, "#!/bin/sh\nexit 1\n").unwrap();
        let second = rt.manager(with_cache());
        second.add("flaky", config.clone());
        second.wait_settled().await;
        assert!(
            matches!(second.state("flaky"), Some(ServerState::Failed { .. })),
            "{:?}",
            second.state("flaky")
        );
        let (tools, prompts, resources) = (second.tools(), second.prompts(), second.resources());
        assert_eq!((tools.len(), prompts.len(), resources.len()), counts);
        assert!(tools.iter().all(|t| t.stale), "{tools:?}");
        assert!(prompts.iter().all(|p| p.stale), "{prompts:?}");
        assert!(resources.iter().all(|r| r.stale), "{resources:?}");
        second.close().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

fn an_http_server_that_went_away_is_reconnected_with_a_new_session(rt: &Rt) {
    if peers_skipped("an_http_server_that_went_away_is_reconnected_with_a_new_session") {
        return;
    }
    let port = free_port();
    let (config, peer) = python_http_at(port, &[]);
    let mut options = options();
    options.restart = RestartPolicy::immediate();
    options.restart.initial = Duration::from_millis(200);
    options.restart.max = Duration::from_millis(200);
    let manager = rt.manager(options);
    let mut handshake = mcpwire::hosts::ServerSettings::default();
    handshake.era = Some(mcpwire::Era::Handshake);
    manager.add_with("web", config, handshake);
    rt.run(Duration::from_secs(60), async {
        manager.wait_settled().await;
        let first = manager.client("web").expect("ready");
        let session = first.server_info().map(|_| ());
        assert!(session.is_some());
        assert_eq!(
            manager
                .call_tool("web__add", json!({"a": 1, "b": 2}))
                .await
                .unwrap()
                .text(),
            "3"
        );
        // The server goes away: the call finds no connection, and the Manager reconnects.
        drop(peer);
        let e = manager
            .call_tool("web__add", json!({"a": 1, "b": 2}))
            .await
            .expect_err("nobody listens");
        // Refused, or (on the pooled connection the server just closed) cut off: either way
        // the Manager finds it gone.
        assert!(
            e.to_string().contains("refused") || e.to_string().contains("may have run"),
            "{e}"
        );
        manager
            .wait_until(|s| !matches!(s[0].1, ServerState::Ready { .. }))
            .await;
        // It comes back on the same port: the Manager's next attempt connects, in a new session.
        let (_config, _peer) = python_http_at(port, &[]);
        manager
            .wait_until(|s| matches!(s[0].1, ServerState::Ready { .. }))
            .await;
        assert_eq!(
            manager
                .call_tool("web__add", json!({"a": 2, "b": 2}))
                .await
                .unwrap()
                .text(),
            "4"
        );
        manager.close().await;
    });
}

/// Writes `n` cache entries named `<prefix>NNN.json` into `dir`, each last written `age_days`
/// (plus its index in seconds) ago.
fn old_entries(dir: &std::path::Path, prefix: &str, n: usize, age_days: u64) {
    std::fs::create_dir_all(dir).unwrap();
    let now = std::time::SystemTime::now();
    for i in 0..n {
        let path = dir.join(format!("{prefix}{i:03}.json"));
        std::fs::write(&path, r#"{"mcpwireCache":1,"lists":{}}"#).unwrap();
        let at = now - Duration::from_secs(age_days * 24 * 3600 + i as u64);
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(at).unwrap();
    }
}

fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The cache folder is pruned when a Manager is made: entries not written for 30 days go,
/// then the least recently written beyond 256 entries; what is not the cache's stays.
fn the_cache_folder_is_pruned_to_its_limits(rt: &Rt) {
    let dir = mcpwire_tests::temp_dir("manager-prune");
    let _ = std::fs::remove_dir_all(&dir);
    let cache = dir.join("cache");
    old_entries(&cache, "aged", 5, 31);
    old_entries(&cache, "recent", 300, 1);
    // A temporary file an interrupted write left, two days ago, and a file of the user's.
    let tmp = cache.join(".recent000.1.0.tmp");
    std::fs::write(&tmp, "{").unwrap();
    let two_days = std::time::SystemTime::now() - Duration::from_secs(2 * 24 * 3600);
    let file = std::fs::File::options().write(true).open(&tmp).unwrap();
    file.set_modified(two_days).unwrap();
    drop(file);
    std::fs::write(cache.join("notes.txt"), "mine").unwrap();
    assert_eq!(names_in(&cache).len(), 307);
    let mut o = options();
    o.cache = CacheLocation::At(cache.clone());
    let manager = rt.manager(o);
    let names = names_in(&cache);
    let recent: Vec<&String> = names.iter().filter(|n| n.starts_with("recent")).collect();
    assert_eq!(recent.len(), 256, "{names:?}");
    // The most recently written are the ones kept.
    assert_eq!(recent.first().map(|s| s.as_str()), Some("recent000.json"));
    assert_eq!(recent.last().map(|s| s.as_str()), Some("recent255.json"));
    assert!(!names.iter().any(|n| n.starts_with("aged")), "{names:?}");
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    assert_eq!(names.len(), 257, "{names:?}");
    assert!(names.contains(&"notes.txt".to_owned()));
    drop(manager);

    // Limits of one's own: at most 3 entries.
    let mut o = options();
    o.cache = CacheLocation::At(cache.clone());
    o.cache_limits.max_entries = 3;
    let _manager = rt.manager(o);
    let names = names_in(&cache);
    assert_eq!(
        names,
        [
            "notes.txt",
            "recent000.json",
            "recent001.json",
            "recent002.json"
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The paging server: its tools, prompts and resources listed three at a time, with `args`.
fn paging(args: &[&str]) -> ServerConfig {
    ServerConfig::stdio(env!("CARGO_BIN_EXE_paging-server"), args.iter().copied())
}

/// The names of server `server`'s tools (qualified), prompts and resources (URIs) as the
/// Manager serves them, and whether each was stale.
type Lists = (
    Vec<(String, bool)>,
    Vec<(String, bool)>,
    Vec<(String, bool)>,
);

fn lists_of(manager: &Manager, server: &str) -> Lists {
    let tools = manager.tools();
    let prompts = manager.prompts();
    let resources = manager.resources();
    (
        tools
            .iter()
            .filter(|t| t.server == server)
            .map(|t| (t.qualified.clone(), t.stale))
            .collect(),
        prompts
            .iter()
            .filter(|p| p.server == server)
            .map(|p| (p.item.name.clone(), p.stale))
            .collect(),
        resources
            .iter()
            .filter(|r| r.server == server)
            .map(|r| (r.item.uri.clone(), r.stale))
            .collect(),
    )
}

/// `n` names made by `f`, each live (not stale).
fn live(n: usize, f: impl Fn(usize) -> String) -> Vec<(String, bool)> {
    (0..n).map(|i| (f(i), false)).collect()
}

/// Waits (within the run's bound) until `done` holds of the Manager.
async fn until(rt: &Rt, manager: &Manager, done: impl Fn(&Manager) -> bool) {
    while !done(manager) {
        rt.sleep(Duration::from_millis(20)).await;
    }
}

/// A server that lists its tools, prompts and resources three at a time: every item of each
/// list arrives, a `list_changed` lists every page again, and the cache file holds every page.
fn every_page_of_every_list_arrives_and_a_change_lists_every_page_again(rt: &Rt) {
    let dir = mcpwire_tests::temp_dir("manager-pages");
    let cache = dir.join("cache");
    let args = [
        "--tools",
        "10",
        "--prompts",
        "11",
        "--resources",
        "7",
        "--page",
        "3",
    ];
    let config = paging(&args);
    rt.run(Duration::from_secs(60), async {
        let manager = rt.manager(options().cache(CacheLocation::At(cache.clone())));
        manager.add("paged", config.clone());
        manager.wait_settled().await;
        assert!(
            matches!(
                manager.state("paged"),
                Some(ServerState::Ready { tools: 10, .. })
            ),
            "{:?}",
            manager.state("paged")
        );
        let (tools, prompts, resources) = lists_of(&manager, "paged");
        assert_eq!(tools, live(10, |n| format!("paged__tool-{n}")));
        assert_eq!(prompts, live(11, |n| format!("prompt-{n}")));
        assert_eq!(resources, live(7, |n| format!("paged://{n}")));

        // Five more of each, and the three list_changed: every page is listed again.
        let grown = manager
            .call_tool("paged__tool-9", json!({"grow": 5}))
            .await
            .unwrap();
        assert_eq!(grown.text(), "ok");
        let want = (
            live(15, |n| format!("paged__tool-{n}")),
            live(16, |n| format!("prompt-{n}")),
            live(12, |n| format!("paged://{n}")),
        );
        until(rt, &manager, |m| lists_of(m, "paged") == want).await;
        assert!(matches!(
            manager.state("paged"),
            Some(ServerState::Ready { tools: 15, .. })
        ));
        manager
            .call_tool("paged__tool-14", json!({}))
            .await
            .expect("a tool of the last page, listed again, is called");
        manager.close().await;
    });
    // The cache holds every page of each list, as last listed.
    let file = cache.join(format!(
        "{}.json",
        mcpwire::manager::cache::cache_key(&config)
    ));
    let text = std::fs::read_to_string(&file).unwrap();
    let written: serde_json::Value = serde_json::from_str(&text).unwrap();
    let names = |list: &str, field: &str| -> Vec<String> {
        written["lists"][list]["items"]
            .as_array()
            .unwrap_or_else(|| panic!("no {list} in {text}"))
            .iter()
            .map(|i| i[field].as_str().unwrap().to_owned())
            .collect()
    };
    let plain = |n: usize, f: fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>();
    assert_eq!(names("tools", "name"), plain(15, |n| format!("tool-{n}")));
    assert_eq!(
        names("prompts", "name"),
        plain(16, |n| format!("prompt-{n}"))
    );
    assert_eq!(
        names("resources", "uri"),
        plain(12, |n| format!("paged://{n}"))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A page that gives a cursor an earlier page gave, or a list that never ends, ends the list
/// there: the server is ready with the items of the pages read, and the host is told why.
fn a_repeated_cursor_or_the_page_cap_ends_a_list_with_a_diagnostic(rt: &Rt) {
    use mcpwire::core::Diagnostic;
    rt.run(Duration::from_secs(120), async {
        let manager = rt.manager(options());
        manager.add(
            "repeats",
            paging(&["--fault", "repeat:tools", "--fault", "repeat:prompts"]),
        );
        manager.add("endless", paging(&["--fault", "endless:resources"]));
        manager.wait_settled().await;
        // Two pages each of the repeating lists, and every resource of the endless one.
        let (tools, prompts, resources) = lists_of(&manager, "repeats");
        assert_eq!(tools, live(6, |n| format!("repeats__tool-{n}")));
        assert_eq!(prompts, live(6, |n| format!("prompt-{n}")));
        assert_eq!(resources, live(10, |n| format!("paged://{n}")));
        let (tools, _, resources) = lists_of(&manager, "endless");
        assert_eq!(tools.len(), 10);
        assert_eq!(resources, live(10, |n| format!("paged://{n}")));
        assert!(matches!(
            manager.state("repeats"),
            Some(ServerState::Ready { tools: 6, .. })
        ));
        // What the host is told, server by server.
        let mut cut = Vec::new();
        while cut.len() < 3 {
            if let ManagerEvent::Diagnostic {
                server,
                diagnostic:
                    Diagnostic::ListCut {
                        method,
                        pages,
                        reason,
                    },
            } = manager.next_event().await
            {
                cut.push((server, method, pages, reason));
            }
        }
        cut.sort();
        let said: Vec<(&str, &str, usize)> = cut
            .iter()
            .map(|(s, m, p, _)| (s.as_str(), m.as_str(), *p))
            .collect();
        assert_eq!(
            said,
            [
                ("endless", "resources/list", mcpwire::core::MAX_PAGES),
                ("repeats", "prompts/list", 2),
                ("repeats", "tools/list", 2),
            ]
        );
        assert!(cut[0].3.contains("did not end after"), "{cut:?}");
        assert!(cut[1].3.contains("an earlier page gave"), "{cut:?}");
        manager.close().await;
    });
}

/// A list that does not read (an item that is not a tool, a prompt, a resource) is the
/// server's failure, with the reason in its state: never a ready server with a list cut
/// short or empty. The same when the list is read again after a `list_changed`: the server's
/// run ends, and its last list is served, stale.
fn a_list_that_cannot_be_read_is_the_server_s_failure(rt: &Rt) {
    let mut o = options();
    o.restart.max_failures = Some(1);
    rt.run(Duration::from_secs(60), async {
        let manager = rt.manager(o);
        for list in ["tools", "prompts", "resources"] {
            manager.add(list, paging(&["--fault", &format!("unreadable:{list}")]));
        }
        manager.add("later", paging(&["--fault", "unreadable-later:prompts"]));
        manager.wait_settled().await;
        for list in ["tools", "prompts", "resources"] {
            let Some(ServerState::Failed { reason, .. }) = manager.state(list) else {
                panic!("{list}: {:?}", manager.state(list));
            };
            assert!(
                reason.starts_with(&format!(
                    "listing its {list} failed: invalid result: {list}/list"
                )),
                "{list}: {reason}"
            );
            // Nothing of it is served as current; of the lists read before, the cache's copy
            // (stale); of the one that failed, nothing.
            let (tools, prompts, resources) = lists_of(&manager, list);
            assert!(
                tools
                    .iter()
                    .chain(&prompts)
                    .chain(&resources)
                    .all(|(_, stale)| *stale),
                "{list}: {tools:?} {prompts:?} {resources:?}"
            );
            let failed = match list {
                "tools" => &tools,
                "prompts" => &prompts,
                _ => &resources,
            };
            assert_eq!(failed, &[], "{list}");
        }
        assert!(matches!(
            manager.state("later"),
            Some(ServerState::Ready { tools: 10, .. })
        ));
        manager
            .call_tool("later__tool-0", json!({"grow": 1}))
            .await
            .unwrap();
        manager
            .wait_until(|s| {
                s.iter()
                    .any(|(n, s)| n == "later" && matches!(s, ServerState::Failed { .. }))
            })
            .await;
        let Some(ServerState::Failed { reason, .. }) = manager.state("later") else {
            unreachable!()
        };
        assert!(
            reason.starts_with("listing its prompts failed: invalid result: prompts/list"),
            "{reason}"
        );
        // Its lists as last read, stale: all of them, never a part.
        let (tools, prompts, resources) = lists_of(&manager, "later");
        assert_eq!(tools.len(), 11, "{tools:?}");
        assert_eq!(prompts.len(), 10, "{prompts:?}");
        assert_eq!(resources.len(), 10, "{resources:?}");
        assert!(tools
            .iter()
            .chain(&prompts)
            .chain(&resources)
            .all(|(_, stale)| *stale));
        manager.close().await;
    });
}

/// A cache folder that cannot be written (its path runs through a file) holds up nothing: the
/// servers are ready, listed and called, and the Manager closes.
fn a_cache_folder_that_cannot_be_written_holds_up_nothing(rt: &Rt) {
    let dir = mcpwire_tests::temp_dir("manager-unwritable");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    rt.run(Duration::from_secs(60), async {
        let manager = rt.manager(options().cache(CacheLocation::At(file.join("cache"))));
        manager.add("paged", paging(&[]));
        manager.add("demo", demo());
        manager.wait_settled().await;
        assert!(matches!(
            manager.state("paged"),
            Some(ServerState::Ready { tools: 10, .. })
        ));
        assert_eq!(lists_of(&manager, "paged").0.len(), 10);
        let sum = manager
            .call_tool("demo__add", json!({"a": 2, "b": 3}))
            .await;
        assert_eq!(sum.unwrap().text(), "5");
        manager.close().await;
    });
    assert!(file.is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

on_every_runtime!(
    ten_servers_start_at_once_and_a_hanging_one_holds_back_none,
    a_hundred_crash_and_restart_cycles_leave_nothing_behind,
    route_finds_a_tool_as_call_tool_does_and_follows_restarts,
    the_cache_serves_a_slow_starter_s_tools_before_it_is_ready,
    a_failed_server_serves_all_its_cached_lists_stale,
    an_http_server_that_went_away_is_reconnected_with_a_new_session,
    the_cache_folder_is_pruned_to_its_limits,
    every_page_of_every_list_arrives_and_a_change_lists_every_page_again,
    a_repeated_cursor_or_the_page_cap_ends_a_list_with_a_diagnostic,
    a_list_that_cannot_be_read_is_the_server_s_failure,
    a_cache_folder_that_cannot_be_written_holds_up_nothing,
);
