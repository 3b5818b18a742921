//! `--config FILE` with several servers, run by one [`Manager`]: `servers` starts them and
//! tells each one's state, era, transport and tool count; `tools` lists every server's tools
//! under their qualified names (`server__tool`); `call QUALIFIED` routes a call to the server
//! that offers the tool (`server/tool` is accepted too), and starts only that server. Each
//! server is told as it settles: one that hangs is told when its start-up timeout ends and
//! holds back none of the others. A server that fails is reported with its reason and the
//! end of its stderr; the others still answer.

use std::collections::HashSet;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::hosts::{Loaded, Loader, ToolFilter};
use mcpwire::manager::naming::{self, NamingPolicy, Qualified};
use mcpwire::manager::{ManagedTool, Manager, ManagerEvent, ManagerOptions, ServerState};
use mcpwire::{ConnectOptions, Era, HttpKind, ServerConfig};
use serde_json::{json, Value};

use super::{answers, args, config_file, exit, logs, show, Cli, Command, EraArg, Failure};
use super::{CallRequest, ServerArgs};

/// How many of the last lines of a failed server's stderr the text output shows.
const TAIL_LINES: usize = 5;

/// How long past the longest start-up timeout the servers are waited for, at most.
const GRACE: Duration = Duration::from_secs(2);

/// Runs the command through a Manager when it is one for many servers: `servers` with
/// `--config` (unless `--no-connect`), and `tools` or `call` with `--config` and no
/// `--server` when the file has several servers to start. `None`: the command is for one
/// server, or for none.
pub(super) fn main(cli: &Cli) -> Option<ExitCode> {
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
    let outcome = smol::block_on(run(cli, file, &listed));
    // stdout was lost: every server is closed; end as that asks.
    super::stop::end_if_lost();
    Some(match outcome {
        Ok(code) => ExitCode::from(code),
        Err(f) => super::finish(f, cli.command.json()),
    })
}

/// `path` read without asking for inputs, every server kept apart (one that cannot be read
/// is among the failures); `None` when the file cannot be read at all.
fn listed(path: &Path) -> Option<Loaded> {
    let mut loader = Loader::from_process().ok()?.isolate_failures();
    loader.load_file(path).ok()
}

/// Every server's name in `loaded`: those read (disabled ones too) and those that could not
/// be.
fn all_names(loaded: &Loaded) -> Vec<&str> {
    let mut names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
    names.extend(loaded.failed.iter().filter_map(|e| e.server()));
    names
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
    let hint = args::did_you_mean(server, names);
    let list = match names.is_empty() {
        true => "it has none".to_owned(),
        false => format!("its servers: {}", args::shown_names(names, "")),
    };
    Failure::new(
        exit::USAGE,
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
                Some(e) => return Err(Failure::new(exit::USAGE, e.to_string())),
                None => {
                    let message = format!("{}: no server named `{name}`", file.display());
                    return Err(Failure::new(exit::USAGE, message));
                }
            }
        }
    }
    let timeout = super::timeout(args)?;
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
    super::stop::stop_gracefully();
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
            Command::Servers { json, .. } => servers(&manager, &loaded, *json, until).await,
            Command::Tools { name: None, json } => tools(&manager, &loaded, *json, until).await,
            Command::Tools {
                name: Some(name),
                json,
            } => {
                settle(&manager, until, name).await;
                tool(&manager, &loaded, listed, name, *json)
            }
            Command::Call {
                tool,
                args: words,
                json,
                output,
                ..
            } => {
                settle(&manager, until, tool).await;
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
                call(&manager, &loaded, listed, args, request, timeout).await
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
    let named = |request| super::stop::name_for_servers(&manager, request);
    let code = match super::stop::unless_stopped(future::or(work, events), named).await {
        Ok(code) => code,
        Err(stop) => {
            super::stop::tell(&stop);
            Err(super::stop::stopped(&stop))
        }
    };
    // Each server closed gracefully (a stdio server gets stdin's end, then SIGTERM, then
    // SIGKILL; a call in flight was cancelled with the work).
    manager.close().await;
    code
}

