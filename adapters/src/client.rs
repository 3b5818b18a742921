//! The async [`Client`]: a cheap, cloneable, `Send` handle on one connection.
//!
//! The connection's state lives in one place, shared by the handles and the connection's
//! [`Driver`](crate::Driver): the core machine plus one slot per call in flight. A call locks the
//! state, issues its command to the core, wakes the driver and waits for its slot to be filled.
//! The driver does all IO. With the driver and the callers on one thread nothing crosses threads.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use mcpwire_core::jsonrpc::RawJson;
use mcpwire_core::protocol::types::{
    CallToolResult, GetPromptResult, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, Prompt, ReadResourceResult,
    Resource, Tool,
};
use mcpwire_core::protocol::{
    CallError, CallId, CallOptions, CallOutcome, ClientError, ClientProtocol, ServerNotification,
};
use mcpwire_core::rpc::{EngineError, LocalError};
use serde_json::{Map, Value};

use crate::error::Error;

/// A progress update of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    /// Progress so far.
    pub progress: f64,
    /// The total, if known.
    pub total: Option<f64>,
    /// A message, if any.
    pub message: Option<String>,
}

pub(crate) type ProgressFn = dyn Fn(ProgressUpdate) + Send + Sync;

/// Options of one call.
#[derive(Clone, Default)]
pub struct CallOpts {
    /// Idle timeout (default 30 s): how long without an answer, or without progress when
    /// `reset_on_progress` is set.
    pub timeout: Option<Duration>,
    /// Maximum total time, never reset by progress.
    pub max_total: Option<Duration>,
    /// Whether progress resets the idle timeout.
    pub reset_on_progress: bool,
    /// Called with each progress update (asks the server for progress).
    pub on_progress: Option<Arc<ProgressFn>>,
}

impl std::fmt::Debug for CallOpts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOpts")
            .field("timeout", &self.timeout)
            .field("max_total", &self.max_total)
            .field("reset_on_progress", &self.reset_on_progress)
            .field("on_progress", &self.on_progress.is_some())
            .finish()
    }
}

impl CallOpts {
    /// Sets the idle timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
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

    /// Calls `f` with each progress update.
    pub fn on_progress(mut self, f: impl Fn(ProgressUpdate) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }

    fn core(&self) -> CallOptions {
        CallOptions {
            timeout: self.timeout.unwrap_or(mcpwire_core::rpc::DEFAULT_TIMEOUT),
            max_total: self.max_total,
            reset_on_progress: self.reset_on_progress,
            progress: self.on_progress.is_some(),
        }
    }
}

/// One call in flight.
pub(crate) struct Slot {
    pub(crate) outcome: Option<CallOutcome>,
    pub(crate) waker: Option<Waker>,
    pub(crate) on_progress: Option<Arc<ProgressFn>>,
}

/// Where the handshake stands.
pub(crate) enum Ready {
    Waiting(Vec<Waker>),
    Done(Arc<InitializeResult>),
    Failed(Error),
}

/// The state shared by the handles and the driver.
pub(crate) struct State {
    pub(crate) core: crate::machine::Core,
    pub(crate) command: String,
    pub(crate) pid: u32,
    pub(crate) slots: HashMap<CallId, Slot>,
    pub(crate) ready: Ready,
    pub(crate) driver_waker: Option<Waker>,
    pub(crate) notification_waker: Option<Waker>,
    pub(crate) close_waiters: Vec<Waker>,
    pub(crate) handles: usize,
    pub(crate) close_requested: bool,
    /// Set once the connection has ended for good.
    pub(crate) terminal: Option<Arc<str>>,
    /// Progress callbacks to run outside the lock.
    pub(crate) progress: Vec<(Arc<ProgressFn>, ProgressUpdate)>,
    /// The driver has finished (the server exited) or was dropped.
    pub(crate) finished: bool,
}

impl State {
    /// The state of a connection whose handshake has just started.
    pub(crate) fn new(core: crate::machine::Core, command: String, pid: u32) -> State {
        State {
            core,
            command,
            pid,
            slots: HashMap::new(),
            ready: Ready::Waiting(Vec::new()),
            driver_waker: None,
            notification_waker: None,
            close_waiters: Vec::new(),
            handles: 1,
            close_requested: false,
            terminal: None,
            progress: Vec::new(),
            finished: false,
        }
    }

    pub(crate) fn wake_driver(&mut self) {
        if let Some(w) = self.driver_waker.take() {
            w.wake();
        }
    }

    fn closed_error(&self) -> Error {
        Error::Closed(
            self.terminal
                .clone()
                .unwrap_or_else(|| "the connection is closed".into()),
        )
    }

    fn map_client_error(&self, e: ClientError) -> Error {
        match e {
            ClientError::Engine(EngineError::Closed) => self.closed_error(),
            other => Error::Client(other),
        }
    }

