//! A request lost after it may have reached the server: the start's probe and `initialize` go
//! once more; a call safe to repeat is re-issued once, with a new id; any other ends as maybe
//! executed (at most once).

use std::sync::Arc;
use std::time::Instant;

use super::{ClientProtocol, Ctx};
use crate::connection::protocol::call::at_most_once::{decide, Lost, Repeat};
use crate::connection::protocol::vocabulary::events::CallError;
use crate::rpc::LocalError;

impl ClientProtocol {
    /// Request `id` was lost after it may have reached the server (at most once): the start's
    /// probe or `initialize` lost on a stale connection, and a call safe to repeat, is sent
    /// again once with a new id, and its caller sees nothing of it; any other (or a second
    /// loss) ends as maybe executed.
    pub(super) fn lost_after_sending(
        &mut self,
        now: Instant,
        id: i64,
        reason: Arc<str>,
        http: Option<Box<crate::error::HttpError>>,
    ) {
        // The start's probe and `initialize` go once more when no byte of an answer came, on a
        // reused connection the server had closed (they change nothing on a server). A head
        // that came but cannot be read is an answer: the start ends on it.
        let stale = http
            .as_ref()
            .is_some_and(|h| h.kind == crate::error::HttpErrorKind::StaleConnection);
        let start = match stale {
            true => self.handshake.resend_lost(now, cx!(self), id),
            false => self.handshake.was_resent(id).then_some(false),
        };
        if start == Some(true) {
            return self.pump(now);
        }
        let repeat = self.calls.get(&id).and_then(|s| s.repeat.as_deref());
        if decide(repeat) == Lost::End {
            let reason = if start == Some(false) || repeat.is_some_and(|r| r.used) {
                // Say that the one re-issue was spent, so the words match what was done.
                format!(
                    "it was already sent a second time, with a new id, after the first attempt \
                     was lost, and that was lost too: {reason}"
                )
                .into()
            } else {
                reason
            };
            return self.fail_request(now, id, LocalError::MaybeExecuted { reason, http });
        }
        let mut state = self.calls.remove(&id).expect("a call safe to repeat");
        // The old request ends here without a word to its caller: its call goes on under the
        // new id (told as an event, for traces).
        let _ = self.engine.fail(now, id, LocalError::StreamLost);
        let call = state.call;
        // Told for the host's calls only: the connection's own (its `tools/list`, a listen that
        // carries resource subscriptions) reach no caller, their events neither.
        if !self.is_connections_own(call) {
            self.events.push_back(
                crate::connection::protocol::vocabulary::events::Event::CallReissued {
                    call,
                    reason,
                },
            );
        }
        let sent = match state.retry.take() {
            // A stateless call in its input rounds: its round again, inputs and state included.
            Some(retry) => self.send_round(now, call, retry, true).map(|()| None),
            None => {
                let repeat = state.repeat.as_mut().expect("checked");
                repeat.used = true;
                let Repeat {
                    method,
                    params,
                    opts,
                    ..
                } = (**repeat).clone();
                let sent = self.send(now, Some(call), method, params.as_ref(), &opts, &[]);
                sent.map(Some).map_err(CallError::of_refused)
            }
        };
        match sent {
            Ok(Some(new_id)) => {
                self.calls.insert(new_id, state);
                self.current.insert(call, new_id);
            }
            Ok(None) => {}
            Err(e) => self.end_call(call, Err(e)),
        }
        self.pump(now);
    }
}
