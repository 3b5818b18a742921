//! Codex: TOML `[mcp_servers.NAME]` tables in `config.toml`. Codex never expands variables in
//! strings; secrets come from environment variables named by `env_vars`,
//! `bearer_token_env_var` and `env_http_headers` (the last two an error here when unset).
//!
//! Codex starts a stdio server with its own short list of the environment's variables, the
//! names in `env_vars` and the server's `env`, not with its whole environment: a server read
//! here gets the same ([`InheritEnv::Only`]).

use mcpwire_core::config::{HttpKind, InheritEnv, ServerConfig};

use super::entry::{Cx, Entry};
use super::mcp_servers::{Failed, Outcome};
use crate::hosts::error::ConfigError;
use crate::hosts::node::Node;
use crate::hosts::secret::REDACTED;

/// The variables Codex passes from its own environment to every stdio server
/// (openai/codex, `codex-rs/rmcp-client/src/utils.rs`, `DEFAULT_ENV_VARS`).
#[cfg(not(windows))]
pub const DEFAULT_ENV_VARS: &[&str] = &[
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "USER",
    "__CF_USER_TEXT_ENCODING",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "TZ",
];

/// The variables Codex passes from its own environment to every stdio server on Windows
/// (openai/codex, `codex_protocol::shell_environment::WINDOWS_CORE_ENV_VARS`).
#[cfg(windows)]
pub const DEFAULT_ENV_VARS: &[&str] = &[
    "PATH",
    "PATHEXT",
    "SHELL",
    "COMSPEC",
    "SYSTEMROOT",
    "WINDIR",
    "SYSTEMDRIVE",
    "USERNAME",
    "USERDOMAIN",
    "USERPROFILE",
    "HOMEDRIVE",
    "HOMEPATH",
    "PROGRAMFILES",
    "PROGRAMFILES(X86)",
    "PROGRAMW6432",
    "PROGRAMDATA",
    "LOCALAPPDATA",
    "APPDATA",
    "TEMP",
    "TMP",
    "TMPDIR",
    "POWERSHELL",
    "PWSH",
];

pub(crate) fn read(
    cx: &mut Cx<'_>,
    root: &Node,
    only: Option<&dyn Fn(&str) -> bool>,
) -> Result<Vec<Outcome>, ConfigError> {
    let servers = match root.as_object().and_then(|r| r.get("mcp_servers")) {
        None => return Ok(Vec::new()),
        Some(Node::Object(o)) => o.clone(),
        Some(other) => {
            return Err(ConfigError::Invalid {
                path: cx.path.to_owned(),
                server: String::new(),
                field: "mcp_servers".into(),
                expected: format!("a table of servers, not {}", other.kind()),
            })
        }
    };
    let mut out = Vec::new();
    for (name, node) in servers.into_entries() {
        if only.is_some_and(|keep| !keep(&name)) {
            continue;
        }
        out.push(read_entry(cx, &name, node));
    }
    Ok(out)
}

fn read_entry(cx: &mut Cx<'_>, name: &str, node: Node) -> Outcome {
    let mut e = Entry::new(cx, name, node)?;
    e.flags()?;
    let enabled = e.settings.enabled;
    match read_fields(&mut e) {
        Ok(config) => Ok(e.finish(config)),
        Err(error) => Err(Failed::new(error, enabled)),
    }
}

fn read_fields(e: &mut Entry<'_, '_>) -> Result<ServerConfig, ConfigError> {
    let config = match (e.has("command"), e.has("url")) {
        (true, true) => {
            return Err(ConfigError::Ambiguous {
                path: e.cx.path.to_owned(),
                server: e.name.clone(),
                first: "command".into(),
                second: "url".into(),
            })
        }
        (false, false) => {
            return Err(ConfigError::NoTransport {
                path: e.cx.path.to_owned(),
                server: e.name.clone(),
                url_keys: "url".into(),
            })
        }
        (true, false) => {
            let mut stdio = e.stdio(None)?;
            let mut names: Vec<String> = DEFAULT_ENV_VARS.iter().map(|&n| n.to_owned()).collect();
            for name in e.names("env_vars")?.unwrap_or_default() {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            stdio.inherit_env = InheritEnv::Only(names);
            ServerConfig::Stdio(stdio)
        }
        // Codex speaks Streamable HTTP to a `url`.
        (false, true) => {
            let mut http = e.http_codex()?;
            if let Some(var) = e.string("bearer_token_env_var")? {
                let token =
                    e.cx.env
                        .var(&var)
                        .ok_or_else(|| e.unset("bearer_token_env_var", &var))?;
                let value = format!("Bearer {token}");
                e.check_header("bearer_token_env_var", "Authorization", &value)?;
                http.headers.insert("Authorization".into(), value);
                e.note_shown("headers.Authorization".into(), format!("Bearer {REDACTED}"));
            }
            ServerConfig::Http(http)
        }
    };
    e.settings.startup_timeout = match e.duration("startup_timeout_sec", 1, false)? {
        Some(d) => Some(d),
        None => e.duration("startup_timeout_ms", 1000, false)?,
    };
    e.settings.tool_timeout = e.duration("tool_timeout_sec", 1, false)?;
    e.settings.tools.include = e.names("enabled_tools")?;
    e.settings.tools.exclude = e.names("disabled_tools")?.unwrap_or_default();
    Ok(config)
}

impl Entry<'_, '_> {
    /// `url`, `http_headers` (literal) and `env_http_headers` (header → variable name).
    fn http_codex(&mut self) -> Result<mcpwire_core::config::HttpConfig, ConfigError> {
        let url = self.string("url")?.ok_or_else(|| self.missing("url"))?;
        self.check_url("url", &url)?;
        let mut headers = std::collections::BTreeMap::new();
        for (name, value) in self.name_map("http_headers")?.unwrap_or_default() {
            self.check_header("http_headers", &name, &value)?;
            headers.insert(name, value);
        }
        for (name, var) in self.name_map("env_http_headers")?.unwrap_or_default() {
            let field = format!("env_http_headers.{name}");
            let value = self
                .cx
                .env
                .var(&var)
                .ok_or_else(|| self.unset(&field, &var))?;
            self.check_header("env_http_headers", &name, &value)?;
            self.note_shown(format!("headers.{name}"), REDACTED.into());
            headers.insert(name, value);
        }
        Ok(mcpwire_core::config::HttpConfig {
            kind: HttpKind::Streamable,
            url,
            headers,
            extra: serde_json::Map::new(),
        })
    }
}
