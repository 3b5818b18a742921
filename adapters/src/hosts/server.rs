//! One server as loaded: how to reach it ([`ServerConfig`]), what the host said about running
//! it ([`ServerSettings`]) and where it came from ([`Origin`]). Printing one never shows a
//! secret.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use mcpwire_core::config::{HttpKind, ServerConfig};
use mcpwire_core::types::Tool;
use mcpwire_core::Era;

use super::host::Host;
use super::secret::{is_credential_header, Shown, REDACTED};

/// A server read from a host's configuration file.
#[derive(Clone)]
#[non_exhaustive]
pub struct LoadedServer {
    /// Its name (the key it is written under).
    pub name: String,
    /// How to reach it, with every variable expanded.
    pub config: ServerConfig,
    /// What the host says about running it, beside the transport.
    pub settings: ServerSettings,
    /// Where it was read.
    pub origin: Origin,
    /// The printable form of the fields expanded from secrets.
    pub(crate) shown: Shown,
}

/// What a host's file says about a server besides how to reach it; for a server added to a
/// [`Manager`](crate::manager::Manager) by hand, what the host says. Default: enabled, no
/// timeouts of its own (the Manager's start-up timeout, 30 s, and calls' 30 s), every tool,
/// the era left to the caller.
///
/// It is `#[non_exhaustive]`: outside this crate `ServerSettings { era, ..Default::default() }`
/// does not compile (E0639). Build one with the setters, or from the default, field by field:
///
/// ```
/// use std::time::Duration;
/// use mcpwire::hosts::ServerSettings;
/// use mcpwire::Era;
///
/// let settings = ServerSettings::default()
///     .era(Era::Handshake)
///     .tool_timeout(Duration::from_secs(120));
///
/// let mut same = ServerSettings::default();
/// same.era = Some(Era::Handshake);
/// same.tool_timeout = Some(Duration::from_secs(120));
/// assert_eq!(settings, same);
/// ```
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerSettings {
    /// Whether to start it (`enabled`, or not `disabled`; Gemini's `mcp.allowed`/`excluded`).
    pub enabled: bool,
    /// How long it may take to start (Codex `startup_timeout_sec`, the Inspector's
    /// `connectionTimeout`).
    pub startup_timeout: Option<Duration>,
    /// How long one request may take (Codex `tool_timeout_sec`, Gemini `timeout`, the
    /// Inspector's `requestTimeout`).
    pub tool_timeout: Option<Duration>,
    /// Which of its tools to use.
    pub tools: ToolFilter,
    /// Which protocol era to speak (`protocolEra`: `auto`, `legacy`, `modern`); `None` leaves
    /// the choice to the caller.
    pub era: Option<Era>,
    /// The `envFile` whose variables were added to `env` (values in `env` win).
    pub env_file: Option<PathBuf>,
    /// What the host's OAuth block says about signing in to the server (Gemini's `oauth`,
    /// Cursor's `auth`, the Inspector's `oauth`).
    pub oauth: Option<OAuthSettings>,
    /// Keys mcpwire does not know for this host, kept as written (each is also reported as a
    /// [`Warning::UnknownKey`](super::Warning::UnknownKey)). Their values are never printed.
    pub unknown: serde_json::Map<String, serde_json::Value>,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            enabled: true,
            startup_timeout: None,
            tool_timeout: None,
            tools: ToolFilter::default(),
            era: None,
            oauth: None,
            env_file: None,
            unknown: serde_json::Map::new(),
        }
    }
}

impl fmt::Debug for ServerSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerSettings")
            .field("enabled", &self.enabled)
            .field("startup_timeout", &self.startup_timeout)
            .field("tool_timeout", &self.tool_timeout)
            .field("tools", &self.tools)
            .field("era", &self.era)
            .field("oauth", &self.oauth)
            .field("env_file", &self.env_file)
            // Unknown keys may hold secrets (an OAuth client secret): names only.
            .field("unknown", &self.unknown.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ServerSettings {
    /// Sets whether to start it.
    pub fn enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// Sets how long it may take to start.
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = Some(timeout);
        self
    }

    /// Sets how long one request may take.
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = Some(timeout);
        self
    }

    /// Sets which of its tools to use.
    pub fn tools(mut self, filter: ToolFilter) -> Self {
        self.tools = filter;
        self
    }

    /// Sets the protocol era to speak.
    pub fn era(mut self, era: Era) -> Self {
        self.era = Some(era);
        self
    }
}

