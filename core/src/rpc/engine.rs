//! The engine: one connection's request state, driven by inputs, commands and time.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::inbound::{InboundTable, Responded};
use super::limits::{EngineError, Limits};
use super::notifications::{AppNotification, NotificationQueue};
use super::options::{ProgressToken, RequestOptions};
use super::outcome::{Deadline, EndedAs, HeldTimeout, LocalError, Outcome};
use super::output::{Diagnostic, Output, Progress, ResponseFor};
use super::pending::{EndedRecord, IdMap, Pending};
use super::shrink::{shrink_if_sparse_map, shrink_if_sparse_queue};
use super::timers::{Timer, Timers};
use crate::error::Closed;
#[cfg(any(test, feature = "fuzzing"))]
use crate::jsonrpc::Parsed;
use crate::jsonrpc::{codes, ErrorObject, Id, Message, Notification, RawJson, Request, Response};

/// Inputs and commands tolerated while outputs stay undrained before a debug build objects:
/// enough for a caller that batches a few calls, few enough to catch one that never drains.
const UNDRAINED_CALLS_LIMIT: u32 = 256;

const PROGRESS: &str = "notifications/progress";
const CANCELLED: &str = "notifications/cancelled";
const LISTEN: &str = "subscriptions/listen";

/// The request engine of one connection. See the [module documentation](super) for the drive
/// rule and the guarantees.
#[derive(Debug)]
pub struct Engine {
    config: Limits,
    next_id: i64,
    pending: IdMap<Pending>,
    timers: Timers,
    /// Active progress tokens and the request each belongs to.
    progress: HashMap<ProgressToken, i64>,
    ended: EndedRecord,
    inbound: InboundTable,
    notifications: NotificationQueue,
    outputs: VecDeque<Output>,
    /// What requests not yet on the wire wait for, as the transport said
    /// ([`hold`](Self::hold)).
    held_by: Option<&'static str>,
    /// The last request whose deadline passed while it was held (never sent), until the
    /// transport takes it ([`take_held_timeout`](Self::take_held_timeout)).
    held_timeout: Option<HeldTimeout>,
    /// Set once, by `close`: the engine is then closed for good.
    closed: Option<Closed>,
    /// Inputs and commands that found outputs left undrained since the queue was last empty.
    undrained_calls: u32,
}

/// A snapshot of what an engine holds, for tests, metrics and leak checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct EngineStats {
    /// Our requests still pending.
    pub pending: usize,
    /// Entries in the timer heap, live or stale (bounded by twice the live deadlines plus a
    /// constant; zero when nothing is pending).
    pub timers: usize,
    /// Active progress tokens.
    pub progress_tokens: usize,
    /// The peer's requests awaiting our answer.
    pub inbound: usize,
    /// Outputs not yet taken by [`Engine::poll_output`].
    pub outputs: usize,
    /// Notifications queued for [`Engine::poll_notification`].
    pub notifications: usize,
    /// Notifications dropped unread since the engine was made.
    pub notifications_dropped: u64,
    /// Ended request ids remembered.
    pub ended_remembered: usize,
}

/// `notifications/cancelled` params, as we send them.
#[derive(Serialize)]
struct CancelParams<'a> {
    #[serde(rename = "requestId")]
    request_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

/// `notifications/cancelled` params, as the peer sends them.
#[derive(Deserialize)]
struct PeerCancelParams {
    #[serde(rename = "requestId")]
    request_id: Id,
    #[serde(default)]
    reason: Option<String>,
}

/// `notifications/progress` params.
#[derive(Deserialize)]
struct ProgressParams {
    #[serde(rename = "progressToken")]
    token: ProgressToken,
    progress: f64,
    #[serde(default)]
    total: Option<f64>,
    #[serde(default)]
    message: Option<String>,
}

impl Default for Engine {
    fn default() -> Self {
        Self::new(Limits::default())
    }
}

impl Engine {
    /// An engine with the given caps.
    pub fn new(config: Limits) -> Self {
        Engine {
            ended: EndedRecord::new(config.ended_record),
            notifications: NotificationQueue::new(config.max_notifications),
            config,
            next_id: 0,
            pending: IdMap::default(),
            timers: Timers::default(),
            progress: HashMap::new(),
            inbound: InboundTable::default(),
            outputs: VecDeque::new(),
            held_by: None,
            held_timeout: None,
            closed: None,
            undrained_calls: 0,
        }
    }

