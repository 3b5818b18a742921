//! The `mcpwire` command line: inspect and call any MCP server from a shell.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    cli::main()
}