/// A server's OAuth client as its host's file gives it: what
/// [`OAuthOptions::use_file_settings`](crate::oauth::OAuthOptions::use_file_settings) feeds the
/// authorization. Its `Debug` never shows the secret. Default: nothing given.
///
/// `#[non_exhaustive]`: build one from the default, field by field:
///
/// ```
/// let mut oauth = mcpwire::hosts::OAuthSettings::default();
/// oauth.client_id = Some("my-client".into());
/// oauth.scopes = Some(vec!["read".into()]);
/// ```
#[derive(Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct OAuthSettings {
    /// A client registered beforehand (Gemini and the Inspector `clientId`, Cursor
    /// `CLIENT_ID`).
    pub client_id: Option<String>,
    /// Its secret, for a confidential client (`clientSecret`, `CLIENT_SECRET`).
    pub client_secret: Option<String>,
    /// The scopes to ask for (`scopes`).
    pub scopes: Option<Vec<String>>,
    /// The redirect URI the client is registered with (`redirectUri`); the authorizer must
    /// catch what comes back to it.
    pub redirect_uri: Option<String>,
}

impl fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| REDACTED),
            )
            .field("scopes", &self.scopes)
            .field("redirect_uri", &self.redirect_uri)
            .finish()
    }
}

/// Which tools of a server to use: an allow-list (Codex `enabled_tools`, Gemini
/// `includeTools`, Copilot `tools`) and a deny-list (Codex `disabled_tools`, Gemini
/// `excludeTools`) that wins over it. Default: every tool.
///
/// `#[non_exhaustive]`: build one from the default, field by field:
///
/// ```
/// let mut filter = mcpwire::hosts::ToolFilter::default();
/// filter.exclude = vec!["delete_repo".into()];
/// assert!(!filter.allows("delete_repo") && filter.allows("search"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ToolFilter {
    /// Only these, when given.
    pub include: Option<Vec<String>>,
    /// Never these.
    pub exclude: Vec<String>,
}

impl ToolFilter {
    /// Whether the tool `name` may be used.
    pub fn allows(&self, name: &str) -> bool {
        !self.exclude.iter().any(|t| t == name)
            && self
                .include
                .as_ref()
                .is_none_or(|only| only.iter().any(|t| t == name))
    }

    /// The tools of a server's list that may be used, in the list's order: what the
    /// [`Manager`](crate::manager::Manager) and the command line show of the server.
    pub fn keep(&self, mut tools: Vec<Tool>) -> Vec<Tool> {
        tools.retain(|t| self.allows(&t.name));
        tools
    }
}

/// Where a server was read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Origin {
    /// The file.
    pub path: PathBuf,
    /// The host whose format it was read in.
    pub host: Host,
    /// Which of the host's scopes the file is.
    pub scope: Scope,
}

/// Which of a host's files a server came from; a project's files take precedence over the
/// user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scope {
    /// A file given by path.
    File,
    /// The project's file (`.mcp.json`, `.cursor/mcp.json`, `.vscode/mcp.json`, …).
    Project,
    /// Claude Code's per-project entry in `~/.claude.json` (its "local" scope, which takes
    /// precedence over the project's file).
    Local,
    /// The user's file.
    User,
}

