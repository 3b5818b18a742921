//! The command line's commands.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Inspect and call MCP servers.
#[derive(Parser, Debug)]
#[command(name = "mcpwire", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the built-in demo server on stdin and stdout.
    ServeDemo,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::ServeDemo => {
            let stdin = smol::Unblock::new(std::io::stdin());
            let stdout = smol::Unblock::new(std::io::stdout());
            match smol::block_on(mcpwire::serve_demo(stdin, stdout, Default::default())) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("mcpwire serve-demo: {e}");
                    ExitCode::from(1)
                }
            }
        }
    }
}