    // ----- getters -----

    /// The id the next [`request`](Self::request) will get, so a caller can write it into the
    /// params (for example as the progress token) before making the request.
    pub fn next_id(&self) -> i64 {
        self.next_id
    }

    /// Takes the next id without sending a request under it: for a caller that names
    /// something of its own (a call not yet sent) in the same space as the requests' ids.
    pub fn reserve_id(&mut self) -> Result<i64, EngineError> {
        let id = self.next_id;
        self.next_id = id.checked_add(1).ok_or(EngineError::IdsExhausted)?;
        Ok(id)
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.closed.is_some()
    }

    /// Whether our request `id` is still waiting for its end.
    pub fn is_pending(&self, id: i64) -> bool {
        self.pending.contains_key(&id)
    }

    /// The earliest deadline armed for our request `id` (its idle or its absolute one), while it
    /// is pending.
    pub fn deadline_of(&self, id: i64) -> Option<Instant> {
        let pending = self.pending.get(&id)?;
        [pending.idle, pending.total].into_iter().flatten().min()
    }

    /// What the engine holds now.
    pub fn stats(&self) -> EngineStats {
        EngineStats {
            pending: self.pending.len(),
            timers: self.timers.len(),
            progress_tokens: self.progress.len(),
            inbound: self.inbound.len(),
            outputs: self.outputs.len(),
            notifications: self.notifications.queued(),
            notifications_dropped: self.notifications.dropped_total(),
            ended_remembered: self.ended.len(),
        }
    }

    // ----- commands -----

    /// Sends a request: records it as pending with its deadlines (counted from `now`) and queues
    /// the [`Message::Request`] for the transport. Returns its id.
    ///
    /// A `&'static str` method is kept without copying, in the pending map and in the message.
    pub fn request(
        &mut self,
        now: Instant,
        method: impl Into<Cow<'static, str>>,
        params: Option<RawJson>,
        opts: RequestOptions,
    ) -> Result<i64, EngineError> {
        self.note_call();
        if let Some(closed) = &self.closed {
            return Err(EngineError::Closed(closed.clone()));
        }
        if self.pending.len() >= self.config.max_pending {
            return Err(EngineError::TooManyPending {
                limit: self.config.max_pending,
            });
        }
        if let Some(token) = &opts.progress_token {
            if self.progress.contains_key(token) {
                return Err(EngineError::ProgressTokenInUse(token.clone()));
            }
        }
        let id = self.next_id;
        self.next_id = id.checked_add(1).ok_or(EngineError::IdsExhausted)?;

        let method = method.into();
        let idle = now.checked_add(opts.timeout);
        let total = opts.max_total.and_then(|d| now.checked_add(d));
        if let Some(at) = idle {
            self.timers.arm(Timer {
                at,
                id,
                which: Deadline::Idle,
                generation: 0,
            });
        }
        if let Some(at) = total {
            self.timers.arm(Timer {
                at,
                id,
                which: Deadline::Total,
                generation: 0,
            });
        }
        if let Some(token) = &opts.progress_token {
            self.progress.insert(token.clone(), id);
        }
        self.outputs
            .push_back(Output::Send(Message::Request(Request {
                id: Id::Num(id),
                method: method.clone(),
                params,
            })));
        self.pending.insert(
            id,
            Pending {
                method,
                origin: opts.origin,
                idle_timeout: opts.timeout,
                max_total: opts.max_total,
                idle,
                idle_generation: 0,
                total,
                reset_on_progress: opts.reset_on_progress,
                progress_seen: false,
                last_progress: None,
                cancel_on_wire: opts.cancel_on_wire,
                progress_token: opts.progress_token,
                on_wire: false,
            },
        );
        Ok(id)
    }

    /// The transport is about to put request `id` on the wire: `true` while it is pending,
    /// and from now on ending it early tells the peer (`notifications/cancelled`). `false`
    /// once it has ended (timed out, cancelled, the connection closing) while it waited to be
    /// sent: it must not go, and no cancellation is sent for it.
    ///
    /// This is the rule of at most once: a request goes on the wire only while it is pending.
    pub fn leave(&mut self, id: i64) -> bool {
        match self.pending.get_mut(&id) {
            Some(p) => {
                p.on_wire = true;
                true
            }
            None => false,
        }
    }

