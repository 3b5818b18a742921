//! What the driver does with the connection's events: under the lock, fill the waiting calls'
//! slots (their outcomes and the progress their callbacks are to be given) and the application's
//! queues, and hand the server's requests to the host's handlers; what a handler is run as
//! ([`handler_future`]); outside the lock, the authorization's work.
//!
//! No host code runs here: the handlers run as tasks of their own in the driver's task (see
//! the driver's `host` module), a progress callback in its caller's future, and the observers
//! the connection calls while it steps are wrapped so that their failures stay theirs (see
//! [`crate::contain`]).

use std::sync::Arc;
use std::task::Context;
use std::time::Instant;

use mcpwire_core::jsonrpc::{ErrorObject, Id, RawJson};
use mcpwire_core::types::{CreateMessageParams, ListRootsResult, Root};
use mcpwire_core::{Event, HandlerFailure, HostHandler, ServerRequest, HANDLER_FAILED};

use super::spans::{CallNote, ServerRequestSpan};
use super::state::{ConnectionState, Ready};
use super::trace;
use crate::future::BoxFuture;
use crate::handlers::{ElicitationRequest, Handlers};

/// What a step hands to the part of the loop that runs outside the state's lock.
#[derive(Default)]
pub(crate) struct AppWork {
    pub(crate) stderr_lines: Vec<String>,
    /// Whether the host's handlers have something new (a request to start, one the server
    /// cancelled): the driver's task is woken for it.
    pub(crate) for_handlers: bool,
}

/// The error a server gets when the handler answering its request failed: `-32603` with a
/// fixed message, never the failure's own words.
pub(crate) fn handler_failed() -> ErrorObject {
    internal(HANDLER_FAILED)
}

/// What a handler gave.
pub(crate) enum Answer {
    /// Its answer, or the error it chose to answer with.
    Given(Result<RawJson, ErrorObject>),
    /// An answer that cannot be serialized, and why.
    Unserializable(String),
}

/// Serializes a handler's answer.
fn answer<T: serde::Serialize>(given: Result<T, ErrorObject>) -> Answer {
    match given {
        Ok(value) => match RawJson::new(&value) {
            Ok(raw) => Answer::Given(Ok(raw)),
            Err(e) => Answer::Unserializable(format!("its answer cannot be serialized: {e}")),
        },
        Err(e) => Answer::Given(Err(e)),
    }
}

/// The handler for a server request, started: the request's id, which handler, and the
/// future of its answer. `None` when the host has no such handler (the core refused those
/// without one).
pub(crate) fn handler_future(
    handlers: &Handlers,
    request: ServerRequest,
) -> Option<(Id, HostHandler, BoxFuture<Answer>)> {
    Some(match request {
        ServerRequest::Elicitation {
            id, params, fields, ..
        } => {
            let request = ElicitationRequest::with_order(params, fields);
            let fut = handlers.elicitation.as_ref()?(request);
            let future = async move {
                match fut.await.map(crate::handlers::ElicitAnswer::into_result) {
                    Ok(Ok(result)) => answer(Ok(result)),
                    Ok(Err(why)) => Answer::Unserializable(why),
                    Err(refused) => Answer::Given(Err(refused)),
                }
            };
            (
                id,
                HostHandler::Elicitation,
                Box::pin(future) as BoxFuture<_>,
            )
        }
        ServerRequest::Sampling { id, params } => {
            // Sampling's rules (tools only when declared, tool messages in order) were
            // checked by the core before the request was surfaced.
            let future: BoxFuture<Answer> = match (&handlers.sampling, &handlers.sampling_json) {
                (Some(typed), _) => match serde_json::from_value::<CreateMessageParams>(params) {
                    Ok(params) => {
                        let fut = typed(params);
                        Box::pin(async move { answer(fut.await) })
                    }
                    Err(e) => {
                        let refused = ErrorObject::new(
                            mcpwire_core::jsonrpc::codes::INVALID_PARAMS,
                            format!("sampling/createMessage: {e}"),
                        );
                        Box::pin(std::future::ready(Answer::Given(Err(refused))))
                    }
                },
                (None, Some(raw)) => {
                    let fut = raw(params);
                    Box::pin(async move { answer(fut.await) })
                }
                (None, None) => return None,
            };
            (id, HostHandler::Sampling, future)
        }
        ServerRequest::Roots { id } => {
            let fut = handlers.roots.as_ref()?();
            let future = async move {
                let given = fut.await.map(|roots: Vec<Root>| ListRootsResult { roots });
                answer(given)
            };
            (id, HostHandler::Roots, Box::pin(future) as BoxFuture<_>)
        }
        _ => return None,
    })
}

/// The events' side of the loop: the authorization (HTTP with OAuth), and the failures of
/// host code it met.
#[derive(Default)]
pub(crate) struct Dispatch {
    /// Authorization, when the connection does it (HTTP with OAuth).
    #[cfg(feature = "oauth")]
    auth: Option<crate::oauth::AuthSession>,
    /// What authorization came to, for the connection at the next step.
    #[cfg(feature = "oauth")]
    authorized: Vec<crate::oauth::AuthOutcome>,
    /// Failures of host code met outside the lock, told at the next step.
    failures: Vec<HandlerFailure>,
}

impl Dispatch {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Authorizes when the connection asks.
    #[cfg(feature = "oauth")]
    pub(crate) fn set_auth(&mut self, auth: crate::oauth::AuthSession) {
        self.auth = Some(auth);
    }

