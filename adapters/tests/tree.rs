//! A stdio server's whole process tree, on every system mcpwire runs on: the server and what it
//! started end at `close()` and when the driver is dropped, and the server ends when its host
//! dies (docs/architecture.md, "Platforms": the rest of the tree too on Windows, where a job object holds it;
//! on Unix the rest of the tree is left to notice its stdin close).
//!
//! The program has its own harness: it is the test, and by the role in its environment also
//! the server (the demo server, which first starts a child of its own: the grandchild), the
//! grandchild (it sleeps) and a host that dies with its server running. So it needs no Unix
//! tool and runs as it is on Windows (or under Wine).

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpwire::core::config::StdioConfig;
use mcpwire::core::server::DemoConfig;
use mcpwire::core::ProcessAction;
use mcpwire::{connect, ConnectOptions, ServerConfig};

use common::{alive, gone_within};

const ROLE: &str = "MCPWIRE_TREE_ROLE";

fn main() -> ExitCode {
    match std::env::var(ROLE).as_deref() {
        Ok("server") => server(false),
        Ok("stubborn") => server(true),
        Ok("grandchild") => {
            std::thread::sleep(Duration::from_secs(60));
            ExitCode::SUCCESS
        }
        Ok("host") => host(),
        _ => tests(),
    }
}

