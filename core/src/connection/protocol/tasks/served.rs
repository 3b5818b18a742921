//! Tasks the client runs for the server (2025-11-25, handshake era).
//!
//! A server's `elicitation/create` or `sampling/createMessage` whose params carry
//! `task: {ttl?}`, of a kind the client declared under `capabilities.tasks.requests`, is
//! answered at once with a `CreateTaskResult` and goes to the application as any request does;
//! the application's answer becomes the task's outcome (`completed`, or `failed` with its
//! JSON-RPC error). The server follows the task with `tasks/get`, `tasks/result` (answered when
//! the task ends, with the result tagged `io.modelcontextprotocol/related-task`, or the error),
//! `tasks/list` (paged) and `tasks/cancel`; `notifications/tasks/status` tells it of each
//! change of status.
//!
//! Every task ends once: from `working` to `completed`, `failed` or `cancelled`, and no further.
//! The application's answer for a task cancelled, or deleted at the end of its TTL, is dropped,
//! and the application is told its request was abandoned.
//!
//! Bounds, whatever the server sends: at most [`Limits::max_served_tasks`] tasks are kept, of
//! any status (a cancelled task, or one whose result was delivered, makes room for a new one;
//! past that a task-augmented request is refused with a JSON-RPC error); a task is deleted when
//! its TTL has run out (the server's, kept within [`MIN_TTL`]..=[`MAX_TTL`]); a `tasks/result`
//! that waits counts against the engine's cap on the server's requests.
//!
//! Time is an input: deadlines come from the `now` given, and the wall-clock timestamps
//! (`createdAt`, `lastUpdatedAt`) from the wall clock the driver gave once
//! ([`ServedTasks::set_wall_clock`]) plus the time gone since.
//!
//! [`Limits::max_served_tasks`]: crate::Limits::max_served_tasks

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crate::jsonrpc::{codes, ErrorObject, Id, RawJson};
use crate::rpc::Responded;
use crate::types::ClientCapabilities;

/// A task's time to live when the server asks for none.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(10 * 60);
/// The shortest time to live granted.
pub(crate) const MIN_TTL: Duration = Duration::from_secs(1);
/// The longest time to live granted: a task is deleted an hour after it was made at the latest.
pub(crate) const MAX_TTL: Duration = Duration::from_secs(60 * 60);
/// The poll interval suggested to the server: the application's answer (a person's, a
/// model's) takes seconds.
const POLL_INTERVAL_MS: u64 = 1000;
/// How many tasks one `tasks/list` page holds.
pub(crate) const LIST_PAGE: usize = 32;
/// The `_meta` key that ties a message to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// The prefix of the task ids made here.
const ID_PREFIX: &str = "task-";

/// What the store asks of the connection, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Effect {
    /// Answer the server's request.
    Respond(Id, Result<RawJson, ErrorObject>),
    /// Send `notifications/tasks/status` with these params.
    Status(RawJson),
    /// The application's answer to this request of the server's is no longer wanted: its task
    /// was cancelled, or deleted at the end of its TTL.
    Abandoned {
        /// The server's request.
        request: Id,
        /// Why.
        reason: String,
    },
}

/// A task's status: it begins `working` and ends in one of the three others, for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Working,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }
}

/// One task run for the server.
#[derive(Debug)]
struct Task {
    id: String,
    status: Status,
    message: Option<String>,
    /// Wall-clock times, in milliseconds since the Unix epoch.
    created: u64,
    updated: u64,
    ttl: Duration,
    /// When the task is deleted (`None`: past the end of `Instant`, never).
    expires: Option<Instant>,
    /// The server's request the application answers, until it has.
    handler: Option<Id>,
    /// The request's result (tagged with the task) or error, once the application answered.
    outcome: Option<Result<RawJson, ErrorObject>>,
    /// Whether the outcome went out in answer to a `tasks/result`.
    delivered: bool,
    /// `tasks/result` requests waiting for the task to end.
    waiters: Vec<Id>,
}

/// The tasks run for the server over one connection.
///
/// Task ids are `task-1`, `task-2`, … in the order made, so the core needs no randomness. The
/// spec asks for unguessable ids only where tasks cannot be bound to the party that made them;
/// these are bound to the connection: only the server at its other end can name them, and it is
/// the one party that makes them.
#[derive(Debug, Default)]
pub(crate) struct ServedTasks {
    /// By number, in the order made.
    tasks: BTreeMap<u64, Task>,
    /// The server's requests whose answer the application owes, with their task's number. The
    /// task may be gone (deleted at the end of its TTL): the id stays taken until the answer
    /// comes, so that one id never stands for two requests the application holds. Keys come
    /// from the peer, so the map keeps std's randomly seeded hasher.
    handlers: HashMap<Id, u64>,
    /// The number of the last task made.
    last: u64,
    /// The wall clock: what it read at an instant (milliseconds since the Unix epoch).
    clock: Option<(Instant, u64)>,
    effects: VecDeque<Effect>,
}

