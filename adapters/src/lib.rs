//! mcpwire: a Model Context Protocol client.
//!
//! This crate will hold the smol-based drivers (stdio through `async-process`, Streamable HTTP
//! through `isahc`), the async `Client` and the `mcpwire` command line. Today it re-exports the
//! sans-IO core, [`mcpwire_core`], which does all protocol work.
#![deny(missing_docs)]

pub use mcpwire_core as core;
