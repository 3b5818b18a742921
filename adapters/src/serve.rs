//! Serving the demo server over a byte stream (the binary's `serve-demo`: stdin and stdout),
//! on the runtime it runs in: [`serve_demo`] over `futures`' byte streams,
//! `mcpwire::tokio::serve_demo` over tokio's.

use std::io;
use std::time::Instant;

use futures_lite::{future, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use mcpwire_core::server::{DemoConfig, DemoServer};

use crate::runtime::Runtime;

enum Wake {
    Read(io::Result<usize>),
    Deadline,
}

/// Runs the demo server over `input` and `output` (JSONL, through `futures`' `AsyncRead` and
/// `AsyncWrite`) until `input` ends. Its deadlines (a request of its own waiting for the
/// client's answer) are timers of the runtime it runs in: tokio's when a tokio runtime is
/// current (feature `tokio`), else async-io's (feature `smol`); with neither, an error at once.
/// For tokio's byte streams, `mcpwire::tokio::serve_demo`.
pub async fn serve_demo<R, W>(input: R, output: W, config: DemoConfig) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let runtime = Runtime::here().ok_or_else(|| {
        io::Error::other("serve_demo: no runtime (neither a tokio runtime nor feature smol)")
    })?;
    serve_on(input, output, config, runtime).await
}

/// [`serve_demo`], its timers on `runtime`.
pub(crate) async fn serve_on<R, W>(
    mut input: R,
    mut output: W,
    config: DemoConfig,
    runtime: Runtime,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut server = DemoServer::new(config);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        while let Some(out) = server.poll_output() {
            output.write_all(&out).await?;
            output.flush().await?;
        }
        let now = Instant::now();
        if server.poll_timeout().is_some_and(|t| t <= now) {
            server.handle_timeout(now);
            continue;
        }
        let read = async { Wake::Read(input.read(&mut buf).await) };
        let wake = match server.poll_timeout() {
            Some(t) => {
                future::or(read, async {
                    runtime.sleep_until(t).await;
                    Wake::Deadline
                })
                .await
            }
            None => read.await,
        };
        let now = Instant::now();
        match wake {
            Wake::Read(Ok(0)) => {
                server.handle_stdin_eof(now);
                return Ok(());
            }
            Wake::Read(Ok(n)) => server.handle_stdin(now, &buf[..n]),
            Wake::Read(Err(e)) => return Err(e),
            Wake::Deadline => server.handle_timeout(now),
        }
    }
}
