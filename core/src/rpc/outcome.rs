//! How a request ends: a reply from the server, or a local end. The two are different types, so a
//! timeout is never disguised as a JSON-RPC error.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use crate::jsonrpc::{ErrorObject, RawJson};

/// How a request ended: the server's [`Reply`], or a [`LocalError`] when it ended on our side.
pub type Outcome = Result<Reply, LocalError>;

/// What the server answered.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Reply {
    /// A result, raw.
    Result(RawJson),
    /// A JSON-RPC error sent by the server.
    Error(ErrorObject),
}

impl Reply {
    /// The result, if the server sent one.
    pub fn result(&self) -> Option<&RawJson> {
        match self {
            Reply::Result(r) => Some(r),
            Reply::Error(_) => None,
        }
    }

    /// The error, if the server sent one.
    pub fn error(&self) -> Option<&ErrorObject> {
        match self {
            Reply::Result(_) => None,
            Reply::Error(e) => Some(e),
        }
    }
}

impl From<Result<RawJson, ErrorObject>> for Reply {
    fn from(outcome: Result<RawJson, ErrorObject>) -> Self {
        match outcome {
            Ok(r) => Reply::Result(r),
            Err(e) => Reply::Error(e),
        }
    }
}

/// Which of a request's two deadlines passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Deadline {
    /// The idle deadline (reset by progress when the request asked for it).
    Idle,
    /// The absolute deadline (never reset).
    Total,
}

impl std::fmt::Display for Deadline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Deadline::Idle => "idle",
            Deadline::Total => "total",
        })
    }
}

/// A request that ended on our side, without a reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LocalError {
    /// A deadline passed before the reply came; the request had been sent, so it may have
    /// run.
    #[error("{}", timeout_text(method, *which, *after, *despite_progress))]
    Timeout {
        /// Which deadline.
        which: Deadline,
        /// Whether progress kept coming: it did not extend the idle deadline, since the call
        /// did not ask for that (`reset_on_progress`).
        despite_progress: bool,
        /// The request's method (`tools/call`).
        method: Cow<'static, str>,
        /// The length of the deadline that passed.
        after: Duration,
    },
    /// The request never left: it waited to be sent (behind the server's answer to
    /// `notifications/initialized`, a new session, an authorization) until its own deadline
    /// passed (`which`), until the wait itself timed out (`which` too: the server did not
    /// answer `notifications/initialized` within the head timeout, or within the time an
    /// earlier request waited for it: one budget for every caller behind it), or until what it
    /// waited for failed (`which` is `None`). The server never saw it: it did not run.
    #[error("not sent, so it did not run: {reason}")]
    NotSent {
        /// The deadline that passed, when one did.
        which: Option<Deadline>,
        /// What it waited for, and how that ended.
        reason: Arc<str>,
    },
    /// The caller cancelled it.
    #[error("request cancelled{}", reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Cancelled {
        /// The reason given, if any.
        reason: Option<String>,
    },
    /// The server ended the request (it may do so only for `subscriptions/listen`).
    #[error("the server ended the request{}", reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    CancelledByPeer {
        /// The reason the server gave, if any.
        reason: Option<String>,
    },
    /// The stream that was to carry the reply ended without it.
    #[error("the stream carrying the request was lost")]
    StreamLost,
    /// The connection was lost after the request may have reached the server: it may have been
    /// executed, and it was not sent again (at most once). Only the caller can choose to
    /// re-issue it.
    #[error("the request may have been executed; not repeated: {reason}")]
    MaybeExecuted {
        /// What was lost, and how.
        reason: Arc<str>,
        /// The HTTP failure that lost it (its kind, URL, status), when that is what it was.
        http: Option<Box<crate::error::HttpError>>,
    },
    /// The server's answer was larger than the cap on one message, so it was dropped unread.
    #[error("the response is over the {limit}-byte cap on one message; raise the cap (the line or body limit, the CLI's --max-message-size) to read it")]
    ResponseTooLarge {
        /// The cap, in bytes.
        limit: usize,
    },
    /// The server no longer knows the session the request was sent in, and its answer was
    /// due there (it may have run).
    #[error("the session expired")]
    SessionExpired,
    /// The server kept losing the session and no new one held: the connection gave up and
    /// closed (every pending request ends with this).
    #[error("the server lost the session and {attempts} renewals in a row did not hold: {reason}")]
    SessionRenewalFailed {
        /// The renewals tried in a row.
        attempts: u32,
        /// How the last one failed.
        reason: Arc<str>,
    },
    /// The HTTP exchange carrying the request failed: an unexpected status or content type, a
    /// body that is not JSON-RPC or holds no answer, or a network failure.
    #[error(transparent)]
    Http(Box<crate::error::HttpError>),
    /// The connection closed (one [`Closed`](crate::Closed), shared by every request the close
    /// ended).
    #[error(transparent)]
    Closed(crate::error::Closed),
}

