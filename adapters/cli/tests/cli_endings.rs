//! How commands end, and what of a server's text reaches the terminal.
//!
//! Endings: a reader of stdout that goes away, Ctrl-C during a call (once and twice, over one
//! server and several), and `--verbose` telling the close's escalation as it happens. The
//! graceful close is checked by what the stand-in server (`fixtures/stub.py`) saw: the end of
//! its stdin, SIGTERM, a cancellation. Ctrl-C is SIGINT sent to the command by its PID.
//!
//! Server text: terminal controls in a tool's text, a JSON-RPC error's message, a log message,
//! the server's stderr (live and as an error's tail) and an HTTP error's body are printed made
//! visible, on a terminal and in files alike; `--json` stays valid JSON with them escaped; a
//! body that is not text is summarised. And `--json` prints an error object for every failure.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{assert_contains, mcpwire, spawn, stderr, stdout, temp, BIN};
use serde_json::Value;

/// The stand-in server.
const STUB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/stub.py");

/// What the stub's tool `evil` answers (and its error message, log message and stderr hold).
const EVIL: &str =
    "title\u{1b}]0;pwned\u{7} clear\u{1b}[2J cr\rover c1\u{85}\u{9b}31m bidi\u{202e}evil\u{2066} zw\u{200b}x";

/// `EVIL` as the command line prints it.
const EVIL_SHOWN: &str = "title\\x1b]0;pwned\\x07 clear\\x1b[2J cr\\rover c1\\u{85}\\u{9b}31m \
                          bidi\\u{202e}evil\\u{2066} zw\\u{200b}x";

/// The arguments that run the stub as the stdio server (last on the command line), logging to
/// `log`; `stubborn`: it ignores the end of its stdin and SIGTERM.
fn stub(log: &Path, stubborn: bool) -> Vec<String> {
    let mut args = vec![
        "--stdio".to_owned(),
        "--".to_owned(),
        "python3".to_owned(),
        STUB.to_owned(),
        log.display().to_string(),
    ];
    if stubborn {
        args.push("stubborn".into());
    }
    args
}

