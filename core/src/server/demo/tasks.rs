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

pub(super) fn unknown() -> ErrorObject {
    ErrorObject::new(-32602, "unknown task")
}

fn text(text: &str) -> RawJson {
    RawJson::new(&json!({"content": [{"type": "text", "text": text}]})).expect("JSON")
}
