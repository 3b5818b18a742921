//! `tools` and `call` over a file's several servers: every server's tools under their qualified
//! names (`server__tool`), one in detail, and a call routed to the server that offers it.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::hosts::Loaded;
use mcpwire::manager::naming::{self, NamingPolicy, Qualified};
use mcpwire::manager::{ManagedTool, Manager, ServerState};
use serde_json::{json, Value};

use super::states::{as_each_settles, not_ready, report, report_failures};
use crate::command_line::server_args::{self, ServerArgs};
use crate::commands::call::{self, arguments, CallRequest};
use crate::commands::tools::detail;
use crate::exit_codes;
use crate::failure::Failure;
use crate::output;
use crate::output::layout::truncate;
use crate::server_logs::{set_log_level, LogLevel, LogPrinter};

/// Waits until every server has settled, or the tool `typed` can be routed (a ready server
/// offers it, or the server it names has failed), or `until`.
pub(crate) async fn settle(manager: &Manager, until: Instant, typed: &str) {
    let settled = manager
        .wait_until(|states| states.iter().all(|(_, s)| s.settled()) || routed(manager, typed));
    future::or(settled, async {
        smol::Timer::at(until).await;
    })
    .await;
}

/// The tools of the servers that are ready (a failed one's cached list is not offered).
fn ready_tools(manager: &Manager) -> Vec<ManagedTool> {
    manager
        .tools()
        .iter()
        .filter(|t| !t.stale)
        .cloned()
        .collect()
}

/// `mcpwire --config FILE tools` over several servers: each server's tools under their
/// qualified names as the server gets ready, and each that failed told on stderr as it does.
/// The exit code is 0 when at least one server answered, else 3.
pub(crate) async fn tools(
    manager: &Manager,
    loaded: &Loaded,
    json: bool,
    until: Instant,
) -> Result<u8, Failure> {
    for e in &loaded.failed {
        errln!("mcpwire: {e}");
    }
    // The columns: as wide as every server's name, and every tool's name known so far (the
    // cached lists of the servers still starting); a longer name widens the rest.
    let server_width = manager
        .states()
        .iter()
        .map(|(n, _)| n.chars().count())
        .fold(6, usize::max);
    let mut name_width = manager
        .tools()
        .iter()
        .map(|t| t.qualified.chars().count())
        .fold(4, usize::max);
    let mut headed = false;
    let mut answered = false;
    as_each_settles(manager, until, |name, state| {
        if !matches!(state, ServerState::Ready { .. }) {
            report(manager, loaded, name, state);
            return;
        }
        answered = true;
        if json {
            return;
        }
        let mine: Vec<ManagedTool> = ready_tools(manager)
            .into_iter()
            .filter(|t| t.server == name)
            .collect();
        name_width = mine
            .iter()
            .map(|t| t.qualified.chars().count())
            .fold(name_width, usize::max);
        for t in &mine {
            if !headed {
                headed = true;
                let head = format!(
                    "{:name_width$}  {:server_width$}  DESCRIPTION",
                    "NAME", "SERVER"
                );
                outln!("{head}");
            }
            let description = t.tool.description.as_deref().unwrap_or("");
            let first = description.lines().next().unwrap_or("");
            let line = format!(
                "{:name_width$}  {:server_width$}  {}",
                t.qualified,
                t.server,
                truncate(first, 100)
            );
            outln!("{}", line.trim_end());
        }
    })
    .await;
    if !answered {
        return Err(Failure::new(exit_codes::CONNECT, "no server answered"));
    }
    if json {
        let list: Vec<Value> = ready_tools(manager)
            .iter()
            .map(|t| {
                json!({
                    "qualified": t.qualified,
                    "server": t.server,
                    "name": t.tool.name,
                    "description": t.tool.description,
                })
            })
            .collect();
        output::json(&list);
    } else if !headed {
        outln!("(none)");
    }
    Ok(exit_codes::OK)
}

/// `mcpwire --config FILE tools NAME`: one tool in detail, under the name it is called by.
pub(crate) fn tool(
    manager: &Manager,
    loaded: &Loaded,
    listed: &Loaded,
    name: &str,
    json: bool,
) -> Result<u8, Failure> {
    report_failures(manager, loaded);
    let found = find(manager, loaded, listed, name)?;
    if json {
        output::json(&*found.tool);
    } else {
        let mut tool = (*found.tool).clone();
        tool.name = found.qualified;
        out!("{}", detail::tool_detail(&tool));
    }
    Ok(exit_codes::OK)
}

/// Whether the tool a user typed can be routed now: a ready server offers it, or the server
/// its name begins with has failed (nothing more to wait for).
fn routed(manager: &Manager, typed: &str) -> bool {
    let names = qualified(&ready_tools(manager));
    if naming::resolve(&names, typed).is_some() {
        return true;
    }
    manager.states().iter().any(|(name, state)| {
        let named = [format!("{name}__"), format!("{name}/")];
        let ours = named.iter().any(|p| typed.starts_with(p.as_str()));
        ours && state.settled() && !matches!(state, ServerState::Ready { .. })
    })
}

