//! The `mcpServers` family (Claude Desktop, Claude Code, Cursor, Windsurf, Gemini CLI, the
//! portable Copilot format, the MCP Inspector, generic files), and the entry reader VS Code
//! and Zed share with it: the hosts agree on `command`/`args`/`env`/`url`/`headers` and differ
//! in the keys around them and in the variables they expand.

use mcpwire_core::config::{HttpKind, ServerConfig};

use super::approvals::{project_entry, Approvals};
use super::entry::{parse_transport, Cx, Entry, Transport};
use crate::hosts::error::{ConfigError, Warning};
use crate::hosts::host::Host;
use crate::hosts::node::{Node, Object};
use crate::hosts::server::{LoadedServer, Scope};

/// A server that could not be read, and whether it was enabled (a disabled server's error
/// does not fail a strict load).
#[derive(Debug)]
pub(crate) struct Failed {
    pub error: Box<ConfigError>,
    pub enabled: bool,
}

impl Failed {
    pub(crate) fn new(error: ConfigError, enabled: bool) -> Failed {
        Failed {
            error: Box::new(error),
            enabled,
        }
    }
}

impl From<ConfigError> for Failed {
    fn from(error: ConfigError) -> Self {
        Failed::new(error, true)
    }
}

/// Turns a host's entry into the common shape (`None`: skip it), before it is read.
pub(crate) type Prepare<'p> =
    &'p dyn Fn(&mut Cx<'_>, &str, Object) -> Result<Option<Object>, ConfigError>;

pub(crate) type Outcome = Result<LoadedServer, Failed>;

/// The keys a host's URL may be written under.
fn url_keys(host: Host) -> &'static [&'static str] {
    match host {
        Host::Windsurf => &["serverUrl", "url"],
        Host::Gemini => &["httpUrl", "url"],
        Host::Generic => &["url", "serverUrl"],
        _ => &["url"],
    }
}

/// Gemini's `mcp.allowed` / `mcp.excluded`: servers left out by name.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    allowed: Option<Vec<String>>,
    excluded: Vec<String>,
}

impl Gate {
    fn admits(&self, name: &str) -> bool {
        !self.excluded.iter().any(|n| n == name)
            && self
                .allowed
                .as_ref()
                .is_none_or(|a| a.iter().any(|n| n == name))
    }
}

/// Reads every server of an object of servers (`mcpServers`, `servers`, `context_servers`).
pub(crate) fn read_servers(
    cx: &mut Cx<'_>,
    servers: Option<&Node>,
    label: &str,
    only: Option<&dyn Fn(&str) -> bool>,
    gate: Option<&Gate>,
    prepare: Prepare<'_>,
) -> Result<Vec<Outcome>, ConfigError> {
    let servers = match servers {
        None | Some(Node::Null) => return Ok(Vec::new()),
        Some(Node::Object(o)) => o,
        Some(other) => {
            return Err(ConfigError::Invalid {
                path: cx.path.to_owned(),
                server: String::new(),
                field: label.to_owned(),
                expected: format!("an object of servers, not {}", other.kind()),
            })
        }
    };
    for key in servers.duplicates() {
        cx.warnings.push(Warning::DuplicateKey {
            path: cx.path.to_owned(),
            key: format!("{label}.{key}"),
        });
    }
    let mut out = Vec::new();
    for (name, node) in servers.iter() {
        if only.is_some_and(|keep| !keep(name)) {
            continue;
        }
        let node = match node {
            Node::Object(o) => match prepare(cx, name, o.clone()) {
                Ok(Some(o)) => Node::Object(o),
                Ok(None) => continue,
                Err(e) => {
                    out.push(Err(e.into()));
                    continue;
                }
            },
            other => other.clone(),
        };
        out.push(read_entry(cx, name, node, gate));
    }
    Ok(out)
}

/// Reads one entry of any JSON host.
pub(crate) fn read_entry(cx: &mut Cx<'_>, name: &str, node: Node, gate: Option<&Gate>) -> Outcome {
    let host = cx.rules.host;
    let mut e = Entry::new(cx, name, node)?;
    e.flags()?;
    if gate.is_some_and(|g| !g.admits(name)) {
        e.settings.enabled = false;
    }
    let enabled = e.settings.enabled;
    match read_fields(&mut e, host) {
        Ok(config) => Ok(e.finish(config)),
        Err(error) => Err(Failed::new(error, enabled)),
    }
}

