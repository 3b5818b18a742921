//! The stdio transport's IO: a child process (spawned in its own process group, or job object
//! on Windows, signalled, reaped, started again) or any pair of byte streams, its pipes read with the fewest syscalls,
//! and its stderr kept for errors and passed to the application line by line.
//!
//! It implements [`TransportIo`](crate::transport::TransportIo) over the core's
//! [`Connection`](mcpwire_core::Connection) alone: nothing here imports the client or the
//! driver.

pub(crate) mod pipe_io;
pub(crate) mod pipe_reader;
mod signal;
pub(crate) mod spawn;
pub(crate) mod stderr;

pub use pipe_io::ProcessActionObserver;
pub use stderr::StderrCallback;