    /// What the transport holds requests back for, now (`None`: nothing; for example "for
    /// the server to answer notifications/initialized"): a request whose deadline passes before
    /// it left ends as [`LocalError::NotSent`] saying so.
    pub fn hold(&mut self, behind: Option<&'static str>) {
        self.held_by = behind;
    }

    /// The last request whose deadline passed while the transport held it back (since the
    /// last call): what it was and how long it waited. A transport whose hold is its own wait
    /// (for `notifications/initialized`) learns that the wait has lasted as long as a caller
    /// would wait.
    pub(crate) fn take_held_timeout(&mut self) -> Option<HeldTimeout> {
        self.held_timeout.take()
    }

    /// Queues a notification for the peer.
    pub fn notify(
        &mut self,
        now: Instant,
        method: impl Into<String>,
        params: Option<RawJson>,
    ) -> Result<(), EngineError> {
        let _ = now;
        self.note_call();
        if let Some(closed) = &self.closed {
            return Err(EngineError::Closed(closed.clone()));
        }
        self.outputs
            .push_back(Output::Send(Message::notification(method, params)));
        Ok(())
    }

    /// Ends request `id` as cancelled and, unless it is `initialize` or was made with
    /// [`RequestOptions::cancel_on_wire`] off, queues `notifications/cancelled` for the peer.
    /// Any response that still arrives for it becomes a diagnostic.
    pub fn cancel(
        &mut self,
        now: Instant,
        id: i64,
        reason: Option<String>,
    ) -> Result<(), EngineError> {
        let _ = now;
        self.note_call();
        if let Some(closed) = &self.closed {
            return Err(EngineError::Closed(closed.clone()));
        }
        let pending = self
            .pending
            .remove(&id)
            .ok_or(EngineError::NotPending(id))?;
        if pending.cancels_on_wire() {
            self.send_cancel(id, reason.as_deref());
        }
        self.end(id, pending, Err(LocalError::Cancelled { reason }));
        self.tidy();
        Ok(())
    }

    /// Ends request `id` with a local error the transport observed (the stream carrying it was
    /// lost, the session expired, …). Nothing is sent to the peer.
    pub fn fail(&mut self, now: Instant, id: i64, error: LocalError) -> Result<(), EngineError> {
        let _ = now;
        self.note_call();
        if let Some(closed) = &self.closed {
            return Err(EngineError::Closed(closed.clone()));
        }
        let pending = self
            .pending
            .remove(&id)
            .ok_or(EngineError::NotPending(id))?;
        self.end(id, pending, Err(error));
        self.tidy();
        Ok(())
    }

    /// Answers the peer's request `id`, once. If the peer cancelled it, the answer is accepted
    /// but not sent ([`Responded::SuppressedAfterCancel`]). An id that is unknown or already
    /// answered is [`EngineError::UnknownInbound`].
    pub fn respond(
        &mut self,
        now: Instant,
        id: &Id,
        answer: Result<RawJson, ErrorObject>,
    ) -> Result<Responded, EngineError> {
        let _ = now;
        self.note_call();
        if let Some(closed) = &self.closed {
            return Err(EngineError::Closed(closed.clone()));
        }
        let entry = self
            .inbound
            .take(id)
            .ok_or_else(|| EngineError::UnknownInbound(id.clone()))?;
        if entry.cancelled {
            return Ok(Responded::SuppressedAfterCancel);
        }
        self.outputs
            .push_back(Output::Send(Message::Response(Response {
                id: Some(id.clone()),
                outcome: answer,
            })));
        Ok(Responded::Sent)
    }

    /// Closes the engine for good: every pending request ends with [`LocalError::Closed`]
    /// carrying `reason`, then one [`Output::Closed`] follows. Nothing is sent to the peer (the
    /// transport is going away). Closing again does nothing.
    pub fn close(&mut self, now: Instant, reason: impl Into<Arc<str>>) {
        self.close_with(now, LocalError::Closed(Closed::new(reason)));
    }

