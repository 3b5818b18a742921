//! Every MCP noun of the command line end to end against the built-in demo server, in both
//! eras where the noun exists: resources, prompts, ping, completion, the log level, watch, and
//! the ways arguments are typed.

mod common;

use std::process::Output;

use serde_json::{json, Value};

use common::{assert_contains, mcpwire_with_stdin, stderr, stdout};

/// `mcpwire ARGS` with an empty stdin.
fn mcpwire(args: &[&str]) -> Output {
    mcpwire_with_stdin(args, b"")
}

/// Runs `args` in each era (auto, which picks stateless against the demo, and handshake).
fn both_eras(args: &[&str]) -> [Output; 2] {
    ["auto", "handshake"].map(|era| {
        let mut all = vec!["--era", era];
        all.extend_from_slice(args);
        mcpwire(&all)
    })
}

fn json_of(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn resources_list_read_and_templates_in_both_eras() {
    for o in both_eras(&["resources"]) {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = stdout(&o);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "URI                      NAME         TYPE                       DESCRIPTION",
                "demo://readme            readme       text/plain",
                "ui://demo/forecast.html  forecast-ui  text/html;profile=mcp-app  The forecast \
                 tool's UI.",
            ],
            "{out}"
        );
    }
    for o in both_eras(&["resources", "--json"]) {
        assert_eq!(json_of(&o)[0]["uri"], "demo://readme");
    }
    for o in both_eras(&["resources", "read", "demo://readme"]) {
        assert_eq!(stdout(&o), "mcpwire demo server\n", "{}", stderr(&o));
    }
    for o in both_eras(&["resources", "read", "demo://echo/hi", "--json"]) {
        assert_eq!(json_of(&o)["contents"][0]["text"], "hi");
    }
    for o in both_eras(&["resources", "templates"]) {
        let out = stdout(&o);
        assert!(out.starts_with("URI TEMPLATE        NAME"), "{out}");
        assert!(out.contains("demo://echo/{text}  echo"), "{out}");
    }
    for o in both_eras(&["resources", "templates", "--json"]) {
        assert_eq!(json_of(&o)[0]["uriTemplate"], "demo://echo/{text}");
    }
    // An unknown resource is the server's error: exit 4.
    let o = mcpwire(&["resources", "read", "demo://nope"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert_contains(&stderr(&o), "resource not found");
}

#[test]
fn resources_read_writes_contents_to_a_file_with_output() {
    let dir = std::env::temp_dir().join(format!("mcpwire-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("readme.txt");
    let path = file.to_str().unwrap();
    let o = mcpwire(&["resources", "read", "demo://readme", "--output", path]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Nothing on stdout: the contents went to the file.
    assert_eq!(stdout(&o), "");
    assert_contains(&stderr(&o), "wrote");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "mcpwire demo server"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn binary_contents_are_never_printed_and_written_exactly_with_output() {
    let server = notifier();
    let dir = std::env::temp_dir().join(format!("mcpwire-blob-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for era in ["auto", "handshake"] {
        let base = [
            "--era",
            era,
            "--stdio",
            &server,
            "resources",
            "read",
            "file:///bin",
        ];
        let o = mcpwire(&base);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(
            stdout(&o),
            "[image/png, 4 B; write it with --output FILE]\n"
        );
        let file = dir.join(format!("{era}.png"));
        let mut args = base.to_vec();
        args.extend(["--output", file.to_str().unwrap()]);
        let o = mcpwire(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(stdout(&o), "");
        assert_eq!(std::fs::read(&file).unwrap(), [0, 1, 2, 255]);
        // --json prints the contents as the server sent them, base64 and all.
        let mut args = base.to_vec();
        args.push("--json");
        assert_eq!(json_of(&mcpwire(&args))["contents"][0]["blob"], "AAEC/w==");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn prompts_list_and_get_in_both_eras() {
    for o in both_eras(&["prompts"]) {
        let out = stdout(&o);
        assert!(out.starts_with("NAME   ARGUMENTS  DESCRIPTION\n"), "{out}");
        assert!(out.contains("greet  name*      A greeting."), "{out}");
    }
    for o in both_eras(&["prompts", "--json"]) {
        assert_eq!(json_of(&o)[0]["name"], "greet");
    }
    for o in both_eras(&["prompts", "get", "greet", "name=Ada"]) {
        assert_eq!(stdout(&o), "user: Say hello to Ada.\n", "{}", stderr(&o));
    }
    for o in both_eras(&["prompts", "get", "greet", r#"{"name": "Bo"}"#, "--json"]) {
        assert_eq!(
            json_of(&o)["messages"][0]["content"]["text"],
            "Say hello to Bo."
        );
    }
    // A prompt's arguments are strings: 42 stays "42".
    let o = mcpwire(&["prompts", "get", "greet", "name=42"]);
    assert_eq!(stdout(&o), "user: Say hello to 42.\n", "{}", stderr(&o));
    let o = mcpwire(&["prompts", "get", "gret", "name=x"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&stderr(&o), "did you mean greet?");
    let o = mcpwire(&["prompts", "get", "greet", "nme=x"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&stderr(&o), "did you mean name?");
}

#[test]
fn ping_in_the_handshake_era_and_a_clear_refusal_in_the_stateless_one() {
    let o = mcpwire(&["--era", "handshake", "ping"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("pong in "), "{}", stdout(&o));
    let o = mcpwire(&["--era", "handshake", "ping", "--json"]);
    let v = json_of(&o);
    assert_eq!(v["ok"], true);
    assert!(v["ms"].as_f64().unwrap() >= 0.0);
    let o = mcpwire(&["ping"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&stderr(&o), "ping does not exist in the stateless era");
}

#[test]
fn complete_a_prompt_argument_and_a_template_argument_in_both_eras() {
    for o in both_eras(&["complete", "--prompt", "greet", "name=a"]) {
        assert_eq!(stdout(&o), "Ada\nAlan\n", "{}", stderr(&o));
    }
    for o in both_eras(&[
        "complete",
        "--template",
        "demo://echo/{text}",
        "text=g",
        "--json",
    ]) {
        let v = json_of(&o);
        assert_eq!(v["completion"]["values"], json!(["Grace"]));
        assert_eq!(v["completion"]["total"], 1);
    }
    // NAME alone completes from nothing typed: every value.
    let o = mcpwire(&["complete", "--prompt", "greet", "name"]);
    assert_eq!(stdout(&o).lines().count(), 5, "{}", stdout(&o));
    let o = mcpwire(&["complete", "--prompt", "greet", "who=a"]);
    assert_eq!(o.status.code(), Some(4));
    let o = mcpwire(&["complete", "name=a"]);
    assert_eq!(o.status.code(), Some(2), "a reference is required");
}

#[test]
fn log_level_in_both_eras() {
    let o = mcpwire(&["--era", "handshake", "log-level", "debug"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "log level set to debug\n");
    let o = mcpwire(&["--era", "handshake", "log-level", "warning", "--json"]);
    assert_eq!(json_of(&o)["level"], "warning");
    // The stateless era has no logging/setLevel: the level goes in each request's _meta.
    let o = mcpwire(&["-v", "log-level", "debug"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stdout(&o), "asked for by each request of this connection");
    assert!(!stderr(&o).contains("logging/setLevel\""), "{}", stderr(&o));
    let o = mcpwire(&["--era", "handshake", "log-level", "loud"]);
    assert_eq!(o.status.code(), Some(2));
}

fn notifier() -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/notifier.py");
    format!("python3 {script}")
}

#[test]
fn watch_prints_notifications_and_log_messages_in_the_handshake_era() {
    let server = notifier();
    let args = [
        "--era",
        "handshake",
        "--stdio",
        &server,
        "watch",
        "--count",
        "3",
        "--resource",
        "file:///x",
    ];
    let o = mcpwire(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines.contains(&"notifications/tools/list_changed"), "{out}");
    assert!(lines.contains(&"[info] notifier: hello"), "{out}");
    assert!(
        lines.contains(&"notifications/resources/updated file:///x"),
        "{out}"
    );
    assert_contains(&stderr(&o), "subscribed to file:///x");
}

#[test]
fn watch_listens_in_the_stateless_era_and_prints_json_lines() {
    let server = notifier();
    let args = [
        "--stdio",
        &server,
        "watch",
        "--count",
        "2",
        "--resource",
        "file:///y",
        "--json",
    ];
    let o = mcpwire(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines,
        vec![
            json!({"method": "notifications/tools/list_changed", "params": {}}),
            json!({"method": "notifications/resources/updated", "params": {"uri": "file:///y"}}),
        ]
    );
    // The acknowledged subset is reported, in words.
    assert_contains(
        &stderr(&o),
        "listening for tool list changes, updates of file:///y\n",
    );
    assert!(!stderr(&o).contains('{'), "{}", stderr(&o));
}

#[test]
fn watch_ends_after_its_time_against_the_demo_server_in_both_eras() {
    for o in both_eras(&["watch", "--for", "0.3"]) {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(stdout(&o), "");
    }
    let o = mcpwire(&["watch", "--for", "-1"]);
    assert_eq!(o.status.code(), Some(2));
    // The demo server offers resource subscriptions: resources/subscribe in the handshake era,
    // resourceSubscriptions on the listen in the stateless era.
    let o = mcpwire(&[
        "--era",
        "handshake",
        "watch",
        "--for",
        "0.3",
        "--resource",
        "demo://readme",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stderr(&o), "subscribed to demo://readme");
    let o = mcpwire(&["watch", "--for", "0.3", "--resource", "demo://readme"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(
        &stderr(&o),
        "listening for tool list changes, prompt list changes, resource list changes, \
         updates of demo://readme\n",
    );
}

#[test]
fn call_arguments_as_raw_json_or_from_stdin() {
    let o = mcpwire(&["call", "add", "a:=1.5", "b=2", "--json"]);
    assert_eq!(json_of(&o)["structuredContent"]["sum"], 3.5);
    // echo's message is a string: 42 is sent as "42".
    let o = mcpwire(&["call", "echo", "message=42"]);
    assert_eq!(stdout(&o), "42\n", "{}", stderr(&o));
    let o = mcpwire_with_stdin(&["call", "add", "-", "--json"], br#"{"a": 2, "b": 3}"#);
    assert_eq!(json_of(&o)["structuredContent"]["sum"], 5.0);
    let o = mcpwire_with_stdin(&["call", "add", "-"], b"[1, 2]");
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&stderr(&o), "one JSON object");
    let o = mcpwire(&["call", "add", "a:=oops", "b=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&stderr(&o), "a:= takes JSON");
}
