//! What both drivers do with the core's events: fill the waiting calls' slots, run progress
//! callbacks and server-request handlers outside the lock, and answer the server.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use mcpwire_core::jsonrpc::{ErrorObject, Id, RawJson};
use mcpwire_core::protocol::{CallId, CallOutcome, ClientEvent, ServerRequest};
use serde_json::json;

use crate::client::{ProgressUpdate, Ready, Shared, State};
use crate::error::Error;
use crate::handlers::{BoxFuture, ElicitationRequest, Handlers};

/// What one step hands to the part of the loop that runs outside the lock.
#[derive(Default)]
pub(crate) struct StepOutput {
    requests: Vec<ServerRequest>,
    /// Calls that ended; their slots are filled after the progress callbacks ran, so a caller
    /// never sees its result before the progress that preceded it.
    completions: Vec<(CallId, CallOutcome)>,
    closed: Option<Arc<str>>,
}

impl StepOutput {
    /// Whether there is anything to do with it.
    pub(crate) fn is_empty(&self) -> bool {
        self.requests.is_empty() && self.completions.is_empty() && self.closed.is_none()
    }
}

/// A handler's answer on its way.
struct HandlerTask {
    id: Id,
    future: BoxFuture<Result<RawJson, ErrorObject>>,
}

/// The handlers and their answers in progress.
pub(crate) struct Dispatch {
    handlers: Handlers,
    tasks: Vec<HandlerTask>,
}

impl Dispatch {
    pub(crate) fn new(handlers: Handlers) -> Self {
        Dispatch {
            handlers,
            tasks: Vec::new(),
        }
    }

    /// Moves the core's events to the waiting calls and collects the server's requests.
    pub(crate) fn take_events(&mut self, st: &mut State) -> StepOutput {
        let mut out = StepOutput::default();
        while let Some(event) = st.core.poll_event() {
            match event {
                ClientEvent::Ready(init) => {
                    if let Ready::Waiting(wakers) =
                        std::mem::replace(&mut st.ready, Ready::Done(Arc::new(*init)))
                    {
                        wakers.into_iter().for_each(|w| w.wake());
                    }
                }
                ClientEvent::HandshakeFailed(error) => {
                    let failed = Ready::Failed(Error::Handshake {
                        command: st.command.clone(),
                        error,
                    });
                    if let Ready::Waiting(wakers) = std::mem::replace(&mut st.ready, failed) {
                        wakers.into_iter().for_each(|w| w.wake());
                    }
                }
                ClientEvent::CallDone { call, outcome } => out.completions.push((call, outcome)),
                ClientEvent::Progress {
                    call,
                    progress,
                    total,
                    message,
                } => {
                    let cb = st.slots.get(&call).and_then(|s| s.on_progress.clone());
                    if let Some(cb) = cb {
                        st.progress.push((
                            cb,
                            ProgressUpdate {
                                progress,
                                total,
                                message,
                            },
                        ));
                    }
                }
                ClientEvent::ServerRequest(r) => out.requests.push(r),
                ClientEvent::Closed { reason } => out.closed = Some(reason),
                // Cancellations of server requests: the handler's answer will be dropped by
                // the core; diagnostics are visible through the frame observer.
                _ => {}
            }
        }
        out
    }

    /// Starts the handler for a server request.
    fn start_handler(&mut self, request: ServerRequest) -> Option<HandlerTask> {
        let to_raw = |v: serde_json::Value| RawJson::new(&v).map_err(|e| internal(&e.to_string()));
        let (id, future): (_, BoxFuture<Result<RawJson, ErrorObject>>) = match request {
            ServerRequest::Elicitation { id, params } => {
                let h = self.handlers.elicitation.clone()?;
                let fut = h(ElicitationRequest { params });
                (
                    id,
                    Box::pin(async move {
                        let r = fut.await?;
                        serde_json::to_value(r)
                            .map_err(|e| internal(&e.to_string()))
                            .and_then(to_raw)
                    }),
                )
            }
            ServerRequest::Sampling { id, params } => {
                let h = self.handlers.sampling.clone()?;
                let fut = h(params);
                (id, Box::pin(async move { to_raw(fut.await?) }))
            }
            ServerRequest::Roots { id } => {
                let h = self.handlers.roots.clone()?;
                let fut = h();
                (
                    id,
                    Box::pin(async move { to_raw(json!({ "roots": fut.await? })) }),
                )
            }
            _ => return None,
        };
        Some(HandlerTask { id, future })
    }

    /// The part of a step that runs outside the lock: progress callbacks, then the calls'
    /// results, then the handlers. Returns whether anything happened.
    pub(crate) fn after_step(
        &mut self,
        cx: &mut Context<'_>,
        shared: &Shared,
        out: StepOutput,
        progress: Vec<(Arc<crate::client::ProgressFn>, ProgressUpdate)>,
    ) -> bool {
        let mut progressed = !out.is_empty() || !progress.is_empty();
        // Outside the lock: application code may call back into the client.
        for (cb, update) in progress {
            cb(update);
        }
        if !out.completions.is_empty() || out.closed.is_some() {
            let mut st = shared.lock();
            for (call, outcome) in out.completions {
                if let Some(slot) = st.slots.get_mut(&call) {
                    slot.outcome = Some(outcome);
                    if let Some(w) = slot.waker.take() {
                        w.wake();
                    }
                }
            }
            if let Some(reason) = out.closed {
                st.set_terminal(reason);
            }
        }
        for r in out.requests {
            if let Some(task) = self.start_handler(r) {
                self.tasks.push(task);
            }
        }
        let mut i = 0;
        while i < self.tasks.len() {
            if let Poll::Ready(answer) = self.tasks[i].future.as_mut().poll(cx) {
                let task = self.tasks.swap_remove(i);
                let mut st = shared.lock();
                // The server may have cancelled it, or the connection ended: then there is
                // no one to answer.
                let _ = st
                    .core
                    .protocol_mut()
                    .respond(Instant::now(), &task.id, answer);
                progressed = true;
            } else {
                i += 1;
            }
        }
        progressed
    }
}

fn internal(message: &str) -> ErrorObject {
    ErrorObject::new(mcpwire_core::jsonrpc::codes::INTERNAL_ERROR, message)
}