    /// Like [`close`](Self::close), but every pending request ends with `error` (for example
    /// [`LocalError::SessionExpired`]).
    pub fn close_with(&mut self, now: Instant, error: LocalError) {
        let _ = now;
        self.note_call();
        if self.closed.is_some() {
            return;
        }
        let closed = match &error {
            LocalError::Closed(closed) => closed.clone(),
            other => Closed::new(other.to_string()),
        };
        self.closed = Some(closed.clone());
        let mut all: Vec<(i64, Pending)> = std::mem::take(&mut self.pending).into_iter().collect();
        // In id order, so that what a close produces does not depend on the hasher.
        all.sort_unstable_by_key(|(id, _)| *id);
        for (id, pending) in all {
            self.end(id, pending, Err(error.clone()));
        }
        self.progress = HashMap::new();
        self.inbound.clear();
        self.tidy();
        self.outputs.push_back(Output::Closed(closed));
    }

    /// Why the engine closed, once it has.
    pub fn closed(&self) -> Option<&Closed> {
        self.closed.as_ref()
    }

    // ----- inputs -----

    /// Takes one message the peer sent.
    pub fn handle_message(&mut self, now: Instant, message: Message) {
        self.note_call();
        self.input(now, message);
    }

    /// Takes one parsed JSON text: a message, or a batch whose elements are taken in order
    /// (an element that is not a message becomes [`Diagnostic::NotAMessage`]).
    #[cfg(any(test, feature = "fuzzing"))]
    pub fn handle_parsed(&mut self, now: Instant, parsed: Parsed<Message>) {
        self.note_call();
        match parsed {
            Parsed::Single(message) => self.input(now, message),
            Parsed::Batch(items) => {
                for item in items {
                    match item {
                        Ok(message) => self.input(now, message),
                        Err(e) => self.diagnose(Diagnostic::NotAMessage(e)),
                    }
                }
            }
        }
    }

    fn input(&mut self, now: Instant, message: Message) {
        match message {
            Message::Response(response) => self.on_response(response),
            other if self.closed.is_some() => self.diagnose(Diagnostic::AfterClose(other)),
            Message::Request(request) => self.on_request(request),
            Message::Notification(n) => self.on_notification(now, n),
        }
    }

    fn on_response(&mut self, response: Response) {
        let Some(id) = response.id else {
            self.diagnose(Diagnostic::ResponseWithoutId {
                reply: response.outcome.into(),
            });
            return;
        };
        if let Some(n) = id.as_i64() {
            if let Some(pending) = self.pending.remove(&n) {
                self.end(n, pending, Ok(response.outcome.into()));
                self.tidy();
                return;
            }
        }
        let status = self.response_for(&id);
        self.diagnose(Diagnostic::UnmatchedResponse {
            id,
            status,
            error: response.outcome.err(),
        });
    }

    /// What a response id that matches no pending request stands for.
    fn response_for(&self, id: &Id) -> ResponseFor {
        match id.as_i64() {
            Some(n) if (0..self.next_id).contains(&n) => self
                .ended
                .get(n)
                .map_or(ResponseFor::Forgotten, ResponseFor::Ended),
            _ => ResponseFor::NeverSent,
        }
    }

    fn on_request(&mut self, request: Request) {
        if self.inbound.contains(&request.id) {
            self.diagnose(Diagnostic::DuplicateInboundRequest {
                id: request.id,
                method: request.method.into_owned(),
            });
            return;
        }
        let limit = self.config.max_inbound;
        if self.inbound.len() >= limit {
            // A real request: it gets a real answer, unlike noise.
            let error = ErrorObject::new(
                codes::INTERNAL_ERROR,
                format!("too many concurrent requests from the server (limit {limit})"),
            );
            self.outputs.push_back(Output::Send(Message::error(
                Some(request.id.clone()),
                error,
            )));
            self.diagnose(Diagnostic::InboundRejected {
                id: request.id,
                method: request.method.into_owned(),
                limit,
            });
            return;
        }
        self.inbound.insert(request.id.clone());
        self.outputs.push_back(Output::InboundRequest(request));
    }

    fn on_notification(&mut self, now: Instant, n: Notification) {
        match n.method.as_str() {
            PROGRESS => self.on_progress(now, n),
            CANCELLED => self.on_peer_cancel(n),
            _ => self.notifications.push(n),
        }
    }

