//! Tasks a host follows itself: a tool call started as a task and handed back at once
//! ([`Client::start_tool_task`]), then looked at, answered, awaited or cancelled through its
//! [`TaskHandle`], in either era. (`call_tool` follows a task on its own; this is for hosts that
//! detach, say to show a job list or to come back to it later.)

use std::time::Duration;

use mcpwire_core::typed_result;
use mcpwire_core::types::CallToolResult;
use mcpwire_core::{ChosenEra, McpCall};
use serde_json::{Map, Value};

use super::handle::Client;
use crate::error::Error;
use mcpwire_core::CallOptions;

/// How a tool call started as a task began.
#[derive(Debug)]
pub enum TaskStart {
    /// The server made a task: follow it with the handle.
    Task(TaskHandle),
    /// The server answered at once (it chose not to make a task).
    Done(CallToolResult),
}

/// A task a host follows itself.
#[derive(Debug, Clone)]
pub struct TaskHandle {
    client: Client,
    task_id: String,
    /// The task as the server last described it.
    last: Value,
}

impl Client {
    /// Calls a tool as a task and hands the task back at once instead of following it: in the
    /// 2026-07-28 era the server chooses (the tasks extension is declared); in the handshake era
    /// the call asks for task mode.
    pub async fn start_tool_task(&self, name: &str, arguments: Value) -> Result<TaskStart, Error> {
        let opts = CallOptions {
            detach_task: true,
            ..CallOptions::default()
        };
        let raw = self
            .send_call(&opts, McpCall::call_tool(name, Some(arguments)))
            .await?;
        let Some(task) = mcpwire_core::task_of(&raw) else {
            return Ok(TaskStart::Done(typed_result(&raw, "tools/call")?));
        };
        let task_id = task
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("a task without a taskId"))?
            .to_owned();
        Ok(TaskStart::Task(TaskHandle {
            client: self.clone(),
            task_id,
            last: task,
        }))
    }
}

impl TaskHandle {
    /// The task's id.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The task's status as last seen (`working`, `input_required`, `completed`, `failed`,
    /// `cancelled`).
    pub fn status(&self) -> &str {
        self.last
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The task as the server last described it (with its `inputRequests`, `result` or `error`
    /// in the 2026-07-28 era).
    pub fn last(&self) -> &Value {
        &self.last
    }

    fn params(&self) -> Map<String, Value> {
        let mut params = Map::new();
        params.insert("taskId".into(), Value::from(self.task_id.clone()));
        params
    }

    /// Asks the server where the task stands (`tasks/get`), and keeps the answer.
    pub async fn refresh(&mut self) -> Result<&Value, Error> {
        let raw = self
            .client
            .request("tasks/get", Some(self.params()), CallOptions::default())
            .await?;
        self.last = raw.parse().map_err(invalid)?;
        Ok(&self.last)
    }

    /// Answers the task's input requests (`tasks/update`, 2026-07-28): `responses` maps the
    /// keys of its `inputRequests` to the answers (an elicitation's result, …).
    pub async fn answer(&self, responses: Map<String, Value>) -> Result<(), Error> {
        let mut params = self.params();
        params.insert("inputResponses".into(), Value::Object(responses));
        self.client
            .request("tasks/update", Some(params), CallOptions::default())
            .await
            .map(drop)
    }

    /// Asks the server to cancel the task (`tasks/cancel`; cancellation is the server's to
    /// honour).
    pub async fn cancel(&self) -> Result<(), Error> {
        self.client
            .request("tasks/cancel", Some(self.params()), CallOptions::default())
            .await
            .map(drop)
    }

    /// Waits for the task's result: in the handshake era `tasks/result`; in the 2026-07-28 era
    /// `tasks/get` every `pollIntervalMs` until the task ends (input it asks for meanwhile is
    /// the host's to give with [`answer`](Self::answer) from another task).
    pub async fn result(&mut self) -> Result<CallToolResult, Error> {
        if self.client.era() == Some(ChosenEra::Handshake) {
            let raw = self
                .client
                .request("tasks/result", Some(self.params()), CallOptions::default())
                .await?;
            return Ok(typed_result(&raw, "tasks/result")?);
        }
        loop {
            match self.status() {
                "completed" => {
                    let result = self.last.get("result").cloned().unwrap_or(Value::Null);
                    return serde_json::from_value(result).map_err(invalid);
                }
                "failed" | "cancelled" => {
                    let error = self.last.get("error").cloned();
                    return Err(invalid(format!(
                        "the task ended {}: {}",
                        self.status(),
                        error.unwrap_or(Value::Null)
                    )));
                }
                _ => {}
            }
            let wait = self
                .last
                .get("pollIntervalMs")
                .and_then(Value::as_u64)
                .unwrap_or(1000)
                .max(10);
            let mut timer = self.client.shared.runtime.timer();
            timer.set_at(timer.now() + Duration::from_millis(wait));
            std::future::poll_fn(|cx| timer.poll(cx)).await;
            self.refresh().await?;
        }
    }
}

fn invalid(e: impl std::fmt::Display) -> Error {
    Error::Call(mcpwire_core::CallError::InvalidResult(e.to_string()))
}