/// The demo server, after starting the grandchild and naming it on stderr; a `stubborn` one
/// stays after its stdin ends.
// The grandchild is never waited for: the test is whether it outlives the server.
#[allow(clippy::zombie_processes)]
fn server(stubborn: bool) -> ExitCode {
    let grandchild = Command::new(std::env::current_exe().unwrap())
        .env(ROLE, "grandchild")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    eprintln!("grandchild {}", grandchild.id());
    let input = smol::Unblock::new(std::io::stdin());
    let output = smol::Unblock::new(std::io::stdout());
    let served = smol::block_on(mcpwire::serve_demo(input, output, DemoConfig::default()));
    if stubborn {
        std::thread::sleep(Duration::from_secs(60));
    }
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

fn server_config() -> ServerConfig {
    config_as("server")
}

fn config_as(role: &str) -> ServerConfig {
    let mut config = StdioConfig {
        command: std::env::current_exe().unwrap().display().to_string(),
        ..StdioConfig::default()
    };
    config.env.insert(ROLE.into(), role.into());
    ServerConfig::Stdio(config)
}

/// Options that note the grandchild the server names.
fn noting_the_grandchild() -> (ConnectOptions, Arc<Mutex<Option<u32>>>) {
    let noted = Arc::new(Mutex::new(None));
    let n = noted.clone();
    let options = ConnectOptions::default().on_stderr(move |line| {
        if let Some(pid) = line.strip_prefix("grandchild ") {
            *n.lock().unwrap() = pid.trim().parse().ok();
        }
    });
    (options, noted)
}

/// Waits (a little) for the server's line naming its grandchild.
fn grandchild_of(noted: &Mutex<Option<u32>>) -> u32 {
    let start = Instant::now();
    loop {
        if let Some(pid) = *noted.lock().unwrap() {
            return pid;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the server named no grandchild"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A host that starts the server, tells the server's and the grandchild's ids on stdout, and
/// dies with the server running (no close, no destructor).
fn host() -> ExitCode {
    let (options, noted) = noting_the_grandchild();
    let (client, driver) = connect(&server_config(), options).unwrap();
    let runner = std::thread::spawn(move || smol::block_on(driver));
    smol::block_on(client.list_tools()).unwrap();
    let grandchild = grandchild_of(&noted);
    println!("server {} grandchild {}", client.pid(), grandchild);
    drop(runner);
    std::process::exit(0)
}

fn tests() -> ExitCode {
    let tests: [(&str, fn()); 4] = [
        (
            "close_ends_the_server_and_its_grandchild",
            close_ends_the_whole_tree,
        ),
        (
            "close_ends_a_server_that_stays_after_stdin_s_end",
            close_ends_a_stubborn_server,
        ),
        (
            "dropping_the_driver_ends_the_server_and_its_grandchild",
            dropping_the_driver,
        ),
        ("the_host_s_death_ends_the_server", the_host_s_death),
    ];
    // Names given as arguments run alone; the harness's options (and their values) are ignored.
    let mut filter = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        const VALUED: [&str; 5] = [
            "--test-threads",
            "--skip",
            "--logfile",
            "--color",
            "--format",
        ];
        if VALUED.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            filter.push(arg);
        }
    }
    let (mut ran, mut failed) = (0, 0);
    for (name, test) in tests {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let outcome = std::panic::catch_unwind(test);
        println!(
            "test {name} ... {}",
            if outcome.is_ok() { "ok" } else { "FAILED" }
        );
        ran += 1;
        failed += usize::from(outcome.is_err());
    }
    let verdict = if failed > 0 { "FAILED" } else { "ok" };
    println!(
        "\ntest result: {verdict}. {} passed; {failed} failed",
        ran - failed
    );
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Options that also note each step of the close.
fn noting_the_steps() -> (ConnectOptions, Arc<Mutex<Option<u32>>>, Steps) {
    let (mut options, noted) = noting_the_grandchild();
    let steps = Steps::default();
    let s = steps.clone();
    options.on_process_action = Some(Arc::new(move |action| s.lock().unwrap().push(action)));
    (options, noted, steps)
}

type Steps = Arc<Mutex<Vec<ProcessAction>>>;

/// The server exits at stdin's end (the close's first step is all it takes); nothing it
/// started outlives it.
fn close_ends_the_whole_tree() {
    smol::block_on(async {
        let (options, noted, steps) = noting_the_steps();
        let client = mcpwire::connect_smol(&server_config(), options)
            .await
            .unwrap();
        client.list_tools().await.unwrap();
        let (server, grandchild) = (client.pid(), grandchild_of(&noted));
        assert!(alive(server) && alive(grandchild));
        client.close().await;
        assert!(
            gone_within(server, Duration::from_secs(5)),
            "server {server} survived"
        );
        assert!(
            gone_within(grandchild, Duration::from_secs(5)),
            "grandchild {grandchild} survived the close"
        );
        assert_eq!(*steps.lock().unwrap(), [ProcessAction::CloseStdin]);
    });
}

/// A server that stays after stdin's end is ended by the second step (SIGTERM to its group;
/// on Windows its job ended), with all it started.
fn close_ends_a_stubborn_server() {
    smol::block_on(async {
        let (mut options, noted, steps) = noting_the_steps();
        options.shutdown.after_close_stdin = Duration::from_millis(300);
        let client = mcpwire::connect_smol(&config_as("stubborn"), options)
            .await
            .unwrap();
        client.list_tools().await.unwrap();
        let (server, grandchild) = (client.pid(), grandchild_of(&noted));
        let start = Instant::now();
        client.close().await;
        assert!(
            start.elapsed() >= Duration::from_millis(300),
            "it waited first"
        );
        assert!(
            gone_within(server, Duration::from_secs(5)),
            "server {server} survived"
        );
        assert!(
            gone_within(grandchild, Duration::from_secs(5)),
            "grandchild {grandchild} survived the close"
        );
        assert_eq!(
            *steps.lock().unwrap(),
            [ProcessAction::CloseStdin, ProcessAction::Terminate]
        );
    });
}

fn dropping_the_driver() {
    let (options, noted) = noting_the_grandchild();
    let (client, driver) = connect(&server_config(), options).unwrap();
    let mut driver = Box::pin(driver);
    // Driven until the server named its grandchild (on its stderr, which the driver reads).
    smol::block_on(futures_lite::future::or(driver.as_mut(), async {
        while noted.lock().unwrap().is_none() {
            smol::Timer::after(Duration::from_millis(10)).await;
        }
    }));
    let (server, grandchild) = (client.pid(), grandchild_of(&noted));
    assert!(alive(server) && alive(grandchild));
    drop(driver);
    assert!(
        gone_within(server, Duration::from_secs(5)),
        "server {server} survived"
    );
    assert!(
        gone_within(grandchild, Duration::from_secs(5)),
        "grandchild {grandchild} survived the driver"
    );
    drop(client);
}

fn the_host_s_death() {
    let mut host = Command::new(std::env::current_exe().unwrap())
        .env(ROLE, "host")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(host.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ids: Vec<u32> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let [server, grandchild] = ids[..] else {
        panic!("the host said {line:?}");
    };
    assert!(host.wait().unwrap().success());
    assert!(
        gone_within(server, Duration::from_secs(5)),
        "server {server} survived its host"
    );
    if cfg!(windows) {
        // The job ends with the host's last handle to it.
        assert!(
            gone_within(grandchild, Duration::from_secs(5)),
            "grandchild {grandchild} survived the host"
        );
    } else {
        // Its stdin is not the server's: nothing tells it (docs/architecture.md, "Platforms").
        assert!(
            alive(grandchild),
            "grandchild {grandchild} ended though nothing ends it"
        );
        kill(grandchild);
    }
}

#[cfg(unix)]
fn kill(pid: u32) {
    // SAFETY: `kill` has no memory-safety preconditions.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGKILL);
    }
}

#[cfg(windows)]
fn kill(_pid: u32) {}
