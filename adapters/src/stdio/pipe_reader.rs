//! A child's stdout or stderr as the stdio driver reads it, one `read` per readiness event when
//! the answer is short: on smol and Unix through its own file descriptor in async-io's reactor
//! (see [`DrainRead`](crate::drain_read::DrainRead)); on tokio through tokio's pipe, whose
//! `AsyncRead` does the same (tokio's reactor is edge-triggered: a short read clears the
//! readiness, and the next poll waits without a syscall); any other stream (and every pipe of
//! async-process on Windows, read on a blocking thread) through `futures`' `AsyncRead`.

use std::pin::Pin;
use std::task::{Context, Poll};

#[cfg(feature = "smol")]
use futures_lite::AsyncRead;

#[cfg(all(unix, feature = "smol"))]
use crate::drain_read::DrainRead;

/// A byte stream given by the caller (`connect_streams`), or a child's pipe on Windows.
#[cfg(feature = "smol")]
pub(crate) type Stream = Pin<Box<dyn AsyncRead + Send>>;

/// What one read gave.
pub(crate) enum Read {
    /// `n` bytes at the start of the buffer; `drained` when the source holds no more for now
    /// (the reader is already waiting for the next readiness).
    Bytes { n: usize, drained: bool },
    /// The end of the stream (or an error reading it, which ends it the same way).
    End,
    /// Nothing to read: the context's waker is woken when there is.
    Pending,
}

/// A child's stdout or stderr, or any byte stream.
pub(crate) enum PipeReader {
    /// A pipe read through its descriptor.
    #[cfg(all(unix, feature = "smol"))]
    Pipe(DrainRead<std::fs::File>),
    /// Anything else, through `AsyncRead`.
    #[cfg(feature = "smol")]
    Stream(Stream),
    /// A pipe of tokio's, or a stream given to `mcpwire::tokio::connect_streams`.
    #[cfg(feature = "tokio")]
    Tokio(TokioReader),
}

impl PipeReader {
    /// A reader for a child's pipe (on Unix, its descriptor taken over from async-process).
    #[cfg(all(unix, feature = "smol"))]
    pub(crate) fn pipe<P>(pipe: P) -> PipeReader
    where
        P: std::os::fd::AsFd + AsyncRead + Send + 'static,
    {
        // The descriptor is duplicated, then async-process's handle dropped (it leaves the
        // reactor and closes its copy): the pipe is registered once, as ours.
        let own = pipe
            .as_fd()
            .try_clone_to_owned()
            .and_then(|fd| async_io::Async::new(std::fs::File::from(fd)));
        match own {
            Ok(file) => PipeReader::Pipe(DrainRead::new(file)),
            Err(_) => PipeReader::Stream(Box::pin(pipe)),
        }
    }

    /// A reader for a child's pipe.
    #[cfg(all(not(unix), feature = "smol"))]
    pub(crate) fn pipe<P>(pipe: P) -> PipeReader
    where
        P: AsyncRead + Send + 'static,
    {
        PipeReader::Stream(Box::pin(pipe))
    }

    /// A reader for a child's pipe on tokio.
    #[cfg(feature = "tokio")]
    pub(crate) fn tokio_pipe<P>(pipe: P) -> PipeReader
    where
        P: TokioPipe + 'static,
    {
        PipeReader::Tokio(TokioReader {
            #[cfg(unix)]
            fd: Some(std::os::fd::AsRawFd::as_raw_fd(&pipe)),
            stream: Box::pin(pipe),
            read_at_once: false,
        })
    }

    /// A reader for any stream of tokio's (no descriptor of its own to read at once).
    #[cfg(feature = "tokio")]
    pub(crate) fn tokio_stream(stream: impl ::tokio::io::AsyncRead + Send + 'static) -> PipeReader {
        PipeReader::Tokio(TokioReader {
            #[cfg(unix)]
            fd: None,
            stream: Box::pin(stream),
            read_at_once: false,
        })
    }

    /// The writer has exited: what it wrote is read at once, not after the reactor reports
    /// it (which may come later than its exit). A `Stream` is read as it is: through
    /// `AsyncRead`, which tries a read first on Unix; on Windows async-process's reading thread
    /// may still be delivering the last bytes, and the driver does not wait for them.
    pub(crate) fn writer_gone(&mut self) {
        match *self {
            #[cfg(all(unix, feature = "smol"))]
            PipeReader::Pipe(ref mut pipe) => pipe.expect_something(),
            #[cfg(feature = "smol")]
            PipeReader::Stream(_) => {}
            #[cfg(feature = "tokio")]
            PipeReader::Tokio(ref mut reader) => reader.read_at_once = true,
        }
    }

    /// Reads once into `buf`.
    pub(crate) fn read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Read {
        match *self {
            #[cfg(all(unix, feature = "smol"))]
            PipeReader::Pipe(ref mut pipe) => match pipe.poll_read(cx, buf) {
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => Read::End,
                Poll::Ready(Ok(n)) => Read::Bytes {
                    n,
                    drained: pipe.drained(),
                },
                Poll::Pending => Read::Pending,
            },
            #[cfg(feature = "smol")]
            PipeReader::Stream(ref mut stream) => match stream.as_mut().poll_read(cx, buf) {
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => Read::End,
                // Only `Pending` tells a stream is drained.
                Poll::Ready(Ok(n)) => Read::Bytes { n, drained: false },
                Poll::Pending => Read::Pending,
            },
            #[cfg(feature = "tokio")]
            PipeReader::Tokio(ref mut reader) => reader.read(cx, buf),
        }
    }
}

