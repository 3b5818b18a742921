//! Which server to connect to: one of a configuration file (`--config`, `--server`), or from the
//! command line's `--stdio`, `--http` and their options.

use mcpwire::core::header::check_configured;
use mcpwire::ServerConfig;

use crate::command_line::server_args::ServerArgs;
use crate::command_line::shell_words;
use crate::exit_codes;
use crate::failure::{hints, Failure};
use crate::servers::{config_file, configured};

/// The server named on the command line (`--config`, `--server` or `--http`), with its file's
/// settings; `None` when none is named (the demo server, or `--stdio`).
pub(crate) fn target_config(
    args: &ServerArgs,
) -> Result<Option<(mcpwire::ServerConfig, Option<mcpwire::hosts::LoadedServer>)>, Failure> {
    let from_file = match (&args.config, &args.server) {
        (Some(file), name) => Some(config_file::server(file, name.as_deref(), args.verbose)?),
        (None, Some(name)) => Some(configured::find(name, args.verbose)?),
        (None, None) => None,
    };
    Ok(match from_file {
        Some(server) => Some((server.config.clone(), Some(server))),
        None if args.http.is_some() => Some((server_config(args)?, None)),
        None => None,
    })
}

/// The server `--stdio` or `--http` names (with their options), or the built-in demo server.
pub(crate) fn server_config(args: &ServerArgs) -> Result<ServerConfig, Failure> {
    if let Some(url) = &args.http {
        // A URL no HTTP client can be given is a usage error, named before anything is sent.
        mcpwire::core::config::check_url(url)
            .map_err(|e| Failure::new(exit_codes::USAGE, format!("--http: {e}")))?;
        let mut headers = std::collections::BTreeMap::new();
        // Where a token sent comes from, for the words of its refusal.
        let mut token_from = None;
        for h in &args.headers {
            let (k, v) = h.split_once(':').ok_or_else(|| {
                Failure::new(
                    exit_codes::USAGE,
                    format!("--header {h:?} is not Name: value"),
                )
            })?;
            let (name, value) = (k.trim(), v.trim());
            // Refused before anything is sent: a header HTTP cannot carry, or one the HTTP
            // client sets itself (`Content-Length`, `Host`, …).
            check_configured(name, value)
                .map_err(|e| Failure::new(exit_codes::USAGE, format!("--header: {e}")))?;
            if name.eq_ignore_ascii_case("authorization") {
                token_from = Some("the Authorization header given with --header".to_owned());
            }
            headers.insert(name.to_owned(), value.to_owned());
        }
        if let Some(var) = &args.bearer_env {
            let token = std::env::var(var).map_err(|_| {
                Failure::new(exit_codes::USAGE, format!("--bearer-env: {var} is not set"))
            })?;
            let value = format!("Bearer {token}");
            // The message names the header and the offending character, never the token.
            check_configured("Authorization", &value)
                .map_err(|e| Failure::new(exit_codes::USAGE, format!("--bearer-env {var}: {e}")))?;
            headers.insert("Authorization".into(), value);
            token_from = Some(format!(
                "--bearer-env {var}: the token read from that environment variable"
            ));
        }
        if let Some(from) = token_from {
            hints::token_from(from);
        }
        return Ok(ServerConfig::Http(mcpwire::core::config::HttpConfig {
            kind: mcpwire::core::config::HttpKind::Streamable,
            url: url.clone(),
            headers,
            extra: Default::default(),
        }));
    }
    if !args.headers.is_empty() || args.bearer_env.is_some() {
        return Err(Failure::new(
            exit_codes::USAGE,
            "--header and --bearer-env need --http",
        ));
    }
    let words = match (&args.stdio, &args.stdio_words) {
        (Some(_), Some(_)) => {
            return Err(Failure::new(
                exit_codes::USAGE,
                "--stdio takes one command line, or -- CMD ARGS…, not both",
            ))
        }
        (Some(line), None) => {
            Some(shell_words::split(line).map_err(|e| Failure::new(exit_codes::USAGE, e))?)
        }
        (None, Some(words)) => Some(words.clone()),
        (None, None) => None,
    };
    let mut config = match words {
        Some(words) => {
            let (command, rest) = words
                .split_first()
                .ok_or_else(|| Failure::new(exit_codes::USAGE, "--stdio needs a command"))?;
            ServerConfig::stdio(command.clone(), rest.iter().cloned())
        }
        None => {
            let me = std::env::current_exe().map_err(|e| {
                Failure::new(
                    exit_codes::CONNECT,
                    format!("cannot find this program: {e}"),
                )
            })?;
            ServerConfig::stdio(me.to_string_lossy().into_owned(), ["serve-demo"])
        }
    };
    if let ServerConfig::Stdio(stdio) = &mut config {
        for pair in &args.env {
            let (k, v) = pair
                .split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| {
                    Failure::new(
                        exit_codes::USAGE,
                        format!("--env {pair:?} is not NAME=VALUE"),
                    )
                })?;
            // As a repeated key=value argument: which one was meant is not for us to guess.
            if stdio.env.insert(k.to_owned(), v.to_owned()).is_some() {
                return Err(Failure::new(
                    exit_codes::USAGE,
                    format!("--env {k} is given twice; give each variable once"),
                ));
            }
        }
        stdio.cwd = args.cwd.clone();
    }
    Ok(config)
}
