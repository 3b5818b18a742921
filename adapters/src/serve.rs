//! Serving the demo server over a byte stream (the binary's `serve-demo`: stdin and stdout).

use std::io;
use std::time::Instant;

use async_io::Timer;
use futures_lite::{future, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use mcpwire_core::codec::jsonl::{self, JsonlDecoder};
use mcpwire_core::jsonrpc::Parsed;
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
    let mut decoder = JsonlDecoder::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut out = Vec::new();
    loop {
        while let Some(m) = server.poll_transmit() {
            jsonl::encode(&m, &mut out);
        }
        if !out.is_empty() {
            output.write_all(&out).await?;
            output.flush().await?;
            out.clear();
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
                server.close(now);
                return Ok(());
            }
            Wake::Read(Ok(n)) => {
                decoder.push(&buf[..n]);
                while let Some(item) = decoder.next_message() {
                    match item {
                        Ok(Parsed::Single(m)) => server.handle_message(now, m),
                        Ok(Parsed::Batch(items)) => {
                            for m in items.into_iter().flatten() {
                                server.handle_message(now, m);
                            }
                        }
                        // Noise is not answered.
                        Err(_) => {}
                    }
                }
            }
            Wake::Read(Err(e)) => return Err(e),
            Wake::Deadline => server.handle_timeout(now),
        }
    }
}
