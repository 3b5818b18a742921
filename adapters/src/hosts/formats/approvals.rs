//! Claude Code's approvals: a server of a project's `.mcp.json` starts only once the user has
//! approved it, and any server can be disabled for one project.
//!
//! They are kept beside the servers, in the user's and the project's settings
//! (`~/.claude/settings.json`, `.claude/settings.json`, `.claude/settings.local.json`) and in
//! the project's entry of `~/.claude.json`:
//! - `enableAllProjectMcpServers: true` approves every server of the project's `.mcp.json`;
//! - `enabledMcpjsonServers` approves those named, `disabledMcpjsonServers` refuses them;
//! - `disabledMcpServers` (the project's entry of `~/.claude.json`) disables servers of any
//!   scope in that project.
//!
//! A server they leave out is loaded disabled, with [`Warning::NotApproved`]. Settings files
//! that are missing or cannot be read approve nothing.

use std::path::Path;

use super::entry::Cx;
use crate::hosts::error::Warning;
use crate::hosts::node::{parse_json, Node, Object};
use crate::hosts::server::LoadedServer;
use crate::hosts::server::Scope;

/// What a project's settings say about its servers.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Approvals {
    all_project_servers: bool,
    enabled: Vec<String>,
    refused: Vec<String>,
    disabled: Vec<String>,
}

impl Approvals {
    /// The approvals for the project `workspace` of the user whose home is `home`;
    /// `claude_json` is `~/.claude.json`'s root when it is the file being read.
    pub(crate) fn read(home: &Path, workspace: &Path, claude_json: Option<&Object>) -> Approvals {
        let mut a = Approvals::default();
        let settings = [
            home.join(".claude").join("settings.json"),
            workspace.join(".claude").join("settings.json"),
            workspace.join(".claude").join("settings.local.json"),
        ];
        for path in &settings {
            if let Some(Node::Object(o)) = read_json(path) {
                a.add(&o);
            }
        }
        let user_file = match claude_json {
            Some(root) => Some(root.clone()),
            None => match read_json(&home.join(".claude.json")) {
                Some(Node::Object(o)) => Some(o),
                _ => None,
            },
        };
        if let Some(entry) = user_file.as_ref().and_then(|r| project_entry(r, workspace)) {
            a.add(entry);
            a.disabled.extend(names(entry, "disabledMcpServers"));
        }
        a
    }

    fn add(&mut self, o: &Object) {
        if matches!(o.get("enableAllProjectMcpServers"), Some(Node::Bool(true))) {
            self.all_project_servers = true;
        }
        self.enabled.extend(names(o, "enabledMcpjsonServers"));
        self.refused.extend(names(o, "disabledMcpjsonServers"));
    }

    /// Whether a server of `scope` named `name` may start: `None` if so, else whether the
    /// user disabled it (`Some(true)`) or never approved it (`Some(false)`).
    fn refuses(&self, scope: Scope, name: &str) -> Option<bool> {
        let listed = |list: &[String]| list.iter().any(|n| n == name);
        if listed(&self.disabled) {
            return Some(true);
        }
        if scope != Scope::Project {
            return None;
        }
        if listed(&self.refused) {
            Some(true)
        } else if self.all_project_servers || listed(&self.enabled) {
            None
        } else {
            Some(false)
        }
    }

    /// Loads the servers the approvals leave out disabled, each told in a warning. A file
    /// given by path (not found in Claude Code's places) is the user's own choice: only its
    /// project's `disabledMcpServers` applies to it.
    pub(crate) fn apply<'s>(
        &self,
        cx: &mut Cx<'_>,
        servers: impl IntoIterator<Item = &'s mut LoadedServer>,
    ) {
        for server in servers {
            let scope = match server.origin.scope {
                Scope::File => Scope::User,
                s => s,
            };
            if let Some(disabled) = self.refuses(scope, &server.name) {
                if server.settings.enabled {
                    server.settings.enabled = false;
                    cx.warnings.push(Warning::NotApproved {
                        path: cx.path.to_owned(),
                        server: server.name.clone(),
                        disabled,
                    });
                }
            }
        }
    }
}

/// `~/.claude.json`'s entry for the project, keyed by its absolute path (as given, or with
/// its symbolic links resolved, as Claude Code may have written it).
pub(crate) fn project_entry<'r>(
    root: &'r Object,
    workspace: &std::path::Path,
) -> Option<&'r Object> {
    let projects = root.get("projects")?.as_object()?;
    let trim = |p: &str| p.trim_end_matches(['/', '\\']).to_owned();
    let mut keys = vec![trim(&workspace.to_string_lossy())];
    if let Ok(real) = std::fs::canonicalize(workspace) {
        keys.push(trim(&real.to_string_lossy()));
    }
    projects
        .iter()
        .find(|(k, _)| keys.contains(&trim(k)))
        .and_then(|(_, v)| v.as_object())
}

fn read_json(path: &Path) -> Option<Node> {
    let text = std::fs::read_to_string(path).ok()?;
    parse_json(path, &text).ok()
}

fn names(o: &Object, key: &str) -> Vec<String> {
    match o.get(key) {
        Some(Node::Array(items)) => items
            .iter()
            .filter_map(|n| match n {
                Node::String(s) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approvals(json: &str) -> Approvals {
        let Ok(Node::Object(o)) = parse_json(Path::new("s.json"), json) else {
            panic!("not an object: {json}");
        };
        let mut a = Approvals::default();
        a.add(&o);
        a.disabled.extend(names(&o, "disabledMcpServers"));
        a
    }

    #[test]
    fn a_project_server_needs_an_approval_and_a_refusal_or_a_disabling_wins() {
        let none = approvals("{}");
        assert_eq!(none.refuses(Scope::Project, "db"), Some(false));
        assert_eq!(
            none.refuses(Scope::User, "db"),
            None,
            "user servers need none"
        );
        let some = approvals(
            r#"{"enabledMcpjsonServers": ["db", "web"], "disabledMcpjsonServers": ["web"],
                "disabledMcpServers": ["mine"]}"#,
        );
        assert_eq!(some.refuses(Scope::Project, "db"), None);
        assert_eq!(some.refuses(Scope::Project, "web"), Some(true));
        assert_eq!(some.refuses(Scope::Project, "other"), Some(false));
        assert_eq!(some.refuses(Scope::Local, "mine"), Some(true));
        assert_eq!(some.refuses(Scope::User, "web"), None);
        let all = approvals(r#"{"enableAllProjectMcpServers": true}"#);
        assert_eq!(all.refuses(Scope::Project, "anything"), None);
    }
}
