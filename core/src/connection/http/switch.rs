//! What a connection that moves from Streamable HTTP to the 2024-11-05 HTTP+SSE transport
//! takes along: made by the one, taken by the other.

use std::time::Instant;

use super::headers::Headers;
use super::options::HttpOptions;
use super::request::ExchangeId;
use crate::error::HttpError;
use crate::tap::FrameObserver;

/// What a connection that moves to the HTTP+SSE transport takes along.
pub(crate) struct Switch {
    pub(crate) url: String,
    pub(crate) headers: Headers,
    pub(crate) config: HttpOptions,
    pub(crate) observer: Option<Box<dyn FrameObserver>>,
    /// The first exchange id the new transport may use.
    pub(crate) next_exchange: ExchangeId,
    /// Exchanges still open, to abort.
    pub(crate) abort: Vec<ExchangeId>,
    /// When the move was decided.
    pub(crate) at: Instant,
    /// Why: the refusal of `initialize`, for the error if the HTTP+SSE transport is not there
    /// either.
    pub(crate) refused: Option<HttpError>,
}