/// Which part of the client's `tasks` capability declares `method`, if it is a method of
/// tasks.
fn tasks_capability(method: &str) -> Option<&'static str> {
    match method {
        "tasks/get" | "tasks/result" => Some(""),
        "tasks/list" => Some("/list"),
        "tasks/cancel" => Some("/cancel"),
        _ => None,
    }
}

/// Whether the client's capabilities declare `pointer` (within `tasks`).
fn declares(caps: &ClientCapabilities, pointer: &str) -> bool {
    caps.extra
        .get("tasks")
        .filter(|t| t.is_object())
        .is_some_and(|t| t.pointer(pointer).is_some())
}

/// Whether `method` is one of the tasks methods the client serves: the client declared
/// tasks at all (a method it did not declare is then refused as unknown, by [`ServedTasks::serve`]).
pub(crate) fn is_tasks_method(caps: &ClientCapabilities, method: &str) -> bool {
    tasks_capability(method).is_some() && declares(caps, "")
}

/// Whether a server's request asks to run as a task, of a kind the client declared: then
/// `Some` with the TTL it asks for (in milliseconds), if any. A request of a kind not
/// declared is served as a plain one, as the spec asks.
pub(crate) fn asks_for_task(
    caps: &ClientCapabilities,
    method: &str,
    params: &Value,
) -> Option<Option<u64>> {
    let pointer = match method {
        "elicitation/create" => "/requests/elicitation/create",
        "sampling/createMessage" => "/requests/sampling/createMessage",
        _ => return None,
    };
    let task = params.get("task")?.as_object()?;
    declares(caps, pointer).then(|| task.get("ttl").and_then(Value::as_u64))
}

impl ServedTasks {
    /// The wall clock read `unix_millis` (milliseconds since the Unix epoch) at `now`.
    pub(crate) fn set_wall_clock(&mut self, now: Instant, unix_millis: u64) {
        self.clock = Some((now, unix_millis));
    }

    /// The wall-clock time at `now`, in milliseconds since the Unix epoch. Without a wall clock
    /// given, the first task's creation stands for the epoch.
    fn wall(&mut self, now: Instant) -> u64 {
        let (at, millis) = *self.clock.get_or_insert((now, 0));
        let since = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        match now.checked_duration_since(at) {
            Some(later) => millis.saturating_add(since(later)),
            None => millis.saturating_sub(since(at.saturating_duration_since(now))),
        }
    }

    /// Whether `id` is a request of the server's whose answer the application still owes.
    pub(crate) fn is_owed(&self, id: &Id) -> bool {
        self.handlers.contains_key(id)
    }

    /// How many places are taken: every task kept, and every answer owed for a task deleted.
    fn taken(&self) -> usize {
        let orphans = self
            .handlers
            .values()
            .filter(|n| !self.tasks.contains_key(n))
            .count();
        self.tasks.len() + orphans
    }

    /// Makes a task for the server's request `request`, which asks for `ttl` milliseconds:
    /// its `CreateTaskResult`, or the error that refuses it (no room left).
    pub(crate) fn create(
        &mut self,
        now: Instant,
        request: &Id,
        ttl: Option<u64>,
        limit: usize,
    ) -> Result<RawJson, ErrorObject> {
        if self.taken() >= limit {
            self.make_room();
        }
        let number = self.last.checked_add(1).filter(|_| self.taken() < limit);
        let Some(number) = number else {
            return Err(ErrorObject::new(
                codes::INTERNAL_ERROR,
                format!(
                    "too many tasks: the client keeps at most {limit} (a cancelled task, or one \
                     whose result was fetched, makes room)"
                ),
            ));
        };
        self.last = number;
        let ttl = ttl
            .map_or(DEFAULT_TTL, Duration::from_millis)
            .clamp(MIN_TTL, MAX_TTL);
        let stamp = self.wall(now);
        let task = Task {
            id: format!("{ID_PREFIX}{number}"),
            status: Status::Working,
            message: None,
            created: stamp,
            updated: stamp,
            ttl,
            expires: now.checked_add(ttl),
            handler: Some(request.clone()),
            outcome: None,
            delivered: false,
            waiters: Vec::new(),
        };
        let created = raw(&json!({ "task": fields(&task) }));
        self.tasks.insert(number, task);
        self.handlers.insert(request.clone(), number);
        Ok(created)
    }

