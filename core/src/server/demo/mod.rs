//! The demo server: a small MCP server on the same engine, built into the `mcpwire` binary and
//! used by tests as a peer that does exactly what it is told.
//!
//! Tools: `echo` (returns its message), `add` (a + b, with structured output), `slow` (steps with
//! progress, and log messages once the client set a level with `logging/setLevel`; honours
//! cancellation), `ask` (asks the client a question through an elicitation), `ask-task` (the
//! same, as a task the client runs: 2025-11-25), `fail` (an `isError` result), `big` (a text
//! payload of N MiB). One prompt (`greet`), one
//! resource (`demo://readme`) and one resource template (`demo://echo/{text}`), with completion
//! of their arguments. One skill (`skill://demo-guide/SKILL.md`, SEP-2640).
//!
//! The request handling is kept apart from the handshake so the stateless era can reuse it.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};

use crate::codec::jsonl::{self, JsonlDecoder};
use crate::jsonrpc::for_each_message;
use crate::jsonrpc::{codes, ErrorObject, Id, Message, RawJson, Request};
use crate::rpc::{Engine, Limits, Origin, Output, Reply, RequestOptions};
use crate::types::LOG_LEVELS;
use crate::types::{is_handshake_version, LATEST_HANDSHAKE_VERSION};

/// Settings of the demo server.
#[derive(Debug, Clone)]
pub struct DemoConfig {
    /// How many tools one `tools/list` page holds (`usize::MAX`: one page).
    pub page_size: usize,
    /// The request engine's caps.
    pub engine: Limits,
    /// How long the server waits for the client's answer to an elicitation (and, with
    /// `host_requests`, to a sampling or a roots request).
    pub elicitation_timeout: Duration,
    /// Speak only the handshake era: a stateless-era request (the `server/discover` probe
    /// included) is answered `-32601`, as servers that predate 2026-07-28 answer it, so a
    /// client's era detection falls back to `initialize`.
    pub handshake_only: bool,
    /// How many generated tools to list after the demo's own: `tool-0`, `tool-1`, …, each
    /// returning its `message` (for measuring hosts with many tools).
    pub extra_tools: usize,
    /// Also offer `sample` and `roots`, which ask the client's host (sampling, roots) and tell
    /// what it answered (for tests of a client's handlers).
    pub host_requests: bool,
}

impl Default for DemoConfig {
    fn default() -> Self {
        DemoConfig {
            page_size: usize::MAX,
            engine: Limits::default(),
            elicitation_timeout: Duration::from_secs(300),
            handshake_only: false,
            extra_tools: 0,
            host_requests: false,
        }
    }
}

/// One `slow` call in progress.
#[derive(Debug)]
struct SlowTask {
    next: Instant,
    step: u64,
    steps: u64,
    interval: Duration,
    token: Option<Value>,
    /// The least severe level logged for it: in the stateless era the call's own
    /// (`io.modelcontextprotocol/logLevel`), in the handshake era the session's.
    log_level: Option<usize>,
}

/// Where one `ask-task` call stands: which request of ours is in flight for it.
#[derive(Debug)]
struct AskTask {
    /// The `tools/call` to answer.
    call: Id,
    /// The client's task, once it made one.
    task: Option<String>,
    step: Step,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// The elicitation, answered with the task.
    Create,
    /// `tasks/get`.
    Look,
    /// `tasks/result`; the status the look saw.
    Fetch(String),
}

/// Whether the client declared that it runs elicitations as tasks.
fn declared(capabilities: &Value) -> bool {
    capabilities
        .pointer("/tasks/requests/elicitation/create")
        .is_some()
}

mod ask_task;
mod catalog;
mod host_requests;
mod modern;
mod rounds;
mod task_requests;
mod tasks;
mod trace_echo;
mod words;

use catalog::host_request_tools;
pub use catalog::tools;
use words::{
    ask_answer, generated_tool, invalid, meta_pointer, name_question, raw, text_result, GENERATED,
    INSTRUCTIONS, META_LOG_LEVEL, META_SUBSCRIPTION, META_VERSION,
};

