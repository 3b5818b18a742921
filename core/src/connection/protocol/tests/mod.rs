//! The protocol layer's own tests, driven through a stdio [`Connection`](crate::Connection):
//! against the demo server in memory, or against a server the test plays by hand.

mod apps;
mod held;
mod modern;
mod pair;
mod served_tasks;
mod skills;
mod stateless_edges;
mod tasks;
