//! [`ServerConfig`]: one server as hosts already describe it, one entry of the `mcpServers` JSON.
//!
//! ```json
//! {"mcpServers": {
//!   "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
//!   "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Team": "a"}}
//! }}
//! ```
//!
//! An entry without `type`, or with `type: "stdio"`, is a child process; `type: "http"` (and
//! `"streamable-http"`) is Streamable HTTP; `type: "sse"` names servers of the older 2024-11-05
//! HTTP+SSE transport, spoken at once (no probe). Unknown members are kept, not rejected.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::server_url::{check_url, UrlError, UrlProblem};

/// One MCP server: how to reach it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ServerConfig {
    /// A server reached over HTTP (`type` is `http`, `streamable-http` or `sse`).
    Http(HttpConfig),
    /// A server run as a child process speaking over stdin and stdout.
    Stdio(StdioConfig),
}

/// Which HTTP transport: the one a `type` member names, and the one a connection speaks
/// ([`Connection::http_transport`](crate::Connection::http_transport)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum HttpKind {
    /// Streamable HTTP (2025-03-26 and later, both eras); `"http"` in a host's file.
    #[serde(rename = "http", alias = "streamableHttp", alias = "streamable-http")]
    Streamable,
    /// The 2024-11-05 HTTP+SSE transport: the URL is its event stream, spoken at once (with
    /// [`Era::Auto`](crate::Era::Auto), a plain Streamable HTTP URL finds it too, after its
    /// `initialize` is refused).
    Sse,
}

/// A child-process server. Its `Debug` shows the names of `env`, never the values.
#[derive(Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StdioConfig {
    /// `"stdio"` when present.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<StdioKind>,
    /// The program to run (looked up on `PATH`; no shell is involved).
    pub command: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment variables added to the inherited environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Which of the host's environment the server starts from (default: all of it).
    #[serde(
        default,
        rename = "inheritEnv",
        skip_serializing_if = "InheritEnv::is_all"
    )]
    pub inherit_env: InheritEnv,
    /// Variables removed from the inherited environment (VS Code's `null` values in `env`).
    #[serde(default, rename = "envRemove", skip_serializing_if = "Vec::is_empty")]
    pub env_remove: Vec<String>,
    /// The working directory; the host's when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Members this version does not know, kept as they were.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// Which variables of the host's own environment a stdio server starts with, before its
/// [`env`](StdioConfig::env) is added and its [`env_remove`](StdioConfig::env_remove) taken
/// away.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum InheritEnv {
    /// The whole environment (what most hosts give their servers).
    #[default]
    All,
    /// Only these variables, those of them that are set (Codex: its own list plus the names
    /// in `env_vars`).
    Only(Vec<String>),
}

impl InheritEnv {
    /// Whether the whole environment is inherited.
    pub fn is_all(&self) -> bool {
        matches!(self, InheritEnv::All)
    }
}

/// The only `type` a stdio entry may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StdioKind {
    /// `"stdio"`.
    Stdio,
}

/// An HTTP server. Its `Debug` shows the names of `headers`, never the values (they carry
/// credentials).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpConfig {
    /// The transport named by `type`.
    #[serde(rename = "type")]
    pub kind: HttpKind,
    /// The MCP endpoint.
    pub url: String,
    /// Headers sent with every request.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Members this version does not know, kept as they were.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// What `Debug` shows instead of an environment or header value.
const REDACTED: &str = "***";

/// The names of a map whose values must not be printed, each with [`REDACTED`].
struct Redacted<'a>(&'a BTreeMap<String, String>);

impl std::fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|k| (k, REDACTED)))
            .finish()
    }
}

/// The keys of `extra`: unknown members may hold secrets too.
struct Keys<'a>(&'a serde_json::Map<String, serde_json::Value>);

impl std::fmt::Debug for Keys<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

impl std::fmt::Debug for StdioConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioConfig")
            .field("kind", &self.kind)
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &Redacted(&self.env))
            .field("inherit_env", &self.inherit_env)
            .field("env_remove", &self.env_remove)
            .field("cwd", &self.cwd)
            .field("extra", &Keys(&self.extra))
            .finish()
    }
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("kind", &self.kind)
            .field("url", &self.url)
            .field("headers", &Redacted(&self.headers))
            .field("extra", &Keys(&self.extra))
            .finish()
    }
}

