//! The command matrix: every command of `mcpwire` that talks to a server, run against each
//! server over each transport it serves and in each protocol era it speaks, checking what comes
//! out (tool names, result texts, resource texts, prompt messages, exit codes).
//!
//! | test                               | server                            | transport | eras                  |
//! |------------------------------------|-----------------------------------|-----------|-----------------------|
//! | `demo_over_stdio`                  | built-in demo (`serve-demo`)      | stdio     | stateless, handshake  |
//! | `demo_handshake_only_over_stdio`   | `serve-demo --handshake-only`     | stdio     | handshake             |
//! | `everything_over_stdio`            | server-everything (pinned)        | stdio     | handshake             |
//! | `everything_over_http`             | server-everything `streamableHttp`| HTTP      | handshake             |
//! | `everything_over_http_sse`         | server-everything `sse`           | HTTP+SSE  | handshake             |
//! | `python_over_stdio`                | Python SDK server (pinned `mcp`)  | stdio     | stateless, handshake  |
//! | `python_over_http`                 | Python SDK server                 | HTTP      | stateless, handshake  |
//! | `python_over_http_sse`             | Python SDK server `sse`           | HTTP+SSE  | handshake             |
//!
//! HTTP is Streamable HTTP; HTTP+SSE is the 2024-11-05 transport, found at its `/sse` URL, which
//! carries the handshake era only. The commands that need no server (`demo`, `servers`,
//! `decode`, `completions`) are tested in `demo.rs`, `cli_servers.rs`, `cli_config.rs`,
//! `decode.rs` and `cli.rs`.
//!
//! A server that speaks only the handshake era is asked for the stateless one too: the CLI's
//! refusal (exit 3) is checked. A command a server or an era does not offer (ping in the
//! stateless era, completions or logging a server lacks) is checked for its
//! clear error and exit code. Each test runs its commands a few at a time and reports every
//! failing one together. The peers are installed by the test command; a missing peer fails the
//! test unless `MCPWIRE_SKIP_PEERS=1`.

// This test says on stderr what it skipped or how long it took; the rule that everything is
// printed through `out` (clippy.toml) is for the binary.
#![allow(clippy::disallowed_macros)]

mod common;

use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde_json::Value;

use common::peers::{everything_stdio, peers, python, python_http, skipped, HttpPeer};
use common::BIN;

/// server-everything over HTTP in `mode` (`streamableHttp`, or `sse` for the 2024-11-05
/// HTTP+SSE transport), bound to 127.0.0.1 by the loopback preload.
fn everything_http(mode: &str) -> HttpPeer {
    mcpwire_tests::everything_http_mode(mode).0
}

// ---- the steps -------------------------------------------------------------------------------

type JsonCheck = Box<dyn Fn(&Value) -> Result<(), String> + Send + Sync>;

/// One command and what it must do: its exit code, and what its stdout and stderr hold.
struct Step {
    args: Vec<String>,
    code: i32,
    stdout_is: Option<String>,
    stdout_has: Vec<String>,
    stdout_lines: Vec<String>,
    stderr_has: Vec<String>,
    json: Option<JsonCheck>,
}

fn step<S: AsRef<str>>(args: &[S]) -> Step {
    Step {
        args: args.iter().map(|s| s.as_ref().to_owned()).collect(),
        code: 0,
        stdout_is: None,
        stdout_has: Vec::new(),
        stdout_lines: Vec::new(),
        stderr_has: Vec::new(),
        json: None,
    }
}

impl Step {
    fn code(mut self, code: i32) -> Self {
        self.code = code;
        self
    }
    /// Stdout is exactly `text`.
    fn out_is(mut self, text: &str) -> Self {
        self.stdout_is = Some(text.to_owned());
        self
    }
    fn out_has(mut self, text: &str) -> Self {
        self.stdout_has.push(text.to_owned());
        self
    }
    /// Some line of stdout starts with `start`.
    fn line_starts(mut self, start: &str) -> Self {
        self.stdout_lines.push(start.to_owned());
        self
    }
    fn err_has(mut self, text: &str) -> Self {
        self.stderr_has.push(text.to_owned());
        self
    }
    /// Stdout is JSON that `check` accepts.
    fn json(
        mut self,
        check: impl Fn(&Value) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.json = Some(Box::new(check));
        self
    }

