//! The demo server (`mcpwire_core::server`) over stdin and stdout, as JSONL: a peer for tests that
//! spawn and drive a server process themselves. It exits 0 when its stdin ends.

use std::process::ExitCode;

use mcpwire_core::server::DemoConfig;

fn main() -> ExitCode {
    let input = smol::Unblock::new(std::io::stdin());
    let output = smol::Unblock::new(std::io::stdout());
    match smol::block_on(mcpwire::serve_demo(input, output, DemoConfig::default())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("demo-server: {e}");
            ExitCode::FAILURE
        }
    }
}
