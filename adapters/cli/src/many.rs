//! `--config FILE` with several servers, all run by one [`Manager`]: `servers` starts them and
//! tells each one's state, era, transport and tool count; `tools` lists every server's tools
//! under their qualified names (`server__tool`); `call QUALIFIED` routes a call to the server
//! that offers the tool (`server/tool` is accepted too). A server that fails is reported with
//! its reason and the end of its stderr; the others still answer.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use futures_lite::future;
use mcpwire::config::{Loaded, Loader};
use mcpwire::manager::naming::{self, Qualified};
use mcpwire::manager::{ManagedTool, Manager, ManagerEvent, ManagerOptions, ServerState};
use mcpwire::{ConnectOptions, Direction, Era, HttpTransportKind, ServerConfig};
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
        Command::Tools { .. } | Command::Call { .. } => args.server.is_none() && several(file),
        _ => false,
    };
    if !many {
        return None;
    }
    let outcome = smol::block_on(run(cli, file));
    // stdout was lost: every server is closed; end as that asks.
    crate::out::end_if_lost();
    Some(match outcome {
        Ok(code) => ExitCode::from(code),
        Err(f) => super::finish(f, cli.command.json()),
    })
}

/// Whether `path` has more than one server to start. It is read without asking for inputs
/// (a server that needs one counts all the same); a file that cannot be read is left to the
/// single-server path to report.
fn several(path: &Path) -> bool {
    let Ok(loader) = Loader::from_process() else {
        return false;
    };
    let mut loader = loader.isolate_failures();
    loader
        .load_file(path)
        .is_ok_and(|loaded| config_file::candidates(&loaded).len() > 1)
}

/// The era `--era` pins, if it pins one.
fn pinned(era: EraArg) -> Option<Era> {
    match era {
        EraArg::Auto => None,
        EraArg::Handshake => Some(Era::Handshake),
        EraArg::Stateless => Some(Era::Stateless),
    }
}

