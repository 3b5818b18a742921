//! The `mcpwire` binary as a subprocess: every command against the built-in demo server, exit
//! codes, and the host killed with SIGKILL taking its server with it.

mod common;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use common::{assert_contains, mcpwire, spawn, stderr, stdout};

#[test]
fn info_shows_era_version_server_and_instructions() {
    let o = mcpwire(&["info"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    // The demo server speaks both eras: detection picks the stateless one.
    assert!(out.contains("era:          stateless"), "{out}");
    assert!(out.contains("protocol:     2026-07-28"), "{out}");
    assert!(out.contains("mcpwire-demo"), "{out}");
    assert!(out.contains("instructions:"), "{out}");
    let out = stdout(&mcpwire(&["--era", "legacy", "info"]));
    assert!(out.contains("era:          handshake"), "{out}");
    assert!(out.contains("protocol:     2025-11-25"), "{out}");
    let o = mcpwire(&["info", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["era"], "stateless");
    assert_eq!(v["protocolVersion"], "2026-07-28");
    assert_eq!(v["serverInfo"]["name"], "mcpwire-demo");
    assert!(v["capabilities"]["tools"].is_object());
}

#[test]
fn tools_as_a_table_and_as_json() {
    let o = mcpwire(&["tools"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.starts_with("NAME"), "{out}");
    assert_eq!(out.lines().count(), 1 + ALL_TOOLS.len(), "{out}");
    let o = mcpwire(&["tools", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<_> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ALL_TOOLS);
}

/// The demo server's tools, in its order.
const ALL_TOOLS: [&str; 14] = [
    "echo",
    "add",
    "slow",
    "ask",
    "survey",
    "fail",
    "big",
    "build",
    "crawl",
    "approve",
    "doomed",
    "ask-task",
    "forecast",
    "forecast-refresh",
];

#[test]
fn one_tool_in_detail_and_as_json() {
    let o = mcpwire(&["tools", "slow"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "slow
  Counts steps with progress; honours cancellation.

arguments:
  interval_ms  integer  optional  default: 100
  steps        integer  optional  default: 5
"
    );
    let out = stdout(&mcpwire(&["tools", "add"]));
    assert!(out.contains("  a  number  required\n"), "{out}");
    assert!(out.contains("structured output: sum (number)"), "{out}");
    let o = mcpwire(&["tools", "echo", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["name"], "echo");
    assert_eq!(v["inputSchema"]["required"][0], "message");
    let o = mcpwire(&["tools", "eco"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&stderr(&o), "no tool named eco (did you mean echo?)");
    assert!(stdout(&o).is_empty());
}

#[test]
fn call_types_arguments_by_schema_and_prints_text() {
    let o = mcpwire(&["call", "add", "a=2", "b=40"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "42\n");
    // A string property keeps digits as a string.
    let o = mcpwire(&["call", "echo", "message=007"]);
    assert_eq!(stdout(&o), "007\n");
    let o = mcpwire(&["call", "add", r#"{"a": 1.5, "b": 1}"#, "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["structuredContent"]["sum"], 2.5);
}

#[test]
fn arguments_and_tool_names_are_checked_before_the_call() {
    // An unknown tool: nothing is called, the listed tools are named, the closest suggested.
    let o = mcpwire(&["--verbose", "call", "ehco", "message=hi"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "mcpwire: no tool named ehco (did you mean echo?); the server lists 14 tools: \
             echo, add, slow, ask, survey, fail, big, build, crawl, approve, doomed, ask-task, \
             forecast, forecast-refresh"
        ),
        "{err}"
    );
    assert!(!err.contains("\"method\":\"tools/call\""), "called: {err}");
    // The same with a JSON object of arguments and with none.
    for args in [&["call", "nope", "{}"][..], &["call", "nope"]] {
        let o = mcpwire(args);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_contains(&stderr(&o), "no tool named nope;");
    }
    // A typo in a key, a key given twice, an integer too large.
    let o = mcpwire(&["call", "slow", "stesp=2"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(
        &stderr(&o),
        "unknown argument stesp (did you mean steps?); the tool's arguments: interval_ms, steps",
    );
    let o = mcpwire(&["call", "add", "a=1", "a=2"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&stderr(&o), "a is given twice");
    let o = mcpwire(&["call", "slow", "steps=99999999999999999999"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(
        &stderr(&o),
        "steps: 99999999999999999999 is too large for an integer",
    );
    let o = mcpwire(&["call", "fail", "x=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("this tool takes no arguments"));
}

/// A handshake-era server (offering tools only) as a shell script: it answers the handshake,
/// sends `notes`, lists `tools` and answers the first call with `answer` (the response to
/// request 2), then waits for EOF.
fn script_server(name: &str, notes: &[&str], tools: &str, answer: &str) -> std::path::PathBuf {
    let script = std::env::temp_dir().join(format!("mcpwire-{name}-{}.sh", std::process::id()));
    let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"script","version":"1"}}}"#;
    let list = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":{tools}}}}}"#);
    // Heredocs, not echo: echo would turn the JSON's backslashes into control characters.
    let say = |m: &str| format!("cat <<'EOF'\n{m}\nEOF\n");
    let notes: String = notes.iter().map(|n| say(n)).collect();
    let body = format!(
        "read l\n{}read l\nread l\n{notes}{}read l\n{}read l\n",
        say(init),
        say(&list),
        say(answer)
    );
    std::fs::write(&script, body).unwrap();
    script
}

#[test]
fn content_blocks_as_lines_and_written_with_output() {
    let tools = r#"[{"name":"pic","inputSchema":{"type":"object"}}]"#;
    let image = "A".repeat(16384); // 12 KiB of zeros
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":2,"result":{{"content":[
            {{"type":"text","text":"first line\n"}},
            {{"type":"image","mimeType":"image/png","data":"{image}"}},
            {{"type":"audio","mimeType":"audio/wav","data":"Zm9v"}},
            {{"type":"resource_link","uri":"demo://readme","name":"readme","mimeType":"text/plain"}},
            {{"type":"text","text":"last"}}]}}}}"#
    )
    .replace('\n', "");
    let script = script_server("content", &[], tools, &answer);
    let line = format!("sh {}", script.display());
    let o = mcpwire(&["--era", "handshake", "--stdio", &line, "call", "pic"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "first line\n[image/png, 12 KiB]\n[audio/wav, 3 B]\n\
         [resource link demo://readme, text/plain, \"readme\"]\nlast\n"
    );
    let dir = std::env::temp_dir().join(format!("mcpwire-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.join("new");
    let o = mcpwire(&[
        "--era",
        "handshake",
        "--stdio",
        &line,
        "call",
        "pic",
        "--output",
        out.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&script);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (png, wav) = (out.join("pic-1.png"), out.join("pic-2.wav"));
    assert_eq!(
        stdout(&o),
        format!(
            "first line\n[image/png, 12 KiB, written to {}]\n[audio/wav, 3 B, written to {}]\n\
             [resource link demo://readme, text/plain, \"readme\"]\nlast\n",
            png.display(),
            wav.display()
        )
    );
    assert_eq!(std::fs::read(&png).unwrap(), vec![0u8; 12288]);
    assert_eq!(std::fs::read(&wav).unwrap(), b"foo");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_json_rpc_error_with_json_is_json_on_stdout() {
    // echo refuses a message that is not a string with a JSON-RPC error (not an isError
    // result); a missing one is told before sending.
    let o = mcpwire(&["call", "echo", r#"{"message": 5}"#, "--json"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"error": {"code": -32602, "message": "echo needs a string message"}})
    );
    assert!(stderr(&o).contains("echo needs a string message"));
    // Without --json, nothing on stdout.
    let o = mcpwire(&["call", "echo", r#"{"message": 5}"#]);
    assert_eq!(o.status.code(), Some(4));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
}

#[test]
fn log_messages_at_the_level_asked_for() {
    let logs = |o: &Output| -> Vec<String> {
        stderr(o)
            .lines()
            .filter(|l| l.starts_with('['))
            .map(str::to_owned)
            .collect()
    };
    for era in ["handshake", "stateless"] {
        // --log-level asks the demo server for its messages (logging/setLevel in the handshake
        // era, the level in each request's _meta in the stateless era): it logs each step of
        // `slow` at info and at debug.
        let o = mcpwire(&[
            "--era",
            era,
            "--log-level",
            "debug",
            "call",
            "slow",
            "steps=2",
            "interval_ms=10",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(
            logs(&o),
            [
                "[debug] demo: step 1, next in 10 ms",
                "[info] demo: step 1 of 2 done",
                "[debug] demo: step 2, next in 10 ms",
                "[info] demo: step 2 of 2 done",
            ],
            "{era}"
        );
        // Not a terminal: no colour.
        assert!(!stderr(&o).contains('\x1b'), "{}", stderr(&o));
        let o = mcpwire(&[
            "--era",
            era,
            "--log-level",
            "info",
            "call",
            "slow",
            "steps=1",
        ]);
        assert_eq!(logs(&o), ["[info] demo: step 1 of 1 done"], "{era}");
    }
    // Without --log-level the demo server is not asked, and sends none.
    let o = mcpwire(&["--verbose", "call", "slow", "steps=1", "interval_ms=10"]);
    assert!(logs(&o).is_empty(), "{:?}", logs(&o));
    assert!(!stderr(&o).contains("logging/setLevel"));
    assert!(!stderr(&o).contains("io.modelcontextprotocol/logLevel"));
    let asked = |era: &str| {
        let o = mcpwire(&[
            "-v",
            "--era",
            era,
            "--log-level",
            "warning",
            "call",
            "slow",
            "steps=1",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(logs(&o).is_empty(), "{:?}", logs(&o));
        assert!(!stderr(&o).contains("failed"), "{}", stderr(&o));
        stderr(&o)
    };
    let handshake = asked("handshake");
    assert_contains(
        &handshake,
        r#""method":"logging/setLevel","params":{"level":"warning""#,
    );
    // The stateless era has no logging/setLevel (the demo server, like real servers, answers
    // it with method not found): the level travels in each request's _meta.
    let stateless = asked("stateless");
    assert!(!stateless.contains("logging/setLevel"), "{stateless}");
    assert_contains(
        &stateless,
        r#""io.modelcontextprotocol/logLevel":"warning""#,
    );
}

#[test]
fn log_messages_below_the_level_are_left_out_here_too() {
    // A server that logs at every level, unasked, and does not offer logging: nothing is asked
    // of it, and the client leaves out what is below the level (info by default).
    let note = |level: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"{level}","data":"at {level}"}}}}"#
        )
    };
    let notes = [note("debug"), note("info"), note("warning")];
    let notes: Vec<&str> = notes.iter().map(String::as_str).collect();
    let tools = r#"[{"name":"t","inputSchema":{"type":"object"}}]"#;
    let answer = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ok"}]}}"#;
    let script = script_server("logs", &notes, tools, answer);
    let line = format!("sh {}", script.display());
    let run = |extra: &[&str]| {
        let mut args = vec!["--era", "handshake", "--stdio", &line];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["call", "t"]);
        mcpwire(&args)
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "ok\n");
    assert_eq!(stderr(&o), "[info] at info\n[warning] at warning\n");
    let o = run(&["--log-level", "warning"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "[warning] at warning\n");
    let o = run(&["--log-level", "debug"]);
    assert_eq!(
        stderr(&o),
        "[debug] at debug\n[info] at info\n[warning] at warning\n"
    );
    let _ = std::fs::remove_file(&script);
    assert_eq!(
        mcpwire(&["--log-level", "loud", "info"]).status.code(),
        Some(2)
    );
}

#[test]
fn call_shows_progress_on_stderr() {
    let o = mcpwire(&["call", "slow", "steps=2", "interval_ms=10"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "done after 2 steps\n");
    assert_contains(&stderr(&o), "progress 2/2");
}

#[test]
fn elicitations_answered_from_flags_or_declined() {
    // The same answers in both eras: mid-call requests (handshake) and input rounds (stateless).
    for era in ["legacy", "modern"] {
        let o = mcpwire(&["--era", era, "call", "ask"]);
        assert_eq!(stdout(&o), "the user chose decline\n", "{era}");
        assert!(stderr(&o).contains("declined"));
        let o = mcpwire(&["--era", era, "call", "ask", "--answer-defaults"]);
        assert_eq!(stdout(&o), "hello, world\n", "{era}");
        let o = mcpwire(&["--era", era, "call", "ask", "--answer", r#"{"name":"Ada"}"#]);
        assert_eq!(stdout(&o), "hello, Ada\n", "{era}");
    }
    let o = mcpwire(&["call", "survey", "--answer-defaults"]);
    assert_eq!(stdout(&o), "world likes world\n");
    // --answer is checked against the form before it is sent, with the form's words; the
    // command then fails.
    for era in ["legacy", "modern"] {
        let o = mcpwire(&["--era", era, "call", "ask", "--answer", r#"{"name":5}"#]);
        assert_eq!(o.status.code(), Some(2), "{era}: {}", stderr(&o));
        assert_contains(&stderr(&o), "--answer does not fit the form");
        assert_contains(&stderr(&o), "name: text, please");
        assert_contains(
            &stderr(&o),
            "--answer does not fit the form the server asked for",
        );
    }
    // A field left out takes its default, as on the form.
    let o = mcpwire(&["call", "ask", "--answer", "{}"]);
    assert_eq!(stdout(&o), "hello, world\n", "{}", stderr(&o));
}

#[test]
fn exit_codes() {
    assert_eq!(mcpwire(&["call", "fail"]).status.code(), Some(1));
    assert_eq!(mcpwire(&["call", "add", "a=x"]).status.code(), Some(2));
    assert_eq!(mcpwire(&["bogus"]).status.code(), Some(2));
    let o = mcpwire(&["--stdio", "/nonexistent/server", "info"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        stderr(&o).lines().count(),
        1,
        "one clear line: {}",
        stderr(&o)
    );
    let o = mcpwire(&[
        "--stdio",
        "sh -c 'echo crashed on start >&2; exit 9'",
        "info",
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("exit code 9") && stderr(&o).contains("crashed on start"));
    // A JSON-RPC error from the server: a tool that is listed but refuses its arguments.
    let o = mcpwire(&["call", "echo", "message:=5"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let o = mcpwire(&[
        "--timeout",
        "0.2",
        "--max-time",
        "0.5",
        "call",
        "slow",
        "steps=100",
    ]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert_contains(&stderr(&o), "maximum total time");
    let help = stdout(&mcpwire(&["--help"]));
    assert!(help.contains("Exit codes, each with its kind"), "{help}");
}

#[test]
fn verbose_prints_the_frames() {
    let o = mcpwire(&["--verbose", "call", "echo", "message=hi"]);
    let err = stderr(&o);
    assert!(
        err.contains("→ {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"server/discover\""),
        "{err}"
    );
    assert!(
        err.contains("← {\"jsonrpc\":\"2.0\",\"id\":1,\"result\""),
        "{err}"
    );
    // The connection's events too: readiness with the era, then the close.
    assert!(
        err.contains("· ready: stateless era, protocol 2026-07-28, server mcpwire-demo"),
        "{err}"
    );
    assert!(err.contains("· closed: closed by the client"), "{err}");
}

/// A Streamable HTTP server of the handshake era, just enough for `info`: `server/discover`
/// gets a plain 404 (as from a server that predates it), `initialize` opens session
/// `sess-0123456789`, notifications get 202, GET gets 405, DELETE ends it. Each request's head
/// goes to the receiver. Returns its `host:port`.
fn tiny_http_server() -> (String, std::sync::mpsc::Receiver<String>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let length = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let method = head.split(' ').next().unwrap_or("").to_owned();
            let _ = tx.send(head);
            let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (status, extra, body) = match method.as_str() {
                "POST" if message["method"] == "initialize" => (
                    "200 OK",
                    "Content-Type: application/json\r\nMcp-Session-Id: sess-0123456789\r\n",
                    serde_json::json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                        "protocolVersion": "2025-11-25", "capabilities": {},
                        "serverInfo": {"name": "tiny", "version": "1"}}})
                    .to_string(),
                ),
                "POST" if message["method"] == "server/discover" => (
                    "404 Not Found",
                    "Content-Type: text/plain\r\n",
                    "Not Found".to_owned(),
                ),
                "POST" => ("202 Accepted", "", String::new()),
                "DELETE" => ("200 OK", "", String::new()),
                _ => ("405 Method Not Allowed", "", String::new()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            if method == "DELETE" {
                return;
            }
        }
    });
    (addr, rx)
}

#[test]
fn verbose_over_http_shows_each_exchange_without_credentials() {
    let (addr, requests) = tiny_http_server();
    let url = format!("http://bob:hunter2@{addr}/mcp?token=abc&x=1");
    let o = Command::new(env!("CARGO_BIN_EXE_mcpwire"))
        .args(["-v", "--era", "handshake", "--http", &url])
        .args(["--bearer-env", "MCPWIRE_TEST_TOKEN", "info"])
        .env("MCPWIRE_TEST_TOKEN", "sekrit-token")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let shown = format!("http://{addr}/mcp?token=***&x=1");
    for line in [
        format!("⇢ POST {shown}\n"),
        "⇠ 200 application/json session=sess-012… (POST)\n".to_owned(),
        format!("⇢ POST {shown} session=sess-012…\n"),
        "⇠ 202 (POST)\n".to_owned(),
        format!("⇢ GET {shown} session=sess-012…\n"),
        format!("⇢ DELETE {shown} session=sess-012…\n"),
        "⇠ 200 (DELETE)".to_owned(),
    ] {
        assert!(err.contains(&line), "no {line:?} in:\n{err}");
    }
    for secret in ["hunter2", "bob", "sekrit", "token=abc", "sess-0123456789"] {
        assert!(!err.contains(secret), "{secret} shown:\n{err}");
    }
    // The credentials did go on the wire.
    let heads: Vec<String> = requests.try_iter().collect();
    let bearer = |h: &String| {
        h.to_lowercase()
            .contains("authorization: bearer sekrit-token")
    };
    assert!(heads.iter().all(bearer), "{heads:?}");
    assert!(heads.iter().any(|h| h.starts_with("DELETE ")), "{heads:?}");
}

#[test]
fn verbose_shows_the_diagnostics_a_server_causes() {
    // A server that writes noise on stdout: the line is reported, the call goes on.
    let script = std::env::temp_dir().join(format!("mcpwire-noisy-{}.sh", std::process::id()));
    std::fs::write(
        &script,
        r#"read l
echo 'this is not JSON'
echo '{"jsonrpc":"2.0","id":999,"error":{"code":-32000,"message":"stale"}}'
echo '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t-9","progress":1}}'
echo '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
echo '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"noisy","version":"1"}}}'
read l
"#,
    )
    .unwrap();
    let line = format!("sh {}", script.display());
    let o = mcpwire(&["--verbose", "--era", "handshake", "--stdio", &line, "info"]);
    let _ = std::fs::remove_file(&script);
    let err = stderr(&o);
    assert!(
        err.contains("· diagnostic: line is not a JSON-RPC message"),
        "{err}"
    );
    assert!(err.contains("this is not JSON"), "{err}");
    // What the request engine saw, in words: never a Rust debug dump.
    for said in [
        "· diagnostic: a response to id 999, which no request of ours had: \
         JSON-RPC error code -32000: stale",
        "· diagnostic: progress for token \"t-9\", which belongs to no request in flight",
        "· diagnostic: a response without an id: JSON-RPC error code -32700: Parse error",
    ] {
        assert!(err.contains(said), "{said:?} is missing from:\n{err}");
    }
    assert!(
        !err.contains("UnmatchedResponse") && !err.contains("Str("),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(0), "{err}");
}

#[test]
fn another_mcpwire_as_the_stdio_server() {
    let line = format!("{} serve-demo", env!("CARGO_BIN_EXE_mcpwire"));
    let o = mcpwire(&["--stdio", &line, "call", "echo", "message=via --stdio"]);
    assert_eq!(stdout(&o), "via --stdio\n", "{}", stderr(&o));
}

#[test]
fn the_demo_server_lists_generated_tools_when_asked() {
    let line = format!("{} serve-demo --tools 300", env!("CARGO_BIN_EXE_mcpwire"));
    let o = mcpwire(&["--stdio", &line, "tools", "--json"]);
    let tools: Value = serde_json::from_str(&stdout(&o)).expect("a JSON list");
    let generated: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .filter(|n| n.starts_with("tool-"))
        .collect();
    assert_eq!(generated.len(), 300, "{}", stderr(&o));
    assert_eq!((generated[0], generated[299]), ("tool-0", "tool-299"));
    let o = mcpwire(&["--stdio", &line, "call", "tool-7", "message=seven"]);
    assert_eq!(stdout(&o), "seven\n", "{}", stderr(&o));
}

fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            if let Ok(list) = std::fs::read_to_string(t.path().join("children")) {
                out.extend(
                    list.split_whitespace()
                        .filter_map(|p| p.parse::<u32>().ok()),
                );
            }
        }
    }
    out
}

fn alive(pid: u32) -> bool {
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

#[test]
fn the_host_killed_with_sigkill_takes_its_server_with_it() {
    let mut host = Command::new(env!("CARGO_BIN_EXE_mcpwire"))
        .args(["call", "slow", "steps=1000", "interval_ms=100"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let server = loop {
        if let Some(&pid) = children(host.id()).first() {
            break pid;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no server started"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(alive(server));
    host.kill().unwrap(); // SIGKILL: the host gets no chance to clean up.
    host.wait().unwrap();
    let start = Instant::now();
    while alive(server) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "server {server} outlived its host"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_call_cut_short_by_the_server_s_death_may_have_run_and_is_not_repeated() {
    // A server that answers the handshake, reads the call, and dies before answering.
    let script = std::env::temp_dir().join(format!("mcpwire-dies-{}.sh", std::process::id()));
    std::fs::write(
        &script,
        r#"read l
echo '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"dies","version":"1"}}}'
read l
read l
echo '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"charge","inputSchema":{"type":"object"}}]}}'
read l
echo 'crashed while charging' >&2
exit 3
"#,
    )
    .unwrap();
    let line = format!("sh {}", script.display());
    let o = mcpwire(&["--era", "handshake", "--stdio", &line, "call", "charge"]);
    let _ = std::fs::remove_file(&script);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("the call may have run; not repeated"), "{err}");
    assert!(err.contains("exit code 3"), "{err}");
}

#[test]
fn over_http_auto_detects_an_older_server_and_stateless_says_it_does_not_speak_it() {
    let (addr, _requests) = tiny_http_server();
    let url = format!("http://{addr}/mcp");
    let o = mcpwire(&["--http", &url, "info"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stdout(&o), "era:          handshake");
    let (addr, _requests) = tiny_http_server();
    let url = format!("http://{addr}/mcp");
    for era in ["stateless", "modern"] {
        let o = mcpwire(&["--http", &url, "--era", era, "info"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(3), "{era}: {err}");
        assert!(
            err.contains("this server does not speak 2026-07-28; try --era auto"),
            "{err}"
        );
    }
}

#[test]
fn progress_extends_the_timeout_of_a_call() {
    // Five steps 150 ms apart take 750 ms, longer than the 400 ms timeout: progress keeps the
    // call alive, as users of every SDK expect.
    let o = mcpwire(&[
        "--timeout",
        "0.4",
        "call",
        "slow",
        "steps=5",
        "interval_ms=150",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn an_answer_over_the_message_cap_fails_at_once_and_names_the_cap() {
    let start = std::time::Instant::now();
    let o = mcpwire(&["--max-message-size", "100000", "call", "big", "mib=1"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains("100000-byte cap") && err.contains("--max-message-size"),
        "{err}"
    );
    // At once, not after the call's timeout.
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    // Raised, the same call goes through.
    let o = mcpwire(&["--max-message-size", "4000000", "call", "big", "mib=1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn the_stateless_era_against_a_handshake_only_server_suggests_auto() {
    let script = std::env::temp_dir().join(format!("mcpwire-old-{}.sh", std::process::id()));
    std::fs::write(
        &script,
        r#"read l
echo '{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}'
read l
"#,
    )
    .unwrap();
    let line = format!("sh {}", script.display());
    let o = mcpwire(&["--era", "modern", "--stdio", &line, "info"]);
    let _ = std::fs::remove_file(&script);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("this server does not speak 2026-07-28; try --era auto"),
        "{err}"
    );
}

#[test]
fn ping_honours_the_timeout() {
    // A server that answers the handshake and never the ping.
    let script = std::env::temp_dir().join(format!("mcpwire-mute-{}.sh", std::process::id()));
    let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"mute","version":"1"}}}"#;
    std::fs::write(
        &script,
        format!("read l\ncat <<'EOF'\n{init}\nEOF\nread l\nread l\nsleep 20\n"),
    )
    .unwrap();
    let line = format!("sh {}", script.display());
    let started = std::time::Instant::now();
    let o = mcpwire(&[
        "--stdio",
        &line,
        "--era",
        "handshake",
        "--timeout",
        "0.3",
        "ping",
    ]);
    let _ = std::fs::remove_file(&script);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn stdio_as_last_arguments_with_env_and_cwd() {
    let bin = env!("CARGO_BIN_EXE_mcpwire");
    let o = mcpwire(&["tools", "--stdio", "--", bin, "serve-demo"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stdout(&o), "add");
    // The server sees --env and --cwd; what it says on stderr ends the connection error.
    let dir = std::env::temp_dir().join(format!("mcpwire-cwd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    let cwd = dir.to_str().unwrap();
    let o = mcpwire(&[
        "--env",
        "GREETING=hello there",
        "--cwd",
        cwd,
        "info",
        "--stdio",
        "--",
        "sh",
        "-c",
        "echo \"$GREETING from $(pwd)\" >&2; exit 7",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_contains(&stderr(&o), &format!("hello there from {cwd}"));
    let o = mcpwire(&["--env", "A=1", "--http", "http://127.0.0.1:9/mcp", "info"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = mcpwire(&["--env", "novalue", "info"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = mcpwire(&["--stdio", "x", "info", "--stdio", "--", "y"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn the_server_s_stderr_is_shown_on_verbose() {
    let line = format!(
        "sh -c 'echo warming up >&2; exec {} serve-demo'",
        env!("CARGO_BIN_EXE_mcpwire")
    );
    let o = mcpwire(&["--stdio", &line, "info"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warming up"), "{}", stderr(&o));
    let o = mcpwire(&["--stdio", &line, "--verbose", "info"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stderr(&o), "server: warming up");
}

#[test]
fn completion_scripts_for_bash_zsh_and_fish() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef mcpwire"),
        ("fish", "complete -c mcpwire"),
    ] {
        let o = mcpwire(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let script = stdout(&o);
        assert!(script.contains(marker), "{shell}: {script}");
        for word in [
            "tools",
            "call",
            "servers",
            "completions",
            "--stdio",
            "--server",
        ] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
    }
    assert_eq!(mcpwire(&["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
#[cfg(unix)]
fn a_reader_that_goes_away_ends_the_command_by_sigpipe_without_a_panic() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    // Both print more than a pipe holds (64 KiB), so the reader's going away is seen.
    for args in [&["completions", "bash"][..], &["call", "big", "mib=1"]] {
        let mut child = spawn(args, Stdio::null());
        let mut first = [0u8; 1024];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        // The reader is gone: `mcpwire … | head -c 1024`.
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.signal(), Some(13), "{args:?}: {:?}", o.status);
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}

#[test]
#[cfg(unix)]
fn watch_closes_the_session_on_ctrl_c() {
    let (addr, requests) = tiny_http_server();
    let url = format!("http://{addr}/mcp");
    let child = spawn(
        &["--era", "handshake", "--http", &url, "watch"],
        Stdio::null(),
    );
    // The first request comes after SIGINT is caught; wait for the session's GET.
    let mut heads = Vec::new();
    while !heads.iter().any(|h: &String| h.starts_with("GET ")) {
        let head = requests
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("a request");
        heads.push(head);
    }
    // SAFETY: kill(2) on the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stderr(&o), "interrupted");
    heads.extend(requests.try_iter());
    assert!(heads.iter().any(|h| h.starts_with("DELETE ")), "{heads:?}");
}
