//! The words the request engine's diagnostics use ([`Diagnostic`](crate::Diagnostic)'s
//! `UnmatchedResponse`, `UnknownProgressToken`, …): matched by an embedder that acts on one kind
//! (a late response, a progress token of no call), printed as they are by most.

pub use crate::rpc::{EndedAs, ProgressToken, Reply, ResponseFor};
