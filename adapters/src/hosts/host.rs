//! The hosts whose configuration files mcpwire reads.

use std::fmt;

/// A program whose configuration file describes MCP servers; it decides the file's format and
/// how variables in it are expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Host {
    /// Claude Desktop: `claude_desktop_config.json`, `mcpServers`, stdio only, no variables.
    ClaudeDesktop,
    /// Claude Code: `.mcp.json` (project) and `~/.claude.json` (user, and per project);
    /// `${VAR}` and `${VAR:-default}`.
    ClaudeCode,
    /// Cursor: `.cursor/mcp.json`, `~/.cursor/mcp.json`; `${env:VAR}`, `${userHome}`,
    /// `${workspaceFolder}`; `envFile`.
    Cursor,
    /// VS Code: `.vscode/mcp.json` and the user profile's `mcp.json`: `servers` and `inputs`;
    /// `${input:id}`, `${env:VAR}`, `${userHome}`, `${workspaceFolder}`.
    VsCode,
    /// The portable Copilot format (`~/.copilot/mcp-config.json`, `$COPILOT_HOME`): `mcpServers`
    /// with a `tools` allow-list.
    Copilot,
    /// Windsurf: `~/.codeium/windsurf/mcp_config.json`; `serverUrl`; `${env:VAR}`, `${file:path}`.
    Windsurf,
    /// Zed: `context_servers` in `settings.json`; no variables.
    Zed,
    /// Codex: TOML `[mcp_servers.NAME]` in `config.toml`; secrets by environment variable *name*.
    Codex,
    /// Gemini CLI: `mcpServers` in `.gemini/settings.json`; `url` is SSE, `httpUrl` Streamable
    /// HTTP; `$VAR` and `${VAR}`.
    Gemini,
    /// The MCP Inspector's catalog (`~/.mcp-inspector/mcp.json`): `protocolEra`, timeouts.
    Inspector,
    /// Any other `mcpServers` file (and the neutral `$XDG_CONFIG_HOME/mcp/mcp.json`): every
    /// common key and variable form.
    Generic,
}

impl Host {
    /// Every host.
    pub const ALL: [Host; 11] = [
        Host::ClaudeCode,
        Host::Cursor,
        Host::VsCode,
        Host::Gemini,
        Host::Codex,
        Host::Zed,
        Host::ClaudeDesktop,
        Host::Windsurf,
        Host::Copilot,
        Host::Generic,
        Host::Inspector,
    ];

    /// The host's name as users know it.
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "Claude Desktop",
            Host::ClaudeCode => "Claude Code",
            Host::Cursor => "Cursor",
            Host::VsCode => "VS Code",
            Host::Copilot => "Copilot",
            Host::Windsurf => "Windsurf",
            Host::Zed => "Zed",
            Host::Codex => "Codex",
            Host::Gemini => "Gemini CLI",
            Host::Inspector => "the MCP Inspector",
            Host::Generic => "a generic mcpServers file",
        }
    }

    /// A short identifier (`claude-desktop`, `vscode`, …), as a command-line option would take.
    pub fn id(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "claude-desktop",
            Host::ClaudeCode => "claude-code",
            Host::Cursor => "cursor",
            Host::VsCode => "vscode",
            Host::Copilot => "copilot",
            Host::Windsurf => "windsurf",
            Host::Zed => "zed",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Inspector => "inspector",
            Host::Generic => "generic",
        }
    }

    /// The host with this [`id`](Host::id).
    pub fn from_id(id: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|h| h.id() == id)
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