    fn on_progress(&mut self, now: Instant, n: Notification) {
        let Some(params) = n.params else {
            self.diagnose(Diagnostic::MalformedProgress {
                error: "no params".into(),
                params: None,
            });
            return;
        };
        let update: ProgressParams = match params.parse() {
            Ok(update) => update,
            Err(e) => {
                self.diagnose(Diagnostic::MalformedProgress {
                    error: e.to_string(),
                    params: Some(params),
                });
                return;
            }
        };
        let target = self.progress.get(&update.token).copied();
        let Some((id, pending)) = target.and_then(|id| self.pending.get_mut(&id).map(|p| (id, p)))
        else {
            self.diagnose(Diagnostic::UnknownProgressToken {
                token: update.token,
            });
            return;
        };
        if let Some(previous) = pending.last_progress.filter(|p| update.progress <= *p) {
            self.diagnose(Diagnostic::ProgressNotIncreasing {
                token: update.token,
                progress: update.progress,
                previous,
            });
            return;
        }
        pending.last_progress = Some(update.progress);
        let mut moved = false;
        pending.progress_seen = true;
        if pending.reset_on_progress {
            let idle = now.checked_add(pending.idle_timeout);
            if idle != pending.idle {
                if pending.idle.is_some() {
                    self.timers.disarmed(1);
                }
                pending.idle_generation = pending.idle_generation.wrapping_add(1);
                pending.idle = idle;
                if let Some(at) = idle {
                    self.timers.arm(Timer {
                        at,
                        id,
                        which: Deadline::Idle,
                        generation: pending.idle_generation,
                    });
                }
                moved = true;
            }
        }
        self.outputs.push_back(Output::Progress {
            id,
            progress: Progress {
                progress: update.progress,
                total: update.total,
                message: update.message,
            },
        });
        if moved {
            self.tidy();
        }
    }

    /// A cancel naming a request the peer sent us and we have not answered is surfaced as
    /// [`Output::InboundCancelled`]. Any other `notifications/cancelled` (a repeat, a race with
    /// our answer, malformed params, or in 2026 a server ending a `subscriptions/listen` stream
    /// of ours) goes to the notification queue like any notification, for the layer above.
    fn on_peer_cancel(&mut self, n: Notification) {
        let cancel = n
            .params
            .as_ref()
            .and_then(|p| p.parse::<PeerCancelParams>().ok());
        match cancel {
            Some(c) if self.inbound.cancel(&c.request_id) => {
                self.outputs.push_back(Output::InboundCancelled {
                    id: c.request_id,
                    reason: c.reason,
                });
            }
            // The one cancellation a server may send about our request: it ends a
            // `subscriptions/listen` (2026-07-28). Ids of other requests are the peer's own.
            Some(c)
                if c.request_id.as_i64().is_some_and(|id| {
                    self.pending.get(&id).is_some_and(|p| p.method == LISTEN)
                }) =>
            {
                let id = c.request_id.as_i64().expect("checked above");
                let pending = self.pending.remove(&id).expect("checked above");
                self.end(
                    id,
                    pending,
                    Err(LocalError::CancelledByPeer { reason: c.reason }),
                );
            }
            _ => self.notifications.push(n),
        }
    }

    // ----- time -----

    /// The earliest deadline held, if any: call [`handle_timeout`](Self::handle_timeout) when it
    /// passes.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }

