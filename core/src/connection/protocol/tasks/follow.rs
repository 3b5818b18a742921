//! Tasks: a `tools/call` the server answers with a task instead of its result. The call stays
//! open for its caller while the connection follows the task, and ends with the task's result,
//! its error, or a typed reason; the caller sees one call either way.
//!
//! Both shapes the spec has:
//! - **the 2026-07-28 extension** (`io.modelcontextprotocol/tasks`, declared in every
//!   stateless-era request): the answer is `resultType: "task"` with the task's fields;
//!   `tasks/get` is polled every `pollIntervalMs`; its `input_required` carries
//!   `inputRequests`, surfaced like a call's input round (each key once over the task's life)
//!   and answered with `tasks/update`; `completed` carries `result`, `failed` its `error`;
//!   cancelling the call sends `tasks/cancel` (never `notifications/cancelled`).
//! - **the 2025-11-25 utility** (handshake era): a `tools/call` whose tool's last listed
//!   `execution.taskSupport` is `required` (or a call that asks for it) carries `task: {}`; the
//!   answer is a `CreateTaskResult` (`{task: {…}}`); `tasks/get` is polled every
//!   `pollInterval`; once the task is terminal or needs input, `tasks/result` gives the
//!   result (the server asks for input on its streams meanwhile, as in any call).
//!
//! A task's TTL (from when it was created here), the call's `max_total`, and each poll's own
//! timeout are deadlines like any other; a task that expires, or that the server cancels, ends
//! its call with [`CallError::Task`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::connection::protocol::server_requests::{admit, read_input, InputRequests, Refusal};
use crate::connection::protocol::vocabulary::events::{
    CallError, CallId, CallOptions, ServerRequest, TaskStatus,
};
use crate::jsonrpc::{ErrorObject, Id, RawJson};
use crate::types::ClientCapabilities;

/// How long to wait between polls when the server suggests nothing.
const DEFAULT_POLL: Duration = Duration::from_millis(1000);

/// The shortest wait between polls, whatever the server suggests.
const MIN_POLL: Duration = Duration::from_millis(50);

/// Which shape of tasks a followed task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The 2026-07-28 extension.
    Extension,
    /// The 2025-11-25 utility.
    Utility,
}

/// A task's fields, as every shape reports them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Fields {
    task_id: String,
    status: String,
    #[serde(default)]
    status_message: Option<String>,
    /// 2026-07-28.
    #[serde(default)]
    poll_interval_ms: Option<u64>,
    #[serde(default)]
    ttl_ms: Option<u64>,
    /// 2025-11-25.
    #[serde(default)]
    poll_interval: Option<u64>,
    #[serde(default)]
    ttl: Option<u64>,
    #[serde(default)]
    input_requests: Option<InputRequests>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<ErrorObject>,
}

impl Fields {
    fn poll(&self) -> Option<Duration> {
        self.poll_interval_ms
            .or(self.poll_interval)
            .map(Duration::from_millis)
    }

    fn ttl(&self) -> Option<Duration> {
        self.ttl_ms.or(self.ttl).map(Duration::from_millis)
    }

    /// The status as the call's `changes`-th.
    fn status(&self, changes: u32) -> TaskStatus {
        TaskStatus {
            task_id: self.task_id.clone(),
            status: self.status.clone(),
            message: self.status_message.clone(),
            changes,
        }
    }
}

/// Reads a 2026-07-28 `resultType: "task"` result.
fn extension_task(result: &RawJson) -> Result<Fields, CallError> {
    result
        .parse()
        .map_err(|e| CallError::InvalidResult(format!("tools/call: a task result: {e}")))
}

/// Whether `result` is a 2025-11-25 `CreateTaskResult` (`{task: {…}}`).
pub(crate) fn created_task(result: &RawJson) -> bool {
    if memchr::memmem::find(result.get().as_bytes(), b"\"task\"").is_none() {
        return false;
    }
    #[derive(Deserialize)]
    struct Created {
        task: Option<Box<RawValue>>,
    }
    result.parse::<Created>().is_ok_and(|c| c.task.is_some())
}

/// The task a `tools/call` result stands for, in either shape: the 2025-11-25
/// `CreateTaskResult`'s `task`, or the 2026-07-28 result with `resultType: "task"` (its own
/// fields). `None` for a result that is no task. For a host that follows a task itself.
pub fn task_of(result: &RawJson) -> Option<Value> {
    memchr::memmem::find(result.get().as_bytes(), b"task")?;
    let value: Value = result.parse().ok()?;
    match value.get("task") {
        Some(task) if task.is_object() => Some(task.clone()),
        _ if value.get("resultType").and_then(Value::as_str) == Some("task") => Some(value),
        _ => None,
    }
}

