//! What comes back on an exchange: its response head (a session assigned, a refusal, the body's
//! kind), each chunk of its body, and its end (a JSON body's messages handed over, an error's
//! excerpt, an SSE stream's last events).

use std::time::Instant;

use super::exchange::{Body, Exchange, ExchangeKind, Role};
use super::StreamableHttp;
use crate::connection::http::challenge::challenges;
use crate::connection::http::{header, media_type, ExchangeId, HttpAction};
use crate::connection::protocol::client::ClientProtocol;
use crate::connection::protocol::vocabulary::events::Event;
use crate::connection::transport::hand_over;
use crate::error::HttpErrorKind;
use crate::jsonrpc::{self, Message, Parsed};
use crate::tap::Direction;

/// A JSON body over this many bytes is let go as soon as it is parsed.
const LARGE_BODY: usize = 64 * 1024;

impl StreamableHttp {
    /// The response head of `exchange`.
    pub fn handle_head(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        status: u16,
        headers: &[(String, String)],
    ) {
        let session_header = header(headers, "mcp-session-id");
        let content_type = header(headers, "content-type");
        let (challenges, challenge) = challenges(headers);
        let max_event = self.config.max_event;
        let Some(ex) = self.exchanges.get_mut(&exchange) else {
            return;
        };
        ex.status = Some(status);
        ex.content_type = content_type.map(str::to_owned);
        ex.challenge = challenge;
        if (300..400).contains(&status) {
            ex.location = header(headers, "location").map(str::to_owned);
        }
        if self.refused_for_authorization(protocol, now, exchange, status, challenges) {
            return;
        }
        let ex = self.exchanges.get_mut(&exchange).expect("present");
        let media = content_type.map(media_type);
        let ok = (200..300).contains(&status);
        let in_lost_session = status == 404 && ex.sent_in.is_some();
        let answered = match &mut ex.kind {
            // Answered: it is never sent again (only a request that never left, one refused for
            // want of authorization, taken above, or a 404 in a session the server forgot is).
            // The message goes back to the protocol before the body is read.
            ExchangeKind::Post { replay, .. } if !in_lost_session => replay.take(),
            _ => None,
        };
        if let Some(m) = answered {
            protocol.transmitted(m);
        }
        let ex = self.exchanges.get_mut(&exchange).expect("present");
        if let ExchangeKind::Post {
            role: Role::Initialize,
            request: Some(id),
            ..
        } = ex.kind
        {
            // Only the `initialize` still awaited brings the session: a late answer to one
            // given up (timed out, replaced) must not take the place of the current one.
            if ok && session_header.is_some() && protocol.is_pending(id) {
                let assigned = session_header.unwrap_or_default();
                if let Err(e) = crate::header::check_session_id(assigned) {
                    // An id HTTP cannot carry back: the session cannot be used.
                    return self.unusable_session(protocol, now, exchange, e);
                }
                self.session.id = session_header.map(Into::into);
            }
        }
        let ex = self.exchanges.get_mut(&exchange).expect("present");
        ex.body = Body::for_head(&ex.kind, status, media.as_deref(), max_event);
        let max_json = self.config.max_json_body;
        let declared = header(headers, "content-length").and_then(|v| v.trim().parse::<u64>().ok());
        if let (Body::Json(buf), Some(n)) = (&mut ex.body, declared) {
            // Sized once for the length the head declares (within the cap): a large answer is
            // not copied from buffer to doubled buffer, nor kept in one twice its size.
            if n <= max_json as u64 {
                buf.reserve_exact(n as usize);
            }
        }
        if matches!(ex.body, Body::Json(_)) && declared.is_some_and(|n| n > max_json as u64) {
            // Refused from its head: nothing of it is read.
            let reason = format!(
                "the JSON body's Content-Length ({}) is over the {max_json}-byte cap",
                declared.unwrap_or_default()
            );
            let e = ex.error(HttpErrorKind::TooLarge, reason, &[]);
            self.fail_exchange(protocol, now, exchange, e);
            self.abort(exchange);
            return;
        }
        let post = matches!(ex.kind, ExchangeKind::Post { .. });
        let request = matches!(
            ex.kind,
            ExchangeKind::Post {
                request: Some(_),
                role: Role::Message,
                ..
            }
        );
        if ok && request {
            let tag = ex.sent_in.clone();
            self.session_held(tag.as_ref());
        } else if status == 404 && post && ex.sent_in.is_some() {
            // A 404 to a POST that carried a session: the server no longer knows it, whatever
            // the body says (the specification's MUST; a JSON-RPC error carrying the request's
            // own id included). The body is not read: it could only delay the renewal.
            return self.session_refused(protocol, now, exchange);
        }
        self.body_deadline(now, exchange);
    }

