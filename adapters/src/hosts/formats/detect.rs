//! How a file is recognised: its host from its name and folder, or from its shape, and the
//! family of formats that reads it.

use std::fmt;
use std::path::Path;

use crate::hosts::host::Host;
use crate::hosts::node::Node;

/// How the host of a file was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detection {
    /// The caller named it.
    Given,
    /// From the file's name and folder (`claude_desktop_config.json`, `.cursor/mcp.json`, …).
    FileName,
    /// From the file's shape (its top-level keys) alone.
    Shape,
}

impl fmt::Display for Detection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Detection::Given => "as asked",
            Detection::FileName => "by its name",
            Detection::Shape => "by its shape",
        })
    }
}

/// Whether the text is TOML rather than JSON: by extension, or by its first significant
/// character when the extension says nothing.
pub(crate) fn looks_like_toml(path: &Path, text: &str) -> bool {
    match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => true,
        Some("json") | Some("jsonc") => false,
        _ => {
            let first = text
                .trim_start_matches('\u{feff}')
                .lines()
                .map(str::trim_start)
                .find(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('#'));
            !matches!(first.and_then(|l| l.chars().next()), Some('{') | None)
        }
    }
}

/// The host a file belongs to, from its name and folder; `None` when the name says nothing.
pub(crate) fn host_from_name(path: &Path) -> Option<Host> {
    let file = path.file_name()?.to_str()?;
    let parent = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|p| p.to_str())
        .unwrap_or("");
    let grandparent = path
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .and_then(|p| p.to_str())
        .unwrap_or("");
    Some(match (file, parent) {
        ("claude_desktop_config.json", _) => Host::ClaudeDesktop,
        (".claude.json", _) | (".mcp.json", _) => Host::ClaudeCode,
        ("mcp.json", ".cursor") => Host::Cursor,
        ("mcp.json", ".vscode") => Host::VsCode,
        ("mcp.json", "User") if grandparent.starts_with("Code") => Host::VsCode,
        ("mcp.json", ".mcp-inspector") => Host::Inspector,
        ("mcp.json", "mcp") => Host::Generic,
        ("mcp-config.json", _) => Host::Copilot,
        ("mcp_config.json", _) => Host::Windsurf,
        ("settings.json", ".gemini") => Host::Gemini,
        ("settings.json", "zed") | ("settings.json", ".zed") | ("settings.json", "Zed") => {
            Host::Zed
        }
        ("config.toml", ".codex") => Host::Codex,
        _ => return None,
    })
}

/// The host a document's shape names; `None` when it has none of the known root keys.
pub(crate) fn host_from_shape(root: &Node, toml: bool) -> Option<Host> {
    let root = root.as_object()?;
    if toml {
        return root.contains("mcp_servers").then_some(Host::Codex);
    }
    if root.contains("context_servers") {
        Some(Host::Zed)
    } else if root.contains("mcpServers") {
        Some(Host::Generic)
    } else if root.contains("servers")
        || root.contains("inputs")
        || root
            .get("mcp")
            .and_then(Node::as_object)
            .is_some_and(|m| m.contains("servers"))
    {
        Some(Host::VsCode)
    } else {
        None
    }
}

/// The host a file is read as: its name decides within the `mcpServers` family, its shape
/// decides between families (a `.mcp.json` holding `servers` is VS Code's).
pub(crate) fn detect(path: &Path, root: &Node, toml: bool) -> Option<(Host, Detection)> {
    let by_name = host_from_name(path);
    let by_shape = host_from_shape(root, toml);
    match (by_name, by_shape) {
        (Some(Host::Codex), _) if toml => Some((Host::Codex, Detection::FileName)),
        (_, Some(Host::Codex)) => Some((Host::Codex, Detection::Shape)),
        (Some(name), Some(Host::Generic)) if family(name) == Family::McpServers => {
            Some((name, Detection::FileName))
        }
        (Some(name), Some(shape)) if family(name) == family(shape) => {
            Some((name, Detection::FileName))
        }
        (_, Some(shape)) => Some((shape, Detection::Shape)),
        // A host's settings file without servers (Gemini's, Zed's, `~/.claude.json`) is a
        // file with no servers, not a file of unknown shape.
        (Some(name), None) if !toml && name_allows_no_servers(name) => {
            Some((name, Detection::FileName))
        }
        _ => None,
    }
}

