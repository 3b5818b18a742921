//! The async [`Client`]: a handle on one connection, and every call an application makes
//! through it.
//!
//! Here live the handle itself (its life, what it tells of the connection), how one call is
//! made and waited for, the typed calls (tools, prompts, resources,
//! completion, tasks, skills) and the queues of notifications and events. The connection's
//! state and its loop are the driver's: the client imports the driver, and nothing below the
//! client (the driver, the transports, the backends, the stores) imports the client.

mod call;
mod calls;
mod handle;
mod skills;
mod streams;
mod task_handle;
mod tools;

pub use calls::CompletionRef;
pub use handle::Client;
pub use mcpwire_core::CallOptions;
pub use streams::{Events, Notifications};
pub use task_handle::{TaskHandle, TaskStart};