async fn run(cli: &Cli, file: &Path) -> Result<u8, Failure> {
    let args = &cli.server;
    // `servers --server NAME` starts that server only.
    let only = match &cli.command {
        Command::Servers { .. } => args.server.as_deref(),
        _ => None,
    };
    let mut loaded = config_file::load(file, only, args.verbose)?;
    if let Some(name) = only {
        if loaded.get(name).is_none() && loaded.failed.is_empty() {
            let message = format!("{}: no server named `{name}`", file.display());
            return Err(Failure::new(exit::USAGE, message));
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
    // From here on Ctrl-C (or stdout's loss) closes every server gracefully.
    super::stop_gracefully();
    let manager = Manager::from_loaded(&loaded, options);
    let longest = loaded
        .enabled()
        .map(|s| s.settings.startup_timeout.unwrap_or(timeout))
        .max()
        .unwrap_or(timeout);
    let work = async {
        // Every server has started or failed (for `call`, as soon as the tool is found, or
        // its server failed), or the longest start-up timeout is over.
        let limit = async {
            smol::Timer::after(longest + GRACE).await;
        };
        let typed = match &cli.command {
            Command::Call { tool, .. } => Some(tool.as_str()),
            _ => None,
        };
        let settled = manager.wait_until(|states| {
            states.iter().all(|(_, s)| s.settled()) || typed.is_some_and(|t| routed(&manager, t))
        });
        future::or(settled, limit).await;
        match &cli.command {
            Command::Servers { json, .. } => servers(&manager, &loaded, *json),
            Command::Tools { name, json } => tools(&manager, &loaded, name.as_deref(), *json),
            Command::Call {
                tool,
                args: words,
                json,
                output,
                ..
            } => {
                let request = CallRequest {
                    tool,
                    args: words,
                    json: *json,
                    output: output.as_deref(),
                };
                call(&manager, &loaded, args, request, timeout).await
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
                    _ => reason(&state),
                };
                match detail {
                    Some(detail) => errln!("· {server}: {} ({detail})", state.word()),
                    None => errln!("· {server}: {}", state.word()),
                }
            }
        }
    };
    let code = match super::unless_stopped(future::or(work, events)).await {
        Ok(code) => code,
        Err(stop) => {
            super::tell_interrupted(&stop);
            Err(super::stopped(&stop))
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
    let oauth = super::auth::for_manager(&args.sign_in);
    let dim = crate::out::stderr_is_terminal();
    let factory = move |name: &str| {
        let mut o = ConnectOptions {
            http_client: http_client.clone(),
            handlers: handlers.clone(),
            oauth: oauth.clone(),
            ..ConnectOptions::default()
        };
        if let Some(max) = max {
            o.max_line = max;
            o.http.max_json_body = max;
            o.http.max_event = max;
        }
        if verbose {
            let who = name.to_owned();
            o.observer = Some(Box::new(move |d: Direction, b: &[u8]| {
                let arrow = match d {
                    Direction::Outgoing => "→",
                    Direction::Incoming => "←",
                };
                errln!("{who} {arrow} {}", String::from_utf8_lossy(b));
            }));
            let who = name.to_owned();
            o.on_stderr = Some(Arc::new(move |line: &str| {
                crate::out::errln_dim(&format!("{who}: {line}"), dim);
            }));
            let who = name.to_owned();
            o.on_http_exchange = Some(Arc::new(move |note: &mcpwire::HttpExchangeNote| {
                if let Some(line) = super::verbose::exchange_line(note) {
                    errln!("{who}: {line}");
                }
            }));
            // Each step of a stdio server's close as it is taken.
            let who = name.to_owned();
            let waits = o.shutdown;
            o.on_process_action = Some(Arc::new(move |action| {
                if let Some(line) = super::process_step(action, waits) {
                    errln!("· {who}: {line}");
                }
            }));
        }
        o
    };
    let mut options = ManagerOptions::default();
    options.startup_timeout = timeout;
    options.restart.max_failures = Some(1);
    options.connect_options = Arc::new(factory);
    Ok(options)
}

/// Why a server is not ready, when it is not: its failure (without the end of its stderr,
/// told apart), or that it is still starting.
fn reason(state: &ServerState) -> Option<String> {
    match state {
        ServerState::Failed {
            reason,
            stderr_tail,
        } => Some(without_tail(reason, stderr_tail).to_owned()),
        ServerState::Restarting { reason, .. } => Some(reason.clone()),
        ServerState::Starting { .. } => Some("still starting".into()),
        _ => None,
    }
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

/// How server `name` is reached: `stdio`, `http` (Streamable HTTP) or `sse` (2024-11-05
/// HTTP+SSE), as its connection found it when it is ready, else as configured.
fn transport(manager: &Manager, name: &str) -> &'static str {
    if let Some(client) = manager.client(name) {
        return match client.http_transport() {
            None => "stdio",
            Some(HttpTransportKind::Streamable) => "http",
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
    stderr_tail: Option<String>,
}

/// Every server's row, by name: those the Manager runs, and those the file could not give.
fn rows(manager: &Manager, loaded: &Loaded) -> Vec<Row> {
    let mut rows: Vec<Row> = manager
        .states()
        .into_iter()
        .map(|(name, state)| {
            let (era, tools) = match &state {
                ServerState::Ready { era, tools } => (era.map(|e| e.to_string()), Some(*tools)),
                _ => (None, None),
            };
            Row {
                transport: transport(manager, &name),
                state: state.word(),
                era,
                tools,
                reason: reason(&state),
                stderr_tail: stderr_tail(&state).map(str::to_owned),
                name,
            }
        })
        .collect();
    rows.extend(loaded.failed.iter().map(|e| Row {
        name: e.server().unwrap_or("?").to_owned(),
        state: "failed",
        era: None,
        transport: "-",
        tools: None,
        reason: Some(e.to_string()),
        stderr_tail: None,
    }));
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    rows
}

/// `mcpwire --config FILE servers`: each server's state, era, transport and tool count, and
/// for one that failed its reason and the end of its stderr. The states are the answer: the
/// exit code is 0 whatever they are.
fn servers(manager: &Manager, loaded: &Loaded, json: bool) -> Result<u8, Failure> {
    let rows = rows(manager, loaded);
    if json {
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
                    "stderrTail": r.stderr_tail,
                })
            })
            .collect();
        crate::out::json(&list);
        return Ok(exit::OK);
    }
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            let reason = r.reason.as_deref().unwrap_or("");
            [
                r.name.clone(),
                r.state.to_owned(),
                r.era.clone().unwrap_or_else(|| "-".into()),
                r.transport.to_owned(),
                r.tools.map_or_else(|| "-".into(), |n| n.to_string()),
                reason.lines().next().unwrap_or("").to_owned(),
            ]
        })
        .collect();
    let head = ["NAME", "STATE", "ERA", "TRANSPORT", "TOOLS", "REASON"].map(String::from);
    let mut widths = [0usize; 6];
    for row in std::iter::once(&head).chain(&cells) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |row: &[String; 6]| {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:w$}"))
            .collect();
        cells.join("  ").trim_end().to_owned()
    };
    outln!("{}", line(&head));
    let indent = " ".repeat(widths[..5].iter().map(|w| w + 2).sum());
    for (row, r) in cells.iter().zip(&rows) {
        outln!("{}", line(row));
        // The rest of a long reason, then the end of the server's stderr, under the reason.
        for more in r.reason.iter().flat_map(|t| t.lines().skip(1)) {
            outln!("{indent}{more}");
        }
        for tail in r.stderr_tail.iter().flat_map(|t| last_lines(t)) {
            outln!("{indent}stderr: {tail}");
        }
    }
    Ok(exit::OK)
}

