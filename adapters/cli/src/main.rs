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

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, CommandFactory, Parser, Subcommand};
use clap_complete::engine::ArgValueCompleter;
use futures_lite::future;
use mcpwire::core::error::HttpError;
use mcpwire::core::{CallError, LocalError};
use mcpwire::{CallOptions, Client, ConnectOptions, Error, Event, ProcessAction, ShutdownTimeouts};
use serde_json::{json, Value};

// First: its macros (`out!`, `outln!`, `err!`, `errln!`) print everything the modules below print.
#[macro_use]
mod out;

mod answers;
mod args;
mod ask;
mod auth;
mod broken_pipe;
mod complete;
mod config_file;
mod content;
mod decode;
mod demo;
mod hints;
mod http_args;
mod inspect;
mod logs;
mod many;
mod nouns;
mod progress;
mod servers;
mod show;
mod skills;
mod stdin_lines;
mod stop;
mod target;
mod tasks;
mod verbose;
mod watch;
mod words;

/// Exit codes, listed in `--help`.
mod exit {
    pub const OK: u8 = 0;
    pub const TOOL_ERROR: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const CONNECT: u8 = 3;
    pub const CALL: u8 = 4;
    pub const TIMEOUT: u8 = 5;
    pub const NO_RESPONSE: u8 = 6;
    pub const UNVERIFIED: u8 = 7;
    pub const HUNG_UP: u8 = 129;
    pub const INTERRUPTED: u8 = 130;
    pub const TERMINATED: u8 = 143;
}

const EXIT_CODES: &str = "\
Exit codes, each with its kind in --json's {\"error\": {\"kind\", \"message\"}}:
    0               success
    1               the tool ran and reported an error (an isError result)
    2  usage        bad arguments, or a tool the server does not list
    3  connect      the server could not be started, or its handshake failed or timed out
    4  call         the call failed (the connection ended, it was refused before it was
                    sent, it may have run and was not sent again), or stdout could not be
                    written; a JSON-RPC error from the server is printed as it came,
                    {\"error\": {\"code\", \"message\", \"data\"}}, in place of a kind
    5  timeout      the call timed out, or it waited for the server to answer
                    notifications/initialized and was never sent
    6  no-response  decode: the body yields no response for the request (or decodes
                    differently when split another way)
    7  unverified   skills NAME: a file of the skill does not match the skill's entry (size,
                    digest, SKILL.md frontmatter); nothing of the skill is printed. call: the
                    result breaks the tool's outputSchema (no structuredContent, or one that
                    does not match it)
  129  hung-up      SIGHUP, the terminal closed (on Windows the console): as after Ctrl-C
  130  interrupted  Ctrl-C, after a call in flight was cancelled (notifications/cancelled, or
                    tasks/cancel for a task) and the server was closed gracefully; any second
                    request to stop ends at once (watch, which runs until Ctrl-C, exits 0)
  141               stdout's reader went away (as head does once it has its lines): the
                    server was closed gracefully, then the command ended by SIGPIPE, as
                    other tools do
  143  terminated   SIGTERM (kill, timeout, a supervisor; on Windows Ctrl-Break): as after
                    Ctrl-C

What a server sends (tool text, error messages, log messages, its stderr, an HTTP error
body) is printed with its control characters made visible (\\x1b, \\r, \\u{85}, bidi and
zero-width characters), on a terminal or not; --json escapes them (\\u0085); a body that is
not text is summarised, never dumped.

