//! What the driver does with the connection's events: under the lock, fill the waiting calls'
//! slots and the application's queues; outside it, run progress callbacks and the handlers of
//! server requests, whose answers go back at the next step.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use mcpwire_core::jsonrpc::{ErrorObject, Id, RawJson};
use mcpwire_core::types::{ListRootsResult, Root};
use mcpwire_core::{CallId, CallOutcome, Closed, Event, Progress, ServerRequest};

use super::state::{ConnectionState, Ready};
use super::trace;
use crate::error::Error;
use crate::future::BoxFuture;
use crate::handlers::{ElicitationRequest, Handlers};
use crate::stdio::StderrCallback;

/// AppWork a step hands to the part of the loop that runs outside the lock.
#[derive(Default)]
pub(crate) struct AppWork {
    progress: Vec<(mcpwire_core::OnProgress, Progress)>,
    requests: Vec<ServerRequest>,
    pub(crate) stderr_lines: Vec<String>,
}

impl AppWork {
    fn is_empty(&self) -> bool {
        self.progress.is_empty() && self.requests.is_empty() && self.stderr_lines.is_empty()
    }
}

/// An end held back until the progress callbacks before it have run, so a caller never sees its
/// result before the progress that preceded it.
enum Held {
    Done(CallId, CallOutcome),
    Closed(Closed),
}

/// A handler's answer on its way.
struct HandlerTask {
    id: Id,
    future: BoxFuture<Result<RawJson, ErrorObject>>,
}

/// The handlers, their answers in progress, and what waits for the next step.
pub(crate) struct Dispatch {
    handlers: Handlers,
    tasks: Vec<HandlerTask>,
    held: Vec<Held>,
    answers: Vec<(Id, Result<RawJson, ErrorObject>)>,
    /// Authorization, when the connection does it (HTTP with OAuth).
    #[cfg(feature = "oauth")]
    auth: Option<crate::oauth::AuthSession>,
    /// What authorization came to, for the connection at the next step.
    #[cfg(feature = "oauth")]
    authorized: Vec<crate::oauth::AuthOutcome>,
}

impl Dispatch {
    pub(crate) fn new(handlers: Handlers) -> Self {
        Dispatch {
            handlers,
            tasks: Vec::new(),
            held: Vec::new(),
            answers: Vec::new(),
            #[cfg(feature = "oauth")]
            auth: None,
            #[cfg(feature = "oauth")]
            authorized: Vec::new(),
        }
    }

    /// Authorizes when the connection asks.
    #[cfg(feature = "oauth")]
    pub(crate) fn set_auth(&mut self, auth: crate::oauth::AuthSession) {
        self.auth = Some(auth);
    }

    /// Under the lock, first in a step: what the last step left for it (ends held behind
    /// progress callbacks, handlers' answers). Returns whether there was any.
    pub(crate) fn settle(&mut self, st: &mut ConnectionState, now: Instant) -> bool {
        let any = !self.held.is_empty() || !self.answers.is_empty() || self.authorize(st, now);
        for held in self.held.drain(..) {
            match held {
                Held::Done(call, outcome) => st.complete(call, outcome),
                Held::Closed(closed) => st.set_terminal(closed),
            }
        }
        for (id, answer) in self.answers.drain(..) {
            // The server may have cancelled it, or the connection ended: then there is no
            // one to answer.
            let _ = st.conn.respond(now, &id, answer);
        }
        any
    }

    /// Under the lock: hands the connection what authorization came to. Returns whether there
    /// was anything.
    #[cfg(feature = "oauth")]
    fn authorize(&mut self, st: &mut ConnectionState, now: Instant) -> bool {
        let any = !self.authorized.is_empty();
        for outcome in self.authorized.drain(..) {
            match outcome {
                crate::oauth::AuthOutcome::Token(token) => st.conn.set_access_token(now, &token),
                crate::oauth::AuthOutcome::Failed(reason) => {
                    st.conn.authorization_failed(now, &reason)
                }
                crate::oauth::AuthOutcome::Nothing => {}
            }
        }
        any
    }

    #[cfg(not(feature = "oauth"))]
    fn authorize(&mut self, _st: &mut ConnectionState, _now: Instant) -> bool {
        false
    }

