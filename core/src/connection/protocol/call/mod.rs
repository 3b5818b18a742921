//! How one call goes on the wire: its params and `_meta`, a list read over all its pages, the
//! stateless era's input rounds, at most once when a request is lost, and the tool parameters
//! mirrored into HTTP headers.

pub(crate) mod at_most_once;
pub(crate) mod input;
pub(crate) mod listing;
pub(crate) mod params;
pub(crate) mod tool_headers;
