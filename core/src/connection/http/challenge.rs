//! What both HTTP transports share about authorization: a response's challenges, whether it
//! asks for an OAuth authorization, and how what waited for one ends when none can be had.

use std::collections::VecDeque;
use std::time::Instant;

use crate::connection::protocol::client::{ClientProtocol, TransportSignal};
use crate::connection::protocol::vocabulary::events::Event;
use crate::error::{AuthChallenge, AuthorizationRequired};
use crate::rpc::LocalError;

/// A response's `WWW-Authenticate` values, in order, and the first one parsed.
pub(crate) fn challenges(headers: &[(String, String)]) -> (Vec<String>, Option<AuthChallenge>) {
    let all: Vec<String> = headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("www-authenticate"))
        .map(|(_, v)| v.clone())
        .collect();
    let first = all.first().and_then(|v| AuthChallenge::parse(v));
    (all, first)
}

/// Whether a response with this status and challenge (the first of `challenges`, the
/// `WWW-Authenticate` values) asks for an OAuth authorization: a `401` with no challenge or an
/// OAuth one (`Bearer`, `DPoP`; a `401` asking only for `Basic` is no OAuth server's, or is a
/// proxy's), or a `403` with `error="insufficient_scope"`.
pub(crate) fn asks_for_authorization(
    status: u16,
    challenge: Option<&AuthChallenge>,
    challenges: &[String],
) -> bool {
    let oauth = crate::www_authenticate::invites_oauth(challenges.iter().map(String::as_str));
    (status == 401 && oauth)
        || (status == 403
            && challenge.is_some_and(|c| c.param("error") == Some("insufficient_scope")))
}

/// Ends what waited for an authorization that could not be had (`reason`): each request
/// (`Some(id)`) still pending with the refusal's error; each message that is no request
/// (`None`) dropped, with a note. Both transports' refusals end this way.
pub(crate) fn end_waiting(
    protocol: &mut ClientProtocol,
    now: Instant,
    notes: &mut VecDeque<Event>,
    refusal: &AuthorizationRequired,
    reason: &str,
    requests: impl IntoIterator<Item = Option<i64>>,
) {
    for request in requests {
        match request {
            Some(id) if protocol.is_pending(id) => {
                let error = LocalError::Http(Box::new(refusal.failed(reason)));
                protocol.handle_transport(now, TransportSignal::RequestLost { id, error });
            }
            Some(_) => {}
            None => {
                let note = format!("a message waiting for authorization was dropped: {reason}");
                notes.push_back(Event::http_note(note));
            }
        }
    }
}
