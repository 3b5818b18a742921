//! Serving the demo server over a byte stream (the binary's `serve-demo`: stdin and stdout).

use std::io;
use std::time::Instant;

use async_io::Timer;
use futures_lite::{future, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use mcpwire_core::server::{DemoConfig, DemoServer};

enum Wake {
    Read(io::Result<usize>),
    Deadline,
}

/// Runs the demo server over `input` and `output` (JSONL) until `input` ends.
pub async fn serve_demo<R, W>(mut input: R, mut output: W, config: DemoConfig) -> io::Result<()>
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
                    Timer::at(t).await;
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