impl LoadedServer {
    /// The transport, in words.
    pub fn transport(&self) -> &'static str {
        match &self.config {
            ServerConfig::Stdio(_) => "stdio",
            ServerConfig::Http(h) if h.kind == HttpKind::Sse => "SSE (2024-11-05)",
            ServerConfig::Http(_) => "Streamable HTTP",
        }
    }

    /// Where it runs, as it may be printed: the command line for stdio, else the URL without
    /// credentials (what came from a secret as `***`).
    pub fn target(&self) -> String {
        match &self.config {
            ServerConfig::Stdio(_) => self.shown_command().unwrap_or_default(),
            ServerConfig::Http(h) => self.shown_url(&h.url),
        }
    }

    /// The field's value as it may be printed: as written when it held no secret, with `***`
    /// for what came from the environment, an input or a file otherwise.
    fn shown<'a>(&'a self, field: &str, value: &'a str) -> &'a str {
        self.shown.get(field).map_or(value, String::as_str)
    }

    /// The URL as it may be printed.
    fn shown_url(&self, url: &str) -> String {
        mcpwire_core::error::redact_url(self.shown("url", url))
    }

    /// The command line as it may be printed.
    fn shown_command(&self) -> Option<String> {
        let ServerConfig::Stdio(s) = &self.config else {
            return None;
        };
        let mut words = vec![self.shown("command", &s.command).to_owned()];
        for (i, a) in s.args.iter().enumerate() {
            words.push(self.shown(&format!("args[{i}]"), a).to_owned());
        }
        Some(words.join(" "))
    }

    /// A header's value as it may be printed.
    fn shown_header<'a>(&'a self, name: &str, value: &'a str) -> &'a str {
        if is_credential_header(name) {
            REDACTED
        } else {
            self.shown(&format!("headers.{name}"), value)
        }
    }
}

impl fmt::Debug for LoadedServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("LoadedServer");
        d.field("name", &self.name)
            .field("transport", &self.transport());
        match &self.config {
            ServerConfig::Stdio(s) => {
                d.field("command", &self.shown("command", &s.command));
                let args: Vec<&str> = s
                    .args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| self.shown(&format!("args[{i}]"), a))
                    .collect();
                d.field("args", &args);
                // Environment values are never printed, wherever they came from.
                let env: Vec<(&str, &str)> = s.env.keys().map(|k| (k.as_str(), REDACTED)).collect();
                d.field("env", &env);
                let cwd = s.cwd.as_ref().map(|c| c.to_string_lossy());
                d.field("cwd", &cwd.as_deref().map(|c| self.shown("cwd", c)));
            }
            ServerConfig::Http(h) => {
                d.field("url", &self.shown_url(&h.url));
                let headers: Vec<(&str, &str)> = h
                    .headers
                    .iter()
                    .map(|(k, v)| (k.as_str(), self.shown_header(k, v)))
                    .collect();
                d.field("headers", &headers);
            }
        }
        d.field("settings", &self.settings)
            .field("origin", &self.origin)
            .finish()
    }
}

impl fmt::Display for LoadedServer {
    /// One line: the name, the transport and the command line or URL (secrets as `***`),
    /// headers by name, and `(disabled)` when it is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} ", self.name, self.transport())?;
        match &self.config {
            ServerConfig::Stdio(_) => write!(f, "`{}`", self.shown_command().unwrap_or_default())?,
            ServerConfig::Http(h) => {
                write!(f, "{}", self.shown_url(&h.url))?;
                if !h.headers.is_empty() {
                    let headers: Vec<String> = h
                        .headers
                        .iter()
                        .map(|(k, v)| format!("{k}: {}", self.shown_header(k, v)))
                        .collect();
                    write!(f, " [{}]", headers.join(", "))?;
                }
            }
        }
        if !self.settings.enabled {
            f.write_str(" (disabled)")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deny_list_wins_over_an_allow_list() {
        let mut t = ToolFilter::default();
        assert!(t.allows("any"));
        t.include = Some(vec!["a".into(), "b".into()]);
        t.exclude = vec!["b".into()];
        assert!(t.allows("a"));
        assert!(!t.allows("b"), "exclude wins");
        assert!(!t.allows("c"), "not in the allow-list");
    }

    #[test]
    fn keep_leaves_the_allowed_tools_in_their_order() {
        let tool = |name: &str| -> Tool {
            serde_json::from_value(
                serde_json::json!({"name": name, "inputSchema": {"type": "object"}}),
            )
            .unwrap()
        };
        let t = ToolFilter {
            include: Some(vec!["c".into(), "a".into(), "b".into()]),
            exclude: vec!["b".into()],
        };
        let kept = t.keep(vec![tool("a"), tool("b"), tool("c"), tool("d")]);
        let names: Vec<&str> = kept.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "c"]);
    }
}
