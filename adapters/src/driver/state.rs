//! The connection's state, shared by the [`Client`](crate::Client) handles and the loop under
//! one lock: the core's [`Connection`], one slot per call in flight, where the handshake stands,
//! the queues of notifications and events the application reads, and how the connection ended.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::task::Waker;

use mcpwire_core::jsonrpc::{ErrorObject, Id, RawJson};
use mcpwire_core::types::InitializeResult;
use mcpwire_core::{
    CallError, CallId, CallOutcome, ClientError, Closed, Connection, Event, HandlerFailure,
    IdHashing, LocalError, Progress, ServerNotification, ServerRequest,
};

use crate::contain::FailureLog;
use crate::error::Error;
use crate::http::counters::CounterCells;

/// How many progress updates wait in a call's slot for its caller at most; past it the oldest
/// are dropped (progress is cumulative: the latest tells where the call stands).
pub(crate) const MAX_QUEUED_PROGRESS: usize = 1024;

/// One call in flight.
pub(crate) struct Slot {
    pub(crate) outcome: Option<CallOutcome>,
    pub(crate) waker: Option<Waker>,
    /// Whether the caller has a progress callback: then updates wait here for it.
    pub(crate) wants_progress: bool,
    /// Progress updates not yet given to the caller's callback, oldest first: the caller runs
    /// its callback itself, outside every lock, before it takes the outcome.
    pub(crate) progress: VecDeque<Progress>,
    /// The call's span: its progress is told there.
    pub(crate) span: super::spans::CallSpan,
}

impl Slot {
    /// A call just issued, its span `span`.
    pub(crate) fn new(wants_progress: bool, span: super::spans::CallSpan) -> Slot {
        Slot {
            outcome: None,
            waker: None,
            wants_progress,
            progress: VecDeque::new(),
            span,
        }
    }

    /// A progress update for the call's span and the caller's callback; wakes the caller.
    pub(crate) fn progress(&mut self, update: Progress) {
        self.span.progress(&update);
        if !self.wants_progress {
            return;
        }
        if self.progress.len() == MAX_QUEUED_PROGRESS {
            self.progress.pop_front();
        }
        self.progress.push_back(update);
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }
}

/// What passes between the connection's loop and the host's handlers, which run as tasks of
/// their own in the driver's task, outside every lock: the server's requests to start, those
/// the server cancelled, the handlers' answers.
#[derive(Default)]
pub(crate) struct Inbound {
    /// Each with its span.
    pub(crate) requests: Vec<(ServerRequest, super::spans::ServerRequestSpan)>,
    /// The spans of the calls whose input round surfaces these requests, until they are.
    pub(crate) rounds: HashMap<Id, super::spans::CallSpan>,
    pub(crate) cancelled: Vec<Id>,
    pub(crate) answers: Vec<(Id, Result<RawJson, ErrorObject>)>,
}

/// Where the handshake stands.
pub(crate) enum Ready {
    Waiting(Vec<Waker>),
    Done(Arc<InitializeResult>),
    Failed(Error),
}

/// A bounded queue the application reads at its own pace: past the cap the oldest items are
/// dropped and counted, so a slow reader never stalls the connection.
pub(crate) struct Bounded<T> {
    pub(crate) items: VecDeque<T>,
    cap: usize,
    pub(crate) dropped: u64,
    pub(crate) waker: Option<Waker>,
}

impl<T> Bounded<T> {
    fn new(cap: usize) -> Self {
        Bounded {
            items: VecDeque::new(),
            cap: cap.max(1),
            dropped: 0,
            waker: None,
        }
    }

    pub(crate) fn push(&mut self, item: T) {
        if self.items.len() == self.cap {
            self.items.pop_front();
            self.dropped += 1;
        }
        self.items.push_back(item);
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }

    fn wake(&mut self) {
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }
}

/// The connection's state, shared by the handles and the driver.
pub(crate) struct ConnectionState {
    pub(crate) conn: Connection,
    /// What the connection is to (a command line or a URL), for errors.
    pub(crate) target: String,
    pub(crate) pid: u32,
    pub(crate) slots: HashMap<CallId, Slot, IdHashing>,
    pub(crate) ready: Ready,
    /// Wakes whoever runs the connection's loop (the driver task, or a caller holding the
    /// claim: see the `route` module); set once the state is shared.
    pub(crate) driver_waker: Option<Waker>,
    pub(crate) notifications: Bounded<ServerNotification>,
    pub(crate) events: Bounded<Event>,
    pub(crate) close_waiters: Vec<Waker>,
    pub(crate) handles: usize,
    pub(crate) close_requested: bool,
    /// Set once the connection has ended for good.
    pub(crate) terminal: Option<Closed>,
    /// An HTTP connection's counters.
    pub(crate) http_counters: Option<Arc<CounterCells>>,
    /// The driver has finished (the connection ended) or was dropped.
    pub(crate) finished: bool,
    /// The server's requests for the host's handlers, and their answers.
    pub(crate) inbound: Inbound,
    /// Failures of the observers called while the connection steps, told at the step's end.
    pub(crate) tap_failures: Arc<FailureLog>,
    /// The reason a call's cancellation gives when its future is dropped, when the host chose
    /// one ([`Client::set_cancel_reason`](crate::Client::set_cancel_reason)).
    pub(crate) cancel_reason: Option<Arc<str>>,
    /// Where the server is (the transport, the HTTP host and port), for the spans.
    pub(crate) peer: super::spans::Peer,
    /// The connection's span.
    pub(crate) span: super::spans::ConnectionSpan,
}