    /// Under the lock: one event of the connection.
    pub(crate) fn event(&mut self, st: &mut ConnectionState, work: &mut AppWork, event: Event) {
        trace::event(&st.target, &event);
        match event {
            Event::CallDone { call, outcome } => {
                if work.progress.is_empty() && self.held.is_empty() {
                    st.complete(call, outcome);
                } else {
                    self.held.push(Held::Done(call, outcome));
                }
            }
            Event::Progress { call, progress } => {
                if let Some(cb) = st.slots.get(&call).and_then(|s| s.on_progress.clone()) {
                    work.progress.push((cb, progress));
                }
            }
            Event::TaskStatus { call, status } => {
                // A call that runs as a task gets no progress notifications: its task's status
                // goes to the same callback, as a message, counted as progress.
                if let Some(cb) = st.slots.get(&call).and_then(|s| s.on_progress.clone()) {
                    work.progress.push((cb, status.as_progress()));
                }
                st.events.push(Event::TaskStatus { call, status });
            }
            Event::ServerRequest(r) => work.requests.push(r),
            Event::Notification(n) => st.notifications.push(n),
            event => {
                match &event {
                    Event::Ready { server, .. } => {
                        st.set_ready(Ready::Done(Arc::new((**server).clone())))
                    }
                    Event::HandshakeFailed(error) => {
                        let target = st.target.clone();
                        let error = error.clone();
                        st.set_ready(Ready::Failed(Error::Handshake { target, error }));
                    }
                    #[cfg(feature = "oauth")]
                    Event::AuthorizationRequired(refusal) => match self.auth.as_mut() {
                        Some(auth) => auth.required((**refusal).clone()),
                        None => self
                            .authorized
                            .push(crate::oauth::AuthOutcome::Failed("no authorizer".into())),
                    },
                    Event::Closed(closed) => {
                        if work.progress.is_empty() && self.held.is_empty() {
                            st.set_terminal(closed.clone());
                        } else {
                            self.held.push(Held::Closed(closed.clone()));
                        }
                    }
                    _ => {}
                }
                st.events.push(event);
            }
        }
    }

    /// Outside the lock: progress callbacks, stderr lines, then the handlers. Returns whether
    /// anything happened (so the loop steps again to settle it).
    pub(crate) fn run(
        &mut self,
        cx: &mut Context<'_>,
        work: AppWork,
        on_stderr: Option<&StderrCallback>,
    ) -> bool {
        let mut progressed = !work.is_empty() || !self.held.is_empty();
        // Application code may call back into the client: never under the lock.
        for (cb, update) in work.progress {
            cb.call(update);
        }
        if let Some(cb) = on_stderr {
            work.stderr_lines.iter().for_each(|l| cb(l));
        }
        for r in work.requests {
            if let Some(task) = self.start_handler(r) {
                self.tasks.push(task);
            }
        }
        #[cfg(feature = "oauth")]
        if let Some(outcome) = self.auth.as_mut().and_then(|a| a.poll(cx)) {
            self.authorized.push(outcome);
            progressed = true;
        }
        let mut i = 0;
        while i < self.tasks.len() {
            if let Poll::Ready(answer) = self.tasks[i].future.as_mut().poll(cx) {
                let task = self.tasks.swap_remove(i);
                self.answers.push((task.id, answer));
                progressed = true;
            } else {
                i += 1;
            }
        }
        progressed
    }

    /// Starts the handler for a server request (the core refused those without one).
    fn start_handler(&mut self, request: ServerRequest) -> Option<HandlerTask> {
        let to_raw = |v: serde_json::Value| RawJson::new(&v).map_err(|e| internal(&e.to_string()));
        let (id, future): (_, BoxFuture<Result<RawJson, ErrorObject>>) = match request {
            ServerRequest::Elicitation {
                id, params, fields, ..
            } => {
                let request = ElicitationRequest::with_order(params, fields);
                let fut = self.handlers.elicitation.as_ref()?(request);
                let future = async move {
                    let answer = fut.await?;
                    RawJson::new(&answer).map_err(|e| internal(&e.to_string()))
                };
                (id, Box::pin(future))
            }
            ServerRequest::Sampling { id, params } => {
                // Sampling's rules (tools only when declared, tool messages in order) were
                // checked by the core before the request was surfaced.
                let fut = self.handlers.sampling.as_ref()?(params);
                (id, Box::pin(async move { to_raw(fut.await?) }))
            }
            ServerRequest::Roots { id } => {
                let fut = self.handlers.roots.as_ref()?();
                let future = async move {
                    let roots: Vec<Root> = fut.await?;
                    RawJson::new(&ListRootsResult { roots }).map_err(|e| internal(&e.to_string()))
                };
                (id, Box::pin(future))
            }
            _ => return None,
        };
        Some(HandlerTask { id, future })
    }
}

/// A JSON-RPC "internal error" with this message, for an answer that could not be encoded.
fn internal(message: &str) -> ErrorObject {
    ErrorObject::new(mcpwire_core::jsonrpc::codes::INTERNAL_ERROR, message)
}
