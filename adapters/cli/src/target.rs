//! Which server to connect to, from the command line's `--stdio`, `--http` and their options.

use std::ffi::OsString;

use mcpwire::core::header::check_configured;
use mcpwire::ServerConfig;

use super::{exit, words, Failure, ServerArgs};

/// Takes `--stdio -- CMD ARGS…` off the end of the command line: the arguments left for clap,
/// and the server's words.
pub(super) fn split_stdio_words(mut argv: Vec<OsString>) -> (Vec<OsString>, Option<Vec<String>>) {
    let Some(i) = argv.iter().position(|a| a == "--") else {
        return (argv, None);
    };
    if i == 0 || argv[i - 1] != "--stdio" {
        return (argv, None);
    }
    let words = argv[i + 1..]
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    argv.truncate(i - 1);
    (argv, Some(words))
}

pub(super) fn server_config(args: &ServerArgs) -> Result<ServerConfig, Failure> {
    if let Some(url) = &args.http {
        // A URL no HTTP client can be given is a usage error, named before anything is sent.
        mcpwire::core::config::check_url(url)
            .map_err(|e| Failure::new(exit::USAGE, format!("--http: {e}")))?;
        let mut headers = std::collections::BTreeMap::new();
        // Where a token sent comes from, for the words of its refusal.
        let mut token_from = None;
        for h in &args.headers {
            let (k, v) = h.split_once(':').ok_or_else(|| {
                Failure::new(exit::USAGE, format!("--header {h:?} is not Name: value"))
            })?;
            let (name, value) = (k.trim(), v.trim());
            // Refused before anything is sent: a header HTTP cannot carry, or one the HTTP
            // client sets itself (`Content-Length`, `Host`, …).
            check_configured(name, value)
                .map_err(|e| Failure::new(exit::USAGE, format!("--header: {e}")))?;
            if name.eq_ignore_ascii_case("authorization") {
                token_from = Some("the Authorization header given with --header".to_owned());
            }
            headers.insert(name.to_owned(), value.to_owned());
        }
        if let Some(var) = &args.bearer_env {
            let token = std::env::var(var).map_err(|_| {
                Failure::new(exit::USAGE, format!("--bearer-env: {var} is not set"))
            })?;
            let value = format!("Bearer {token}");
            // The message names the header and the offending character, never the token.
            check_configured("Authorization", &value)
                .map_err(|e| Failure::new(exit::USAGE, format!("--bearer-env {var}: {e}")))?;
            headers.insert("Authorization".into(), value);
            token_from = Some(format!(
                "--bearer-env {var}: the token read from that environment variable"
            ));
        }
        if let Some(from) = token_from {
            super::auth::token_from(from);
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
            exit::USAGE,
            "--header and --bearer-env need --http",
        ));
    }
    let words = match (&args.stdio, &args.stdio_words) {
        (Some(_), Some(_)) => {
            return Err(Failure::new(
                exit::USAGE,
                "--stdio takes one command line, or -- CMD ARGS…, not both",
            ))
        }
        (Some(line), None) => Some(words::split(line).map_err(|e| Failure::new(exit::USAGE, e))?),
        (None, Some(words)) => Some(words.clone()),
        (None, None) => None,
    };
    let mut config = match words {
        Some(words) => {
            let (command, rest) = words
                .split_first()
                .ok_or_else(|| Failure::new(exit::USAGE, "--stdio needs a command"))?;
            ServerConfig::stdio(command.clone(), rest.iter().cloned())
        }
        None => {
            let me = std::env::current_exe().map_err(|e| {
                Failure::new(exit::CONNECT, format!("cannot find this program: {e}"))
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
                    Failure::new(exit::USAGE, format!("--env {pair:?} is not NAME=VALUE"))
                })?;
            // As a repeated key=value argument: which one was meant is not for us to guess.
            if stdio.env.insert(k.to_owned(), v.to_owned()).is_some() {
                return Err(Failure::new(
                    exit::USAGE,
                    format!("--env {k} is given twice; give each variable once"),
                ));
            }
        }
        stdio.cwd = args.cwd.clone();
    }
    Ok(config)
}