/// Why a followed request goes: to learn the task's state, to answer its inputs, or (2025-11-25)
/// to fetch its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    Get,
    Update,
    Result,
}

/// One task followed for its call.
#[derive(Debug)]
pub(crate) struct Follow {
    pub(crate) call: CallId,
    pub(crate) task_id: String,
    pub(crate) shape: Shape,
    pub(crate) opts: CallOptions,
    /// When the next `tasks/get` goes (none while a request of the task is in flight, or
    /// inputs are awaited).
    pub(crate) next_poll: Option<Instant>,
    poll: Duration,
    /// When the task's TTL runs out, counted from its creation here.
    expires: Option<Instant>,
    /// The call's `max_total`, from the call's start.
    deadline: Option<Instant>,
    /// Input keys surfaced over the task's life (each is answered once).
    seen: HashSet<String>,
    /// Answers given for the inputs surfaced last, and how many are still awaited.
    answers: BTreeMap<String, Box<RawValue>>,
    awaited: usize,
    /// The last status told, and how many were told.
    last: Option<(String, Option<String>)>,
    told: u32,
}

/// What a followed task's report asks of the connection.
pub(crate) enum Next {
    /// Nothing now (the next poll is scheduled).
    Wait,
    /// Tell the caller the status changed.
    Status(TaskStatus),
    /// Surface these input requests (the task waits for them).
    Inputs(Vec<ServerRequest>, Option<TaskStatus>),
    /// Fetch the result with `tasks/result` (2025-11-25).
    FetchResult(Option<TaskStatus>),
    /// The call ends (after the last status, if it changed).
    End(Result<RawJson, CallError>, Option<TaskStatus>),
    /// The client gives the task up (it asked for input this client refuses): the task is
    /// cancelled and the call ends with the error.
    Abandon(CallError, Option<TaskStatus>),
}

/// The tasks being followed, the requests in flight for them, and the inputs they wait for.
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    follows: HashMap<CallId, Follow>,
    requests: HashMap<i64, (CallId, Purpose)>,
    inputs: HashMap<Id, (CallId, String)>,
}

impl Tasks {
    /// Starts following the task `result` describes, for `call`. `started`: when the call
    /// began (for `max_total`).
    pub(crate) fn follow(
        &mut self,
        now: Instant,
        call: CallId,
        shape: Shape,
        result: &RawJson,
        opts: CallOptions,
        started: Instant,
    ) -> Result<TaskStatus, CallError> {
        let fields = match shape {
            Shape::Extension => extension_task(result)?,
            Shape::Utility => {
                #[derive(Deserialize)]
                struct Created {
                    task: Fields,
                }
                let created: Created = result.parse().map_err(|e| {
                    CallError::InvalidResult(format!("tools/call: a CreateTaskResult: {e}"))
                })?;
                created.task
            }
        };
        let poll = fields.poll().unwrap_or(DEFAULT_POLL).max(MIN_POLL);
        let follow = Follow {
            call,
            task_id: fields.task_id.clone(),
            shape,
            deadline: opts.max_total.and_then(|t| started.checked_add(t)),
            opts,
            next_poll: now.checked_add(poll),
            poll,
            expires: fields.ttl().and_then(|t| now.checked_add(t)),
            seen: HashSet::new(),
            answers: BTreeMap::new(),
            awaited: 0,
            last: Some((fields.status.clone(), fields.status_message.clone())),
            told: 1,
        };
        self.follows.insert(call, follow);
        Ok(fields.status(1))
    }

    /// Whether `call`'s `tasks/result` is in flight (2025-11-25).
    pub(crate) fn awaits_result(&self, call: CallId) -> bool {
        self.requests
            .values()
            .any(|(c, purpose)| *c == call && *purpose == Purpose::Result)
    }

    /// Whether `call` follows a task.
    pub(crate) fn follows(&self, call: CallId) -> bool {
        self.follows.contains_key(&call)
    }

    /// The task `call` follows.
    pub(crate) fn get(&self, call: CallId) -> Option<&Follow> {
        self.follows.get(&call)
    }

