//! How a call is made: issued to the connection under the lock, then waited for, the caller
//! running the connection itself while it can claim it (see the driver's `route` module), and
//! cancelled on the wire when the caller stops waiting. Here too the requests that are not typed
//! calls: any request, a re-issue, `ping` and `subscriptions/listen`.
//!
//! A call's progress callback runs in the caller's own future, outside every lock, before the
//! outcome is taken (the updates wait in the call's slot). A call's deadline does not depend on
//! the driver: a caller that is not running the connection keeps a watch of its own on its
//! request's deadline, and when it passes with the deadline left unhandled (nobody runs the
//! connection: the driver is not polled, or a claimer stopped polling) it takes the claim and
//! runs the connection itself, which ends the call with its timeout. A connection whose driver
//! has ended fails every call at once.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use mcpwire_core::jsonrpc::RawJson;
use mcpwire_core::{
    CallError, CallId, CallOutcome, ClientError, Closed, Connection, HandlerFailure, HostHandler,
    LocalError, McpCall, OnProgress, Progress,
};
use serde_json::{Map, Value};

use super::handle::Client;
use crate::contain;
use crate::driver::route::Claim;
use crate::driver::run::{run_loop, SharedConnection};
use crate::driver::spans::CallSpan;
use crate::driver::state::Slot;
use crate::driver::trace;
use crate::error::{Error, Reissue};
use crate::runtime::timer::Timer;
use mcpwire_core::CallOptions;

/// The reason a dropped call's cancellation gives, unless the host set another
/// ([`Client::set_cancel_reason`]).
const DROPPED: &str = "the caller stopped waiting";

/// The command a call issues to the connection, given the call as made.
type Issue<'a> = Box<
    dyn FnOnce(
            &mut Connection,
            Instant,
            mcpwire_core::CallOptions,
            &McpCall,
        ) -> Result<CallId, ClientError>
        + Send
        + 'a,
>;

/// Adds the host's trace context `entries` beneath those the call's options already have.
fn with_context(opts: &mut CallOptions, entries: Map<String, Value>) {
    if entries.is_empty() {
        return;
    }
    match &mut opts.context_meta {
        None => opts.context_meta = Some(entries),
        Some(own) => {
            for (k, v) in entries {
                own.entry(k).or_insert(v);
            }
        }
    }
}

/// The usual command: the call itself.
fn send(
    c: &mut Connection,
    now: Instant,
    o: mcpwire_core::CallOptions,
    m: &McpCall,
) -> Result<CallId, ClientError> {
    c.call(now, m, o)
}

impl Client {
    /// Issues a call and waits for its outcome. Dropping the returned future cancels the call on
    /// the wire. A call the connection's end cut short fails with [`Error::Closed`].
    pub(super) async fn call(
        &self,
        opts: &CallOptions,
        request: McpCall,
        issue: Issue<'_>,
    ) -> Result<RawJson, Error> {
        // The call's span, from now to its outcome (parent: the caller's span).
        let span = CallSpan::start(&self.shared.span, &request);
        if let Err(e) = self.ready().await {
            span.failed("not_ready", &e.to_string());
            return Err(e);
        }
        // The host's trace context, read here in the caller's task (it is the caller's), with
        // the call's span current.
        let context =
            (self.shared.trace_context.as_ref()).map(|f| span.in_scope(|| contain::call(|| f())));
        let claim = Claim::new(&self.shared.route);
        let call = {
            let mut st = self.shared.lock();
            // The connection ended (its driver too, maybe, with nothing left to run it): the
            // call fails now rather than wait for what will never come.
            if let Some(closed) = st.terminal.clone() {
                span.failed("closed", &closed.to_string());
                return Err(Error::Closed(closed));
            }
            let mut sent = opts.clone();
            match context {
                Some(Ok(entries)) => with_context(&mut sent, entries),
                Some(Err(words)) => {
                    let failure = HandlerFailure::new(HostHandler::TraceContext, words);
                    trace::handler_failed(&failure);
                    st.tap_failures.push(failure);
                }
                None => {}
            }
            let now = self.shared.runtime.now();
            let id = match issue(&mut st.conn, now, sent, &request) {
                Ok(id) => id,
                Err(e) => {
                    let e = st.command_error(e);
                    span.failed("not_sent", &e.to_string());
                    return Err(e);
                }
            };
            span.issued(&st.conn, &st.peer, id);
            st.slots
                .insert(id, Slot::new(opts.on_progress.is_some(), span.for_slot()));
            // The caller sends its request itself at its first poll when it can claim the
            // connection; otherwise the one running it is told.
            if !claim.take(None) {
                st.wake_driver();
            }
            id
        };
        // The call is kept as it was built, for a re-issue: the core wrote its frame from it
        // by reference, so keeping it costs no copy (a second serialization would be one more
        // pass over a large argument, and two allocations a call). It is taken apart only for
        // a re-issue (a tool call's params become a map then, not for every call).
        let outcome = CallFuture {
            shared: &self.shared,
            call,
            claim,
            done: false,
            on_progress: opts.on_progress.clone(),
            watch: None,
        }
        .await;
        span.ended(&outcome);
        outcome.map_err(|e| match e {
            CallError::Local(LocalError::Closed(closed)) => Error::Closed(closed),
            // The call as made was kept for this: the caller may send it again.
            CallError::Local(LocalError::MaybeExecuted { reason, http }) => {
                let (method, params) = request.into_parts();
                let request = Reissue {
                    method: method.into_owned(),
                    params,
                };
                Error::MaybeExecuted {
                    reason,
                    request: Box::new(request),
                    http,
                }
            }
            #[cfg(feature = "schemas")]
            CallError::Schema { error, result } => {
                let read = |r: RawJson| mcpwire_core::typed_result(&r, "tools/call").ok();
                let result = result.and_then(read).map(Box::new);
                Error::Schema { error, result }
            }
            other => Error::Call(other),
        })
    }