    /// Fires every deadline `<= now`: each such request ends with [`LocalError::Timeout`] and,
    /// unless it is `initialize` or was made with [`RequestOptions::cancel_on_wire`] off, a
    /// `notifications/cancelled` is queued for it. Afterwards
    /// [`poll_timeout`](Self::poll_timeout) is later than `now`, or `None`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.note_call();
        while let Some(timer) = self.timers.pop_due(now) {
            let live = self
                .pending
                .get(&timer.id)
                .is_some_and(|p| p.is_live(&timer));
            if !live {
                continue;
            }
            self.timers.fired();
            let Some(mut pending) = self.pending.remove(&timer.id) else {
                continue;
            };
            match timer.which {
                Deadline::Idle => pending.idle = None,
                Deadline::Total => pending.total = None,
            }
            if pending.cancels_on_wire() {
                let reason = match timer.which {
                    Deadline::Idle => "request timed out",
                    Deadline::Total => "request exceeded its maximum total time",
                };
                self.send_cancel(timer.id, Some(reason));
            }
            let despite_progress = pending.progress_seen && !pending.reset_on_progress;
            let after = match timer.which {
                Deadline::Idle => pending.idle_timeout,
                Deadline::Total => pending.max_total.unwrap_or_default(),
            };
            let error = if pending.on_wire {
                LocalError::Timeout {
                    which: timer.which,
                    despite_progress,
                    method: pending.method.clone(),
                    after,
                }
            } else {
                if self.held_by.is_some() {
                    self.held_timeout = Some(HeldTimeout {
                        method: pending.method.clone(),
                        after,
                        which: timer.which,
                    });
                }
                let behind = self.held_by.unwrap_or("to be sent");
                let limit = match timer.which {
                    Deadline::Idle => "its timeout",
                    Deadline::Total => "its maximum total time",
                };
                LocalError::NotSent {
                    which: Some(timer.which),
                    reason: format!(
                        "{} waited {behind} for {} ({limit}) and was never sent",
                        pending.method,
                        super::outcome::DurationWords(after)
                    )
                    .into(),
                }
            };
            self.end(timer.id, pending, Err(error));
        }
        self.tidy();
        debug_assert!(
            self.poll_timeout().is_none_or(|t| t > now),
            "a fired deadline stayed armed"
        );
    }

    // ----- outputs -----

    /// The next output, in the order produced. Drain until `None` after every input and command.
    #[must_use = "outputs must be drained and acted on after every input or command"]
    pub fn poll_output(&mut self) -> Option<Output> {
        let out = self.outputs.pop_front();
        if out.is_none() {
            self.undrained_calls = 0;
            shrink_if_sparse_queue(&mut self.outputs);
        }
        out
    }

    /// The next notification from the peer for the application, oldest first. If some were
    /// dropped because the queue was full, one [`AppNotification::Dropped`] with their count
    /// comes first. Read at the application's pace: this queue is bounded and independent of
    /// [`poll_output`](Self::poll_output).
    #[must_use]
    pub fn poll_notification(&mut self) -> Option<AppNotification> {
        self.notifications.pop()
    }

    /// How many items [`poll_notification`](Self::poll_notification) would hand out now. A
    /// driver checks it after draining outputs to wake the application's reader.
    #[cfg(any(test, feature = "fuzzing"))]
    pub fn unread_notifications(&self) -> usize {
        self.notifications.unread()
    }

    // ----- internals -----

    /// Ends a request already removed from the pending table: releases its deadlines and
    /// token, remembers how it ended and queues its one outcome. Callers then call `tidy`.
    fn end(&mut self, id: i64, pending: Pending, outcome: Outcome) {
        self.timers.disarmed(pending.armed());
        if pending.on_wire && outcome.is_err() && self.closed.is_none() {
            self.outputs.push_back(Output::Withdraw { id });
        }
        if let Some(token) = &pending.progress_token {
            self.progress.remove(token);
        }
        self.ended.remember(id, EndedAs::of(&outcome));
        self.outputs.push_back(Output::Completed {
            id,
            method: pending.method,
            origin: pending.origin,
            outcome,
        });
    }

    /// Drops stale deadlines from the heap's top (and rebuilds it when they dominate), and gives
    /// back memory after a burst.
    fn tidy(&mut self) {
        let pending = &self.pending;
        self.timers
            .tidy(|t| pending.get(&t.id).is_some_and(|p| p.is_live(t)));
        shrink_if_sparse_map(&mut self.pending);
        shrink_if_sparse_map(&mut self.progress);
    }

    fn send_cancel(&mut self, id: i64, reason: Option<&str>) {
        let params = RawJson::new(&CancelParams {
            request_id: id,
            reason,
        })
        .ok();
        self.outputs
            .push_back(Output::Send(Message::notification(CANCELLED, params)));
    }

    fn diagnose(&mut self, diagnostic: Diagnostic) {
        self.outputs.push_back(Output::Diagnostic(diagnostic));
    }

    /// Counts calls made while outputs were left undrained, and objects in debug builds when
    /// the drive rule is plainly not followed.
    fn note_call(&mut self) {
        if !self.outputs.is_empty() {
            self.undrained_calls = self.undrained_calls.saturating_add(1);
        }
        debug_assert!(
            self.undrained_calls <= UNDRAINED_CALLS_LIMIT,
            "drive rule: drain poll_output() until None after every input or command"
        );
    }
}