fn read_fields(e: &mut Entry<'_, '_>, host: Host) -> Result<ServerConfig, ConfigError> {
    let mut written = e.string("type")?;
    if host == Host::Generic {
        for alias in ["transport", "transportType"] {
            if written.is_none() {
                written = e.string(alias)?;
            }
        }
    }
    let urls: Vec<&str> = url_keys(host)
        .iter()
        .copied()
        .filter(|k| e.has(k))
        .collect();
    if let [first, second, ..] = urls[..] {
        return Err(ambiguous(e, first, second));
    }
    let url_key = urls.first().copied();
    let transport = match written {
        Some(t) => parse_transport(&t).ok_or_else(|| ConfigError::UnknownTransport {
            path: e.cx.path.to_owned(),
            server: e.name.clone(),
            value: t,
        })?,
        None => match (e.has("command"), url_key) {
            (true, Some(k)) => return Err(ambiguous(e, "command", k)),
            (true, None) => Transport::Stdio,
            // In Gemini, `url` is the 2024-11-05 SSE transport and `httpUrl` Streamable HTTP.
            (false, Some("url")) if host == Host::Gemini => Transport::Http(HttpKind::Sse),
            (false, Some(_)) => Transport::Http(HttpKind::Streamable),
            (false, None) => {
                return Err(ConfigError::NoTransport {
                    path: e.cx.path.to_owned(),
                    server: e.name.clone(),
                    url_keys: url_keys(host).join("`, `"),
                })
            }
        },
    };
    let config = match transport {
        Transport::Stdio => {
            let env_file = matches!(
                host,
                Host::Cursor | Host::VsCode | Host::Copilot | Host::Generic
            )
            .then_some("envFile");
            let mut stdio = e.stdio(env_file)?;
            if host == Host::Inspector {
                stdio.env.retain(|name, value| {
                    let keep = !value.is_empty();
                    if !keep {
                        e.cx.warnings.push(Warning::EmptyEnv {
                            path: e.cx.path.to_owned(),
                            server: e.name.clone(),
                            name: name.clone(),
                        });
                    }
                    keep
                });
            }
            ServerConfig::Stdio(stdio)
        }
        Transport::Http(kind) => {
            let key = url_key.ok_or_else(|| e.missing(url_keys(host)[0]))?;
            ServerConfig::Http(e.http(kind, key)?)
        }
    };
    match host {
        Host::Gemini => {
            e.oauth(
                "oauth",
                ["clientId", "clientSecret", "scopes", "redirectUri"],
            )?;
            e.settings.tool_timeout = e.duration("timeout", 1000, false)?;
            e.settings.tools.include = e.names("includeTools")?;
            e.settings.tools.exclude = e.names("excludeTools")?.unwrap_or_default();
        }
        Host::Cursor => e.oauth("auth", ["CLIENT_ID", "CLIENT_SECRET", "scopes", ""])?,
        Host::Inspector => {
            e.oauth(
                "oauth",
                ["clientId", "clientSecret", "scopes", "redirectUri"],
            )?;
            e.settings.startup_timeout = e.duration("connectionTimeout", 1000, true)?;
            e.settings.tool_timeout = e.duration("requestTimeout", 1000, true)?;
        }
        Host::Copilot => {
            e.settings.tools.include = e.names("tools")?.filter(|t| !t.iter().any(|n| n == "*"));
        }
        _ => {}
    }
    // Fields of the other transport are not read: they stay as unknown keys, reported.
    Ok(config)
}

fn ambiguous(e: &Entry<'_, '_>, first: &str, second: &str) -> ConfigError {
    ConfigError::Ambiguous {
        path: e.cx.path.to_owned(),
        server: e.name.clone(),
        first: first.to_owned(),
        second: second.to_owned(),
    }
}

/// The root of an `mcpServers` file: its servers, and for Claude Code's `~/.claude.json` the
/// project's own (the "local" scope, read first: it takes precedence); for Gemini, the
/// `mcp.allowed`/`mcp.excluded` lists.
pub(crate) fn read(
    cx: &mut Cx<'_>,
    root: &Node,
    only: Option<&dyn Fn(&str) -> bool>,
) -> Result<Vec<Outcome>, ConfigError> {
    let root = cx.root_object(root)?;
    let plain = |_: &mut Cx<'_>, _: &str, o: Object| Ok(Some(o));
    let mut out = Vec::new();
    if cx.rules.host == Host::ClaudeCode {
        if let Some(local) = cx.workspace.and_then(|w| project_entry(root, w)) {
            let scope = std::mem::replace(&mut cx.scope, Scope::Local);
            let read = read_servers(
                cx,
                local.get("mcpServers"),
                "projects.mcpServers",
                only,
                None,
                &plain,
            );
            cx.scope = scope;
            out.extend(read?);
        }
    }
    let gate = (cx.rules.host == Host::Gemini).then(|| gemini_gate(root));
    out.extend(read_servers(
        cx,
        root.get("mcpServers"),
        "mcpServers",
        only,
        gate.as_ref(),
        &plain,
    )?);
    if cx.rules.host == Host::ClaudeCode {
        if let Some(workspace) = cx.workspace {
            // `~/.claude.json` is this file when its name says so; else it is read.
            let user_file = cx.path.file_name() == Some(".claude.json".as_ref());
            let approvals = Approvals::read(cx.home, workspace, user_file.then_some(root));
            approvals.apply(cx, out.iter_mut().flatten());
        }
    }
    Ok(out)
}

fn gemini_gate(root: &Object) -> Gate {
    let list = |key: &str| -> Option<Vec<String>> {
        match root.get("mcp")?.as_object()?.get(key)? {
            Node::Array(items) => Some(
                items
                    .iter()
                    .filter_map(|n| match n {
                        Node::String(s) => Some(s.clone()),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => None,
        }
    };
    Gate {
        allowed: list("allowed"),
        excluded: list("excluded").unwrap_or_default(),
    }
}
