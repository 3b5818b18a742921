//! Shell completion with the live tools (`source <(COMPLETE=bash mcpwire)`): tool names and
//! argument keys come from the tools cache of the server the command line names (`--stdio`,
//! `--http`, `--config`, `--server`), never from starting it. A command that lists a server's
//! tools (`tools`, `call`) keeps them there ([`remember_tools`]); a server never listed offers
//! nothing yet.

use std::ffi::{OsStr, OsString};
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Parser;
use clap_complete::engine::CompletionCandidate;
use mcpwire::core::types::Tool;
use mcpwire::manager::cache::{
    cache_key, credentials_of, default_dir, CacheLimits, CachedList, ListCache, ListKind,
};
use mcpwire::manager::naming::{qualify, NamingPolicy};
use mcpwire::manager::{Manager, ManagerOptions};
use mcpwire::ServerConfig;

use super::server_args::ServerArgs;
use crate::one_server::target;

/// The options that name the server, parsed as the command line parses them.
#[derive(Parser)]
#[command(name = "mcpwire")]
struct Naming {
    #[command(flatten)]
    server: ServerArgs,
}

/// The options that name the server, copied from the command line being completed.
const NAMING: [&str; 7] = [
    "--stdio", "--http", "--config", "--server", "--env", "--cwd", "--header",
];

/// The words of the command line being completed (after the `--` the shell's script puts
/// before them), the program's name first.
fn words() -> Vec<OsString> {
    let all: Vec<OsString> = std::env::args_os().collect();
    match all.iter().position(|w| w == "--") {
        Some(at) => all[at + 1..].to_vec(),
        None => Vec::new(),
    }
}

/// The server options among `words`, each with its value.
fn server_options(words: &[OsString]) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i].to_string_lossy();
        if NAMING.iter().any(|o| w.starts_with(&format!("{o}="))) {
            out.push(words[i].clone());
        } else if NAMING.contains(&w.as_ref()) && i + 1 < words.len() {
            out.push(words[i].clone());
            out.push(words[i + 1].clone());
            i += 1;
        }
        i += 1;
    }
    out
}

/// The cached tools of the server (or servers) the command line names, each under the name
/// `call` takes (`server__tool` for a file of several servers).
fn cached_tools(words: &[OsString]) -> Vec<(String, Tool)> {
    let mut argv = vec![OsString::from("mcpwire")];
    argv.extend(server_options(words));
    let Ok(cli) = Naming::try_parse_from(argv) else {
        return Vec::new();
    };
    let manager = Manager::new(ManagerOptions::default());
    let one = |config: &ServerConfig| manager.cached_tools(config).unwrap_or_default();
    if let (Some(file), None) = (&cli.server.config, &cli.server.server) {
        // A file of several servers: every one's tools, named as the namespace names them.
        // Read without asking for inputs: a keypress never waits on a prompt.
        let loaded = mcpwire::hosts::Loader::from_process()
            .ok()
            .and_then(|l| l.isolate_failures().load_file(file).ok());
        if let Some(loaded) = loaded {
            let servers: Vec<_> = loaded
                .servers
                .iter()
                .filter(|s| s.settings.enabled)
                .collect();
            if servers.len() > 1 {
                let found: Vec<(String, Tool)> = servers
                    .iter()
                    .flat_map(|s| {
                        let keep = s.settings.tools.clone();
                        keep.keep(one(&s.config))
                            .into_iter()
                            .map(|t| (s.name.clone(), t))
                    })
                    .collect();
                let pairs: Vec<(String, String)> = found
                    .iter()
                    .map(|(s, t)| (s.clone(), t.name.clone()))
                    .collect();
                let (names, _) = qualify(&NamingPolicy::default(), &pairs);
                return names
                    .into_iter()
                    .zip(found)
                    .map(|(q, (_, t))| (q.qualified, t))
                    .collect();
            }
        }
    }
    let Ok(found) = target::target_config(&cli.server) else {
        return Vec::new();
    };
    let (config, filter) = match found {
        Some((config, server)) => (config, server.map(|s| s.settings.tools)),
        None => match target::server_config(&cli.server) {
            Ok(config) => (config, None),
            Err(_) => return Vec::new(),
        },
    };
    let tools = one(&config);
    let tools = match filter {
        Some(filter) => filter.keep(tools),
        None => tools,
    };
    tools.into_iter().map(|t| (t.name.clone(), t)).collect()
}

/// Tool names for `call TOOL` and `tools NAME`.
pub(crate) fn tool_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    cached_tools(&words())
        .into_iter()
        .filter(|(name, _)| name.starts_with(current.as_ref()))
        .map(|(name, tool)| {
            let help = tool.description.clone().map(Into::into);
            CompletionCandidate::new(name).help(help)
        })
        .collect()
}

/// Argument keys (`key=`) for `call TOOL ARGS…`: the tool's input schema's properties not
/// given yet.
pub(crate) fn argument_keys(current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    if current.contains('=') {
        return Vec::new();
    }
    let words = words();
    let Some(at) = words.iter().position(|w| w == "call") else {
        return Vec::new();
    };
    // The tool: the first word after `call` that is no option.
    let Some(tool) = words[at + 1..]
        .iter()
        .map(|w| w.to_string_lossy())
        .find(|w| !w.starts_with('-'))
    else {
        return Vec::new();
    };
    let given: Vec<String> = words[at + 1..]
        .iter()
        .filter_map(|w| {
            let w = w.to_string_lossy();
            w.split_once('=')
                .map(|(k, _)| k.trim_end_matches(':').to_owned())
        })
        .collect();
    let Some((_, found)) = cached_tools(&words)
        .into_iter()
        .find(|(name, _)| *name == tool)
    else {
        return Vec::new();
    };
    let schema = found.input_schema_value();
    let Some(props) = schema.get("properties").and_then(|p| p.as_object()) else {
        return Vec::new();
    };
    props
        .iter()
        .filter(|(k, _)| !given.contains(k) && k.starts_with(current.as_ref()))
        .map(|(k, p)| {
            let help = p
                .get("description")
                .and_then(|d| d.as_str())
                .map(|d| d.to_owned().into());
            CompletionCandidate::new(format!("{k}=")).help(help)
        })
        .collect()
}

/// Keeps `tools`, as listed by the server `config` names, in the tools cache the Manager and
/// completion read: completion offers them without starting the server. A cache that cannot
/// be written is no failure of the command.
pub(crate) fn remember_tools(config: &ServerConfig, tools: &[Tool]) {
    let Some(dir) = default_dir() else {
        return;
    };
    let credentials = credentials_of(config);
    let list = CachedList {
        items: tools
            .iter()
            .filter_map(|t| serde_json::value::to_raw_value(t).ok())
            .collect(),
        received_at_ms: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
        ttl_ms: None,
        // The scope is unknown here: kept private to the credentials it was listed with.
        scope: credentials.as_ref().map(|_| "private".to_owned()),
        credentials,
    };
    let now_ms = list.received_at_ms;
    let mut cache = ListCache::on_disk(dir);
    let _ = cache.put_list(&cache_key(config), ListKind::Tools, list);
    // One file per server reached: the folder is kept within its limits.
    let _ = cache.prune(now_ms, &CacheLimits::default());
}
