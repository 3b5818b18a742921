//! The async [`Client`]: a cheap, cloneable, `Send` handle on one connection.
//!
//! The connection's state lives in one place, shared by the handles and the connection's
//! [`Driver`](crate::Driver): the core's [`Connection`] plus one slot per call in flight. A call
//! locks the state, issues its command to the connection, wakes the driver and waits for its slot
//! to be filled. The driver does all IO. With the driver and the callers on one thread nothing
//! crosses threads.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use mcpwire_core::jsonrpc::RawJson;
use mcpwire_core::types::{
    GetPromptResult, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
};
use mcpwire_core::{typed_result, Closed};
use mcpwire_core::{
    CallError, CallId, CallOutcome, ChosenEra, ClientError, Connection, Event, LocalError, McpCall,
    Progress, ServerNotification,
};
use serde_json::{Map, Value};

use crate::driver::route::Claim;
use crate::driver::run::{run_loop, SharedConnection};
use crate::driver::state::{ProgressFn, Ready, Slot};
use crate::error::{Error, Reissue};

/// Options of one call: the core's [`CallOptions`](mcpwire_core::CallOptions), with a progress
/// callback in place of its `progress` flag.
#[derive(Clone)]
pub struct CallOptions {
    /// Idle timeout (default 30 s): how long without an answer, or without progress when
    /// `reset_on_progress` is set.
    pub timeout: Duration,
    /// Maximum total time, never reset by progress.
    pub max_total: Option<Duration>,
    /// Whether progress resets the idle timeout.
    pub reset_on_progress: bool,
    /// Called with each progress update (asks the server for progress).
    pub on_progress: Option<Arc<ProgressFn>>,
    /// Whether the call is safe to repeat: when its connection or stream is lost after it may
    /// have reached the server, the connection re-issues it once instead of failing it with
    /// "may have been executed". Reads (`ping`, the lists, `resources/read`, `prompts/get`,
    /// `completion/complete`) always are; mark a call only if running it twice does no harm.
    pub safe_to_repeat: bool,
    /// Whether a tool call's arguments are checked against the tool's `inputSchema` (from the
    /// last `tools/list`) before anything is sent (feature `schemas`).
    pub check_arguments: bool,
    /// Whether a tool call the server answers with a task ends at once with the task (see
    /// [`Client::start_tool_task`]) instead of being followed to its end.
    pub detach_task: bool,
}

impl Default for CallOptions {
    fn default() -> Self {
        CallOptions {
            timeout: mcpwire_core::DEFAULT_TIMEOUT,
            max_total: None,
            reset_on_progress: false,
            on_progress: None,
            safe_to_repeat: false,
            check_arguments: false,
            detach_task: false,
        }
    }
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("max_total", &self.max_total)
            .field("reset_on_progress", &self.reset_on_progress)
            .field("on_progress", &self.on_progress.is_some())
            .field("safe_to_repeat", &self.safe_to_repeat)
            .field("check_arguments", &self.check_arguments)
            .field("detach_task", &self.detach_task)
            .finish()
    }
}

impl CallOptions {
    /// Sets the idle timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the maximum total time.
    pub fn max_total(mut self, max_total: Duration) -> Self {
        self.max_total = Some(max_total);
        self
    }

    /// Lets progress reset the idle timeout.
    pub fn reset_on_progress(mut self) -> Self {
        self.reset_on_progress = true;
        self
    }

    /// Marks the call safe to repeat (see the field).
    pub fn safe_to_repeat(mut self) -> Self {
        self.safe_to_repeat = true;
        self
    }

    /// Checks a tool call's arguments before sending (see the field).
    pub fn check_arguments(mut self) -> Self {
        self.check_arguments = true;
        self
    }

    /// Calls `f` with each progress update.
    pub fn on_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }

    fn core(&self) -> mcpwire_core::CallOptions {
        mcpwire_core::CallOptions {
            timeout: self.timeout,
            max_total: self.max_total,
            reset_on_progress: self.reset_on_progress,
            progress: self.on_progress.is_some(),
            safe_to_repeat: self.safe_to_repeat,
            detach_task: self.detach_task,
        }
    }
}

/// A handle on one MCP connection. Cheap to clone and `Send`; dropping the last handle closes
/// the connection gracefully.
pub struct Client {
    pub(crate) shared: Arc<SharedConnection>,
}