    /// Sends again a call that may have run ([`Error::MaybeExecuted`]), as a new request with a new
    /// id: the caller's choice, since it may run twice. Any other error is given back as it is.
    pub async fn reissue(&self, error: &Error) -> Result<RawJson, Error> {
        let Error::MaybeExecuted { request, .. } = error else {
            return Err(error.clone());
        };
        let Reissue { method, params } = (**request).clone();
        self.request(&method, params, CallOptions::default()).await
    }

    /// Sends a typed call (its capability checked) and waits for its raw result.
    pub(crate) async fn send_call(
        &self,
        opts: &CallOptions,
        request: McpCall,
    ) -> Result<RawJson, Error> {
        self.call(opts, request, Box::new(send)).await
    }

    /// Sends any request; its params without `_meta`.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Map<String, Value>>,
        opts: CallOptions,
    ) -> Result<RawJson, Error> {
        let call = McpCall::request(method.to_owned(), params);
        self.call(&opts, call, Box::new(send)).await
    }

    /// Subscribes to notifications (stateless era, `subscriptions/listen`), e.g.
    /// `{"toolsListChanged": true}`. They arrive on [`notifications`](Self::notifications),
    /// tagged with the subscription; the returned future ends when the subscription does
    /// (dropping it ends the subscription).
    pub async fn listen(&self, notifications: Value) -> Result<RawJson, Error> {
        let opts = CallOptions::default();
        self.call(&opts, McpCall::listen(notifications), Box::new(send))
            .await
    }

    /// Pings the server (handshake era; the stateless era has no ping).
    pub async fn ping(&self) -> Result<(), Error> {
        self.ping_with(CallOptions::default()).await
    }

    /// Pings the server with options (a timeout, …); handshake era.
    pub async fn ping_with(&self, opts: CallOptions) -> Result<(), Error> {
        self.call(&opts, McpCall::ping(), Box::new(send)).await?;
        Ok(())
    }
}

/// Waits for one call's slot; cancels the call if dropped before it ends. While it waits it
/// runs the connection itself when it holds the claim (see the `route` module), gives its
/// progress updates to its callback, and keeps a watch on its deadline.
struct CallFuture<'a> {
    shared: &'a Arc<SharedConnection>,
    call: CallId,
    claim: Claim,
    done: bool,
    on_progress: Option<OnProgress>,
    /// The watch on the call's deadline: armed the first time the caller waits without running
    /// the connection, at the deadline it waits for.
    watch: Option<(Timer, Instant)>,
}

/// What a look at the call's slot found.
struct Look {
    outcome: Option<CallOutcome>,
    progress: Vec<Progress>,
    /// The call's deadline now, and whether a deadline of the connection is past and unhandled.
    deadline: Option<Instant>,
    overdue: bool,
}