fn timeout_text(method: &str, which: Deadline, after: Duration, despite_progress: bool) -> String {
    let after = DurationWords(after);
    // Only a request that changes something is worth the warning.
    let may_have_run = if crate::types::only_reads(method) {
        ""
    } else {
        "; it may have run"
    };
    match (which, despite_progress) {
        (Deadline::Idle, true) => format!(
            "no answer to {method} within {after} (its timeout): progress kept coming, but \
             progress does not extend the timeout unless the call asks for it (reset on \
             progress){may_have_run}"
        ),
        (Deadline::Idle, false) => {
            format!("no answer to {method} within {after} (its timeout){may_have_run}")
        }
        (Deadline::Total, _) => {
            format!("no answer to {method} within {after} (its maximum total time){may_have_run}")
        }
    }
}

/// A duration in words: `5 s`, `1.5 s`, `300 ms`, `2 min`.
pub struct DurationWords(pub Duration);

impl std::fmt::Display for DurationWords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = self.0.as_millis();
        if ms < 1000 {
            write!(f, "{ms} ms")
        } else if ms % 60_000 == 0 {
            write!(f, "{} min", ms / 60_000)
        } else if ms % 1000 == 0 {
            write!(f, "{} s", ms / 1000)
        } else {
            // Milliseconds are the finest shown: 1.5 s, 2.25 s; a hair over a whole second
            // reads as the whole second.
            let s = format!("{:.3}", self.0.as_secs_f64());
            write!(f, "{} s", s.trim_end_matches('0').trim_end_matches('.'))
        }
    }
}

/// A request whose deadline passed while the transport held it back (see
/// `Engine::take_held_timeout`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeldTimeout {
    /// Its method.
    pub(crate) method: Cow<'static, str>,
    /// How long it waited: the length of its deadline.
    pub(crate) after: Duration,
    /// Which deadline.
    pub(crate) which: Deadline,
}

impl HeldTimeout {
    /// `tools/list waited for it for 3 s (its timeout)`.
    pub(crate) fn waited(&self) -> String {
        let limit = match self.which {
            Deadline::Idle => "its timeout",
            Deadline::Total => "its maximum total time",
        };
        let after = DurationWords(self.after);
        format!("{} waited for it for {after} ({limit})", self.method)
    }
}

/// How a request that is no longer pending ended, remembered for a while so a response that
/// arrives afterwards can be explained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EndedAs {
    /// The server answered (result or error): another response is a duplicate.
    Answered,
    /// A deadline passed: the response is late.
    TimedOut(Deadline),
    /// The caller cancelled it.
    Cancelled,
    /// The transport ended it (its stream was lost, its HTTP exchange failed).
    Failed,
    /// The connection closed.
    Closed,
}

impl EndedAs {
    /// How an outcome is remembered.
    pub(crate) fn of(outcome: &Outcome) -> Self {
        match outcome {
            Ok(_) => EndedAs::Answered,
            Err(LocalError::Timeout { which, .. })
            | Err(LocalError::NotSent {
                which: Some(which), ..
            }) => EndedAs::TimedOut(*which),
            Err(LocalError::Cancelled { .. }) => EndedAs::Cancelled,
            Err(LocalError::Closed(_)) => EndedAs::Closed,
            Err(_) => EndedAs::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::DurationWords;
    use std::time::Duration;

    #[test]
    fn durations_read_as_people_write_them() {
        for (d, shown) in [
            (Duration::from_millis(300), "300 ms"),
            (Duration::from_secs(5), "5 s"),
            (Duration::from_millis(1500), "1.5 s"),
            (Duration::from_millis(2250), "2.25 s"),
            (Duration::from_secs(120), "2 min"),
            (Duration::from_micros(20_000_400), "20 s"),
            (Duration::from_micros(1_999_600), "2 s"),
        ] {
            assert_eq!(DurationWords(d).to_string(), shown);
        }
    }
}