    /// Stops following `call`'s task.
    ///
    /// Returns the follow and the ids of its requests still in flight (to be ended: no call
    /// waits for them any more).
    pub(crate) fn stop(&mut self, call: CallId) -> Option<(Follow, Vec<i64>)> {
        let follow = self.follows.remove(&call)?;
        let mut pending = Vec::new();
        self.requests.retain(|id, (c, _)| {
            let mine = *c == call;
            if mine {
                pending.push(*id);
            }
            !mine
        });
        pending.sort_unstable();
        self.inputs.retain(|_, (c, _)| *c != call);
        Some((follow, pending))
    }

    /// Every followed call, in order, and forgets them all (the connection ended).
    pub(crate) fn drain(&mut self) -> Vec<CallId> {
        let mut calls: Vec<CallId> = self.follows.drain().map(|(c, _)| c).collect();
        calls.sort_unstable();
        self.requests.clear();
        self.inputs.clear();
        calls
    }

    /// A request sent for `call`'s task.
    pub(crate) fn sent(&mut self, id: i64, call: CallId, purpose: Purpose) {
        self.requests.insert(id, (call, purpose));
        if let Some(f) = self.follows.get_mut(&call) {
            f.next_poll = None;
        }
    }

    /// Whether request `id` was one of a task's; which, and why.
    pub(crate) fn take_request(&mut self, id: i64) -> Option<(CallId, Purpose)> {
        self.requests.remove(&id)
    }

