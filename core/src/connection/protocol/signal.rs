//! How transport events reach the protocol layer: one signal type, one answer type.

use super::vocabulary::events::ClientError;
use crate::rpc::LocalError;

/// What a transport tells the protocol about itself: the one way transport events reach it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TransportSignal {
    /// The transport lost what was to carry request `id`'s answer: it ends with `error`.
    RequestLost {
        /// Our request.
        id: i64,
        /// How it ends.
        error: LocalError,
    },
    /// The connection or stream that carried request `id` was lost after the request may have
    /// reached the server: the at-most-once rule decides (re-issued once if safe to repeat,
    /// else it ends as maybe executed).
    LostAfterSending {
        /// Our request.
        id: i64,
        /// What was lost, and how.
        reason: std::sync::Arc<str>,
        /// The HTTP failure that lost it, when that is what it was.
        http: Option<Box<crate::error::HttpError>>,
    },
    /// An answer was dropped for being over the cap on one message: the request it names ends
    /// with [`LocalError::ResponseTooLarge`]; when its id could not be read, every call in
    /// flight does, since any of them could have been waiting for it.
    AnswerTooLarge {
        /// The request the answer named, when it could be read.
        id: Option<i64>,
        /// The cap.
        limit: usize,
    },
    /// The server forgot the session (HTTP, handshake era): the handshake runs again, offering
    /// the version negotiated before. Calls stay pending; the transport holds new requests
    /// until it completes (see [`ClientProtocol::is_renewing`](super::ClientProtocol::is_renewing)).
    SessionLost,
    /// The transport died or went silent; if the era probe was in flight (with [`Era::Auto`](super::Era::Auto)),
    /// it ends, and a fresh transport is wanted.
    ProbeTransportLost,
    /// A fresh transport is up after a failed probe: the handshake starts on it.
    Restarted,
    /// The era probe was refused the way an older server refuses an unknown request (HTTP: a
    /// 400, 404 or 405 whose body is not the probe's answer): with [`Era::Auto`](super::Era::Auto)
    /// the handshake era is spoken; otherwise the probe ends with `error`.
    ProbeRefused {
        /// The probe.
        id: i64,
        /// How it was refused.
        error: LocalError,
    },
    /// The handshake under way moves to another transport (Streamable HTTP's `initialize` was
    /// refused the way an older server refuses it: the 2024-11-05 HTTP+SSE transport is tried).
    /// Its request is forgotten; [`TransportSignal::Restarted`] starts it again there.
    TransportChanged,
    /// No transport could be had (the HTTP+SSE stream was refused, or named no endpoint in
    /// time): the handshake fails, and the connection closes, with this error.
    NoTransport(LocalError),
    /// The server failed to start: it exited with an error while the era probe was in flight,
    /// before answering anything, and did not blame the probe. That is no reason to start it
    /// again: the handshake fails, and the connection closes, with `reason`.
    StartFailed(std::sync::Arc<str>),
    /// The transport ended: every call ends with this error, and the state is closed for good.
    Ended(LocalError),
    /// The transport died under its calls (a server process that exited): the calls in flight
    /// may have run, so they end as maybe executed with `reason` (at most once: the server is
    /// gone, nothing is sent again); then the connection closes with it.
    Died(std::sync::Arc<str>),
}

/// What the protocol made of a [`TransportSignal`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Signalled {
    /// Acted on.
    Done,
    /// The probe ended with the transport: start a fresh one, then signal
    /// [`TransportSignal::Restarted`].
    NewTransportWanted,
    /// Nothing was done, for this reason.
    Refused(ClientError),
}
