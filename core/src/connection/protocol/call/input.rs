//! The stateless era's `input_required` rounds: a call whose result asks for input is sent again
//! with a new id, the same method and params, the inputs, and the request state echoed byte for
//! byte.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::params::META_LOG_LEVEL;
use crate::connection::protocol::server_requests::{admit, read_input, InputRequests, Refusal};
use crate::connection::protocol::vocabulary::events::{
    CallError, CallId, CallOptions, ServerRequest,
};
use crate::jsonrpc::{ErrorObject, Id, RawJson, StrRef};
use crate::types::ClientCapabilities;

/// How a stateless-era result reads.
enum ResultKind {
    Complete,
    Task,
    InputRequired {
        requests: InputRequests,
        state: Option<Box<RawValue>>,
    },
    Unknown(String),
}

fn result_kind(raw: &RawJson) -> Result<ResultKind, String> {
    // Most results are complete and many are big: look before parsing.
    if memchr::memmem::find(raw.get().as_bytes(), b"\"resultType\"").is_none() {
        return Ok(ResultKind::Complete);
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Head<'a> {
        #[serde(default, borrow)]
        result_type: Option<StrRef<'a>>,
        #[serde(default)]
        input_requests: Option<InputRequests>,
        #[serde(default)]
        request_state: Option<Box<RawValue>>,
    }
    let head: Head = raw.parse().map_err(|e| e.to_string())?;
    Ok(match head.result_type.as_ref().map(|t| t.0.as_ref()) {
        None | Some("complete") => ResultKind::Complete,
        Some("task") => ResultKind::Task,
        Some("input_required") => ResultKind::InputRequired {
            requests: head.input_requests.unwrap_or_default(),
            state: head.request_state,
        },
        Some(other) => ResultKind::Unknown(other.to_owned()),
    })
}

/// A stateless-era result, read.
pub(crate) enum Classified {
    /// The call's result.
    Complete(RawJson),
    /// A task in place of the result (`tools/call`, the tasks extension).
    Task(RawJson),
    /// The server asks for input before it can answer.
    InputRequired {
        /// The input requests, by the server's keys.
        requests: InputRequests,
        /// The request state to echo.
        state: Option<Box<RawValue>>,
    },
}

/// Reads a stateless-era result of a call of `method`, or of a method that may not ask for
/// input (`None`): an unknown `resultType`, or input asked where it is not allowed, is an
/// invalid result.
pub(crate) fn classify(result: RawJson, method: Option<&str>) -> Result<Classified, CallError> {
    let prefix = || method.map(|m| format!("{m}: ")).unwrap_or_default();
    match result_kind(&result) {
        Ok(ResultKind::Complete) => Ok(Classified::Complete(result)),
        Ok(ResultKind::Task) if method == Some("tools/call") => Ok(Classified::Task(result)),
        Ok(ResultKind::Task) => Err(CallError::InvalidResult(format!(
            "{}a task is not a valid answer to this method",
            prefix()
        ))),
        Ok(ResultKind::InputRequired { requests, state }) if method.is_some() => {
            Ok(Classified::InputRequired { requests, state })
        }
        Ok(ResultKind::InputRequired { .. }) => Err(CallError::InvalidResult(
            "input_required is not allowed for this method".into(),
        )),
        Ok(ResultKind::Unknown(t)) => Err(CallError::InvalidResult(format!(
            "{}unknown resultType {t:?}",
            prefix()
        ))),
        Err(e) => Err(CallError::InvalidResult(format!("{}{e}", prefix()))),
    }
}

/// A stateless-era call that may need input rounds: what to send again.
#[derive(Debug)]
pub(crate) struct Retry {
    pub(crate) method: &'static str,
    /// The params as first sent, our `_meta` in them. Most calls never need them again: they
    /// are kept as those bytes and read back at the first round, into `params`. They are the
    /// request's own params, taken from its message once the transport has encoded it
    /// ([`keep_sent`](Self::keep_sent)): never a second copy of the whole argument.
    sent: Option<RawJson>,
    params: Option<Map<String, Value>>,
    pub(crate) opts: CallOptions,
    rounds: usize,
    answers: Vec<(String, Box<RawValue>)>,
    outstanding: usize,
    request_state: Option<Box<RawValue>>,
}

impl Retry {
    /// A call of `method` that may come back asking for input; its params as first sent come
    /// with [`keep_sent`](Self::keep_sent).
    pub(crate) fn new(method: &'static str, opts: CallOptions) -> Self {
        Retry {
            method,
            sent: None,
            params: None,
            opts,
            rounds: 0,
            answers: Vec::new(),
            outstanding: 0,
            request_state: None,
        }
    }

    /// Starts a round: the server's input requests, each with the id the application answers
    /// it under. Empty when the round asks for nothing (state only): send again at once.
    pub(crate) fn begin_round(
        &mut self,
        call: CallId,
        requests: InputRequests,
        state: Option<Box<RawValue>>,
        caps: &ClientCapabilities,
        max_rounds: usize,
    ) -> Result<Vec<(Id, String, ServerRequest)>, CallError> {
        self.rounds += 1;
        if self.rounds > max_rounds {
            return Err(CallError::InvalidResult(format!(
                "{} asked for input more than {max_rounds} times",
                self.method
            )));
        }
        self.request_state = state;
        self.answers.clear();
        self.outstanding = requests.len();
        let mut surfaced = Vec::with_capacity(requests.len());
        for (key, request) in requests {
            let (method, params, fields) = read_input(&request);
            let method = method.as_str();
            let id = Id::Str(format!("input/{}/{key}", call.0));
            let r = match admit(caps, id.clone(), method, params, fields) {
                Ok(r) => r,
                Err(Refusal::Invalid(error)) => return Err(CallError::InputFailed { key, error }),
                Err(Refusal::Undeclared(_)) => {
                    return Err(CallError::InvalidResult(format!(
                    "the server asked for input {key:?} by {method:?}, which this client did not declare"
                )))
                }
            };
            surfaced.push((id, key, r));
        }
        Ok(surfaced)
    }

