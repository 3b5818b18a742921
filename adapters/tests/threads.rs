//! In a tokio host, mcpwire starts no thread but the one that spawns servers: connected to a
//! stdio server, calling it and answering its questions, the host's threads are its own,
//! tokio's, and `mcpwire-spawner` (whose parent-death signal a server's life follows on
//! Linux); no thread of async-io (`async-io`), async-process (`async-process`) or smol
//! (`smol-N`). Connected to an HTTP server (mcpwire's own HTTP/1.1 client: its name lookup,
//! its sockets, its timers), the host's threads are its own and tokio's alone. Counted in
//! `/proc/self/task`, so Linux only.
//!
//! The same for the rest of what a tokio host uses (the `services_*` flavours): a Manager made
//! by `mcpwire::tokio::manager` (servers ready, one that cannot start restarted with backoff
//! until it gives up, a restart, its cache written to a folder), the demo server through
//! `mcpwire::tokio::serve_demo`, OAuth's loopback listener catching a redirect, and a file
//! token store: only tokio's threads (its blocking pool's too) and `mcpwire-spawner`.
//!
//! The program has its own harness: each runtime flavour and transport runs in a process of
//! its own (the program again, by the flavour in its environment), so that no other test's
//! threads count; the HTTP server is the program again too, serving the demo server.

use std::process::{Command, ExitCode};

const FLAVOUR: &str = "MCPWIRE_THREADS_FLAVOUR";
const SERVE: &str = "MCPWIRE_THREADS_SERVE";

/// Each runtime flavour, over each transport.
const CASES: [&str; 6] = [
    "current_thread/stdio",
    "multi_thread/stdio",
    "current_thread/http",
    "multi_thread/http",
    "services_current_thread",
    "services_multi_thread",
];

fn main() -> ExitCode {
    if std::env::var_os(SERVE).is_some() {
        demo_http::serve();
        return ExitCode::SUCCESS;
    }
    match std::env::var(FLAVOUR).as_deref() {
        Ok(flavour) => host(flavour),
        Err(_) => tests(),
    }
}

/// Runs each flavour in a process of its own.
fn tests() -> ExitCode {
    let mut failed = 0;
    for flavour in CASES {
        let out = Command::new(std::env::current_exe().unwrap())
            .env(FLAVOUR, flavour)
            .output()
            .unwrap();
        let ok = out.status.success();
        println!(
            "test threads_in_a_tokio_host::{flavour} ... {}",
            if ok { "ok" } else { "FAILED" }
        );
        if !ok {
            failed += 1;
            println!("{}", String::from_utf8_lossy(&out.stdout));
            println!("{}", String::from_utf8_lossy(&out.stderr));
        }
    }
    println!(
        "\ntest result: {}. {} passed; {failed} failed",
        if failed == 0 { "ok" } else { "FAILED" },
        CASES.len() - failed
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The threads of this process by name (the main thread named `main`).
#[cfg(target_os = "linux")]
fn threads() -> Vec<String> {
    let me = std::process::id().to_string();
    let mut names: Vec<String> = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_name().to_str() == Some(me.as_str()) {
                return "main".to_owned();
            }
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            comm.trim().to_owned()
        })
        .collect();
    names.sort();
    names
}

