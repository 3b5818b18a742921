//! What the engine hands back, made the application's: a request's outcome becomes its call's
//! end (or its next page, input round or task), progress goes to its call, a server request is
//! admitted or refused, and the engine's close ends everything.

use std::time::Instant;

use serde_json::{Map, Value};

use super::ClientProtocol;
use crate::connection::protocol::call::at_most_once::safe_to_repeat;
use crate::connection::protocol::call::input::{classify, Classified};
use crate::connection::protocol::call::params::{raw, ParamsRef};
use crate::connection::protocol::era::ChosenEra;
use crate::connection::protocol::handshake::{Ctx, Phase};
use crate::connection::protocol::server_requests::{admit, field_order};
use crate::connection::protocol::tasks::follow::{self, Shape};
use crate::connection::protocol::vocabulary::events::{
    CallError, CallId, CallOptions, Diagnostic, Event,
};
use crate::jsonrpc::{RawJson, Request};
use crate::rpc::{LocalError, Outcome, Output, Reply};

impl ClientProtocol {
    /// Moves everything the engine produced into our queues, handling what is ours.
    pub(super) fn pump(&mut self, now: Instant) {
        while let Some(out) = self.engine.poll_output() {
            match out {
                Output::Send(m) => self.transmit.push_back(m),
                // Over stdio a request is a line already written: nothing is left to withdraw.
                Output::Withdraw { id } if self.over_http => self.withdrawn.push(id),
                Output::Withdraw { .. } => {}
                Output::Completed { id, outcome, .. } => self.completed(now, id, outcome),
                Output::Progress { id, progress } => {
                    let call = self.calls.get(&id).map(|c| c.call);
                    if let Some(call) = call {
                        self.events.push_back(Event::Progress { call, progress });
                    }
                }
                Output::InboundRequest(r) => self.server_request(now, r),
                Output::InboundCancelled { id, reason } => self.server_cancelled(now, id, reason),
                Output::Diagnostic(d) => self.events.push_back(Event::Diagnostic(d)),
                Output::Closed(closed) => {
                    // Calls following a task end before the close is told.
                    self.fail_tasks(&LocalError::Closed(closed.clone()));
                    self.served.close();
                    self.handshake.phase = Phase::Closed;
                    self.calls.clear();
                    self.current.clear();
                    #[cfg(feature = "schemas")]
                    self.output_checks.clear();
                    self.events.push_back(Event::Closed(closed));
                }
            }
        }
        self.resume_held(now);
    }

    pub(super) fn completed(&mut self, now: Instant, id: i64, outcome: Outcome) {
        let Some(outcome) = self.handshake.completed(now, cx!(self), id, outcome) else {
            return;
        };
        let outcome = match outcome {
            Ok(Reply::Result(r)) => Ok(r),
            Ok(Reply::Error(e)) => Err(CallError::from_server(e)),
            Err(e) => Err(CallError::Local(e)),
        };
        if let Some((call, purpose)) = self.tasks.take_request(id) {
            return self.task_reply(now, call, purpose, outcome);
        }
        let Some(state) = self.calls.remove(&id) else {
            return;
        };
        let Some((state, outcome)) = self.refused(now, state, outcome) else {
            return;
        };
        let call = state.call;
        let Some((retry, outcome)) = self.header_mismatch(now, call, state.retry, outcome) else {
            return;
        };
        let outcome = match (state.listing, retry, outcome) {
            (Some(listing), _, Ok(page)) => match self.next_page(now, call, listing, &page) {
                Ok(None) => return,
                Ok(Some(all)) => Ok(all),
                Err(e) => Err(e),
            },
            (None, Some(retry), Ok(result)) => match classify(result, Some(retry.method)) {
                Ok(Classified::Complete(result)) => Ok(result),
                // A detached task is the caller's to follow.
                Ok(Classified::Task(result)) if retry.opts.detach_task => Ok(result),
                Ok(Classified::Task(result)) => {
                    let opts = retry.opts.clone();
                    return self.task_started(now, call, Shape::Extension, &result, opts);
                }
                Ok(Classified::InputRequired { requests, state }) => {
                    match self.input_round(now, call, retry, requests, state) {
                        Ok(()) => return,
                        Err(e) => Err(e),
                    }
                }
                Err(e) => Err(e),
            },
            (None, None, Ok(result)) if self.handshake.era == Some(ChosenEra::Stateless) => {
                classify(result, None).map(|c| match c {
                    Classified::Complete(result) => result,
                    Classified::InputRequired { .. } | Classified::Task(_) => {
                        unreachable!("refused by classify")
                    }
                })
            }
            (None, None, Ok(result))
                if state.task.as_ref().is_some_and(|o| !o.detach_task)
                    && follow::created_task(&result) =>
            {
                let opts = *state.task.expect("a task-mode call");
                return self.task_started(now, call, Shape::Utility, &result, opts);
            }
            (_, _, outcome) => outcome,
        };
        self.end_call(call, outcome);
    }

    /// Whether a call may be re-issued by the connection: a safe method, a call marked safe, or
    /// (when the configuration trusts them) a tool the server annotates read-only or idempotent.
    pub(super) fn repeatable(
        &self,
        method: &str,
        params: Option<ParamsRef<'_>>,
        opts: &CallOptions,
    ) -> bool {
        let trusted = self.config.trust_tool_annotations
            && method == "tools/call"
            && params
                .and_then(ParamsRef::tool)
                .is_some_and(|t| self.repeatable_tools.contains(t));
        trusted || safe_to_repeat(method, opts)
    }

    /// `call` ends: exactly once, with `outcome`.
    pub(super) fn end_call(&mut self, call: CallId, outcome: Result<RawJson, CallError>) {
        self.current.remove(&call);
        self.refusals.forget(call);
        if self.own_list_ended(call, &outcome) || self.resource_listen_ended(call, &outcome) {
            return;
        }
        #[cfg(feature = "schemas")]
        let outcome = self.check_output(call, outcome);
        self.events.push_back(Event::CallDone { call, outcome });
    }

    pub(super) fn server_request(&mut self, now: Instant, r: Request) {
        if r.method == "ping" {
            let _ = self.engine.respond(now, &r.id, Ok(raw(&Map::new())));
            let meta = r.params.as_ref().and_then(|p| {
                #[derive(serde::Deserialize)]
                struct Params {
                    #[serde(rename = "_meta")]
                    meta: Option<Map<String, Value>>,
                }
                serde_json::from_str::<Params>(p.get()).ok()?.meta
            });
            self.events
                .push_back(Event::ServerPinged { id: r.id, meta });
            return;
        }
        let Some(r) = self.tasks_request(now, r) else {
            return;
        };
        let params: Value = r.params_as().unwrap_or(Value::Null);
        let fields = match (&*r.method, &r.params) {
            ("elicitation/create", Some(raw)) => field_order(raw.get()),
            _ => Vec::new(),
        };
        let caps = self.session_capabilities();
        match admit(caps, r.id.clone(), &r.method, params, fields) {
            Ok(request) => self.surface(now, request),
            Err(refusal) => {
                let refusal = refusal.into_error();
                let _ = self.engine.respond(now, &r.id, Err(refusal.clone()));
                self.events
                    .push_back(Event::Diagnostic(Diagnostic::RefusedServerRequest {
                        id: r.id,
                        method: r.method.into_owned(),
                        error: refusal,
                    }));
            }
        }
    }
}