    /// The earliest moment something is due: a poll, a TTL, a `max_total`.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        self.follows
            .values()
            .flat_map(|f| [f.next_poll, f.expires, f.deadline])
            .flatten()
            .min()
    }

    /// What is due at `now`: calls whose task expired (with the error), and calls to poll.
    pub(crate) fn due(&mut self, now: Instant) -> (Vec<(CallId, CallError)>, Vec<CallId>) {
        let mut ended = Vec::new();
        let mut polls = Vec::new();
        for f in self.follows.values_mut() {
            let expired = f.expires.is_some_and(|t| t <= now);
            let over = f.deadline.is_some_and(|t| t <= now);
            if expired || over {
                let reason = if expired {
                    "its time to live ran out before it finished"
                } else {
                    "the call's overall time limit passed before it finished"
                };
                let error = CallError::Task {
                    task_id: f.task_id.clone(),
                    status: f.last.as_ref().map(|l| l.0.clone()).unwrap_or_default(),
                    reason: reason.into(),
                };
                ended.push((f.call, error));
            } else if f.next_poll.is_some_and(|t| t <= now) {
                f.next_poll = None;
                polls.push(f.call);
            }
        }
        ended.sort_by_key(|(c, _)| *c);
        polls.sort_unstable();
        (ended, polls)
    }

    /// A report of `call`'s task (a `tasks/get` answer, 2026 or 2025 shape): what follows.
    pub(crate) fn report(
        &mut self,
        now: Instant,
        call: CallId,
        result: &RawJson,
        caps: &ClientCapabilities,
    ) -> Next {
        let Some(f) = self.follows.get_mut(&call) else {
            return Next::Wait;
        };
        let fields: Fields = match result.parse() {
            Ok(fields) => fields,
            Err(e) => {
                return Next::End(
                    Err(CallError::InvalidResult(format!("tasks/get: {e}"))),
                    None,
                )
            }
        };
        if fields.task_id != f.task_id {
            return Next::End(
                Err(CallError::InvalidResult(format!(
                    "tasks/get answered for task {:?}, not {:?}",
                    fields.task_id, f.task_id
                ))),
                None,
            );
        }
        if let Some(poll) = fields.poll() {
            f.poll = poll.max(MIN_POLL);
        }
        let now_status = (fields.status.clone(), fields.status_message.clone());
        let changed = f.last.as_ref() != Some(&now_status);
        f.last = Some(now_status);
        if changed {
            f.told += 1;
        }
        let told = changed.then(|| fields.status(f.told));
        let shape = f.shape;
        match (fields.status.as_str(), shape) {
            ("completed" | "failed" | "cancelled" | "input_required", Shape::Utility) => {
                Next::FetchResult(told)
            }
            ("completed", Shape::Extension) => match fields.result {
                Some(r) => Next::End(Ok(RawJson::from(r)), told),
                None => Next::End(
                    Err(CallError::InvalidResult(
                        "tasks/get: a completed task without its result".into(),
                    )),
                    told,
                ),
            },
            ("failed", Shape::Extension) => match fields.error {
                Some(e) => Next::End(Err(CallError::from_server(e)), told),
                None => Next::End(
                    Err(CallError::InvalidResult(
                        "tasks/get: a failed task without its error".into(),
                    )),
                    told,
                ),
            },
            ("cancelled", Shape::Extension) => Next::End(
                Err(CallError::Task {
                    task_id: fields.task_id,
                    status: fields.status,
                    reason: fields
                        .status_message
                        .unwrap_or_else(|| "the server cancelled it".into()),
                }),
                told,
            ),
            ("input_required", Shape::Extension) => {
                let requests = fields.input_requests.unwrap_or_default();
                match self.surface(call, requests, caps) {
                    Ok(surfaced) if surfaced.is_empty() => {
                        // Nothing new: look again later, unless inputs are still awaited.
                        let awaiting = self.follows.get(&call).is_some_and(|f| f.awaited > 0);
                        if !awaiting {
                            self.schedule(now, call);
                        }
                        told.map_or(Next::Wait, Next::Status)
                    }
                    Ok(surfaced) => Next::Inputs(surfaced, told),
                    Err(e) => Next::Abandon(e, told),
                }
            }
            _ => {
                self.schedule(now, call);
                told.map_or(Next::Wait, Next::Status)
            }
        }
    }

    /// The call that follows the task named in a pushed status, if any.
    pub(crate) fn call_of(&self, params: &RawJson) -> Option<CallId> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Id {
            task_id: String,
        }
        let id: Id = params.parse().ok()?;
        self.follows
            .values()
            .find(|f| f.task_id == id.task_id)
            .map(|f| f.call)
    }

    /// Schedules `call`'s next poll.
    pub(crate) fn schedule(&mut self, now: Instant, call: CallId) {
        if let Some(f) = self.follows.get_mut(&call) {
            f.next_poll = now.checked_add(f.poll);
        }
    }

    /// The input requests not surfaced before (a key is asked once over the task's life), as
    /// requests for the application.
    fn surface(
        &mut self,
        call: CallId,
        requests: InputRequests,
        caps: &ClientCapabilities,
    ) -> Result<Vec<ServerRequest>, CallError> {
        let f = self.follows.get_mut(&call).expect("followed");
        let mut surfaced = Vec::new();
        for (key, request) in requests {
            if !f.seen.insert(key.clone()) {
                continue;
            }
            let (method, params, fields) = read_input(&request);
            let method = method.as_str();
            let id = Id::Str(format!("task/{}/{key}", call.0));
            let r = match admit(caps, id.clone(), method, params, fields) {
                Ok(r) => r,
                Err(Refusal::Invalid(error)) => return Err(CallError::InputFailed { key, error }),
                Err(Refusal::Undeclared(_)) => {
                    return Err(CallError::InvalidResult(format!(
                    "the task asked for input {key:?} by {method:?}, which this client did not declare"
                )))
                }
            };
            self.inputs.insert(id, (call, key));
            surfaced.push(r);
        }
        f.awaited += surfaced.len();
        Ok(surfaced)
    }

    /// An answer for input request `id` (see [`InputAnswer`]); the answer back when `id` is no
    /// input of a task.
    pub(crate) fn answer(
        &mut self,
        id: &Id,
        answer: Result<RawJson, ErrorObject>,
    ) -> Result<InputAnswer, Result<RawJson, ErrorObject>> {
        let Some((call, key)) = self.inputs.remove(id) else {
            return Err(answer);
        };
        let Some(f) = self.follows.get_mut(&call) else {
            return Ok(InputAnswer::Waiting);
        };
        match answer {
            Ok(value) => {
                f.answers.insert(key, value.into_raw());
                f.awaited = f.awaited.saturating_sub(1);
                if f.awaited > 0 {
                    return Ok(InputAnswer::Waiting);
                }
                let answers = std::mem::take(&mut f.answers);
                let responses = serde_json::value::to_raw_value(&answers)
                    .map_err(|e| ErrorObject::new(-32603, e.to_string()));
                Ok(match responses {
                    Ok(responses) => InputAnswer::Update { call, responses },
                    Err(e) => InputAnswer::Failed(
                        call,
                        CallError::InputFailed {
                            key: String::new(),
                            error: e,
                        },
                    ),
                })
            }
            Err(error) => Ok(InputAnswer::Failed(
                call,
                CallError::InputFailed { key, error },
            )),
        }
    }
}

/// What an answer to a task's input did.
pub(crate) enum InputAnswer {
    /// Other inputs are still awaited.
    Waiting,
    /// All given: send `tasks/update` with these responses.
    Update {
        call: CallId,
        responses: Box<RawValue>,
    },
    /// The application could not give the input: the call ends (and the task is cancelled).
    Failed(CallId, CallError),
}