/// A pipe of tokio's child: read through tokio's reactor, and through its descriptor at once.
#[cfg(all(feature = "tokio", unix))]
pub(crate) trait TokioPipe: ::tokio::io::AsyncRead + std::os::fd::AsRawFd + Send {}
#[cfg(all(feature = "tokio", unix))]
impl<T: ::tokio::io::AsyncRead + std::os::fd::AsRawFd + Send> TokioPipe for T {}

/// A pipe of tokio's child.
#[cfg(all(feature = "tokio", not(unix)))]
pub(crate) trait TokioPipe: ::tokio::io::AsyncRead + Send {}
#[cfg(all(feature = "tokio", not(unix)))]
impl<T: ::tokio::io::AsyncRead + Send> TokioPipe for T {}

/// A stream of tokio's, read through its `AsyncRead`.
#[cfg(feature = "tokio")]
pub(crate) struct TokioReader {
    stream: Pin<Box<dyn ::tokio::io::AsyncRead + Send>>,
    /// The pipe's descriptor (Unix), for a read at once.
    #[cfg(unix)]
    fd: Option<std::os::fd::RawFd>,
    /// The writer is gone: the next read is tried at once, whatever the reactor has reported.
    read_at_once: bool,
}

#[cfg(feature = "tokio")]
impl TokioReader {
    fn read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Read {
        #[cfg(unix)]
        if std::mem::take(&mut self.read_at_once) {
            if let Some(fd) = self.fd {
                // SAFETY: `fd` is the descriptor of the pipe `self.stream` owns, open while it
                // lives; `buf` is valid for writes of its length. The pipe is non-blocking.
                let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
                match n {
                    0 => return Read::End,
                    n if n > 0 => {
                        return Read::Bytes {
                            n: n as usize,
                            drained: false,
                        }
                    }
                    // Nothing there (`EAGAIN`: someone else still holds the pipe) or an error:
                    // through the reactor, which reports either.
                    _ => {}
                }
            }
        }
        let mut read_buf = ::tokio::io::ReadBuf::new(buf);
        match self.stream.as_mut().poll_read(cx, &mut read_buf) {
            Poll::Ready(Ok(())) if read_buf.filled().is_empty() => Read::End,
            Poll::Ready(Ok(())) => Read::Bytes {
                n: read_buf.filled().len(),
                // Only `Pending` tells a stream is drained (after a short read of a pipe, tokio
                // says it without a syscall).
                drained: false,
            },
            Poll::Ready(Err(_)) => Read::End,
            Poll::Pending => Read::Pending,
        }
    }
}

#[cfg(all(test, unix, feature = "smol"))]
mod tests {
    use super::*;
    use std::process::Stdio;
    use std::time::Duration;

    /// Reads a child's stdout to its end, the way the driver does: after a drained read or
    /// `Pending` it waits to be woken. Returns the bytes and how many reads ended drained.
    fn read_all(script: &str) -> (Vec<u8>, usize) {
        smol::block_on(async {
            let mut child = async_process::Command::new("sh")
                .arg("-c")
                .arg(script)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut reader = PipeReader::pipe(child.stdout.take().unwrap());
            assert!(matches!(reader, PipeReader::Pipe(_)));
            let mut buf = vec![0; 64 * 1024];
            let (mut out, mut drained_reads) = (Vec::new(), 0);
            let read = std::future::poll_fn(|cx| loop {
                match reader.read(cx, &mut buf) {
                    Read::Bytes { n, drained } => {
                        out.extend_from_slice(&buf[..n]);
                        if drained {
                            drained_reads += 1;
                            // Waiting now must not lose what comes next: nothing reads
                            // until the pipe wakes us.
                            return Poll::Pending;
                        }
                    }
                    Read::End => return Poll::Ready(()),
                    Read::Pending => return Poll::Pending,
                }
            });
            let timeout = async {
                async_io::Timer::after(Duration::from_secs(20)).await;
                panic!("the reader was never woken for what followed");
            };
            futures_lite::future::or(read, timeout).await;
            child.status().await.unwrap();
            (out, drained_reads)
        })
    }

    #[test]
    fn short_reads_wait_for_readiness_and_lose_nothing() {
        let (out, drained) =
            read_all("printf one; sleep 0.05; printf two; sleep 0.05; printf three");
        assert_eq!(out, b"onetwothree");
        assert!(drained >= 2, "each short read waits: {drained}");
    }

    #[test]
    fn a_writer_gone_is_read_at_once_without_waiting_for_readiness() {
        smol::block_on(async {
            let mut child = async_process::Command::new("sh")
                .arg("-c")
                .arg("read l; printf 'last words'")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut reader = PipeReader::pipe(child.stdout.take().unwrap());
            let mut buf = vec![0; 1024];
            let waker = std::task::Waker::noop();
            let mut cx = Context::from_waker(waker);
            // Nothing yet: the reader waits for readiness.
            assert!(matches!(reader.read(&mut cx, &mut buf), Read::Pending));
            drop(child.stdin.take());
            assert!(child.status().await.unwrap().success());
            // The writer has exited: its bytes are read now, whatever the reactor has seen,
            // and then the end.
            reader.writer_gone();
            let Read::Bytes { n, .. } = reader.read(&mut cx, &mut buf) else {
                panic!("the bytes of a writer that is gone were not read at once");
            };
            assert_eq!(&buf[..n], b"last words");
            reader.writer_gone();
            assert!(matches!(reader.read(&mut cx, &mut buf), Read::End));
        });
    }

    #[test]
    fn a_full_buffer_is_read_again_at_once() {
        // 200 000 bytes: more than the buffer, so some reads fill it and are not drained.
        let (out, _) = read_all("head -c 200000 /dev/zero");
        assert_eq!(out.len(), 200_000);
        assert!(out.iter().all(|&b| b == 0));
    }
}
