//! The demo server's tasks: tools that run as tasks, in both shapes the spec has (the
//! 2026-07-28 extension and the 2025-11-25 utility), timed by the `now` given.
//!
//! - `build` (task required): works for `ms` milliseconds (default 300), then completes.
//! - `crawl` (task optional): the same, or at once without a task.
//! - `approve` (task required): halfway it needs input (an elicitation: approve or not), then
//!   completes with the answer.
//! - `doomed` (task required): fails with a JSON-RPC error when its time is up.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::jsonrpc::{ErrorObject, RawJson};

/// The demo's task tools, as `tools/list` gives them.
pub(super) fn tools() -> [Value; 4] {
    let ms = json!({"type": "object", "properties": {"ms": {"type": "integer", "default": 300}}});
    [
        json!({"name": "build", "description": "Builds for ms milliseconds, as a task.",
               "inputSchema": ms, "execution": {"taskSupport": "required"}}),
        json!({"name": "crawl", "description": "Crawls for ms milliseconds, as a task if the client can.",
               "inputSchema": ms, "execution": {"taskSupport": "optional"}}),
        json!({"name": "approve", "description": "Asks for approval halfway through, as a task.",
               "inputSchema": ms, "execution": {"taskSupport": "required"}}),
        json!({"name": "doomed", "description": "Fails when its time is up, as a task.",
               "inputSchema": ms, "execution": {"taskSupport": "required"}}),
    ]
}

/// How `tool` may run: `Some(true)` only as a task, `Some(false)` either way, `None` not a
/// task tool.
pub(super) fn task_support(tool: &str) -> Option<bool> {
    match tool {
        "build" | "approve" | "doomed" => Some(true),
        "crawl" => Some(false),
        _ => None,
    }
}

/// The result a task tool gives when run without a task (`crawl` only).
pub(super) fn at_once(tool: &str) -> RawJson {
    text(&format!("{tool}: done at once (no task)"))
}

/// The key of `approve`'s one input request.
pub(super) const APPROVAL: &str = "approval";

#[derive(Debug)]
enum Phase {
    /// Working until then; then `next`.
    Working {
        until: Instant,
        then: Then,
    },
    /// Waiting for the approval.
    Input,
    Done(Result<RawJson, ErrorObject>),
    Cancelled,
}

#[derive(Debug, Clone, Copy)]
enum Then {
    Complete,
    Fail,
    AskApproval,
}

#[derive(Debug)]
struct Task {
    tool: String,
    ms: u64,
    phase: Phase,
    /// Times as the wire shows them (ISO 8601), from a fixed origin plus the offsets.
    created: String,
    updated: String,
    /// Whether `approve`'s elicitation was sent (2025-11-25).
    asked: bool,
}

/// The tasks of one demo server.
#[derive(Debug)]
pub(super) struct DemoTasks {
    tasks: BTreeMap<String, Task>,
    next: u64,
    origin: Option<Instant>,
}

impl Default for DemoTasks {
    fn default() -> Self {
        DemoTasks {
            tasks: BTreeMap::new(),
            next: 1,
            origin: None,
        }
    }
}

/// How long a task is kept.
const TTL_MS: u64 = 60_000;
/// The poll interval suggested.
const POLL_MS: u64 = 50;

impl DemoTasks {
    fn stamp(&mut self, now: Instant) -> String {
        let origin = *self.origin.get_or_insert(now);
        let ms = now.saturating_duration_since(origin).as_millis();
        format!("2026-07-28T00:00:{:02}.{:03}Z", (ms / 1000) % 60, ms % 1000)
    }

    /// Creates a task for `tool` with `args`; its id.
    pub(super) fn create(&mut self, now: Instant, tool: &str, args: &Value) -> String {
        let ms = args
            .get("ms")
            .and_then(Value::as_u64)
            .unwrap_or(300)
            .min(60_000);
        let id = format!("task-{}", self.next);
        self.next += 1;
        let then = match tool {
            "doomed" => Then::Fail,
            "approve" => Then::AskApproval,
            _ => Then::Complete,
        };
        let wait = if tool == "approve" { ms / 2 } else { ms };
        let stamp = self.stamp(now);
        let task = Task {
            tool: tool.to_owned(),
            ms,
            phase: Phase::Working {
                until: now + Duration::from_millis(wait),
                then,
            },
            created: stamp.clone(),
            updated: stamp,
            asked: false,
        };
        self.tasks.insert(id.clone(), task);
        id
    }

