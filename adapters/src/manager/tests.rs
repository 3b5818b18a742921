//! The Manager with a cache whose disk blocks or fails: servers become ready, their tools are
//! routed and called, while every write waits on the disk or fails. The servers are inside the
//! test: the handshake era over HTTP through an [`HttpBackend`] that answers at once. Each
//! test runs on smol (feature `smol`) and on tokio's current_thread and multi-thread runtimes
//! (feature `tokio`).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire_core::config::ServerConfig;
use mcpwire_core::{Era, HttpMethod, HttpRequest};
use serde_json::{json, Value};

use super::store::{Store, WriteIo};
use super::{Manager, ManagerOptions, ServerState};
use crate::connect::ConnectOptions;
use crate::future::BoxFuture;
use crate::hosts::ServerSettings;
use crate::http::{HttpBackend, HttpFailure, HttpResponse};
use crate::runtime::Runtime;

/// A server of two tools, `echo` and `other`, answering each request at once.
struct InProcess;

impl HttpBackend for InProcess {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
        let (status, headers, body) = answer(&request);
        Box::pin(async move {
            let body = futures_lite::io::Cursor::new(body.into_bytes());
            Ok(HttpResponse::new(status, headers, Box::pin(body)))
        })
    }
}

fn answer(request: &HttpRequest) -> (u16, Vec<(String, String)>, String) {
    let json = vec![("Content-Type".to_owned(), "application/json".to_owned())];
    match request.method {
        HttpMethod::Get => return (405, Vec::new(), String::new()),
        HttpMethod::Delete => return (200, Vec::new(), String::new()),
        HttpMethod::Post => {}
    }
    let message: Value = serde_json::from_slice(&request.body).unwrap_or_default();
    let Some(id) = message.get("id") else {
        return (202, Vec::new(), String::new());
    };
    let mut headers = json;
    let result = match message["method"].as_str().unwrap_or_default() {
        "initialize" => {
            headers.push(("Mcp-Session-Id".to_owned(), "s1".to_owned()));
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                   "serverInfo": {"name": "in-process", "version": "1"}})
        }
        "tools/list" => json!({"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "other", "inputSchema": {"type": "object"}}]}),
        "tools/call" => json!({"content": [{"type": "text", "text": "ok"}]}),
        "ping" => json!({}),
        _ => {
            let error = json!({"code": -32601, "message": "no such method"});
            let body = json!({"jsonrpc": "2.0", "id": id, "error": error});
            return (200, headers, body.to_string());
        }
    };
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result});
    (200, headers, body.to_string())
}

/// A runtime a test runs on.
enum Rt {
    #[cfg(feature = "smol")]
    Smol,
    #[cfg(feature = "tokio")]
    Tokio(::tokio::runtime::Runtime),
}

impl Rt {
    /// smol, then tokio's current_thread and multi-thread runtimes (as the features allow).
    // Each push is under a feature of its own.
    #[allow(clippy::vec_init_then_push)]
    fn all() -> Vec<Rt> {
        let mut all = Vec::new();
        #[cfg(feature = "smol")]
        all.push(Rt::Smol);
        #[cfg(feature = "tokio")]
        {
            let current = ::tokio::runtime::Builder::new_current_thread();
            let mut multi = ::tokio::runtime::Builder::new_multi_thread();
            multi.worker_threads(2);
            for mut b in [current, multi] {
                all.push(Rt::Tokio(b.enable_all().build().unwrap()));
            }
        }
        all
    }

    fn runtime(&self) -> Runtime {
        match self {
            #[cfg(feature = "smol")]
            Rt::Smol => Runtime::Smol { spawn: true },
            #[cfg(feature = "tokio")]
            Rt::Tokio(rt) => Runtime::Tokio(rt.handle().clone()),
        }
    }

    fn block_on<T>(&self, f: impl Future<Output = T>) -> T {
        match self {
            #[cfg(feature = "smol")]
            Rt::Smol => smol::block_on(f),
            #[cfg(feature = "tokio")]
            Rt::Tokio(rt) => rt.block_on(f),
        }
    }