/// Tells on stderr each server that is not ready, with its reason and the end of its stderr,
/// and each the file could not give.
fn report_failures(manager: &Manager, loaded: &Loaded) {
    for (name, state) in manager.states() {
        let Some(why) = reason(&state) else {
            continue;
        };
        errln!("mcpwire: {name} is {}: {why}", state.word());
        for line in stderr_tail(&state).map(last_lines).unwrap_or_default() {
            errln!("  {name} stderr: {line}");
        }
    }
    for e in &loaded.failed {
        errln!("mcpwire: {e}");
    }
}

/// The tools of the servers that are ready (a failed one's cached list is not offered).
fn ready_tools(manager: &Manager) -> Vec<ManagedTool> {
    manager.tools().into_iter().filter(|t| !t.stale).collect()
}

/// `mcpwire --config FILE tools [NAME]` over several servers: every ready server's tools under
/// their qualified names; the servers that failed are told on stderr. The exit code is 0 when
/// at least one server answered, else 3.
fn tools(
    manager: &Manager,
    loaded: &Loaded,
    name: Option<&str>,
    json: bool,
) -> Result<u8, Failure> {
    report_failures(manager, loaded);
    if let Some(name) = name {
        let mut found = find(manager, name)?;
        if json {
            crate::out::json(&found.tool);
        } else {
            // Shown under the name it is called by.
            found.tool.name = found.qualified;
            out!("{}", show::tool_detail(&found.tool));
        }
        return Ok(exit::OK);
    }
    let answered = manager
        .states()
        .iter()
        .any(|(_, s)| matches!(s, ServerState::Ready { .. }));
    if !answered {
        return Err(Failure::new(exit::CONNECT, "no server answered"));
    }
    let tools = ready_tools(manager);
    if json {
        let list: Vec<Value> = tools
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
        return Ok(exit::OK);
    }
    let width = |f: fn(&ManagedTool) -> &str, least: usize| {
        tools
            .iter()
            .map(|t| f(t).chars().count())
            .fold(least, usize::max)
    };
    let (w0, w1) = (width(|t| &t.qualified, 4), width(|t| &t.server, 6));
    outln!("{:w0$}  {:w1$}  DESCRIPTION", "NAME", "SERVER");
    for t in &tools {
        let description = t.tool.description.as_deref().unwrap_or("");
        let first = description.lines().next().unwrap_or("");
        let line = format!(
            "{:w0$}  {:w1$}  {}",
            t.qualified,
            t.server,
            super::inspect::truncate(first, 100)
        );
        outln!("{}", line.trim_end());
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

/// The tool a user typed (its qualified name, or `server/tool`) among the ready servers'; a
/// tool of a server that is not ready is told with that server's state and reason (exit 3),
/// an unknown name is a usage error naming the closest names.
fn find(manager: &Manager, typed: &str) -> Result<ManagedTool, Failure> {
    let all = manager.tools();
    let ready: Vec<ManagedTool> = all.iter().filter(|t| !t.stale).cloned().collect();
    if let Some(q) = naming::resolve(&qualified(&ready), typed) {
        let found = ready.iter().find(|t| t.qualified == q.qualified);
        return Ok(found.expect("resolved among them").clone());
    }
    // A tool of a server that is not ready (known from the cache, or by its server's name).
    let cached = naming::resolve(&qualified(&all), typed).map(|q| q.server.clone());
    let by_prefix = manager.states().into_iter().find_map(|(name, _)| {
        let prefixed = [format!("{name}__"), format!("{name}/")];
        prefixed
            .iter()
            .any(|p| typed.starts_with(p))
            .then_some(name)
    });
    for server in cached.into_iter().chain(by_prefix) {
        match manager.state(&server) {
            Some(ServerState::Ready { .. }) | None => {}
            Some(state) => return Err(not_ready(&server, &state)),
        }
    }
    let known: Vec<&str> = ready.iter().map(|t| t.qualified.as_str()).collect();
    // A tool's own name is matched to each server's tool of that name.
    let same: Vec<&str> = ready
        .iter()
        .filter(|t| t.tool.name == typed)
        .map(|t| t.qualified.as_str())
        .collect();
    let hint = match same.as_slice() {
        [] => args::closest(&typed.replacen('/', "__", 1), &known)
            .map(|n| format!(" (did you mean {n}?)"))
            .unwrap_or_default(),
        names => format!(" (did you mean {}?)", names.join(" or ")),
    };
    let list = args::shown_names(&known, "");
    let message = match known.is_empty() {
        true => format!("no tool named {typed}: no server lists a tool"),
        false => format!("no tool named {typed}{hint}; the servers list: {list}"),
    };
    Err(Failure::new(exit::USAGE, message))
}

/// Server `name` is not ready: its state, reason and the end of its stderr (exit 3).
fn not_ready(name: &str, state: &ServerState) -> Failure {
    let mut message = format!("{name} is {}", state.word());
    if let Some(why) = reason(state) {
        message.push_str(&format!(": {why}"));
    }
    for line in stderr_tail(state).map(last_lines).unwrap_or_default() {
        message.push_str(&format!("\n  {name} stderr: {line}"));
    }
    Failure::new(exit::CONNECT, message)
}

/// `mcpwire --config FILE call QUALIFIED k=v…`: the call goes to the server that offers the
/// tool, its arguments typed by the tool's schema and its result printed as for one server.
async fn call(
    manager: &Manager,
    loaded: &Loaded,
    args: &ServerArgs,
    request: CallRequest<'_>,
    timeout: Duration,
) -> Result<u8, Failure> {
    let found = find(manager, request.tool)?;
    let server = &found.server;
    let Some(client) = manager.client(server) else {
        let state = manager.state(server).unwrap_or(ServerState::Disabled);
        return Err(not_ready(server, &state));
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
        assert_eq!(reason(&failed).as_deref(), Some("cannot start"));
        assert_eq!(stderr_tail(&failed), Some("boom"));
        let ready = ServerState::Ready {
            era: None,
            tools: 3,
        };
        assert_eq!(reason(&ready), None);
        let message = not_ready("c", &failed).message;
        assert_eq!(message, "c is failed: cannot start\n  c stderr: boom");
        let failed = ServerState::Failed {
            reason: "handshake failed: exited; stderr: a\nboom".into(),
            stderr_tail: "a\nboom\n".into(),
        };
        let message = not_ready("c", &failed).message;
        assert_eq!(
            message,
            "c is failed: handshake failed: exited\n  c stderr: a\n  c stderr: boom"
        );
        assert_eq!(without_tail("x; stderr: other", "boom"), "x; stderr: other");
    }
}
