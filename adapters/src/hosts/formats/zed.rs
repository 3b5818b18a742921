//! Zed: `context_servers` in `settings.json`. A custom server is `command` (a string, or, in
//! older settings, an object `{path, args, env}`), `args`, `env`, or a remote `url` with
//! `headers`; `enabled` turns it off. Servers an extension provides (`"source": "extension"`)
//! only Zed can start: they are skipped with a warning. Zed expands no variables.

use super::entry::Cx;
use super::mcp_servers::{read_servers, Outcome};
use crate::hosts::error::{ConfigError, Warning};
use crate::hosts::node::{Node, Object};

pub(crate) fn read(
    cx: &mut Cx<'_>,
    root: &Node,
    only: Option<&dyn Fn(&str) -> bool>,
) -> Result<Vec<Outcome>, ConfigError> {
    let root = cx.root_object(root)?;
    read_servers(
        cx,
        root.get("context_servers"),
        "context_servers",
        only,
        None,
        &prepare,
    )
}

/// Turns a Zed entry into the common shape, or `None` for an extension's server.
fn prepare(cx: &mut Cx<'_>, name: &str, mut o: Object) -> Result<Option<Object>, ConfigError> {
    let invalid = |field: &str, expected: &str| ConfigError::Invalid {
        path: cx.path.to_owned(),
        server: name.to_owned(),
        field: field.to_owned(),
        expected: expected.to_owned(),
    };
    let source = match o.take("source") {
        None | Some(Node::Null) => None,
        Some(Node::String(s)) => Some(s),
        Some(_) => return Err(invalid("source", "\"custom\" or \"extension\"")),
    };
    let from_extension = match source.as_deref() {
        Some("extension") => true,
        Some("custom") => false,
        Some(_) => return Err(invalid("source", "\"custom\" or \"extension\"")),
        // Older settings: an extension's server carries only its `settings`.
        None => !o.contains("command") && !o.contains("url"),
    };
    if from_extension {
        cx.warnings.push(Warning::ExtensionServer {
            path: cx.path.to_owned(),
            server: name.to_owned(),
        });
        return Ok(None);
    }
    if let Some(Node::Object(mut command)) = o.get("command").cloned() {
        o.take("command");
        match command.take("path") {
            Some(path @ Node::String(_)) => o.push("command", path),
            _ => return Err(invalid("command.path", "a string")),
        }
        for key in ["args", "env"] {
            if let Some(value) = command.take(key) {
                if o.contains(key) {
                    return Err(invalid(key, "given once (in `command` or beside it)"));
                }
                o.push(key, value);
            }
        }
        for (key, value) in command.into_entries() {
            o.push(&format!("command.{key}"), value);
        }
    }
    Ok(Some(o))
}
