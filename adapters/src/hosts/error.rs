//! What can go wrong reading a configuration file, and what is worth telling without failing.
//!
//! No message ever holds a value read from the file, the environment or an input: errors name
//! the file, the server, the field and the variable, never what they contain.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use super::host::Host;
use super::vars::dialect::rules;
use super::vars::expand;

/// Why a configuration could not be loaded (a whole file, or one server of it).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: Arc<std::io::Error>,
    },
    /// The file is not valid JSON (or JSONC) or TOML.
    #[error("{}:{line}:{column}: {message}", .path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The column, in characters, from 1.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// The file has none of the shapes of a host's configuration (`mcpServers`, `servers`,
    /// `context_servers`, `[mcp_servers]`).
    #[error("{}: no MCP servers in a shape any known host writes (mcpServers, servers, context_servers, [mcp_servers])", .path.display())]
    Unrecognised {
        /// The file.
        path: PathBuf,
    },
    /// A field has the wrong type or an unknown value.
    #[error("{}: server `{server}`: `{field}` must be {expected}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The server (empty for a key outside any server).
        server: String,
        /// The field, as a path (`env.API_KEY`, `args[2]`).
        field: String,
        /// What it must be.
        expected: String,
    },
    /// A field the server's transport needs is missing.
    #[error("{}: server `{server}`: `{field}` is missing", .path.display())]
    Missing {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The missing field.
        field: String,
    },
    /// `type` (or `transport`) names no transport mcpwire knows.
    #[error("{}: server `{server}`: unknown transport `{value}` (expected stdio, http, streamable-http or sse)", .path.display())]
    UnknownTransport {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The transport as written.
        value: String,
    },
    /// The server has neither a command to run nor a URL to reach.
    #[error("{}: server `{server}`: neither `command` nor a URL (`{url_keys}`)", .path.display())]
    NoTransport {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The keys a URL may be given under in this host's format.
        url_keys: String,
    },
    /// The server names two transports and nothing says which one is meant.
    #[error("{}: server `{server}`: both `{first}` and `{second}` are given; keep one (or set `type`)", .path.display())]
    Ambiguous {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// One key.
        first: String,
        /// The other.
        second: String,
    },
    /// `enabled` and `disabled` are both given and disagree.
    #[error("{}: server `{server}`: `enabled` and `disabled` disagree", .path.display())]
    Conflict {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
    },
    /// A variable the field refers to is not set (and has no default). Never replaced by an
    /// empty string, nor left as literal text.
    #[error("{}: server `{server}`: `{field}` refers to {variable}, which is not set", .path.display())]
    UnsetVariable {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field.
        field: String,
        /// The variable, as written (`${API_KEY}`, `${env:TOKEN}`, `$HOME`, or the name a Codex
        /// `*_env_var` key gives).
        variable: String,
    },
    /// A `${…}` expression the host does not expand, or not in this form: the host would pass
    /// it to the server as literal text. [`ConfigError::hint`] names the form it would expand.
    #[error("{}: server `{server}`: `{field}` holds {expression}, which {host} does not expand{}", .path.display(), hint_text(.expression, *.host))]
    UnsupportedVariable {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field.
        field: String,
        /// The expression (or a description of it when it does not look like a name).
        expression: String,
        /// The host whose rules apply.
        host: Host,
    },
    /// `${workspaceFolder}` is used but the loader was given no project directory.
    #[error("{}: server `{server}`: `{field}` uses ${{workspaceFolder}}, but no project directory was given", .path.display())]
    NoWorkspace {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field.
        field: String,
    },
    /// `${input:id}` is used but no input callback was given.
    #[error("{}: server `{server}`: `{field}` needs the input `{id}`, and no way to ask for it was given", .path.display())]
    InputNeeded {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field.
        field: String,
        /// The input's id.
        id: String,
    },
    /// `${input:id}` names an input the file's `inputs` does not declare.
    #[error("{}: server `{server}`: `{field}` uses the input `{id}`, which `inputs` does not declare", .path.display())]
    UnknownInput {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field.
        field: String,
        /// The input's id.
        id: String,
    },
    /// The input callback gave no value.
    #[error("{}: server `{server}`: the input `{id}` was not given: {reason}", .path.display())]
    InputFailed {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The input's id.
        id: String,
        /// What the callback said.
        reason: String,
    },
    /// A file the configuration refers to (`envFile`, `${file:…}`) could not be read.
    #[error("{}: server `{server}`: `{field}`: cannot read {}: {source}", .path.display(), .file.display())]
    Referenced {
        /// The configuration file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field.
        field: String,
        /// The file referred to.
        file: PathBuf,
        /// Why.
        source: Arc<std::io::Error>,
    },
    /// A line of an `envFile` is neither `NAME=value`, a comment nor blank.
    #[error("{}:{line}: not NAME=value (the envFile of server `{server}`)", .file.display())]
    EnvFileSyntax {
        /// The env file.
        file: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The server.
        server: String,
    },
    /// A header of an HTTP server (`headers`, Codex's `http_headers`, …) that cannot be sent:
    /// a name that is not an HTTP token, a value holding a control or non-ASCII character, or
    /// a header the HTTP client sets itself (`Content-Length`, `Transfer-Encoding`, `Host`, …;
    /// see [`mcpwire_core::header::check_configured`]). The error names the header and the
    /// offending character's kind and offset, never the value.
    #[error("{}: server `{server}`: `{field}`: {error}", .path.display())]
    Header {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field the header came from (`headers`, `http_headers`, `env_http_headers`,
        /// `bearer_token_env_var`).
        field: String,
        /// What is wrong with it, naming the header.
        error: Box<mcpwire_core::header::HeaderError>,
    },
    /// An HTTP server's URL is not `http://` or `https://` with a host (see
    /// [`mcpwire_core::config::check_url`]): `127.0.0.1:8000/mcp`, `ftp://…`, a trailing space.
    /// The error names the URL as it may be shown (a secret from a variable left out).
    #[error("{}: server `{server}`: `{field}`: {error}", .path.display())]
    Url {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field the URL came from (`url`, `serverUrl`, `httpUrl`).
        field: String,
        /// What is wrong with it, naming the URL.
        error: Box<mcpwire_core::config::UrlError>,
    },
    /// The home directory is unknown (neither `HOME` nor, on Windows, `USERPROFILE` is set).
    #[error("the home directory is unknown (HOME is not set)")]
    NoHome,
}

