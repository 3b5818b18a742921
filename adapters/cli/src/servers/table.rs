//! `mcpwire --config FILE servers`: the table of the file's servers, a row printed as each
//! server settles (with `--json`, all at the end).

use std::time::Instant;

use mcpwire::hosts::Loaded;
use mcpwire::manager::{Manager, ServerState};
use mcpwire::{HttpKind, ServerConfig};
use serde_json::{json, Value};

use super::states::{all_names, as_each_settles, details, reason, shown_target, stderr_tail};
use crate::exit_codes;
use crate::failure::Failure;
use crate::output;

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
pub(crate) async fn servers(
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
        output::json(&list);
    }
    Ok(exit_codes::OK)
}
