//! A task spawned on the connection's runtime (a handler of the host's): cancelled when its
//! handle is dropped.

/// A task on the runtime; dropping the handle cancels it (its future is dropped by the
/// runtime, at once or at its next turn).
pub(crate) struct Task(Inner);

enum Inner {
    #[cfg(feature = "smol")]
    Smol(smol::Task<()>),
    #[cfg(feature = "tokio")]
    Tokio(::tokio::task::JoinHandle<()>),
}

impl Task {
    #[cfg(feature = "smol")]
    pub(crate) fn smol(task: smol::Task<()>) -> Task {
        Task(Inner::Smol(task))
    }

    #[cfg(feature = "tokio")]
    pub(crate) fn tokio(task: ::tokio::task::JoinHandle<()>) -> Task {
        Task(Inner::Tokio(task))
    }

    /// Whether the task has ended.
    pub(crate) fn is_finished(&self) -> bool {
        match self.0 {
            #[cfg(feature = "smol")]
            Inner::Smol(ref task) => task.is_finished(),
            #[cfg(feature = "tokio")]
            Inner::Tokio(ref task) => task.is_finished(),
        }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        match self.0 {
            // A smol task is cancelled when its handle is dropped.
            #[cfg(feature = "smol")]
            Inner::Smol(_) => {}
            #[cfg(feature = "tokio")]
            Inner::Tokio(ref task) => task.abort(),
        }
    }
}
