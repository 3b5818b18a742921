//! Shared helpers for mcpwire's end-to-end tests against real third-party peers.
//!
//! The peers are pinned in `tests/peers` (npm) and installed by the test command. A test that
//! needs a peer fails loudly when it is missing, unless the run opts out explicitly with
//! `MCPWIRE_SKIP_PEERS=1`, in which case the test says so on stderr and passes nothing off as
//! tested.
#![deny(missing_docs)]

use std::path::PathBuf;

use mcpwire::ServerConfig;

/// The folder with the pinned npm peers.
pub fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("peers")
}

/// Whether the run opted out of tests that need third-party peers.
pub fn peers_skipped(test: &str) -> bool {
    if std::env::var_os("MCPWIRE_SKIP_PEERS").is_some_and(|v| v == "1") {
        eprintln!("{test}: skipped because MCPWIRE_SKIP_PEERS=1");
        return true;
    }
    false
}

/// The TypeScript "everything" server over stdio (`@modelcontextprotocol/server-everything`,
/// pinned). Panics with the install command when it is missing.
pub fn everything_stdio() -> ServerConfig {
    let entry =
        peers_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.exists(),
        "server-everything is not installed at {}: run `npm ci` in tests/peers (the test command does), \
         or set MCPWIRE_SKIP_PEERS=1 to opt out",
        entry.display()
    );
    ServerConfig::stdio(
        "node",
        [entry.to_string_lossy().into_owned(), "stdio".to_string()],
    )
}

/// Our Python test server (`tests/peers/py_server.py` on the pinned `mcp` 2.3.0) over stdio.
/// Panics with the install command when the venv is missing.
pub fn python_stdio() -> ServerConfig {
    let python = peers_dir().join("pyvenv/bin/python");
    assert!(
        python.exists(),
        "the Python peer is not installed at {}: run tests/peers/install-python.sh (the test \
         command does), or set MCPWIRE_SKIP_PEERS=1 to opt out",
        python.display()
    );
    let script = peers_dir().join("py_server.py");
    ServerConfig::stdio(
        python.to_string_lossy().into_owned(),
        [script.to_string_lossy().into_owned(), "stdio".to_string()],
    )
}