    /// The driver is done (the connection ended, or the driver was dropped): the connection
    /// ends for the handles, with the reason it already had or `reason`, and `close` returns.
    pub(crate) fn finish(&mut self, reason: &str) {
        let reason = self.terminal.clone().unwrap_or_else(|| reason.into());
        self.set_terminal(reason);
        self.finished = true;
        self.close_waiters.drain(..).for_each(Waker::wake);
    }

    /// Ends the connection for the handles: every waiter is woken.
    pub(crate) fn set_terminal(&mut self, reason: Arc<str>) {
        if self.terminal.is_none() {
            self.terminal = Some(reason.clone());
        }
        for slot in self.slots.values_mut() {
            if slot.outcome.is_none() {
                slot.outcome = Some(Err(CallError::Local(LocalError::ConnectionClosed {
                    reason: reason.clone(),
                })));
            }
            if let Some(w) = slot.waker.take() {
                w.wake();
            }
        }
        if let Ready::Waiting(wakers) = &mut self.ready {
            let wakers = std::mem::take(wakers);
            self.ready = Ready::Failed(Error::Handshake {
                command: self.command.clone(),
                error: CallError::Local(LocalError::ConnectionClosed {
                    reason: reason.clone(),
                }),
            });
            wakers.into_iter().for_each(Waker::wake);
        }
        if let Some(w) = self.notification_waker.take() {
            w.wake();
        }
        self.close_waiters.drain(..).for_each(Waker::wake);
    }
}

pub(crate) struct Shared {
    state: Mutex<State>,
}

impl Shared {
    pub(crate) fn new(state: State) -> Arc<Shared> {
        Arc::new(Shared {
            state: Mutex::new(state),
        })
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the state as it was between two steps of the
        // core, which stays consistent; keep going rather than poisoning every handle.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A handle on one MCP connection. Cheap to clone and `Send`; dropping the last handle closes
/// the connection gracefully.
pub struct Client {
    shared: Arc<Shared>,
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
            .field("command", &st.command)
            .field("calls", &st.slots.len())
            .field("terminal", &st.terminal)
            .finish()
    }
}

impl Client {
    pub(crate) fn new(shared: Arc<Shared>) -> Client {
        Client { shared }
    }

    /// Waits for the handshake; gives the server's answer to `initialize`.
    pub async fn ready(&self) -> Result<Arc<InitializeResult>, Error> {
        std::future::poll_fn(|cx| {
            let mut st = self.shared.lock();
            match &mut st.ready {
                Ready::Done(init) => Poll::Ready(Ok(init.clone())),
                Ready::Failed(e) => Poll::Ready(Err(e.clone())),
                Ready::Waiting(wakers) => {
                    if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
                        wakers.push(cx.waker().clone());
                    }
                    Poll::Pending
                }
            }
        })
        .await
    }

    /// The era the connection settled on, once known.
    pub fn era(&self) -> Option<mcpwire_core::protocol::ChosenEra> {
        self.shared.lock().core.protocol().era()
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
    /// the wire.
    async fn call(
        &self,
        opts: &CallOpts,
        issue: impl FnOnce(&mut ClientProtocol, Instant, CallOptions) -> Result<CallId, ClientError>,
    ) -> Result<RawJson, Error> {
        self.ready().await?;
        let call = {
            let mut st = self.shared.lock();
            let now = Instant::now();
            let id = match issue(st.core.protocol_mut(), now, opts.core()) {
                Ok(id) => id,
                Err(e) => return Err(st.map_client_error(e)),
            };
            st.slots.insert(
                id,
                Slot {
                    outcome: None,
                    waker: None,
                    on_progress: opts.on_progress.clone(),
                },
            );
            st.wake_driver();
            id
        };
        CallFuture {
            shared: &self.shared,
            call,
            done: false,
        }
        .await
        .map_err(Error::Call)
    }

    /// Sends any request; its params without `_meta`.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Map<String, Value>>,
        opts: CallOpts,
    ) -> Result<RawJson, Error> {
        let method = method.to_owned();
        self.call(&opts, move |c, now, o| c.request(now, method, params, o))
            .await
    }

