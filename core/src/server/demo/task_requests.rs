//! The demo's task tools served: `tools/call` answered with a task, and the `tasks/*`
//! requests (get, list, result, cancel, update) in both eras.

use std::time::Instant;

use serde_json::{json, Value};

use super::tasks::{approval_params, at_once, task_support, unknown, APPROVAL};
use super::words::{raw, with_result_type, META_CAPABILITIES};
use super::DemoServer;
use crate::jsonrpc::{ErrorObject, Id, RawJson, Request};
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