/// Waits until every server has settled, or the tool `typed` can be routed (a ready server
/// offers it, or the server it names has failed), or `until`.
async fn settle(manager: &Manager, until: Instant, typed: &str) {
    let settled = manager
        .wait_until(|states| states.iter().all(|(_, s)| s.settled()) || routed(manager, typed));
    future::or(settled, async {
        smol::Timer::at(until).await;
    })
    .await;
}

/// Calls `each` with every server and its state as it settles (ready, failed, disabled), in
/// the order they do; at `until`, with those still starting.
async fn as_each_settles(
    manager: &Manager,
    until: Instant,
    mut each: impl FnMut(&str, &ServerState),
) {
    let mut told: HashSet<String> = HashSet::new();
    let mut limit = smol::Timer::at(until);
    loop {
        let states = manager.states();
        for (name, state) in &states {
            if state.settled() && told.insert(name.clone()) {
                each(name, state);
            }
        }
        if told.len() >= states.len() {
            return;
        }
        let told_now = &told;
        let newly = manager.wait_until(|states| {
            states
                .iter()
                .any(|(n, s)| s.settled() && !told_now.contains(n))
        });
        let late = future::or(
            async {
                newly.await;
                false
            },
            async {
                (&mut limit).await;
                true
            },
        )
        .await;
        if late {
            for (name, state) in manager.states() {
                if told.insert(name.clone()) {
                    each(&name, &state);
                }
            }
            return;
        }
    }
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
    let oauth = super::auth::for_manager(&args.sign_in);
    let factory = move |name: &str| {
        let mut o = ConnectOptions {
            http_client: http_client.clone(),
            handlers: handlers.clone(),
            oauth: oauth.clone(),
            ..ConnectOptions::default()
        };
        super::verbose::cap_messages(&mut o, max);
        if verbose {
            super::verbose::observe(&mut o, Some(name));
        }
        o
    };
    let mut options = ManagerOptions::default();
    options.startup_timeout = timeout;
    options.restart.max_failures = Some(1);
    options.connect_options = Arc::new(factory);
    Ok(options)
}

/// Why a server is not ready, when it is not: its failure (without the command line or URL it
/// may begin with, and without the end of its stderr, both told apart), or that it is still
/// starting.
fn reason(state: &ServerState, config: Option<&ServerConfig>) -> Option<String> {
    match state {
        ServerState::Failed {
            reason,
            stderr_tail,
        } => Some(without_target(without_tail(reason, stderr_tail), config)),
        ServerState::Restarting { reason, .. } => Some(without_target(reason, config)),
        ServerState::Starting { .. } => Some("still starting".into()),
        _ => None,
    }
}

/// `reason` without the command line or URL of `config` it begins with (`` `cmd args`: ``,
/// or `` cannot start `cmd args`: ``): told apart, as it may be printed.
fn without_target(reason: &str, config: Option<&ServerConfig>) -> String {
    let targets = match config {
        Some(ServerConfig::Stdio(s)) => vec![std::iter::once(s.command.as_str())
            .chain(s.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")],
        Some(ServerConfig::Http(h)) => {
            vec![h.url.clone(), mcpwire::core::error::redact_url(&h.url)]
        }
        None => Vec::new(),
    };
    for target in targets {
        if let Some(rest) = reason.strip_prefix(&format!("cannot start `{target}`: ")) {
            return format!("cannot start: {rest}");
        }
        if let Some(rest) = reason.strip_prefix(&format!("`{target}`: ")) {
            return rest.to_owned();
        }
    }
    reason.to_owned()
}

/// `reason` without the `; stderr: …` a connection error ends with, when it is the end of
/// `tail` (shown on its own).
fn without_tail<'a>(reason: &'a str, tail: &str) -> &'a str {
    let Some(last) = tail.lines().rev().find(|l| !l.trim().is_empty()) else {
        return reason;
    };
    match reason.find("; stderr: ") {
        Some(at) if reason.trim_end().ends_with(last.trim_end()) => &reason[..at],
        _ => reason,
    }
}