    /// Every tool, over all pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        self.list_tools_with(CallOpts::default()).await
    }

    /// Every tool, over all pages, with options.
    pub async fn list_tools_with(&self, opts: CallOpts) -> Result<Vec<Tool>, Error> {
        let raw = self.call(&opts, |c, now, o| c.list_tools(now, o)).await?;
        Ok(typed::<ListToolsResult>(&raw, "tools/list")?.tools)
    }

    /// Calls a tool. An `isError` result is `Ok`: the tool ran and reported failure.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
        self.call_tool_with(name, arguments, CallOpts::default())
            .await
    }

    /// Calls a tool with options (timeouts, progress).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        opts: CallOpts,
    ) -> Result<CallToolResult, Error> {
        let raw = self
            .call(&opts, |c, now, o| {
                c.call_tool(now, name, Some(arguments), o)
            })
            .await?;
        typed(&raw, "tools/call")
    }

    /// Every prompt, over all pages.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        let opts = CallOpts::default();
        let raw = self.call(&opts, |c, now, o| c.list_prompts(now, o)).await?;
        Ok(typed::<ListPromptsResult>(&raw, "prompts/list")?.prompts)
    }

    /// Gets a prompt.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<GetPromptResult, Error> {
        let opts = CallOpts::default();
        let raw = self
            .call(&opts, |c, now, o| c.get_prompt(now, name, arguments, o))
            .await?;
        typed(&raw, "prompts/get")
    }

    /// Every resource, over all pages.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        let opts = CallOpts::default();
        let raw = self
            .call(&opts, |c, now, o| c.list_resources(now, o))
            .await?;
        Ok(typed::<ListResourcesResult>(&raw, "resources/list")?.resources)
    }

    /// Every resource template, over all pages.
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, Error> {
        let opts = CallOpts::default();
        let raw = self
            .call(&opts, |c, now, o| c.list_resource_templates(now, o))
            .await?;
        Ok(
            typed::<ListResourceTemplatesResult>(&raw, "resources/templates/list")?
                .resource_templates,
        )
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let opts = CallOpts::default();
        let raw = self
            .call(&opts, |c, now, o| c.read_resource(now, uri, o))
            .await?;
        typed(&raw, "resources/read")
    }

    /// Subscribes to notifications (stateless era, `subscriptions/listen`), e.g.
    /// `{"toolsListChanged": true}`. They arrive on [`notifications`](Self::notifications),
    /// tagged with the subscription; the returned future ends when the subscription does
    /// (dropping it ends the subscription).
    pub async fn listen(&self, notifications: Value) -> Result<RawJson, Error> {
        let opts = CallOpts::default();
        self.call(&opts, |c, now, _| c.listen(now, notifications))
            .await
    }

    /// Pings the server (handshake era; the stateless era has no ping).
    pub async fn ping(&self) -> Result<(), Error> {
        let opts = CallOpts::default();
        self.call(&opts, |c, now, o| c.ping(now, o)).await?;
        Ok(())
    }

    /// The server's notifications, as a bounded queue: a reader that falls behind loses the
    /// oldest and is told how many with [`ServerNotification::Dropped`].
    pub fn notifications(&self) -> Notifications {
        Notifications {
            shared: self.shared.clone(),
        }
    }

    /// Closes the connection gracefully (pending calls end as closed; the server gets stdin EOF,
    /// then SIGTERM, then SIGKILL) and waits until the server has exited.
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
        self.shared.lock().terminal.clone()
    }

    /// The server process's id (the leader of its process group); 0 for an HTTP server.
    pub fn pid(&self) -> u32 {
        self.shared.lock().pid
    }

    /// How many calls are in flight.
    pub fn calls_in_flight(&self) -> usize {
        self.shared.lock().slots.len()
    }
}

fn typed<T: serde::de::DeserializeOwned>(raw: &RawJson, method: &str) -> Result<T, Error> {
    serde_json::from_str(raw.get())
        .map_err(|e| Error::Call(CallError::InvalidResult(format!("{method}: {e}"))))
}

/// Waits for one call's slot; cancels the call if dropped before it ends.
struct CallFuture<'a> {
    shared: &'a Arc<Shared>,
    call: CallId,
    done: bool,
}

impl Future for CallFuture<'_> {
    type Output = CallOutcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<CallOutcome> {
        let mut st = self.shared.lock();
        let call = self.call;
        let Some(slot) = st.slots.get_mut(&call) else {
            drop(st);
            self.done = true;
            return Poll::Ready(Err(CallError::Local(LocalError::ConnectionClosed {
                reason: "the call was lost".into(),
            })));
        };
        if let Some(outcome) = slot.outcome.take() {
            st.slots.remove(&call);
            drop(st);
            self.done = true;
            return Poll::Ready(outcome);
        }
        match &slot.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => slot.waker = Some(cx.waker().clone()),
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
            let _ = st.core.protocol_mut().cancel(
                now,
                self.call,
                Some("the caller stopped waiting".into()),
            );
            st.wake_driver();
        }
    }
}

/// The server's notifications; see [`Client::notifications`].
pub struct Notifications {
    shared: Arc<Shared>,
}

impl Notifications {
    /// The next notification; `None` once the connection has ended and none are left.
    pub async fn next(&mut self) -> Option<ServerNotification> {
        std::future::poll_fn(|cx| {
            let mut st = self.shared.lock();
            if let Some(n) = st.core.poll_notification() {
                return Poll::Ready(Some(n));
            }
            if st.terminal.is_some() {
                return Poll::Ready(None);
            }
            st.notification_waker = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }
}
