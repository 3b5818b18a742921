//! How a stdio server is started, on every runtime: its arguments, environment and working
//! folder reach it; it leads a process group of its own; it dies with its host (Linux: the
//! parent-death signal, even when it would outlive its stdin); a program that cannot be run is
//! the same typed error as the standard library's spawn gives.
//!
//! The program has its own harness: it is the test, and by the role in its environment also
//! the server (the demo server, saying first on stderr what it was given; or a process that only
//! sleeps) and a host that dies with its server running.

mod common;
#[allow(unused_macros)]
mod runtimes;

use std::io::{BufRead, BufReader};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire::core::config::StdioConfig;
use mcpwire::core::server::DemoConfig;
use mcpwire::{ConnectOptions, Error, ServerConfig};

use common::{alive, gone_within};
use runtimes::{Kind, Rt};

const ROLE: &str = "MCPWIRE_SPAWN_ROLE";
const KINDS: [Kind; 3] = [Kind::Smol, Kind::TokioMultiThread, Kind::TokioCurrentThread];

fn main() -> ExitCode {
    match std::env::var(ROLE).as_deref() {
        Ok("server") => server(false),
        Ok("stubborn") => server(true),
        Ok("silent") => {
            // Reads and writes nothing (a closed pipe never ends it): only a signal does.
            std::thread::sleep(Duration::from_secs(60));
            ExitCode::SUCCESS
        }
        Ok(host) if host.starts_with("host-") => host_that_dies(&host[5..]),
        _ => tests(),
    }
}

