//! `mcpwire --config FILE` with several servers, run by the Manager: `servers` tells each
//! one's state as it settles, `tools` lists them all under qualified names, `call
//! server__tool` (or `server/tool`) routes and starts only that server. Two demo servers (one
//! speaking only the handshake era), one that cannot be spawned, one that exits at once with
//! words on its stderr, one that never answers, and the stand-in `fixtures/stub.py`, which
//! logs its start. The binary runs with `HOME` and the cache in a temporary directory.

mod common;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use common::{assert_contains, temp, text, with_bin, BIN};

/// A Claude Desktop file with `servers` (the value of `mcpServers`); `{BIN}` stands for this
/// build's `mcpwire`.
fn config(servers: &str) -> PathBuf {
    config_named("claude_desktop_config.json", servers)
}

/// A file named `name` with `servers` as its `mcpServers` (`.mcp.json`: Claude Code's, which
/// expands `${VAR}`).
fn config_named(name: &str, servers: &str) -> PathBuf {
    let path = temp("manager-file").join(name);
    let body = format!("{{\"mcpServers\": {}}}", with_bin(servers));
    std::fs::write(&path, body).unwrap();
    path
}

/// The four servers: `a` (both eras), `b` (the handshake era only), `c` (cannot be spawned),
/// `d` (exits with words on its stderr).
fn four() -> PathBuf {
    config(
        r#"{
            "a": {"command": "{BIN}", "args": ["serve-demo"]},
            "b": {"command": "{BIN}", "args": ["serve-demo", "--handshake-only"]},
            "c": {"command": "/nonexistent/mcp-server", "args": []},
            "d": {"command": "sh", "args": ["-c", "echo starting >&2; echo 'no API key' >&2; exit 1"]}
        }"#,
    )
}

/// Runs `mcpwire --config FILE ARGS…` with a fresh home and cache.
fn mcpwire(file: &Path, args: &[&str]) -> Output {
    mcpwire_in(&temp("manager-home"), file, args, &[])
}

/// `mcpwire --config FILE ARGS…` in `home` (its cache there too), with `env` added.
fn command_in(home: &Path, file: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("--config")
        .arg(file)
        .args(args)
        .stdin(Stdio::null())
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Runs `mcpwire --config FILE ARGS…` in `home`, with `env` added.
fn mcpwire_in(home: &Path, file: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    command_in(home, file, args, env)
        .output()
        .expect("the binary runs")
}

/// The stand-in server that writes what it saw to a log (`fixtures/stub.py`).
const STUB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/stub.py");

/// The line under the one of `out` that starts with `name` and a space.
fn below<'a>(out: &'a str, name: &str) -> &'a str {
    let mut lines = out.lines();
    lines
        .find(|l| l.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no line for {name}:\n{out}"));
    lines.next().unwrap_or("")
}

/// The line of `out` that starts with `name` and a space.
fn row<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no line for {name}:\n{out}"))
}

