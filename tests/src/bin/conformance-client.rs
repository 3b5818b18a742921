//! The client that the MCP conformance suite (`@modelcontextprotocol/conformance`) launches.
//!
//! The suite runs it as `conformance-client <server URL>`: the URL is the last argument and the
//! scenario is in `MCP_CONFORMANCE_SCENARIO`. It speaks only through mcpwire's public [`Client`]
//! API, does what the scenario asks and exits 0; on any failure it prints one line on stderr and
//! exits 1.
//!
//! Scenarios (both the suite's spelling and the upstream example client's are accepted):
//! - `initialize`: the handshake, nothing more.
//! - `tools_call` / `tools-call`: list the tools, call `add_numbers` with `{a, b}`.
//! - `elicitation-sep1034-client-defaults` / `elicitation-defaults`: declare elicitation, answer
//!   every form with the schema's defaults, call `test_client_elicitation_defaults`.
//! - `sse-retry`: call `test_reconnection`; its answer comes after the stream is resumed.

use std::process::ExitCode;
use std::time::Duration;

use futures_lite::future;
use mcpwire::{CallOptions, CallToolResult, Client, ConnectOptions, Era, Handlers, ServerConfig};

/// How long one call may go unanswered; shorter than the suite's own 30 s so that a stuck call
/// ends here with a reason rather than with the suite's SIGTERM.
const CALL_TIMEOUT: Duration = Duration::from_secs(20);

/// How long closing (ending the session) may take before the process exits anyway.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    Initialize,
    ToolsCall,
    ElicitationDefaults,
    SseRetry,
}

impl Scenario {
    fn parse(name: &str) -> Option<Scenario> {
        match name {
            "initialize" => Some(Scenario::Initialize),
            "tools_call" | "tools-call" => Some(Scenario::ToolsCall),
            "elicitation-sep1034-client-defaults" | "elicitation-defaults" => {
                Some(Scenario::ElicitationDefaults)
            }
            "sse-retry" => Some(Scenario::SseRetry),
            _ => None,
        }
    }
}

fn main() -> ExitCode {
    let name = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match setup(&name).and_then(|(scenario, url)| smol::block_on(run(scenario, &url))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let e = e.replace('\n', " ");
            eprintln!("conformance-client: {name}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn setup(name: &str) -> Result<(Scenario, String), String> {
    let url = std::env::args()
        .skip(1)
        .last()
        .ok_or("usage: conformance-client <server URL> (scenario in MCP_CONFORMANCE_SCENARIO)")?;
    if name.is_empty() {
        return Err("MCP_CONFORMANCE_SCENARIO is not set".into());
    }
    let scenario = Scenario::parse(name).ok_or_else(|| format!("unknown scenario `{name}`"))?;
    Ok((scenario, url))
}

/// The era the suite asks for: `MCP_CONFORMANCE_PROTOCOL_VERSION` names the version under test
/// (2026-07-28: the stateless era; anything else, or unset as with older suites: the handshake
/// era, whose version `initialize` negotiates).
fn era() -> Era {
    match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").as_deref() {
        Ok("2026-07-28") => Era::Stateless,
        _ => Era::Handshake,
    }
}

async fn run(scenario: Scenario, url: &str) -> Result<(), String> {
    let mut options = ConnectOptions {
        era: era(),
        ..ConnectOptions::default()
    };
    if scenario == Scenario::ElicitationDefaults {
        options = options.handlers(
            Handlers::new()
                .on_elicitation(|request| async move { Ok(request.answer_with_defaults()) }),
        );
    }
    let client = mcpwire::connect_smol(&ServerConfig::http(url), options)
        .await
        .map_err(|e| e.to_string())?;
    let outcome = exercise(&client, scenario).await;
    // Close either way, but do not let a slow session end hide the outcome.
    future::or(client.close(), async {
        async_io::Timer::after(CLOSE_TIMEOUT).await;
    })
    .await;
    outcome
}

async fn exercise(client: &Client, scenario: Scenario) -> Result<(), String> {
    match scenario {
        Scenario::Initialize => Ok(()),
        Scenario::ToolsCall => {
            let tools = client.list_tools().await.map_err(|e| e.to_string())?;
            if !tools.iter().any(|t| t.name == "add_numbers") {
                let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                return Err(format!(
                    "the server lists no `add_numbers` tool (tools: {})",
                    names.join(", ")
                ));
            }
            call(client, "add_numbers", serde_json::json!({"a": 5, "b": 3}))
                .await
                .map(drop)
        }
        Scenario::ElicitationDefaults => call(
            client,
            "test_client_elicitation_defaults",
            serde_json::json!({}),
        )
        .await
        .map(drop),
        Scenario::SseRetry => call(client, "test_reconnection", serde_json::json!({}))
            .await
            .map(drop),
    }
}

/// Calls a tool; a transport or protocol failure and a tool error (`isError`) are both errors.
async fn call(
    client: &Client,
    name: &str,
    arguments: serde_json::Value,
) -> Result<CallToolResult, String> {
    let result = client
        .call_tool_with(
            name,
            arguments,
            CallOptions::default().timeout(CALL_TIMEOUT),
        )
        .await
        .map_err(|e| format!("`{name}`: {e}"))?;
    if result.is_error {
        return Err(format!("`{name}` reported an error: {}", result.text()));
    }
    Ok(result)
}