/// The demo server's protocol state.
#[derive(Debug)]
pub struct DemoServer {
    config: DemoConfig,
    engine: Engine,
    initialized: Option<String>,
    slow: HashMap<Id, SlowTask>,
    /// Our elicitation requests, by our id, with the `ask` call waiting for each.
    asks: HashMap<i64, Id>,
    /// Our sampling and roots requests, by our id, with the call waiting for each.
    host_asks: HashMap<i64, Id>,
    /// The tasks of the task tools.
    tasks: tasks::DemoTasks,
    /// `tasks/result` requests waiting for their task to end (2025-11-25).
    task_results: Vec<(Id, String)>,
    /// Our approval elicitations (2025-11-25), by our id, with their task.
    task_asks: HashMap<i64, String>,
    /// The `ask-task` calls, by the id of our request in flight for each.
    ask_tasks: HashMap<i64, AskTask>,
    /// Whether the client declared that it runs elicitations as tasks (2025-11-25).
    client_runs_elicitation_tasks: bool,
    /// Open `subscriptions/listen` requests (stateless era), with what each asked for.
    listens: Vec<(Id, Value)>,
    /// The resources the client subscribed to with `resources/subscribe` (handshake era).
    subscribed: std::collections::HashSet<String>,
    /// The least severe log level the client asked for (an index in [`LOG_LEVELS`]); no log
    /// messages until it asks.
    log_level: Option<usize>,
    transmit: VecDeque<Message>,
    /// The `traceparent` each request carried, until it is answered (see `trace_echo`).
    traces: HashMap<Id, Value>,
    /// Lines from the client, for the byte-level face.
    stdin: JsonlDecoder,
}

impl DemoServer {
    /// A server waiting for `initialize`.
    pub fn new(config: DemoConfig) -> Self {
        DemoServer {
            engine: Engine::new(config.engine.clone()),
            config,
            initialized: None,
            slow: HashMap::new(),
            asks: HashMap::new(),
            host_asks: HashMap::new(),
            tasks: Default::default(),
            task_results: Vec::new(),
            task_asks: HashMap::new(),
            ask_tasks: HashMap::new(),
            client_runs_elicitation_tasks: false,
            listens: Vec::new(),
            subscribed: Default::default(),
            log_level: None,
            transmit: VecDeque::new(),
            traces: HashMap::new(),
            stdin: JsonlDecoder::new(),
        }
    }

    /// Bytes from the client (the server's stdin): JSONL, split anywhere. Lines that are not
    /// messages are noise, never answered.
    pub fn handle_stdin(&mut self, now: Instant, bytes: &[u8]) {
        self.stdin.push(bytes);
        let mut messages = Vec::new();
        while let Some(item) = self.stdin.next_message() {
            if let Ok(parsed) = item {
                for_each_message(parsed, |m| messages.push(m), |_| {});
            }
        }
        for m in messages {
            self.handle_message(now, m);
        }
    }

    /// The client closed the server's stdin: the connection is over.
    pub fn handle_stdin_eof(&mut self, now: Instant) {
        self.close(now);
    }

