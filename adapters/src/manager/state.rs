//! What the host sees of each server: its state, the events that announce each change, the
//! errors of calls routed through the Manager, and the tools, prompts and resources it serves.

use std::sync::Arc;
use std::time::Instant;

use mcpwire_core::types::Tool;
use mcpwire_core::ChosenEra;

use super::naming::NamingNote;
use crate::error::Error;

/// Where one server is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerState {
    /// Being connected (attempt 1 is the first since the last healthy run).
    Starting {
        /// The attempt.
        attempt: u32,
    },
    /// Connected and answering; its tools are listed.
    Ready {
        /// The era it speaks.
        era: Option<ChosenEra>,
        /// How many of its tools the host sees (after the configured filter).
        tools: usize,
    },
    /// Given up on after failures in a row; [`Manager::restart`](super::Manager::restart)
    /// tries again.
    Failed {
        /// The last failure.
        reason: String,
        /// The end of its stderr (stdio).
        stderr_tail: String,
    },
    /// Waiting to try again.
    Restarting {
        /// The attempt that comes next.
        attempt: u32,
        /// When.
        next_try_at: Instant,
        /// Why the last run ended.
        reason: String,
    },
    /// Disabled in the configuration, or removed.
    Disabled,
}

impl ServerState {
    /// A short word for it: `starting`, `ready`, `failed`, `restarting`, `disabled`.
    pub fn word(&self) -> &'static str {
        match self {
            ServerState::Starting { .. } => "starting",
            ServerState::Ready { .. } => "ready",
            ServerState::Failed { .. } => "failed",
            ServerState::Restarting { .. } => "restarting",
            ServerState::Disabled => "disabled",
        }
    }

    /// Whether the server's start is over for now: ready, failed, disabled, or waiting to try
    /// again after a failure.
    pub fn settled(&self) -> bool {
        !matches!(self, ServerState::Starting { .. })
    }
}

/// Something the host should know: a server changed state, its lists changed, a name had to
/// change.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ManagerEvent {
    /// `server` is now in `state`.
    State {
        /// The server.
        server: String,
        /// Its new state.
        state: ServerState,
    },
    /// `server`'s tools changed (listed again after it became ready, or after it said so).
    ToolsChanged {
        /// The server.
        server: String,
    },
    /// A tool's qualified name had to be rewritten or disambiguated.
    Naming(NamingNote),
    /// A handler or callback of the host's failed for `server` (it panicked, or its answer
    /// could not be sent): the server's request got `-32603`, or the server's start failed
    /// (its connect options). Told once; everything else went on.
    HandlerFailed {
        /// The server.
        server: String,
        /// What failed, and how.
        failure: mcpwire_core::HandlerFailure,
    },
    /// One of `server`'s lists is not all the server sent: a list ended early (a page gave a
    /// cursor an earlier page gave, or it ran to [`MAX_PAGES`](mcpwire_core::MAX_PAGES)
    /// pages: [`Diagnostic::ListCut`](mcpwire_core::Diagnostic::ListCut), the list holding
    /// the pages read), or a tool was left out
    /// ([`Diagnostic::ToolDropped`](mcpwire_core::Diagnostic::ToolDropped)).
    Diagnostic {
        /// The server.
        server: String,
        /// What the connection reported.
        diagnostic: mcpwire_core::Diagnostic,
    },
    /// Events were dropped because the host did not read them (the queue is bounded).
    Dropped {
        /// How many.
        count: u64,
    },
}

/// Why a call routed through the Manager failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ManagerError {
    /// No server offers a tool under that name.
    #[error("no tool named {0}")]
    UnknownTool(String),
    /// No server has that name.
    #[error("no server named {0}")]
    UnknownServer(String),
    /// The configuration's tool filter leaves this tool out.
    #[error("{server}'s configuration does not allow its tool {tool}")]
    NotAllowed {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// The server is not ready (starting, restarting, failed or disabled).
    #[error("{server} {}: {}", not_ready_verb(state), not_ready_detail(state))]
    NotReady {
        /// The server.
        server: String,
        /// Its state.
        state: ServerState,
    },
    /// The server went away while the call was in flight (its process exited, its connection
    /// ended): the call may have run, and it is not repeated (at most once).
    #[error("{server} went away during the call: {error}")]
    ServerWentAway {
        /// The server.
        server: String,
        /// The client's error.
        error: Arc<Error>,
    },
    /// The call failed on the server's connection (an error from the server, a timeout, …).
    #[error("{server}: {error}")]
    Call {
        /// The server.
        server: String,
        /// The client's error.
        error: Arc<Error>,
    },
}

/// How a server that is not ready is: `failed`, `is starting`, …
fn not_ready_verb(state: &ServerState) -> String {
    match state {
        ServerState::Failed { .. } => "failed".into(),
        other => format!("is {}", other.word()),
    }
}

fn not_ready_detail(state: &ServerState) -> String {
    match state {
        ServerState::Starting { attempt } => format!("attempt {attempt}"),
        ServerState::Restarting {
            attempt, reason, ..
        } => format!("attempt {attempt} comes soon; it ended: {reason}"),
        ServerState::Failed {
            reason,
            stderr_tail,
        } if !stderr_tail.is_empty() => format!("{reason}; its stderr ended with: {stderr_tail}"),
        ServerState::Failed { reason, .. } => reason.clone(),
        ServerState::Disabled => "enable it in the configuration".into(),
        ServerState::Ready { .. } => "ready".into(),
    }
}

impl ManagerError {
    /// The error of a call to `server` that failed with `error`: the server went away when its
    /// connection ended under the call (`ended`).
    pub(crate) fn of_call(server: &str, error: Error, ended: bool) -> Self {
        let gone = matches!(error, Error::Closed(_))
            || (ended && matches!(error, Error::MaybeExecuted { .. }));
        let server = server.to_owned();
        let error = Arc::new(error);
        match gone {
            true => ManagerError::ServerWentAway { server, error },
            false => ManagerError::Call { server, error },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_is_not_ready_in_words() {
        let failed = ManagerError::NotReady {
            server: "github".into(),
            state: ServerState::Failed {
                reason: "cannot start".into(),
                stderr_tail: String::new(),
            },
        };
        assert_eq!(failed.to_string(), "github failed: cannot start");
        let starting = ManagerError::NotReady {
            server: "github".into(),
            state: ServerState::Starting { attempt: 2 },
        };
        assert_eq!(starting.to_string(), "github is starting: attempt 2");
    }
}

/// One tool in the host's namespace.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagedTool {
    /// Its name in the namespace (`server__tool` by default).
    pub qualified: String,
    /// The server that offers it.
    pub server: String,
    /// The tool as the server lists it, shared: every snapshot of the namespace holds the
    /// same (made once per listing).
    pub tool: Arc<Tool>,
    /// Served from the cache while the server is not ready.
    pub stale: bool,
}

/// A prompt or resource of one server.
#[derive(Debug, Clone, PartialEq)]
pub struct Managed<T> {
    /// The server that offers it.
    pub server: String,
    /// The item as the server lists it, shared (made once per listing).
    pub item: Arc<T>,
    /// Served from the cache while the server is not ready.
    pub stale: bool,
}
