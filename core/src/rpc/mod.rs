//! The request engine: ids, pending requests, deadlines, progress, cancellation and inbound
//! requests for one connection, as a state machine over JSON-RPC [`Message`]s.
//!
//! The engine knows nothing of bytes or transports: it takes messages the transport decoded and
//! hands out messages for the transport to write, plus events for the application. One
//! [`Engine`] serves one connection.
//!
//! # The engine's face
//!
//! - **getters** (`&self`): [`Engine::next_id`], [`Engine::is_pending`], [`Engine::stats`], …
//! - **inputs**: [`Engine::handle_message`] and `Engine::handle_parsed` take what the peer
//!   sent: responses are matched to our requests by id, progress is routed by token, the peer's
//!   requests enter the inbound table, other notifications go to the notification queue.
//! - **commands**: [`Engine::request`], [`Engine::notify`], [`Engine::cancel`],
//!   [`Engine::fail`], [`Engine::respond`], [`Engine::close`]. They change state and queue output;
//!   misuse returns an [`EngineError`] at once and changes nothing.
//! - **time**: [`Engine::poll_timeout`] is the earliest deadline held;
//!   [`Engine::handle_timeout`] fires every deadline `<= now`, after which `poll_timeout()` is
//!   later than `now` or `None`. The engine never reads the clock: every `now` is the caller's.
//! - **outputs**: [`Engine::poll_output`] hands out [`Output`]s in order: messages to send,
//!   request outcomes, progress, inbound requests, diagnostics, and the terminal close.
//!   [`Engine::poll_notification`] hands out the peer's other notifications from a separate,
//!   bounded queue the application reads at its own pace.
//!
//! # The drive rule
//!
//! After every input or command, drain [`Engine::poll_output`] until it returns `None`; then wait
//! for the next message, command or the deadline from [`Engine::poll_timeout`], and call
//! [`Engine::handle_timeout`] when it passes (check the clock yourself rather than trusting a
//! timer's wake-up). Debug builds assert that outputs do not pile up across many calls.
//!
//! Outputs are not bounded by a cap: the drive rule bounds them (one input or command produces a
//! bounded number of them, except [`Engine::close`], which ends every pending request). The
//! notification queue is bounded instead, because its reader is the application, which may be
//! slow.
//!
//! # Guarantees
//!
//! - One id allocator per connection for every request, whoever makes it: integers from 0, never
//!   reused.
//! - Every request ends exactly once, with one [`Output::Completed`] whose [`Outcome`] is either
//!   the server's [`Reply`] or a [`LocalError`] (timeout, cancel, stream lost, session expired,
//!   connection closed). The two are different types.
//! - A response that matches no pending request is never delivered and never dropped silently:
//!   it becomes a [`Diagnostic`] saying whether the request timed out, was cancelled, was already
//!   answered, ended too long ago to remember, or was never sent.
//! - `initialize` is never cancelled on the wire.
//! - After [`Engine::close`] the engine is closed for good: commands return
//!   [`EngineError::Closed`] and inputs are reported, never acted on.
//! - Memory follows what is live: ended requests leave the tables and the timer heap, which
//!   shrink back after a burst; the record of ended ids and both queues the application reads
//!   are bounded.
//!
//! [`Message`]: crate::jsonrpc::Message

mod engine;
mod inbound;
mod limits;
mod notifications;
mod options;
pub(crate) mod outcome;
mod output;
mod pending;
mod shrink;
mod timers;

pub use engine::Engine;
pub use inbound::Responded;
pub use limits::{EngineError, Limits};
pub use notifications::AppNotification;
#[cfg(test)]
pub use options::Requester;
pub use options::{Origin, ProgressToken, RequestOptions, DEFAULT_TIMEOUT};
pub(crate) use outcome::HeldTimeout;
pub use outcome::{Deadline, EndedAs, LocalError, Outcome, Reply};
pub use output::{Diagnostic, Output, Progress, ResponseFor};

#[cfg(test)]
mod tests;