/// The end of a failed server's stderr, if it wrote any.
fn stderr_tail(state: &ServerState) -> Option<&str> {
    match state {
        ServerState::Failed { stderr_tail, .. } if !stderr_tail.trim().is_empty() => {
            Some(stderr_tail)
        }
        _ => None,
    }
}

/// The last `TAIL_LINES` lines of `text`.
fn last_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].to_vec()
}

/// Where server `name` runs, as it may be printed (secrets as `***`, URLs without
/// credentials), with what it is: `("command", …)` or `("url", …)`.
fn shown_target(loaded: &Loaded, name: &str) -> Option<(&'static str, String)> {
    let server = loaded.get(name)?;
    let what = match server.config {
        ServerConfig::Stdio(_) => "command",
        ServerConfig::Http(_) => "url",
    };
    Some((what, server.target()))
}

/// The lines told under a server that is not ready: where it runs (when it failed), then the
/// rest of a long reason and the end of its stderr.
fn details(state: &ServerState, reason: &str, target: Option<(&str, String)>) -> Vec<String> {
    let mut lines = Vec::new();
    if matches!(state, ServerState::Failed { .. }) {
        if let Some((what, target)) = target {
            lines.push(format!("{what}: {target}"));
        }
    }
    lines.extend(reason.lines().skip(1).map(str::to_owned));
    let tail = stderr_tail(state).map(last_lines).unwrap_or_default();
    lines.extend(tail.into_iter().map(|l| format!("stderr: {l}")));
    lines
}

/// Server `name` that is not ready, in words: `github failed: …`, `github is disabled…`,
/// with its reason's first line (`None`: it is ready).
fn status(name: &str, state: &ServerState, reason: Option<&str>) -> Option<String> {
    let first = reason.and_then(|r| r.lines().next()).unwrap_or("");
    Some(match state {
        ServerState::Ready { .. } => return None,
        ServerState::Failed { .. } => format!("{name} failed: {first}"),
        ServerState::Restarting { .. } => format!("{name} is restarting: {first}"),
        ServerState::Starting { .. } => format!("{name} is still starting"),
        ServerState::Disabled => format!(
            "{name} is disabled in the configuration (--server {name} starts it all the same)"
        ),
        other => format!("{name} is {}", other.word()),
    })
}

/// Server `name` that is not ready, told in full: its state and reason, then where it runs
/// and the end of its stderr, each line after the first indented and named.
fn not_ready_text(
    name: &str,
    state: &ServerState,
    config: Option<&ServerConfig>,
    target: Option<(&str, String)>,
) -> Option<String> {
    let why = reason(state, config);
    let mut text = status(name, state, why.as_deref())?;
    for line in details(state, why.as_deref().unwrap_or(""), target) {
        text.push_str(&format!("\n  {name} {line}"));
    }
    Some(text)
}

/// How server `name` is reached: `stdio`, `http` (Streamable HTTP) or `sse` (2024-11-05
/// HTTP+SSE), as its connection found it when it is ready, else as configured.
fn transport(manager: &Manager, name: &str) -> &'static str {
    if let Some(client) = manager.client(name) {
        return match client.http_transport() {
            None => "stdio",
            Some(HttpKind::Streamable) => "http",
            Some(_) => "sse",
        };
    }
    match manager.config(name) {
        Some(ServerConfig::Stdio(_)) => "stdio",
        Some(ServerConfig::Http(h)) if h.kind == mcpwire::core::config::HttpKind::Sse => "sse",
        Some(ServerConfig::Http(_)) => "http",
        None => "-",
    }
}