    /// [`block_on`](Self::block_on), failing the test with `what` after 30 s.
    fn block_on_within<T>(&self, f: impl Future<Output = T>, what: &str) -> T {
        let runtime = self.runtime();
        let limit = async {
            runtime
                .sleep_until(Instant::now() + Duration::from_secs(30))
                .await;
            panic!("held up on {self:?}{what}");
        };
        self.block_on(future::or(f, limit))
    }
}

impl std::fmt::Debug for Rt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            #[cfg(feature = "smol")]
            Rt::Smol => f.write_str("smol"),
            #[cfg(feature = "tokio")]
            Rt::Tokio(rt) => write!(f, "tokio {:?}", rt.handle().runtime_flavor()),
        }
    }
}

/// A Manager on `rt` whose cache is written with `io`, its servers answered by [`InProcess`].
fn manager(rt: &Rt, io: WriteIo) -> Manager {
    let options = ManagerOptions::default()
        .jitter_seed(1)
        .startup_timeout(Duration::from_secs(20))
        .connect_options(|_| ConnectOptions {
            http_backend: Some(Arc::new(InProcess)),
            ..ConnectOptions::default()
        });
    let store = Store::on_disk_with(PathBuf::from("unused"), io);
    Manager::made(options, store, rt.runtime())
}

fn settings() -> ServerSettings {
    ServerSettings {
        era: Some(Era::Handshake),
        ..ServerSettings::default()
    }
}

/// Servers start, are ready, routed and called while the disk holds every write: the disk
/// blocks (each write waits until the test ends it), or fails at once.
#[test]
fn a_disk_that_blocks_or_fails_holds_up_no_state_route_or_call() {
    for rt in Rt::all() {
        for blocks in [true, false] {
            disk_that_blocks_or_fails(&rt, blocks);
        }
    }
}

fn disk_that_blocks_or_fails(rt: &Rt, blocks: bool) {
    {
        let (begin, began) = async_channel::unbounded::<()>();
        let (go, gate) = async_channel::unbounded::<()>();
        let io: WriteIo = Arc::new(move |_: &Path, _: &str, _: &[u8]| {
            let _ = begin.send_blocking(());
            if blocks {
                let _ = gate.recv_blocking();
                return Ok(());
            }
            Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
        });
        let manager = manager(rt, io);
        let run = async {
            manager.add_with("a", ServerConfig::http("http://a.test/mcp"), settings());
            // The first write has begun; while blocking, it never ends by itself.
            began.recv().await.unwrap();
            manager.add_with("b", ServerConfig::http("http://b.test/mcp"), settings());
            manager.wait_settled().await;
            let states = manager.states();
            assert!(
                states
                    .iter()
                    .all(|(_, s)| matches!(s, ServerState::Ready { tools: 2, .. })),
                "{states:?}"
            );
            let names: Vec<String> = manager
                .tools()
                .iter()
                .map(|t| t.qualified.clone())
                .collect();
            assert_eq!(names, ["a__echo", "a__other", "b__echo", "b__other"]);
            assert_eq!(manager.route("b/other").unwrap().server(), "b");
            let answer = manager.call_tool("b__echo", json!({})).await.unwrap();
            assert_eq!(answer.text(), "ok");
            // A restart: its states and lists go on, the disk still holding its write.
            manager.restart("a").unwrap();
            let a_is = |ready: bool| {
                move |s: &[(String, ServerState)]| {
                    s.iter()
                        .any(|(n, s)| n == "a" && matches!(s, ServerState::Ready { .. }) == ready)
                }
            };
            manager.wait_until(a_is(false)).await;
            manager.wait_until(a_is(true)).await;
            assert_eq!(
                manager
                    .call_tool("a__other", json!({}))
                    .await
                    .unwrap()
                    .text(),
                "ok"
            );
            if blocks {
                assert!(began.try_recv().is_err(), "one write at a time");
            }
        };
        rt.block_on_within(run, &format!(" (the disk blocks: {blocks})"));
        // The writes the disk held are let go: the one that waited, then one a server, the
        // newest of its changes.
        for _ in 0..3 {
            let _ = go.send_blocking(());
        }
        rt.block_on(manager.close());
        let writes = 1 + std::iter::from_fn(|| began.try_recv().ok()).count();
        if blocks {
            assert_eq!(writes, 3, "a's first, then b's, then a's again");
        } else {
            assert!(writes >= 2, "{writes}");
        }
    }
}