impl ConnectionState {
    /// The state of a connection whose handshake has just started.
    pub(crate) fn new(
        conn: Connection,
        target: String,
        pid: u32,
        max_unread: usize,
    ) -> ConnectionState {
        ConnectionState {
            conn,
            target,
            pid,
            slots: HashMap::default(),
            ready: Ready::Waiting(Vec::new()),
            driver_waker: None,
            notifications: Bounded::new(max_unread),
            events: Bounded::new(max_unread),
            close_waiters: Vec::new(),
            cancel_reason: None,
            peer: Default::default(),
            span: Default::default(),
            handles: 1,
            close_requested: false,
            terminal: None,
            http_counters: None,
            finished: false,
            inbound: Inbound::default(),
            tap_failures: Arc::default(),
        }
    }

    /// Tells the application that host code failed (its `tracing` report was made where it
    /// failed).
    pub(crate) fn handler_failed(&mut self, failure: HandlerFailure) {
        self.events.push(Event::HandlerFailed(failure));
    }

    /// Tells whoever runs the connection (the driver task or the claiming caller) to step.
    pub(crate) fn wake_driver(&mut self) {
        if let Some(w) = &self.driver_waker {
            w.wake_by_ref();
        }
    }

    /// A command the connection refused, as the caller sees it: refused after the close, with
    /// the reason the connection ended.
    pub(crate) fn command_error(&self, e: ClientError) -> Error {
        match e {
            ClientError::Closed(closed) => Error::Closed(self.terminal.clone().unwrap_or(closed)),
            other => Error::Client(other),
        }
    }

    /// The handshake ended: wake everyone waiting for it.
    pub(crate) fn set_ready(&mut self, ready: Ready) {
        if let Ready::Waiting(wakers) = std::mem::replace(&mut self.ready, ready) {
            wakers.into_iter().for_each(Waker::wake);
        }
    }

    /// Fills a call's slot and wakes its caller.
    pub(crate) fn complete(&mut self, call: CallId, outcome: CallOutcome) {
        if let Some(slot) = self.slots.get_mut(&call) {
            slot.outcome = Some(outcome);
            if let Some(w) = slot.waker.take() {
                w.wake();
            }
        }
    }

    /// The driver is done (the connection ended, or the driver was dropped): the connection
    /// ends for the handles, with the reason it already had or `reason`, and `close` returns.
    pub(crate) fn finish(&mut self, reason: &str) {
        let closed = self.terminal.clone().unwrap_or_else(|| Closed::new(reason));
        self.set_terminal(closed);
        self.finished = true;
        self.close_waiters.drain(..).for_each(Waker::wake);
    }

    /// The handshake failed with `error`: it is what `ready` gives, with the target and what a
    /// stdio server wrote on its stdout that is not JSON-RPC.
    pub(crate) fn handshake_failed(&mut self, error: CallError) {
        let target = self.target.clone();
        let stray = self.conn.stray_output().cloned().map(Box::new);
        self.set_ready(Ready::Failed(Error::Handshake {
            target,
            error,
            stray,
        }));
    }

    /// Ends the connection for the handles: every waiter is woken.
    pub(crate) fn set_terminal(&mut self, closed: Closed) {
        if self.terminal.is_none() {
            self.terminal = Some(closed.clone());
            // The session's end: an error unless the host closed it.
            let error = match (&self.ready, self.close_requested) {
                (_, true) => None,
                (Ready::Done(_), false) => Some("closed"),
                (_, false) => Some("handshake_failed"),
            };
            self.span.ended(error);
        }
        for slot in self.slots.values_mut() {
            if slot.outcome.is_none() {
                slot.outcome = Some(Err(CallError::Local(LocalError::Closed(closed.clone()))));
            }
            if let Some(w) = slot.waker.take() {
                w.wake();
            }
        }
        if matches!(self.ready, Ready::Waiting(_)) {
            let error = CallError::Local(LocalError::Closed(closed.clone()));
            self.handshake_failed(error);
        }
        self.notifications.wake();
        self.events.wake();
        self.close_waiters.drain(..).for_each(Waker::wake);
    }
}
