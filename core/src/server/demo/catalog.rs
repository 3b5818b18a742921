//! The tools the demo server offers, as `tools/list` gives them: its own, the task tools, the
//! apps' tools, and those asking the client's host (with
//! [`DemoConfig::host_requests`](super::DemoConfig::host_requests)).

use serde_json::{json, Value};

use super::tasks;

/// The tools the demo server offers.
pub fn tools() -> Value {
    let mut all = json!([
        {"name": "echo", "description": "Returns its message.",
         "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}},
        {"name": "add", "description": "Adds two numbers.",
         "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
         "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}},
        {"name": "slow", "description": "Counts steps with progress; honours cancellation.",
         "inputSchema": {"type": "object", "properties": {"steps": {"type": "integer", "default": 5}, "interval_ms": {"type": "integer", "default": 100}}}},
        {"name": "ask", "description": "Asks the user for a name (elicitation) and greets them.",
         "inputSchema": {"type": "object", "properties": {"question": {"type": "string"}}}},
        {"name": "survey", "description": "Asks two questions, one after the other (two input rounds in the stateless era).",
         "inputSchema": {"type": "object", "properties": {}}},
        {"name": "fail", "description": "Always fails with an isError result.",
         "inputSchema": {"type": "object", "properties": {}}},
        {"name": "big", "description": "Returns a text payload of N MiB.",
         "inputSchema": {"type": "object", "properties": {"mib": {"type": "integer", "default": 1}}}},
    ]);
    all.as_array_mut().expect("a list").extend(tasks::tools());
    all.as_array_mut().expect("a list").push(ask_task_tool());
    all.as_array_mut()
        .expect("a list")
        .extend(crate::server::apps::tools());
    all
}

/// The `ask-task` tool as `tools/list` gives it.
pub(super) fn ask_task_tool() -> Value {
    json!({"name": "ask-task", "description": "Asks the user for a name through an elicitation the client runs as a task, follows the task and greets them.",
        "inputSchema": {"type": "object", "properties": {"question": {"type": "string"}}}})
}

/// The two tools asking the client's host: `sample` and `roots`.
pub(super) fn host_request_tools() -> Value {
    json!([
        {"name": "sample", "description": "Asks the client's model (sampling) and tells what it said.",
         "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}}}},
        {"name": "roots", "description": "Asks the client for its roots and tells them.",
         "inputSchema": {"type": "object", "properties": {}}},
    ])
}
