//! A call's later requests: the stateless era's input rounds (the call sent again with the
//! inputs and the request state) and a list's next pages.

use std::borrow::Cow;
use std::time::Instant;

use serde_json::value::RawValue;

use super::{CallState, ClientProtocol, Repeat};
use crate::connection::protocol::call::input::{Answered, Retry};
use crate::connection::protocol::call::listing::{Listing, PageStep};
use crate::connection::protocol::call::params::ParamsRef;
use crate::connection::protocol::era::ChosenEra;
use crate::connection::protocol::server_requests::InputRequests;
use crate::connection::protocol::vocabulary::events::{CallError, CallId, Diagnostic, Event};
use crate::jsonrpc::RawJson;

impl ClientProtocol {
    /// Surfaces one round's input requests; a round that asks for nothing (state only) is sent
    /// again at once.
    pub(super) fn input_round(
        &mut self,
        now: Instant,
        call: CallId,
        mut retry: Box<Retry>,
        requests: InputRequests,
        state: Option<Box<RawValue>>,
    ) -> Result<(), CallError> {
        let caps = self.declared_for(call);
        let max = self.config.max_input_rounds;
        let surfaced = retry.begin_round(call, requests, state, caps, max)?;
        if !self.is_connections_own(call) {
            self.events.push_back(Event::InputRequired {
                call,
                round: retry.rounds(),
                requests: surfaced.iter().map(|(id, _, _)| id.clone()).collect(),
            });
        }
        if surfaced.is_empty() {
            return self.send_retry(now, call, retry);
        }
        let requests = self.awaiting.wait(call, retry, surfaced);
        let events = requests.into_iter().map(Event::ServerRequest);
        self.events.extend(events);
        Ok(())
    }

    pub(super) fn input_answered(&mut self, now: Instant, answered: Answered) {
        let outcome = match answered {
            Answered::Waiting => return,
            Answered::Complete(call, retry) => match self.send_retry(now, call, retry) {
                Ok(()) => return self.pump(now),
                Err(e) => (call, e),
            },
            Answered::Failed(call, e) => (call, e),
        };
        let (call, error) = outcome;
        self.end_call(call, Err(error));
    }

    /// Sends the call again with a new id: the same method and params, the inputs, and the
    /// request state echoed byte for byte.
    pub(super) fn send_retry(
        &mut self,
        now: Instant,
        call: CallId,
        retry: Box<Retry>,
    ) -> Result<(), CallError> {
        self.send_round(now, call, retry, false)
    }

    /// [`send_retry`](Self::send_retry); `reissued` when the round is sent again after a loss
    /// (then it is not re-issued a second time).
    pub(super) fn send_round(
        &mut self,
        now: Instant,
        call: CallId,
        mut retry: Box<Retry>,
        reissued: bool,
    ) -> Result<(), CallError> {
        let (method, opts) = (retry.method, retry.opts.clone());
        let owned = retry.resend_members()?;
        let members: Vec<(&str, &RawValue)> = owned.iter().map(|(k, v)| (*k, &**v)).collect();
        let params = retry.params(self.meta.members());
        let repeatable = self.repeatable(method, Some(ParamsRef::Map(params)), &opts);
        let repeat = repeatable.then(|| {
            let mut repeat = Repeat::new(method.into(), None, opts.clone());
            repeat.used = reissued;
            Box::new(repeat)
        });
        let sent = self.send(
            now,
            Some(call),
            Cow::Borrowed(method),
            Some(params),
            &opts,
            &members,
        );
        match sent {
            Ok(id) => {
                self.calls.insert(
                    id,
                    CallState {
                        call,
                        listing: None,
                        retry: Some(retry),
                        repeat,
                        task: None,
                    },
                );
                self.current.insert(call, id);
                self.pump(now);
                Ok(())
            }
            Err(e) => Err(CallError::of_refused(e)),
        }
    }

    /// Takes one page of a list; sends the next request, or gives the whole list.
    pub(super) fn next_page(
        &mut self,
        now: Instant,
        call: CallId,
        mut listing: Box<Listing>,
        page: &RawJson,
    ) -> Result<Option<RawJson>, CallError> {
        let stateless = self.handshake.era == Some(ChosenEra::Stateless);
        let all = match listing.take_page(page, stateless)? {
            PageStep::Done(all) => all,
            PageStep::Cut(all, reason) => {
                let cut = Diagnostic::ListCut {
                    method: listing.method.to_owned(),
                    pages: listing.pages(),
                    reason,
                };
                self.events.push_back(Event::Diagnostic(cut));
                all
            }
            PageStep::Next(params) => return self.next_page_request(now, call, listing, params),
        };
        if listing.method == "tools/list" {
            return Ok(Some(self.tools_listed(all)));
        }
        Ok(Some(all))
    }

    /// Sends the request of a list's next page.
    fn next_page_request(
        &mut self,
        now: Instant,
        call: CallId,
        listing: Box<Listing>,
        params: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Option<RawJson>, CallError> {
        let opts = listing.opts.clone();
        let method = Cow::Borrowed(listing.method);
        match self.send(now, Some(call), method.clone(), Some(&params), &opts, &[]) {
            Ok(id) => {
                let repeat = Some(Box::new(Repeat::new(method, Some(params), opts)));
                self.calls.insert(
                    id,
                    CallState {
                        call,
                        listing: Some(listing),
                        retry: None,
                        repeat,
                        task: None,
                    },
                );
                self.current.insert(call, id);
                Ok(None)
            }
            Err(e) => Err(CallError::of_refused(e)),
        }
    }
}
