//! What the world did, as a [`Connection`](super::Connection) is told it: the inputs of each
//! transport ([`StdioInput`], [`HttpInput`]) and the outcome of an authorization
//! ([`AuthorizationInput`]).

use crate::connection::stdio::ProcessExit;
use crate::error::ExchangeFailure;

/// Something the server process did (stdio), for
/// [`Connection::handle_stdio`](super::Connection::handle_stdio).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StdioInput<'a> {
    /// Bytes read from the server's stdout.
    Stdout(&'a [u8]),
    /// The server closed its stdout. Its exit is awaited briefly, so errors can name the exit
    /// status; then every pending call ends and the process is shut down.
    StdoutEof,
    /// The server process exited; `stderr_tail` is the end of what it wrote to stderr, for the
    /// error every pending call ends with.
    Exit {
        /// How it ended.
        exit: ProcessExit,
        /// The end of what it wrote to stderr.
        stderr_tail: &'a str,
    },
    /// The server was started again after
    /// [`ProcessAction::SpawnAgain`](crate::ProcessAction::SpawnAgain): the handshake starts on
    /// the new process. Drop whatever was still unwritten for the old one.
    Respawned,
    /// Starting the server again failed: the connection ends with this message.
    RespawnFailed(&'a str),
}

impl StdioInput<'_> {
    /// The input in words, for the refusal of one given to an HTTP connection.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            StdioInput::Stdout(_) => "stdout bytes",
            StdioInput::StdoutEof => "the end of stdout",
            StdioInput::Exit { .. } => "a process exit",
            StdioInput::Respawned => "a process started again",
            StdioInput::RespawnFailed(_) => "a process that could not start again",
        }
    }
}

/// Something that happened to one HTTP exchange, for
/// [`Connection::handle_http`](super::Connection::handle_http).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum HttpInput<'a> {
    /// The response head.
    Head {
        /// The status code.
        status: u16,
        /// The headers, in order, as received.
        headers: &'a [(String, String)],
    },
    /// A chunk of the response body.
    Body(&'a [u8]),
    /// The response body ended.
    End,
    /// The exchange failed after its request may have gone out: no response, a connection
    /// reset, a body cut short. A call lost so ends as
    /// [`MaybeExecuted`](crate::LocalError::MaybeExecuted), or is re-issued once if it is safe to
    /// repeat (at most once).
    Failure(ExchangeFailure),
    /// The exchange's request never reached the server: no connection could be made and no
    /// byte of it was sent (connection refused, a name that does not resolve, a TLS failure
    /// before the request). Give [`Failure`](Self::Failure) instead whenever the request may
    /// have gone out.
    Unsent(ExchangeFailure),
    /// A note of the HTTP client that carries the exchange, on how it reaches the server (the
    /// HTTP version it spoke when another was asked for): handed to the application as a
    /// diagnostic event ([`Diagnostic::Http`](crate::Diagnostic::Http)), in order with the
    /// others.
    Note(&'a str),
}

impl HttpInput<'_> {
    /// The input in words, for the refusal of one given to a stdio connection.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            HttpInput::Head { .. } => "a response head",
            HttpInput::Body(_) => "a response body chunk",
            HttpInput::End => "the end of a response",
            HttpInput::Failure(_) => "an exchange failure",
            HttpInput::Unsent(_) => "an exchange that was not sent",
            HttpInput::Note(_) => "an HTTP client's note",
        }
    }
}

/// How an authorization asked for with
/// [`Event::AuthorizationRequired`](crate::Event::AuthorizationRequired) came out (HTTP), for
/// [`Connection::handle_authorization`](super::Connection::handle_authorization).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthorizationInput<'a> {
    /// The token of an authorization (or one given ahead of any refusal): from now on every
    /// request carries it as `Authorization: Bearer …` (replacing a configured `Authorization`
    /// header), and what waited for it goes again, each request with its own id (it was
    /// refused, not executed). A new token (a refresh) changes what the next requests carry.
    ///
    /// A token that cannot go in a header (a control or non-ASCII character: it came from an
    /// authorization server) is taken as [`Failed`](Self::Failed) would be, with the reason
    /// naming the header.
    Token(&'a str),
    /// No token could be had: every request that waited ends with an
    /// [`HttpError`](crate::error::HttpError) of kind
    /// [`Unauthorized`](crate::error::HttpErrorKind::Unauthorized) carrying this reason; the
    /// connection lives on (a later refusal asks again).
    Failed(&'a str),
}