impl CallFuture<'_> {
    /// Looks at the call's slot: takes its outcome and the progress updates waiting for the
    /// callback. Without an outcome, `cx`'s waker is kept in its slot, or, when `wait` is false
    /// (the caller is about to run the connection itself and looks again after), none is: the
    /// caller's own step completing the call then wakes nobody, which would only cost the
    /// caller's thread another round of its reactor.
    fn look(&mut self, cx: &Context<'_>, wait: bool) -> Look {
        // A caller that runs the connection is woken by the connection's own timer: it needs
        // the deadlines only when it waits for others.
        let mut st = self.shared.lock();
        let call = self.call;
        let mut look = Look {
            outcome: None,
            progress: Vec::new(),
            deadline: None,
            overdue: false,
        };
        let Some(slot) = st.slots.get_mut(&call) else {
            drop(st);
            self.done = true;
            look.outcome = Some(Err(CallError::Local(LocalError::Closed(Closed::new(
                "the call was lost",
            )))));
            return look;
        };
        look.progress = slot.progress.drain(..).collect();
        if let Some(outcome) = slot.outcome.take() {
            st.slots.remove(&call);
            drop(st);
            self.done = true;
            look.outcome = Some(outcome);
            return look;
        }
        match &slot.waker {
            _ if !wait => {
                slot.waker = None;
                return look;
            }
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => slot.waker = Some(cx.waker().clone()),
        }
        let next = st.conn.poll_timeout();
        look.deadline = st.conn.call_deadline(call).or(next);
        look.overdue = next.is_some_and(|t| t <= self.shared.runtime.now());
        look
    }

    /// Gives progress updates to the call's callback, outside every lock. A panic in it is
    /// caught and told once; the call goes on.
    fn progress(&self, updates: Vec<Progress>) {
        let Some(cb) = &self.on_progress else { return };
        for update in updates {
            if let Err(words) = crate::contain::call(|| cb.call(update)) {
                let failure = HandlerFailure::new(HostHandler::Progress, words).for_call(self.call);
                trace::handler_failed(&failure);
                self.shared.lock().handler_failed(failure);
            }
        }
    }

    /// Keeps the watch on the call's deadline: armed at `deadline` (moved there when it moved).
    /// Returns whether it has fired: the deadline has come.
    fn watch(&mut self, cx: &mut Context<'_>, deadline: Option<Instant>) -> bool {
        let Some(deadline) = deadline else {
            return false;
        };
        match &mut self.watch {
            Some((_, at)) if *at == deadline => {}
            Some((timer, at)) => {
                timer.set_at(deadline);
                *at = deadline;
            }
            None => {
                let mut timer = self.shared.runtime.timer();
                timer.set_at(deadline);
                self.watch = Some((timer, deadline));
            }
        }
        let (timer, _) = self.watch.as_mut().expect("armed above");
        timer.poll(cx).is_ready()
    }
}

impl Future for CallFuture<'_> {
    type Output = CallOutcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<CallOutcome> {
        // A second round only when the watch fired: the deadline has come, look again.
        for _ in 0..2 {
            let mut helping = self.claim.take(Some(cx.waker()));
            let mut look = self.look(cx, !helping);
            if !helping && look.outcome.is_none() && look.overdue {
                // A deadline of the connection is past and nobody handled it: nothing runs the
                // connection (its driver is not polled, or a claimer stopped polling). The
                // caller takes the claim and runs it itself: its own timeout ends the call.
                self.claim.take_over(cx.waker());
                helping = true;
            }
            if helping && look.outcome.is_none() {
                self.progress(std::mem::take(&mut look.progress));
                run_loop(self.shared);
                // Whoever ran the connection, the outcome is looked for again under the lock,
                // and the waker kept if there is none yet.
                look = self.look(cx, true);
            }
            self.progress(look.progress);
            if let Some(outcome) = look.outcome {
                return Poll::Ready(outcome);
            }
            // A caller that holds the claim is woken by the connection's own timer (at its
            // earliest deadline). One that waits for others keeps its own watch, which wakes it
            // at its deadline whoever else runs the connection (or if nobody does). A watch that
            // has not fired waits.
            if self.claim.held() || !self.watch(cx, look.deadline) {
                return Poll::Pending;
            }
        }
        // The deadline is past and the connection could not be run just now: whoever runs it
        // wakes the claimer (this caller) when it lets go.
        Poll::Pending
    }
}

impl Drop for CallFuture<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut st = self.shared.lock();
        if st.slots.remove(&self.call).is_some() && st.terminal.is_none() {
            let now = self.shared.runtime.now();
            // The call may have ended meanwhile; then there is nothing to cancel.
            let reason = st.cancel_reason.as_deref().unwrap_or(DROPPED);
            let reason = Some(reason.to_owned());
            let _ = st.conn.cancel(now, self.call, reason);
            st.wake_driver();
        }
    }
}
