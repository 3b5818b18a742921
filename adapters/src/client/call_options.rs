//! The options of one call: timeouts, progress, whether it is safe to repeat, and how a tool
//! call is checked and followed.

use std::sync::Arc;
use std::time::Duration;

use mcpwire_core::Progress;

/// Options of one call: the core's [`CallOptions`](mcpwire_core::CallOptions), with a progress
/// callback in place of its `progress` flag.
#[derive(Clone)]
pub struct CallOptions {
    /// Idle timeout (default 30 s): how long without an answer, or without progress when
    /// `reset_on_progress` is set.
    pub timeout: Duration,
    /// Maximum total time, never reset by progress.
    pub max_total: Option<Duration>,
    /// Whether progress resets the idle timeout.
    pub reset_on_progress: bool,
    /// Called with each progress update (asks the server for progress).
    pub on_progress: Option<Arc<dyn Fn(Progress) + Send + Sync>>,
    /// Whether the call is safe to repeat: when its connection or stream is lost after it may
    /// have reached the server, the connection re-issues it once instead of failing it with
    /// "may have been executed". Reads (`ping`, the lists, `resources/read`, `prompts/get`,
    /// `completion/complete`) always are; mark a call only if running it twice does no harm.
    pub safe_to_repeat: bool,
    /// Whether a tool call's arguments are checked against the tool's `inputSchema` (from the
    /// last `tools/list`) before anything is sent (feature `schemas`).
    pub check_arguments: bool,
    /// Whether a tool call the server answers with a task ends at once with the task (see
    /// [`Client::start_tool_task`](crate::Client::start_tool_task)) instead of being followed to
    /// its end.
    pub detach_task: bool,
}

impl Default for CallOptions {
    fn default() -> Self {
        CallOptions {
            timeout: mcpwire_core::DEFAULT_TIMEOUT,
            max_total: None,
            reset_on_progress: false,
            on_progress: None,
            safe_to_repeat: false,
            check_arguments: false,
            detach_task: false,
        }
    }
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("max_total", &self.max_total)
            .field("reset_on_progress", &self.reset_on_progress)
            .field("on_progress", &self.on_progress.is_some())
            .field("safe_to_repeat", &self.safe_to_repeat)
            .field("check_arguments", &self.check_arguments)
            .field("detach_task", &self.detach_task)
            .finish()
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

    /// Calls `f` with each progress update.
    pub fn on_progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }

    /// The core's options for the call.
    pub(super) fn core(&self) -> mcpwire_core::CallOptions {
        mcpwire_core::CallOptions {
            timeout: self.timeout,
            max_total: self.max_total,
            reset_on_progress: self.reset_on_progress,
            progress: self.on_progress.is_some(),
            safe_to_repeat: self.safe_to_repeat,
            detach_task: self.detach_task,
        }
    }
}
