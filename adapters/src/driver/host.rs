//! The host's handlers, each run as a task of its own: spawned on the connection's runtime
//! when it has an executor to spawn on (`connect_smol`, `mcpwire::tokio`), else inside the
//! driver's task (`connect`, whose driver the host spawned on the executor it chose).
//!
//! The connection's loop hands the server's requests over (the state's `inbound`) and wakes the
//! driver's task; the driver starts a handler for each. A spawned handler runs on the runtime
//! like any task of the host's: it may await the runtime's IO and timers, and a slow one holds
//! up nothing. One run inside the driver's task is polled with a waker of its own, so that a
//! handler's wake-up polls that handler alone and makes no step of the connection. Either way
//! the host's function is called in the handler's task, never in a caller's or in the
//! connection's step, and no lock of ours is held while it runs. Its answer goes back to the
//! state, and the connection's loop sends it at its next step. A handler the server cancelled
//! is dropped (a spawned one cancelled on its runtime). A handler that panics (when called or
//! polled) or whose answer cannot be serialized is answered with `-32603` and the fixed
//! message, and told once as [`Event::HandlerFailed`](mcpwire_core::Event).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Wake, Waker};

use mcpwire_core::jsonrpc::{ErrorObject, Id, RawJson};
use mcpwire_core::{HandlerFailure, HostHandler, ServerRequest};

use super::dispatch::{handler_failed, handler_future, Answer};
use super::route::Route;
use super::run::SharedConnection;
use super::spans::ServerRequestSpan;
use super::trace;
use crate::contain::{self, CatchUnwind};
use crate::future::BoxFuture;
use crate::handlers::Handlers;
use crate::runtime::task::Task as Spawned;

/// Whether a handler's task was woken; waking it wakes the driver's task.
struct Flag {
    woken: AtomicBool,
    route: Arc<Route>,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        self.route.wake_task();
    }
}

/// What a handler came to: the request's id, the answer for the server, and the failure to
/// tell when it failed.
struct Done {
    id: Id,
    answer: Result<RawJson, ErrorObject>,
    failure: Option<HandlerFailure>,
}

/// One handler at work.
struct Task {
    id: Id,
    work: Work,
}

enum Work {
    /// Polled in the driver's task.
    InDriver {
        future: BoxFuture<()>,
        flag: Arc<Flag>,
        waker: Waker,
    },
    /// A task of its own on the connection's runtime.
    Spawned(Spawned),
}

/// The handlers at work for one connection.
pub(crate) struct HostTasks {
    handlers: Arc<Handlers>,
    tasks: Vec<Task>,
}

/// Which handler answers `request`.
fn handler_of(request: &ServerRequest) -> HostHandler {
    match request {
        ServerRequest::Elicitation { .. } => HostHandler::Elicitation,
        ServerRequest::Sampling { .. } => HostHandler::Sampling,
        _ => HostHandler::Roots,
    }
}

/// Runs the host's handler for `request` to its answer: the host's function called and its
/// future polled so that a panic in either is caught (see [`crate::contain`]). `None` when the
/// host has no such handler (the core refused those without one).
async fn run_handler(
    handlers: Arc<Handlers>,
    request: ServerRequest,
    span: ServerRequestSpan,
) -> Option<Done> {
    let (id, handler) = (request.id().clone(), handler_of(&request));
    // Calling the host's function may run its code before it gives a future.
    let started = contain::call(|| handler_future(&handlers, request));
    let outcome = match started {
        Ok(Some((_, _, future))) => CatchUnwind::new(future).await,
        Ok(None) => return None,
        Err(words) => Err(words),
    };
    let (answer, failure) = match outcome {
        Ok(Answer::Given(answer)) => (answer, None),
        Ok(Answer::Unserializable(words)) | Err(words) => {
            let failure = HandlerFailure::new(handler, words).for_request(id.clone());
            (Err(handler_failed()), Some(failure))
        }
    };
    span.answered(&answer);
    Some(Done {
        id,
        answer,
        failure,
    })
}