fn hint_text(expression: &str, host: Host) -> String {
    expand::hint(expression, rules(host).forms)
        .map(|h| format!(" ({h})"))
        .unwrap_or_default()
}

impl ConfigError {
    /// For [`ConfigError::UnsupportedVariable`], the form the host would expand instead
    /// (`write ${env:API_KEY}`), if there is one.
    pub fn hint(&self) -> Option<String> {
        match self {
            ConfigError::UnsupportedVariable {
                expression, host, ..
            } => expand::hint(expression, rules(*host).forms),
            _ => None,
        }
    }

    /// What is wrong, without the file and the server it is about when the message begins
    /// with them (`` `env.TOKEN` refers to ${TOKEN}, which is not set ``): for a place that
    /// names them already, such as a row of a server's table.
    pub fn reason(&self) -> String {
        let text = self.to_string();
        let (Some(path), Some(server)) = (self.path(), self.server()) else {
            return text;
        };
        let place = format!("{}: server `{server}`: ", path.display());
        match text.strip_prefix(&place) {
            Some(rest) => rest.to_owned(),
            None => text,
        }
    }

    /// The configuration file this error is about, if it is about one.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            ConfigError::Read { path, .. }
            | ConfigError::Syntax { path, .. }
            | ConfigError::Unrecognised { path }
            | ConfigError::Invalid { path, .. }
            | ConfigError::Missing { path, .. }
            | ConfigError::UnknownTransport { path, .. }
            | ConfigError::NoTransport { path, .. }
            | ConfigError::Ambiguous { path, .. }
            | ConfigError::Conflict { path, .. }
            | ConfigError::UnsetVariable { path, .. }
            | ConfigError::UnsupportedVariable { path, .. }
            | ConfigError::NoWorkspace { path, .. }
            | ConfigError::InputNeeded { path, .. }
            | ConfigError::UnknownInput { path, .. }
            | ConfigError::InputFailed { path, .. }
            | ConfigError::Referenced { path, .. }
            | ConfigError::Header { path, .. }
            | ConfigError::Url { path, .. } => Some(path),
            // The env file's line is named; the configuration file is not kept.
            ConfigError::EnvFileSyntax { .. } | ConfigError::NoHome => None,
        }
    }

    /// The server this error is about, if it is about one.
    pub fn server(&self) -> Option<&str> {
        match self {
            ConfigError::Invalid { server, .. }
            | ConfigError::Missing { server, .. }
            | ConfigError::UnknownTransport { server, .. }
            | ConfigError::NoTransport { server, .. }
            | ConfigError::Ambiguous { server, .. }
            | ConfigError::Conflict { server, .. }
            | ConfigError::UnsetVariable { server, .. }
            | ConfigError::UnsupportedVariable { server, .. }
            | ConfigError::NoWorkspace { server, .. }
            | ConfigError::InputNeeded { server, .. }
            | ConfigError::UnknownInput { server, .. }
            | ConfigError::InputFailed { server, .. }
            | ConfigError::Referenced { server, .. }
            | ConfigError::Header { server, .. }
            | ConfigError::Url { server, .. }
            | ConfigError::EnvFileSyntax { server, .. } => {
                Some(server).filter(|s| !s.is_empty()).map(String::as_str)
            }
            ConfigError::Read { .. }
            | ConfigError::Syntax { .. }
            | ConfigError::Unrecognised { .. }
            | ConfigError::NoHome => None,
        }
    }
}

