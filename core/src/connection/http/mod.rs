//! The HTTP transports, with no IO: Streamable HTTP ([`streamable`], both eras) and the
//! 2024-11-05 HTTP+SSE transport ([`sse`]), and what they share: the requests and aborts a
//! driver carries out ([`HttpAction`]), the options, the request headers, the wait for
//! `notifications/initialized`, the authorization challenges, and what moves from one to the
//! other.
//!
//! [`Connection`](crate::Connection) drives them: the exchanges they ask for are started, and
//! each one's head, body chunks, end or failure come back as inputs.

pub(crate) mod challenge;
pub(crate) mod headers;
pub(crate) mod initialized;
mod options;
mod request;
pub(crate) mod sse;
pub(crate) mod streamable;
pub(crate) mod switch;

pub use options::{HttpOptions, CLOSE_GRACE};
pub(crate) use request::{header, media_type, tap_outgoing, unsendable};
pub use request::{ExchangeId, HttpAction, HttpMethod, HttpRequest};
