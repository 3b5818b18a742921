//! The command line's grammar: the commands, each with its own options, after the options every
//! command takes (see [`ServerArgs`]); `--help` is written from it, and the shells' completion.

use clap::{Parser, Subcommand};
use clap_complete::engine::ArgValueCompleter;

use super::live_completion;
use super::server_args::ServerArgs;
use crate::commands::{auth, complete, prompts, resources, skills, tasks, watch};
use crate::{decode, exit_codes, server_logs};

/// Inspect and call any MCP server.
#[derive(Parser, Debug)]
#[command(name = "mcpwire", version, about, after_help = exit_codes::EXIT_CODES)]
pub(crate) struct Cli {
    // The server and how it is reached (options every command takes).
    #[command(flatten)]
    pub(crate) server: ServerArgs,
    // The command.
    #[command(subcommand)]
    pub(crate) command: Command,
}

// The shells `mcpwire completions` writes a script for.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum ShellArg {
    Bash,
    Zsh,
    Fish,
}

// The commands (each variant's doc comment is its help).
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// The server's protocol era and version, identity, capabilities and instructions.
    Info {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The server's tools; with a NAME, that tool's arguments in detail. With --config FILE
    /// of several servers, every server's tools under their qualified names.
    Tools {
        /// One tool to show: its description, annotations, and each argument's type, whether
        /// it is required, description, default and allowed values.
        #[arg(add = ArgValueCompleter::new(live_completion::tool_names))]
        name: Option<String>,
        /// Print the tools (or the one tool) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Calls a tool: `mcpwire call add a=1 b=2`, or with a JSON object of arguments.
    Call {
        /// The tool's name; with --config FILE of several servers, its qualified name
        /// (`server__tool`, as `tools` lists it) or `server/tool`: only that server starts.
        #[arg(add = ArgValueCompleter::new(live_completion::tool_names))]
        tool: String,
        /// Arguments as key=value (typed by the tool's input schema) and key:=JSON (raw
        /// JSON), or one JSON object, or - to read that object from stdin. Either way they
        /// are checked against the schema before sending: unknown keys, values outside an
        /// enum, required arguments left out.
        #[arg(add = ArgValueCompleter::new(live_completion::argument_keys))]
        args: Vec<String>,
        /// Print the whole result as JSON (instead of its text content); a failure as
        /// `{"error": …}` (the server's JSON-RPC error as it came).
        #[arg(long)]
        json: bool,
        /// Write each image, audio clip and binary resource to a file in DIR, named
        /// `<tool>-<index>.<extension>` (DIR is created if needed).
        #[arg(long, value_name = "DIR", conflicts_with = "json")]
        output: Option<std::path::PathBuf>,
        /// Answer elicitations by accepting with this JSON object as content.
        #[arg(long, value_name = "JSON")]
        answer: Option<String>,
        /// Answer elicitations from the requested schema's defaults.
        #[arg(long)]
        answer_defaults: bool,
        /// Answer the server's sampling requests with TEXT as the assistant's message
        /// (otherwise they are declined).
        #[arg(long, value_name = "TEXT")]
        sampling_answer: Option<String>,
    },
    /// The server's resources; `resources read URI`, `resources templates`.
    Resources(resources::ResourcesArgs),
    /// The server's prompts; `prompts get NAME key=value…`.
    Prompts(prompts::PromptsArgs),
    /// The server's skills (SEP-2640); with a NAME, that skill's files, each verified against
    /// the skill's entry. Listing reads no file.
    Skills(skills::SkillsArgs),
    /// The server's tasks: `tasks` lists them (2025-11-25), `tasks get ID` shows one,
    /// `tasks cancel ID` asks the server to cancel it. A call that runs as a task waits for
    /// it on its own and tells its status on stderr.
    Tasks(tasks::TasksArgs),
    /// Sign-ins to HTTP servers that need them (OAuth): `auth login` signs in now, `auth list`
    /// shows the sign-ins kept, `auth logout` forgets one. Any command signs in when its
    /// server asks, on a terminal.
    Auth(auth::AuthArgs),
    /// Pings the server and prints the round trip's time (handshake era).
    Ping {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The server's completions of a prompt's or resource template's argument:
    /// `mcpwire complete --prompt greet name=A`.
    Complete(complete::CompleteArgs),
    /// Sets the level of the server's log messages with logging/setLevel (handshake era).
    LogLevel {
        /// The least severe level to send.
        #[arg(value_enum)]
        level: server_logs::LogLevel,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Prints the server's notifications and log messages as they come, until Ctrl-C.
    ///
    /// Ctrl-C closes the connection as it should (an HTTP session is deleted) and exits with
    /// 0; a second Ctrl-C ends at once. Ends earlier with --count or --for. In the stateless era it listens with
    /// subscriptions/listen, which carries list changes and resource updates; log messages
    /// there belong to requests.
    Watch(watch::WatchArgs),
    /// A guided tour of MCP against the built-in demo server: each step shows what went over
    /// the wire and what came back (both eras, tools, progress, elicitation, input rounds,
    /// cancellation, resources, prompts, a notification, the close).
    Demo,
    /// With --config FILE, starts each of its enabled servers and prints its state, era,
    /// transport and tool count as it settles, and for one that failed its reason, then its
    /// command line or URL and the end of its stderr (exit 0 whatever the states). With
    /// --no-connect, or without --config (every host's usual files, the current directory's
    /// then the home directory's), starts nothing and prints what the files hold: name, host,
    /// transport, enabled, era, command line or URL (or why the server cannot be read) and
    /// file. Secrets are shown as `***`; URLs without credentials.
    Servers {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
        /// Start no server: print what the configuration holds.
        #[arg(long)]
        no_connect: bool,
    },
    /// Prints a completion script for a shell: `mcpwire completions bash > …`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: ShellArg,
    },
    /// Runs the built-in demo server on stdin and stdout.
    ServeDemo {
        /// Speak only the handshake era: stateless-era requests (the server/discover probe
        /// included) are refused with -32601, as servers older than 2026-07-28 refuse them.
        #[arg(long)]
        handshake_only: bool,
        /// List N generated tools after the demo's own (`tool-0` …, each returning its
        /// message), for measuring hosts with many tools.
        #[arg(long, value_name = "N", default_value_t = 0)]
        tools: usize,
    },
    /// Checks a captured HTTP response body as the client receives it (no server involved).
    ///
    /// Reads FILE (or stdin), parses it by --content-type, lists its SSE events and JSON-RPC
    /// messages, decodes it again split other ways, and exits with 6 when it yields no response
    /// for the request.
    Decode(decode::DecodeArgs),
}

impl Command {
    /// Whether the command was asked for JSON (`--json`).
    pub(crate) fn json(&self) -> bool {
        match self {
            Command::Info { json }
            | Command::Tools { json, .. }
            | Command::Call { json, .. }
            | Command::Ping { json }
            | Command::LogLevel { json, .. }
            | Command::Servers { json, .. } => *json,
            Command::Resources(a) => a.json,
            Command::Prompts(a) => a.json,
            Command::Skills(a) => a.json,
            Command::Tasks(a) => a.json,
            Command::Complete(a) => a.json,
            Command::Watch(a) => a.json,
            Command::Decode(a) => a.json,
            Command::Auth(a) => matches!(a.command, auth::AuthCommand::List { json: true }),
            Command::Demo | Command::Completions { .. } | Command::ServeDemo { .. } => false,
        }
    }

    /// The command's name, as it is typed.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Command::Info { .. } => "info",
            Command::Tools { .. } => "tools",
            Command::Call { .. } => "call",
            Command::Resources(_) => "resources",
            Command::Prompts(_) => "prompts",
            Command::Skills(_) => "skills",
            Command::Ping { .. } => "ping",
            Command::Complete(_) => "complete",
            Command::LogLevel { .. } => "log-level",
            Command::Watch(_) => "watch",
            Command::Auth(_) => "auth",
            Command::Tasks(_) => "tasks",
            Command::Demo => "demo",
            Command::ServeDemo { .. } => "serve-demo",
            Command::Decode(_) => "decode",
            Command::Servers { .. } => "servers",
            Command::Completions { .. } => "completions",
        }
    }
}

/// Whether the raw command line asks for JSON (`--json` before any `--`), for a usage error
/// found before the command line is understood.
pub(crate) fn asks_json(argv: &[std::ffi::OsString]) -> bool {
    argv.iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_asked_before_any_double_dash() {
        let argv =
            |words: &[&str]| -> Vec<std::ffi::OsString> { words.iter().map(Into::into).collect() };
        assert!(asks_json(&argv(&["mcpwire", "call", "--json"])));
        assert!(!asks_json(&argv(&["mcpwire", "call", "x"])));
        assert!(!asks_json(&argv(&["mcpwire", "call", "x", "--", "--json"])));
    }
}