/// `mcpwire ARGS` against the stub.
fn against_stub(args: &[&str], log: &Path, stubborn: bool) -> Vec<String> {
    let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    all.extend(stub(log, stubborn));
    all
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// What the stub logged so far.
fn logged(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

/// Waits until the stub logged `line` (a whole line).
#[track_caller]
fn wait_for(log: &Path, line: &str) {
    let start = Instant::now();
    while !logged(log).lines().any(|l| l == line) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the stub never logged {line:?}:\n{}",
            logged(log)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The stub's PID, from its log.
fn stub_pid(log: &Path) -> Option<i32> {
    logged(log)
        .lines()
        .find_map(|l| l.strip_prefix("started ")?.parse().ok())
}

/// Whether process `pid` exists and is not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

/// Sends SIGINT to the command this test started.
fn interrupt(child: &Child) {
    // SAFETY: kill(2) signals the child this test started, by its PID.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
}

/// Kills what is left of the stub (a test that failed half way), by the PID it logged.
fn clean_up(log: &Path) {
    if let Some(pid) = stub_pid(log) {
        if alive(pid) {
            // SAFETY: kill(2) on the stub this test started (its PID from its own log).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// The lines of the stub's log, each once, in order, among `wanted`.
fn steps(log: &Path, wanted: &[&str]) -> Vec<String> {
    logged(log)
        .lines()
        .filter(|l| wanted.iter().any(|w| l.starts_with(w)))
        .map(str::to_owned)
        .collect()
}

fn log_in(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.log"))
}

#[test]
#[cfg(unix)]
fn a_reader_that_goes_away_closes_the_server_gracefully_then_ends_by_sigpipe() {
    use std::os::unix::process::ExitStatusExt;
    let dir = temp("endings-pipe");
    let log = log_in(&dir, "stub");
    // 256 KiB of text: more than a pipe holds, so the reader's going away is seen.
    let args = against_stub(&["call", "big"], &log, false);
    let mut child = spawn(&strs(&args), Stdio::null());
    let mut first = [0u8; 1024];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The reader is gone: `mcpwire … | head -c 1024`.
    let o = child.wait_with_output().unwrap();
    clean_up(&log);
    assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{:?}", o.status);
    assert_eq!(stderr(&o), "");
    // The server saw the end of its stdin and left on its own: no SIGTERM, no SIGKILL.
    assert_eq!(
        steps(&log, &["stdin closed", "got SIGTERM", "exiting"]),
        ["stdin closed", "exiting"],
        "{}",
        logged(&log)
    );
    // And it was reaped, not left a zombie.
    let pid = stub_pid(&log).expect("the stub's pid");
    assert!(!alive(pid));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg(unix)]
fn ctrl_c_during_a_call_cancels_it_closes_the_server_gracefully_and_exits_130() {
    let dir = temp("endings-ctrl-c");
    let log = log_in(&dir, "stub");
    let args = against_stub(&["call", "hang", "--json"], &log, false);
    let child = spawn(&strs(&args), Stdio::null());
    wait_for(&log, "call hang");
    interrupt(&child);
    let o = child.wait_with_output().unwrap();
    clean_up(&log);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert_contains(&stderr(&o), "interrupted; closing the connection");
    // The call was cancelled on the wire, then the server got the end of its stdin.
    let seen = steps(
        &log,
        &["notifications/cancelled", "stdin closed", "got SIGTERM"],
    );
    assert_eq!(seen.len(), 2, "{}", logged(&log));
    // Cancelled saying why: "interrupted", not "the caller stopped waiting".
    assert!(
        seen[0].starts_with("notifications/cancelled ") && seen[0].ends_with(": interrupted"),
        "{}",
        logged(&log)
    );
    assert_eq!(seen[1], "stdin closed");
    // --json: the interruption as an error object, in words; stderr says it once.
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["error"]["kind"], "interrupted", "{v}");
    assert_eq!(v["error"]["message"], "interrupted", "{v}");
    assert_eq!(
        stderr(&o).matches("interrupted").count(),
        1,
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg(unix)]
fn a_second_ctrl_c_ends_at_once() {
    use std::os::unix::process::ExitStatusExt;
    let dir = temp("endings-twice");
    let log = log_in(&dir, "stub");
    // A server that ignores the end of its stdin and SIGTERM: the close would take 4 s.
    let args = against_stub(&["call", "hang"], &log, true);
    let child = spawn(&strs(&args), Stdio::null());
    wait_for(&log, "call hang");
    interrupt(&child);
    wait_for(&log, "stdin closed");
    // Later than a signal sent twice at once (which is one request), as a person's second is.
    std::thread::sleep(Duration::from_millis(200));
    let second = Instant::now();
    interrupt(&child);
    let o = child.wait_with_output().unwrap();
    let took = second.elapsed();
    let pid = stub_pid(&log).expect("the stub's pid");
    // The server goes with its host (the parent-death signal).
    let start = Instant::now();
    while alive(pid) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let outlived = alive(pid);
    clean_up(&log);
    assert_eq!(o.status.signal(), Some(libc::SIGINT), "{}", stderr(&o));
    assert!(took < Duration::from_millis(1500), "{took:?}");
    // Ended before the close's SIGTERM was due.
    assert!(!logged(&log).contains("got SIGTERM"), "{}", logged(&log));
    assert!(!outlived, "the server outlived its host");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends `signal` to the command this test started.
#[cfg(unix)]
fn send(child: &Child, signal: libc::c_int) {
    // SAFETY: kill(2) signals the child this test started, by its PID.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
}

/// SIGTERM (`kill`, `timeout`, a supervisor) and SIGHUP (a closed terminal) end a command as
/// Ctrl-C does: the call in flight cancelled on the wire, the server closed gracefully (the end
/// of its stdin, and it left on its own), then exit 143 or 129; `--json` says which.
#[test]
#[cfg(unix)]
fn sigterm_and_sighup_cancel_close_gracefully_and_exit_143_and_129() {
    let dir = temp("endings-signals");
    for (signal, code, kind, words) in [
        (libc::SIGTERM, 143, "terminated", "terminated (SIGTERM)"),
        (libc::SIGHUP, 129, "hung-up", "hung up (SIGHUP)"),
    ] {
        let log = log_in(&dir, kind);
        let args = against_stub(&["call", "hang", "--json"], &log, false);
        let child = spawn(&strs(&args), Stdio::null());
        wait_for(&log, "call hang");
        send(&child, signal);
        let o = child.wait_with_output().unwrap();
        clean_up(&log);
        assert_eq!(o.status.code(), Some(code), "{kind}: {}", stderr(&o));
        assert_contains(&stderr(&o), &format!("{words}; closing the connection"));
        let seen = steps(
            &log,
            &[
                "notifications/cancelled",
                "stdin closed",
                "got SIGTERM",
                "exiting",
            ],
        );
        assert_eq!(seen.len(), 3, "{kind}: {}", logged(&log));
        assert!(seen[0].starts_with("notifications/cancelled "), "{seen:?}");
        assert!(seen[0].ends_with(&format!(": {words}")), "{seen:?}");
        assert_eq!(seen[1..], ["stdin closed", "exiting"], "{kind}");
        let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
        assert_eq!(v["error"]["kind"], kind, "{v}");
        assert_eq!(v["error"]["message"], words, "{v}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `timeout 5 mcpwire …` sends its SIGTERM to the command and to its process group, the
/// command again, at once: that is one request, and the close stays graceful. So is a closed
/// terminal's SIGHUP, which may come twice (from the terminal and from the shell), whenever
/// the second comes. A second request of another kind, or SIGTERM again later, ends at once.
#[test]
#[cfg(unix)]
fn the_same_signal_twice_is_one_request_and_a_second_request_ends_at_once() {
    use std::os::unix::process::ExitStatusExt;
    let dir = temp("endings-twice-over");
    // SIGTERM twice at once.
    let log = log_in(&dir, "timeout");
    let args = against_stub(&["call", "hang"], &log, false);
    let child = spawn(&strs(&args), Stdio::null());
    wait_for(&log, "call hang");
    send(&child, libc::SIGTERM);
    send(&child, libc::SIGTERM);
    let o = child.wait_with_output().unwrap();
    clean_up(&log);
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert_eq!(
        steps(&log, &["stdin closed", "got SIGTERM", "exiting"]),
        ["stdin closed", "exiting"]
    );
    // SIGHUP again while a server that ignores the end of its stdin is being closed: the
    // close goes on to its SIGTERM.
    let log = log_in(&dir, "hangup");
    let args = against_stub(&["call", "hang"], &log, true);
    let child = spawn(&strs(&args), Stdio::null());
    wait_for(&log, "call hang");
    send(&child, libc::SIGHUP);
    wait_for(&log, "stdin closed");
    std::thread::sleep(Duration::from_millis(300));
    send(&child, libc::SIGHUP);
    let o = child.wait_with_output().unwrap();
    clean_up(&log);
    assert_eq!(o.status.code(), Some(129), "{}", stderr(&o));
    assert!(logged(&log).contains("got SIGTERM"), "{}", logged(&log));
    // SIGTERM, then Ctrl-C: ends at once, by SIGINT, before the close's SIGTERM is due; the
    // server goes with its host.
    for (first, second) in [
        (libc::SIGTERM, libc::SIGINT),
        (libc::SIGTERM, libc::SIGTERM),
    ] {
        let log = log_in(&dir, &format!("second-{second}"));
        let args = against_stub(&["call", "hang"], &log, true);
        let child = spawn(&strs(&args), Stdio::null());
        wait_for(&log, "call hang");
        send(&child, first);
        wait_for(&log, "stdin closed");
        std::thread::sleep(Duration::from_millis(200));
        let again = Instant::now();
        send(&child, second);
        let o = child.wait_with_output().unwrap();
        let took = again.elapsed();
        let pid = stub_pid(&log).expect("the stub's pid");
        let start = Instant::now();
        while alive(pid) && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let outlived = alive(pid);
        clean_up(&log);
        assert_eq!(o.status.signal(), Some(second), "{}", stderr(&o));
        assert!(took < Duration::from_millis(1500), "{took:?}");
        assert!(!logged(&log).contains("got SIGTERM"), "{}", logged(&log));
        assert!(!outlived, "the server outlived its host");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A signal ignored when the command started (`nohup` ignores SIGHUP) stays ignored.
#[test]
#[cfg(unix)]
fn an_ignored_sighup_stays_ignored() {
    use std::os::unix::process::CommandExt;
    let dir = temp("endings-nohup");
    let log = log_in(&dir, "stub");
    let args = against_stub(&["call", "hang"], &log, false);
    let mut command = common::command();
    command
        .args(strs(&args))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: signal(2) is async-signal-safe, as what runs between fork and exec must be.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            Ok(())
        });
    }
    let child = command.spawn().unwrap();
    wait_for(&log, "call hang");
    send(&child, libc::SIGHUP);
    std::thread::sleep(Duration::from_millis(500));
    assert!(!logged(&log).contains("stdin closed"), "{}", logged(&log));
    send(&child, libc::SIGINT);
    let o = child.wait_with_output().unwrap();
    clean_up(&log);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg(unix)]
fn ctrl_c_during_a_call_that_runs_as_a_task_sends_tasks_cancel() {
    // The demo server's `build` runs as a task in the stateless era.
    let mut child = common::command()
        .args(["--verbose", "call", "build", "ms=60000"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    // The task is polled once it runs.
    while !seen.contains("\"method\":\"tasks/get\"") {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "{seen}");
        seen.push_str(&line);
    }
    interrupt(&child);
    err.read_to_string(&mut seen).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen}");
    let cancel = seen
        .lines()
        .position(|l| l.starts_with("→ ") && l.contains("\"method\":\"tasks/cancel\""));
    let closed = seen.lines().position(|l| l.starts_with("· stdin closed"));
    assert!(cancel.is_some() && closed.is_some(), "{seen}");
    assert!(cancel < closed, "{seen}");
    assert!(!seen.contains("notifications/cancelled"), "{seen}");
}

#[test]
#[cfg(unix)]
fn ctrl_c_with_several_servers_closes_each_gracefully() {
    let dir = temp("endings-many");
    let (a, b, c) = (log_in(&dir, "a"), log_in(&dir, "b"), log_in(&dir, "c"));
    let server = |log: &Path, mode: &str| {
        let mut args = vec![STUB.to_owned(), log.display().to_string()];
        if !mode.is_empty() {
            args.push(mode.to_owned());
        }
        serde_json::json!({"command": "python3", "args": args})
    };
    let config = dir.join("mcp.json");
    // c never answers: it is still starting when Ctrl-C comes.
    let servers = serde_json::json!({
        "a": server(&a, ""),
        "b": server(&b, ""),
        "c": server(&c, "mute"),
    });
    let file = serde_json::json!({ "mcpServers": servers });
    std::fs::write(&config, file.to_string()).unwrap();
    // `tools` starts them all; a and b answer, c is still starting when Ctrl-C comes.
    let child = spawn(
        &["--config", config.to_str().unwrap(), "tools"],
        Stdio::null(),
    );
    let start = Instant::now();
    while [&a, &b, &c].iter().any(|log| stub_pid(log).is_none()) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "a, b or c never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    interrupt(&child);
    let o = child.wait_with_output().unwrap();
    for log in [&a, &b, &c] {
        clean_up(log);
    }
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    for log in [&a, &b, &c] {
        assert_eq!(
            steps(log, &["stdin closed", "got SIGTERM", "exiting"]),
            ["stdin closed", "exiting"],
            "{}",
            logged(log)
        );
        std::fs::remove_file(log).unwrap();
    }
    // A call starts its own server alone: Ctrl-C cancels the call in flight and closes it.
    let child = spawn(
        &["--config", config.to_str().unwrap(), "call", "a__hang"],
        Stdio::null(),
    );
    wait_for(&a, "call hang");
    interrupt(&child);
    let o = child.wait_with_output().unwrap();
    clean_up(&a);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert_eq!(
        steps(&a, &["stdin closed", "got SIGTERM", "exiting"]),
        ["stdin closed", "exiting"],
        "{}",
        logged(&a)
    );
    assert!(
        logged(&a).contains("notifications/cancelled") && logged(&a).contains(": interrupted"),
        "{}",
        logged(&a)
    );
    assert!(!b.exists() && !c.exists(), "b or c was started");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg(unix)]
fn verbose_tells_each_step_of_the_close_as_it_happens() {
    let dir = temp("endings-verbose");
    let log = log_in(&dir, "stub");
    let args = against_stub(&["--verbose", "tools"], &log, true);
    let mut child = common::command()
        .args(strs(&args))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut lines: Vec<(Duration, String)> = Vec::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        lines.push((start.elapsed(), line.unwrap()));
    }
    let status = child.wait().unwrap();
    let ended = start.elapsed();
    clean_up(&log);
    let text: String = lines.iter().map(|(t, l)| format!("{t:?} {l}\n")).collect();
    assert_eq!(status.code(), Some(0), "{text}");
    let at = |part: &str| {
        lines
            .iter()
            .find(|(_, l)| l.starts_with("· ") && l.contains(part))
            .map(|(t, _)| *t)
            .unwrap_or_else(|| panic!("no line with {part:?}:\n{text}"))
    };
    let eof = at("stdin closed (end of file): the server has 2s to exit");
    let term =
        at("the server is still running: SIGTERM sent to its process group, 2s before SIGKILL");
    let kill = at("SIGKILL sent to the server's process group");
    // Each when it happens, not all at the end.
    assert!(term - eof >= Duration::from_millis(1800), "{text}");
    assert!(kill - term >= Duration::from_millis(1800), "{text}");
    assert!(ended - eof >= Duration::from_millis(3600), "{text}");
    // And in the server's log, the same steps.
    assert_eq!(
        steps(&log, &["stdin closed", "got SIGTERM"]),
        ["stdin closed", "got SIGTERM"]
    );
    // Without --verbose, none of it.
    let log = log_in(&dir, "quiet");
    let o = mcpwire(&strs(&against_stub(&["tools"], &log, false)));
    clean_up(&log);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("stdin closed"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Asserts that `text` holds no character a terminal acts on (but newlines and tabs).
#[track_caller]
fn assert_inert(text: &str) {
    let hidden: Vec<char> = text
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}')
        })
        .collect();
    assert!(hidden.is_empty(), "{hidden:?} in:\n{text}");
}

#[test]
fn server_text_is_printed_with_its_controls_made_visible() {
    let dir = temp("endings-text");
    let log = log_in(&dir, "stub");
    // A tool's text, and a log message.
    let o = mcpwire(&strs(&against_stub(&["call", "evil"], &log, false)));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("{EVIL_SHOWN}\n"));
    assert_contains(&stderr(&o), &format!("[error] stub: {EVIL_SHOWN}"));
    assert_inert(&stdout(&o));
    assert_inert(&stderr(&o));
    // A JSON-RPC error's message.
    let o = mcpwire(&strs(&against_stub(&["call", "refuse"], &log, false)));
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert_contains(&stderr(&o), &format!("refused: {EVIL_SHOWN}"));
    assert_inert(&stderr(&o));
    // The server's stderr, live with --verbose and as the tail of an error.
    let o = mcpwire(&strs(&against_stub(&["--verbose", "tools"], &log, false)));
    assert_contains(&stderr(&o), &format!("server: stub stderr: {EVIL_SHOWN}"));
    assert_inert(&stderr(&o));
    let o = mcpwire(&strs(&against_stub(&["call", "crash"], &log, false)));
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert_contains(&stderr(&o), &format!("crashing: {EVIL_SHOWN}"));
    assert_inert(&stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stdio server that writes something other than JSON-RPC on stdout and then exits, or
/// answers nothing: the failure a person sees names what it wrote instead (how many lines,
/// the first two, escaped and cut), in words and in `--json`.
#[test]
fn a_failed_start_names_what_the_server_wrote_on_stdout_instead() {
    let o = mcpwire(&["--stdio", "python3 -c 'print(1)'", "tools"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_contains(
        &stderr(&o),
        "the server exited (exit code 0); \
         the server wrote 1 line on stdout that is not JSON-RPC: \"1\"",
    );
    // A banner with terminal controls, a second line, then silence: the handshake's timeout.
    let code = "import sys, time\n\
                print('Server v2 \\x1b[1mready\\x1b[0m', flush=True)\n\
                print('listening on stdio', flush=True)\n\
                time.sleep(60)";
    let o = mcpwire(&[
        "--timeout",
        "2",
        "tools",
        "--json",
        "--stdio",
        "--",
        "python3",
        "-c",
        code,
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let said = "the server wrote 2 lines on stdout that are not JSON-RPC: \
                \"Server v2 \\u{1b}[1mready\\u{1b}[0m\", \"listening on stdio\"";
    assert_contains(&stderr(&o), said);
    assert_inert(&stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["error"]["kind"], "connect", "{v}");
    assert_contains(v["error"]["message"].as_str().unwrap(), said);
}

#[test]
fn json_stays_json_with_the_controls_escaped() {
    let dir = temp("endings-json");
    let log = log_in(&dir, "stub");
    let o = mcpwire(&strs(&against_stub(
        &["call", "evil", "--json"],
        &log,
        false,
    )));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert_inert(&text);
    assert!(
        text.contains("\\u0085") && text.contains("\\u202e") && text.contains("\\u001b"),
        "{text}"
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["content"][0]["text"], EVIL);
    // A JSON-RPC error too.
    let o = mcpwire(&strs(&against_stub(
        &["call", "refuse", "--json"],
        &log,
        false,
    )));
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert_inert(&stdout(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["code"], -32000);
    assert_eq!(v["error"]["message"], format!("refused: {EVIL}"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg(unix)]
fn on_a_terminal_too() {
    let dir = temp("endings-tty");
    let log = log_in(&dir, "stub");
    let driver = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pty_run.py");
    let mut args = vec!["python3".to_owned(), driver.to_owned(), "--".to_owned()];
    args.push(BIN.to_owned());
    args.extend(against_stub(&["--verbose", "call", "evil"], &log, false));
    let o = Command::new(&args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert_contains(&text, EVIL_SHOWN);
    // This program's own escapes (dimming) are there; the server's are not.
    for raw in [
        "\u{1b}]0;",
        "\u{1b}[2J",
        "\u{85}",
        "\u{9b}",
        "\u{202e}",
        "\u{200b}",
    ] {
        assert!(
            !text.contains(raw),
            "{raw:?} reached the terminal:\n{text:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server that answers every request with `status` and `body` (as `content_type`), then
/// closes the connection. Returns its URL.
fn http_answering(status: &'static str, content_type: &'static str, body: Vec<u8>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some((k, v)) = line.split_once(':') {
                    if k.eq_ignore_ascii_case("content-length") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
            }
            let mut request = vec![0; length];
            let _ = reader.read_exact(&mut request);
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    url
}

#[test]
fn an_http_error_body_is_made_visible_or_summarised_when_not_text() {
    // Text with terminal controls.
    let url = http_answering("500 Oops", "text/plain", EVIL.as_bytes().to_vec());
    let o = mcpwire(&["--http", &url, "info"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_contains(&stderr(&o), EVIL_SHOWN);
    assert_inert(&stderr(&o));
    // A gzip body, not text: summarised, not dumped.
    let mut gzip = vec![0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03];
    gzip.extend((0..400u32).map(|i| (i * 97 % 251) as u8));
    let url = http_answering("500 Oops", "application/json", gzip.clone());
    let o = mcpwire(&["--http", &url, "info", "--json"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_contains(&stderr(&o), "(a body that is not text, not shown)");
    assert!(!stderr(&o).contains('\u{fffd}'), "{}", stderr(&o));
    assert_inert(&stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["error"]["kind"], "connect", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("(a body that is not text, not shown)"),
        "{v}"
    );
    // decode, given such a body, says what it is.
    let file = temp("endings-decode").join("body.gz");
    std::fs::write(&file, &gzip).unwrap();
    let o = mcpwire(&[
        "decode",
        "--content-type",
        "application/json",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(6), "{}", stderr(&o));
    assert_contains(&stdout(&o), &format!("{} bytes, not text", gzip.len()));
    assert_inert(&stdout(&o));
    assert!(!stdout(&o).contains('\u{fffd}'), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
}

#[test]
fn with_json_every_failure_is_an_error_object() {
    let error = |o: &std::process::Output| -> Value {
        let v: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {:?}\n{}", stdout(o), stderr(o)));
        v["error"].clone()
    };
    // A usage error the parser finds, and one found later.
    let o = mcpwire(&["call", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(error(&o)["kind"], "usage");
    assert!(error(&o)["message"].as_str().unwrap().contains("required"));
    let o = mcpwire(&["call", "add", "a=x", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(error(&o)["kind"], "usage");
    // A server that cannot be started.
    let o = mcpwire(&["--stdio", "/nonexistent/server", "info", "--json"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(error(&o)["kind"], "connect");
    assert_contains(
        error(&o)["message"].as_str().unwrap(),
        "/nonexistent/server",
    );
    // Nothing listening.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let o = mcpwire(&["--http", &url, "tools", "--json"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(error(&o)["kind"], "connect");
    // A timeout.
    let dir = temp("endings-timeout");
    let log = log_in(&dir, "stub");
    // Long enough for the stand-in (a Python process) to start: the start shares the budget.
    let args = against_stub(&["--timeout", "2", "call", "hang", "--json"], &log, false);
    let o = mcpwire(&strs(&args));
    clean_up(&log);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert_eq!(error(&o)["kind"], "timeout");
    // Which request, which limit, how long, and that the call may have run.
    assert_contains(
        &stderr(&o),
        "no answer to tools/call within 2 s (--timeout); the call may have run",
    );
    // Other commands too.
    let o = mcpwire(&["--stdio", "/nonexistent/server", "resources", "--json"]);
    assert_eq!(error(&o)["kind"], "connect");
    // Without --json, nothing on stdout.
    let o = mcpwire(&["call", "add", "a=x"]);
    assert!(o.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server that never answers `notifications/initialized` holds the first call behind it:
/// the failure is one kind, a timeout (exit 5), whichever timeout fired first, the call's own
/// (`--timeout 2`) or the notification's response head (30 s, under `--timeout 60`).
#[test]
fn the_initialized_gate_fails_with_one_exit_code_whichever_timeout_fired() {
    use mcpwire_tests::fault_http::{FaultServer, Rule};
    let init = r#"{"jsonrpc":"2.0","id":{{id}},"result":{"protocolVersion":"2025-11-25",
        "capabilities":{"tools":{}},"serverInfo":{"name":"gate","version":"1"}}}"#;
    let server = FaultServer::start(vec![
        Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", "s-1")], init),
        Rule::notifications().silent(),
        Rule::get().status(405),
        Rule::delete().status(200),
    ]);
    let url = server.url();
    for timeout in ["2", "60"] {
        let o = mcpwire(&[
            "--http",
            &url,
            "--era",
            "handshake",
            "--timeout",
            timeout,
            "ping",
            "--json",
        ]);
        assert_eq!(
            o.status.code(),
            Some(5),
            "--timeout {timeout}: {}",
            stderr(&o)
        );
        let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
        assert_eq!(v["error"]["kind"], "timeout", "{v}");
        assert_contains(&stderr(&o), "notifications/initialized");
    }
}

/// One row of the exit codes' table: the code, its kind with `--json` (or none), the words.
type ExitRow = (u16, String, String);

/// The exit codes' table of `--help`: a row is `CODE  KIND  WORDS` in fixed columns (the code
/// right-aligned in 5, the kind from the 8th, the words from the 21st), continued on lines
/// that leave the first 20 blank.
fn help_exit_table(help: &str) -> Vec<ExitRow> {
    let mut rows: Vec<ExitRow> = Vec::new();
    let table = help
        .lines()
        .skip_while(|l| !l.starts_with("Exit codes"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty());
    for line in table {
        let (head, words) = line.split_at(20.min(line.len()));
        match head.trim() {
            "" => {
                let row = rows.last_mut().expect("a row to continue");
                row.2 = format!("{} {}", row.2, words.trim());
            }
            _ => {
                let code = head[..5].trim().parse().expect("a code");
                rows.push((code, head[5..].trim().to_owned(), words.trim().to_owned()));
            }
        }
    }
    rows
}

/// The command line's README's table: `| CODE | KIND | WORDS |`, backticks left out.
fn readme_exit_table(readme: &str) -> Vec<ExitRow> {
    readme
        .lines()
        .skip_while(|l| !l.starts_with("| code | kind |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<String> = l
                .trim()
                .trim_matches('|')
                .split('|')
                .map(|c| c.replace('`', "").trim().to_owned())
                .collect();
            assert_eq!(cells.len(), 3, "{l}");
            (
                cells[0].parse().expect("a code"),
                cells[1].clone(),
                cells[2].clone(),
            )
        })
        .collect()
}

/// The exit codes are one table, the same in `--help` and the command line's README: one code for each kind
/// of failure, each kind with one code, every code the command line ends with among them.
#[test]
fn every_exit_code_is_one_table_in_help_and_the_readme() {
    let help = stdout(&mcpwire(&["--help"]));
    let readme = include_str!("../README.md");
    let in_help = help_exit_table(&help);
    let in_readme = readme_exit_table(readme);
    assert_eq!(in_help, in_readme);
    let codes: Vec<u16> = in_help.iter().map(|r| r.0).collect();
    assert_eq!(codes, [0, 1, 2, 3, 4, 5, 6, 7, 129, 130, 141, 143]);
    let mut kinds: Vec<&str> = in_help
        .iter()
        .map(|r| r.1.as_str())
        .filter(|k| !k.is_empty())
        .collect();
    let all = kinds.len();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds.len(), all, "a kind with two codes: {in_help:?}");
    assert_contains(&help, "Ctrl-C, after a call in flight was cancelled");
}

/// A server that never answers `notifications/initialized`: `call --timeout 2` waits its two
/// seconds once (the tool list it checks first and the call share them), says so in the
/// seconds given, and ends as a timeout; the close does not wait for the notification again.
#[test]
fn a_stuck_initialized_notification_costs_one_timeout() {
    use mcpwire_tests::fault_http::{FaultServer, Matcher, Rule};
    use mcpwire_tests::scenario::HANDSHAKE_INIT;
    let server = FaultServer::start(vec![
        Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", "s-1")], HANDSHAKE_INIT),
        Rule::notifications().silent(),
        Rule::get().status(405),
        Rule::delete().status(200),
    ]);
    let started = Instant::now();
    let o = common::mcpwire_without_proxies(&[
        "--http",
        &server.url(),
        "--era",
        "handshake",
        "--timeout",
        "2",
        "call",
        "add",
    ]);
    let took = started.elapsed();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert_contains(&err, "for 2 s (--timeout)");
    assert_contains(&err, "notifications/initialized");
    // One budget of 2 s (and a prompt close), not one per request and the close's grace.
    assert!(took < Duration::from_secs(4), "took {took:?}: {err}");
    assert!(server
        .wait_for(&Matcher::delete(), Duration::from_secs(1))
        .is_some());
    assert!(
        !server.log().iter().any(|l| l.contains("tools/")),
        "{:?}",
        server.log()
    );
}
