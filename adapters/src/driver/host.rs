//! The host's handlers, each run as a task of its own inside the driver's task.
//!
//! The connection's loop hands the server's requests over (the state's `inbound`) and wakes the
//! driver's task; the driver starts a handler for each and polls it with a waker of its own,
//! so that a handler's wake-up polls that handler alone and makes no step of the connection.
//! No lock of ours is held while a handler runs, and it runs on whatever executor polls the
//! driver (the host's runtime). Its answer goes back to the state, and the connection's loop
//! sends it at its next step. A handler the server cancelled is dropped. A handler that panics
//! (when called or polled) or whose answer cannot be serialized is answered with `-32603` and
//! the fixed message, and told once as [`Event::HandlerFailed`](mcpwire_core::Event).

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use mcpwire_core::jsonrpc::{ErrorObject, Id, RawJson};
use mcpwire_core::{HandlerFailure, HostHandler, ServerRequest};

use super::dispatch::{handler_failed, handler_future, Answer};
use super::route::Route;
use super::run::SharedConnection;
use super::trace;
use crate::contain::{self, CatchUnwind};
use crate::future::BoxFuture;
use crate::handlers::Handlers;

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

/// One handler at work.
struct Task {
    id: Id,
    handler: HostHandler,
    future: CatchUnwind<BoxFuture<Answer>>,
    flag: Arc<Flag>,
    waker: Waker,
}

/// The handlers at work for one connection.
pub(crate) struct HostTasks {
    handlers: Handlers,
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

impl HostTasks {
    pub(crate) fn new(handlers: Handlers) -> HostTasks {
        HostTasks {
            handlers,
            tasks: Vec::new(),
        }
    }

    /// Whether there is work for [`turn`](Self::turn): requests handed over, or a handler woken.
    pub(crate) fn has_work(&self, shared: &SharedConnection) -> bool {
        shared.inbound_waiting.load(Ordering::SeqCst)
            || self
                .tasks
                .iter()
                .any(|t| t.flag.woken.load(Ordering::SeqCst))
    }

    /// Starts the requests handed over, drops the handlers the server cancelled, polls the
    /// handlers woken, and hands their answers back. Returns whether any answer was.
    pub(crate) fn turn(&mut self, shared: &SharedConnection) -> bool {
        let mut answers = Vec::new();
        let mut failures = Vec::new();
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
            for request in requests {
                self.start(&shared.route, request, &mut answers, &mut failures);
            }
        }
        let mut i = 0;
        while i < self.tasks.len() {
            let task = &mut self.tasks[i];
            if !task.flag.woken.swap(false, Ordering::SeqCst) {
                i += 1;
                continue;
            }
            let cx = &mut Context::from_waker(&task.waker);
            let Poll::Ready(outcome) = std::pin::Pin::new(&mut task.future).poll(cx) else {
                i += 1;
                continue;
            };
            let task = self.tasks.swap_remove(i);
            let answer = match outcome {
                Ok(Answer::Given(answer)) => answer,
                Ok(Answer::Unserializable(words)) | Err(words) => {
                    failures.push(
                        HandlerFailure::new(task.handler, words).for_request(task.id.clone()),
                    );
                    Err(handler_failed())
                }
            };
            answers.push((task.id, answer));
        }
        let any = !answers.is_empty();
        if any || !failures.is_empty() {
            failures.iter().for_each(trace::handler_failed);
            let mut st = shared.lock();
            st.inbound.answers.extend(answers);
            failures.into_iter().for_each(|f| st.handler_failed(f));
            st.wake_driver();
        }
        any
    }

    /// Calls the handler for `request` (its future is polled at once).
    fn start(
        &mut self,
        route: &Arc<Route>,
        request: ServerRequest,
        answers: &mut Vec<(Id, Result<RawJson, ErrorObject>)>,
        failures: &mut Vec<HandlerFailure>,
    ) {
        let (id, handler) = (request.id().clone(), handler_of(&request));
        // Calling the host's function may run its code before it gives a future.
        let started = contain::call(|| handler_future(&self.handlers, request));
        let (id, handler, future) = match started {
            Ok(Some(started)) => started,
            Ok(None) => return,
            Err(words) => {
                failures.push(HandlerFailure::new(handler, words).for_request(id.clone()));
                answers.push((id, Err(handler_failed())));
                return;
            }
        };
        let flag = Arc::new(Flag {
            woken: AtomicBool::new(true),
            route: route.clone(),
        });
        self.tasks.push(Task {
            id,
            handler,
            future: CatchUnwind::new(future),
            waker: Waker::from(flag.clone()),
            flag,
        });
    }

    /// Drops the handlers `gone` picks (their futures' drops are host code too).
    fn drop_where(&mut self, gone: impl Fn(&Task) -> bool) {
        let mut i = 0;
        while i < self.tasks.len() {
            if gone(&self.tasks[i]) {
                let task = self.tasks.swap_remove(i);
                let handler = task.handler;
                if let Err(words) = contain::call(move || drop(task)) {
                    trace::handler_failed(&HandlerFailure::new(handler, words));
                }
            } else {
                i += 1;
            }
        }
    }
}

impl Drop for HostTasks {
    fn drop(&mut self) {
        self.drop_where(|_| true);
    }
}
