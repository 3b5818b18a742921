//! The demo server (`mcpwire_core::server`) over stdin and stdout, as JSONL: a peer for tests that
//! spawn and drive a server process themselves. It exits 0 when its stdin ends.
//!
//! `--crash-on-call N` makes it exit with status 3 the moment its N-th `tools/call` arrives,
//! before answering it: a server that crashes under a call in flight.

use std::io::Read;
use std::process::ExitCode;

use mcpwire_core::server::DemoConfig;

/// Stdin, watched for the `tools/call` that ends the process.
struct Crashing<R> {
    inner: R,
    calls_left: Option<usize>,
}

impl<R: Read> Read for Crashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(left) = self.calls_left.as_mut() {
            let text = String::from_utf8_lossy(&buf[..n]);
            let calls = text.matches("\"tools/call\"").count();
            if calls >= *left {
                eprintln!("demo-server: crashing on a tools/call, as asked");
                std::process::exit(3);
            }
            *left -= calls;
        }
        Ok(n)
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let calls_left = match args.as_slice() {
        [] => None,
        [flag, n] if flag == "--crash-on-call" => match n.parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                eprintln!("demo-server: --crash-on-call takes a positive number");
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("usage: demo-server [--crash-on-call N]");
            return ExitCode::from(2);
        }
    };
    let stdin = Crashing {
        inner: std::io::stdin(),
        calls_left,
    };
    let input = smol::Unblock::new(stdin);
    let output = smol::Unblock::new(std::io::stdout());
    match smol::block_on(mcpwire::serve_demo(input, output, DemoConfig::default())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("demo-server: {e}");
            ExitCode::FAILURE
        }
    }
}
