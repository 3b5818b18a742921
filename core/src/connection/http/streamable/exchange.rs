//! One HTTP exchange's state: what it carries, its response so far, and for an SSE stream what
//! a resume needs.

use std::sync::Arc;

use crate::codec::sse::McpSseDecoder;
use crate::error::{AuthChallenge, HttpError, HttpErrorKind};

/// The session an exchange was sent in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionTag {
    pub(crate) id: Arc<str>,
    pub(crate) generation: u64,
}

/// The state of one SSE stream, kept across its resumes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stream {
    pub(crate) last_event_id: Option<String>,
    pub(crate) retry_ms: Option<u64>,
    /// Resumes left; reset when a message arrives.
    pub(crate) budget: u32,
    /// Resumes made since the last message (for the backoff).
    pub(crate) attempts: u32,
    /// Our request whose answer is due on this stream.
    pub(crate) awaiting: Option<i64>,
    pub(crate) standalone: bool,
    /// The session the stream belongs to (a resume goes in it, even after a renewal).
    pub(crate) session: Option<SessionTag>,
}

#[derive(Debug)]
pub(crate) enum Body {
    /// No head yet.
    Waiting,
    Json(Vec<u8>),
    Sse(Box<McpSseDecoder>),
    /// An error status: the start of the body is kept for the error.
    Error(Vec<u8>),
    /// Nothing of interest (202, or a DELETE).
    Ignored,
}

#[derive(Debug)]
pub(crate) enum ExchangeKind {
    /// A POST carrying one message; `request` when it is one of our requests.
    Post {
        request: Option<i64>,
        /// The message, kept to send it once more (on a new session, after an authorization, or
        /// when the attempt never left) until its POST is accepted.
        replay: Option<crate::jsonrpc::Message>,
        /// How many renewals its 404s started before this attempt (see `session::MAX_BOUNCES`).
        bounces: u8,
        role: Role,
        /// A request of the stateless era (the probe included): self-contained, its stream
        /// never resumed, a 4xx JSON-RPC error for it delivered as its answer.
        stateless: bool,
        /// Sent once more because the first attempt never reached the server.
        resent: bool,
    },
    /// A GET: the standalone stream or a resume of a stream.
    Get {
        stream: Stream,
    },
    Delete,
}

#[derive(Debug)]
pub(crate) struct Exchange {
    pub(crate) kind: ExchangeKind,
    /// The session it was sent in, when it carried one.
    pub(crate) sent_in: Option<SessionTag>,
    pub(crate) status: Option<u16>,
    pub(crate) content_type: Option<String>,
    pub(crate) challenge: Option<AuthChallenge>,
    /// A redirect's `Location`.
    pub(crate) location: Option<String>,
    pub(crate) body: Body,
    /// The URL, without credentials, for errors.
    pub(crate) url: std::sync::Arc<str>,
    /// When it fails unless something comes (a head, body bytes), and as what.
    pub(crate) deadline: Option<(std::time::Instant, HttpErrorKind)>,
    /// The token it went with (see `auth`).
    pub(crate) auth_generation: u64,
}

/// What a POST is to the connection's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// `initialize`: it goes without a session and may bring one.
    Initialize,
    /// The era probe (`server/discover`): how it is refused tells the era.
    Probe,
    /// Any other message.
    Message,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standalone {
    NotYet,
    Open,
    /// The server offers none, or it ended for good.
    None,
}

impl ExchangeKind {
    /// Our request whose answer this exchange was to carry, if any.
    pub(crate) fn awaiting(&self) -> Option<i64> {
        match self {
            ExchangeKind::Post { request, .. } => *request,
            ExchangeKind::Get { stream } => stream.awaiting,
            ExchangeKind::Delete => None,
        }
    }
}

impl Body {
    /// How the body of a response is read, from the exchange's kind, its status and media type.
    pub(crate) fn for_head(
        kind: &ExchangeKind,
        status: u16,
        media: Option<&str>,
        max_event: usize,
    ) -> Body {
        let ok = (200..300).contains(&status);
        match (kind, ok, media) {
            (ExchangeKind::Delete, _, _) => Body::Ignored,
            (_, true, Some("text/event-stream")) => {
                Body::Sse(Box::new(McpSseDecoder::with_max_event_size(max_event)))
            }
            (ExchangeKind::Post { .. }, true, Some("application/json")) => Body::Json(Vec::new()),
            // In the stateless era a refusal may be a JSON-RPC error for the request: read whole
            // (401, 403 and 5xx are never answers).
            (
                ExchangeKind::Post {
                    stateless: true, ..
                },
                false,
                Some("application/json"),
            ) if (400..500).contains(&status) && status != 401 && status != 403 => {
                Body::Json(Vec::new())
            }
            (ExchangeKind::Post { request: None, .. }, true, _) => Body::Ignored,
            (_, true, _) if status == 202 || status == 204 => Body::Ignored,
            (_, _, _) => Body::Error(Vec::new()),
        }
    }
}

impl Exchange {
    /// An exchange whose response has not come yet.
    pub(crate) fn new(
        kind: ExchangeKind,
        sent_in: Option<SessionTag>,
        url: std::sync::Arc<str>,
    ) -> Exchange {
        Exchange {
            kind,
            sent_in,
            status: None,
            content_type: None,
            challenge: None,
            location: None,
            body: Body::Waiting,
            url,
            deadline: None,
            auth_generation: 0,
        }
    }

    /// The error this exchange ends its request with: its kind, what came of the response,
    /// `reason`, and the start of `body`.
    pub(crate) fn error(&self, kind: HttpErrorKind, reason: String, body: &[u8]) -> HttpError {
        // A `401` asking for credentials OAuth cannot give: say which, and where they go.
        let reason = match (&self.challenge, self.status) {
            (Some(c), Some(401))
                if reason == "unexpected status"
                    && !crate::www_authenticate::invites_oauth([c.scheme.as_str()]) =>
            {
                format!(
                    "the server asks for {0} credentials, not for an OAuth sign-in: give them \
                     as a header (Authorization: {0} …)",
                    c.scheme
                )
            }
            _ => reason,
        };
        HttpError {
            kind,
            url: self.url.to_string(),
            status: self.status,
            content_type: self.content_type.clone(),
            body_excerpt: crate::error::body_excerpt(body),
            challenge: self.challenge.clone(),
            reason,
            hint: None,
        }
    }
}

impl Exchange {
    /// The kind of failure a response with this exchange's status is (a redirect, or a status
    /// the request cannot use).
    pub(crate) fn status_kind(&self) -> HttpErrorKind {
        match self.status {
            // Only a proxy answers 407: it wants credentials, and the request went no further.
            Some(407) => HttpErrorKind::Proxy(crate::error::ProxyFailure::Credentials),
            Some(300..=399) => HttpErrorKind::Redirect {
                location: self.location.as_deref().map(crate::error::redact_url),
            },
            _ => HttpErrorKind::Status,
        }
    }
}