impl Clone for Client {
    fn clone(&self) -> Self {
        self.shared.lock().handles += 1;
        Client {
            shared: self.shared.clone(),
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.handles -= 1;
        if st.handles == 0 {
            st.close_requested = true;
            st.wake_driver();
        }
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.shared.lock();
        f.debug_struct("Client")
            .field("target", &st.target)
            .field("calls", &st.slots.len())
            .field("terminal", &st.terminal)
            .finish()
    }
}

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
    pub(crate) fn new(shared: Arc<SharedConnection>) -> Client {
        Client { shared }
    }

    /// Waits for the handshake; gives what the server said about itself (its `initialize`
    /// answer, or in the stateless era what `server/discover` said).
    pub async fn ready(&self) -> Result<Arc<InitializeResult>, Error> {
        let ready_now = |cx: &Context<'_>| {
            let mut st = self.shared.lock();
            match &mut st.ready {
                Ready::Done(init) => Some(Ok(init.clone())),
                Ready::Failed(e) => Some(Err(e.clone())),
                Ready::Waiting(wakers) => {
                    if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
                        wakers.push(cx.waker().clone());
                    }
                    None
                }
            }
        };
        // While the handshake goes on, the waiter runs the connection itself when it can
        // claim it (see the `route` module).
        let mut claim = None;
        std::future::poll_fn(|cx| {
            if let Some(ready) = ready_now(cx) {
                return Poll::Ready(ready);
            }
            let claim = claim.get_or_insert_with(|| Claim::new(&self.shared.route));
            if claim.take(Some(cx.waker())) {
                run_loop(&self.shared);
                if let Some(ready) = ready_now(cx) {
                    return Poll::Ready(ready);
                }
            }
            Poll::Pending
        })
        .await
    }

    /// The era the connection settled on, once known.
    pub fn era(&self) -> Option<ChosenEra> {
        self.shared.lock().conn.era()
    }

    /// Why the connection speaks its era: the server answered `server/discover`, refused the
    /// probe (with -32601, an HTTP 405…), did not answer it, or the era was pinned. Known once
    /// the era is.
    pub fn era_reason(&self) -> Option<mcpwire_core::EraReason> {
        self.shared.lock().conn.era_reason()
    }

    /// The HTTP transport in use (`None` over stdio): Streamable HTTP, or the 2024-11-05
    /// HTTP+SSE transport (named in the server's config as `sse`, or found by `Era::Auto`).
    pub fn http_transport(&self) -> Option<mcpwire_core::HttpTransportKind> {
        self.shared.lock().conn.http_transport()
    }

    /// What the server said about itself: its answer to `initialize`, or in the stateless era
    /// what `server/discover` said (with protocol version 2026-07-28). Known once ready.
    pub fn server_info(&self) -> Option<Arc<InitializeResult>> {
        match &self.shared.lock().ready {
            Ready::Done(init) => Some(init.clone()),
            _ => None,
        }
    }

    /// Issues a call and waits for its outcome. Dropping the returned future cancels the call on
    /// the wire. A call the connection's end cut short fails with [`Error::Closed`].
    async fn call(
        &self,
        opts: &CallOptions,
        request: McpCall,
        issue: Issue<'_>,
    ) -> Result<RawJson, Error> {
        self.ready().await?;
        let claim = Claim::new(&self.shared.route);
        let call = {
            let mut st = self.shared.lock();
            let now = Instant::now();
            let id = match issue(&mut st.conn, now, opts.core(), &request) {
                Ok(id) => id,
                Err(e) => return Err(st.command_error(e)),
            };
            st.slots.insert(
                id,
                Slot {
                    outcome: None,
                    waker: None,
                    on_progress: opts.on_progress.clone(),
                },
            );
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
        }
        .await;
        outcome.map_err(|e| match e {
            CallError::Local(LocalError::Closed(closed)) => Error::Closed(closed),
            // The call as made was kept for this: the caller may send it again.
            CallError::Local(LocalError::MaybeExecuted { reason, http }) => {
                let (method, params) = request.into_parts();
                let request = Reissue {
                    method: method.into_owned(),
                    params,
                };
                Error::MayHaveRun {
                    reason,
                    request: Box::new(request),
                    http,
                }
            }
            other => Error::Call(other),
        })
    }

    /// Sends again a call that may have run ([`Error::MayHaveRun`]), as a new request with a new
    /// id: the caller's choice, since it may run twice. Any other error is given back as it is.
    pub async fn reissue(&self, error: &Error) -> Result<RawJson, Error> {
        let Error::MayHaveRun { request, .. } = error else {
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

    /// Every tool, over all pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        self.list_tools_with(CallOptions::default()).await
    }

    /// Every prompt, over all pages.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        let opts = CallOptions::default();
        let raw = self
            .call(&opts, McpCall::list_prompts(), Box::new(send))
            .await?;
        Ok(typed_result::<ListPromptsResult>(&raw, "prompts/list")?.prompts)
    }

    /// Gets a prompt.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<GetPromptResult, Error> {
        let opts = CallOptions::default();
        let call = McpCall::get_prompt(name, arguments);
        let raw = self.call(&opts, call, Box::new(send)).await?;
        Ok(typed_result(&raw, "prompts/get")?)
    }

    /// Every resource, over all pages.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        let opts = CallOptions::default();
        let raw = self
            .call(&opts, McpCall::list_resources(), Box::new(send))
            .await?;
        Ok(typed_result::<ListResourcesResult>(&raw, "resources/list")?.resources)
    }

    /// Every resource template, over all pages.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        let opts = CallOptions::default();
        let call = McpCall::list_resource_templates();
        let raw = self.call(&opts, call, Box::new(send)).await?;
        let method = "resources/templates/list";
        Ok(typed_result::<ListResourceTemplatesResult>(&raw, method)?.resource_templates)
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let opts = CallOptions::default();
        let raw = self
            .call(&opts, McpCall::read_resource(uri), Box::new(send))
            .await?;
        Ok(typed_result(&raw, "resources/read")?)
    }

    /// Subscribes to notifications (stateless era, `subscriptions/listen`), e.g.
    /// `{"toolsListChanged": true}`. They arrive on [`notifications`](Self::notifications),
    /// tagged with the subscription; the returned future ends when the subscription does
    /// (dropping it ends the subscription).
    pub async fn listen(&self, notifications: Value) -> Result<RawJson, Error> {
        let opts = CallOptions::default();
        let mut params = Map::new();
        params.insert("notifications".into(), notifications);
        let call = McpCall::request("subscriptions/listen", Some(params));
        let issue = |c: &mut Connection, now, _, m: &McpCall| {
            let notifications = m.params().and_then(|p| p.get("notifications").cloned());
            c.listen(now, notifications.unwrap_or(Value::Null))
        };
        self.call(&opts, call, Box::new(issue)).await
    }

    /// Pings the server (handshake era; the stateless era has no ping).
    pub async fn ping(&self) -> Result<(), Error> {
        self.ping_with(CallOptions::default()).await
    }

    /// Pings the server with options (a timeout, …); handshake era.
    pub async fn ping_with(&self, opts: CallOptions) -> Result<(), Error> {
        let issue = |c: &mut Connection, now, o, _: &McpCall| c.ping(now, o);
        let call = McpCall::request("ping", None);
        self.call(&opts, call, Box::new(issue)).await?;
        Ok(())
    }

    /// The server's notifications, as a bounded queue: a reader that falls behind loses the
    /// oldest and is told how many with [`ServerNotification::Dropped`].
    pub fn notifications(&self) -> Notifications {
        Notifications {
            shared: self.shared.clone(),
        }
    }

    /// What happened to the connection beside calls and notifications: readiness and the era
    /// chosen, session renewals, server requests the server cancelled, every diagnostic (unknown
    /// or late responses, malformed frames, bad SSE fields, HTTP notes), and the close. A
    /// bounded queue, shared by every reader: a reader that falls behind loses the oldest (see
    /// [`Events::dropped`]).
    pub fn events(&self) -> Events {
        Events {
            shared: self.shared.clone(),
        }
    }

    /// Closes the connection gracefully (pending calls end as closed; a stdio server gets stdin
    /// EOF, then SIGTERM, then SIGKILL; an HTTP session is deleted) and waits until it is done.
    pub async fn close(&self) {
        std::future::poll_fn(|cx| {
            let mut st = self.shared.lock();
            if st.finished {
                return Poll::Ready(());
            }
            if !st.close_requested {
                st.close_requested = true;
                st.wake_driver();
            }
            if !st.close_waiters.iter().any(|w| w.will_wake(cx.waker())) {
                st.close_waiters.push(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
    }

    /// Why the connection ended, once it has.
    pub fn closed_reason(&self) -> Option<Arc<str>> {
        let st = self.shared.lock();
        st.terminal.as_ref().map(|closed| closed.reason.clone())
    }

    /// The server process's id (the leader of its process group); 0 when there is none (HTTP,
    /// or a connection over streams).
    pub fn pid(&self) -> u32 {
        self.shared.lock().pid
    }

    /// How many calls are in flight.
    pub fn calls_in_flight(&self) -> usize {
        self.shared.lock().slots.len()
    }

    /// What an HTTP connection's exchanges did so far: started, queued under the connection
    /// limit, reused connections, HTTP/2 responses, failures before sending. `None` over
    /// stdio or streams.
    pub fn http_counters(&self) -> Option<crate::HttpCounters> {
        let counters = self.shared.lock().http_counters.clone();
        counters.map(|c| c.snapshot())
    }

    /// Tells the server the host's roots changed (`notifications/roots/list_changed`): it asks
    /// for them again through the roots handler. Handshake era only; refused, sending nothing,
    /// without a roots handler or in the stateless era (where the server asks for roots in each
    /// round).
    pub fn roots_changed(&self) -> Result<(), Error> {
        let mut st = self.shared.lock();
        st.conn.roots_changed(std::time::Instant::now())?;
        st.wake_driver();
        Ok(())
    }

    pub(crate) fn set_http_counters(&self, counters: Arc<crate::http_counters::CounterCells>) {
        self.shared.lock().http_counters = Some(counters);
    }
}

/// Waits for one call's slot; cancels the call if dropped before it ends. While it waits it
/// runs the connection itself when it holds the claim (see the `route` module).
struct CallFuture<'a> {
    shared: &'a Arc<SharedConnection>,
    call: CallId,
    claim: Claim,
    done: bool,
}

impl CallFuture<'_> {
    /// The call's outcome if it has one. Otherwise `cx`'s waker is kept in its slot, or, when
    /// `wait` is false (the caller is about to run the connection itself and looks again after),
    /// none is: the caller's own step completing the call then wakes nobody, which would only
    /// cost the caller's thread another round of its reactor.
    fn outcome(&mut self, cx: &Context<'_>, wait: bool) -> Option<CallOutcome> {
        let mut st = self.shared.lock();
        let call = self.call;
        let Some(slot) = st.slots.get_mut(&call) else {
            drop(st);
            self.done = true;
            return Some(Err(CallError::Local(LocalError::Closed(Closed::new(
                "the call was lost",
            )))));
        };
        if let Some(outcome) = slot.outcome.take() {
            st.slots.remove(&call);
            drop(st);
            self.done = true;
            return Some(outcome);
        }
        match &slot.waker {
            _ if !wait => slot.waker = None,
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => slot.waker = Some(cx.waker().clone()),
        }
        None
    }
}

impl Future for CallFuture<'_> {
    type Output = CallOutcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<CallOutcome> {
        let helping = self.claim.take(Some(cx.waker()));
        if let Some(outcome) = self.outcome(cx, !helping) {
            return Poll::Ready(outcome);
        }
        if helping {
            run_loop(self.shared);
            // Whoever ran the connection, the outcome is looked for again under the lock, and
            // the waker kept if there is none yet.
            if let Some(outcome) = self.outcome(cx, true) {
                return Poll::Ready(outcome);
            }
        }
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
            let now = Instant::now();
            // The call may have ended meanwhile; then there is nothing to cancel.
            let reason = Some("the caller stopped waiting".into());
            let _ = st.conn.cancel(now, self.call, reason);
            st.wake_driver();
        }
    }
}