#[test]
fn servers_tells_each_state_era_transport_and_failure() {
    let file = four();
    let o = mcpwire(&file, &["servers"]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.starts_with("NAME  STATE"), "{out}");
    let words = |name: &str| row(&out, name).split_whitespace().collect::<Vec<_>>();
    assert_eq!(
        words("a")[..4],
        ["a", "ready", "stateless", "stdio"],
        "{out}"
    );
    assert_eq!(
        words("b")[..4],
        ["b", "ready", "handshake", "stdio"],
        "{out}"
    );
    let tools: usize = words("a")[4].parse().expect("a tool count");
    assert!(tools >= 3, "{out}");
    // The reason first; the command line below it.
    let reason = |name: &str| &row(&out, name)[out.find("REASON").unwrap()..];
    assert!(row(&out, "c").contains(" failed "), "{out}");
    assert_eq!(
        reason("c"),
        "cannot start: No such file or directory (os error 2)",
        "{out}"
    );
    assert_eq!(
        below(&out, "c").trim(),
        "command: /nonexistent/mcp-server",
        "{out}"
    );
    assert!(row(&out, "d").contains(" failed "), "{out}");
    assert!(reason("d").starts_with("handshake failed: "), "{out}");
    assert!(!reason("d").contains("sh -c"), "{out}");
    assert_contains(
        &out,
        "command: sh -c echo starting >&2; echo 'no API key' >&2; exit 1\n",
    );
    // The end of d's stderr, under its reason (once: not inside the reason too).
    assert!(out.contains("stderr: no API key"), "{out}");
    assert_eq!(out.matches("stderr: no API key").count(), 1, "{out}");
    assert!(!out.contains("; stderr:"), "{out}");

    let o = mcpwire(&file, &["servers", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let list = v.as_array().expect("an array");
    assert_eq!(list.len(), 4, "{v}");
    let get = |name: &str| list.iter().find(|s| s["name"] == name).unwrap();
    assert_eq!(get("a")["state"], "ready");
    assert_eq!(get("a")["era"], "stateless");
    assert_eq!(get("a")["transport"], "stdio");
    assert!(get("a")["tools"].as_u64().unwrap() >= 3);
    assert_eq!(get("b")["era"], "handshake");
    assert_eq!(get("c")["state"], "failed");
    assert_eq!(
        get("c")["reason"],
        "cannot start: No such file or directory (os error 2)"
    );
    assert_eq!(get("c")["target"], "/nonexistent/mcp-server");
    assert_eq!(get("d")["stderrTail"], "starting\nno API key");
}

#[test]
fn tools_lists_every_ready_server_by_qualified_name() {
    let file = four();
    let o = mcpwire(&file, &["tools"]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    // The failed servers are told, and the others still answer: exit 0.
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.starts_with("NAME "), "{out}");
    for (name, server) in [("a__add", "a"), ("b__add", "b"), ("b__echo", "b")] {
        let words: Vec<&str> = row(&out, name).split_whitespace().collect();
        assert_eq!(words[1], server, "{out}");
    }
    assert!(!out.contains("c__") && !out.contains("d__"), "{out}");
    assert!(err.contains("mcpwire: c failed: cannot start"), "{err}");
    assert!(
        err.contains("\n  c command: /nonexistent/mcp-server\n"),
        "{err}"
    );
    assert!(err.contains("d stderr: no API key"), "{err}");

    let o = mcpwire(&file, &["tools", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let add = v
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["qualified"] == "b__add")
        .expect("b__add");
    assert_eq!(add["server"], "b");
    assert_eq!(add["name"], "add");
    assert!(add["description"].is_string(), "{add}");

    // One tool in detail, under the name it is called by.
    let o = mcpwire(&file, &["tools", "a/add"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).starts_with("a__add\n"),
        "{}",
        text(&o.stdout)
    );

    // No server answers: the connect exit code.
    let broken = config(
        r#"{"c": {"command": "/nonexistent/mcp-server"},
            "d": {"command": "sh", "args": ["-c", "exit 1"]}}"#,
    );
    let o = mcpwire(&broken, &["tools"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
}

#[test]
fn call_routes_by_qualified_name_or_server_slash_tool() {
    let file = four();
    let o = mcpwire(&file, &["call", "a__add", "a=2", "b=40"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "42");
    let o = mcpwire(&file, &["call", "b/add", "a=1", "b=1"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "2");
    // An unknown name: a usage error naming the close ones.
    let o = mcpwire(&file, &["call", "a__ad", "a=1", "b=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(
        &text(&o.stderr),
        "no tool named a__ad (did you mean a__add?)",
    );
    let o = mcpwire(&file, &["call", "add", "a=1", "b=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&text(&o.stderr), "did you mean a__add or b__add?");
    // A server that is not ready: its state and reason.
    let o = mcpwire(&file, &["call", "d__add", "a=1", "b=1"]);
    assert_eq!(o.status.code(), Some(3));
    let err = text(&o.stderr);
    assert!(
        err.contains("mcpwire: d failed: handshake failed: ")
            && err.contains("d stderr: no API key"),
        "{err}"
    );
}

#[test]
fn a_call_waits_for_its_own_server_only() {
    let file = config(
        r#"{"a": {"command": "{BIN}", "args": ["serve-demo"]},
            "mute": {"command": "sh", "args": ["-c", "sleep 20"]}}"#,
    );
    let started = std::time::Instant::now();
    let o = mcpwire(&file, &["call", "a/add", "a=2", "b=3"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "5");
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    // The start-up timeout is --timeout: the mute server fails within it.
    let o = mcpwire(&file, &["--timeout", "0.5", "servers"]);
    let out = text(&o.stdout);
    // Its start-up timeout ran out: the Manager's own deadline, or the connection's (the
    // probe takes a third of it at most, so `initialize` on a new process has the rest, and
    // the words quote the whole budget).
    let mute = row(&out, "mute");
    assert!(
        mute.contains("not ready within") || mute.contains("no answer to initialize within 500 ms"),
        "{out}"
    );
}

#[test]
fn one_enabled_server_keeps_the_single_server_commands() {
    let file = config(
        r#"{"a": {"command": "{BIN}", "args": ["serve-demo"]},
            "off": {"command": "/nonexistent/mcp-server", "disabled": true}}"#,
    );
    let o = mcpwire(&file, &["tools"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.lines().any(|l| l.starts_with("add ")), "{out}");
    assert!(!out.contains("a__"), "{out}");
    // `servers` still starts it, and holds the disabled one as such.
    let o = mcpwire(&file, &["servers"]);
    let out = text(&o.stdout);
    assert!(row(&out, "a").contains("ready"), "{out}");
    assert!(row(&out, "off").contains("disabled"), "{out}");
    // --no-connect starts nothing: what the file holds.
    let o = mcpwire(&file, &["servers", "--no-connect"]);
    let out = text(&o.stdout);
    assert!(out.starts_with("NAME  HOST"), "{out}");
    assert!(
        row(&out, "off").contains("/nonexistent/mcp-server"),
        "{out}"
    );
}

/// A file with the demo server `a` and the stand-in `s`, which logs to `log` when it starts.
fn demo_and_stub(log: &Path) -> PathBuf {
    let stub = serde_json::json!({"command": "python3", "args": [STUB, log]});
    config(&format!(
        r#"{{"a": {{"command": "{{BIN}}", "args": ["serve-demo"]}}, "s": {stub}}}"#
    ))
}

#[test]
fn a_call_starts_only_its_server_and_a_typo_is_named_from_every_cache() {
    let dir = temp("manager-only");
    let log = dir.join("stub.log");
    let file = demo_and_stub(&log);
    let home = dir.join("home");
    let run = |args: &[&str]| mcpwire_in(&home, &file, args, &[]);
    let o = run(&["call", "a__add", "a=2", "b=3"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "5");
    assert!(!log.exists(), "s was started for a call to a");
    // No cache yet: the names of that server alone.
    let o = run(&["call", "a__evil"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert_contains(
        &err,
        "no tool named a__evil (did you mean a__fail?); a lists ",
    );
    assert!(!err.contains("s__"), "{err}");
    // A server the file does not have is named as such, and nothing starts.
    let o = run(&["call", "nope__evil"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_contains(
        &text(&o.stderr),
        &format!(
            "no server named nope in {}; its servers: a, s",
            file.display()
        ),
    );
    let o = run(&["call", "ss/evil"]);
    assert_contains(&text(&o.stderr), "no server named ss in");
    assert_contains(&text(&o.stderr), "(did you mean s?)");
    assert!(!log.exists(), "a server was started");
    // Once every server has listed its tools, a typo is named from all of them, still
    // starting only the server typed.
    let o = run(&["tools"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_contains(&text(&o.stdout), "s__evil");
    std::fs::remove_file(&log).unwrap();
    let o = run(&["call", "a__evil"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_contains(
        &text(&o.stderr),
        "no tool named a__evil (did you mean s__evil?)",
    );
    assert!(!log.exists(), "s was started for a call to a");
    // And a call to s starts s alone. (The timeout also bounds the handshake: long enough for
    // a Python start on a loaded machine, so the call's own timeout is what ends it.)
    let o = run(&["call", "s__hang", "--timeout", "2"]);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o.stderr));
    let seen = std::fs::read_to_string(&log).unwrap();
    assert_eq!(seen.matches("started").count(), 1, "{seen}");
    assert_contains(&seen, "call hang");
}

/// Lines of output, each with when it came.
type Timed = Vec<(Duration, String)>;

/// Runs `mcpwire --config FILE ARGS…` and gives each line of its stdout and stderr with when
/// it came, from the start.
fn timed(file: &Path, args: &[&str]) -> (Timed, Timed) {
    let home = temp("manager-home");
    let started = Instant::now();
    let mut child = command_in(&home, file, args, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let read = |pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            std::io::BufReader::new(pipe)
                .lines()
                .map(|l| (started.elapsed(), l.unwrap()))
                .collect::<Vec<_>>()
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    child.wait().unwrap();
    (out.join().unwrap(), err.join().unwrap())
}

/// When the first line of `lines` holding `part` came.
#[track_caller]
fn when(lines: &[(Duration, String)], part: &str) -> Duration {
    lines
        .iter()
        .find(|(_, l)| l.contains(part))
        .unwrap_or_else(|| panic!("no line with {part:?}: {lines:?}"))
        .0
}

#[test]
fn each_server_is_told_as_it_settles_and_a_hanging_one_holds_nothing_back() {
    let file = config(
        r#"{"a": {"command": "{BIN}", "args": ["serve-demo"]},
            "mute": {"command": "sh", "args": ["-c", "sleep 30"]}}"#,
    );
    let limit = Duration::from_secs(5);
    let (out, err) = timed(&file, &["--timeout", "5", "servers"]);
    let ready = when(&out, "a     ready");
    let hung = when(&out, "mute  failed");
    assert!(ready < limit - Duration::from_secs(1), "{out:?}");
    assert!(hung >= limit - Duration::from_millis(200), "{out:?}");
    assert!(hung < limit + Duration::from_secs(5), "{out:?} {err:?}");
    assert!(out[0].1.starts_with("NAME  STATE"), "{out:?}");
    // `tools`: a's tools at once, the hanging server told when its start-up timeout ends.
    let (out, err) = timed(&file, &["--timeout", "5", "tools"]);
    let listed = when(&out, "a__add");
    let told = when(&err, "mcpwire: mute failed: ");
    assert!(listed < limit - Duration::from_secs(1), "{out:?}");
    assert!(told >= limit - Duration::from_millis(200), "{err:?}");
    assert!(!out.iter().any(|(_, l)| l.contains("mute")), "{out:?}");
}

#[test]
fn servers_show_a_server_the_file_cannot_give_and_never_a_secret() {
    let file = config_named(
        ".mcp.json",
        r#"{"a": {"command": "{BIN}", "args": ["serve-demo"]},
            "e": {"command": "x", "env": {"T": "${MCPWIRE_TEST_UNSET_VARIABLE}"}},
            "f": {"command": "/nonexistent/mcp-server", "args": ["--token", "${MCPWIRE_TEST_TOKEN}"]}}"#,
    );
    let home = temp("manager-home");
    let env = [("MCPWIRE_TEST_TOKEN", "t0kenvalue")];
    let unset = "`env.T` refers to `${MCPWIRE_TEST_UNSET_VARIABLE}`, which is not set";
    let o = mcpwire_in(&home, &file, &["servers", "--no-connect"], &env);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    let e = row(&out, "e");
    assert!(e.contains(&format!("error: {unset}")), "{out}");
    assert!(e.trim_end().ends_with(".mcp.json"), "{out}");
    assert!(row(&out, "f").contains("--token ***"), "{out}");
    // Started: the same row, its reason first; a failed server's command line without its
    // secret.
    let o = mcpwire_in(&home, &file, &["servers"], &env);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(
        row(&out, "e").ends_with(&format!("failed    -          -          -      {unset}")),
        "{out}"
    );
    assert!(row(&out, "f").contains("cannot start: "), "{out}");
    assert_eq!(
        below(&out, "f").trim(),
        "command: /nonexistent/mcp-server --token ***",
        "{out}"
    );
    let all = format!("{out}{}", text(&o.stderr));
    assert!(!all.contains("t0kenvalue"), "{all}");
    let o = mcpwire_in(&home, &file, &["servers", "--json"], &env);
    assert!(
        !text(&o.stdout).contains("t0kenvalue"),
        "{}",
        text(&o.stdout)
    );
}