    /// The earliest moment a task moves on.
    pub(super) fn poll_timeout(&self) -> Option<Instant> {
        self.tasks
            .values()
            .filter_map(|t| match t.phase {
                Phase::Working { until, .. } => Some(until),
                _ => None,
            })
            .min()
    }

    /// Moves every task whose time came.
    pub(super) fn advance(&mut self, now: Instant) {
        let stamp = self.stamp(now);
        for task in self.tasks.values_mut() {
            let Phase::Working { until, then } = task.phase else {
                continue;
            };
            if until > now {
                continue;
            }
            task.updated = stamp.clone();
            task.phase = match then {
                Then::Complete => Phase::Done(Ok(text(&format!(
                    "{}: done after {} ms",
                    task.tool, task.ms
                )))),
                Then::Fail => Phase::Done(Err(ErrorObject::new(
                    -32603,
                    format!("{} failed, as it always does", task.tool),
                ))),
                Then::AskApproval => Phase::Input,
            };
        }
    }

    /// The task's status word.
    fn status(task: &Task) -> &'static str {
        match &task.phase {
            Phase::Working { .. } => "working",
            Phase::Input => "input_required",
            Phase::Done(Ok(_)) => "completed",
            Phase::Done(Err(_)) => "failed",
            Phase::Cancelled => "cancelled",
        }
    }

    /// The task's fields; `modern`: the 2026-07-28 names (`ttlMs`, `pollIntervalMs`), else
    /// the 2025-11-25 ones (`ttl`, `pollInterval`).
    pub(super) fn fields(&self, id: &str, modern: bool) -> Option<Value> {
        let task = self.tasks.get(id)?;
        let (ttl, poll) = if modern {
            ("ttlMs", "pollIntervalMs")
        } else {
            ("ttl", "pollInterval")
        };
        Some(json!({"taskId": id, "status": Self::status(task),
            "statusMessage": format!("{} ({} ms)", task.tool, task.ms),
            "createdAt": task.created, "lastUpdatedAt": task.updated,
            ttl: TTL_MS, poll: POLL_MS}))
    }

    /// `tasks/get` in the 2026-07-28 shape: the fields, with the input requests, the result or
    /// the error inlined.
    pub(super) fn detailed(&self, id: &str) -> Result<Value, ErrorObject> {
        let mut fields = self.fields(id, true).ok_or_else(unknown)?;
        match &self.tasks[id].phase {
            Phase::Input => {
                fields["inputRequests"] = json!({APPROVAL: approval_request()});
            }
            Phase::Done(Ok(result)) => {
                fields["result"] = serde_json::from_str(result.get()).unwrap_or(Value::Null)
            }
            Phase::Done(Err(error)) => fields["error"] = json!(error),
            _ => {}
        }
        Ok(fields)
    }

    /// The approval given (`tasks/update` in 2026-07-28, the elicitation's answer in
    /// 2025-11-25): the task works for the other half of its time. Answers for keys not
    /// outstanding are ignored.
    pub(super) fn approve(&mut self, now: Instant, id: &str, answer: Option<&Value>) {
        let Some(task) = self.tasks.get_mut(id) else {
            return;
        };
        if !matches!(task.phase, Phase::Input) {
            return;
        }
        let Some(answer) = answer else {
            return;
        };
        let accepted = answer.get("action").and_then(Value::as_str) == Some("accept");
        let approved =
            accepted && answer.pointer("/content/approve").and_then(Value::as_bool) == Some(true);
        let ms = task.ms - task.ms / 2;
        task.phase = Phase::Working {
            until: now + Duration::from_millis(ms),
            then: if approved { Then::Complete } else { Then::Fail },
        };
        if !approved {
            task.tool = format!("{} (not approved)", task.tool);
        }
    }

    /// Whether the task is known.
    pub(super) fn knows(&self, id: &str) -> bool {
        self.tasks.contains_key(id)
    }

    /// `tasks/cancel`: a task not finished is cancelled.
    pub(super) fn cancel(&mut self, now: Instant, id: &str) -> Result<(), ErrorObject> {
        let stamp = self.stamp(now);
        let task = self.tasks.get_mut(id).ok_or_else(unknown)?;
        if !matches!(task.phase, Phase::Done(_)) {
            task.phase = Phase::Cancelled;
            task.updated = stamp;
        }
        Ok(())
    }

    /// `tasks/result` (2025-11-25): the result once the task is terminal; `None` while it
    /// works. `Some(Err)` for a cancelled task too.
    pub(super) fn result(&self, id: &str) -> Option<Result<RawJson, ErrorObject>> {
        match &self.tasks.get(id)?.phase {
            Phase::Done(outcome) => Some(outcome.clone()),
            Phase::Cancelled => Some(Err(ErrorObject::new(-32603, "the task was cancelled"))),
            _ => None,
        }
    }

    /// Tasks waiting for an approval not yet asked for (2025-11-25), marked asked.
    pub(super) fn take_unasked(&mut self) -> Vec<String> {
        self.tasks
            .iter_mut()
            .filter(|(_, t)| matches!(t.phase, Phase::Input) && !t.asked)
            .map(|(id, t)| {
                t.asked = true;
                id.clone()
            })
            .collect()
    }

    /// Every task's fields (`tasks/list`, 2025-11-25).
    pub(super) fn list(&self) -> Vec<Value> {
        self.tasks
            .keys()
            .filter_map(|id| self.fields(id, false))
            .collect()
    }
}