/// The server's notifications; see [`Client::notifications`].
pub struct Notifications {
    shared: Arc<SharedConnection>,
}

impl Notifications {
    /// The next notification; `None` once the connection has ended and none are left.
    pub async fn next(&mut self) -> Option<ServerNotification> {
        std::future::poll_fn(|cx| {
            let mut st = self.shared.lock();
            let dropped = std::mem::take(&mut st.notifications.dropped);
            if dropped > 0 {
                return Poll::Ready(Some(ServerNotification::Dropped { count: dropped }));
            }
            if let Some(n) = st.notifications.items.pop_front() {
                return Poll::Ready(Some(n));
            }
            if st.terminal.is_some() {
                return Poll::Ready(None);
            }
            st.notifications.waker = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }
}

/// The connection's events; see [`Client::events`].
pub struct Events {
    shared: Arc<SharedConnection>,
}

impl Events {
    /// The next event; `None` once the connection has ended and none are left.
    pub async fn next(&mut self) -> Option<Event> {
        std::future::poll_fn(|cx| {
            let mut st = self.shared.lock();
            if let Some(e) = st.events.items.pop_front() {
                return Poll::Ready(Some(e));
            }
            if st.finished {
                return Poll::Ready(None);
            }
            st.events.waker = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }

    /// How many events were dropped unread so far because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.shared.lock().events.dropped
    }
}