    /// What is wrong with `o`, if anything.
    fn verdict(&self, o: &Output) -> Result<(), String> {
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        let mut wrong = Vec::new();
        if o.status.code() != Some(self.code) {
            wrong.push(format!(
                "exit code {:?}, expected {}",
                o.status.code(),
                self.code
            ));
        }
        if let Some(want) = &self.stdout_is {
            if out != *want {
                wrong.push(format!("stdout is not {want:?}"));
            }
        }
        for want in &self.stdout_has {
            if !out.contains(want.as_str()) {
                wrong.push(format!("stdout lacks {want:?}"));
            }
        }
        for start in &self.stdout_lines {
            if !out.lines().any(|l| l.starts_with(start.as_str())) {
                wrong.push(format!("no stdout line starts with {start:?}"));
            }
        }
        for want in &self.stderr_has {
            if !err.contains(want.as_str()) {
                wrong.push(format!("stderr lacks {want:?}"));
            }
        }
        if let Some(check) = &self.json {
            match serde_json::from_str::<Value>(&out) {
                Ok(v) => {
                    if let Err(why) = check(&v) {
                        wrong.push(why);
                    }
                }
                Err(e) => wrong.push(format!("stdout is not JSON: {e}")),
            }
        }
        match wrong.is_empty() {
            true => Ok(()),
            false => Err(format!(
                "{}\n  --- stdout ---\n{}\n  --- stderr ---\n{}",
                wrong.join("; "),
                indent(&out),
                indent(&err)
            )),
        }
    }
}

fn indent(text: &str) -> String {
    let lines: Vec<String> = text.lines().take(20).map(|l| format!("  {l}")).collect();
    lines.join("\n")
}

/// The string at `pointer` in `v` is `want`, or why not.
fn field(v: &Value, pointer: &str, want: &str) -> Result<(), String> {
    match v.pointer(pointer).and_then(Value::as_str) {
        Some(got) if got == want => Ok(()),
        got => Err(format!("{pointer} is {got:?}, expected {want:?}")),
    }
}

// ---- what each server offers -----------------------------------------------------------------