    /// How many rounds the call has had.
    pub(crate) fn rounds(&self) -> u32 {
        u32::try_from(self.rounds).unwrap_or(u32::MAX)
    }

    /// Keeps `params`, those of the call's first request once the transport has encoded it
    /// (with the connection's `_meta`); those of a later request (a round's) are not kept.
    pub(crate) fn keep_sent(&mut self, params: Option<RawJson>) {
        if self.rounds == 0 && self.params.is_none() && self.sent.is_none() {
            self.sent = params;
        }
    }

    /// The params to send again (without `_meta` members that are `ours`, which the request
    /// gets again). Read back from the bytes first sent when first asked for.
    pub(crate) fn params(&mut self, ours: &Map<String, Value>) -> &Map<String, Value> {
        self.params.get_or_insert_with(|| {
            let mut params: Map<String, Value> = self
                .sent
                .take()
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .unwrap_or_default();
            if let Some(Value::Object(meta)) = params.get_mut("_meta") {
                // Ours are sent again as they are now (a log level asked for since, or no more).
                meta.retain(|k, _| !ours.contains_key(k) && k != META_LOG_LEVEL);
                if meta.is_empty() {
                    params.remove("_meta");
                }
            }
            params
        })
    }

    /// One input given. Returns whether the round is complete.
    pub(crate) fn answer(&mut self, key: String, value: RawJson) -> bool {
        self.answers.push((key, value.into_raw()));
        self.outstanding -= 1;
        self.outstanding == 0
    }

    /// The members the request carries again: the inputs given, and the request state echoed
    /// byte for byte (left out when the server gave none).
    pub(crate) fn resend_members(&self) -> Result<Vec<(&'static str, Box<RawValue>)>, CallError> {
        let mut members = Vec::with_capacity(2);
        if !self.answers.is_empty() {
            let responses: BTreeMap<&str, &RawValue> = self
                .answers
                .iter()
                .map(|(k, v)| (k.as_str(), &**v))
                .collect();
            let responses = serde_json::value::to_raw_value(&responses)
                .map_err(|e| CallError::InvalidResult(e.to_string()))?;
            members.push(("inputResponses", responses));
        }
        if let Some(state) = &self.request_state {
            members.push(("requestState", state.clone()));
        }
        Ok(members)
    }
}

/// What an answer to an input request did.
pub(crate) enum Answered {
    /// Other inputs of the round are still awaited.
    Waiting,
    /// The round is complete: send the call again.
    Complete(CallId, Box<Retry>),
    /// The application could not give the input: the call ends.
    Failed(CallId, CallError),
}

/// The stateless-era calls waiting for the application's inputs, and the ids their input
/// requests were surfaced under.
#[derive(Debug, Default)]
pub(crate) struct AwaitingInputs {
    calls: HashMap<CallId, Box<Retry>>,
    inputs: HashMap<Id, (CallId, String)>,
}

impl AwaitingInputs {
    /// `call` waits for the inputs of its round; gives the requests to surface.
    pub(crate) fn wait(
        &mut self,
        call: CallId,
        retry: Box<Retry>,
        surfaced: Vec<(Id, String, ServerRequest)>,
    ) -> Vec<ServerRequest> {
        self.calls.insert(call, retry);
        let mut requests = Vec::with_capacity(surfaced.len());
        for (id, key, request) in surfaced {
            self.inputs.insert(id, (call, key));
            requests.push(request);
        }
        requests
    }

    /// Stops waiting for `call` (cancelled); `None` when it was not waiting.
    pub(crate) fn remove(&mut self, call: CallId) -> Option<Box<Retry>> {
        let retry = self.calls.remove(&call)?;
        self.inputs.retain(|_, (c, _)| *c != call);
        Some(retry)
    }

    /// An answer for input request `id`; the answer back when `id` is no input request of
    /// ours.
    pub(crate) fn answer(
        &mut self,
        id: &Id,
        answer: Result<RawJson, ErrorObject>,
    ) -> Result<Answered, Result<RawJson, ErrorObject>> {
        let Some((call, key)) = self.inputs.remove(id) else {
            return Err(answer);
        };
        let Some(retry) = self.calls.get_mut(&call) else {
            return Ok(Answered::Waiting);
        };
        Ok(match answer {
            Ok(value) => {
                if !retry.answer(key, value) {
                    return Ok(Answered::Waiting);
                }
                Answered::Complete(call, self.calls.remove(&call).expect("present"))
            }
            Err(error) => {
                self.remove(call);
                Answered::Failed(call, CallError::InputFailed { key, error })
            }
        })
    }

    /// Every waiting call, in order, and forgets them all (the connection ended).
    pub(crate) fn drain(&mut self) -> Vec<CallId> {
        let mut calls: Vec<CallId> = self.calls.drain().map(|(c, _)| c).collect();
        calls.sort_unstable();
        self.inputs.clear();
        calls
    }
}
