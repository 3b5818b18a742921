//! The demo server (`mcpwire_core::server`) on stdin and stdout, as JSONL: the server process of
//! this crate's stdio tests and throughput example. It exits 0 when its stdin ends.

use std::process::ExitCode;

use mcpwire_core::server::DemoConfig;

fn main() -> ExitCode {
    let input = smol::Unblock::new(std::io::stdin());
    let output = smol::Unblock::new(std::io::stdout());
    match smol::block_on(mcpwire::serve_demo(input, output, DemoConfig::default())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpwire-demo-server: {e}");
            ExitCode::FAILURE
        }
    }
}