    /// Deletes the oldest task that may go before its TTL: a cancelled one, or one whose
    /// outcome the server has fetched (never one whose answer the application still owes).
    fn make_room(&mut self) {
        let spare = self.tasks.iter().find_map(|(n, t)| {
            let done = t.status == Status::Cancelled || t.delivered;
            (done && t.handler.is_none()).then_some(*n)
        });
        if let Some(n) = spare {
            self.tasks.remove(&n);
        }
    }

    /// The application answered the server's request `id`. `Err` gives the answer back when
    /// `id` is no task's.
    pub(crate) fn answer(
        &mut self,
        now: Instant,
        id: &Id,
        answer: Result<RawJson, ErrorObject>,
    ) -> Result<Responded, Result<RawJson, ErrorObject>> {
        let Some(number) = self.handlers.remove(id) else {
            return Err(answer);
        };
        let Some(task) = self.tasks.get_mut(&number) else {
            // Deleted at the end of its TTL: nobody asks for the answer any more.
            return Ok(Responded::SuppressedAfterCancel);
        };
        task.handler = None;
        if task.status != Status::Working {
            return Ok(Responded::SuppressedAfterCancel);
        }
        let (status, message, outcome) = match answer {
            Ok(result) => (Status::Completed, None, Ok(related(result, &task.id))),
            Err(error) => (Status::Failed, Some(error.message.clone()), Err(error)),
        };
        task.outcome = Some(outcome);
        self.end(now, number, status, message);
        Ok(Responded::TaskResult)
    }

    /// Moves a working task to its terminal `status`: the server is told, and the
    /// `tasks/result`s waiting are answered.
    fn end(&mut self, now: Instant, number: u64, status: Status, message: Option<String>) {
        let stamp = self.wall(now);
        let Some(task) = self.tasks.get_mut(&number) else {
            return;
        };
        debug_assert_eq!(task.status, Status::Working, "a task ends once");
        task.status = status;
        task.message = message;
        task.updated = stamp;
        self.effects.push_back(Effect::Status(raw(&fields(task))));
        let waiters = std::mem::take(&mut task.waiters);
        if !waiters.is_empty() {
            task.delivered = true;
        }
        for waiter in waiters {
            let outcome = final_outcome(task);
            self.effects.push_back(Effect::Respond(waiter, outcome));
        }
    }

    /// One of the tasks methods, from the server: its answer now, or (`tasks/result` of a task
    /// still working) when the task ends.
    pub(crate) fn serve(
        &mut self,
        now: Instant,
        id: Id,
        method: &str,
        params: &Value,
        caps: &ClientCapabilities,
    ) {
        let answer = match tasks_capability(method) {
            Some(pointer) if declares(caps, pointer) => {
                self.serve_declared(now, &id, method, params)
            }
            _ => Some(Err(ErrorObject::new(
                codes::METHOD_NOT_FOUND,
                format!("method not found: {method} (not declared by the client)"),
            ))),
        };
        if let Some(answer) = answer {
            self.effects.push_back(Effect::Respond(id, answer));
        }
    }

    fn serve_declared(
        &mut self,
        now: Instant,
        id: &Id,
        method: &str,
        params: &Value,
    ) -> Option<Result<RawJson, ErrorObject>> {
        if method == "tasks/list" {
            return Some(self.list(params));
        }
        let Some(task_id) = params.get("taskId").and_then(Value::as_str) else {
            return Some(Err(invalid(format!("{method} needs a taskId (a string)"))));
        };
        let Some(number) = self.find(task_id) else {
            return Some(Err(invalid(format!(
                "task {task_id:?} not found (never made here, or deleted at the end of its ttl)"
            ))));
        };
        let task = self.tasks.get_mut(&number)?;
        Some(match method {
            "tasks/get" => Ok(raw(&fields(task))),
            "tasks/result" if task.status == Status::Working => {
                task.waiters.push(id.clone());
                return None;
            }
            "tasks/result" => {
                task.delivered = true;
                final_outcome(task)
            }
            _ => self.cancel(now, number),
        })
    }

