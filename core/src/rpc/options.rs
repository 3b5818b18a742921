//! What a caller says about one outgoing request: its deadlines, its progress token, who made it.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::jsonrpc::Id;

/// The default idle timeout of a request: 30 seconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// A progress token (`params._meta.progressToken`): a string or an integer, matched exactly (the
/// integer `5` and the string `"5"` are different tokens).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProgressToken {
    /// An integer token.
    Num(i64),
    /// A string token.
    Str(String),
}

impl fmt::Display for ProgressToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgressToken::Num(n) => write!(f, "{n}"),
            ProgressToken::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for ProgressToken {
    fn from(n: i64) -> Self {
        ProgressToken::Num(n)
    }
}

impl From<&str> for ProgressToken {
    fn from(s: &str) -> Self {
        ProgressToken::Str(s.to_owned())
    }
}

impl From<String> for ProgressToken {
    fn from(s: String) -> Self {
        ProgressToken::Str(s)
    }
}

impl Serialize for ProgressToken {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ProgressToken::Num(n) => s.serialize_i64(*n),
            ProgressToken::Str(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for ProgressToken {
    /// Same wire shape as a request id: an integer or a string, nothing else.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Id::deserialize(d)? {
            Id::Num(n) => ProgressToken::Num(n),
            Id::Str(s) => ProgressToken::Str(s),
        })
    }
}

/// Who made a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Requester {
    /// The application (a tool call, a listing, …).
    #[default]
    Caller,
    /// The protocol layer itself (`initialize`, `ping`, `server/discover`, …).
    Protocol,
}

/// Where a request came from, handed back with its outcome so the layer that made it can claim
/// it. Small and `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct Origin {
    /// Who made the request.
    pub requester: Requester,
    /// The HTTP exchange that carries it, when the transport tracks one.
    pub exchange: Option<u64>,
}

impl Origin {
    /// A request made by the application.
    pub const CALLER: Origin = Origin {
        requester: Requester::Caller,
        exchange: None,
    };

    /// A request made by the protocol layer.
    pub const PROTOCOL: Origin = Origin {
        requester: Requester::Protocol,
        exchange: None,
    };

    /// The same origin, tagged with an HTTP exchange.
    #[cfg(any(test, feature = "fuzzing"))]
    pub fn with_exchange(self, exchange: u64) -> Self {
        Origin {
            exchange: Some(exchange),
            ..self
        }
    }
}

/// Per-request options for [`Engine::request`](super::Engine::request). Build with
/// [`RequestOptions::new`] (or `default()`) and the builder methods.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RequestOptions {
    /// The idle deadline: the request times out this long after it was sent, or after its last
    /// progress notification when [`reset_on_progress`](Self::reset_on_progress) is set. Default
    /// 30 s. A duration too large to add to `now` means no idle deadline.
    pub timeout: Duration,
    /// The absolute deadline, counted from when the request was sent and never moved by
    /// progress. `None` (the default) means none.
    pub max_total: Option<Duration>,
    /// Whether a progress notification for this request restarts its idle deadline.
    pub reset_on_progress: bool,
    /// The progress token the caller put in the request's `params._meta.progressToken`, so that
    /// `notifications/progress` is routed to this request. The engine does not edit params: the
    /// caller writes the token (for example [`Engine::next_id`](super::Engine::next_id)) into
    /// them itself. A token may be active on one request at a time.
    pub progress_token: Option<ProgressToken>,
    /// Who made the request.
    pub origin: Origin,
    /// Whether ending the request early (cancel or timeout) sends `notifications/cancelled`.
    /// Default `true`. Set it to `false` where a cancel is expressed otherwise (Streamable HTTP in
    /// 2026 closes the response stream instead; the transport learns of the end from the
    /// [`Output::Completed`](super::Output::Completed) event). `initialize` is never cancelled on
    /// the wire, whatever this says.
    pub cancel_on_wire: bool,
}

impl Default for RequestOptions {
    fn default() -> Self {
        RequestOptions {
            timeout: DEFAULT_TIMEOUT,
            max_total: None,
            reset_on_progress: false,
            progress_token: None,
            origin: Origin::CALLER,
            cancel_on_wire: true,
        }
    }
}

impl RequestOptions {
    /// The defaults: 30 s idle timeout, no total deadline, no progress token, made by the caller,
    /// cancelled on the wire.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the idle timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the absolute deadline.
    pub fn max_total(mut self, max_total: Duration) -> Self {
        self.max_total = Some(max_total);
        self
    }

    /// Sets whether progress restarts the idle deadline.
    pub fn reset_on_progress(mut self, reset: bool) -> Self {
        self.reset_on_progress = reset;
        self
    }

    /// Sets the progress token to route `notifications/progress` by.
    pub fn progress_token(mut self, token: impl Into<ProgressToken>) -> Self {
        self.progress_token = Some(token.into());
        self
    }

    /// Sets who made the request.
    pub fn origin(mut self, origin: Origin) -> Self {
        self.origin = origin;
        self
    }

    /// Sets whether an early end sends `notifications/cancelled`.
    #[cfg(any(test, feature = "fuzzing"))]
    pub fn cancel_on_wire(mut self, on_wire: bool) -> Self {
        self.cancel_on_wire = on_wire;
        self
    }
}
