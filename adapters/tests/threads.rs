//! In a tokio host, mcpwire starts no thread but the one that spawns servers: connected to a
//! stdio server, calling it and answering its questions, the host's threads are its own,
//! tokio's, and `mcpwire-spawner` (whose parent-death signal a server's life follows on
//! Linux); no thread of async-io (`async-io`), async-process (`async-process`) or smol
//! (`smol-N`). Counted in `/proc/self/task`, so Linux only.
//!
//! The program has its own harness: each runtime flavour runs in a process of its own (the
//! program again, by the flavour in its environment), so that no other test's threads count.

use std::process::{Command, ExitCode};

const FLAVOUR: &str = "MCPWIRE_THREADS_FLAVOUR";

fn main() -> ExitCode {
    match std::env::var(FLAVOUR).as_deref() {
        Ok(flavour) => host(flavour),
        Err(_) => tests(),
    }
}

/// Runs each flavour in a process of its own.
fn tests() -> ExitCode {
    let mut failed = 0;
    for flavour in ["current_thread", "multi_thread"] {
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
        2 - failed
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
    use mcpwire::{ConnectOptions, ElicitAction, ElicitResult, Era, Handlers, ServerConfig};
    use serde_json::json;

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
        let demo = ServerConfig::stdio(
            env!("CARGO_BIN_EXE_mcpwire-demo-server"),
            Vec::<String>::new(),
        );
        let client = mcpwire::tokio::connect(&demo, options).await.unwrap();
        for i in 0..50 {
            let r = client
                .call_tool("echo", json!({"message": format!("{i}")}))
                .await
                .unwrap();
            assert_eq!(r.text(), format!("{i}"));
        }
        let r = client
            .call_tool("ask", json!({"question": "name:"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "hello, Ann");
        let seen = threads();
        client.close().await;
        seen
    });
    let mut want = vec!["main".to_owned(), "mcpwire-spawner".to_owned()];
    want.extend(std::iter::repeat_n("tokio-rt-worker".to_owned(), workers));
    want.sort();
    println!("{flavour}: {seen:?}");
    assert_eq!(seen, want, "{flavour}: the threads while connected");
    ExitCode::SUCCESS
}

#[cfg(not(target_os = "linux"))]
fn host(_flavour: &str) -> ExitCode {
    println!("the thread count reads /proc/self/task: Linux only");
    ExitCode::FAILURE
}