/// `approve`'s elicitation: approve or not.
pub(super) fn approval_request() -> Value {
    json!({"method": "elicitation/create", "params": approval_params()})
}

/// The params of `approve`'s elicitation.
pub(super) fn approval_params() -> Value {
    json!({"mode": "form", "message": "Approve the change?",
        "requestedSchema": {"type": "object",
            "properties": {"approve": {"type": "boolean", "default": true}},
            "required": ["approve"]}})
}

fn unknown() -> ErrorObject {
    ErrorObject::new(-32602, "unknown task")
}

fn text(text: &str) -> RawJson {
    RawJson::new(&json!({"content": [{"type": "text", "text": text}]})).expect("JSON")
}

use super::{raw, with_result_type, DemoServer, META_CAPABILITIES};
use crate::jsonrpc::{Id, Request};
use crate::rpc::{Origin, Reply, RequestOptions};

impl DemoServer {
    /// A stateless-era request of the tasks extension, or a task tool's call: its answer
    /// (with its `resultType`), or `None` when it is neither.
    pub(super) fn modern_tasks(
        &mut self,
        now: Instant,
        r: &Request,
        params: &Value,
    ) -> Option<Result<RawJson, ErrorObject>> {
        let task_id = params.get("taskId").and_then(Value::as_str);
        let declared = params
            .pointer(&format!(
                "/_meta/{}/extensions/{}",
                META_CAPABILITIES.replace('/', "~1"),
                crate::types::TASKS_EXTENSION.replace('/', "~1")
            ))
            .is_some();
        let complete = |v: Value| Ok(with_result_type(&raw(&v)));
        self.tasks.advance(now);
        Some(match (r.method.as_ref(), task_id) {
            ("tools/call", _) => {
                let tool = params.get("name").and_then(Value::as_str)?;
                let required = task_support(tool)?;
                match (declared, required) {
                    (true, _) => {
                        let args = params.get("arguments").cloned().unwrap_or(json!({}));
                        let id = self.tasks.create(now, tool, &args);
                        let mut task = self.tasks.fields(&id, true).expect("created");
                        task["resultType"] = json!("task");
                        Ok(raw(&task))
                    }
                    (false, true) => Err(ErrorObject {
                        code: crate::types::codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                        message: format!("{tool} runs only as a task"),
                        data: Some(raw(&json!({"requiredCapabilities": {"extensions": {
                            crate::types::TASKS_EXTENSION: {}}}}))),
                    }),
                    (false, false) => Ok(with_result_type(&at_once(tool))),
                }
            }
            ("tasks/get", Some(id)) => self.tasks.detailed(id).and_then(complete),
            ("tasks/update", Some(id)) if self.tasks.knows(id) => {
                let answer = params.pointer(&format!("/inputResponses/{APPROVAL}"));
                self.tasks.approve(now, id, answer);
                complete(json!({}))
            }
            ("tasks/cancel", Some(id)) => self
                .tasks
                .cancel(now, id)
                .and_then(|()| complete(json!({}))),
            ("tasks/get" | "tasks/update" | "tasks/cancel", _) => Err(unknown()),
            _ => return None,
        })
    }

