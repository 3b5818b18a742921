//! The servers of hosts' configuration files: a file read, its variables expanded and its inputs
//! asked ([`config_file`]); a server found, or every one listed, without starting any
//! ([`configured`]); and here `--config FILE` with several servers, run by one [`Manager`]:
//! `servers` starts them and
//! tells each one's state, era, transport and tool count; `tools` lists every server's tools
//! under their qualified names (`server__tool`); `call QUALIFIED` routes a call to the server
//! that offers the tool (`server/tool` is accepted too), and starts only that server. Each
//! server is told as it settles: one that hangs is told when its start-up timeout ends and
//! holds back none of the others. A server that fails is reported with its reason and the
//! end of its stderr; the others still answer.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::hosts::{Loaded, Loader, ToolFilter};
use mcpwire::manager::naming::{self, NamingPolicy};
use mcpwire::manager::{Manager, ManagerEvent, ManagerOptions, ServerState};
use mcpwire::{ConnectOptions, Era};

use crate::command_line::parser::{Cli, Command};
use crate::command_line::server_args::{self, EraArg, ServerArgs};
use crate::commands::auth;
use crate::commands::call::{answers, arguments, CallRequest};
use crate::failure::{code_of, finish, Failure};
use crate::{exit_codes, otlp, stop, verbose};

pub(crate) mod config_file;
pub(crate) mod configured;
mod states;
mod table;
mod tools;

use states::{all_names, reason};

/// How long past the longest start-up timeout the servers are waited for, at most.
const GRACE: Duration = Duration::from_secs(2);

/// Runs the command through a Manager when it is one for many servers: `servers` with
/// `--config` (unless `--no-connect`), and `tools` or `call` with `--config` and no
/// `--server` when the file has several servers to start. `None`: the command is for one
/// server, or for none.
pub(crate) fn main(cli: &Cli) -> Option<ExitCode> {
    let args = &cli.server;
    let file = args.config.as_deref()?;
    let many = match &cli.command {
        Command::Servers { no_connect, .. } => !no_connect,
        Command::Tools { .. } | Command::Call { .. } => args.server.is_none(),
        _ => false,
    };
    if !many {
        return None;
    }
    // Every server of the file, read without asking for inputs (a server that needs one is
    // among the failures); a file that cannot be read is left to the loading that follows to
    // report.
    let listed = listed(file);
    let several = listed
        .as_ref()
        .is_some_and(|l| config_file::candidates(l).len() > 1);
    if !several && !matches!(cli.command, Command::Servers { .. }) {
        return None;
    }
    let listed = listed.unwrap_or_default();
    let work = run(cli, file, &listed);
    let outcome = otlp::run(args.otlp.as_deref(), cli.command.name(), work, code_of);
    // stdout was lost: every server is closed; end as that asks.
    stop::end_if_lost();
    Some(match outcome {
        Ok(code) => ExitCode::from(code),
        Err(f) => finish(f, cli.command.json()),
    })
}

/// `path` read without asking for inputs, every server kept apart (one that cannot be read
/// is among the failures); `None` when the file cannot be read at all.
fn listed(path: &Path) -> Option<Loaded> {
    let mut loader = Loader::from_process().ok()?.isolate_failures();
    loader.load_file(path).ok()
}

/// The one server the command is about, when it names one: `servers --server NAME`, or the
/// server a tool's name begins with (`call github__search`, `tools github/search`). A name
/// that begins as a qualified one does (`nope__x`) with no such server is a usage error.
fn scope(cli: &Cli, file: &Path, listed: &Loaded) -> Result<Option<String>, Failure> {
    let typed = match &cli.command {
        Command::Servers { .. } => return Ok(cli.server.server.clone()),
        Command::Call { tool, .. } => tool.as_str(),
        Command::Tools {
            name: Some(name), ..
        } => name.as_str(),
        _ => return Ok(None),
    };
    let names = all_names(listed);
    if let Some(server) = naming::server_of(&NamingPolicy::default(), &names, typed) {
        return Ok(Some(server.to_owned()));
    }
    let cut = [typed.find("__"), typed.find('/')]
        .into_iter()
        .flatten()
        .min();
    match cut {
        Some(at) if at > 0 => Err(unknown_server(file, &typed[..at], &names)),
        _ => Ok(None),
    }
}

/// The failure for a tool name whose server part names no server of the file.
fn unknown_server(file: &Path, server: &str, names: &[&str]) -> Failure {
    let hint = arguments::did_you_mean(server, names);
    let list = match names.is_empty() {
        true => "it has none".to_owned(),
        false => format!("its servers: {}", arguments::shown_names(names, "")),
    };
    Failure::new(
        exit_codes::USAGE,
        format!(
            "no server named {server} in {}{hint}; {list}",
            file.display()
        ),
    )
}

/// The era `--era` pins, if it pins one.
fn pinned(era: EraArg) -> Option<Era> {
    match era {
        EraArg::Auto => None,
        EraArg::Handshake => Some(Era::Handshake),
        EraArg::Stateless => Some(Era::Stateless),
    }
}