    /// Bytes to write to the client (the server's stdout): every message queued,
    /// JSONL-encoded, in one buffer; `None` when nothing is queued. The drive rule of
    /// [`Connection`](crate::Connection) holds here too: drain after every input.
    pub fn poll_output(&mut self) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(m) = self.poll_transmit() {
            jsonl::encode(&m, &mut out);
        }
        (!out.is_empty()).then_some(out)
    }

    /// The version negotiated in the handshake, once it happened.
    pub fn protocol_version(&self) -> Option<&str> {
        self.initialized.as_deref()
    }

    /// How many `slow`, `ask` and `ask-task` calls are running.
    pub fn running_tasks(&self) -> usize {
        self.slow.len() + self.asks.len() + self.ask_tasks.len()
    }

    /// A message from the client (the message-level face, for in-memory pairings; see
    /// [`handle_stdin`](Self::handle_stdin) for bytes).
    pub fn handle_message(&mut self, now: Instant, message: Message) {
        self.engine.handle_message(now, message);
        self.pump(now);
    }

    /// Sends a ping to the client; its answer is not reported.
    pub fn ping(&mut self, now: Instant) {
        let opts = RequestOptions::new().origin(Origin::PROTOCOL);
        let _ = self.engine.request(now, "ping", None, opts);
        self.pump(now);
    }

    /// Sends a notification to the client (for example a `list_changed`): as it is to a
    /// handshake-era client, and tagged to each stateless-era subscription that asked for it.
    /// `notifications/resources/updated` goes only where its `uri` was subscribed to.
    pub fn notify(&mut self, now: Instant, method: &str, params: Option<Value>) {
        let updated = (method == "notifications/resources/updated").then(|| {
            let uri = params.as_ref().and_then(|p| p.get("uri"));
            uri.and_then(Value::as_str).unwrap_or_default().to_owned()
        });
        let subscribed = updated.as_ref().is_none_or(|u| self.subscribed.contains(u));
        if self.initialized.is_some() && subscribed {
            let plain = params.as_ref().map(raw);
            let _ = self.engine.notify(now, method, plain);
        }
        let wanted = match method {
            "notifications/tools/list_changed" => Some("toolsListChanged"),
            "notifications/prompts/list_changed" => Some("promptsListChanged"),
            "notifications/resources/list_changed" => Some("resourcesListChanged"),
            _ => None,
        };
        let asked = |filter: &Value| match (&updated, wanted) {
            (Some(uri), _) => filter
                .get("resourceSubscriptions")
                .and_then(Value::as_array)
                .is_some_and(|uris| uris.iter().any(|u| u.as_str() == Some(uri.as_str()))),
            (None, Some(w)) => filter.get(w) == Some(&Value::Bool(true)),
            (None, None) => false,
        };
        for (id, filter) in &self.listens {
            if asked(filter) {
                let mut p = params.clone().unwrap_or(json!({}));
                p["_meta"] = json!({ META_SUBSCRIPTION: id });
                let _ = self.engine.notify(now, method, Some(raw(&p)));
            }
        }
        self.pump(now);
    }

    /// Ends every open subscription gracefully (a success response to each listen request).
    pub fn end_subscriptions(&mut self, now: Instant) {
        for (id, _) in std::mem::take(&mut self.listens) {
            let result = json!({"resultType": "complete", "_meta": { META_SUBSCRIPTION: id }});
            let _ = self.engine.respond(now, &id, Ok(raw(&result)));
        }
        self.pump(now);
    }

    /// How many subscriptions are open.
    pub fn subscriptions(&self) -> usize {
        self.listens.len()
    }

    /// The connection ended.
    pub fn close(&mut self, now: Instant) {
        self.engine.close(now, "client went away");
        self.slow.clear();
        self.asks.clear();
        self.ask_tasks.clear();
        self.pump(now);
    }

    /// The next message for the client (the message-level face; see
    /// [`poll_output`](Self::poll_output) for bytes).
    pub fn poll_transmit(&mut self) -> Option<Message> {
        loop {
            let mut m = self.transmit.pop_front()?;
            self.echo_trace(&mut m);
            // A request of ours goes only while it is pending (it may have ended while queued).
            if let Message::Request(r) = &m {
                if !r.id.as_i64().is_some_and(|id| self.engine.leave(id)) {
                    continue;
                }
            }
            return Some(m);
        }
    }

    /// The earliest deadline: a `slow` step or an engine timer.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let slow = self.slow.values().map(|t| t.next).min();
        [slow, self.engine.poll_timeout(), self.tasks.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Runs what is due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.engine.handle_timeout(now);
        let due: Vec<Id> = self
            .slow
            .iter()
            .filter(|(_, t)| t.next <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in due {
            self.slow_step(now, id);
        }
        self.tasks_due(now);
        self.pump(now);
    }

    fn slow_step(&mut self, now: Instant, id: Id) {
        let Some(task) = self.slow.get_mut(&id) else {
            return;
        };
        task.step += 1;
        task.next = now + task.interval;
        let (step, steps, token) = (task.step, task.steps, task.token.clone());
        let interval = task.interval.as_millis();
        let level = task.log_level;
        self.log(
            now,
            level,
            "debug",
            &format!("step {step}, next in {interval} ms"),
        );
        self.log(now, level, "info", &format!("step {step} of {steps} done"));
        if let Some(token) = token {
            let params = json!({"progressToken": token, "progress": step, "total": steps,
                                "message": format!("step {step} of {steps}")});
            let _ = self
                .engine
                .notify(now, "notifications/progress", Some(raw(&params)));
        }
        if step >= steps {
            self.slow.remove(&id);
            let result = text_result(&format!("done after {steps} steps"), false);
            let _ = self.engine.respond(now, &id, Ok(result));
        }
    }

    /// Sends a log message at `level`, if `min` (the level the client asked for) is that level
    /// or a lower one.
    fn log(&mut self, now: Instant, min: Option<usize>, level: &str, text: &str) {
        let rank = LOG_LEVELS.iter().position(|l| *l == level);
        if rank.is_some_and(|r| min.is_some_and(|min| r >= min)) {
            let params = json!({"level": level, "logger": "demo", "data": text});
            let _ = self
                .engine
                .notify(now, "notifications/message", Some(raw(&params)));
        }
    }

    fn pump(&mut self, now: Instant) {
        while let Some(out) = self.engine.poll_output() {
            match out {
                Output::Send(m) => self.transmit.push_back(m),
                // Nothing of ours waits to be withdrawn: messages go as soon as they are taken.
                Output::Withdraw { .. } => {}
                Output::InboundRequest(r) => self.request(now, r),
                Output::InboundCancelled { id, .. } => {
                    self.ask_task_cancelled(now, &id);
                    self.slow.remove(&id);
                    self.forget_task_result(&id);
                    self.listens.retain(|(l, _)| *l != id);
                    self.asks.retain(|_, waiting| *waiting != id);
                    self.host_asks.retain(|_, waiting| *waiting != id);
                }
                Output::Completed {
                    id,
                    outcome,
                    method,
                    ..
                } => {
                    if self.host_answered(now, id, &method, &outcome) {
                        // A `sample` or `roots` call was answered.
                    } else if self.ask_task_step(now, id, &outcome) {
                        // The call went on to its next step, or was answered.
                    } else if self.task_asked(now, id, &outcome) {
                        self.tasks_due(now);
                    } else if let Some(call) = self.asks.remove(&id) {
                        let result = match outcome {
                            Ok(Reply::Result(r)) => ask_answer(&r),
                            Ok(Reply::Error(e)) => {
                                text_result(&format!("the client refused: {e}"), true)
                            }
                            Err(e) => text_result(&format!("no answer: {e}"), true),
                        };
                        let _ = self.engine.respond(now, &call, Ok(result));
                    }
                }
                Output::Progress { .. } | Output::Diagnostic(_) | Output::Closed(_) => {}
            }
        }
        // The demo server reads no notifications of the client's beyond cancellation.
        while self.engine.poll_notification().is_some() {}
    }

    fn request(&mut self, now: Instant, r: Request) {
        let params: Value = r.params_as().unwrap_or(Value::Null);
        self.hold_trace(&r.id, &params);
        if let Some(version) = params.pointer(&meta_pointer(META_VERSION)) {
            if self.config.handshake_only {
                let error = ErrorObject::new(codes::METHOD_NOT_FOUND, "Method not found");
                let _ = self.engine.respond(now, &r.id, Err(error));
                return;
            }
            return self.modern_request(now, &r, &params, version.clone());
        }
        let answer = match r.method.as_ref() {
            "initialize" => Ok(self.initialize(&r)),
            "ping" => Ok(raw(&json!({}))),
            _ if self.initialized.is_none() => Err(ErrorObject::new(
                codes::INVALID_REQUEST,
                "server not initialized",
            )),
            _ => match self.serve(now, &r) {
                Some(answer) => answer,
                None => return,
            },
        };
        let _ = self.engine.respond(now, &r.id, answer);
    }

    pub(super) fn capabilities() -> Value {
        json!({"tools": {"listChanged": true}, "prompts": {}, "resources": {"subscribe": true}, "logging": {},
               "completions": {},
               "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
               "extensions": {crate::skills::SKILLS_EXTENSION: {},
                              crate::types::TASKS_EXTENSION: {},
                              super::apps::extension().0: super::apps::extension().1}})
    }

    fn server_info() -> Value {
        json!({"name": "mcpwire-demo", "version": env!("CARGO_PKG_VERSION")})
    }

    fn initialize(&mut self, r: &Request) -> RawJson {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct P {
            #[serde(default)]
            protocol_version: String,
            #[serde(default)]
            capabilities: Value,
        }
        let (asked, capabilities) = r
            .params_as::<P>()
            .map(|p| (p.protocol_version, p.capabilities))
            .unwrap_or_default();
        self.client_runs_elicitation_tasks = declared(&capabilities);
        let version = if is_handshake_version(&asked) {
            asked
        } else {
            LATEST_HANDSHAKE_VERSION.to_owned()
        };
        self.initialized = Some(version.clone());
        raw(&json!({
            "protocolVersion": version,
            "capabilities": Self::capabilities(),
            "serverInfo": Self::server_info(),
            "instructions": INSTRUCTIONS
        }))
    }

    /// Serves one request; `None` when the answer comes later.
    fn serve(&mut self, now: Instant, r: &Request) -> Option<Result<RawJson, ErrorObject>> {
        let params: Value = r.params_as().unwrap_or(Value::Null);
        if self.initialized.is_some() {
            if let Some(answer) = self.handshake_tasks(now, r, &params) {
                return answer;
            }
        }
        Some(match r.method.as_ref() {
            "tools/list" => self.list_tools(&params),
            "tools/call" => return self.call_tool(now, r, &params),
            "prompts/list" => Ok(raw(&json!({"prompts": [
                {"name": "greet", "description": "A greeting.", "arguments": [{"name": "name", "required": true}]}
            ]}))),
            "prompts/get" => {
                let name = params.pointer("/arguments/name").and_then(Value::as_str);
                match (params.get("name").and_then(Value::as_str), name) {
                    (Some("greet"), Some(who)) => Ok(raw(&json!({"messages": [
                        {"role": "user", "content": {"type": "text", "text": format!("Say hello to {who}.")}}
                    ]}))),
                    (Some("greet"), None) => Err(invalid("prompt greet needs the argument name")),
                    _ => Err(invalid("unknown prompt")),
                }
            }
            "resources/list" => {
                let mut all = vec![json!(
                    {"uri": "demo://readme", "name": "readme", "mimeType": "text/plain"}
                )];
                all.extend(super::apps::resources());
                Ok(raw(&json!({"resources": all})))
            }
            "resources/templates/list" => Ok(raw(&json!({"resourceTemplates": [
                {"uriTemplate": "demo://echo/{text}", "name": "echo"}
            ]}))),
            "skills/list" => Ok(raw(&super::skills::list())),
            "skills/get" => super::skills::get(&params).map(|r| raw(&r)),
            "resources/subscribe" | "resources/unsubscribe" if self.initialized.is_some() => {
                match params.get("uri").and_then(Value::as_str) {
                    Some(uri) if r.method == "resources/subscribe" => {
                        self.subscribed.insert(uri.to_owned());
                        Ok(raw(&json!({})))
                    }
                    Some(uri) => {
                        self.subscribed.remove(uri);
                        Ok(raw(&json!({})))
                    }
                    None => Err(invalid("a subscription needs a uri")),
                }
            }
            "resources/read" => match params.get("uri").and_then(Value::as_str) {
                Some(uri) if uri.starts_with("skill://") || uri.starts_with("ui://") => {
                    let read = super::skills::read(uri).or_else(|| super::apps::read(uri));
                    read.map(|r| raw(&r))
                        .ok_or_else(|| ErrorObject::new(-32002, "resource not found"))
                }
                Some("demo://readme") => Ok(raw(&json!({"contents": [
                    {"uri": "demo://readme", "mimeType": "text/plain", "text": "mcpwire demo server"}
                ]}))),
                Some(uri) if uri.starts_with("demo://echo/") => Ok(raw(&json!({"contents": [
                    {"uri": uri, "mimeType": "text/plain", "text": &uri["demo://echo/".len()..]}
                ]}))),
                _ => Err(ErrorObject::new(-32002, "resource not found")),
            },
            "completion/complete" => super::complete::complete(&params)
                .map(|r| raw(&r))
                .map_err(invalid),
            "logging/setLevel" => {
                let level = params.get("level").and_then(Value::as_str);
                match LOG_LEVELS.iter().position(|l| Some(*l) == level) {
                    Some(rank) => {
                        self.log_level = Some(rank);
                        Ok(raw(&json!({})))
                    }
                    None => Err(invalid(
                        "logging/setLevel needs a level, debug to emergency",
                    )),
                }
            }
            other => Err(ErrorObject::new(
                codes::METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            )),
        })
    }

    fn list_tools(&self, params: &Value) -> Result<RawJson, ErrorObject> {
        let mut all = tools();
        let all = all.as_array_mut().expect("a list");
        if self.config.host_requests {
            all.extend(host_request_tools().as_array().expect("a list").clone());
        }
        all.extend((0..self.config.extra_tools).map(generated_tool));
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(c)) => c
                .strip_prefix("page-")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n <= all.len())
                .ok_or_else(|| invalid("invalid cursor"))?,
            Some(_) => return Err(invalid("invalid cursor")),
        };
        let end = start.saturating_add(self.config.page_size).min(all.len());
        let mut result = json!({"tools": &all[start..end]});
        if end < all.len() {
            result["nextCursor"] = json!(format!("page-{end}"));
        }
        Ok(raw(&result))
    }

    fn call_tool(
        &mut self,
        now: Instant,
        r: &Request,
        params: &Value,
    ) -> Option<Result<RawJson, ErrorObject>> {
        let args = params.get("arguments").cloned().unwrap_or(json!({}));
        let int = |k: &str, d: u64| args.get(k).and_then(Value::as_u64).unwrap_or(d);
        let token = params.pointer("/_meta/progressToken").cloned();
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(answer) = super::apps::call_tool(name, &args) {
            return Some(answer.map(|r| raw(&r)));
        }
        let generated = name
            .strip_prefix(GENERATED)
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|n| n < self.config.extra_tools);
        if generated {
            return Some(match args.get("message").and_then(Value::as_str) {
                Some(m) => Ok(text_result(m, false)),
                None => Err(invalid("a generated tool needs a string message")),
            });
        }
        Some(match params.get("name").and_then(Value::as_str) {
            Some("echo") => match args.get("message").and_then(Value::as_str) {
                Some(m) => Ok(text_result(m, false)),
                None => Err(invalid("echo needs a string message")),
            },
            Some("add") => match (
                args.get("a").and_then(Value::as_f64),
                args.get("b").and_then(Value::as_f64),
            ) {
                (Some(a), Some(b)) => {
                    let sum = a + b;
                    let sum = if sum.fract() == 0.0 && sum.abs() < 9e15 {
                        json!(sum as i64)
                    } else {
                        json!(sum)
                    };
                    Ok(raw(&json!({
                        "content": [{"type": "text", "text": sum.to_string()}],
                        "structuredContent": {"sum": sum}
                    })))
                }
                _ => Err(invalid("add needs numbers a and b")),
            },
            Some("slow") => {
                let steps = int("steps", 5).clamp(1, 10_000);
                let interval = Duration::from_millis(int("interval_ms", 100).min(60_000));
                // A stateless-era call asks for its own log messages; a session's calls share
                // the level set with logging/setLevel.
                let log_level = match params.pointer(&meta_pointer(META_VERSION)) {
                    Some(_) => params
                        .pointer(&meta_pointer(META_LOG_LEVEL))
                        .and_then(Value::as_str)
                        .and_then(|l| LOG_LEVELS.iter().position(|k| *k == l)),
                    None => self.log_level,
                };
                self.slow.insert(
                    r.id.clone(),
                    SlowTask {
                        next: now + interval,
                        step: 0,
                        steps,
                        interval,
                        token,
                        log_level,
                    },
                );
                return None;
            }
            Some("ask") => {
                let params = name_question(&args);
                let opts = RequestOptions::new()
                    .timeout(self.config.elicitation_timeout)
                    .origin(Origin::PROTOCOL);
                match self
                    .engine
                    .request(now, "elicitation/create", Some(raw(&params)), opts)
                {
                    Ok(id) => {
                        self.asks.insert(id, r.id.clone());
                        return None;
                    }
                    Err(e) => Ok(text_result(&format!("cannot ask: {e}"), true)),
                }
            }
            Some("ask-task") => return self.ask_task(now, &r.id, &args).map(Ok),
            Some(tool @ ("sample" | "roots")) if self.config.host_requests => {
                return self.ask_host(now, &r.id, tool, &args)
            }
            Some("survey") => Ok(text_result(
                "survey asks its questions in the stateless era only",
                true,
            )),
            Some("fail") => Ok(text_result("this tool always fails", true)),
            Some("big") => {
                let mib = int("mib", 1).min(256) as usize;
                Ok(text_result(&"x".repeat(mib << 20), false))
            }
            Some(other) => Err(invalid(&format!("unknown tool: {other}"))),
            None => Err(invalid("tools/call needs a name")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `line` and returns what the server wrote, after running what is due `ms` later.
    fn exchange(s: &mut DemoServer, now: Instant, line: &str, ms: u64) -> String {
        s.handle_stdin(now, format!("{line}\n").as_bytes());
        s.handle_timeout(now + Duration::from_millis(ms));
        String::from_utf8(s.poll_output().unwrap_or_default()).unwrap()
    }

    #[test]
    fn slow_logs_its_steps_at_the_level_the_client_set() {
        let mut s = DemoServer::new(DemoConfig::default());
        let now = crate::test_support::epoch();
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        assert!(exchange(&mut s, now, init, 0).contains(r#""logging":{}"#));
        let slow = |id: u32| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"slow","arguments":{{"steps":1,"interval_ms":10}}}}}}"#
            )
        };
        // No level set: no log messages.
        let out = exchange(&mut s, now, &slow(1), 10);
        assert!(out.contains("done after 1 steps"), "{out}");
        assert!(!out.contains("notifications/message"), "{out}");
        let set = |level: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{{"level":"{level}"}}}}"#
            )
        };
        let out = exchange(&mut s, now, &set("info"), 0);
        assert_eq!(out, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
        let out = exchange(&mut s, now, &slow(3), 10);
        assert!(
            out.contains(r#""params":{"data":"step 1 of 1 done","level":"info","logger":"demo"}"#),
            "{out}"
        );
        assert!(!out.contains(r#""level":"debug""#), "{out}");
        let out = exchange(&mut s, now, &set("debug"), 0);
        assert!(out.contains("result"), "{out}");
        let out = exchange(&mut s, now, &slow(4), 10);
        assert!(out.contains(r#""level":"debug""#), "{out}");
        let out = exchange(&mut s, now, &set("loud"), 0);
        assert!(out.contains(r#""code":-32602"#), "{out}");
    }

    #[test]
    fn a_request_written_as_bytes_is_on_the_wire_and_cancelled_when_it_times_out() {
        let mut s = DemoServer::new(DemoConfig::default());
        let now = crate::test_support::epoch();
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        exchange(&mut s, now, init, 0);
        s.ping(now);
        let out = String::from_utf8(s.poll_output().unwrap()).unwrap();
        assert!(out.contains(r#""method":"ping""#), "{out}");
        // Unanswered past its deadline: the client is told the request is cancelled.
        s.handle_timeout(now + Duration::from_secs(3_600));
        let out = String::from_utf8(s.poll_output().unwrap_or_default()).unwrap();
        assert!(out.contains("notifications/cancelled"), "{out}");
    }

    #[test]
    fn generated_tools_are_listed_after_the_demos_own_and_answer() {
        let config = DemoConfig {
            extra_tools: 250,
            page_size: 100,
            ..DemoConfig::default()
        };
        let mut s = DemoServer::new(config);
        let now = crate::test_support::epoch();
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        exchange(&mut s, now, init, 0);
        let own = tools().as_array().unwrap().len();
        let mut names = Vec::new();
        let mut cursor = Value::Null;
        for id in 1.. {
            let list = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list",
                              "params": {"cursor": cursor}});
            let out = exchange(&mut s, now, &list.to_string(), 0);
            let answer: Value = serde_json::from_str(out.trim()).unwrap();
            let page = answer["result"]["tools"].as_array().unwrap().clone();
            names.extend(page.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
            cursor = answer["result"]["nextCursor"].clone();
            if cursor.is_null() {
                break;
            }
        }
        assert_eq!(names.len(), own + 250);
        assert_eq!(names[own], "tool-0");
        assert_eq!(names.last().unwrap(), "tool-249");
        let call = r#"{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"tool-249","arguments":{"message":"hi"}}}"#;
        assert!(exchange(&mut s, now, call, 0).contains(r#""text":"hi""#));
        // One past the last is no tool.
        let call = r#"{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"tool-250","arguments":{"message":"hi"}}}"#;
        assert!(exchange(&mut s, now, call, 0).contains(r#""error""#));
    }

    #[test]
    fn handshake_only_refuses_the_probe_as_an_older_server_does() {
        let config = DemoConfig {
            handshake_only: true,
            ..DemoConfig::default()
        };
        let mut s = DemoServer::new(config);
        let now = crate::test_support::epoch();
        let probe = r#"{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let out = exchange(&mut s, now, probe, 0);
        assert!(out.contains(r#""code":-32601"#), "{out}");
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        assert!(exchange(&mut s, now, init, 0).contains(r#""protocolVersion":"2025-11-25""#));
    }
}