    /// A handshake-era request of the tasks utility, or a task tool's call: `Some(Some(answer))`,
    /// `Some(None)` when it is answered later (`tasks/result` of a task still working), or
    /// `None` when it is neither.
    pub(super) fn handshake_tasks(
        &mut self,
        now: Instant,
        r: &Request,
        params: &Value,
    ) -> Option<Option<Result<RawJson, ErrorObject>>> {
        let task_id = params.get("taskId").and_then(Value::as_str);
        self.tasks.advance(now);
        Some(Some(match (r.method.as_ref(), task_id) {
            ("tools/call", _) => {
                let tool = params.get("name").and_then(Value::as_str)?;
                let required = task_support(tool)?;
                match (params.get("task").is_some(), required) {
                    (true, _) => {
                        let args = params.get("arguments").cloned().unwrap_or(json!({}));
                        let id = self.tasks.create(now, tool, &args);
                        Ok(raw(&json!({"task": self.tasks.fields(&id, false)})))
                    }
                    (false, true) => Err(ErrorObject::new(
                        crate::jsonrpc::codes::METHOD_NOT_FOUND,
                        format!("{tool} must be called as a task"),
                    )),
                    (false, false) => Ok(at_once(tool)),
                }
            }
            ("tasks/get", Some(id)) => self
                .tasks
                .fields(id, false)
                .map(|v| raw(&v))
                .ok_or_else(unknown),
            ("tasks/cancel", Some(id)) => self
                .tasks
                .cancel(now, id)
                .map(|()| raw(&self.tasks.fields(id, false).unwrap_or(Value::Null))),
            ("tasks/list", _) => Ok(raw(&json!({"tasks": self.tasks.list()}))),
            ("tasks/result", Some(id)) if self.tasks.knows(id) => {
                if let Some(outcome) = self.tasks.result(id) {
                    return Some(Some(outcome));
                }
                self.task_results.push((r.id.clone(), id.to_owned()));
                self.ask_approvals(now);
                return Some(None);
            }
            ("tasks/get" | "tasks/cancel" | "tasks/result", _) => Err(unknown()),
            _ => return None,
        }))
    }

    /// Sends the elicitation of each task that waits for its approval (2025-11-25: the
    /// server asks while the client waits on `tasks/result`).
    fn ask_approvals(&mut self, now: Instant) {
        for task in self.tasks.take_unasked() {
            let mut params = approval_params();
            params["_meta"] = json!({"io.modelcontextprotocol/related-task": {"taskId": task}});
            let opts = RequestOptions::new()
                .timeout(self.config.elicitation_timeout)
                .origin(Origin::PROTOCOL);
            if let Ok(id) = self
                .engine
                .request(now, "elicitation/create", Some(raw(&params)), opts)
            {
                self.task_asks.insert(id, task);
            }
        }
    }

    /// Moves the tasks on and answers the `tasks/result`s whose task has ended.
    pub(super) fn tasks_due(&mut self, now: Instant) {
        self.tasks.advance(now);
        if !self.task_results.is_empty() {
            self.ask_approvals(now);
        }
        let waiting = std::mem::take(&mut self.task_results);
        for (request, task) in waiting {
            match self.tasks.result(&task) {
                Some(outcome) => {
                    let _ = self.engine.respond(now, &request, outcome);
                }
                None => self.task_results.push((request, task)),
            }
        }
    }

    /// The client answered an approval's elicitation: `true` when `id` was one.
    pub(super) fn task_asked(
        &mut self,
        now: Instant,
        id: i64,
        outcome: &Result<Reply, crate::rpc::LocalError>,
    ) -> bool {
        let Some(task) = self.task_asks.remove(&id) else {
            return false;
        };
        let answer: Option<Value> = match outcome {
            Ok(Reply::Result(r)) => r.parse().ok(),
            _ => Some(json!({"action": "decline"})),
        };
        self.tasks.approve(now, &task, answer.as_ref());
        true
    }

    /// Forgets the `tasks/result`s of a request the client cancelled.
    pub(super) fn forget_task_result(&mut self, id: &Id) {
        self.task_results.retain(|(r, _)| r != id);
    }
}
