//! The `mcpwire` command line: inspect and call any MCP server from a shell.
//!
//! ```sh
//! cargo install --locked mcpwire-cli
//! mcpwire demo                       # a guided tour of the protocol against the demo server
//! mcpwire tools                      # with no server named: the built-in demo server
//! mcpwire call add a=2 b=40
//! mcpwire --stdio "npx -y @modelcontextprotocol/server-everything" tools
//! mcpwire --http https://mcp.example.com/mcp info
//! mcpwire --config ~/.cursor/mcp.json servers
//! ```
//!
//! Every command, option and exit code is in the crate's README; `mcpwire --help` has them too.
//!
//! Feature `keychain` (off by default): sign-ins kept in the OS keychain when there is one (else
//! in the state folder, with a warning).
//!
//! This file is the wiring: it reads the command line, runs the commands that need no server
//! (`serve-demo`, `completions`, `decode`, `demo`, `servers` and `auth` without a connection),
//! hands a configuration file of several servers to [`servers`] and every other command to
//! [`one_server`], and turns the outcome into the exit code.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use command_line::parser::{asks_json, Cli, Command};
use command_line::{completions, stdio_words};
use commands::auth;
use failure::{finish, Failure};

// First: its macros (`out!`, `outln!`, `err!`, `errln!`) print everything the modules below print.
#[macro_use]
mod output;

mod command_line;
mod commands;
mod decode;
mod demo;
mod exit_codes;
mod failure;
mod fd_limit;
mod one_server;
mod otlp;
mod server_logs;
mod servers;
mod stop;
mod verbose;

fn main() -> ExitCode {
    output::broken_pipe::end_quietly();
    // `COMPLETE=bash mcpwire`: the shell's completion script, or (as the script calls it) the
    // completions of a command line, tool names and argument keys from the tools cache.
    clap_complete::CompleteEnv::with_factory(Cli::command).complete();
    let (argv, stdio_words) = stdio_words::split_stdio_words(std::env::args_os().collect());
    let json = asks_json(&argv);
    let mut cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if json && !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let text = e.to_string();
                let first = text.lines().next().unwrap_or("").trim();
                let message = first.strip_prefix("error: ").unwrap_or(first);
                output::json(&Failure::new(exit_codes::USAGE, message).to_json());
            }
            e.exit()
        }
    };
    cli.server.stdio_words = stdio_words;
    let json = cli.command.json();
    if cli.server.stdio_words.is_some()
        && (cli.server.http.is_some() || cli.server.config.is_some())
    {
        let f = Failure::new(
            exit_codes::USAGE,
            "--stdio cannot be used with --http or --config",
        );
        return finish(f, json);
    }
    if let Command::ServeDemo {
        handshake_only,
        tools,
    } = cli.command
    {
        return demo::serve(handshake_only, tools);
    }
    if let Command::Completions { shell } = cli.command {
        completions::print_script(shell);
        return ExitCode::SUCCESS;
    }
    // Many servers take many descriptors: the soft limit up to the hard one (Unix).
    fd_limit::raise();
    // --config FILE with several servers: `servers`, `tools` and `call` run them all.
    if let Some(code) = servers::main(&cli) {
        return code;
    }
    if let Command::Servers { json, .. } = &cli.command {
        let (file, name) = (cli.server.config.as_deref(), cli.server.server.as_deref());
        return match servers::configured::list(file, name, *json) {
            Ok(code) => ExitCode::from(code),
            Err(f) => finish(f, *json),
        };
    }
    if let Command::Decode(args) = &cli.command {
        return decode::main(args);
    }
    if let Command::Auth(a) = &cli.command {
        if !matches!(a.command, auth::AuthCommand::Login) {
            let outcome = one_server::target::target_config(&cli.server)
                .and_then(|config| auth::offline(&a.command, config.as_ref().map(|(c, _)| c)));
            return match outcome {
                Ok(code) => ExitCode::from(code),
                Err(f) => finish(f, json),
            };
        }
    }
    if matches!(cli.command, Command::Demo) {
        let s = &cli.server;
        if s.stdio.is_some()
            || s.stdio_words.is_some()
            || s.http.is_some()
            || s.config.is_some()
            || s.server.is_some()
        {
            let f = Failure::new(
                exit_codes::USAGE,
                "demo runs against the built-in demo server; it takes no --stdio, --http or --config",
            );
            return finish(f, json);
        }
        return demo::main();
    }
    // `--otlp URL` or the environment: the spans of a command that connects are exported.
    let (command, otlp) = (cli.command.name(), cli.server.otlp.clone());
    let outcome = otlp::run(
        otlp.as_deref(),
        command,
        one_server::run(cli),
        failure::code_of,
    );
    // stdout was lost: the connection is closed; end as that asks.
    stop::end_if_lost();
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(f) => finish(f, json),
    }
}
