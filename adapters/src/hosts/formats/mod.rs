//! Each host's format: which host a file is (by its name and folder, or by its shape), and the
//! readers of the four families of formats (the `mcpServers` family, VS Code's, Zed's and
//! Codex's TOML), all reading their entries with one entry reader.
//!
//! The readers build on the file's tree ([`Node`](super::node::Node)), the hosts' dialects and
//! variables ([`vars`](super::vars)) and the loaded server ([`server`](super::server)); nothing
//! here knows where files are kept or imports the loader.

mod approvals;
mod codex;
mod detect;
mod entry;
mod mcp_servers;
mod vscode;
mod zed;

use super::error::ConfigError;
use super::node::Node;
use detect::{family, Family};

pub use codex::DEFAULT_ENV_VARS as CODEX_ENV_VARS;
pub use detect::Detection;
pub(crate) use detect::{detect, looks_like_toml};
pub(crate) use entry::Cx;
pub(crate) use mcp_servers::Outcome;

/// Reads the servers of a file of the host `cx` names, with its family's reader (`only`: the
/// servers to read, by name).
pub(crate) fn read(
    cx: &mut Cx<'_>,
    root: &Node,
    only: Option<&dyn Fn(&str) -> bool>,
) -> Result<Vec<Outcome>, ConfigError> {
    match family(cx.rules.host) {
        Family::McpServers => mcp_servers::read(cx, root, only),
        Family::VsCode => vscode::read(cx, root, only),
        Family::Zed => zed::read(cx, root, only),
        Family::Codex => codex::read(cx, root, only),
    }
}
