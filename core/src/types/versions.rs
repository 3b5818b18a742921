//! The protocol versions, the log levels, the tasks extension's id, and the requests that read only.

/// The tasks extension's id (2026-07-28: tasks moved from a capability to an extension).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The requests that read and change nothing, which a connection may send once more by itself
/// when one is lost after it may have reached the server.
pub(crate) const REPEATABLE_READS: [&str; 8] = [
    "ping",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/get",
    "completion/complete",
];

/// Whether a request of `method` only reads: those above, every other `…/list`, the start's
/// (`initialize`, `server/discover`), and reading a task or a skill. One that timed out changed
/// nothing.
pub(crate) fn only_reads(method: &str) -> bool {
    const OTHER_READS: [&str; 5] = [
        "initialize",
        "server/discover",
        "tasks/get",
        "tasks/result",
        "skills/get",
    ];
    method.ends_with("/list") || REPEATABLE_READS.contains(&method) || OTHER_READS.contains(&method)
}

/// The latest protocol version: the stateless era.
pub const LATEST_VERSION: &str = "2026-07-28";
/// The latest handshake-era version, offered in `initialize`.
pub const LATEST_HANDSHAKE_VERSION: &str = "2025-11-25";
/// The levels of `LoggingLevel`, from the least to the most severe.
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The stateless-era versions this client speaks, the newest first.
pub const STATELESS_VERSIONS: [&str; 1] = [LATEST_VERSION];
/// Handshake-era versions this client accepts in an `initialize` answer, newest first.
pub const HANDSHAKE_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Whether `version` is a handshake-era version this client speaks.
pub fn is_handshake_version(version: &str) -> bool {
    HANDSHAKE_VERSIONS.contains(&version)
}
