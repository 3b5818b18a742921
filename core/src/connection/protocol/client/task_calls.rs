//! Calls answered with a task (see [`crate::connection::protocol::tasks::follow`]): following the task, its inputs,
//! its cancellation, and which tools are called in task mode (2025-11-25).

use std::borrow::Cow;
use std::time::Instant;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::ClientProtocol;
use crate::connection::protocol::call::params::ParamsRef;
use crate::connection::protocol::era::ChosenEra;
use crate::connection::protocol::tasks::follow::{InputAnswer, Next, Purpose, Shape};
use crate::connection::protocol::vocabulary::events::{
    CallError, CallId, CallOptions, Event, TaskStatus,
};
use crate::jsonrpc::{ErrorObject, Id, RawJson};

/// The names of the tools whose `execution.taskSupport` is `required` in a `tools/list`
/// result.
pub(super) fn task_required_tools(all: &RawJson) -> std::collections::HashSet<String> {
    if memchr::memmem::find(all.get().as_bytes(), b"\"taskSupport\"").is_none() {
        return Default::default();
    }
    #[derive(Deserialize)]
    struct List {
        #[serde(default)]
        tools: Vec<ToolHead>,
    }
    #[derive(Deserialize)]
    struct ToolHead {
        name: String,
        #[serde(default)]
        execution: Option<Execution>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Execution {
        #[serde(default)]
        task_support: Option<String>,
    }
    let list: List = all.parse().unwrap_or(List { tools: Vec::new() });
    list.tools
        .into_iter()
        .filter(|t| {
            t.execution.as_ref().and_then(|e| e.task_support.as_deref()) == Some("required")
        })
        .map(|t| t.name)
        .collect()
}

impl ClientProtocol {
    /// Whether the tools should be listed before a tool is called: a handshake-era server that
    /// runs tool calls as tasks marks in its list the tools that must be called in task mode,
    /// and no list was had yet.
    pub(crate) fn wants_tool_list(&self) -> bool {
        // Asked before every call: the cheap conditions first, and the capability read by keys
        // (a JSON pointer allocates for each of its segments).
        !self.tools_listed
            && self.handshake.era == Some(ChosenEra::Handshake)
            && self
                .server()
                .and_then(|s| s.capabilities.extra.get("tasks"))
                .and_then(|t| t.get("requests")?.get("tools")?.get("call"))
                .is_some()
    }

    /// Whether a handshake-era `tools/call` of `params` goes in task mode: its tool's last
    /// listed `taskSupport` is `required`.
    pub(super) fn task_mode(&self, params: Option<ParamsRef<'_>>) -> bool {
        let name = params.and_then(ParamsRef::tool);
        name.is_some_and(|n| self.task_tools.contains(n))
    }

    /// The call's answer is a task: follow it.
    pub(super) fn task_started(
        &mut self,
        now: Instant,
        call: CallId,
        shape: Shape,
        result: &RawJson,
        opts: CallOptions,
    ) {
        match self.tasks.follow(now, call, shape, result, opts, now) {
            Ok(status) => self.events.push_back(Event::TaskStatus { call, status }),
            Err(e) => self.end_call(call, Err(e)),
        }
    }

    /// A request of a followed task was answered.
    pub(super) fn task_reply(
        &mut self,
        now: Instant,
        call: CallId,
        purpose: Purpose,
        outcome: Result<RawJson, CallError>,
    ) {
        if !self.tasks.follows(call) {
            return;
        }
        let next = match (purpose, outcome) {
            (Purpose::Get, Ok(report)) => {
                let caps = self.declared_for(call).clone();
                self.tasks.report(now, call, &report, &caps)
            }
            // The answers were taken (or will be): look again after the interval.
            (Purpose::Update, Ok(_)) => {
                self.tasks.schedule(now, call);
                Next::Wait
            }
            (Purpose::Result, outcome) => Next::End(outcome, None),
            (_, Err(e)) => Next::End(Err(e), None),
        };
        self.task_next(now, call, next);
    }

    fn task_next(&mut self, now: Instant, call: CallId, next: Next) {
        match next {
            Next::Wait => {}
            Next::Status(status) => self.events.push_back(Event::TaskStatus { call, status }),
            Next::Inputs(requests, status) => {
                self.tell(call, status);
                self.events
                    .extend(requests.into_iter().map(Event::ServerRequest));
            }
            Next::FetchResult(status) => {
                self.tell(call, status);
                self.task_request(now, call, "tasks/result", Purpose::Result, None);
            }
            Next::End(outcome, status) => {
                self.tell(call, status);
                self.drop_task(now, call);
                self.end_call(call, outcome);
            }
            Next::Abandon(error, status) => {
                self.tell(call, status);
                self.abandon_task(now, call);
                self.end_call(call, Err(error));
            }
        }
    }

    fn tell(&mut self, call: CallId, status: Option<TaskStatus>) {
        if let Some(status) = status {
            self.events.push_back(Event::TaskStatus { call, status });
        }
    }

    /// Sends `method` for `call`'s task (`taskId`, and `inputResponses` for an update).
    fn task_request(
        &mut self,
        now: Instant,
        call: CallId,
        method: &'static str,
        purpose: Purpose,
        responses: Option<Box<RawValue>>,
    ) {
        let Some(follow) = self.tasks.get(call) else {
            return;
        };
        let mut params = Map::new();
        params.insert("taskId".into(), Value::from(follow.task_id.clone()));
        let opts = CallOptions {
            max_total: None,
            progress: false,
            ..follow.opts.clone()
        };
        let members: Vec<(&str, &RawValue)> = responses
            .as_deref()
            .map(|r| ("inputResponses", r))
            .into_iter()
            .collect();
        let method = Cow::Borrowed(method);
        match self.send(now, Some(call), method, Some(&params), &opts, &members) {
            Ok(id) => self.tasks.sent(id, call, purpose),
            Err(e) => {
                self.drop_task(now, call);
                self.end_call(call, Err(CallError::of_refused(e)));
            }
        }
    }

    /// Fires what is due for tasks: polls, and calls whose task ran out of time.
    pub(super) fn tasks_due(&mut self, now: Instant) {
        let (ended, polls) = self.tasks.due(now);
        for (call, error) in ended {
            self.abandon_task(now, call);
            self.end_call(call, Err(error));
        }
        for call in polls {
            self.task_request(now, call, "tasks/get", Purpose::Get, None);
        }
    }

    /// Stops following `call`'s task and tells the server to cancel it (2026: `tasks/cancel`,
    /// never `notifications/cancelled`; 2025-11-25: `tasks/cancel` too). Its answer is not
    /// awaited.
    fn abandon_task(&mut self, now: Instant, call: CallId) {
        let Some(follow) = self.drop_task(now, call) else {
            return;
        };
        let mut params = Map::new();
        params.insert("taskId".into(), Value::from(follow.task_id));
        let _ = self.send(
            now,
            Some(call),
            Cow::Borrowed("tasks/cancel"),
            Some(&params),
            &CallOptions::default(),
            &[],
        );
    }

    /// A status the server pushed (`notifications/tasks` through `subscriptions/listen` in
    /// 2026-07-28, `notifications/tasks/status` in 2025-11-25), taken as a poll's answer for the
    /// task a call follows. The notification still reaches the host.
    pub(super) fn task_pushed(&mut self, now: Instant, n: &crate::jsonrpc::Notification) {
        if !matches!(
            n.method.as_str(),
            "notifications/tasks" | "notifications/tasks/status"
        ) {
            return;
        }
        let Some(params) = &n.params else { return };
        let Some(call) = self.tasks.call_of(params) else {
            return;
        };
        if self.tasks.awaits_result(call) {
            // `tasks/result` is already asked: its answer ends the call.
            return;
        }
        let caps = self.declared_for(call).clone();
        let next = self.tasks.report(now, call, params, &caps);
        self.task_next(now, call, next);
    }

    /// Stops following `call`'s task; its requests still in flight (a poll, an update) end here,
    /// unanswered and unsent again: no call waits for them.
    fn drop_task(
        &mut self,
        now: Instant,
        call: CallId,
    ) -> Option<crate::connection::protocol::tasks::follow::Follow> {
        let (follow, pending) = self.tasks.stop(call)?;
        for id in pending {
            let reason = Some("the task's call ended".to_owned());
            let _ = self
                .engine
                .fail(now, id, crate::rpc::LocalError::Cancelled { reason });
        }
        Some(follow)
    }

    /// Cancels a call that follows a task: the task is cancelled and the call ends now.
    /// Returns whether `call` followed one.
    pub(super) fn cancel_task(
        &mut self,
        now: Instant,
        call: CallId,
        reason: Option<String>,
    ) -> bool {
        if !self.tasks.follows(call) {
            return false;
        }
        self.abandon_task(now, call);
        let cancelled = crate::rpc::LocalError::Cancelled { reason };
        self.end_call(call, Err(CallError::Local(cancelled)));
        self.pump(now);
        true
    }

    /// An answer to one of a task's input requests; the answer back when `id` is none.
    pub(super) fn task_input(
        &mut self,
        now: Instant,
        id: &Id,
        answer: Result<RawJson, ErrorObject>,
    ) -> Result<(), Result<RawJson, ErrorObject>> {
        match self.tasks.answer(id, answer)? {
            InputAnswer::Waiting => {}
            InputAnswer::Update { call, responses } => {
                self.task_request(now, call, "tasks/update", Purpose::Update, Some(responses));
            }
            InputAnswer::Failed(call, error) => {
                self.abandon_task(now, call);
                self.end_call(call, Err(error));
            }
        }
        self.pump(now);
        Ok(())
    }

    /// The connection ended: every call following a task ends with `error`.
    pub(super) fn fail_tasks(&mut self, error: &crate::rpc::LocalError) {
        for call in self.tasks.drain() {
            self.end_call(call, Err(CallError::Local(error.clone())));
        }
    }
}
