//! Shared helpers for mcpwire's end-to-end tests.
#![deny(missing_docs)]

use std::path::PathBuf;

/// The directory holding the project's test fixtures (captures copied from real peers).
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}