impl ServerConfig {
    /// A stdio server running `command` with `args`.
    pub fn stdio<I, S>(command: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ServerConfig::Stdio(StdioConfig {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            ..StdioConfig::default()
        })
    }

    /// A Streamable HTTP server at `url`.
    pub fn http(url: impl Into<String>) -> Self {
        ServerConfig::Http(HttpConfig {
            kind: HttpKind::Streamable,
            url: url.into(),
            headers: BTreeMap::new(),
            extra: serde_json::Map::new(),
        })
    }
}

/// Parses the `mcpServers` object of a host's configuration file, keeping the servers' names.
pub fn parse_mcp_servers(json: &str) -> serde_json::Result<BTreeMap<String, ServerConfig>> {
    #[derive(Deserialize)]
    struct File {
        #[serde(rename = "mcpServers")]
        mcp_servers: BTreeMap<String, ServerConfig>,
    }
    serde_json::from_str::<File>(json).map(|f| f.mcp_servers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_servers_json_parses_each_kind() {
        let servers = parse_mcp_servers(
            r#"{"mcpServers": {
                "a": {"command": "npx", "args": ["-y", "pkg"], "env": {"K": "v"}, "cwd": "/tmp"},
                "b": {"type": "stdio", "command": "srv", "disabled": false},
                "c": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"X": "y"}},
                "d": {"type": "sse", "url": "http://127.0.0.1:2/sse"},
                "e": {"type": "streamable-http", "url": "http://127.0.0.1:3/mcp"}
            }}"#,
        )
        .unwrap();
        let ServerConfig::Stdio(a) = &servers["a"] else {
            panic!()
        };
        assert_eq!((a.command.as_str(), a.args.len()), ("npx", 2));
        assert_eq!(a.env["K"], "v");
        assert_eq!(a.cwd.as_deref(), Some(std::path::Path::new("/tmp")));
        let ServerConfig::Stdio(b) = &servers["b"] else {
            panic!()
        };
        assert_eq!(b.kind, Some(StdioKind::Stdio));
        assert_eq!(b.extra["disabled"], false, "unknown members are kept");
        let ServerConfig::Http(c) = &servers["c"] else {
            panic!()
        };
        assert_eq!(
            (c.kind, c.headers["X"].as_str()),
            (HttpKind::Streamable, "y")
        );
        let ServerConfig::Http(d) = &servers["d"] else {
            panic!()
        };
        assert_eq!(d.kind, HttpKind::Sse);
        let ServerConfig::Http(e) = &servers["e"] else {
            panic!()
        };
        assert_eq!(e.kind, HttpKind::Streamable);
    }

    #[test]
    fn an_entry_without_command_or_url_is_an_error() {
        assert!(parse_mcp_servers(r#"{"mcpServers": {"x": {"args": []}}}"#).is_err());
        assert!(
            parse_mcp_servers(r#"{"mcpServers": {"x": {"type": "ftp", "url": "u"}}}"#).is_err()
        );
    }

    #[test]
    fn debug_shows_env_and_header_names_but_never_their_values() {
        let servers = parse_mcp_servers(
            r#"{"mcpServers": {
                "a": {"command": "srv", "env": {"API_KEY": "sk-live-1"}, "token": "t-2"},
                "b": {"type": "http", "url": "http://h/mcp", "headers": {"Authorization": "Bearer b-3"}}
            }}"#,
        )
        .unwrap();
        let text = format!("{servers:?}");
        for name in ["API_KEY", "Authorization", "token", "srv", "http://h/mcp"] {
            assert!(text.contains(name), "{name} missing from {text}");
        }
        for secret in ["sk-live-1", "t-2", "b-3"] {
            assert!(!text.contains(secret), "{secret} printed: {text}");
        }
    }

    #[test]
    fn round_trips_through_json() {
        let c = ServerConfig::stdio("mcpwire", ["serve-demo"]);
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(text, r#"{"command":"mcpwire","args":["serve-demo"]}"#);
        assert_eq!(serde_json::from_str::<ServerConfig>(&text).unwrap(), c);
        let h = ServerConfig::http("http://127.0.0.1:9/mcp");
        let text = serde_json::to_string(&h).unwrap();
        assert_eq!(serde_json::from_str::<ServerConfig>(&text).unwrap(), h);
    }
}
