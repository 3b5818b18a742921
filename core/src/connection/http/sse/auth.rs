//! Authorization on the 2024-11-05 HTTP+SSE transport, as on Streamable HTTP (see the `auth`
//! module of `http`): a `401` (or a `403` with `error="insufficient_scope"`) to the GET stream
//! or to a POST parks what it refused, and the driver is asked, once, to authorize
//! ([`AuthorizationRequired`]). Until it answers nothing else is POSTed. With a token
//! ([`HttpSse::set_access_token`]) the stream opens again and each parked message is POSTed
//! again as it was (a refused request was not executed: it keeps its id). With a refusal
//! ([`HttpSse::authorization_failed`]) each parked request ends with the error; a parked stream
//! ends the connection (there is no transport without it).
//!
//! An exchange remembers the token it went with: a refusal of one sent before the current token
//! goes again with it, without asking again.

use std::time::Instant;

use super::{HttpSse, Waiting};
use crate::connection::http::challenge::{asks_for_authorization, challenges, end_waiting};
use crate::connection::http::{ExchangeId, HttpAction, HttpMethod};
use crate::connection::protocol::client::{ClientProtocol, TransportSignal};
use crate::connection::protocol::vocabulary::events::Event;
use crate::error::{redact_url, AuthorizationRequired};
use crate::rpc::LocalError;

impl HttpSse {
    /// Whether `exchange`'s head refuses it for want of authorization, authorization being on:
    /// then it is aborted and parked (or, sent with an older token, sent again at once), and the
    /// driver is asked unless it was already. Returns whether it was taken.
    pub(super) fn refused_for_authorization(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        status: u16,
        headers: &[(String, String)],
    ) -> bool {
        let (challenges, challenge) = challenges(headers);
        if !self.auth.enabled
            || self.closing
            || protocol.is_closed()
            || !asks_for_authorization(status, challenge.as_ref(), &challenges)
        {
            return false;
        }
        let (generation, parked) = if Some(exchange) == self.stream {
            self.stream = None;
            (self.stream_generation, None)
        } else if let Some(post) = self.posts.remove(&exchange) {
            (post.generation, Some((post.request, post.body)))
        } else {
            return false;
        };
        self.actions.push_back(HttpAction::Abort(exchange));
        if generation < self.auth.generation && !self.auth.is_waiting() {
            // Sent before the current token: it goes again with it.
            match parked {
                Some((request, body)) => {
                    self.post(protocol, body, request, false);
                }
                None => self.open_stream(now),
            }
            return true;
        }
        if !self.auth.is_waiting() {
            let refusal = AuthorizationRequired {
                status,
                url: redact_url(&self.url),
                challenges,
                challenge,
            };
            self.notes
                .push_back(Event::AuthorizationRequired(Box::new(refusal.clone())));
            self.auth.waiting = Some(Waiting {
                refusal,
                posts: Vec::new(),
                stream: false,
            });
        }
        let waiting = self.auth.waiting.as_mut().expect("set above");
        match parked {
            Some(post) => waiting.posts.push(post),
            None => {
                waiting.stream = true;
                // The time to authorize is the user's, not the server's: the endpoint's
                // deadline starts again with the stream.
                self.endpoint_deadline = None;
            }
        }
        true
    }

    /// The driver authorized: `token` goes on every request from now on, and what waited goes
    /// again.
    pub fn set_access_token(&mut self, protocol: &mut ClientProtocol, now: Instant, token: &str) {
        self.headers
            .set_authorization(Some(format!("Bearer {token}")));
        self.auth.generation += 1;
        let waiting = self.auth.waiting.take();
        if self.closing || protocol.is_closed() {
            return;
        }
        if let Some(waiting) = waiting {
            if waiting.stream {
                self.open_stream(now);
            }
            for (request, body) in waiting.posts {
                if request.is_none_or(|id| protocol.is_pending(id)) {
                    self.post(protocol, body, request, false);
                }
            }
        }
    }

    /// The driver could not authorize: each request that waited ends with the refusal and
    /// `reason`; a stream that waited ends the connection.
    pub fn authorization_failed(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        reason: &str,
    ) {
        let Some(waiting) = self.auth.waiting.take() else {
            return;
        };
        let refusal = waiting.refusal;
        let requests = waiting.posts.iter().map(|(request, _)| *request);
        end_waiting(protocol, now, &mut self.notes, &refusal, reason, requests);
        if waiting.stream {
            self.closing = true;
            self.endpoint_deadline = None;
            let mut ids: Vec<ExchangeId> = self.posts.keys().copied().collect();
            ids.sort_unstable();
            for id in ids {
                self.abort(id);
            }
            let error = LocalError::Http(Box::new(refusal.failed(reason)));
            protocol.handle_transport(now, TransportSignal::NoTransport(error));
        }
    }

    /// Opens the GET stream (again): a new exchange, a fresh decoder, the endpoint's deadline
    /// counted from now when the endpoint is not known yet.
    pub(super) fn open_stream(&mut self, now: Instant) {
        let mut headers = vec![("Accept".to_string(), "text/event-stream".to_string())];
        self.headers.extend(&mut headers, false);
        self.decoder = crate::codec::sse::McpSseDecoder::with_max_event_size(self.max_event);
        let id = self.start_exchange(HttpMethod::Get, self.url.clone(), headers, Vec::new());
        self.stream = Some(id);
        self.stream_generation = self.auth.generation;
        if self.endpoint.is_none() {
            self.endpoint_deadline = Some(now + self.init_timeout);
        }
    }
}
