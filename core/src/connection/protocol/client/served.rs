//! The connection's side of the tasks it runs for the server (see `served_tasks`): where the
//! server's requests, the application's answers, the server's cancellations and time reach the
//! store, and where what the store asks for goes out.

use std::time::Instant;

use serde_json::Value;

use super::ClientProtocol;
use crate::connection::protocol::era::ChosenEra;
use crate::connection::protocol::tasks::served::{self, Effect};
use crate::connection::protocol::vocabulary::events::{Diagnostic, Event, ServerRequest};
use crate::jsonrpc::{codes, ErrorObject, Id, RawJson, Request};
use crate::rpc::Responded;

impl ClientProtocol {
    /// Tells the connection what the wall clock read at `now`, in milliseconds since the Unix
    /// epoch: the times of the tasks it runs for the server are counted from it.
    pub fn set_wall_clock(&mut self, now: Instant, unix_millis: u64) {
        self.served.set_wall_clock(now, unix_millis);
    }

    /// Whether the connection runs the server's requests as tasks: the handshake era only (the
    /// stateless era has no requests from the server).
    fn serves_tasks(&self) -> bool {
        self.handshake.era == Some(ChosenEra::Handshake)
    }

    /// A server's request before it is admitted: one of the tasks methods is served here
    /// (`None`); any other is given back.
    pub(super) fn tasks_request(&mut self, now: Instant, r: Request) -> Option<Request> {
        let caps = &self.session_capabilities().clone();
        if !self.serves_tasks() || !served::is_tasks_method(caps, &r.method) {
            return Some(r);
        }
        let params: Value = r.params_as().unwrap_or(Value::Null);
        self.served.serve(now, r.id, &r.method, &params, caps);
        self.flush_served(now);
        None
    }

    /// A server's request admitted: made a task first when the server asks for one, then
    /// surfaced to the application.
    pub(super) fn surface(&mut self, now: Instant, request: ServerRequest) {
        let id = request.id().clone();
        let (method, params) = match &request {
            ServerRequest::Elicitation { params, .. } => ("elicitation/create", Some(params)),
            ServerRequest::Sampling { params, .. } => ("sampling/createMessage", Some(params)),
            _ => ("roots/list", None),
        };
        if self.served.is_owed(&id) {
            // The id is still the application's for a task's request: answering this one
            // under it would make two requests of one id.
            let error = ErrorObject::new(
                codes::INVALID_REQUEST,
                format!("request id {id} is still in use by a task's request"),
            );
            return self.refuse(now, id, method, error);
        }
        let caps = &self.session_capabilities().clone();
        let ttl = match params {
            Some(params) if self.serves_tasks() => served::asks_for_task(caps, method, params),
            _ => None,
        };
        if let Some(ttl) = ttl {
            let limit = self.config.limits.max_served_tasks;
            match self.served.create(now, &id, ttl, limit) {
                Ok(created) => {
                    let _ = self.engine.respond(now, &id, Ok(created));
                }
                Err(error) => return self.refuse(now, id, method, error),
            }
        }
        self.events.push_back(Event::ServerRequest(request));
    }

    /// Answers a server's request with `error`, and says so.
    fn refuse(&mut self, now: Instant, id: Id, method: &str, error: ErrorObject) {
        let _ = self.engine.respond(now, &id, Err(error.clone()));
        self.events
            .push_back(Event::Diagnostic(Diagnostic::RefusedServerRequest {
                id,
                method: method.to_owned(),
                error,
            }));
    }

    /// The application answered the server's request `id`: when it runs as a task, the answer
    /// is the task's outcome. `Err` gives the answer back when `id` is no task's.
    pub(super) fn answer_task(
        &mut self,
        now: Instant,
        id: &Id,
        answer: Result<RawJson, ErrorObject>,
    ) -> Result<Responded, Result<RawJson, ErrorObject>> {
        let responded = self.served.answer(now, id, answer)?;
        self.flush_served(now);
        self.pump(now);
        Ok(responded)
    }

    /// The server cancelled its request `id`: a `tasks/result` waiting here is dropped (its
    /// entry in the engine freed, nothing sent); any other is the application's to know.
    pub(super) fn server_cancelled(&mut self, now: Instant, id: Id, reason: Option<String>) {
        if self.served.forget_waiter(&id) {
            let _ = self.engine.respond(
                now,
                &id,
                Err(ErrorObject::new(codes::INTERNAL_ERROR, "cancelled")),
            );
            return;
        }
        self.events
            .push_back(Event::ServerRequestCancelled { id, reason });
    }

    /// Deletes the tasks whose TTL has run out.
    pub(super) fn served_due(&mut self, now: Instant) {
        self.served.expire(now);
        self.flush_served(now);
    }

    /// Carries out what the store asks for: answers and notifications to the server, word to
    /// the application.
    fn flush_served(&mut self, now: Instant) {
        while let Some(effect) = self.served.poll_effect() {
            match effect {
                Effect::Respond(id, answer) => {
                    let _ = self.engine.respond(now, &id, answer);
                }
                Effect::Status(task) => {
                    let _ = self
                        .engine
                        .notify(now, "notifications/tasks/status", Some(task));
                }
                Effect::Abandoned { request, reason } => {
                    self.events.push_back(Event::ServerRequestCancelled {
                        id: request,
                        reason: Some(reason),
                    })
                }
            }
        }
    }
}
