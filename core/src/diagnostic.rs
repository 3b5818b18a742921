//! What the request engine saw and did not deliver ([`Diagnostic::Rpc`](crate::Diagnostic::Rpc)),
//! and the words its diagnostics use: matched by an embedder that acts on one kind (a late
//! response, a progress token of no call), printed as they are by most.

pub use crate::rpc::{Diagnostic as RpcDiagnostic, EndedAs, ProgressToken, Reply, ResponseFor};
