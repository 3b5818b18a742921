//! The `mcpwire` command line: inspect and call any MCP server from a shell.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, CommandFactory, Parser, Subcommand};
use mcpwire::{CallOptions, Client, ConnectOptions, Direction, Error, Event};
use serde_json::{Map, Value};

mod answers;
mod args;
mod ask;
mod auth;
mod broken_pipe;
mod config_file;
mod content;
mod decode;
mod demo;
mod http_args;
mod inspect;
mod interrupt;
mod logs;
mod many;
mod nouns;
mod progress;
mod servers;
mod show;
mod skills;
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
}

const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  the tool ran and reported an error (an isError result)
  2  usage error (bad arguments, or a tool the server does not list)
  3  the server could not be started or the handshake failed
  4  the call failed (a JSON-RPC error from the server, or the connection ended)
  5  the call timed out
  6  decode: the body yields no response for the request (or decodes differently
     when split another way)
  7  skills NAME: a file of the skill does not match the skill's entry (size, digest,
     SKILL.md frontmatter); nothing of the skill is printed. call: the result breaks the
     tool's outputSchema (no structuredContent, or one that does not match it)

With --config FILE, `servers` starts its enabled servers and tells their states (exit 0
whatever they are). With several enabled servers there (and no --server), `tools` lists them
all as SERVER__TOOL and `call SERVER__TOOL` (or SERVER/TOOL) routes: a server that fails is
told with its reason and the end of its stderr, and `tools` exits 0 when at least one server
answered, else 3.

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
    /// terminal), and over HTTP each exchange (method, URL without credentials, status,
    /// session id; never a header).
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
        name: Option<String>,
        /// Print the tools (or the one tool) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Calls a tool: `mcpwire call add a=1 b=2`, or with a JSON object of arguments.
    Call {
        /// The tool's name; with --config FILE of several servers, its qualified name
        /// (`server__tool`, as `tools` lists it) or `server/tool`.
        tool: String,
        /// Arguments as key=value (typed by the tool's input schema) and key:=JSON (raw
        /// JSON), or one JSON object, or - to read that object from stdin.
        args: Vec<String>,
        /// Print the whole result as JSON (instead of its text content); a JSON-RPC error
        /// from the server as `{"error": …}`.
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
    /// transport and tool count, and for one that failed its reason and the end of its stderr
    /// (exit 0 whatever the states). With --no-connect, or without --config (every host's
    /// usual files, the current directory's then the home directory's), starts nothing and
    /// prints what the files hold: name, host, transport, enabled, era, command line or URL
    /// and file. Secrets are shown as `***`; URLs without credentials.
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
    },
    /// Checks a captured HTTP response body as the client receives it (no server involved).
    ///
    /// Reads FILE (or stdin), parses it by --content-type, lists its SSE events and JSON-RPC
    /// messages, decodes it again split other ways, and exits with 6 when it yields no response
    /// for the request.
    Decode(decode::DecodeArgs),
}

/// A failure with the exit code it maps to.
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn new(code: u8, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match &e {
            // A configuration this client cannot honour (a header it cannot send among them).
            Error::Client(
                mcpwire::core::ClientError::Config(_) | mcpwire::core::ClientError::Header(_),
            )
            | Error::HttpOptions { .. } => exit::USAGE,
            Error::Spawn { .. } | Error::Handshake { .. } => exit::CONNECT,
            Error::Schema { .. } => exit::UNVERIFIED,
            e if e.is_timeout() => exit::TIMEOUT,
            _ => exit::CALL,
        };
        Failure::new(code, e.to_string())
    }
}

