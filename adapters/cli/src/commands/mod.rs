//! The commands run against the server the command line names, one module (or folder) per
//! family: each takes its arguments and the connected client, prints its answer and gives the
//! exit code.

pub(crate) mod auth;
pub(crate) mod call;
pub(crate) mod complete;
pub(crate) mod info;
pub(crate) mod ping;
pub(crate) mod prompts;
pub(crate) mod resources;
pub(crate) mod skills;
pub(crate) mod tasks;
pub(crate) mod tools;
pub(crate) mod watch;