/// One server in `mcpwire servers`.
struct Row {
    name: String,
    state: &'static str,
    era: Option<String>,
    transport: &'static str,
    tools: Option<usize>,
    reason: Option<String>,
    /// Where it runs, as it may be printed, and what that is (`command`, `url`).
    target: Option<(&'static str, String)>,
    /// The lines under its reason: where it runs, the rest of the reason, its stderr's end.
    details: Vec<String>,
    stderr_tail: Option<String>,
}

/// Server `name`'s row, in `state`.
fn row(manager: &Manager, loaded: &Loaded, name: &str, state: &ServerState) -> Row {
    let (era, tools) = match state {
        ServerState::Ready { era, tools } => (era.map(|e| e.to_string()), Some(*tools)),
        _ => (None, None),
    };
    let reason = reason(state, manager.config(name).as_ref());
    let target = shown_target(loaded, name);
    Row {
        name: name.to_owned(),
        state: state.word(),
        era,
        transport: transport(manager, name),
        tools,
        details: details(state, reason.as_deref().unwrap_or(""), target.clone()),
        reason,
        target,
        stderr_tail: stderr_tail(state).map(str::to_owned),
    }
}

/// The row of a server the file could not give.
fn unread_row(e: &mcpwire::hosts::ConfigError) -> Row {
    Row {
        name: e.server().unwrap_or("?").to_owned(),
        state: "failed",
        era: None,
        transport: "-",
        tools: None,
        reason: Some(e.reason()),
        target: None,
        details: Vec::new(),
        stderr_tail: None,
    }
}

/// The table of `mcpwire servers`, its columns as wide as known before any server settles:
/// each row is printed as its server settles.
struct Table {
    widths: [usize; 5],
}

impl Table {
    const HEAD: [&'static str; 6] = ["NAME", "STATE", "ERA", "TRANSPORT", "TOOLS", "REASON"];

    fn new(names: &[&str]) -> Table {
        let name = names.iter().map(|n| n.chars().count()).fold(4, usize::max);
        // The longest state, era and transport words (`disabled`, `stateless`, `TRANSPORT`).
        Table {
            widths: [name, 8, 9, 9, 5],
        }
    }

    fn line(&self, cells: [&str; 6]) -> String {
        let mut line = String::new();
        for (cell, w) in cells.iter().zip(self.widths) {
            line.push_str(&format!("{cell:w$}  "));
        }
        line.push_str(cells[5]);
        line.trim_end().to_owned()
    }

    fn head(&self) {
        outln!("{}", self.line(Self::HEAD));
    }

    fn row(&self, r: &Row) {
        let tools = r.tools.map_or_else(|| "-".into(), |n| n.to_string());
        let reason = r.reason.as_deref().unwrap_or("");
        let cells = [
            r.name.as_str(),
            r.state,
            r.era.as_deref().unwrap_or("-"),
            r.transport,
            tools.as_str(),
            reason.lines().next().unwrap_or(""),
        ];
        outln!("{}", self.line(cells));
        let indent = " ".repeat(self.widths.iter().map(|w| w + 2).sum());
        for line in &r.details {
            outln!("{indent}{line}");
        }
    }
}

/// `mcpwire --config FILE servers`: each server's state, era, transport and tool count, and
/// for one that failed its reason, where it runs and the end of its stderr, each printed as
/// it settles (with `--json`, all at the end). The states are the answer: the exit code is
/// 0 whatever they are.
async fn servers(
    manager: &Manager,
    loaded: &Loaded,
    json: bool,
    until: Instant,
) -> Result<u8, Failure> {
    let mut names: Vec<&str> = all_names(loaded);
    let managed: Vec<String> = manager.states().into_iter().map(|(n, _)| n).collect();
    names.extend(managed.iter().map(String::as_str));
    let table = Table::new(&names);
    if !json {
        table.head();
    }
    let mut rows: Vec<Row> = Vec::new();
    // The servers the file could not give, at once.
    for e in &loaded.failed {
        let r = unread_row(e);
        if !json {
            table.row(&r);
        }
        rows.push(r);
    }
    as_each_settles(manager, until, |name, state| {
        let r = row(manager, loaded, name, state);
        if !json {
            table.row(&r);
        }
        rows.push(r);
    })
    .await;
    if json {
        rows.sort_by(|a, b| a.name.cmp(&b.name));
        let list: Vec<Value> = rows
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "state": r.state,
                    "era": r.era,
                    "transport": r.transport,
                    "tools": r.tools,
                    "reason": r.reason,
                    "target": r.target.as_ref().map(|(_, t)| t),
                    "stderrTail": r.stderr_tail,
                })
            })
            .collect();
        crate::out::json(&list);
    }
    Ok(exit::OK)
}