fn main() -> ExitCode {
    broken_pipe::end_quietly();
    let (argv, stdio_words) = target::split_stdio_words(std::env::args_os().collect());
    let mut cli = Cli::parse_from(argv);
    cli.server.stdio_words = stdio_words;
    if cli.server.stdio_words.is_some()
        && (cli.server.http.is_some() || cli.server.config.is_some())
    {
        eprintln!("mcpwire: --stdio cannot be used with --http or --config");
        return ExitCode::from(exit::USAGE);
    }
    if let Command::ServeDemo { handshake_only } = cli.command {
        let stdin = smol::Unblock::new(std::io::stdin());
        let stdout = smol::Unblock::new(std::io::stdout());
        let config = mcpwire::core::server::DemoConfig {
            handshake_only,
            ..Default::default()
        };
        return match smol::block_on(mcpwire::serve_demo(stdin, stdout, config)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("mcpwire serve-demo: {e}");
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
        clap_complete::generate(
            shell,
            &mut Cli::command(),
            "mcpwire",
            &mut std::io::stdout(),
        );
        return ExitCode::SUCCESS;
    }
    // --config FILE with several servers: `servers`, `tools` and `call` run them all.
    if let Some(code) = many::main(&cli) {
        return code;
    }
    if let Command::Servers { json, .. } = &cli.command {
        return match servers::list(cli.server.config.as_deref(), *json) {
            Ok(code) => ExitCode::from(code),
            Err(f) => {
                eprintln!("mcpwire: {}", f.message);
                ExitCode::from(f.code)
            }
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
                Err(f) => {
                    eprintln!("mcpwire: {}", f.message);
                    ExitCode::from(f.code)
                }
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
            eprintln!(
                "mcpwire: demo runs against the built-in demo server; \
                 it takes no --stdio, --http or --config"
            );
            return ExitCode::from(exit::USAGE);
        }
        return demo::main();
    }
    if matches!(cli.command, Command::Watch(_)) {
        // Ctrl-C ends watch, and the connection closes as it should.
        interrupt::catch();
    }
    match smol::block_on(run(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("mcpwire: {}", f.message);
            ExitCode::from(f.code)
        }
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
) -> Result<Option<(mcpwire::ServerConfig, Option<mcpwire::config::LoadedServer>)>, Failure> {
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
        ..ConnectOptions::default()
    };
    cli.server.http_client.apply(&mut options)?;
    let login =
        matches!(&cli.command, Command::Auth(a) if matches!(a.command, auth::AuthCommand::Login));
    if login {
        auth::forget(&config)?;
    }
    auth::apply(&cli.server.sign_in, &config, &mut options, login)?;
    if let Some(max) = cli.server.max_message_size {
        options.max_line = max;
        options.http.max_json_body = max;
        options.http.max_event = max;
    }
    if cli.server.verbose {
        options.observer = Some(Box::new(|d: Direction, b: &[u8]| {
            let arrow = match d {
                Direction::Outgoing => "→",
                Direction::Incoming => "←",
            };
            eprintln!("{arrow} {}", String::from_utf8_lossy(b));
        }));
        // The server's stderr, dimmed on a terminal.
        let dim = std::io::stderr().is_terminal();
        options.on_stderr = Some(Arc::new(move |line: &str| match dim {
            true => eprintln!("\x1b[2mserver: {line}\x1b[0m"),
            false => eprintln!("server: {line}"),
        }));
        // Over HTTP, each exchange too: method, URL (without credentials), status, session.
        options.on_http_exchange = Some(Arc::new(|note: &mcpwire::HttpExchangeNote| {
            if let Some(line) = verbose::exchange_line(note) {
                eprintln!("{line}");
            }
        }));
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
    let client = match mcpwire::connect_smol(&config, options).await {
        Ok(client) => client,
        // Pinned to the stateless era, a server that refuses server/discover speaks another.
        Err(e @ Error::Handshake { .. }) if stateless => {
            return Err(Failure::new(
                exit::CONNECT,
                format!("this server does not speak 2026-07-28; try --era auto ({e})"),
            ))
        }
        Err(e) => return Err(e.into()),
    };
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
                    eprintln!("· {line}");
                }
            }
        })
    });
    if let Some(level) = cli.server.log_level {
        set_log_level(&client, level, timeout).await;
    }
    let min_level = cli.server.log_level.unwrap_or(logs::LogLevel::Info);
    let logs = logs::LogPrinter::new(&client, min_level, std::io::stderr().is_terminal());
    let watching = matches!(cli.command, Command::Watch(_));
    let work = async {
        match cli.command {
            Command::Info { json } => inspect::info(&client, json),
            Command::Tools { name, json } => {
                inspect::tools(&client, name.as_deref(), json, timeout).await
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
    // The server's log messages are printed while the command runs, and those left after.
    // Watch reads the notifications itself, log messages included.
    let code = match watching {
        true => work.await,
        false => futures_lite::future::or(work, logs.run()).await,
    };
    client.close().await;
    logs.drain().await;
    if let Some(printer) = printer {
        printer.await;
    }
    code
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
    let mut params = Map::new();
    params.insert("level".into(), Value::from(level.name()));
    let opts = CallOptions::default().timeout(timeout);
    if let Err(e) = client.request("logging/setLevel", Some(params), opts).await {
        eprintln!("mcpwire: logging/setLevel failed: {e}");
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
        Event::Restarting { reason } => format!("restarting the server: {reason}"),
        Event::TaskStatus { status, .. } => match &status.message {
            Some(m) => format!("task {}: {} ({m})", status.task_id, status.status),
            None => format!("task {}: {}", status.task_id, status.status),
        },
        Event::Closed { reason } => format!("closed: {reason}"),
        _ => return None,
    })
}

/// What `mcpwire call` was asked.
struct CallRequest<'a> {
    tool: &'a str,
    args: &'a [String],
    json: bool,
    output: Option<&'a std::path::Path>,
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
    } = request;
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
        Ok(tools) => match tools.iter().find(|t| t.name == tool) {
            Some(t) => t.input_schema_value(),
            None => return Err(args::unknown_tool(tool, &tools)),
        },
        Err(_) => Value::Null,
    };
    let arguments = args::arguments(args, &schema)?;
    // Progress extends the timeout (users of every SDK ask for it); --max-time still holds.
    let mut opts = CallOptions::default().timeout(timeout).reset_on_progress();
    opts.max_total = max_time;
    // On a terminal a bar (or a spinner), cleared at the end; otherwise a line each.
    let progress = progress::Printer::new(std::io::stderr().is_terminal());
    let shown = progress.clone();
    let opts = opts.on_progress(move |p| shown.show(p));
    let outcome = client.call_tool_with(tool, arguments, opts).await;
    progress.clear();
    // The log messages that came before the result are printed before it.
    logs.drain().await;
    let result = match outcome {
        Ok(result) => result,
        Err(e) => {
            // With --json, a JSON-RPC error is JSON too, on stdout; the exit code stays 4.
            if let (true, Some(error)) = (json, e.server_error()) {
                let v = serde_json::json!({ "error": error });
                println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            }
            return Err(e.into());
        }
    };
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&result).unwrap_or_default()
        );
    } else {
        let text = content::render(&result.content, tool, output)
            .map_err(|e| Failure::new(exit::USAGE, e))?;
        print!("{text}");
        if result.content.is_empty() {
            if let Some(s) = &result.structured_content {
                println!("{s}");
            }
        }
    }
    Ok(if result.is_error {
        exit::TOOL_ERROR
    } else {
        exit::OK
    })
}
