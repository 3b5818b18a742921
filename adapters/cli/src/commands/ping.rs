//! `mcpwire ping`: the round trip's time to the server (the handshake era's `ping`).

use std::time::{Duration, Instant};

use mcpwire::{CallOptions, ChosenEra, Client};
use serde_json::json;

use crate::exit_codes;
use crate::failure::Failure;
use crate::output;

/// The message for a command the stateless era has no request for.
fn not_in_stateless(client: &Client, what: &str, instead: &str) -> Result<(), Failure> {
    match client.era() {
        Some(ChosenEra::Stateless) => Err(Failure::new(
            exit_codes::USAGE,
            format!("{what} does not exist in the stateless era (2026-07-28): {instead}; or use --era handshake with a server that speaks it"),
        )),
        _ => Ok(()),
    }
}

/// `mcpwire ping`: the round trip's time.
pub(crate) async fn ping(client: &Client, json: bool, timeout: Duration) -> Result<u8, Failure> {
    not_in_stateless(
        client,
        "ping",
        "every request stands on its own, so any request (mcpwire info) checks the server",
    )?;
    let started = Instant::now();
    client
        .ping_with(CallOptions::default().timeout(timeout))
        .await?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    match json {
        true => output::json(&json!({"ok": true, "ms": ms})),
        false => outln!("pong in {ms:.1} ms"),
    }
    Ok(exit_codes::OK)
}