    /// A chunk of the body of `exchange`.
    pub fn handle_body(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
        bytes: &[u8],
    ) {
        let max_json = self.config.max_json_body;
        let Some(ex) = self.exchanges.get_mut(&exchange) else {
            return;
        };
        match &mut ex.body {
            Body::Json(buf) => {
                if buf.len() + bytes.len() > max_json {
                    let e = self.exchanges[&exchange].error(
                        HttpErrorKind::TooLarge,
                        format!("JSON body over the {max_json}-byte cap"),
                        &[],
                    );
                    self.fail_exchange(protocol, now, exchange, e);
                    self.abort(exchange);
                    return;
                }
                buf.extend_from_slice(bytes);
            }
            Body::Sse(dec) => {
                dec.push(bytes);
                self.drain_sse(protocol, now, exchange);
            }
            Body::Error(buf) => {
                let room = crate::error::EXCERPT.saturating_sub(buf.len());
                buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
                if buf.len() >= crate::error::EXCERPT {
                    // The excerpt is full: the rest is not read.
                    self.actions.push_back(HttpAction::Abort(exchange));
                    return self.handle_end(protocol, now, exchange);
                }
            }
            Body::Waiting | Body::Ignored => {}
        }
        self.body_deadline(now, exchange);
    }

    /// Hands every message of a JSON body to the protocol; the tap sees the body as received.
    pub(super) fn deliver_body(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        parsed: Parsed<Message>,
        body: &[u8],
    ) {
        if let Some(o) = self.observer.as_mut() {
            o.frame(Direction::Incoming, body);
        }
        hand_over(protocol, &mut self.notes, now, parsed);
    }

    /// The body of `exchange` ended.
    pub fn handle_end(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        exchange: ExchangeId,
    ) {
        let Some(mut ex) = self.exchanges.remove(&exchange) else {
            return;
        };
        match std::mem::replace(&mut ex.body, Body::Ignored) {
            Body::Json(buf) if !(200..300).contains(&ex.status.unwrap_or(0)) => {
                if !self.refusal_ended(protocol, now, &ex, &buf) {
                    let reason = self
                        .configured
                        .status_reason(ex.status, ex.challenge.as_ref());
                    let err = ex.error(ex.status_kind(), reason, &buf);
                    self.fail_kind(protocol, now, &ex.kind, err);
                }
            }
            Body::Json(mut buf) => {
                match jsonrpc::parse(&buf) {
                    Ok(parsed) => {
                        if let Some(o) = self.observer.as_mut() {
                            o.frame(Direction::Incoming, &buf);
                        }
                        // The messages own their parts: a large body is let go before they are
                        // handed over (only its start is kept, for an error), so it is not
                        // still held while the caller reads the answer out of them.
                        if buf.len() > LARGE_BODY {
                            buf.truncate(crate::error::EXCERPT);
                            buf.shrink_to_fit();
                        }
                        hand_over(protocol, &mut self.notes, now, parsed);
                    }
                    Err(e) => {
                        let err = ex.error(
                            HttpErrorKind::BadBody,
                            format!("the JSON body is not a message: {e}"),
                            &buf,
                        );
                        self.fail_kind(protocol, now, &ex.kind, err);
                    }
                }
                // Routed by id: if the body did not answer the request, it never will. (The
                // error is made only then: most bodies answer it.)
                if ex.kind.awaiting().is_some_and(|id| protocol.is_pending(id)) {
                    let err = ex.error(
                        HttpErrorKind::BadBody,
                        "the JSON body held no response for the request".into(),
                        &buf,
                    );
                    self.fail_kind(protocol, now, &ex.kind, err);
                }
            }
            Body::Sse(mut dec) => {
                dec.finish();
                self.exchanges.insert(
                    exchange,
                    Exchange {
                        body: Body::Sse(dec),
                        ..ex
                    },
                );
                self.drain_sse(protocol, now, exchange);
                let ex = self.exchanges.remove(&exchange).expect("present");
                self.stream_ended(protocol, now, ex, None);
            }
            Body::Error(buf) => {
                let (kind, reason) = match (ex.status, &ex.content_type) {
                    (Some(200..=299), Some(ct)) => (
                        HttpErrorKind::ContentType,
                        format!("unexpected content type {ct}"),
                    ),
                    (Some(200..=299), None) => (
                        HttpErrorKind::ContentType,
                        "a response without a content type".into(),
                    ),
                    _ => (
                        ex.status_kind(),
                        self.configured
                            .status_reason(ex.status, ex.challenge.as_ref()),
                    ),
                };
                let err = ex.error(kind, reason, &buf);
                if self.refusal_ended(protocol, now, &ex, &buf)
                    || self.refused_like_an_sse_server(protocol, now, &ex, &buf)
                {
                    // The probe or `initialize`, refused by an older server.
                } else if let ExchangeKind::Get { stream } = &ex.kind {
                    self.standalone_or_resume_refused(protocol, now, stream.clone(), err);
                } else if !matches!(ex.kind, ExchangeKind::Post { request: None, .. }) {
                    self.fail_kind(protocol, now, &ex.kind, err);
                } else {
                    self.notes.push_back(Event::http_note(err.to_string()));
                }
            }
            Body::Ignored | Body::Waiting => {
                if let ExchangeKind::Post {
                    request: Some(_), ..
                } = ex.kind
                {
                    let err = ex.error(
                        HttpErrorKind::BadBody,
                        "no response body for a request".into(),
                        &[],
                    );
                    self.fail_kind(protocol, now, &ex.kind, err);
                }
            }
        }
    }
}