With --config FILE, `servers` starts its enabled servers and tells each one's state as it
settles (exit 0 whatever they are). With several enabled servers there (and no --server),
`tools` lists them all as SERVER__TOOL, each server's as it gets ready, and `call
SERVER__TOOL` (or SERVER/TOOL) starts that server alone: a server that fails is told with its
reason, its command line or URL and the end of its stderr, and `tools` exits 0 when at least
one server answered, else 3.

With no --stdio or --http, commands run against the demo server built into this binary;
demo takes a guided tour of it.
decode reads a captured response body and connects to no server.";

/// Inspect and call any MCP server.
#[derive(Parser, Debug)]
#[command(name = "mcpwire", version, about, after_help = EXIT_CODES)]
struct Cli {
    #[command(flatten)]
    server: ServerArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Debug)]
struct ServerArgs {
    /// The server to run, as one command line ("CMD ARGS…", split like shell words, run
    /// without a shell), or as the last arguments: `--stdio -- CMD ARGS…`. Default: the
    /// built-in demo server.
    #[arg(long, global = true, value_name = "COMMAND", conflicts_with = "http")]
    stdio: Option<String>,
    /// A host's configuration file (Claude, Cursor, VS Code, Windsurf, Zed, Codex, Gemini, the
    /// Inspector, any `mcpServers` JSON): its server --server NAME, or its only enabled one;
    /// with several, `servers`, `tools` and `call server__tool` run them all.
    #[arg(long, global = true, value_name = "FILE", conflicts_with_all = ["stdio", "http", "headers", "bearer_env"])]
    config: Option<std::path::PathBuf>,
    /// Which server of --config FILE; without --config, the first host (Claude Code, Cursor,
    /// VS Code, …) whose usual files (the current directory's, then the home directory's)
    /// have a server NAME.
    #[arg(long, global = true, value_name = "NAME", conflicts_with_all = ["stdio", "http", "headers", "bearer_env", "env", "cwd"])]
    server: Option<String>,
    /// An environment variable for the stdio server, as `NAME=VALUE` (repeatable).
    #[arg(long = "env", global = true, value_name = "NAME=VALUE", conflicts_with_all = ["http", "config", "server"])]
    env: Vec<String>,
    /// The stdio server's working directory.
    #[arg(long, global = true, value_name = "DIR", conflicts_with_all = ["http", "config", "server"])]
    cwd: Option<std::path::PathBuf>,
    /// The words after `--stdio --`, the last arguments of the command line.
    #[arg(skip)]
    stdio_words: Option<Vec<String>>,
    /// A Streamable HTTP server's endpoint URL.
    #[arg(long, global = true, value_name = "URL")]
    http: Option<String>,
    /// A header for every HTTP request, as `Name: value` (repeatable).
    #[arg(long = "header", global = true, value_name = "NAME:VALUE")]
    headers: Vec<String>,
    /// Send `Authorization: Bearer <token>` with the token read from this environment variable
    /// (never printed, not even with --verbose).
    #[arg(long, global = true, value_name = "VAR")]
    bearer_env: Option<String>,
    /// Seconds to wait for each call (and for the handshake); a call's progress extends it.
    /// Default 30, or a configuration file's startup and tool timeouts for its server.
    #[arg(long, global = true, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// The most seconds a call may take in all, however much progress it reports.
    #[arg(long, global = true, value_name = "SECONDS")]
    max_time: Option<f64>,
    /// The largest message accepted, in bytes (a stdio line, a JSON body, an SSE event);
    /// default 16 MiB (64 MiB for a JSON body).
    #[arg(long, global = true, value_name = "BYTES")]
    max_message_size: Option<usize>,
    /// Print every frame sent and received on stderr, the stdio server's stderr (dimmed on a
    /// terminal), each step of a stdio server's close as it is taken (its stdin's end, then
    /// SIGTERM and SIGKILL if it lingers), and over HTTP each exchange (method, URL without
    /// credentials, status, session id; never a header).
    #[arg(long, short, global = true)]
    verbose: bool,
    /// Show the server's log messages at LEVEL or above on stderr (default: info); when given,
    /// also ask the server for them with logging/setLevel if it offers logging.
    #[arg(long, global = true, value_enum, value_name = "LEVEL")]
    log_level: Option<logs::LogLevel>,
    /// Which protocol era to speak: detect it (auto), the handshake era (handshake; also
    /// `legacy`) or the stateless era (stateless; also `modern`).
    #[arg(long, global = true, value_enum, default_value_t = EraArg::Auto)]
    era: EraArg,
    /// How an HTTP server is reached (TLS, proxy, HTTP versions, connections).
    #[command(flatten)]
    http_client: http_args::HttpArgs,
    /// How a sign-in happens when an HTTP server asks for one (OAuth).
    #[command(flatten)]
    sign_in: auth::SignInArgs,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum EraArg {
    Auto,
    #[value(alias = "legacy")]
    Handshake,
    #[value(alias = "modern")]
    Stateless,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum ShellArg {
    Bash,
    Zsh,
    Fish,
}

#[derive(Subcommand, Debug)]
enum Command {
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
        #[arg(add = ArgValueCompleter::new(complete::tool_names))]
        name: Option<String>,
        /// Print the tools (or the one tool) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Calls a tool: `mcpwire call add a=1 b=2`, or with a JSON object of arguments.
    Call {
        /// The tool's name; with --config FILE of several servers, its qualified name
        /// (`server__tool`, as `tools` lists it) or `server/tool`: only that server starts.
        #[arg(add = ArgValueCompleter::new(complete::tool_names))]
        tool: String,
        /// Arguments as key=value (typed by the tool's input schema) and key:=JSON (raw
        /// JSON), or one JSON object, or - to read that object from stdin. Either way they
        /// are checked against the schema before sending: unknown keys, values outside an
        /// enum, required arguments left out.
        #[arg(add = ArgValueCompleter::new(complete::argument_keys))]
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
    Resources(nouns::ResourcesArgs),
    /// The server's prompts; `prompts get NAME key=value…`.
    Prompts(nouns::PromptsArgs),
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
    Complete(nouns::CompleteArgs),
    /// Sets the level of the server's log messages with logging/setLevel (handshake era).
    LogLevel {
        /// The least severe level to send.
        #[arg(value_enum)]
        level: logs::LogLevel,
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
    fn json(&self) -> bool {
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
}

/// A failure with the exit code it maps to.
struct Failure {
    code: u8,
    /// What went wrong, in words (nothing more is printed on stderr when it is empty).
    message: String,
    /// The server's JSON-RPC error, when that is what it was: with `--json`, printed as it is.
    error: Option<Value>,
    /// Already said on stderr as it happened (a stop request): the message is for `--json`.
    told: bool,
}

impl Failure {
    fn new(code: u8, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
            error: None,
            told: false,
        }
    }

    /// What kind of failure, for `--json`, from its exit code.
    fn kind(&self) -> &'static str {
        match self.code {
            exit::USAGE => "usage",
            exit::CONNECT => "connect",
            exit::TIMEOUT => "timeout",
            exit::NO_RESPONSE => "no-response",
            exit::UNVERIFIED => "unverified",
            exit::INTERRUPTED => "interrupted",
            exit::TERMINATED => "terminated",
            exit::HUNG_UP => "hung-up",
            _ => "call",
        }
    }

    /// The failure as `--json` prints it: `{"error": …}`, the server's JSON-RPC error as it
    /// came, any other with its kind and message.
    fn to_json(&self) -> Value {
        let error = match &self.error {
            Some(e) => e.clone(),
            None => json!({"kind": self.kind(), "message": self.message}),
        };
        json!({ "error": error })
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match &e {
            // A configuration this client cannot honour (a header it cannot send among them).
            Error::Client(
                mcpwire::core::ClientError::Config(_)
                | mcpwire::core::ClientError::Header(_)
                | mcpwire::core::ClientError::Url(_),
            )
            | Error::HttpOptions { .. } => exit::USAGE,
            Error::Spawn { .. } | Error::Handshake { .. } => exit::CONNECT,
            Error::Schema { .. } => exit::UNVERIFIED,
            e if e.is_timeout() => exit::TIMEOUT,
            // Held until the server answered what had to go first (notifications/initialized)
            // and never sent: a timeout whichever one fired, the call's or that answer's.
            Error::Call(CallError::Local(LocalError::NotSent { .. })) => exit::TIMEOUT,
            _ => exit::CALL,
        };
        Failure {
            code,
            message: message_of(&e),
            error: e.server_error().and_then(|s| serde_json::to_value(s).ok()),
            told: false,
        }
    }
}

/// The words for an error: its own (how to give a token said with this command line's
/// options), with an HTTP error body's excerpt that is not text summarised instead of dumped.
fn message_of(e: &Error) -> String {
    let mut text = auth::in_cli_words(e.to_string());
    if e.is_timeout() {
        // The limit by the name a person gave it.
        text = text
            .replace("(its timeout)", "(--timeout)")
            .replace("; it may have run", "; the call may have run");
    }
    let text = match http_error(e) {
        Some(http) => match out::not_text(&http.body_excerpt) {
            Some(summary) => text.replace(http.body_excerpt.as_str(), summary),
            None => text,
        },
        None => text,
    };
    // A hint with this program's flags (`--cacert`) for the library's options.
    hints::in_cli_words(text, http_error(e))
}

/// The HTTP failure an error carries, if any.
fn http_error(e: &Error) -> Option<&HttpError> {
    match e {
        Error::Call(c) | Error::Handshake { error: c, .. } => match c {
            CallError::Local(LocalError::Http(h)) => Some(h),
            CallError::Local(LocalError::MaybeExecuted { http: Some(h), .. }) => Some(h),
            _ => None,
        },
        Error::MayHaveRun { http: Some(h), .. } => Some(h),
        _ => None,
    }
}

/// Ends with `f`: its words on stderr and, with `json`, its JSON object on stdout.
fn finish(f: Failure, json: bool) -> ExitCode {
    if json {
        out::json(&f.to_json());
    }
    if !f.message.is_empty() && !f.told {
        errln!("mcpwire: {}", f.message);
    }
    ExitCode::from(f.code)
}

/// The `--verbose` line for a step a stdio connection took with its server process, as it is
/// taken: the close's escalation (stdin's end, SIGTERM, SIGKILL) and a new start.
fn process_step(action: ProcessAction, waits: ShutdownTimeouts) -> Option<String> {
    Some(match action {
        ProcessAction::CloseStdin => format!(
            "stdin closed (end of file): the server has {:?} to exit",
            waits.after_close_stdin
        ),
        ProcessAction::Terminate if cfg!(windows) => {
            "the server is still running: its job object ended (every process in it)".into()
        }
        ProcessAction::Terminate => format!(
            "the server is still running: SIGTERM sent to its process group, {:?} before SIGKILL",
            waits.after_terminate
        ),
        ProcessAction::Kill if cfg!(windows) => "the server's job object ended".into(),
        ProcessAction::Kill => "SIGKILL sent to the server's process group".into(),
        // A new process is started only when the era probe went unanswered (or the server
        // exited during it): told here, before its frames, whether or not it then answers.
        ProcessAction::SpawnAgain => "restarting the server: it did not answer the era probe \
                                      (server/discover); a new process gets initialize"
            .into(),
        _ => return None,
    })
}

/// Whether the raw command line asks for JSON (`--json` before any `--`), for a usage error
/// found before the command line is understood.
fn asks_json(argv: &[std::ffi::OsString]) -> bool {
    argv.iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--json")
}

fn main() -> ExitCode {
    broken_pipe::end_quietly();
    // `COMPLETE=bash mcpwire`: the shell's completion script, or (as the script calls it) the
    // completions of a command line, tool names and argument keys from the tools cache.
    clap_complete::CompleteEnv::with_factory(Cli::command).complete();
    let (argv, stdio_words) = target::split_stdio_words(std::env::args_os().collect());
    let json = asks_json(&argv);
    let mut cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if json && !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let text = e.to_string();
                let first = text.lines().next().unwrap_or("").trim();
                let message = first.strip_prefix("error: ").unwrap_or(first);
                out::json(&Failure::new(exit::USAGE, message).to_json());
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
            exit::USAGE,
            "--stdio cannot be used with --http or --config",
        );
        return finish(f, json);
    }
    if let Command::ServeDemo {
        handshake_only,
        tools,
    } = cli.command
    {
        let stdin = smol::Unblock::new(std::io::stdin());
        // The demo server's own protocol (JSON-RPC, one message a line), not text for a
        // terminal.
        let stdout = smol::Unblock::new(out::raw_stdout());
        let config = mcpwire::core::server::DemoConfig {
            handshake_only,
            extra_tools: tools,
            ..Default::default()
        };
        return match smol::block_on(mcpwire::serve_demo(stdin, stdout, config)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                errln!("mcpwire serve-demo: {e}");
                ExitCode::from(1)
            }
        };
    }
    if let Command::Completions { shell } = cli.command {
        let shell = match shell {
            ShellArg::Bash => clap_complete::Shell::Bash,
            ShellArg::Zsh => clap_complete::Shell::Zsh,
            ShellArg::Fish => clap_complete::Shell::Fish,
        };
        // This program's own text (a broken pipe ends it by the panic hook).
        clap_complete::generate(
            shell,
            &mut Cli::command(),
            "mcpwire",
            &mut out::raw_stdout(),
        );
        return ExitCode::SUCCESS;
    }
    // --config FILE with several servers: `servers`, `tools` and `call` run them all.
    if let Some(code) = many::main(&cli) {
        return code;
    }
    if let Command::Servers { json, .. } = &cli.command {
        let (file, name) = (cli.server.config.as_deref(), cli.server.server.as_deref());
        return match servers::list(file, name, *json) {
            Ok(code) => ExitCode::from(code),
            Err(f) => finish(f, *json),
        };
    }
    if let Command::Decode(args) = &cli.command {
        return decode::main(args);
    }
    if let Command::Auth(a) = &cli.command {
        if !matches!(a.command, auth::AuthCommand::Login) {
            let outcome = target_config(&cli.server)
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
                exit::USAGE,
                "demo runs against the built-in demo server; it takes no --stdio, --http or --config",
            );
            return finish(f, json);
        }
        return demo::main();
    }
    let outcome = smol::block_on(run(cli));
    // stdout was lost: the connection is closed; end as that asks.
    stop::end_if_lost();
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(f) => finish(f, json),
    }
}

fn max_time(args: &ServerArgs) -> Result<Option<Duration>, Failure> {
    args.max_time
        .map(|s| {
            Duration::try_from_secs_f64(s).map_err(|_| {
                Failure::new(
                    exit::USAGE,
                    "--max-time must be a positive number of seconds",
                )
            })
        })
        .transpose()
}

fn timeout(args: &ServerArgs) -> Result<Duration, Failure> {
    Duration::try_from_secs_f64(args.timeout.unwrap_or(30.0)).map_err(|_| {
        Failure::new(
            exit::USAGE,
            "--timeout must be a positive number of seconds",
        )
    })
}

/// The server named on the command line (`--config`, `--server` or `--http`), with its file's
/// settings; `None` when none is named (the demo server, or `--stdio`).
fn target_config(
    args: &ServerArgs,
) -> Result<Option<(mcpwire::ServerConfig, Option<mcpwire::hosts::LoadedServer>)>, Failure> {
    let from_file = match (&args.config, &args.server) {
        (Some(file), name) => Some(config_file::server(file, name.as_deref(), args.verbose)?),
        (None, Some(name)) => Some(servers::find(name, args.verbose)?),
        (None, None) => None,
    };
    Ok(match from_file {
        Some(server) => Some((server.config.clone(), Some(server))),
        None if args.http.is_some() => Some((target::server_config(args)?, None)),
        None => None,
    })
}

async fn run(cli: Cli) -> Result<u8, Failure> {
    let (config, from_file) = match target_config(&cli.server)? {
        Some(found) => found,
        None => (target::server_config(&cli.server)?, None),
    };
    let settings = from_file.as_ref().map(|s| &s.settings);
    let file_era = settings.and_then(|s| s.era);
    // The file's tool filter holds here as in the Manager: its other tools are not shown,
    // nor called.
    let filter = settings.map(|s| s.tools.clone()).unwrap_or_default();
    let server_name = from_file.as_ref().map(|s| s.name.clone());
    // The file's timeouts for its server, unless --timeout says otherwise.
    let given = cli.server.timeout.is_some();
    let timeout = timeout(&cli.server)?;
    let init_timeout = match settings.and_then(|s| s.startup_timeout) {
        Some(t) if !given => t,
        _ => timeout,
    };
    let timeout = match settings.and_then(|s| s.tool_timeout) {
        Some(t) if !given => t,
        _ => timeout,
    };
    let mut options = ConnectOptions {
        init_timeout,
        era: match cli.server.era {
            // The file's `protocolEra`, unless --era says otherwise.
            EraArg::Auto => file_era.unwrap_or(mcpwire::Era::Auto),
            EraArg::Handshake => mcpwire::Era::Handshake,
            EraArg::Stateless => mcpwire::Era::Stateless,
        },
        // A server from a file is named as the file may be shown: no secret of its.
        shown_as: from_file.as_ref().map(|s| s.target()),
        ..ConnectOptions::default()
    };
    cli.server.http_client.apply(&mut options)?;
    let login =
        matches!(&cli.command, Command::Auth(a) if matches!(a.command, auth::AuthCommand::Login));
    if login {
        auth::forget(&config)?;
    }
    let file_oauth = settings.and_then(|s| s.oauth.as_ref());
    auth::apply(
        &cli.server.sign_in,
        &config,
        file_oauth,
        &mut options,
        login,
    )?;
    verbose::cap_messages(&mut options, cli.server.max_message_size);
    if cli.server.verbose {
        verbose::observe(&mut options, None);
    }
    if let Command::Call {
        answer,
        answer_defaults,
        sampling_answer,
        ..
    } = &cli.command
    {
        // On a terminal, elicitations are asked; without one, declined unless answered.
        options.handlers = answers::handlers(answers::AnswerArgs {
            answer: answer.as_deref(),
            defaults: *answer_defaults,
            sampling: sampling_answer.as_deref(),
        })?;
    }
    let stateless = matches!(cli.server.era, EraArg::Stateless);
    let http_proxy = inspect::proxy_in_use(&config, &options);
    // From here on a stop request (or stdout's loss) closes the connection gracefully.
    stop::stop_gracefully();
    let (client, driver) = mcpwire::connect(&config, options)?;
    smol::spawn(driver).detach();
    // `auth login`'s sign-in takes Ctrl-C itself, as its typed outcome.
    let ready = match login {
        true => Ok(client.ready().await),
        false => stop::unless_stopped(client.ready(), |_| ()).await,
    };
    let ready = match ready {
        Ok(Ok(_)) => Ok(()),
        // Pinned to the stateless era, a server that refuses server/discover speaks another.
        Ok(Err(e @ Error::Handshake { .. })) if stateless => Err(Failure::new(
            exit::CONNECT,
            format!(
                "this server does not speak 2026-07-28; try --era auto ({})",
                message_of(&e)
            ),
        )),
        Ok(Err(e)) => {
            let mut f = Failure::from(e);
            // A sign-in cancelled by a stop request.
            if let Some(request) = stop::requested() {
                f.code = request.code();
            }
            Err(f)
        }
        Err(stop) => {
            stop::tell(&stop);
            Err(stop::stopped(&stop))
        }
    };
    if let Err(f) = ready {
        // As on every other path: a stdio server gets stdin's end, then SIGTERM, then SIGKILL.
        client.close().await;
        return Err(f);
    }
    // With --verbose, what the connection reports beside the frames: readiness and the era,
    // every diagnostic, session renewals, the close. A call that runs as a task tells its
    // task's status as it changes, verbose or not.
    let verbose = cli.server.verbose;
    let calling = matches!(cli.command, Command::Call { .. });
    let printer = (verbose || calling).then(|| {
        let mut events = client.events();
        smol::spawn(async move {
            while let Some(event) = events.next().await {
                let task = matches!(event, Event::TaskStatus { .. });
                if let Some(line) = describe(&event).filter(|_| verbose || task) {
                    errln!("· {line}");
                }
            }
        })
    });
    let min_level = cli.server.log_level.unwrap_or(logs::LogLevel::Info);
    let logs = logs::LogPrinter::new(&client, min_level, out::stderr_is_terminal());
    let watching = matches!(cli.command, Command::Watch(_));
    let log_level = cli.server.log_level;
    let work = async {
        if let Some(level) = log_level {
            set_log_level(&client, level, timeout).await;
        }
        match cli.command {
            Command::Info { json } => {
                let asked_http2 = cli.server.http_client.asks_http2();
                inspect::info(&client, json, http_proxy.as_deref(), asked_http2)
            }
            Command::Tools { name, json } => {
                let shown = inspect::ToolsShown {
                    filter: &filter,
                    name: name.as_deref(),
                    json,
                    config: &config,
                };
                inspect::tools(&client, shown, timeout).await
            }
            Command::Call {
                tool,
                args,
                json,
                output,
                ..
            } => {
                let request = CallRequest {
                    tool: &tool,
                    args: &args,
                    json,
                    output: output.as_deref(),
                    filter: &filter,
                    server: server_name.as_deref(),
                    config: Some(&config),
                };
                let max_time = max_time(&cli.server)?;
                call(&client, request, &logs, timeout, max_time).await
            }
            Command::Resources(a) => nouns::resources(&client, a, timeout).await,
            Command::Prompts(a) => nouns::prompts(&client, a, timeout).await,
            Command::Skills(a) => skills::skills(&client, a, timeout).await,
            Command::Ping { json } => nouns::ping(&client, json, timeout).await,
            Command::Complete(a) => nouns::complete(&client, a, timeout).await,
            Command::LogLevel { level, json } => {
                nouns::log_level(&client, level, json, timeout).await
            }
            Command::Watch(a) => watch::run(&client, a, min_level, timeout).await,
            Command::Auth(_) => auth::logged_in(&config),
            Command::Tasks(a) => tasks::tasks(&client, a, timeout).await,
            Command::Demo
            | Command::ServeDemo { .. }
            | Command::Decode(_)
            | Command::Servers { .. }
            | Command::Completions { .. } => {
                unreachable!("handled before connecting")
            }
        }
    };
    // A call cut short by a stop request tells the server why ("interrupted").
    let named = |request: stop::Request| client.set_cancel_reason(request.words());
    // The server's log messages are printed while the command runs, and those left after.
    // Watch reads the notifications itself, log messages included.
    let done = match watching {
        true => stop::unless_stopped(work, named).await,
        false => stop::unless_stopped(future::or(work, logs.run()), named).await,
    };
    // A call cut short by a stop request was dropped with the work: its cancellation is queued, and
    // goes out before the close's end of stdin.
    let code = match done {
        Ok(code) => code,
        // Watch runs until Ctrl-C: that is its normal end.
        Err(stop::Stop::Requested(stop::Request::Interrupt)) if watching => {
            errln!("interrupted; closing the connection");
            Ok(exit::OK)
        }
        Err(stop) => {
            stop::tell(&stop);
            Err(stop::stopped(&stop))
        }
    };
    client.close().await;
    logs.drain().await;
    if let Some(printer) = printer {
        printer.await;
    }
    match code {
        Ok(_) if answers::answer_misfit() => Err(Failure::new(
            exit::USAGE,
            "--answer does not fit the form the server asked for (see above)",
        )),
        code => code,
    }
}

/// Asks the server for log messages at `level` and above, if it offers logging; a refusal is
/// reported and the command goes on.
async fn set_log_level(client: &Client, level: logs::LogLevel, timeout: Duration) {
    let offered = client
        .server_info()
        .is_some_and(|i| i.capabilities.logging.is_some());
    if !offered {
        return;
    }
    let opts = CallOptions::default().timeout(timeout);
    if let Err(e) = client.set_log_level(level.name(), opts).await {
        errln!("mcpwire: asking for log messages failed: {e}");
    }
}

/// One line for `--verbose` about an event of the connection.
fn describe(event: &Event) -> Option<String> {
    Some(match event {
        Event::Ready { era, server } => format!(
            "ready: {era} era, protocol {}, server {} {}",
            server.protocol_version, server.server_info.name, server.server_info.version
        ),
        Event::HandshakeFailed(e) => format!("handshake failed: {e}"),
        Event::SessionRenewed(_) => "the server forgot the session; a new one was made".into(),
        Event::ServerRequestCancelled { id, .. } => {
            format!("the server cancelled its request {id}")
        }
        Event::Diagnostic(d) => format!("diagnostic: {d}"),
        // Told as it happens, before the new process's frames (see `process_step`).
        Event::Restarting { .. } => return None,
        Event::TaskStatus { status, .. } => match &status.message {
            Some(m) => format!("task {}: {} ({m})", status.task_id, status.status),
            None => format!("task {}: {}", status.task_id, status.status),
        },
        Event::Closed(closed) => format!("closed: {}", closed.reason),
        _ => return None,
    })
}

/// What `mcpwire call` was asked.
struct CallRequest<'a> {
    tool: &'a str,
    args: &'a [String],
    json: bool,
    output: Option<&'a std::path::Path>,
    /// The file's tool filter for its server (allows every tool without a file).
    filter: &'a mcpwire::hosts::ToolFilter,
    /// The server's name in its file.
    server: Option<&'a str>,
    /// The server, whose tools are kept for completion once listed (the Manager keeps its
    /// servers' itself).
    config: Option<&'a mcpwire::ServerConfig>,
}

async fn call(
    client: &Client,
    request: CallRequest<'_>,
    logs: &logs::LogPrinter,
    timeout: Duration,
    max_time: Option<Duration>,
) -> Result<u8, Failure> {
    let CallRequest {
        tool,
        args,
        json,
        output,
        filter,
        server,
        config,
    } = request;
    if !filter.allows(tool) {
        let refused = mcpwire::manager::ManagerError::NotAllowed {
            server: server.unwrap_or("the server").to_owned(),
            tool: tool.to_owned(),
        };
        return Err(Failure::new(exit::USAGE, refused.to_string()));
    }
    if let Some(dir) = output {
        std::fs::create_dir_all(dir).map_err(|e| {
            Failure::new(
                exit::USAGE,
                format!("--output: cannot create {}: {e}", dir.display()),
            )
        })?;
    }
    // The tool is checked against the list before anything is sent; a server whose list
    // fails is called all the same.
    let schema = match client
        .list_tools_with(CallOptions::default().timeout(timeout))
        .await
    {
        Ok(tools) => {
            if let Some(config) = config {
                complete::remember_tools(config, &tools);
            }
            let tools = filter.keep(tools);
            match tools.iter().find(|t| t.name == tool) {
                Some(t) => t.input_schema_value(),
                None => return Err(args::unknown_tool(tool, &tools)),
            }
        }
        Err(_) => Value::Null,
    };
    let arguments = args::arguments(args, &schema, "tool")?;
    // Progress extends the timeout (users of every SDK ask for it); --max-time still holds.
    let mut opts = CallOptions::default().timeout(timeout).reset_on_progress();
    opts.max_total = max_time;
    // On a terminal a bar (or a spinner), cleared at the end; otherwise a line each.
    let progress = progress::Printer::new(out::stderr_is_terminal());
    let shown = progress.clone();
    let opts = opts.on_progress(move |p| shown.show(p));
    let outcome = client.call_tool_with(tool, arguments, opts).await;
    progress.clear();
    // The log messages that came before the result are printed before it.
    logs.drain().await;
    let result = match outcome {
        Ok(result) => result,
        // With --json, a JSON-RPC error is JSON too, on stdout (see `finish`); the exit code
        // stays 4.
        Err(e) => {
            let mut f = Failure::from(e);
            if let Some(hint) = hints::stateless_elicitation(client, &f.message) {
                f.message = format!("{}; {hint}", f.message);
            }
            return Err(f);
        }
    };
    let hint = result.is_error.then(|| result.text());
    let hint = hint.and_then(|text| hints::stateless_elicitation(client, &text));
    if json {
        out::json(&result);
    } else {
        let text = content::render(&result.content, tool, output)
            .map_err(|e| Failure::new(exit::USAGE, e))?;
        out!("{text}");
        if result.content.is_empty() {
            if let Some(s) = &result.structured_content {
                outln!("{s}");
            }
        }
    }
    if let Some(hint) = hint {
        errln!("mcpwire: {hint}");
    }
    Ok(if result.is_error {
        exit::TOOL_ERROR
    } else {
        exit::OK
    })
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

    #[test]
    fn a_failure_as_json_keeps_the_server_s_error_as_it_came() {
        let f = Failure::new(exit::TIMEOUT, "the call timed out");
        assert_eq!(
            f.to_json(),
            json!({"error": {"kind": "timeout", "message": "the call timed out"}})
        );
        let rpc = mcpwire::core::jsonrpc::ErrorObject::new(-32602, "bad");
        let f = Failure::from(Error::Call(CallError::Server(rpc)));
        assert_eq!(f.code, exit::CALL);
        assert_eq!(
            f.to_json(),
            json!({"error": {"code": -32602, "message": "bad"}})
        );
        assert_eq!(
            Failure::new(exit::INTERRUPTED, "").to_json()["error"]["kind"],
            "interrupted"
        );
    }

    /// The kind `--json` gives a failure is the one the exit codes' table gives its code.
    #[test]
    fn each_code_s_kind_is_the_one_help_lists() {
        let rows = EXIT_CODES
            .lines()
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .filter(|l| !l[..5].trim().is_empty());
        let mut checked = 0;
        for row in rows {
            let code: u8 = row[..5].trim().parse().expect("a code");
            let kind = row[5..20].trim();
            if !kind.is_empty() {
                assert_eq!(Failure::new(code, "").kind(), kind, "{row}");
                checked += 1;
            }
        }
        assert_eq!(checked, 9);
    }

    #[test]
    #[cfg(unix)]
    fn each_step_of_a_close_in_words() {
        let waits = ShutdownTimeouts::default();
        assert_eq!(
            process_step(ProcessAction::CloseStdin, waits).as_deref(),
            Some("stdin closed (end of file): the server has 2s to exit")
        );
        assert_eq!(
            process_step(ProcessAction::Terminate, waits).as_deref(),
            Some(
                "the server is still running: SIGTERM sent to its process group, \
                 2s before SIGKILL"
            )
        );
        assert_eq!(
            process_step(ProcessAction::Kill, waits).as_deref(),
            Some("SIGKILL sent to the server's process group")
        );
    }
}
