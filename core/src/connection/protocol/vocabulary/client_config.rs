//! The settings of one client connection.

use std::time::Duration;

use crate::connection::protocol::era::Era;
use crate::rpc::Limits;
use crate::types::{ClientCapabilities, Implementation, LATEST_HANDSHAKE_VERSION};

/// Settings of one client connection.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Who we are.
    pub client_info: Implementation,
    /// The version offered in `initialize`.
    pub protocol_version: String,
    /// What we offer: declare only what handlers exist for.
    pub capabilities: ClientCapabilities,
    /// What we can serve but declare, in the stateless era, only for a request the server
    /// refused without it (`-32021` naming it; that request is then sent once more, declaring
    /// it). A server that can do without (an elicitation it may skip, a sampling it may do
    /// itself) then asks for nothing. Empty by default. In the handshake era these are declared
    /// in `initialize` with the rest: a session's capabilities are fixed at its start.
    pub capabilities_on_demand: ClientCapabilities,
    /// How long the start may take: the era probe and the handshake together, from the start
    /// (a renewal of a lost session has this long of its own).
    pub init_timeout: Duration,
    /// Which era to speak; [`Era::Auto`] probes.
    pub era: Era,
    /// How long the `server/discover` probe may go unanswered before the server is taken for a
    /// handshake-era one (a cold `npx` can take seconds); never more than a third of
    /// `init_timeout` (in whole seconds from 3 s on), so that `initialize` always gets the rest.
    /// A start that times out names `init_timeout`, the budget as set.
    pub probe_timeout: Duration,
    /// How many `input_required` rounds one call may take.
    pub max_input_rounds: usize,
    /// Caps on what the connection holds.
    pub limits: Limits,
    /// Whether a tool the server annotates `readOnlyHint` or `idempotentHint` (in its last
    /// `tools/list`) is taken as safe to repeat, so that a call to it lost after it may have
    /// reached the server is re-issued once. Off by default: annotations are the server's
    /// word, not a guarantee.
    pub trust_tool_annotations: bool,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            client_info: Implementation::mcpwire(),
            protocol_version: LATEST_HANDSHAKE_VERSION.into(),
            capabilities: ClientCapabilities::default(),
            capabilities_on_demand: ClientCapabilities::default(),
            init_timeout: Duration::from_secs(30),
            era: Era::Auto,
            probe_timeout: Duration::from_secs(10),
            max_input_rounds: 16,
            limits: Limits::default(),
            trust_tool_annotations: false,
        }
    }
}
