//! Tasks: a call the server answers with a task, followed to its end ([`follow`]), and the
//! tasks the client runs for the server's requests ([`served`], 2025-11-25).

pub(crate) mod follow;
pub(crate) mod served;