    /// Under the lock, first in a step: what the last step and the handlers left for it (their
    /// answers, authorization's outcome, failures to tell). Returns whether there was any.
    pub(crate) fn settle(&mut self, st: &mut ConnectionState, now: Instant) -> bool {
        let answers = std::mem::take(&mut st.inbound.answers);
        let any = !answers.is_empty() || !self.failures.is_empty() || self.authorize(st, now);
        for (id, answer) in answers {
            // The server may have cancelled it, or the connection ended: then there is no
            // one to answer.
            let _ = st.conn.respond(now, &id, answer);
        }
        for failure in self.failures.drain(..) {
            st.handler_failed(failure);
        }
        any
    }

    /// Under the lock, last in a step: the failures of the observers called during it.
    pub(crate) fn tell_tap_failures(&mut self, st: &mut ConnectionState) {
        for failure in st.tap_failures.take() {
            st.handler_failed(failure);
        }
    }

    /// Under the lock: hands the connection what authorization came to. Returns whether there
    /// was anything.
    #[cfg(feature = "oauth")]
    fn authorize(&mut self, st: &mut ConnectionState, now: Instant) -> bool {
        let any = !self.authorized.is_empty();
        for outcome in self.authorized.drain(..) {
            match outcome {
                crate::oauth::AuthOutcome::Token(token) => st
                    .conn
                    .handle_authorization(now, mcpwire_core::AuthorizationInput::Token(&token))
                    .unwrap_or_else(crate::transport::wrong_transport),
                crate::oauth::AuthOutcome::Failed(reason) => st
                    .conn
                    .handle_authorization(now, mcpwire_core::AuthorizationInput::Failed(&reason))
                    .unwrap_or_else(crate::transport::wrong_transport),
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
        st.span.event(&event);
        match event {
            Event::CallDone { call, outcome } => st.complete(call, outcome),
            Event::Progress { call, progress } => {
                if let Some(slot) = st.slots.get_mut(&call) {
                    slot.progress(progress);
                }
            }
            Event::TaskStatus { call, status } => {
                // A call that runs as a task gets no progress notifications: its task's status
                // goes to the same callback, as a message, counted as progress.
                if let Some(slot) = st.slots.get_mut(&call) {
                    slot.progress(status.as_progress());
                }
                st.events.push(Event::TaskStatus { call, status });
            }
            Event::ServerRequest(r) => {
                let round = st.inbound.rounds.remove(r.id());
                let span =
                    ServerRequestSpan::start(&st.span, &st.conn, &st.peer, &r, round.as_ref());
                st.inbound.requests.push((r, span));
                work.for_handlers = true;
            }
            Event::InputRequired {
                call,
                round,
                ref requests,
            } => {
                if let Some(slot) = st.slots.get(&call) {
                    let note = CallNote::InputRequired {
                        round,
                        requests: requests.len(),
                    };
                    slot.span.note(&note);
                    for id in requests {
                        st.inbound.rounds.insert(id.clone(), slot.span.for_slot());
                    }
                }
                st.events.push(event);
            }
            Event::ServerPinged { ref id, ref meta } => {
                ServerRequestSpan::ping(&st.span, &st.conn, &st.peer, id, meta.as_ref());
                st.events.push(event);
            }
            Event::CallReissued { call, ref reason } => {
                if let Some(slot) = st.slots.get(&call) {
                    slot.span.note(&CallNote::Reissued(reason));
                }
                st.events.push(event);
            }
            Event::Notification(n) => st.notifications.push(n),
            event => {
                match &event {
                    Event::SessionRenewed(_) => {
                        // The calls in flight went on in the new session.
                        for slot in st.slots.values() {
                            slot.span.note(&CallNote::SessionRenewed);
                        }
                    }
                    Event::Ready { server, .. } => {
                        st.set_ready(Ready::Done(Arc::new((**server).clone())))
                    }
                    Event::HandshakeFailed(error) => st.handshake_failed(error.clone()),
                    // Its handler, still at work, is dropped: no answer goes.
                    Event::ServerRequestCancelled { id, .. } => {
                        st.inbound.cancelled.push(id.clone());
                        work.for_handlers = true;
                    }
                    #[cfg(feature = "oauth")]
                    Event::AuthorizationRequired(refusal) => match self.auth.as_mut() {
                        Some(auth) => auth.required((**refusal).clone()),
                        None => self
                            .authorized
                            .push(crate::oauth::AuthOutcome::Failed("no authorizer".into())),
                    },
                    Event::Closed(closed) => st.set_terminal(closed.clone()),
                    _ => {}
                }
                st.events.push(event);
            }
        }
    }

    /// Outside the state's lock: the stderr callback and the authorization's work. Returns
    /// whether anything happened (so the loop steps again to settle it).
    pub(crate) fn run(
        &mut self,
        _cx: &mut Context<'_>,
        work: AppWork,
        on_stderr: Option<&crate::stdio::StderrCallback>,
    ) -> bool {
        #[allow(unused_mut)]
        let mut progressed = !work.stderr_lines.is_empty() || !self.failures.is_empty();
        // The callback is wrapped at connect time: a panic in it is caught and told.
        if let Some(cb) = on_stderr {
            work.stderr_lines.iter().for_each(|l| cb(l));
        }
        #[cfg(feature = "oauth")]
        if let Some(auth) = self.auth.as_mut() {
            if let Some(outcome) = auth.poll(_cx) {
                self.authorized.push(outcome);
                progressed = true;
            }
            if let Some(failure) = auth.take_failure() {
                self.failures.push(failure);
                progressed = true;
            }
        }
        progressed
    }
}

/// A JSON-RPC "internal error" with this message, for an answer that could not be encoded.
fn internal(message: &str) -> ErrorObject {
    ErrorObject::new(mcpwire_core::jsonrpc::codes::INTERNAL_ERROR, message)
}
