//! How a call is made: issued to the connection under the lock, then waited for, the caller
//! running the connection itself while it can claim it (see the driver's `route` module), and
//! cancelled on the wire when the caller stops waiting. Here too the requests that are not typed
//! calls: any request, a re-issue, `ping` and `subscriptions/listen`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use mcpwire_core::jsonrpc::RawJson;
use mcpwire_core::{
    CallError, CallId, CallOutcome, ClientError, Closed, Connection, LocalError, McpCall,
};
use serde_json::{Map, Value};

use super::handle::Client;
use crate::driver::route::Claim;
use crate::driver::run::{run_loop, SharedConnection};
use crate::driver::state::Slot;
use crate::error::{Error, Reissue};
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
        self.ready().await?;
        let claim = Claim::new(&self.shared.route);
        let call = {
            let mut st = self.shared.lock();
            let now = Instant::now();
            let id = match issue(&mut st.conn, now, opts.clone(), &request) {
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
            #[cfg(feature = "schemas")]
            CallError::Schema { error, result } => {
                let read = |r: RawJson| mcpwire_core::typed_result(&r, "tools/call").ok();
                let result = result.and_then(read).map(Box::new);
                Error::Schema { error, result }
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
            let reason = st.cancel_reason.as_deref().unwrap_or(DROPPED);
            let reason = Some(reason.to_owned());
            let _ = st.conn.cancel(now, self.call, reason);
            st.wake_driver();
        }
    }
}
