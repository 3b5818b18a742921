//! The demo server's `ask-task` tool (2025-11-25): the server is the requestor of a task. It
//! asks the user for a name with an `elicitation/create` that carries `task`, so the client
//! answers at once with a task; it looks at the task once with `tasks/get`, then waits for its
//! result with `tasks/result`, and greets the name the user gave. Cancelling the call cancels
//! the client's task with `tasks/cancel`.

use std::time::Instant;

use serde_json::{json, Value};

use super::words::{name_question, raw, text_result};
use super::{AskTask, DemoServer, Step};
use crate::jsonrpc::{Id, RawJson};
use crate::rpc::{LocalError, Origin, Reply, RequestOptions};

/// The task time to live asked of the client.
const TTL_MS: u64 = 60_000;

impl DemoServer {
    /// `ask-task`: sends the task-augmented elicitation; the call is answered later.
    pub(super) fn ask_task(&mut self, now: Instant, call: &Id, args: &Value) -> Option<RawJson> {
        if !self.client_runs_elicitation_tasks {
            return Some(text_result(
                "ask-task needs a client that runs elicitations as tasks (the handshake era, \
                 with capabilities.tasks.requests.elicitation.create)",
                true,
            ));
        }
        let mut params = name_question(args);
        params["task"] = json!({ "ttl": TTL_MS });
        let state = AskTask {
            call: call.clone(),
            task: None,
            step: Step::Create,
        };
        self.ask_task_send(now, "elicitation/create", params, state)
            .map(|e| text_result(&format!("cannot ask: {e}"), true))
    }

    /// Sends one request of an `ask-task` call; the error when it cannot go.
    fn ask_task_send(
        &mut self,
        now: Instant,
        method: &'static str,
        params: Value,
        state: AskTask,
    ) -> Option<String> {
        let opts = RequestOptions::new()
            .timeout(self.config.elicitation_timeout)
            .origin(Origin::PROTOCOL);
        match self.engine.request(now, method, Some(raw(&params)), opts) {
            Ok(id) => {
                self.ask_tasks.insert(id, state);
                None
            }
            Err(e) => Some(e.to_string()),
        }
    }

    /// Our request `id` ended: when it was an `ask-task` call's, its next step (`true`).
    pub(super) fn ask_task_step(
        &mut self,
        now: Instant,
        id: i64,
        outcome: &Result<Reply, LocalError>,
    ) -> bool {
        let Some(mut state) = self.ask_tasks.remove(&id) else {
            return false;
        };
        let call = state.call.clone();
        let result: Result<Value, String> = match outcome {
            Ok(Reply::Result(r)) => r.parse().map_err(|e| format!("a bad answer: {e}")),
            Ok(Reply::Error(e)) => Err(format!("the client refused: {}", e.message)),
            Err(e) => Err(format!("no answer: {e}")),
        };
        let next = match (state.step.clone(), result) {
            (_, Err(why)) => Err(why),
            (Step::Create, Ok(created)) => {
                match created.pointer("/task/taskId").and_then(Value::as_str) {
                    Some(task) => {
                        state.task = Some(task.to_owned());
                        state.step = Step::Look;
                        Ok(("tasks/get", json!({"taskId": task})))
                    }
                    // The client answered at once, without a task.
                    None => return self.ask_task_answer(now, &call, Ok(greeting(&created, None))),
                }
            }
            (Step::Look, Ok(task)) => {
                let status = task.get("status").and_then(Value::as_str).unwrap_or("?");
                state.step = Step::Fetch(status.to_owned());
                Ok(("tasks/result", json!({"taskId": state.task})))
            }
            (Step::Fetch(seen), Ok(answer)) => {
                let task = state.task.as_deref().unwrap_or("?");
                let text = greeting(&answer, Some((task, &seen)));
                return self.ask_task_answer(now, &call, Ok(text));
            }
        };
        let failed = match next {
            Ok((method, params)) => match self.ask_task_send(now, method, params, state) {
                None => return true,
                Some(e) => e,
            },
            Err(why) => why,
        };
        self.ask_task_answer(now, &call, Err(failed))
    }

    /// Answers an `ask-task` call: a greeting, or why there is none.
    fn ask_task_answer(&mut self, now: Instant, call: &Id, answer: Result<String, String>) -> bool {
        let result = match answer {
            Ok(text) => text_result(&text, false),
            Err(why) => text_result(&why, true),
        };
        let _ = self.engine.respond(now, call, Ok(result));
        true
    }

    /// The client cancelled `call`: an `ask-task` call's task is cancelled in turn, and what was
    /// in flight for it is forgotten.
    pub(super) fn ask_task_cancelled(&mut self, now: Instant, call: &Id) {
        let mut task = None;
        self.ask_tasks.retain(|_, state| {
            let ours = state.call == *call;
            if ours {
                task = task.take().or(state.task.clone());
            }
            !ours
        });
        if let Some(task) = task {
            let opts = RequestOptions::new().origin(Origin::PROTOCOL);
            let params = raw(&json!({"taskId": task}));
            let _ = self.engine.request(now, "tasks/cancel", Some(params), opts);
        }
    }
}

/// The tool's text from the elicitation's answer, and the task it came through with the status
/// its look saw.
fn greeting(answer: &Value, task: Option<(&str, &str)>) -> String {
    let said = match answer.get("action").and_then(Value::as_str) {
        Some("accept") => {
            let name = answer
                .pointer("/content/name")
                .and_then(Value::as_str)
                .unwrap_or("stranger");
            format!("hello, {name}")
        }
        Some(action) => format!("the user chose {action}"),
        None => "the client's answer had no action".to_owned(),
    };
    match task {
        Some((task, seen)) => format!("{said} (asked through task {task}, {seen} when looked at)"),
        None => format!("{said} (answered at once, without a task)"),
    }
}
