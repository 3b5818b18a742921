//! The HTTP transport's limits and choices.

use std::time::Duration;

use crate::codec::sse::DEFAULT_MAX_EVENT_SIZE;

/// The HTTP transport's limits and choices (the endpoint and its headers are the server's
/// [`HttpConfig`](crate::config::HttpConfig)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// The largest JSON body accepted (default 64 MiB).
    pub max_json_body: usize,
    /// The largest SSE event accepted (default 16 MiB).
    pub max_event: usize,
    /// How many times in a row one stream may be resumed without a message arriving
    /// (default 5).
    pub resume_budget: u32,
    /// The wait before a resume when the server gave no `retry` (doubled each attempt;
    /// default 1 s).
    pub default_retry: Duration,
    /// Whether to open the standalone GET stream after the handshake (default yes).
    pub standalone_stream: bool,
    /// How many session renewals may run in a row (each new session lost, or its
    /// `initialize` failed, before any request succeeded in it) before the connection gives
    /// up and closes (default 3).
    pub renewal_budget: u32,
    /// How long an exchange that answers no call (a notification or response POSTed, a GET
    /// stream, the session's DELETE) may wait for its response head (default 30 s; `None`:
    /// no limit). A call's own answer is bounded by the call's deadlines instead.
    pub head_timeout: Option<Duration>,
    /// How long a body read whole (JSON, an error) may go without bytes once its head came
    /// (default 30 s; `None`: no limit). SSE streams have none: they may be silent while
    /// their calls run.
    pub body_idle_timeout: Option<Duration>,
    /// Whether a `401` (or a `403` with `error="insufficient_scope"`) to a POST or GET parks
    /// the request and asks the driver to authorize
    /// ([`Event::AuthorizationRequired`](crate::Event::AuthorizationRequired)), instead of
    /// ending it with the HTTP error (default no: turn it on when the driver can authorize).
    pub authorization: bool,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            max_json_body: 64 * 1024 * 1024,
            max_event: DEFAULT_MAX_EVENT_SIZE,
            resume_budget: 5,
            default_retry: Duration::from_secs(1),
            standalone_stream: true,
            renewal_budget: 3,
            head_timeout: Some(Duration::from_secs(30)),
            body_idle_timeout: Some(Duration::from_secs(30)),
            authorization: false,
        }
    }
}

/// How long a close waits for the session's DELETE before giving it up.
pub const CLOSE_GRACE: Duration = Duration::from_secs(2);