/// Tells on stderr that server `name` is not ready (a disabled one is not told), with its
/// reason, where it runs and the end of its stderr.
fn report(manager: &Manager, loaded: &Loaded, name: &str, state: &ServerState) {
    if matches!(state, ServerState::Disabled) {
        return;
    }
    let config = manager.config(name);
    if let Some(text) = not_ready_text(name, state, config.as_ref(), shown_target(loaded, name)) {
        errln!("mcpwire: {text}");
    }
}

/// Tells on stderr each server that is not ready, and each the file could not give.
fn report_failures(manager: &Manager, loaded: &Loaded) {
    for (name, state) in manager.states() {
        report(manager, loaded, &name, &state);
    }
    for e in &loaded.failed {
        errln!("mcpwire: {e}");
    }
}

/// The tools of the servers that are ready (a failed one's cached list is not offered).
fn ready_tools(manager: &Manager) -> Vec<ManagedTool> {
    manager.tools().into_iter().filter(|t| !t.stale).collect()
}

/// `mcpwire --config FILE tools` over several servers: each server's tools under their
/// qualified names as the server gets ready, and each that failed told on stderr as it does.
/// The exit code is 0 when at least one server answered, else 3.
async fn tools(
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
                super::show::truncate(first, 100)
            );
            outln!("{}", line.trim_end());
        }
    })
    .await;
    if !answered {
        return Err(Failure::new(exit::CONNECT, "no server answered"));
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
        crate::out::json(&list);
    } else if !headed {
        outln!("(none)");
    }
    Ok(exit::OK)
}

/// `mcpwire --config FILE tools NAME`: one tool in detail, under the name it is called by.
fn tool(
    manager: &Manager,
    loaded: &Loaded,
    listed: &Loaded,
    name: &str,
    json: bool,
) -> Result<u8, Failure> {
    report_failures(manager, loaded);
    let mut found = find(manager, loaded, listed, name)?;
    if json {
        crate::out::json(&found.tool);
    } else {
        found.tool.name = found.qualified;
        out!("{}", show::tool_detail(&found.tool));
    }
    Ok(exit::OK)
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
        .into_iter()
        .map(|t| (t.server, t.tool.name))
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
        [] => args::did_you_mean(&typed.replacen('/', "__", 1), &known),
        names => format!(" (did you mean {}?)", names.join(" or ")),
    };
    let listing: Vec<&str> = ready.iter().map(|t| t.qualified.as_str()).collect();
    let list = args::shown_names(&listing, "");
    let message = match (names.as_slice(), listing.len()) {
        ([one], 0) => format!("no tool named {typed}{hint}: {one} lists no tools"),
        ([one], 1) => format!("no tool named {typed}{hint}; {one} lists one tool: {list}"),
        ([one], n) => format!("no tool named {typed}{hint}; {one} lists {n} tools: {list}"),
        (_, 0) => format!("no tool named {typed}{hint}: no server lists a tool"),
        _ => format!("no tool named {typed}{hint}; the servers list: {list}"),
    };
    Err(Failure::new(exit::USAGE, message))
}

