//! The adapter's error type.

use std::sync::Arc;

use mcpwire_core::{CallError, ClientError, Closed, LocalError, StrayOutput};

use crate::handlers::ElicitationRequest;

/// Why a connection or a call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server process could not be started.
    #[error("cannot start `{command}`: {message}")]
    Spawn {
        /// The command line.
        command: String,
        /// Why.
        message: String,
    },
    /// The server process could not be started for want of file descriptors: this process
    /// holds as many as its limit allows (`RLIMIT_NOFILE`'s soft value; `EMFILE`), or the whole
    /// system does (`ENFILE`). mcpwire never changes the limit (it is the whole process's): a
    /// host that runs many servers raises its own soft limit, up to the hard one, as the
    /// `mcpwire` command line does. Each server takes three descriptors for its pipes (four on
    /// tokio, with its process descriptor) and the spawn a few more for a moment.
    #[error("cannot start `{command}`: {}", file_limit_words(*.soft, *.hard, *.whole_system))]
    FileLimit {
        /// The command line.
        command: String,
        /// The process's soft limit of open files when the spawn failed (`u64::MAX`: none).
        soft: u64,
        /// The hard limit, up to which the process may raise its soft one (`u64::MAX`: none).
        hard: u64,
        /// The system's table of open files was full (`ENFILE`), not this process's share.
        whole_system: bool,
    },
    /// The HTTP client could not be set up as the options ask: a proxy URL that does not
    /// parse, a CA, certificate or key file that cannot be read.
    #[error("`{target}`: the HTTP options cannot be used: {message}")]
    HttpOptions {
        /// The URL.
        target: String,
        /// Why.
        message: String,
    },
    /// The connection needs what this build of mcpwire leaves out: without feature `libcurl`,
    /// HTTP/2 (an [`HttpVersionChoice`](crate::HttpVersionChoice) other than `Http1Only`), a
    /// SOCKS proxy or an `https://` proxy URL (the environment's too), or a URL with
    /// credentials or characters to encode. Nothing was sent.
    #[error(
        "`{target}`: {needed_for} needs mcpwire's `{feature}` feature, which this build leaves out"
    )]
    FeatureMissing {
        /// The URL.
        target: String,
        /// The feature to turn on (`libcurl`).
        feature: &'static str,
        /// What the connection asked for, in words.
        needed_for: &'static str,
    },
    /// An entry point that runs the connection on a runtime of its choice was called where
    /// there is none (`mcpwire::tokio` outside a tokio runtime). Nothing was started.
    #[error("no {runtime} runtime to run the connection on: {message}")]
    NoRuntime {
        /// The runtime the entry point needs (`tokio`).
        runtime: &'static str,
        /// Why there is none.
        message: String,
    },
    /// The handshake failed: the server answered with an error or an unknown version, timed
    /// out, or exited (the reason then names the exit status and the end of its stderr). A
    /// stdio server that wrote lines on its stdout that are not JSON-RPC has them named too
    /// (how many, the first two): often the reason it never answered.
    #[error("`{target}`: handshake failed: {error}{}", stray_words(.stray.as_deref()))]
    Handshake {
        /// The command line or the URL.
        target: String,
        /// Why.
        error: CallError,
        /// What the stdio server wrote on its stdout that is not JSON-RPC, if anything.
        stray: Option<Box<StrayOutput>>,
    },
    /// A call failed: a JSON-RPC error from the server, or a local end (timeout, cancellation,
    /// a lost stream), or a result of the wrong shape. A call the connection's end cut short is
    /// [`Error::Closed`].
    #[error(transparent)]
    Call(#[from] CallError),
    /// The call was refused before anything was sent (for example the server does not offer
    /// the capability).
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The call's connection or stream was lost after the call may have reached the server: it
    /// may have run, and it was not sent again (at most once). [`Client::reissue`](crate::Client::reissue)
    /// sends it again, as a new request, if the caller so chooses.
    #[error("the call may have run; not repeated: {reason}")]
    MaybeExecuted {
        /// What was lost, and how.
        reason: Arc<str>,
        /// The call, to send again.
        request: Box<Reissue>,
        /// The HTTP failure that lost it (its kind, URL, status), when that is what it was.
        http: Option<Box<mcpwire_core::error::HttpError>>,
    },
    /// The connection has ended (for a call: it ended while the call was in flight, or before
    /// it was made). Its reason names how, for example the server's exit status and the end of
    /// its stderr.
    #[error(transparent)]
    Closed(Closed),
    /// A skill was not found, or was rejected: a file read did not match its entry (size,
    /// digest, `SKILL.md` frontmatter), or the entry breaks the extension's rules. Nothing of
    /// a rejected skill is given out.
    #[cfg(feature = "skills")]
    #[error(transparent)]
    Skill(#[from] mcpwire_core::skills::SkillError),
    /// A tool call broke the tool's schema (feature `schemas`): its result's
    /// `structuredContent` is missing or does not match the `outputSchema`, or (when
    /// [`CallOptions::check_arguments`](crate::CallOptions::check_arguments) asked) its arguments
    /// do not match the `inputSchema` and nothing was sent.
    #[cfg(feature = "schemas")]
    #[error("{error}")]
    Schema {
        /// The tool, the schema and how it was broken.
        error: mcpwire_core::schema::SchemaError,
        /// The result as the server sent it (an output check), for whoever wants it anyway.
        result: Option<Box<mcpwire_core::types::CallToolResult>>,
    },
}

/// A call as it was made: what [`Client::reissue`](crate::Client::reissue) sends again.
#[derive(Debug, Clone, PartialEq)]
pub struct Reissue {
    /// The method.
    pub method: String,
    /// Its params, without `_meta`.
    pub params: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Error {
    /// The JSON-RPC error the server sent, if that is what this is.
    pub fn server_error(&self) -> Option<&mcpwire_core::jsonrpc::ErrorObject> {
        match self {
            Error::Call(CallError::Server(e)) => Some(e),
            Error::Call(CallError::MissingCapability { error, .. }) => Some(error),
            _ => None,
        }
    }

    /// Whether the call may have run: its connection or stream was lost after it may have
    /// reached the server, and it was not sent again (at most once). Only the caller can choose
    /// to send it again.
    pub fn maybe_executed(&self) -> bool {
        matches!(self, Error::MaybeExecuted { .. })
    }

    /// The URL-mode elicitations the server asks for first, when this is its `-32042` error
    /// (2025-11-25): each with `mode: "url"`, `elicitationId`, `url` and `message`. Once the
    /// user has been through them, the call may be made again.
    pub fn url_elicitations_required(&self) -> Option<Vec<ElicitationRequest>> {
        let list = mcpwire_core::types::url_elicitations_required(self.server_error()?)?;
        Some(list.into_iter().map(ElicitationRequest::new).collect())
    }

    /// Whether the call ended because its deadline passed (whether or not it had been sent).
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            Error::Call(CallError::Local(
                LocalError::Timeout { .. } | LocalError::NotSent { which: Some(_), .. }
            ))
        )
    }
}

/// `; ` and what a stdio server wrote that is not JSON-RPC, when it wrote any.
fn stray_words(stray: Option<&StrayOutput>) -> String {
    stray.map(|s| format!("; {s}")).unwrap_or_default()
}

/// Why a spawn ran out of file descriptors, with the limits that bound it.
fn file_limit_words(soft: u64, hard: u64, whole_system: bool) -> String {
    let shown = |n: u64| {
        if n == u64::MAX {
            "unlimited".to_owned()
        } else {
            n.to_string()
        }
    };
    let limits = format!("RLIMIT_NOFILE soft {}, hard {}", shown(soft), shown(hard));
    if whole_system {
        format!("the system's table of open files is full (ENFILE; this process's {limits})")
    } else if soft < hard {
        format!(
            "this process has as many open files as its limit allows (EMFILE; {limits}): \
             raise the soft limit (`ulimit -n`, or `setrlimit` in the host) up to the hard one"
        )
    } else {
        format!(
            "this process has as many open files as its limit allows (EMFILE; {limits}): the \
             soft limit is already the hard one; run fewer servers or raise the hard limit"
        )
    }
}