    /// `tasks/cancel`: a working task is cancelled (the application's answer will be dropped);
    /// a task already ended is refused, as the spec asks.
    fn cancel(&mut self, now: Instant, number: u64) -> Result<RawJson, ErrorObject> {
        let task = self.tasks.get_mut(&number).ok_or_else(|| invalid("gone"))?;
        if task.status != Status::Working {
            return Err(invalid(format!(
                "cannot cancel task {}: already in terminal status {:?}",
                task.id,
                task.status.word()
            )));
        }
        if let Some(request) = task.handler.clone() {
            let reason = format!("the server cancelled task {}", task.id);
            self.effects
                .push_back(Effect::Abandoned { request, reason });
        }
        let message = Some("The task was cancelled by request.".to_owned());
        self.end(now, number, Status::Cancelled, message);
        let task = self.tasks.get(&number).ok_or_else(|| invalid("gone"))?;
        Ok(raw(&fields(task)))
    }

    /// `tasks/list`: a page of every task kept, oldest first; the cursor is the number of the
    /// last task of the page before.
    fn list(&self, params: &Value) -> Result<RawJson, ErrorObject> {
        let after = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(c)) => c
                .parse::<u64>()
                .ok()
                .filter(|n| *n <= self.last && c == &n.to_string())
                .ok_or_else(|| invalid(format!("invalid cursor {c:?}")))?,
            Some(_) => return Err(invalid("invalid cursor: not a string")),
        };
        let mut page = Vec::new();
        let mut rest = self.tasks.range(after.saturating_add(1)..);
        let mut last = None;
        for (n, task) in rest.by_ref().take(LIST_PAGE) {
            page.push(fields(task));
            last = Some(*n);
        }
        let mut result = json!({ "tasks": page });
        if let (Some(last), Some(_)) = (last, rest.next()) {
            result["nextCursor"] = Value::from(last.to_string());
        }
        Ok(raw(&result))
    }

    /// The number of the task named `task_id`.
    fn find(&self, task_id: &str) -> Option<u64> {
        let number = task_id.strip_prefix(ID_PREFIX)?.parse::<u64>().ok()?;
        self.tasks
            .get(&number)
            .filter(|t| t.id == task_id)
            .map(|_| number)
    }

    /// The server cancelled its request `id`: a `tasks/result` waiting is forgotten. Whether
    /// it was one.
    pub(crate) fn forget_waiter(&mut self, id: &Id) -> bool {
        self.tasks.values_mut().any(|t| {
            let before = t.waiters.len();
            t.waiters.retain(|w| w != id);
            t.waiters.len() != before
        })
    }

    /// When the next task is deleted.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        self.tasks.values().filter_map(|t| t.expires).min()
    }

    /// Deletes every task whose TTL has run out by `now`, whatever its status: a `tasks/result`
    /// still waiting is answered with an error, and the application's answer, if still owed,
    /// is abandoned.
    pub(crate) fn expire(&mut self, now: Instant) {
        let due: Vec<u64> = self
            .tasks
            .iter()
            .filter(|(_, t)| t.expires.is_some_and(|at| at <= now))
            .map(|(n, _)| *n)
            .collect();
        for number in due {
            let Some(task) = self.tasks.remove(&number) else {
                continue;
            };
            let reason = format!(
                "task {} reached the end of its ttl and was deleted",
                task.id
            );
            for waiter in task.waiters {
                self.effects
                    .push_back(Effect::Respond(waiter, Err(invalid(reason.clone()))));
            }
            if let Some(request) = task.handler {
                self.effects
                    .push_back(Effect::Abandoned { request, reason });
            }
        }
    }

    /// The connection closed: every task goes, unanswered (nothing more can be sent).
    pub(crate) fn close(&mut self) {
        *self = ServedTasks {
            clock: self.clock,
            last: self.last,
            ..ServedTasks::default()
        };
    }

    /// The next thing the connection must do.
    pub(crate) fn poll_effect(&mut self) -> Option<Effect> {
        self.effects.pop_front()
    }
}

/// What `tasks/result` returns for a task that has ended: what the request would have returned.
fn final_outcome(task: &Task) -> Result<RawJson, ErrorObject> {
    match &task.outcome {
        Some(outcome) => outcome.clone(),
        None => Err(ErrorObject::new(
            codes::INTERNAL_ERROR,
            format!("task {} was cancelled: it has no result", task.id),
        )),
    }
}

/// The task as the wire shows it (`tasks/get`, `tasks/list`, `tasks/cancel`, the status
/// notification, and inside `CreateTaskResult`).
fn fields(task: &Task) -> Value {
    let ttl = u64::try_from(task.ttl.as_millis()).unwrap_or(u64::MAX);
    let mut v = json!({
        "taskId": task.id,
        "status": task.status.word(),
        "createdAt": rfc3339(task.created),
        "lastUpdatedAt": rfc3339(task.updated),
        "ttl": ttl,
        "pollInterval": POLL_INTERVAL_MS,
    });
    if let Some(message) = &task.message {
        v["statusMessage"] = Value::from(message.as_str());
    }
    v
}

