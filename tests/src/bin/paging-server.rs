//! A stdio MCP server (handshake era, JSONL) whose tools, prompts and resources are listed a few
//! at a time: a peer for the Manager's tests of paged lists. It exits 0 when its stdin ends.
//!
//! Options:
//! - `--tools N`, `--prompts N`, `--resources N`: how many of each (default 10 each): tools
//!   `tool-0`, `tool-1`, …, prompts `prompt-0`, …, resources `paged://0`, …
//! - `--page N`: how many items a page holds (default 3).
//! - `--fault WHAT:LIST` (`LIST` one of `tools`, `prompts`, `resources`), any number of times:
//!   - `repeat`: from its second page on, each page gives the cursor the first page gave;
//!   - `endless`: past its items, every page is empty and gives a new cursor, for ever;
//!   - `unreadable`: its second page holds an item that is not one of its kind;
//!   - `unreadable-later`: the same once the lists have grown (below).
//!
//! Every tool answers `ok`. Called with `{"grow": K}`, a tool first adds K items to each list,
//! then sends `notifications/tools/list_changed`, `…/prompts/…` and `…/resources/list_changed`.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use serde_json::{json, Value};

const LISTS: [&str; 3] = ["tools", "prompts", "resources"];

#[derive(Clone, Copy, PartialEq)]
enum Fault {
    Repeat,
    Endless,
    Unreadable,
    UnreadableLater,
}

struct Server {
    /// How many items each list holds, in the order of [`LISTS`].
    counts: [usize; 3],
    page: usize,
    faults: Vec<(Fault, usize)>,
    grown: bool,
}

impl Server {
    fn fault(&self, list: usize) -> Option<Fault> {
        self.faults
            .iter()
            .find(|(_, l)| *l == list)
            .map(|(f, _)| *f)
    }

    fn item(list: usize, n: usize) -> Value {
        match list {
            0 => json!({"name": format!("tool-{n}"), "description": format!("Tool {n}."),
                        "inputSchema": {"type": "object"}}),
            1 => json!({"name": format!("prompt-{n}"), "description": format!("Prompt {n}.")}),
            _ => json!({"uri": format!("paged://{n}"), "name": format!("resource-{n}")}),
        }
    }

    /// Not an item of its kind: a tool with a number for a name, a prompt with no name, a
    /// resource with no URI.
    fn broken(list: usize) -> Value {
        match list {
            0 => json!({"name": 7, "inputSchema": {"type": "object"}}),
            1 => json!({"description": "no name"}),
            _ => json!({"name": "no uri"}),
        }
    }

    /// The page of list `list` that starts at `cursor`.
    fn list(&self, list: usize, cursor: Option<&str>) -> Result<Value, String> {
        let start = match cursor {
            None => 0,
            Some(c) => c
                .strip_prefix('p')
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| format!("invalid cursor {c:?}"))?,
        };
        let count = self.counts[list];
        let end = (start + self.page).min(count.max(start));
        let mut items: Vec<Value> = (start..end).map(|n| Self::item(list, n)).collect();
        let fault = self.fault(list);
        let unreadable = fault == Some(Fault::Unreadable)
            || (fault == Some(Fault::UnreadableLater) && self.grown);
        if unreadable && start == self.page {
            items.push(Self::broken(list));
        }
        let mut result = json!({ LISTS[list]: items });
        let next = match fault {
            Some(Fault::Repeat) if start > 0 => Some(format!("p{}", self.page)),
            Some(Fault::Endless) => Some(format!("p{}", start + self.page)),
            _ => (end < count).then(|| format!("p{end}")),
        };
        if let Some(next) = next {
            result["nextCursor"] = json!(next);
        }
        Ok(result)
    }
}

fn main() -> ExitCode {
    let mut server = Server {
        counts: [10; 3],
        page: 3,
        faults: Vec::new(),
        grown: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_default();
        let number = value.parse::<usize>().ok();
        match (arg.as_str(), number) {
            ("--tools", Some(n)) => server.counts[0] = n,
            ("--prompts", Some(n)) => server.counts[1] = n,
            ("--resources", Some(n)) => server.counts[2] = n,
            ("--page", Some(n)) if n > 0 => server.page = n,
            ("--fault", _) => {
                let (what, list) = value.split_once(':').unwrap_or((&value, ""));
                let fault = match what {
                    "repeat" => Fault::Repeat,
                    "endless" => Fault::Endless,
                    "unreadable" => Fault::Unreadable,
                    "unreadable-later" => Fault::UnreadableLater,
                    _ => return usage(&format!("unknown fault {what:?}")),
                };
                let Some(list) = LISTS.iter().position(|l| *l == list) else {
                    return usage(&format!("unknown list {list:?}"));
                };
                server.faults.push((fault, list));
            }
            _ => return usage(&format!("bad argument {arg} {value}")),
        }
    }
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
            continue;
        };
        let params = &message["params"];
        let mut notes = Vec::new();
        let answer = match method {
            "initialize" => {
                let asked = params["protocolVersion"].as_str().unwrap_or("2025-11-25");
                let version = match asked {
                    "2024-11-05" | "2025-03-26" | "2025-06-18" | "2025-11-25" => asked,
                    _ => "2025-11-25",
                };
                Ok(json!({"protocolVersion": version,
                          "capabilities": {"tools": {"listChanged": true},
                                           "prompts": {"listChanged": true},
                                           "resources": {"listChanged": true}},
                          "serverInfo": {"name": "paging-server", "version": "1"}}))
            }
            "ping" => Ok(json!({})),
            "tools/list" | "prompts/list" | "resources/list" => {
                let list = LISTS
                    .iter()
                    .position(|l| method.starts_with(l))
                    .expect("one of the lists");
                server
                    .list(list, params["cursor"].as_str())
                    .map_err(|e| (-32602, e))
            }
            "tools/call" => {
                if let Some(k) = params["arguments"]["grow"].as_u64() {
                    for count in &mut server.counts {
                        *count += k as usize;
                    }
                    server.grown = true;
                    notes = LISTS
                        .iter()
                        .map(|l| {
                            json!({"jsonrpc": "2.0",
                                        "method": format!("notifications/{l}/list_changed")})
                        })
                        .collect();
                }
                Ok(json!({"content": [{"type": "text", "text": "ok"}]}))
            }
            _ => Err((-32601, format!("no method {method}"))),
        };
        let reply = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        for message in std::iter::once(reply).chain(notes) {
            if writeln!(out, "{message}")
                .and_then(|()| out.flush())
                .is_err()
            {
                return ExitCode::SUCCESS;
            }
        }
    }
    ExitCode::SUCCESS
}

fn usage(why: &str) -> ExitCode {
    eprintln!("paging-server: {why}");
    eprintln!(
        "usage: paging-server [--tools N] [--prompts N] [--resources N] [--page N] \
         [--fault repeat|endless|unreadable|unreadable-later:tools|prompts|resources]..."
    );
    ExitCode::from(2)
}