/// Something a file holds that was read anyway, worth telling the user.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// A key mcpwire does not use for this host (a host's own setting such as Gemini's
    /// `trust`, an extension, or a typo). Kept in
    /// [`ServerSettings::unknown`](super::ServerSettings::unknown).
    UnknownKey {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The key.
        key: String,
    },
    /// A key (a server's name, usually) written twice in one object: the last one counts.
    DuplicateKey {
        /// The file.
        path: PathBuf,
        /// The key.
        key: String,
    },
    /// Text that looks like a variable, in a field the host does not expand: it reaches the
    /// server as written, as it would from the host.
    NotExpanded {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The field.
        field: String,
        /// The host whose rules apply.
        host: Host,
    },
    /// A server of the same name was already loaded from a file that takes precedence.
    Shadowed {
        /// The server.
        server: String,
        /// The file whose server is kept.
        kept: PathBuf,
        /// The file whose server is ignored.
        ignored: PathBuf,
    },
    /// An environment variable with an empty value, left out: the MCP Inspector keeps such
    /// values in its own secret store, which mcpwire does not read.
    EmptyEnv {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The variable.
        name: String,
    },
    /// A server provided by an editor extension (Zed's `"source": "extension"`), which only
    /// that editor can start.
    ExtensionServer {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
    },
    /// A server its host would not start in this project, loaded disabled: a Claude Code
    /// project server not approved (`enabledMcpjsonServers`, `enableAllProjectMcpServers`), or
    /// one the user disabled (`disabledMcpjsonServers`, `disabledMcpServers`).
    NotApproved {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// Whether the user disabled it (rather than never approved it).
        disabled: bool,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::UnknownKey { path, server, key } => write!(
                f,
                "{}: server `{server}`: `{key}` is not used by mcpwire (kept as written)",
                path.display()
            ),
            Warning::DuplicateKey { path, key } => write!(
                f,
                "{}: `{key}` is written twice; the last one counts",
                path.display()
            ),
            Warning::NotExpanded {
                path,
                server,
                field,
                host,
            } => write!(
                f,
                "{}: server `{server}`: `{field}` looks like a variable, but {host} does not expand this field; it is passed as written",
                path.display()
            ),
            Warning::Shadowed {
                server,
                kept,
                ignored,
            } => write!(
                f,
                "server `{server}` of {} is ignored: {} defines it too and takes precedence",
                ignored.display(),
                kept.display()
            ),
            Warning::EmptyEnv { path, server, name } => write!(
                f,
                "{}: server `{server}`: env `{name}` is empty (the Inspector keeps its value in its secret store); left out",
                path.display()
            ),
            Warning::ExtensionServer { path, server } => write!(
                f,
                "{}: server `{server}` comes from an editor extension; skipped",
                path.display()
            ),
            Warning::NotApproved {
                path,
                server,
                disabled: true,
            } => write!(
                f,
                "{}: server `{server}` is disabled for this project in Claude Code's settings; not started",
                path.display()
            ),
            Warning::NotApproved {
                path,
                server,
                disabled: false,
            } => write!(
                f,
                "{}: server `{server}` is not approved for this project in Claude Code's settings \
                 (enabledMcpjsonServers or enableAllProjectMcpServers); not started",
                path.display()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_without_the_file_and_the_server() {
        let e = ConfigError::UnsetVariable {
            path: PathBuf::from("mcp.json"),
            server: "github".into(),
            field: "env.TOKEN".into(),
            variable: "${TOKEN}".into(),
        };
        assert_eq!(
            e.to_string(),
            "mcp.json: server `github`: `env.TOKEN` refers to ${TOKEN}, which is not set"
        );
        assert_eq!(
            e.reason(),
            "`env.TOKEN` refers to ${TOKEN}, which is not set"
        );
        assert_eq!(e.path(), Some(std::path::Path::new("mcp.json")));
        // Nothing to take off: the message as it is.
        let e = ConfigError::Unrecognised {
            path: PathBuf::from("x.json"),
        };
        assert_eq!(e.reason(), e.to_string());
    }
}