/// A tokio host of `flavour`: connects, calls, answers a question, counts its threads.
#[cfg(target_os = "linux")]
fn host(flavour: &str) -> ExitCode {
    if let Some(flavour) = flavour.strip_prefix("services_") {
        return services(flavour);
    }
    use mcpwire::{ConnectOptions, ElicitAction, ElicitResult, Era, Handlers, ServerConfig};
    use serde_json::json;

    let (flavour, transport) = flavour.split_once('/').expect("flavour/transport");
    // The HTTP server: this program again, in a process of its own.
    let server = (transport == "http").then(demo_http::start);
    let (runtime, workers) = match flavour {
        "current_thread" => (tokio::runtime::Builder::new_current_thread(), 0),
        _ => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(2);
            (b, 2)
        }
    };
    let runtime = { runtime }.enable_all().build().unwrap();
    let before = threads();
    assert_eq!(before.len(), 1 + workers, "{before:?}");
    let seen = runtime.block_on(async {
        let handlers = Handlers::new().on_elicitation(|_req| async {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            Ok(ElicitResult {
                meta: None,
                action: ElicitAction::Accept,
                content: Some(serde_json::from_value(json!({"name": "Ann"})).unwrap()),
            })
        });
        let options = ConnectOptions {
            era: Era::Handshake,
            ..ConnectOptions::default()
        }
        .handlers(handlers);
        let demo = match &server {
            Some((_, url)) => ServerConfig::http(url),
            None => ServerConfig::stdio(
                env!("CARGO_BIN_EXE_mcpwire-demo-server"),
                Vec::<String>::new(),
            ),
        };
        let client = mcpwire::tokio::connect(&demo, options).await.unwrap();
        for i in 0..50 {
            let r = client
                .call_tool("echo", json!({"message": format!("{i}")}))
                .await
                .unwrap();
            assert_eq!(r.text(), format!("{i}"));
        }
        // A question needs a stream from the server: the stdio server's (this HTTP server
        // answers in JSON alone).
        if server.is_none() {
            let r = client
                .call_tool("ask", json!({"question": "name:"}))
                .await
                .unwrap();
            assert_eq!(r.text(), "hello, Ann");
        }
        let seen = threads();
        client.close().await;
        seen
    });
    if let Some((mut child, _)) = server {
        let _ = child.kill();
        let _ = child.wait();
    }
    println!("{flavour}/{transport}: {seen:?}");
    if transport == "http" {
        // The name was resolved on a blocking thread of tokio's (named as its workers), which
        // lives on a while: any number of those, and no other thread but the main one.
        let others: Vec<&String> = seen
            .iter()
            .filter(|t| *t != "main" && *t != "tokio-rt-worker")
            .collect();
        assert!(others.is_empty(), "{flavour}/{transport}: {seen:?}");
        let tokio = seen.iter().filter(|t| *t == "tokio-rt-worker").count();
        assert!(tokio > workers, "the lookup's blocking thread: {seen:?}");
        return ExitCode::SUCCESS;
    }
    let mut want = vec!["main".to_owned(), "mcpwire-spawner".to_owned()];
    want.extend(std::iter::repeat_n("tokio-rt-worker".to_owned(), workers));
    want.sort();
    assert_eq!(
        seen, want,
        "{flavour}/{transport}: the threads while connected"
    );
    ExitCode::SUCCESS
}