/// Hands the connection what a handler came to, and has it step to send the answer.
fn deliver(shared: &SharedConnection, done: Option<Done>) {
    let Some(done) = done else { return };
    if let Some(failure) = &done.failure {
        trace::handler_failed(failure);
    }
    let mut st = shared.lock();
    if let Some(failure) = done.failure {
        st.handler_failed(failure);
    }
    st.inbound.answers.push((done.id, done.answer));
    st.wake_driver();
}

impl HostTasks {
    pub(crate) fn new(handlers: Handlers) -> HostTasks {
        HostTasks {
            handlers: Arc::new(handlers),
            tasks: Vec::new(),
        }
    }

    /// Whether there is work for [`turn`](Self::turn): requests handed over, or a handler woken.
    pub(crate) fn has_work(&self, shared: &SharedConnection) -> bool {
        shared.inbound_waiting.load(Ordering::SeqCst)
            || self.tasks.iter().any(|t| match &t.work {
                Work::InDriver { flag, .. } => flag.woken.load(Ordering::SeqCst),
                Work::Spawned(_) => false,
            })
    }

    /// Starts the requests handed over, drops the handlers the server cancelled, and polls the
    /// handlers woken that run in the driver's task (each hands its answer back itself).
    pub(crate) fn turn(&mut self, shared: &Arc<SharedConnection>) {
        if shared.inbound_waiting.swap(false, Ordering::SeqCst) {
            let (requests, cancelled) = {
                let mut st = shared.lock();
                let inbound = &mut st.inbound;
                (
                    std::mem::take(&mut inbound.requests),
                    std::mem::take(&mut inbound.cancelled),
                )
            };
            for id in cancelled {
                self.drop_where(|t| t.id == id);
            }
            // Spawned handlers that ended are forgotten (their answers went on their own).
            self.drop_where(|t| matches!(&t.work, Work::Spawned(s) if s.is_finished()));
            for (request, span) in requests {
                self.start(shared, request, span);
            }
        }
        let mut i = 0;
        while i < self.tasks.len() {
            let Work::InDriver {
                future,
                flag,
                waker,
            } = &mut self.tasks[i].work
            else {
                i += 1;
                continue;
            };
            if !flag.woken.swap(false, Ordering::SeqCst) {
                i += 1;
                continue;
            }
            let cx = &mut Context::from_waker(waker);
            if future.as_mut().poll(cx).is_ready() {
                self.tasks.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Starts the handler for `request`: spawned on the connection's runtime, or run in the
    /// driver's task (first polled at the next turn). Either way it hands its answer back
    /// itself when it has one.
    fn start(
        &mut self,
        shared: &Arc<SharedConnection>,
        request: ServerRequest,
        span: ServerRequestSpan,
    ) {
        let id = request.id().clone();
        let answer = run_handler(self.handlers.clone(), request, span);
        let weak: Weak<SharedConnection> = Arc::downgrade(shared);
        let future: BoxFuture<()> = Box::pin(async move {
            let done = answer.await;
            if let Some(shared) = weak.upgrade() {
                deliver(&shared, done);
            }
        });
        let work = match shared.runtime.spawn(future) {
            Ok(task) => Work::Spawned(task),
            Err(future) => {
                let flag = Arc::new(Flag {
                    woken: AtomicBool::new(true),
                    route: shared.route.clone(),
                });
                Work::InDriver {
                    future,
                    waker: Waker::from(flag.clone()),
                    flag,
                }
            }
        };
        self.tasks.push(Task { id, work });
    }

    /// Drops the handlers `gone` picks (a handler's drop is host code too: contained where its
    /// future is, see [`CatchUnwind`]).
    fn drop_where(&mut self, gone: impl Fn(&Task) -> bool) {
        self.tasks.retain(|t| !gone(t));
    }
}