/// What a server offers and answers, for the commands to check against.
struct Profile {
    /// `serverInfo.name`.
    name: &'static str,
    /// Tools it lists (some of them).
    tools: &'static [&'static str],
    /// A tool, and a line `tools NAME` prints for it.
    detail: (&'static str, &'static str),
    /// A call, and its whole stdout.
    call: (&'static [&'static str], &'static str),
    /// A tool that reports an `isError` result, and that result's text.
    failing: Option<(&'static [&'static str], &'static str)>,
    /// A call whose tool asks for input, the `--answer` it is given, and what its stdout holds.
    elicit: (&'static [&'static str], &'static str, &'static str),
    /// A call that reports progress, and its last progress line (on stderr).
    progress: (&'static [&'static str], &'static str),
    /// A resource's URI and how its text starts.
    resource: (&'static str, &'static str),
    /// A resource template, a URI it makes, and how that resource's text starts.
    template: (&'static str, &'static str, &'static str),
    /// A prompt, its arguments, and a line of `prompts get`.
    prompt: (&'static str, &'static [&'static str], &'static str),
    /// A completion's arguments and the values it prints; `None`: the server offers none.
    completion: Option<(&'static [&'static str], &'static str)>,
    /// Whether it offers logging (logging/setLevel).
    logging: bool,
}

const DEMO: Profile = Profile {
    name: "mcpwire-demo",
    tools: &["echo", "add", "slow", "ask", "survey", "fail", "big"],
    detail: ("add", "  a  number  required"),
    call: (&["add", "a=2", "b=40"], "42\n"),
    failing: Some((&["fail"], "this tool always fails")),
    elicit: (&["ask"], r#"{"name":"Ada"}"#, "hello, Ada\n"),
    progress: (&["slow", "steps=2", "interval_ms=10"], "progress 2/2"),
    resource: ("demo://readme", "mcpwire demo server"),
    template: ("demo://echo/{text}", "demo://echo/hi", "hi"),
    prompt: ("greet", &["name=Ada"], "user: Say hello to Ada."),
    completion: Some((&["--prompt", "greet", "name=a"], "Ada\nAlan\n")),
    logging: true,
};

const EVERYTHING: Profile = Profile {
    name: "mcp-servers/everything",
    tools: &["echo", "get-sum", "trigger-long-running-operation"],
    detail: ("echo", "  message  string  required  Message to echo"),
    call: (&["echo", "message=hello"], "Echo: hello\n"),
    failing: None,
    elicit: (
        &["trigger-elicitation-request"],
        r#"{"name":"Ann"}"#,
        "- Name: Ann",
    ),
    progress: (
        &["trigger-long-running-operation", "duration=1", "steps=2"],
        "progress 2/2",
    ),
    resource: (
        "demo://resource/static/document/features.md",
        "# Everything Server - Features",
    ),
    template: (
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/text/1",
        "Resource 1: This is a plaintext resource",
    ),
    prompt: (
        "args-prompt",
        &["city=Paris"],
        "user: What's weather in Paris?",
    ),
    completion: Some((
        &["--prompt", "completable-prompt", "department=E"],
        "Engineering\n",
    )),
    logging: true,
};

const PYTHON: Profile = Profile {
    name: "mcpwire-py-server",
    tools: &["add", "greet", "ask_name", "two_questions", "slow", "fail"],
    detail: ("add", "  a  integer  required"),
    call: (&["add", "a=2", "b=40"], "42\n"),
    failing: Some((&["fail", "message=broken"], "broken")),
    elicit: (&["greet"], r#"{"name":"Ada"}"#, "Hello, Ada!\n"),
    progress: (&["slow", "steps=2", "delay=0.05"], "progress 2/2"),
    resource: ("py://readme", "mcpwire Python test peer."),
    template: ("py://echo/{text}", "py://echo/hi", "hi"),
    prompt: ("greeting", &["name=Ada"], "user: Please greet Ada."),
    completion: None,
    logging: false,
};

#[derive(Clone, Copy, PartialEq)]
enum Era {
    Stateless,
    Handshake,
}

impl Era {
    fn name(self) -> &'static str {
        match self {
            Era::Stateless => "stateless",
            Era::Handshake => "handshake",
        }
    }
    fn version(self) -> &'static str {
        match self {
            Era::Stateless => "2026-07-28",
            Era::Handshake => "2025-11-25",
        }
    }
}

/// Every server command once in one era: `--era auto` when it is the era the server is
/// detected to speak (`detected`), else `--era` pinned. With `forms`, the other output form of
/// some commands (text or `--json`) runs too.
fn commands(p: &Profile, era: Era, detected: bool, forms: bool, transport: &str) -> Vec<Step> {
    let words = |head: &[&str], tail: &[&str]| -> Vec<String> {
        head.iter().chain(tail).map(|s| s.to_string()).collect()
    };
    let json = |mut words: Vec<String>| {
        words.push("--json".into());
        words
    };
    let mut steps = Vec::new();
    let (name, transport_name) = (p.name, transport.to_owned());
    steps.push(step(&["info", "--json"]).json(move |v| {
        field(v, "/era", era.name())?;
        field(v, "/transport", &transport_name)?;
        field(v, "/protocolVersion", era.version())?;
        field(v, "/serverInfo/name", name)
    }));
    let mut tools = step(&["tools"]).line_starts("NAME ");
    for t in p.tools {
        tools = tools.line_starts(&format!("{t} "));
    }
    steps.push(tools);
    steps.push(
        step(&["tools", p.detail.0])
            .line_starts(p.detail.0)
            .line_starts(p.detail.1),
    );
    steps.push(step(&words(&["call"], p.call.0)).out_is(p.call.1));
    if let Some((args, text)) = p.failing {
        let wanted = text.to_owned();
        steps.push(step(&json(words(&["call"], args))).code(1).json(move |v| {
            let got = v.pointer("/content/0/text").and_then(Value::as_str);
            match (v.get("isError"), got) {
                (Some(Value::Bool(true)), Some(t)) if t.contains(&wanted) => Ok(()),
                _ => Err(format!("not an isError result saying {wanted:?}")),
            }
        }));
    }
    // A tool the server does not list: refused before any call, naming the tools it lists.
    steps.push(
        step(&["call", "no-such-tool"])
            .code(2)
            .err_has("no tool named no-such-tool")
            .err_has(p.tools[0]),
    );
    let mut elicit = words(&["call"], p.elicit.0);
    elicit.extend(["--answer".to_owned(), p.elicit.1.to_owned()]);
    steps.push(step(&elicit).out_has(p.elicit.2));
    steps.push(step(&words(&["call"], p.progress.0)).err_has(p.progress.1));
    steps.push(step(&["resources"]).line_starts(&format!("{} ", p.resource.0)));
    steps.push(step(&["resources", "read", p.resource.0]).line_starts(p.resource.1));
    let template = p.template.0.to_owned();
    steps.push(step(&["resources", "templates", "--json"]).json(move |v| {
        let listed = v
            .as_array()
            .is_some_and(|l| l.iter().any(|t| t["uriTemplate"] == template.as_str()));
        listed
            .then_some(())
            .ok_or_else(|| format!("{template} is not listed"))
    }));
    let start = p.template.2.to_owned();
    steps.push(
        step(&["resources", "read", p.template.1, "--json"]).json(move |v| {
            match v.pointer("/contents/0/text").and_then(Value::as_str) {
                Some(t) if t.starts_with(&start) => Ok(()),
                got => Err(format!("contents[0].text is {got:?}, expected {start:?}…")),
            }
        }),
    );
    steps.push(step(&["prompts"]).line_starts(&format!("{} ", p.prompt.0)));
    let prompt = words(&["prompts", "get", p.prompt.0], p.prompt.1);
    steps.push(step(&prompt).line_starts(p.prompt.2));
    steps.push(match era {
        Era::Stateless => step(&["ping"])
            .code(2)
            .err_has("ping does not exist in the stateless era"),
        Era::Handshake => step(&["ping"]).line_starts("pong in "),
    });
    steps.push(match p.completion {
        Some((args, values)) => step(&words(&["complete"], args)).out_is(values),
        None => step(&["complete", "--prompt", p.prompt.0, "name=A"])
            .code(4)
            .err_has("the server does not offer completions"),
    });
    steps.push(match (era, p.logging) {
        // The stateless era has no logging/setLevel: each request asks with its _meta.
        (Era::Stateless, true) => step(&["log-level", "debug"]).out_is(
            "log level debug asked for by each request of this connection (the stateless era \
             has no logging/setLevel)\n",
        ),
        (Era::Handshake, true) => step(&["log-level", "debug"]).out_is("log level set to debug\n"),
        (_, false) => step(&["log-level", "debug"])
            .code(4)
            .err_has("the server does not offer logging"),
    });
    steps.push(match era {
        // In the stateless era watch listens with subscriptions/listen and says for what.
        Era::Stateless => step(&["watch", "--for", "1"]).err_has("listening for"),
        Era::Handshake => step(&["watch", "--for", "1"]),
    });
    if forms {
        // The other output forms.
        steps.push(
            step(&["info"])
                .line_starts(&format!("era:          {}", era.name()))
                .line_starts(&format!("server:       {}", p.name)),
        );
        let wanted: Vec<String> = p.tools.iter().map(|t| t.to_string()).collect();
        steps.push(step(&["tools", "--json"]).json(move |v| {
            let names: Vec<&str> = v
                .as_array()
                .ok_or("not a list")?
                .iter()
                .filter_map(|t| t["name"].as_str())
                .collect();
            match wanted.iter().all(|w| names.contains(&w.as_str())) {
                true => Ok(()),
                false => Err(format!("tools {names:?} lack some of {wanted:?}")),
            }
        }));
        let text = p.call.1.trim_end().to_owned();
        steps.push(step(&json(words(&["call"], p.call.0))).json(move |v| {
            field(v, "/content/0/text", &text)?;
            match v.get("isError") {
                None | Some(Value::Bool(false)) => Ok(()),
                Some(other) => Err(format!("isError is {other}")),
            }
        }));
        if let Some((args, text)) = p.failing {
            steps.push(step(&words(&["call"], args)).code(1).out_has(text));
        }
        let uri = p.resource.0.to_owned();
        steps.push(step(&["resources", "--json"]).json(move |v| {
            let listed = v
                .as_array()
                .is_some_and(|l| l.iter().any(|r| r["uri"] == uri.as_str()));
            listed
                .then_some(())
                .ok_or_else(|| format!("{uri} is not listed"))
        }));
        steps.push(step(&["resources", "templates"]).line_starts(&format!("{} ", p.template.0)));
        let message = p.prompt.2.split_once(": ").unwrap().1.to_owned();
        steps.push(step(&json(prompt)).json(move |v| {
            field(v, "/messages/0/role", "user")?;
            field(v, "/messages/0/content/text", &message)
        }));
    }
    let era_flag = if detected { "auto" } else { era.name() };
    for s in &mut steps {
        let mut args = vec!["--era".to_owned(), era_flag.to_owned()];
        args.append(&mut s.args);
        s.args = args;
    }
    steps
}

/// The steps for a server that speaks `eras` (the first is the one it is detected to speak).
/// With `forms`, the other output forms run too, in the detected era (they depend on neither
/// the transport nor the era: one run per server has them).
fn matrix(p: &Profile, eras: &[Era], transport: &str, forms: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    for (i, era) in eras.iter().enumerate() {
        steps.extend(commands(p, *era, i == 0, forms && i == 0, transport));
    }
    if eras.contains(&Era::Stateless) {
        steps.push(step(&["--era", "stateless", "info"]).line_starts("era:          stateless"));
    } else {
        // Pinned to an era the server does not speak: a clear refusal, exit 3.
        steps.push(
            step(&["--era", "stateless", "info"])
                .code(3)
                .err_has("this server does not speak 2026-07-28; try --era auto"),
        );
    }
    steps
}

/// Runs every step against `server` (its `--stdio`/`--http` arguments), a few at a time, and
/// fails with every failing step listed.
fn run(label: &str, server: &[String], steps: Vec<Step>) {
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let workers = 4;
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(step) = steps.get(i) else { break };
                let o = Command::new(BIN)
                    .args(server)
                    // The era probe gets a third of it: 20 s, for a cold Python start on a
                    // loaded machine (a probe unanswered in time means a handshake-era server).
                    .args(["--timeout", "60"])
                    .args(&step.args)
                    .stdin(Stdio::null())
                    .output()
                    .expect("the binary runs");
                if let Err(why) = step.verdict(&o) {
                    let line = step.args.join(" ");
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("mcpwire … {line}: {why}"));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "{label}: {} commands in {:.1} s",
        steps.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {} commands failed against {label}:\n\n{}",
        failures.len(),
        steps.len(),
        failures.join("\n\n")
    );
}