/// `result` with `_meta["io.modelcontextprotocol/related-task"]` naming the task (the spec
/// asks it of `tasks/result`'s answer); a result that is no object goes as it is.
fn related(result: RawJson, task_id: &str) -> RawJson {
    let Ok(mut object) = result.parse::<Map<String, Value>>() else {
        return result;
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.insert(RELATED_TASK.into(), json!({ "taskId": task_id }));
    }
    raw(&object)
}

/// `unix_millis` as an RFC 3339 (ISO 8601) time in UTC, to the millisecond:
/// `2026-12-02T04:26:55.123Z`.
fn rfc3339(unix_millis: u64) -> String {
    let secs = unix_millis / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let of_day = secs % 86_400;
    // Days since 1970-01-01 to a date of the proleptic Gregorian calendar, counted in eras of
    // 400 years that begin on 1 March (so that the leap day ends each year).
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let march_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * march_month + 2) / 5 + 1;
    let month = if march_month < 10 {
        march_month + 3
    } else {
        march_month - 9
    };
    let year = era * 400 + year_of_era + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60,
        unix_millis % 1000
    )
}

fn invalid(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(codes::INVALID_PARAMS, message)
}

fn raw<T: serde::Serialize + ?Sized>(value: &T) -> RawJson {
    RawJson::new(value).expect("JSON values serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_as_rfc_3339_in_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(1_764_064_800_123), "2025-11-25T10:00:00.123Z");
        assert_eq!(rfc3339(4_107_542_399_999), "2100-02-28T23:59:59.999Z");
        assert_eq!(rfc3339(4_107_542_400_000), "2100-03-01T00:00:00.000Z");
        // The largest time does not overflow.
        assert!(rfc3339(u64::MAX).ends_with(".615Z"));
    }

    #[test]
    fn the_wall_clock_is_an_input_and_runs_with_the_instants_given() {
        let t0 = crate::test_support::epoch();
        let mut s = ServedTasks::default();
        s.set_wall_clock(t0 + Duration::from_secs(10), 1_764_064_800_000);
        assert_eq!(
            s.wall(t0 + Duration::from_millis(10_250)),
            1_764_064_800_250
        );
        assert_eq!(s.wall(t0 + Duration::from_secs(9)), 1_764_064_799_000);
        // Without one, the first task's time stands for the epoch.
        let mut s = ServedTasks::default();
        assert_eq!(s.wall(t0), 0);
        assert_eq!(s.wall(t0 + Duration::from_secs(2)), 2_000);
    }

    #[test]
    fn a_result_is_tagged_with_its_task_whatever_its_meta() {
        let tagged = |text: &str| {
            let result = RawJson::from_string(text.to_owned()).unwrap();
            related(result, "task-1").parse::<Value>().unwrap()
        };
        let want = json!({"taskId": "task-1"});
        assert_eq!(
            tagged(r#"{"action":"decline"}"#)["_meta"][RELATED_TASK],
            want
        );
        let kept = tagged(r#"{"action":"accept","_meta":{"k":1}}"#);
        assert_eq!(kept["_meta"]["k"], 1);
        assert_eq!(kept["_meta"][RELATED_TASK], want);
        assert_eq!(tagged(r#"{"_meta":3}"#)["_meta"][RELATED_TASK], want);
        assert_eq!(tagged("[1]"), json!([1]));
    }

    #[test]
    fn a_task_is_asked_for_only_with_a_task_object_and_the_kind_declared() {
        let caps = ClientCapabilities::default()
            .with_elicitation(false)
            .with_tasks();
        let e = "elicitation/create";
        assert_eq!(
            asks_for_task(&caps, e, &json!({"task": {"ttl": 5}})),
            Some(Some(5))
        );
        assert_eq!(asks_for_task(&caps, e, &json!({"task": {}})), Some(None));
        assert_eq!(asks_for_task(&caps, e, &json!({"task": true})), None);
        assert_eq!(asks_for_task(&caps, e, &json!({})), None);
        let s = "sampling/createMessage";
        assert_eq!(asks_for_task(&caps, s, &json!({"task": {}})), None);
        assert_eq!(
            asks_for_task(&caps, "roots/list", &json!({"task": {}})),
            None
        );
        assert!(is_tasks_method(&caps, "tasks/result"));
        assert!(!is_tasks_method(&caps, "tasks/update"));
        assert!(!is_tasks_method(
            &ClientCapabilities::default().with_elicitation(false),
            "tasks/get"
        ));
    }
}