async fn run(cli: &Cli, file: &Path, listed: &Loaded) -> Result<u8, Failure> {
    let args = &cli.server;
    // `servers --server NAME`, and a tool of one server, start that server only (only its
    // variables and inputs are needed).
    let only = scope(cli, file, listed)?;
    let mut loaded = config_file::load(file, only.as_deref(), args.verbose)?;
    if let Some(name) = &only {
        if loaded.get(name).is_none() {
            let told_in_its_row = matches!(cli.command, Command::Servers { .. });
            match loaded.failed.first() {
                Some(_) if told_in_its_row => {}
                Some(e) => return Err(Failure::new(exit_codes::USAGE, e.to_string())),
                None => {
                    let message = format!("{}: no server named `{name}`", file.display());
                    return Err(Failure::new(exit_codes::USAGE, message));
                }
            }
        }
    }
    let timeout = server_args::timeout(args)?;
    // --timeout and --era hold for every server, over what the file says.
    for server in &mut loaded.servers {
        if args.timeout.is_some() {
            server.settings.startup_timeout = Some(timeout);
            server.settings.tool_timeout = Some(timeout);
        }
        if let Some(era) = pinned(args.era) {
            server.settings.era = Some(era);
        }
    }
    let options = options(cli, timeout)?;
    // From here on a stop request (or stdout's loss) closes every server gracefully.
    stop::stop_gracefully();
    let manager = Manager::from_loaded(&loaded, options);
    let longest = loaded
        .enabled()
        .map(|s| s.settings.startup_timeout.unwrap_or(timeout))
        .max()
        .unwrap_or(timeout);
    // Each server starts or fails within its start-up timeout; this is only a bound.
    let until = Instant::now() + longest + GRACE;
    let work = async {
        match &cli.command {
            Command::Servers { json, .. } => table::servers(&manager, &loaded, *json, until).await,
            Command::Tools { name: None, json } => {
                tools::tools(&manager, &loaded, *json, until).await
            }
            Command::Tools {
                name: Some(name),
                json,
            } => {
                tools::settle(&manager, until, name).await;
                tools::tool(&manager, &loaded, listed, name, *json)
            }
            Command::Call {
                tool,
                args: words,
                json,
                output,
                ..
            } => {
                tools::settle(&manager, until, tool).await;
                // The Manager routes only to tools its server's filter allows.
                let routed_only = ToolFilter::default();
                let request = CallRequest {
                    tool,
                    args: words,
                    json: *json,
                    output: output.as_deref(),
                    filter: &routed_only,
                    server: None,
                    config: None,
                };
                tools::call(&manager, &loaded, listed, args, request, timeout).await
            }
            _ => unreachable!("only servers, tools and call run many servers"),
        }
    };
    // With --verbose, each server's changes of state as they come.
    let events = async {
        if !args.verbose {
            return future::pending().await;
        }
        loop {
            if let ManagerEvent::State { server, state } = manager.next_event().await {
                let detail = match &state {
                    ServerState::Ready { era, tools } => {
                        let era = era.map_or_else(|| "era unknown".into(), |e| e.to_string());
                        Some(format!("{era}, {tools} tools"))
                    }
                    ServerState::Starting { .. } => None,
                    _ => reason(&state, manager.config(&server).as_ref()),
                };
                match detail {
                    Some(detail) => errln!("· {server}: {} ({detail})", state.word()),
                    None => errln!("· {server}: {}", state.word()),
                }
            }
        }
    };
    let named = |request| stop::name_for_servers(&manager, request);
    let code = match stop::unless_stopped(future::or(work, events), named).await {
        Ok(code) => code,
        Err(stop) => {
            stop::tell(&stop);
            Err(stop::stopped(&stop))
        }
    };
    // Each server closed gracefully (a stdio server gets stdin's end, then SIGTERM, then
    // SIGKILL; a call in flight was cancelled with the work).
    manager.close().await;
    code
}

/// The Manager's options from the command line: `timeout` as the start-up timeout, the HTTP
/// client's flags, `--max-message-size`, `--verbose` (each line told with its server's name),
/// and for `call` the answers to elicitations and sampling. A server that fails once is
/// reported as failed: a command line's run is short.
fn options(cli: &Cli, timeout: Duration) -> Result<ManagerOptions, Failure> {
    let args: &ServerArgs = &cli.server;
    let mut base = ConnectOptions::default();
    args.http_client.apply(&mut base)?;
    let http_client = base.http_client;
    let handlers = match &cli.command {
        Command::Call {
            answer,
            answer_defaults,
            sampling_answer,
            ..
        } => answers::handlers(answers::AnswerArgs {
            answer: answer.as_deref(),
            defaults: *answer_defaults,
            sampling: sampling_answer.as_deref(),
        })?,
        _ => Default::default(),
    };
    let max = args.max_message_size;
    let verbose = args.verbose;
    let oauth = auth::for_manager(&args.sign_in);
    let factory = move |name: &str| {
        let mut o = ConnectOptions {
            http_client: http_client.clone(),
            handlers: handlers.clone(),
            oauth: oauth.clone(),
            ..ConnectOptions::default()
        };
        verbose::cap_messages(&mut o, max);
        if verbose {
            verbose::observe(&mut o, Some(name));
        }
        otlp::trace_context(&mut o, verbose, Some(name));
        o
    };
    let mut options = ManagerOptions::default();
    options.startup_timeout = timeout;
    options.restart.max_failures = Some(1);
    options.connect_options = Arc::new(factory);
    Ok(options)
}
