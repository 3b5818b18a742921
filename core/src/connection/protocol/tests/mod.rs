//! The protocol layer's own tests: the client protocol against the demo server in memory, and
//! the stdio machine under it.

mod apps;
mod modern;
mod pair;
mod skills;
mod tasks;