/// The names the Manager's naming resolves among.
fn qualified(tools: &[ManagedTool]) -> Vec<Qualified> {
    tools
        .iter()
        .map(|t| Qualified {
            qualified: t.qualified.clone(),
            server: t.server.clone(),
            tool: t.tool.name.clone(),
        })
        .collect()
}

/// Every tool of every enabled server of the file, under its qualified name: the ready
/// servers' as listed, the others' from the cache of what they listed last (none for a
/// server never run).
fn every_tool(manager: &Manager, listed: &Loaded) -> Vec<Qualified> {
    let mut pairs: Vec<(String, String)> = manager
        .tools()
        .iter()
        .map(|t| (t.server.clone(), t.tool.name.clone()))
        .collect();
    let managed: HashSet<String> = manager.states().into_iter().map(|(n, _)| n).collect();
    for server in listed.enabled().filter(|s| !managed.contains(&s.name)) {
        let cached = manager.cached_tools(&server.config).unwrap_or_default();
        let allowed = server.settings.tools.keep(cached);
        pairs.extend(allowed.into_iter().map(|t| (server.name.clone(), t.name)));
    }
    naming::qualify(&NamingPolicy::default(), &pairs).0
}

/// The tool a user typed (its qualified name, or `server/tool`) among the ready servers'; a
/// tool of a server that is not ready is told with that server's state and reason (exit 3),
/// an unknown name is a usage error naming the closest names among every server's tools
/// (those not running from the cache).
fn find(
    manager: &Manager,
    loaded: &Loaded,
    listed: &Loaded,
    typed: &str,
) -> Result<ManagedTool, Failure> {
    let all = manager.tools();
    let ready: Vec<ManagedTool> = all.iter().filter(|t| !t.stale).cloned().collect();
    if let Some(q) = naming::resolve(&qualified(&ready), typed) {
        let found = ready.iter().find(|t| t.qualified == q.qualified);
        return Ok(found.expect("resolved among them").clone());
    }
    // A tool of a server that is not ready (known from the cache, or by its server's name).
    let cached = naming::resolve(&qualified(&all), typed).map(|q| q.server.clone());
    let servers: Vec<String> = manager.states().into_iter().map(|(n, _)| n).collect();
    let names: Vec<&str> = servers.iter().map(String::as_str).collect();
    let by_prefix = naming::server_of(&NamingPolicy::default(), &names, typed).map(str::to_owned);
    for server in cached.into_iter().chain(by_prefix) {
        match manager.state(&server) {
            Some(ServerState::Ready { .. }) | None => {}
            Some(state) => return Err(not_ready(manager, loaded, &server, &state)),
        }
    }
    let every = every_tool(manager, listed);
    let known: Vec<&str> = every.iter().map(|q| q.qualified.as_str()).collect();
    // A tool's own name is matched to each server's tool of that name.
    let same: Vec<&str> = every
        .iter()
        .filter(|q| q.tool == typed)
        .map(|q| q.qualified.as_str())
        .collect();
    let hint = match same.as_slice() {
        [] => arguments::did_you_mean(&typed.replacen('/', "__", 1), &known),
        names => format!(" (did you mean {}?)", names.join(" or ")),
    };
    let listing: Vec<&str> = ready.iter().map(|t| t.qualified.as_str()).collect();
    let list = arguments::shown_names(&listing, "");
    let message = match (names.as_slice(), listing.len()) {
        ([one], 0) => format!("no tool named {typed}{hint}: {one} lists no tools"),
        ([one], 1) => format!("no tool named {typed}{hint}; {one} lists one tool: {list}"),
        ([one], n) => format!("no tool named {typed}{hint}; {one} lists {n} tools: {list}"),
        (_, 0) => format!("no tool named {typed}{hint}: no server lists a tool"),
        _ => format!("no tool named {typed}{hint}; the servers list: {list}"),
    };
    Err(Failure::new(exit_codes::USAGE, message))
}

/// `mcpwire --config FILE call QUALIFIED k=v…`: the call goes to the server that offers the
/// tool, its arguments typed by the tool's schema and its result printed as for one server.
pub(crate) async fn call(
    manager: &Manager,
    loaded: &Loaded,
    listed: &Loaded,
    args: &ServerArgs,
    request: CallRequest<'_>,
    timeout: Duration,
) -> Result<u8, Failure> {
    let found = find(manager, loaded, listed, request.tool)?;
    let server = &found.server;
    let Some(client) = manager.client(server) else {
        let state = manager.state(server).unwrap_or(ServerState::Disabled);
        return Err(not_ready(manager, loaded, server, &state));
    };
    // The file's tool timeout for that server, unless --timeout says otherwise.
    let timeout = match loaded.get(server).and_then(|s| s.settings.tool_timeout) {
        Some(t) if args.timeout.is_none() => t,
        _ => timeout,
    };
    if let Some(level) = args.log_level {
        set_log_level(&client, level, timeout).await;
    }
    let min_level = args.log_level.unwrap_or(LogLevel::Info);
    let logs = LogPrinter::new(&client, min_level, output::stderr_is_terminal());
    let request = CallRequest {
        tool: &found.tool.name,
        server: Some(&found.server),
        ..request
    };
    let max_time = server_args::max_time(args)?;
    let work = call::call(&client, request, &logs, timeout, max_time);
    let code = future::or(work, logs.run()).await;
    logs.drain().await;
    code
}
