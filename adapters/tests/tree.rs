//! A stdio server's whole process tree, on every system mcpwire runs on: the server and what it
//! started end at `close()` and when the driver is dropped, and the server ends when its host
//! dies (README, "Platforms": the rest of the tree too on Windows, where a job object holds it;
//! on Unix the rest of the tree is left to notice its stdin close).
//!
//! The program has its own harness: it is the test, and by the role in its environment also
//! the server (the demo server, which first starts a child of its own: the grandchild), the
//! grandchild (it sleeps) and a host that dies with its server running. So it needs no Unix
//! tool and runs as it is on Windows (or under Wine).

use std::io::{BufRead, BufReader};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpwire::core::config::StdioConfig;
use mcpwire::core::server::DemoConfig;
use mcpwire::{connect, ConnectOptions, ServerConfig};

const ROLE: &str = "MCPWIRE_TREE_ROLE";

fn main() -> ExitCode {
    match std::env::var(ROLE).as_deref() {
        Ok("server") => server(),
        Ok("grandchild") => {
            std::thread::sleep(Duration::from_secs(60));
            ExitCode::SUCCESS
        }
        Ok("host") => host(),
        _ => tests(),
    }
}

/// The demo server, after starting the grandchild and naming it on stderr.
// The grandchild is never waited for: the test is whether it outlives the server.
#[allow(clippy::zombie_processes)]
fn server() -> ExitCode {
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
    match smol::block_on(mcpwire::serve_demo(input, output, DemoConfig::default())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

fn server_config() -> ServerConfig {
    let mut config = StdioConfig {
        command: std::env::current_exe().unwrap().display().to_string(),
        ..StdioConfig::default()
    };
    config.env.insert(ROLE.into(), "server".into());
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
    let tests: [(&str, fn()); 3] = [
        (
            "close_ends_the_server_and_its_grandchild",
            close_ends_the_whole_tree,
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

fn close_ends_the_whole_tree() {
    smol::block_on(async {
        let (options, noted) = noting_the_grandchild();
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
        // Its stdin is not the server's: nothing tells it (README, "Platforms").
        assert!(
            alive(grandchild),
            "grandchild {grandchild} ended though nothing ends it"
        );
        kill(grandchild);
    }
}

/// Waits up to `limit` for `pid` to be gone.
fn gone_within(pid: u32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Whether a process is still there (one that exited and awaits reaping counts as gone).
#[cfg(target_os = "linux")]
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

/// Whether a process is still there (a zombie counts as there).
#[cfg(all(unix, not(target_os = "linux")))]
fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
}

/// Whether a process is still there: it has that id and has not exited.
#[cfg(windows)]
fn alive(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::{CloseHandle, WAIT_TIMEOUT};
    use windows_sys::Win32::System::Threading::{
        OpenProcess, WaitForSingleObject, PROCESS_SYNCHRONIZE,
    };
    // SAFETY: opening a process by id takes no pointers; a null handle is no such process. An
    // open handle is waited on without blocking, then closed once.
    unsafe {
        let handle = OpenProcess(PROCESS_SYNCHRONIZE, 0, pid);
        if handle.is_null() {
            return false;
        }
        let running = WaitForSingleObject(handle, 0) == WAIT_TIMEOUT;
        CloseHandle(handle);
        running
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
