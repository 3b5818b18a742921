//! The [`Client`] handle: a cheap, cloneable, `Send` handle on one connection, what it tells of
//! the connection, the wait for the handshake and the close.
//!
//! The connection's state lives in one place, shared by the handles and the connection's
//! [`Driver`](crate::Driver): the core's [`Connection`](mcpwire_core::Connection) plus one slot
//! per call in flight. A call locks the state, issues its command to the connection, wakes the
//! driver and waits for its slot to be filled. The driver does all IO. With the driver and the
//! callers on one thread nothing crosses threads.

use std::sync::Arc;
use std::task::{Context, Poll};

use mcpwire_core::types::InitializeResult;
use mcpwire_core::ChosenEra;

use crate::driver::route::Claim;
use crate::driver::run::{run_loop, SharedConnection};
use crate::driver::state::Ready;
use crate::error::Error;
use crate::http::counters::{CounterCells, HttpCounters};

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
    pub fn http_transport(&self) -> Option<mcpwire_core::HttpKind> {
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
    pub fn http_counters(&self) -> Option<HttpCounters> {
        let counters = self.shared.lock().http_counters.clone();
        counters.map(|c| c.snapshot())
    }

    /// Tells the server the host's roots changed (`notifications/roots/list_changed`): it asks
    /// for them again through the roots handler. Handshake era only; refused, sending nothing,
    /// without a roots handler or in the stateless era (where the server asks for roots in each
    /// round).
    pub fn roots_changed(&self) -> Result<(), Error> {
        let mut st = self.shared.lock();
        let now = self.shared.runtime.now();
        st.conn.roots_changed(now)?;
        st.wake_driver();
        Ok(())
    }

    /// Sets the reason a call gives the server when it is cancelled because its future was
    /// dropped (`notifications/cancelled`'s `reason`), from now on, for this connection's
    /// every handle: a host that stops its calls for a reason of its own says which (the
    /// command line: "interrupted" for Ctrl-C). Otherwise: "the caller stopped waiting".
    pub fn set_cancel_reason(&self, reason: &str) {
        self.shared.lock().cancel_reason = Some(reason.into());
    }

    pub(crate) fn set_http_counters(&self, counters: Arc<CounterCells>) {
        self.shared.lock().http_counters = Some(counters);
    }
}
