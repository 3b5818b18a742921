//! The demo server (`mcpwire_core::server`) on stdin and stdout, as JSONL: the server process of
//! this crate's stdio tests and throughput example. It exits 0 when its stdin ends.
//!
//! Options: `--host-requests` also offers the tools that ask the client's host (`sample`,
//! `roots`); `--request-timeout-ms N` is how long it waits for the client's answer to a request
//! of its own (an elicitation, a sampling, the roots; default 300 000).

use std::process::ExitCode;

use mcpwire_core::server::DemoConfig;

fn main() -> ExitCode {
    let mut config = DemoConfig::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--host-requests" => config.host_requests = true,
            "--request-timeout-ms" => match args.next().and_then(|n| n.parse().ok()) {
                Some(ms) => config.elicitation_timeout = std::time::Duration::from_millis(ms),
                None => return usage("--request-timeout-ms needs a number of milliseconds"),
            },
            other => return usage(&format!("unknown argument {other:?}")),
        }
    }
    match serve(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpwire-demo-server: {e}");
            ExitCode::FAILURE
        }
    }
}

/// On smol: stdin and stdout read and written on smol's blocking pool.
#[cfg(feature = "smol")]
fn serve(config: DemoConfig) -> std::io::Result<()> {
    let input = smol::Unblock::new(std::io::stdin());
    let output = smol::Unblock::new(std::io::stdout());
    smol::block_on(mcpwire::serve_demo(input, output, config))
}

/// A build with tokio only: on a current_thread runtime, stdin and stdout tokio's.
#[cfg(all(not(feature = "smol"), feature = "tokio"))]
fn serve(config: DemoConfig) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(mcpwire::tokio::serve_demo(
        tokio::io::stdin(),
        tokio::io::stdout(),
        config,
    ))
}

/// A build with neither runtime has none to serve on.
#[cfg(not(any(feature = "smol", feature = "tokio")))]
fn serve(_config: DemoConfig) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "built with neither feature smol nor feature tokio",
    ))
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("mcpwire-demo-server: {problem}");
    eprintln!("usage: mcpwire-demo-server [--host-requests] [--request-timeout-ms N]");
    ExitCode::from(2)
}
