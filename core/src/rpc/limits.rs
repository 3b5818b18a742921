//! What the engine holds at most ([`Limits`]) and the commands it refuses ([`EngineError`]).

use super::options::ProgressToken;
use crate::jsonrpc::Id;

/// Caps on what one connection holds, with the defaults of the design's limits (beside each
/// field).
///
/// `#[non_exhaustive]`: outside this crate `Limits { max_pending, ..Default::default() }` does
/// not compile (E0639); build one from the default, field by field:
///
/// ```
/// let mut limits = mcpwire_core::Limits::default();
/// limits.max_notifications = 10_000;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Our requests pending at once; past it a new call is refused with
    /// [`ClientError::TooManyPending`](crate::ClientError::TooManyPending). Default 65 536.
    pub max_pending: usize,
    /// The peer's requests awaiting our answer at once; past it a request is answered at once
    /// with a JSON-RPC error. Default 1 024.
    pub max_inbound: usize,
    /// Unread notifications held for the application; past it the oldest are dropped and
    /// counted. Default 1 024.
    pub max_notifications: usize,
    /// How many recently ended request ids are remembered with how they ended, to explain a
    /// response that comes after the end. Default 4 096.
    pub ended_record: usize,
    /// The tasks the client keeps for the server's task-augmented requests (2025-11-25), of
    /// any status; past it such a request is refused with a JSON-RPC error. Default 64.
    pub max_served_tasks: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pending: 65_536,
            max_inbound: 1_024,
            max_notifications: 1_024,
            ended_record: 4_096,
            max_served_tasks: 64,
        }
    }
}

/// A command the engine refused. Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The engine is closed; nothing more can be sent.
    #[error(transparent)]
    Closed(crate::error::Closed),
    /// As many requests as allowed are already pending.
    #[error("too many pending requests (limit {limit})")]
    TooManyPending {
        /// The cap.
        limit: usize,
    },
    /// The progress token is already in use by a pending request.
    #[error("progress token {0} is already active")]
    ProgressTokenInUse(ProgressToken),
    /// No request of ours with this id is pending (it ended, or never existed).
    #[error("request {0} is not pending")]
    NotPending(i64),
    /// No request from the peer with this id awaits an answer (it is unknown, or was answered).
    #[error("no inbound request {0} awaits an answer")]
    UnknownInbound(Id),
    /// Every request id has been used.
    #[error("request ids are exhausted")]
    IdsExhausted,
}
