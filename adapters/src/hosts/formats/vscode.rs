//! VS Code: `servers` and `inputs` in `.vscode/mcp.json` and the user profile's `mcp.json`
//! (or `mcp.servers` / `mcp.inputs` in `settings.json`). The entries are read like the
//! `mcpServers` family's; `${input:id}` is asked through the loader's callback.

use super::entry::Cx;
use super::mcp_servers::{read_servers, Outcome};
use crate::hosts::error::ConfigError;
use crate::hosts::node::{Node, Object};
use crate::hosts::vars::inputs::InputSpec;

pub(crate) fn read(
    cx: &mut Cx<'_>,
    root: &Node,
    only: Option<&dyn Fn(&str) -> bool>,
) -> Result<Vec<Outcome>, ConfigError> {
    let root = cx.root_object(root)?;
    // `settings.json` nests both under `mcp`.
    let (servers, inputs, prefix) = match (root.get("servers"), root.get("mcp")) {
        (None, Some(Node::Object(mcp))) => (mcp.get("servers"), mcp.get("inputs"), "mcp."),
        _ => (root.get("servers"), root.get("inputs"), ""),
    };
    let specs = parse_inputs(inputs).map_err(|expected| ConfigError::Invalid {
        path: cx.path.to_owned(),
        server: String::new(),
        field: format!("{prefix}inputs"),
        expected,
    })?;
    cx.inputs.declare(specs);
    let plain = |_: &mut Cx<'_>, _: &str, o: Object| Ok(Some(o));
    let read = read_servers(cx, servers, &format!("{prefix}servers"), only, None, &plain);
    cx.inputs.declare(Vec::new());
    read
}

/// Reads a file's `inputs` array. An entry that is not an object with a string `id` is an
/// error message (the caller names the file).
fn parse_inputs(node: Option<&Node>) -> Result<Vec<InputSpec>, String> {
    let items = match node {
        None | Some(Node::Null) => return Ok(Vec::new()),
        Some(Node::Array(items)) => items,
        Some(other) => return Err(format!("an array, not {}", other.kind())),
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let o = item
            .as_object()
            .ok_or_else(|| format!("inputs[{i}]: an object, not {}", item.kind()))?;
        let string = |key: &str| match o.get(key) {
            Some(Node::String(s)) => Some(s.clone()),
            _ => None,
        };
        let id = string("id").ok_or_else(|| format!("inputs[{i}].id: a string"))?;
        let options = match o.get("options") {
            Some(Node::Array(opts)) => opts
                .iter()
                .filter_map(|n| match n {
                    Node::String(s) => Some(s.clone()),
                    // `{label, value}` options, as VS Code also accepts.
                    Node::Object(o) => match o.get("value") {
                        Some(Node::String(s)) => Some(s.clone()),
                        _ => None,
                    },
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        out.push(InputSpec {
            id,
            kind: string("type").unwrap_or_else(|| "promptString".into()),
            description: string("description"),
            password: matches!(o.get("password"), Some(Node::Bool(true))),
            default: string("default"),
            options,
        });
    }
    Ok(out)
}
