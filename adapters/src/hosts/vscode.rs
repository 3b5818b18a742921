//! VS Code: `servers` and `inputs` in `.vscode/mcp.json` and the user profile's `mcp.json`
//! (or `mcp.servers` / `mcp.inputs` in `settings.json`). The entries are read like the
//! `mcpServers` family's; `${input:id}` is asked through the loader's callback.

use super::entry::Cx;
use super::error::ConfigError;
use super::inputs::parse_inputs;
use super::mcp_servers::{read_servers, Outcome};
use super::node::{Node, Object};

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
