//! The server side of the same engine: enough for the built-in demo server and for deterministic
//! client ↔ server tests in memory.

mod apps;
mod complete;
pub mod demo;
mod skills;

pub use apps::FORECAST_UI;
pub use demo::{DemoConfig, DemoServer};
