//! The one future type the crate's seams return: handlers, HTTP backends, token stores and the
//! stdio pipes. A leaf: it imports nothing of the crate.

use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future, as handlers, backends and stores return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
