//! The options of one call (its deadlines, progress, whether it is safe to repeat, how a tool
//! call is checked and followed), one type for the core and the `mcpwire` client; and the
//! progress updates a call receives.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

pub use crate::rpc::Progress;

/// A function called with each progress update of one call.
///
/// The connection never calls it: it reports progress as
/// [`Event::Progress`](crate::Event::Progress), and a driver (the `mcpwire` client) calls the
/// function of the call the event names. Two are equal when they are the same function.
#[derive(Clone)]
pub struct OnProgress(Arc<dyn Fn(Progress) + Send + Sync>);

impl OnProgress {
    /// Wraps `f`.
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        OnProgress(Arc::new(f))
    }

    /// Calls the function with `progress`.
    pub fn call(&self, progress: Progress) {
        (self.0)(progress)
    }
}

impl fmt::Debug for OnProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OnProgress(..)")
    }
}

impl PartialEq for OnProgress {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Options of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOptions {
    /// Idle timeout (default 30 s): how long without an answer (or, with `reset_on_progress`,
    /// without progress).
    pub timeout: Duration,
    /// Maximum total time, never reset.
    pub max_total: Option<Duration>,
    /// Whether a progress notification resets the idle timeout.
    pub reset_on_progress: bool,
    /// Whether to ask for progress notifications (adds a progress token); set as well by
    /// [`on_progress`](Self::on_progress).
    pub progress: bool,
    /// The function a driver calls with each progress update (see [`OnProgress`]).
    pub on_progress: Option<OnProgress>,
    /// Whether the call is safe to repeat: when its connection or stream is lost after it may
    /// have reached the server, it is re-issued once, with a new id, instead of ending with
    /// [`LocalError::MaybeExecuted`](crate::LocalError::MaybeExecuted). `ping`, the lists,
    /// `resources/read`, `prompts/get` and `completion/complete` always are; mark a call only
    /// if running it twice does no harm.
    pub safe_to_repeat: bool,
    /// Whether a tool call's arguments are checked against the tool's `inputSchema` before
    /// anything is sent (feature `schemas`; without it nothing is checked). The tools are
    /// listed first if no list is known; a mismatch ends the call with
    /// [`CallError::Schema`](crate::connection::protocol::CallError::Schema).
    pub check_arguments: bool,
    /// Whether a tool call answered with a task ends at once with the task (the
    /// `CreateTaskResult`) instead of being followed to its end, for a host that follows it
    /// itself; in the handshake era the call then asks for task mode.
    pub detach_task: bool,
    /// Entries added to each request's `params._meta` beneath the call's own: the host's trace
    /// context (`traceparent`, `tracestate`, `baggage`) most often. A call's own `_meta` entries
    /// win over these, and these never set `progressToken` nor a key the protocol reserves
    /// (`io.modelcontextprotocol/*`): such entries are left out. The `mcpwire` client fills
    /// this from its `ConnectOptions::trace_context` hook when a call is made (entries set here
    /// win over the hook's).
    pub context_meta: Option<Map<String, Value>>,
}

impl Default for CallOptions {
    fn default() -> Self {
        CallOptions {
            timeout: crate::rpc::DEFAULT_TIMEOUT,
            max_total: None,
            reset_on_progress: false,
            progress: false,
            on_progress: None,
            safe_to_repeat: false,
            check_arguments: false,
            detach_task: false,
            context_meta: None,
        }
    }
}

impl CallOptions {
    /// Sets the idle timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the maximum total time.
    pub fn max_total(mut self, max_total: Duration) -> Self {
        self.max_total = Some(max_total);
        self
    }

    /// Lets progress reset the idle timeout.
    pub fn reset_on_progress(mut self) -> Self {
        self.reset_on_progress = true;
        self
    }

    /// Asks the server for progress (reported as [`Event::Progress`](crate::Event::Progress)).
    pub fn progress(mut self) -> Self {
        self.progress = true;
        self
    }

    /// Asks the server for progress and gives each update to `f` (see [`OnProgress`]).
    pub fn on_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = true;
        self.on_progress = Some(OnProgress::new(f));
        self
    }

    /// Marks the call safe to repeat (see the field).
    pub fn safe_to_repeat(mut self) -> Self {
        self.safe_to_repeat = true;
        self
    }

    /// Checks a tool call's arguments before sending (see the field).
    pub fn check_arguments(mut self) -> Self {
        self.check_arguments = true;
        self
    }

    /// Ends a tool call answered with a task at once, with the task (see the field).
    pub fn detach_task(mut self) -> Self {
        self.detach_task = true;
        self
    }

    /// Adds entries to each request's `params._meta`, beneath the call's own (see the field).
    pub fn context_meta(mut self, entries: Map<String, Value>) -> Self {
        self.context_meta = Some(entries);
        self
    }
}