/// Server `name` is not ready: its state, reason, where it runs and the end of its stderr
/// (exit 3).
fn not_ready(manager: &Manager, loaded: &Loaded, name: &str, state: &ServerState) -> Failure {
    let config = manager.config(name);
    let text = not_ready_text(name, state, config.as_ref(), shown_target(loaded, name))
        .unwrap_or_else(|| format!("{name} is {}", state.word()));
    Failure::new(exit::CONNECT, text)
}

/// `mcpwire --config FILE call QUALIFIED k=v…`: the call goes to the server that offers the
/// tool, its arguments typed by the tool's schema and its result printed as for one server.
async fn call(
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
        super::set_log_level(&client, level, timeout).await;
    }
    let min_level = args.log_level.unwrap_or(logs::LogLevel::Info);
    let logs = logs::LogPrinter::new(&client, min_level, crate::out::stderr_is_terminal());
    let request = CallRequest {
        tool: &found.tool.name,
        server: Some(&found.server),
        ..request
    };
    let max_time = super::max_time(args)?;
    let work = super::call(&client, request, &logs, timeout, max_time);
    let code = future::or(work, logs.run()).await;
    logs.drain().await;
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_lines_of_a_tail() {
        assert_eq!(last_lines("a\nb"), ["a", "b"]);
        assert_eq!(last_lines("1\n2\n3\n4\n5\n6\n7"), ["3", "4", "5", "6", "7"]);
        assert!(last_lines("").is_empty());
    }

    #[test]
    fn reasons_of_states() {
        let failed = ServerState::Failed {
            reason: "cannot start".into(),
            stderr_tail: "boom".into(),
        };
        assert_eq!(reason(&failed, None).as_deref(), Some("cannot start"));
        assert_eq!(stderr_tail(&failed), Some("boom"));
        let ready = ServerState::Ready {
            era: None,
            tools: 3,
        };
        assert_eq!(reason(&ready, None), None);
        assert_eq!(
            not_ready_text("c", &failed, None, None).as_deref(),
            Some("c failed: cannot start\n  c stderr: boom")
        );
        let failed = ServerState::Failed {
            reason: "handshake failed: exited; stderr: a\nboom".into(),
            stderr_tail: "a\nboom\n".into(),
        };
        assert_eq!(
            not_ready_text("c", &failed, None, None).as_deref(),
            Some("c failed: handshake failed: exited\n  c stderr: a\n  c stderr: boom")
        );
        assert_eq!(without_tail("x; stderr: other", "boom"), "x; stderr: other");
        assert_eq!(
            not_ready_text("off", &ServerState::Disabled, None, None).as_deref(),
            Some("off is disabled in the configuration (--server off starts it all the same)")
        );
    }

    #[test]
    fn the_reason_first_and_where_it_runs_below() {
        let config = ServerConfig::stdio("run-it", ["--token", "s3cret"]);
        let failed = ServerState::Failed {
            reason: "`run-it --token s3cret`: handshake failed: connection closed".into(),
            stderr_tail: String::new(),
        };
        let shown = Some(("command", "run-it --token ***".to_owned()));
        assert_eq!(
            not_ready_text("x", &failed, Some(&config), shown.clone()).as_deref(),
            Some("x failed: handshake failed: connection closed\n  x command: run-it --token ***")
        );
        assert_eq!(
            without_target(
                "cannot start `run-it --token s3cret`: not found",
                Some(&config)
            ),
            "cannot start: not found"
        );
        // Another command line is left as it is.
        assert_eq!(
            without_target("`other`: handshake failed", Some(&config)),
            "`other`: handshake failed"
        );
        let http = ServerConfig::Http(mcpwire::core::config::HttpConfig {
            kind: mcpwire::core::config::HttpKind::Streamable,
            url: "https://u:p@h/mcp".into(),
            headers: Default::default(),
            extra: Default::default(),
        });
        assert_eq!(
            without_target("`https://u:p@h/mcp`: handshake failed: 500", Some(&http)),
            "handshake failed: 500"
        );
    }
}