fn stdio(command: String) -> Vec<String> {
    vec!["--stdio".into(), command]
}

fn http(url: &str) -> Vec<String> {
    vec!["--http".into(), url.into()]
}

/// Both eras, the stateless one first.
const BOTH_ERAS: &[Era] = &[Era::Stateless, Era::Handshake];
/// The handshake era only.
const HANDSHAKE_ERA: &[Era] = &[Era::Handshake];
/// The transport `info` names for the 2024-11-05 HTTP+SSE transport.
const HTTP_SSE: &str = "sse (2024-11-05 HTTP+SSE)";

#[test]
fn demo_over_stdio() {
    let server = stdio(format!("{BIN} serve-demo"));
    let steps = matrix(&DEMO, BOTH_ERAS, "stdio", true);
    run("the demo server over stdio", &server, steps);
}

#[test]
fn demo_handshake_only_over_stdio() {
    let server = stdio(format!("{BIN} serve-demo --handshake-only"));
    let steps = matrix(&DEMO, HANDSHAKE_ERA, "stdio", false);
    run("serve-demo --handshake-only over stdio", &server, steps);
}

#[test]
fn everything_over_stdio() {
    if skipped("everything_over_stdio") {
        return;
    }
    let server = stdio(everything_stdio());
    let steps = matrix(&EVERYTHING, HANDSHAKE_ERA, "stdio", false);
    run("server-everything over stdio", &server, steps);
}

