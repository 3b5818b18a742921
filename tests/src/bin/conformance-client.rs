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
//! - `json-schema-2020-12-preservation`: list the tools, send `json_schema_2020_12_tool`'s
//!   `inputSchema` back, as listed, to `json_schema_echo`.
//! - `request-metadata`: connect (the suite refuses the first request's version; the client
//!   chooses from the versions it names and asks again).
//! - `sep-2322-client-request-state`: the `test_mrtr_*` tools, each until complete, with
//!   elicitations answered from the schema's defaults.
//! - `http-standard-headers`: list and use a tool, a resource and a prompt.
//! - `http-custom-headers`: list the tools, then make the calls `MCP_CONFORMANCE_CONTEXT` names.
//! - `http-invalid-tool-headers`: list the tools and call every tool the list kept.
//! - `json-schema-ref-no-deref`: list the tools.
//! - `sep-2640-client-no-prefetch`: list the skills (and read none of their files).
//! - `sep-2640-client-verify-{digest,size,frontmatter}`: load each listed skill, which must be
//!   rejected: its `SKILL.md` does not match the entry, so nothing more of it is read.
//! - `auth/*`: authorize as the server asks (the options from the scenario's context, see
//!   `mcpwire_tests::conformance_auth`), then list the tools and call the first.
//!
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` names the version under test: 2026-07-28 pins the
//! stateless era, anything else (or nothing) the handshake era. With
//! `MCPWIRE_CONFORMANCE_NO_VERSION=1` the client is told no version (a host meeting a server):
//! an authorization scenario then runs with the default authorization rules.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_lite::future;
use mcpwire::{
    CallOptions, CallToolResult, Client, ConnectOptions, Era, Handlers, HttpExchangeNote,
    ServerConfig, Tool,
};
use mcpwire_tests::scenario::Runtime;
use serde_json::{json, Value};

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
    SchemaPreservation,
    RequestMetadata,
    RequestState,
    StandardHeaders,
    CustomHeaders,
    InvalidToolHeaders,
    RefNoDeref,
    SkillsNoPrefetch,
    SkillsVerify,
    /// Any `auth/*` scenario: authorize as the server asks, then list and call its tool.
    Auth,
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
            "json-schema-2020-12-preservation" => Some(Scenario::SchemaPreservation),
            "request-metadata" => Some(Scenario::RequestMetadata),
            "sep-2322-client-request-state" => Some(Scenario::RequestState),
            "http-standard-headers" => Some(Scenario::StandardHeaders),
            "http-custom-headers" => Some(Scenario::CustomHeaders),
            "http-invalid-tool-headers" => Some(Scenario::InvalidToolHeaders),
            "json-schema-ref-no-deref" => Some(Scenario::RefNoDeref),
            "sep-2640-client-no-prefetch" => Some(Scenario::SkillsNoPrefetch),
            "sep-2640-client-verify-digest"
            | "sep-2640-client-verify-size"
            | "sep-2640-client-verify-frontmatter" => Some(Scenario::SkillsVerify),
            auth if mcpwire_tests::conformance_auth::is_auth(auth) => Some(Scenario::Auth),
            _ => None,
        }
    }
}

fn main() -> ExitCode {
    let name = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    // smol, or tokio when `MCPWIRE_TEST_RUNTIME=tokio` (the connection then runs on tokio: its
    // HTTP client on tokio's sockets).
    let runtime = Runtime::from_env();
    let limit = Duration::from_secs(600);
    let ran = setup(&name)
        .and_then(|(scenario, url)| runtime.run(limit, run(runtime, scenario, &url), String::new));
    match ran {
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
    match mcpwire_tests::conformance_auth::version_under_test().as_deref() {
        Some("2026-07-28") => Era::Stateless,
        _ => Era::Handshake,
    }
}

async fn run(runtime: Runtime, scenario: Scenario, url: &str) -> Result<(), String> {
    let mut options = ConnectOptions {
        era: era(),
        ..ConnectOptions::default()
    };
    if scenario == Scenario::SseRetry {
        // The scenario's server takes any GET that comes while the call is pending for the
        // call's reconnection: an optional standalone stream that happens to arrive after the
        // call's POST would be answered as one (without Last-Event-ID, a warning). The
        // scenario is about resuming the call's stream, so this client opens none.
        options.http.standalone_stream = false;
    }
    if scenario == Scenario::Auth {
        // The suite's authorization scenarios serve either era: detect it (a refused probe is
        // an authorization matter, never a sign of the era).
        options.era = Era::Auto;
        options.oauth = Some(mcpwire_tests::conformance_auth::options()?);
    }
    if matches!(
        scenario,
        Scenario::ElicitationDefaults | Scenario::RequestState
    ) {
        options = options.handlers(
            Handlers::new()
                .on_elicitation(|request| async move { Ok(request.answer_with_defaults()) }),
        );
    }
    // The elicitation scenario's server sends its request on the standalone GET stream (it is
    // related to no request of ours): the stream must be open before the call, as a host that
    // expects server requests would see to.
    let stream_open = Arc::new(AtomicBool::new(false));
    if scenario == Scenario::ElicitationDefaults {
        let open = stream_open.clone();
        options.on_http_exchange = Some(Arc::new(move |note: &HttpExchangeNote| {
            if matches!(note, HttpExchangeNote::Response { method: "GET", .. }) {
                open.store(true, Ordering::SeqCst);
            }
        }));
    }
    let client = runtime
        .connect(&ServerConfig::http(url), options)
        .await
        .map_err(|e| e.to_string())?;
    if scenario == Scenario::ElicitationDefaults && era() == Era::Handshake {
        for _ in 0..500 {
            if stream_open.load(Ordering::SeqCst) {
                break;
            }
            async_io::Timer::after(Duration::from_millis(10)).await;
        }
    }
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
        Scenario::Auth => {
            let tools = list_tools(client).await?;
            let tool = tools.first().ok_or("the server lists no tool")?;
            let arguments = example_arguments(&tool.input_schema_value());
            call(client, &tool.name.clone(), arguments)
                .await
                .map(|_| ())
        }
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
        Scenario::SchemaPreservation => {
            let tools = list_tools(client).await?;
            let focal = tool(&tools, "json_schema_2020_12_tool")?;
            let schema = focal.input_schema.clone();
            call(client, "json_schema_echo", json!({ "schema": schema }))
                .await
                .map(drop)
        }
        // Connecting is the scenario: every request it made carried the metadata.
        Scenario::RequestMetadata => Ok(()),
        Scenario::RequestState => {
            list_tools(client).await?;
            for name in [
                "test_mrtr_echo_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_state",
                "test_mrtr_no_result_type",
            ] {
                call(client, name, json!({})).await?;
            }
            Ok(())
        }
        Scenario::StandardHeaders => {
            let tools = list_tools(client).await?;
            for t in &tools {
                call(client, &t.name, json!({})).await?;
            }
            let resources = client.list_resources().await.map_err(|e| e.to_string())?;
            if let Some(r) = resources.first() {
                client
                    .read_resource(&r.uri)
                    .await
                    .map_err(|e| format!("read {}: {e}", r.uri))?;
            }
            let prompts = client.list_prompts().await.map_err(|e| e.to_string())?;
            if let Some(p) = prompts.first() {
                client
                    .get_prompt(&p.name, None)
                    .await
                    .map_err(|e| format!("prompt {}: {e}", p.name))?;
            }
            Ok(())
        }
        Scenario::CustomHeaders => {
            list_tools(client).await?;
            for (name, arguments) in context_tool_calls()? {
                call(client, &name, arguments).await?;
            }
            Ok(())
        }
        Scenario::InvalidToolHeaders => {
            // The list keeps only the tools whose x-mcp-header marks are valid.
            for t in list_tools(client).await? {
                let arguments = example_arguments(&t.input_schema_value());
                call(client, &t.name, arguments).await?;
            }
            Ok(())
        }
        Scenario::RefNoDeref => list_tools(client).await.map(drop),
        Scenario::SkillsNoPrefetch => {
            let skills = client.list_skills().await.map_err(|e| e.to_string())?;
            if skills.is_empty() {
                return Err("the server lists no skill".into());
            }
            Ok(())
        }
        Scenario::SkillsVerify => {
            let skills = client.list_skills().await.map_err(|e| e.to_string())?;
            for skill in skills {
                let uri = skill.uri.clone();
                match client.get_skill_from(skill).await {
                    // The tampered skill is rejected, as it must be.
                    Err(mcpwire::Error::Skill(e)) => eprintln!("conformance-client: rejected: {e}"),
                    Err(e) => return Err(format!("{uri}: {e}")),
                    Ok(_) => return Err(format!("{uri}: the tampered skill verified")),
                }
            }
            Ok(())
        }
    }
}

async fn list_tools(client: &Client) -> Result<Vec<Tool>, String> {
    client
        .list_tools()
        .await
        .map_err(|e| format!("tools/list: {e}"))
}

fn tool<'a>(tools: &'a [Tool], name: &str) -> Result<&'a Tool, String> {
    tools.iter().find(|t| t.name == name).ok_or_else(|| {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        format!("the server lists no `{name}` (tools: {})", names.join(", "))
    })
}

/// The calls `MCP_CONFORMANCE_CONTEXT` names: `{"toolCalls": [{"name", "arguments"}]}`.
fn context_tool_calls() -> Result<Vec<(String, Value)>, String> {
    let text = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .map_err(|_| "MCP_CONFORMANCE_CONTEXT is not set".to_string())?;
    let context: Value =
        serde_json::from_str(&text).map_err(|e| format!("MCP_CONFORMANCE_CONTEXT: {e}"))?;
    let calls = context["toolCalls"]
        .as_array()
        .ok_or("MCP_CONFORMANCE_CONTEXT has no toolCalls")?;
    Ok(calls
        .iter()
        .filter_map(|c| {
            let name = c["name"].as_str()?.to_owned();
            Some((name, c.get("arguments").cloned().unwrap_or(json!({}))))
        })
        .collect())
}

/// Arguments a tool's required string, integer and boolean properties accept.
fn example_arguments(schema: &Value) -> Value {
    let mut arguments = serde_json::Map::new();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let value = match schema["properties"][name]["type"].as_str() {
            Some("integer") => json!(1),
            Some("boolean") => json!(true),
            _ => json!("example"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
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