fn name_allows_no_servers(host: Host) -> bool {
    matches!(
        host,
        Host::Gemini | Host::Zed | Host::ClaudeCode | Host::VsCode
    )
}

/// The families of shapes: hosts of one family are read by the same code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    McpServers,
    VsCode,
    Zed,
    Codex,
}

pub(crate) fn family(host: Host) -> Family {
    match host {
        Host::VsCode => Family::VsCode,
        Host::Zed => Family::Zed,
        Host::Codex => Family::Codex,
        Host::ClaudeDesktop
        | Host::ClaudeCode
        | Host::Cursor
        | Host::Copilot
        | Host::Windsurf
        | Host::Gemini
        | Host::Inspector
        | Host::Generic => Family::McpServers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::node::{parse_json, parse_toml};

    fn detect_json(path: &str, text: &str) -> Option<(Host, Detection)> {
        let p = Path::new(path);
        detect(p, &parse_json(p, text).unwrap(), false)
    }

    #[test]
    fn file_names_pick_the_host_within_the_mcp_servers_family() {
        let servers = r#"{"mcpServers": {}}"#;
        for (path, host) in [
            (
                "/h/.config/Claude/claude_desktop_config.json",
                Host::ClaudeDesktop,
            ),
            ("/p/.mcp.json", Host::ClaudeCode),
            ("/h/.claude.json", Host::ClaudeCode),
            ("/p/.cursor/mcp.json", Host::Cursor),
            ("/h/.codeium/windsurf/mcp_config.json", Host::Windsurf),
            ("/h/.gemini/settings.json", Host::Gemini),
            ("/h/.copilot/mcp-config.json", Host::Copilot),
            ("/h/.mcp-inspector/mcp.json", Host::Inspector),
            ("/h/.config/mcp/mcp.json", Host::Generic),
        ] {
            assert_eq!(
                detect_json(path, servers),
                Some((host, Detection::FileName)),
                "{path}"
            );
        }
        assert_eq!(
            detect_json("/tmp/anything.json", servers),
            Some((Host::Generic, Detection::Shape))
        );
    }

    #[test]
    fn the_shape_decides_between_families() {
        assert_eq!(
            detect_json("/p/.mcp.json", r#"{"servers": {}}"#),
            Some((Host::VsCode, Detection::Shape))
        );
        assert_eq!(
            detect_json("/h/.config/zed/settings.json", r#"{"context_servers": {}}"#),
            Some((Host::Zed, Detection::FileName))
        );
        assert_eq!(
            detect_json("/x/settings.json", r#"{"context_servers": {}}"#),
            Some((Host::Zed, Detection::Shape))
        );
        assert_eq!(
            detect_json("/x/settings.json", r#"{"mcp": {"servers": {}}}"#),
            Some((Host::VsCode, Detection::Shape))
        );
        assert_eq!(detect_json("/x/other.json", r#"{"a": 1}"#), None);
        assert_eq!(
            detect_json("/h/.gemini/settings.json", r#"{"theme": "x"}"#),
            Some((Host::Gemini, Detection::FileName))
        );
        let p = Path::new("/x/servers.toml");
        let root = parse_toml(p, "[mcp_servers.a]\ncommand = \"x\"\n").unwrap();
        assert_eq!(
            detect(p, &root, true),
            Some((Host::Codex, Detection::Shape))
        );
    }

    #[test]
    fn toml_is_told_from_json_without_an_extension() {
        assert!(looks_like_toml(
            Path::new("config"),
            "# c\n[mcp_servers.a]\n"
        ));
        assert!(!looks_like_toml(
            Path::new("config"),
            "\u{feff}// c\n{\"a\": 1}"
        ));
        assert!(looks_like_toml(Path::new("x.toml"), "{"));
    }

    #[test]
    fn ids_name_each_host_once() {
        for h in Host::ALL {
            assert_eq!(Host::from_id(h.id()), Some(h));
        }
    }
}