/// A server that answers `tools/list` only once it has been asked for its prompts and its
/// resources too: it declares all three.
struct AskedTogether {
    /// How many of `prompts/list` and `resources/list` have come.
    asked: Arc<std::sync::atomic::AtomicUsize>,
    /// Told when one comes.
    came: Arc<event_listener::Event>,
}

impl HttpBackend for AskedTogether {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
        use std::sync::atomic::Ordering;
        let message: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        let (status, mut headers, mut body) = answer(&request);
        let json = |result: Value| {
            json!({"jsonrpc": "2.0", "id": message["id"], "result": result}).to_string()
        };
        match method.as_str() {
            "initialize" => {
                body = json(json!({"protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
                    "serverInfo": {"name": "asked-together", "version": "1"}}));
            }
            "prompts/list" | "resources/list" => {
                headers = vec![("Content-Type".to_owned(), "application/json".to_owned())];
                body = match method.as_str() {
                    "prompts/list" => json(json!({"prompts": [{"name": "greet"}]})),
                    _ => json(json!({"resources": [{"uri": "demo://a", "name": "a"}]})),
                };
                self.asked.fetch_add(1, Ordering::SeqCst);
                self.came.notify(usize::MAX);
                return Box::pin(async move {
                    let body = futures_lite::io::Cursor::new(body.into_bytes());
                    Ok(HttpResponse::new(200, headers, Box::pin(body)))
                });
            }
            _ => {}
        }
        let (asked, came) = (self.asked.clone(), self.came.clone());
        let wait = method == "tools/list";
        Box::pin(async move {
            while wait && asked.load(Ordering::SeqCst) < 2 {
                let listener = came.listen();
                if asked.load(Ordering::SeqCst) >= 2 {
                    break;
                }
                listener.await;
            }
            let body = futures_lite::io::Cursor::new(body.into_bytes());
            Ok(HttpResponse::new(status, headers, Box::pin(body)))
        })
    }
}

/// A server's three lists are asked for at once when it starts (one round trip, not three):
/// a server that answers its tools only after the other two requests came is ready, with its
/// tools, prompts and resources. Asked for one after the other, its tools are never answered
/// and its start runs out of time.
#[test]
fn a_server_s_three_lists_are_asked_for_at_once() {
    for rt in Rt::all() {
        let backend = Arc::new(AskedTogether {
            asked: Default::default(),
            came: Default::default(),
        });
        let options = ManagerOptions::default()
            .jitter_seed(1)
            .startup_timeout(Duration::from_secs(5))
            .cache(super::CacheLocation::MemoryOnly)
            .connect_options(move |_| ConnectOptions {
                http_backend: Some(backend.clone()),
                ..ConnectOptions::default()
            });
        let manager = Manager::made(options, Store::in_memory(), rt.runtime());
        let run = async {
            manager.add_with("a", ServerConfig::http("http://a.test/mcp"), settings());
            manager
                .wait_until(|s| {
                    s.iter()
                        .all(|(_, s)| !matches!(s, ServerState::Starting { .. }))
                })
                .await;
            assert!(
                matches!(
                    manager.state("a"),
                    Some(ServerState::Ready { tools: 2, .. })
                ),
                "{rt:?}: {:?}",
                manager.state("a")
            );
            let prompts: Vec<String> = manager
                .prompts()
                .iter()
                .map(|p| p.item.name.clone())
                .collect();
            assert_eq!(prompts, ["greet"], "{rt:?}");
            let resources: Vec<String> = manager
                .resources()
                .iter()
                .map(|r| r.item.uri.clone())
                .collect();
            assert_eq!(resources, ["demo://a"], "{rt:?}");
        };
        rt.block_on_within(run, "");
        rt.block_on(manager.close());
    }
}