/// The demo server, after saying on stderr what it was given: its process group, its id, its
/// working folder, its arguments and two variables. A `stubborn` one stays after its stdin
/// ends.
fn server(stubborn: bool) -> ExitCode {
    #[cfg(unix)]
    // SAFETY: `getpgid(0)` takes no pointer.
    let group = unsafe { libc::getpgid(0) };
    #[cfg(not(unix))]
    let group = 0;
    let args: Vec<String> = std::env::args().skip(1).collect();
    eprintln!(
        "given group={group} pid={} cwd={} args={args:?} own={:?} removed={:?}",
        std::process::id(),
        std::env::current_dir().unwrap().display(),
        std::env::var("MCPWIRE_SPAWN_OWN").ok(),
        std::env::var("MCPWIRE_SPAWN_REMOVED").ok(),
    );
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

fn config_as(role: &str) -> StdioConfig {
    let mut config = StdioConfig {
        command: std::env::current_exe().unwrap().display().to_string(),
        ..StdioConfig::default()
    };
    config.env.insert(ROLE.into(), role.into());
    config
}

fn kind_named(name: &str) -> Kind {
    match name {
        "smol" => Kind::Smol,
        "tokio-mt" => Kind::TokioMultiThread,
        _ => Kind::TokioCurrentThread,
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Smol => "smol",
        Kind::TokioMultiThread => "tokio-mt",
        Kind::TokioCurrentThread => "tokio-ct",
    }
}

/// A host on `runtime` that starts a server that stays after its stdin ends, says the server's
/// id on stdout, and dies with it running (no close, no destructor).
fn host_that_dies(runtime: &str) -> ExitCode {
    let rt = Rt::new(kind_named(runtime));
    let config = ServerConfig::Stdio(config_as("stubborn"));
    let client = rt.block_on(async {
        let client = rt
            .connect(&config, ConnectOptions::default())
            .await
            .unwrap();
        client.list_tools().await.unwrap();
        client
    });
    println!("server {}", client.pid());
    std::process::exit(0)
}

fn tests() -> ExitCode {
    let tests: [(&str, fn()); 6] = [
        (
            "arguments_environment_and_folder_reach_the_server_which_leads_its_group",
            what_the_server_is_given,
        ),
        (
            "the_host_s_death_ends_a_server_that_outlives_stdin",
            the_host_s_death,
        ),
        (
            "a_program_that_cannot_be_run_is_the_standard_library_s_error",
            cannot_be_run,
        ),
        (
            "a_server_let_go_before_its_exit_is_reaped",
            let_go_and_reaped,
        ),
        (
            "a_script_with_no_interpreter_line_runs_with_the_shell",
            script_without_interpreter,
        ),
        (
            "a_connect_dropped_while_its_server_was_spawned_ends_the_server",
            connect_dropped_while_spawned,
        ),
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

fn what_the_server_is_given() {
    // Set before any thread of this test program reads the environment.
    std::env::set_var("MCPWIRE_SPAWN_REMOVED", "host's");
    let folder = std::env::temp_dir().join(format!("mcpwire-spawn-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let folder = folder.canonicalize().unwrap();
    for kind in KINDS {
        let rt = Rt::new(kind);
        let mut config = config_as("server");
        config.args = vec!["one two".into(), String::new(), "three".into()];
        config.env.insert("MCPWIRE_SPAWN_OWN".into(), "own".into());
        config.env_remove = vec!["MCPWIRE_SPAWN_REMOVED".into()];
        config.cwd = Some(folder.clone());
        let said = Arc::new(Mutex::new(None::<String>));
        let s = said.clone();
        let options = ConnectOptions::default().on_stderr(move |line| {
            if let Some(rest) = line.strip_prefix("given ") {
                *s.lock().unwrap() = Some(rest.to_owned());
            }
        });
        let pid = rt.block_on(async {
            let client = rt
                .connect(&ServerConfig::Stdio(config), options)
                .await
                .unwrap();
            client.list_tools().await.unwrap();
            let pid = client.pid();
            client.close().await;
            pid
        });
        let said = said.lock().unwrap().clone();
        let said = said.unwrap_or_else(|| panic!("{kind:?}: the server said nothing"));
        let group = if cfg!(unix) { pid } else { 0 };
        assert_eq!(
            said,
            format!(
                "group={group} pid={pid} cwd={} args={:?} own=Some(\"own\") removed=None",
                folder.display(),
                ["one two", "", "three"],
            ),
            "{kind:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&folder);
}

fn the_host_s_death() {
    for kind in KINDS {
        let mut host = Command::new(std::env::current_exe().unwrap())
            .env(ROLE, format!("host-{}", kind_name(kind)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(host.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let server: u32 = line
            .strip_prefix("server ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("{kind:?}: the host said {line:?}"));
        assert!(host.wait().unwrap().success(), "{kind:?}");
        if cfg!(any(target_os = "linux", windows)) {
            // The parent-death signal (Linux), the job (Windows): not its stdin's end, which
            // this server outlives.
            assert!(
                gone_within(server, Duration::from_secs(5)),
                "{kind:?}: server {server} survived its host"
            );
        } else {
            // No parent-death signal: a server that outlives its stdin outlives its host.
            assert!(alive(server), "{kind:?}: server {server} ended");
            #[cfg(unix)]
            // SAFETY: `kill` has no memory-safety preconditions.
            unsafe {
                libc::kill(server as libc::pid_t, libc::SIGKILL);
            }
        }
    }
}

/// A missing program, a file that is not executable, a folder: each the standard library's
/// spawn error for the same command, as `Error::Spawn`.
fn cannot_be_run() {
    let folder = std::env::temp_dir().join(format!("mcpwire-spawn-x-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let plain = folder.join("not-executable");
    std::fs::write(&plain, "#!/bin/sh\n").unwrap();
    let commands = [
        "mcpwire-no-such-server-anywhere".to_owned(),
        "/nonexistent/mcp-server".to_owned(),
        plain.display().to_string(),
        folder.display().to_string(),
    ];
    for kind in KINDS {
        let rt = Rt::new(kind);
        for command in &commands {
            let expected = Command::new(command).spawn().unwrap_err().to_string();
            let config = ServerConfig::stdio(command.clone(), ["--x"]);
            let err = rt
                .connect_with_driver(&config, ConnectOptions::default())
                .map(|_| ())
                .unwrap_err();
            let Error::Spawn {
                command: shown,
                message,
            } = &err
            else {
                panic!("{kind:?} {command}: {err:?}")
            };
            assert_eq!(shown, &format!("{command} --x"), "{kind:?}");
            assert_eq!(message, &expected, "{kind:?} {command}");
        }
    }
    let _ = std::fs::remove_dir_all(&folder);
}

/// A connection dropped before its server exited (the driver never run): the server is killed
/// and reaped, no zombie left (Linux: no `/proc/PID` any more).
fn let_go_and_reaped() {
    for kind in KINDS {
        let rt = Rt::new(kind);
        let config = ServerConfig::Stdio(config_as("stubborn"));
        let pids: Vec<u32> = (0..3)
            .map(|_| {
                let (client, driver) = rt
                    .connect_with_driver(&config, ConnectOptions::default())
                    .unwrap();
                let pid = client.pid();
                drop((client, driver));
                pid
            })
            .collect();
        for pid in pids {
            ended_and_reaped(kind, pid);
        }
    }
}

/// Server `pid` ends within 5 s, and (Linux) is reaped within 5 s more: no `/proc/PID` left.
fn ended_and_reaped(kind: Kind, pid: u32) {
    assert!(
        gone_within(pid, Duration::from_secs(5)),
        "{kind:?}: server {pid} lives on"
    );
    if cfg!(target_os = "linux") {
        let start = std::time::Instant::now();
        while std::path::Path::new(&format!("/proc/{pid}")).exists() {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{kind:?}: server {pid} was not reaped"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The children of this process (every thread's: the spawner thread is their parent).
#[cfg(target_os = "linux")]
fn children() -> Vec<u32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let listed = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        out.extend(listed.split_whitespace().map(|p| p.parse::<u32>().unwrap()));
    }
    out
}

/// A connect whose future is dropped while its server is being spawned (the spawn asked for,
/// not yet made): the server is killed once made, and reaped (Linux, where a process's
/// children can be listed, a zombie among them until it is reaped). The server's `PATH` leads
/// with six thousand folders that do not exist, so that its program is searched for long
/// enough on the spawner thread for the drop to come first.
fn connect_dropped_while_spawned() {
    #[cfg(target_os = "linux")]
    for kind in KINDS {
        let rt = Rt::new(kind);
        let exe = std::env::current_exe().unwrap();
        let mut config = config_as("silent");
        config.command = exe.file_name().unwrap().to_string_lossy().into_owned();
        let mut path: Vec<String> = (0..6000).map(|i| format!("/nonexistent/{i}")).collect();
        path.push(exe.parent().unwrap().display().to_string());
        config.env.insert("PATH".into(), path.join(":"));
        let config = ServerConfig::Stdio(config);
        let before = children();
        let new = || -> Vec<u32> {
            let now = children();
            now.into_iter().filter(|p| !before.contains(p)).collect()
        };
        let seen = rt.block_on(async {
            let mut connect = Box::pin(rt.connect(&config, ConnectOptions::default()));
            std::future::poll_fn(|cx| {
                let polled = std::future::Future::poll(connect.as_mut(), cx);
                assert!(polled.is_pending(), "{kind:?}: connected at once");
                std::task::Poll::Ready(())
            })
            .await;
            drop(connect);
            // The server is made after the drop: it is seen (running, or killed and not yet
            // reaped) while the runtime runs.
            let start = std::time::Instant::now();
            loop {
                if let [pid] = new()[..] {
                    break pid;
                }
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "{kind:?}: no server was spawned: {:?}",
                    new()
                );
                rt.sleep(Duration::from_millis(1)).await;
            }
        });
        ended_and_reaped(kind, seen);
    }
}

/// A script with no `#!` line is run by `/bin/sh`, as `execvp` runs it (Unix).
fn script_without_interpreter() {
    if !cfg!(unix) {
        return;
    }
    let folder = std::env::temp_dir().join(format!("mcpwire-spawn-sh-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let script = folder.join("server.sh");
    let exe = std::env::current_exe().unwrap();
    std::fs::write(&script, format!("exec '{}' \"$@\"\n", exe.display())).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for kind in KINDS {
        let rt = Rt::new(kind);
        let mut config = config_as("server");
        config.command = script.display().to_string();
        let tools = rt.block_on(async {
            let client = rt
                .connect(&ServerConfig::Stdio(config), ConnectOptions::default())
                .await
                .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
            let tools = client.list_tools().await.unwrap();
            client.close().await;
            tools
        });
        assert!(!tools.is_empty(), "{kind:?}");
    }
    let _ = std::fs::remove_dir_all(&folder);
}
