//! The options every command takes: the server (`--stdio`, `--http`, `--config`, `--server`), how
//! it is reached and spoken to (timeouts, `--era`, sizes, `--verbose`, HTTP and sign-in).

use std::time::Duration;

use clap::Args;

use super::http_args::HttpArgs;
use crate::commands::auth::SignInArgs;
use crate::exit_codes;
use crate::failure::Failure;
use crate::server_logs;

// The server a command runs against and how it is reached: every command takes these (a doc
// comment here would be clap's help text).
#[derive(Args, Debug)]
pub(crate) struct ServerArgs {
    /// The server to run, as one command line ("CMD ARGS…", split like shell words, run
    /// without a shell), or as the last arguments: `--stdio -- CMD ARGS…`. Default: the
    /// built-in demo server.
    #[arg(long, global = true, value_name = "COMMAND", conflicts_with = "http")]
    pub(crate) stdio: Option<String>,
    /// A host's configuration file (Claude, Cursor, VS Code, Windsurf, Zed, Codex, Gemini, the
    /// Inspector, any `mcpServers` JSON): its server --server NAME, or its only enabled one;
    /// with several, `servers`, `tools` and `call server__tool` run them all.
    #[arg(long, global = true, value_name = "FILE", conflicts_with_all = ["stdio", "http", "headers", "bearer_env"])]
    pub(crate) config: Option<std::path::PathBuf>,
    /// Which server of --config FILE; without --config, the first host (Claude Code, Cursor,
    /// VS Code, …) whose usual files (the current directory's, then the home directory's)
    /// have a server NAME.
    #[arg(long, global = true, value_name = "NAME", conflicts_with_all = ["stdio", "http", "headers", "bearer_env", "env", "cwd"])]
    pub(crate) server: Option<String>,
    /// An environment variable for the stdio server, as `NAME=VALUE` (repeatable).
    #[arg(long = "env", global = true, value_name = "NAME=VALUE", conflicts_with_all = ["http", "config", "server"])]
    pub(crate) env: Vec<String>,
    /// The stdio server's working directory.
    #[arg(long, global = true, value_name = "DIR", conflicts_with_all = ["http", "config", "server"])]
    pub(crate) cwd: Option<std::path::PathBuf>,
    /// The words after `--stdio --`, the last arguments of the command line.
    #[arg(skip)]
    pub(crate) stdio_words: Option<Vec<String>>,
    /// A Streamable HTTP server's endpoint URL.
    #[arg(long, global = true, value_name = "URL")]
    pub(crate) http: Option<String>,
    /// A header for every HTTP request, as `Name: value` (repeatable).
    #[arg(long = "header", global = true, value_name = "NAME:VALUE")]
    pub(crate) headers: Vec<String>,
    /// Send `Authorization: Bearer <token>` with the token read from this environment variable
    /// (never printed, not even with --verbose).
    #[arg(long, global = true, value_name = "VAR")]
    pub(crate) bearer_env: Option<String>,
    /// Seconds to wait for each call (and for the handshake, of which the era probe may take a
    /// third); a call's progress extends it. Default 30, or a configuration file's startup and
    /// tool timeouts for its server.
    #[arg(long, global = true, value_name = "SECONDS")]
    pub(crate) timeout: Option<f64>,
    /// The most seconds a call may take in all, however much progress it reports.
    #[arg(long, global = true, value_name = "SECONDS")]
    pub(crate) max_time: Option<f64>,
    /// The largest message accepted, in bytes (a stdio line, a JSON body, an SSE event);
    /// default 16 MiB (64 MiB for a JSON body).
    #[arg(long, global = true, value_name = "BYTES")]
    pub(crate) max_message_size: Option<usize>,
    /// Print every frame sent and received on stderr, the stdio server's stderr (dimmed on a
    /// terminal), each step of a stdio server's close as it is taken (its stdin's end, then
    /// SIGTERM and SIGKILL if it lingers), and over HTTP each exchange (method, URL without
    /// credentials, status, session id; never a header).
    #[arg(long, short, global = true)]
    pub(crate) verbose: bool,
    /// Show the server's log messages at LEVEL or above on stderr (default: info); when given,
    /// also ask the server for them with logging/setLevel if it offers logging.
    #[arg(long, global = true, value_enum, value_name = "LEVEL")]
    pub(crate) log_level: Option<server_logs::LogLevel>,
    /// Export the command's spans (one per request, after OpenTelemetry's MCP conventions)
    /// over OTLP/HTTP to this collector (`URL/v1/traces`), and send each request's trace
    /// context to the server; default: `OTEL_EXPORTER_OTLP_ENDPOINT` and the other
    /// `OTEL_EXPORTER_OTLP_*` variables.
    #[arg(long, global = true, value_name = "URL")]
    pub(crate) otlp: Option<String>,
    /// Which protocol era to speak: detect it (auto), the handshake era (handshake; also
    /// `legacy`) or the stateless era (stateless; also `modern`).
    #[arg(long, global = true, value_enum, default_value_t = EraArg::Auto)]
    pub(crate) era: EraArg,
    /// How an HTTP server is reached (TLS, proxy, HTTP versions, connections).
    #[command(flatten)]
    pub(crate) http_client: HttpArgs,
    /// How a sign-in happens when an HTTP server asks for one (OAuth).
    #[command(flatten)]
    pub(crate) sign_in: SignInArgs,
}

// `--era`: which protocol era to speak.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum EraArg {
    Auto,
    #[value(alias = "legacy")]
    Handshake,
    #[value(alias = "modern")]
    Stateless,
}

/// `--max-time`: the most a call may take in all, if given.
pub(crate) fn max_time(args: &ServerArgs) -> Result<Option<Duration>, Failure> {
    args.max_time
        .map(|s| {
            Duration::try_from_secs_f64(s).map_err(|_| {
                Failure::new(
                    exit_codes::USAGE,
                    "--max-time must be a positive number of seconds",
                )
            })
        })
        .transpose()
}

/// `--timeout`: how long each call (and the handshake) is waited for; 30 s by default.
pub(crate) fn timeout(args: &ServerArgs) -> Result<Duration, Failure> {
    Duration::try_from_secs_f64(args.timeout.unwrap_or(30.0)).map_err(|_| {
        Failure::new(
            exit_codes::USAGE,
            "--timeout must be a positive number of seconds",
        )
    })
}
