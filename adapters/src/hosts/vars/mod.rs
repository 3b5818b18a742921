//! Variables in the hosts' files: each host's dialect (the forms it expands and the fields it
//! expands them in), their expansion, where their values come from (an injectable environment,
//! `envFile` files) and the inputs a user is asked for (VS Code's `${input:id}`).
//!
//! A leaf of the hosts' files: it knows the hosts and the redacted mark, and nothing of a
//! file's syntax, of errors, of formats or of places, so an error can name the form a host
//! would expand instead without a circle.

pub(crate) mod dialect;
pub(crate) mod env;
pub(crate) mod expand;
pub(crate) mod inputs;

pub use env::{Environment, ProcessEnv};
pub use inputs::{InputCallback, InputSpec};
