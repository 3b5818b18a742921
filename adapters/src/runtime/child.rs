//! What a server process spawned on a runtime gives the stdio transport: its pipes, its exit
//! status and its process tree, in types that are the same on every runtime.

use std::io;
use std::pin::Pin;
use std::process::ExitStatus;
use std::task::{Context, Poll};

use crate::future::BoxFuture;
use crate::stdio::pipe_reader::PipeReader;
use crate::stdio::spawn::Group;

/// A server process just spawned, with its pipes.
pub(crate) struct Child {
    pub(crate) pid: u32,
    /// The server's process tree (its group, or its job on Windows).
    pub(crate) group: Group,
    pub(crate) stdin: Option<Writer>,
    pub(crate) stdout: Option<PipeReader>,
    pub(crate) stderr: Option<PipeReader>,
    /// The exit status. It owns the runtime's handle on the child: dropped before the child
    /// exited, the runtime's reaper reaps it later.
    pub(crate) status: BoxFuture<io::Result<ExitStatus>>,
}

/// A byte sink: a child's stdin, or a stream given by the caller.
pub(crate) enum Writer {
    /// Through `futures`' `AsyncWrite` (async-process's pipes, streams given to `connect_streams`).
    #[cfg(feature = "smol")]
    Futures(Pin<Box<dyn futures_lite::AsyncWrite + Send>>),
    /// Through tokio's `AsyncWrite` (tokio's pipes, streams given to
    /// `mcpwire::tokio::connect_streams`).
    #[cfg(feature = "tokio")]
    Tokio(Pin<Box<dyn ::tokio::io::AsyncWrite + Send>>),
}

impl Writer {
    /// Writes what it can of `buf`.
    pub(crate) fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match *self {
            #[cfg(feature = "smol")]
            Writer::Futures(ref mut w) => w.as_mut().poll_write(cx, buf),
            #[cfg(feature = "tokio")]
            Writer::Tokio(ref mut w) => w.as_mut().poll_write(cx, buf),
        }
    }

    /// Flushes what is on its way, then closes (dropping it after is the end of file).
    pub(crate) fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match *self {
            #[cfg(feature = "smol")]
            Writer::Futures(ref mut w) => w.as_mut().poll_close(cx),
            #[cfg(feature = "tokio")]
            Writer::Tokio(ref mut w) => w.as_mut().poll_shutdown(cx),
        }
    }
}
