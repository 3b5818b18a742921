//! The words the application reads and writes: calls ([`calls::McpCall`]) and their options,
//! what a call ends with, the events a connection hands out, the client's settings, and the
//! host's own code failing.

pub(crate) mod call_options;
pub(crate) mod calls;
pub(crate) mod client_config;
pub(crate) mod events;
pub(crate) mod host_failure;