#[test]
fn everything_over_http() {
    if skipped("everything_over_http") {
        return;
    }
    let peer = everything_http("streamableHttp");
    let steps = matrix(&EVERYTHING, HANDSHAKE_ERA, "streamable-http", true);
    run(
        "server-everything over Streamable HTTP",
        &http(peer.url()),
        steps,
    );
}

#[test]
fn python_over_stdio() {
    if skipped("python_over_stdio") {
        return;
    }
    let server = stdio(format!(
        "{} {} stdio",
        python().display(),
        peers().join("py_server.py").display()
    ));
    let steps = matrix(&PYTHON, BOTH_ERAS, "stdio", false);
    run("the Python server over stdio", &server, steps);
}

#[test]
fn python_over_http() {
    if skipped("python_over_http") {
        return;
    }
    let peer = python_http("http");
    let steps = matrix(&PYTHON, BOTH_ERAS, "streamable-http", true);
    run(
        "the Python server over Streamable HTTP",
        &http(peer.url()),
        steps,
    );
}

#[test]
fn everything_over_http_sse() {
    if skipped("everything_over_http_sse") {
        return;
    }
    let peer = everything_http("sse");
    let steps = matrix(&EVERYTHING, HANDSHAKE_ERA, HTTP_SSE, false);
    run("server-everything over HTTP+SSE", &http(peer.url()), steps);
}

#[test]
fn python_over_http_sse() {
    if skipped("python_over_http_sse") {
        return;
    }
    let peer = python_http("sse");
    let steps = matrix(&PYTHON, HANDSHAKE_ERA, HTTP_SSE, false);
    run("the Python server over HTTP+SSE", &http(peer.url()), steps);
}