/// A tokio host of `flavour` using the Manager, `serve_demo`, OAuth's loopback listener and a
/// file token store: counts its threads while they run.
#[cfg(target_os = "linux")]
fn services(flavour: &str) -> ExitCode {
    use mcpwire::core::server::DemoConfig;
    use mcpwire::manager::backoff::RestartPolicy;
    use mcpwire::manager::{CacheLocation, ManagerOptions, ServerState};
    use mcpwire::oauth::{Authorizer, LoopbackAuthorizer, TokenStore, Url};
    use mcpwire::{CallOptions, ConnectOptions, ServerConfig};
    use serde_json::json;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let mut runtime = match flavour {
        "current_thread" => tokio::runtime::Builder::new_current_thread(),
        _ => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(2);
            b
        }
    };
    let runtime = runtime.enable_all().build().unwrap();
    let dir = std::env::temp_dir().join(format!("mcpwire-threads-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let demo = ServerConfig::stdio(
        env!("CARGO_BIN_EXE_mcpwire-demo-server"),
        Vec::<String>::new(),
    );
    let seen = runtime.block_on(async {
        // The Manager: two servers ready, one that cannot start given up after its backoff.
        let mut restart = RestartPolicy::default();
        restart.initial = Duration::from_millis(20);
        restart.max_failures = Some(2);
        let options = ManagerOptions::default()
            .cache(CacheLocation::At(dir.join("cache")))
            .restart(restart)
            .startup_timeout(Duration::from_secs(20));
        let manager = mcpwire::tokio::manager(options).unwrap();
        manager.add("a", demo.clone());
        manager.add("b", demo.clone());
        let missing = dir.join("no-such-server");
        manager.add(
            "gone",
            ServerConfig::stdio(missing.to_str().unwrap(), Vec::<String>::new()),
        );
        let all_settled = |s: &[(String, ServerState)]| {
            s.iter().all(|(name, state)| match name.as_str() {
                "gone" => matches!(state, ServerState::Failed { .. }),
                _ => matches!(state, ServerState::Ready { .. }),
            })
        };
        tokio::time::timeout(Duration::from_secs(30), manager.wait_until(all_settled))
            .await
            .unwrap_or_else(|_| panic!("not settled: {:?}", manager.states()));
        let r = manager
            .call_tool("a__echo", json!({"message": "hi"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "hi");
        manager.restart("b").unwrap();
        let b_is = |ready: bool| {
            move |s: &[(String, ServerState)]| {
                s.iter()
                    .any(|(n, s)| n == "b" && matches!(s, ServerState::Ready { .. }) == ready)
            }
        };
        manager.wait_until(b_is(false)).await;
        manager.wait_until(b_is(true)).await;

        // The demo server in this process, over tokio's byte streams; its steps are its timers.
        let (client_end, server_end) = tokio::io::duplex(64 * 1024);
        let (server_reads, server_writes) = tokio::io::split(server_end);
        let server = tokio::spawn(mcpwire::tokio::serve_demo(
            server_reads,
            server_writes,
            DemoConfig::default(),
        ));
        let (client_reads, client_writes) = tokio::io::split(client_end);
        let (client, driver) = mcpwire::tokio::connect_streams(
            "in-process",
            client_reads,
            client_writes,
            ConnectOptions::default(),
        )
        .unwrap();
        tokio::spawn(driver);
        client.ready().await.unwrap();
        let slow = client
            .call_tool_with(
                "slow",
                json!({"steps": 2, "interval_ms": 10}),
                CallOptions::default().on_progress(|_| {}),
            )
            .await
            .unwrap();
        assert!(!slow.is_error, "{}", slow.text());

        // OAuth's loopback listener catches a redirect; a file store keeps and forgets.
        let authorizer = LoopbackAuthorizer::bind(0)
            .unwrap()
            .open_browser(false)
            .show_url(|_| {});
        let redirect = authorizer.redirect_uri();
        let port = redirect
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches("/callback")
            .to_owned();
        let url = Url::parse("https://as.test/authorize?state=s1").unwrap();
        let caught = authorizer.authorize(&url);
        let browser = tokio::spawn(async move {
            let mut s = tokio::net::TcpStream::connect(format!("127.0.0.1:{port}"))
                .await
                .unwrap();
            s.write_all(b"GET /callback?code=c&state=s1 HTTP/1.1\r\n\r\n")
                .await
                .unwrap();
            let mut answer = String::new();
            s.read_to_string(&mut answer).await.unwrap();
            answer
        });
        assert_eq!(caught.await.unwrap(), format!("{redirect}?code=c&state=s1"));
        assert!(browser.await.unwrap().starts_with("HTTP/1.1 200"));
        let store = mcpwire::oauth::FileTokenStore::new(dir.join("oauth"));
        store.remove("https://mcp.test/").await.unwrap();
        assert!(store.clients().await.unwrap().is_empty());

        // A thread just started still bears its maker's name (here the main thread's, the
        // program's) until it names itself: looked at again until none does.
        let own = std::fs::read_to_string("/proc/self/comm")
            .unwrap()
            .trim()
            .to_owned();
        let mut seen = threads();
        for _ in 0..50 {
            if !seen.contains(&own) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            seen = threads();
        }
        client.close().await;
        server.await.unwrap().unwrap();
        manager.close().await;
        seen
    });
    let _ = std::fs::remove_dir_all(&dir);
    println!("services_{flavour}: {seen:?}");
    let theirs = |name: &String| {
        matches!(
            name.as_str(),
            "main" | "mcpwire-spawner" | "tokio-rt-worker"
        )
    };
    let others: Vec<&String> = seen.iter().filter(|n| !theirs(n)).collect();
    assert!(
        others.is_empty(),
        "services_{flavour}: threads not tokio's: {others:?}"
    );
    assert!(seen.iter().any(|n| n == "mcpwire-spawner"), "{seen:?}");
    ExitCode::SUCCESS
}

#[cfg(not(target_os = "linux"))]
fn host(_flavour: &str) -> ExitCode {
    println!("the thread count reads /proc/self/task: Linux only");
    ExitCode::FAILURE
}

/// The demo server over Streamable HTTP (JSON answers alone), in a process of its own.
mod demo_http {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::process::{Child, Command, Stdio};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    use mcpwire::core::jsonrpc::{parse, Message, Parsed};
    use mcpwire::core::server::{DemoConfig, DemoServer};

    /// Starts this program as the server; its process and its URL.
    pub(super) fn start() -> (Child, String) {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(super::SERVE, "1")
            .env_remove(super::FLAVOUR)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        (child, line.trim().to_owned())
    }

    /// Serves until killed, its URL the first line on stdout.
    pub(super) fn serve() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        // By name: the client resolves it (tokio's lookup, on tokio's blocking threads).
        let port = listener.local_addr().unwrap().port();
        println!("http://localhost:{port}/mcp");
        let server = Arc::new(Mutex::new(DemoServer::new(DemoConfig::default())));
        for stream in listener.incoming().flatten() {
            let server = server.clone();
            std::thread::spawn(move || connection(stream, &server));
        }
    }

    /// One connection's requests, until it ends.
    fn connection(stream: TcpStream, server: &Mutex<DemoServer>) {
        let mut out = stream.try_clone().unwrap();
        let mut reader = BufReader::new(stream);
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let post = line.starts_with("POST ");
            let mut length = 0usize;
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 {
                    return;
                }
                let header = header.trim_end().to_ascii_lowercase();
                if header.is_empty() {
                    break;
                }
                if let Some(value) = header.strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            let (status, answer) = match post {
                true => answer(server, &body),
                false => ("405 Method Not Allowed", Vec::new()),
            };
            let kind = if answer.is_empty() {
                ""
            } else {
                "Content-Type: application/json\r\n"
            };
            let head = format!(
                "HTTP/1.1 {status}\r\n{kind}Content-Length: {}\r\n\r\n",
                answer.len()
            );
            if out.write_all(&[head.as_bytes(), &answer].concat()).is_err() {
                return;
            }
        }
    }

    /// The status and body answering one POSTed message.
    fn answer(server: &Mutex<DemoServer>, body: &[u8]) -> (&'static str, Vec<u8>) {
        let Ok(Parsed::Single(message)) = parse(body) else {
            return ("400 Bad Request", Vec::new());
        };
        let id = match &message {
            Message::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let mut server = server.lock().unwrap();
        server.handle_message(Instant::now(), message);
        let mut found = None;
        while let Some(m) = server.poll_transmit() {
            if matches!(&m, Message::Response(r) if id.is_some() && r.id == id) {
                found = Some(serde_json::to_vec(&m).unwrap());
            }
        }
        match (id, found) {
            (None, _) => ("202 Accepted", Vec::new()),
            (Some(_), Some(body)) => ("200 OK", body),
            (Some(_), None) => ("504 Gateway Timeout", Vec::new()),
        }
    }
}
