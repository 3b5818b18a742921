//! Plausible server messages for the connection target: answers to `initialize` and
//! `server/discover` in their many shapes, results for each method (pages, input rounds, unknown
//! result types), the ids servers give their own requests, and the server's side of the tasks
//! run for its requests (`task` params, `tasks/*` requests).

use serde_json::{json, Value};

pub(super) fn response(id: Value, result: Result<Value, Value>) -> String {
    match result {
        Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}).to_string(),
        Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": e}).to_string(),
    }
}

pub(super) fn init_result(p: u8) -> Result<Value, Value> {
    const VERSIONS: [&str; 6] = [
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2024-11-05",
        "2026-07-28",
        "1999-01-01",
    ];
    if p % 16 == 15 {
        return Err(json!({"code": -32602, "message": "bad params"}));
    }
    if p % 16 == 14 {
        return Ok(json!({"protocolVersion": 5}));
    }
    let mut caps = if p & 0x80 == 0 {
        json!({"tools": {"listChanged": true}, "prompts": {}, "resources": {"subscribe": true}, "logging": {}})
    } else {
        json!({})
    };
    if p & 0x40 != 0 {
        // Tool calls run as tasks: the client lists the tools before its first tool call.
        caps["tasks"] = json!({"requests": {"tools": {"call": {}}}});
    }
    Ok(json!({
        "protocolVersion": VERSIONS[usize::from(p % 16) % 6],
        "capabilities": caps,
        "serverInfo": {"name": "fuzz", "version": "1"},
        "instructions": "be kind",
    }))
}

pub(super) fn discover_result(p: u8) -> Result<Value, Value> {
    let caps = if p & 0x80 == 0 {
        json!({"tools": {}, "prompts": {}, "resources": {}})
    } else {
        json!({})
    };
    let versions = match p % 16 {
        0..=7 => json!(["2026-07-28"]),
        8 => json!([]),
        9 => json!(["2025-06-18"]),
        10 => json!(["2099-01-01"]),
        11 => return Err(json!({"code": -32601, "message": "method not found"})),
        12 => {
            return Err(
                json!({"code": -32022, "message": "unsupported", "data": {"supported": ["2025-06-18"]}}),
            )
        }
        13 => return Err(json!({"code": -32020, "message": "header mismatch"})),
        14 => return Ok(json!({"supportedVersions": "no"})),
        _ => {
            return Err(
                json!({"code": -32022, "message": "unsupported", "data": {"supported": ["2026-07-28"]}}),
            )
        }
    };
    Ok(json!({
        "supportedVersions": versions,
        "capabilities": caps,
        "instructions": "hi",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fuzz", "version": "2"}},
    }))
}

/// A result for a request of `method`, shaped by `p`; `state` feeds states and cursors.
pub(super) fn result_for(method: Option<&str>, p: u8, q: u8, state: &str) -> Result<Value, Value> {
    match (p % 16, q % 4) {
        (15, _) => return Err(json!({"code": -32603, "message": "internal", "data": state})),
        // The stateless era's refusals of any request.
        (14, 0 | 1) => {
            let required = [
                json!({"elicitation": {}}),
                json!({"sampling": {"tools": {}}}),
            ];
            return Err(json!({"code": -32021, "message": "missing capability",
                              "data": {"requiredCapabilities": required[usize::from(q % 2)]}}));
        }
        (14, _) => {
            let supported = [json!(["2026-07-28"]), json!(["2025-11-25", "2025-06-18"])];
            return Err(json!({"code": -32022, "message": "unsupported",
                              "data": {"supported": supported[usize::from(q % 2)]}}));
        }
        _ => {}
    }
    let method = method.unwrap_or(match q % 4 {
        0 => "tools/call",
        1 => "tools/list",
        _ => "ping",
    });
    let list_key = match method {
        "tools/list" => Some("tools"),
        "prompts/list" => Some("prompts"),
        "resources/list" => Some("resources"),
        "resources/templates/list" => Some("resourceTemplates"),
        _ => None,
    };
    if let Some(key) = list_key {
        let mut page = serde_json::Map::new();
        let items: Vec<Value> = (0..p % 3)
            .map(|i| json!({"name": format!("i{i}")}))
            .collect();
        page.insert(key.into(), Value::from(items));
        match (p >> 2) % 4 {
            0 => {
                page.insert("nextCursor".into(), Value::from(state));
            }
            1 => {
                page.insert("nextCursor".into(), Value::from(""));
            }
            _ => {}
        }
        if p & 0x10 != 0 {
            page.insert("ttlMs".into(), Value::from(i64::from(q) - 20));
            page.insert("cacheScope".into(), Value::from("private"));
        }
        if p & 0x20 != 0 {
            page.remove(key);
        }
        return Ok(Value::Object(page));
    }
    match method {
        "initialize" => init_result(p),
        "server/discover" => discover_result(p),
        "tools/call" | "prompts/get" | "resources/read" => Ok(match p % 8 {
            0 | 1 => json!({"content": [{"type": "text", "text": state}]}),
            2 => json!({"resultType": "complete", "content": [], "isError": true}),
            3 | 4 => {
                let mut requests = serde_json::Map::new();
                if q & 1 != 0 {
                    let mode = if q & 8 == 0 { "form" } else { "url" };
                    requests.insert(
                        "e".into(),
                        json!({"method": "elicitation/create",
                        "params": {"mode": mode, "message": "name?", "requestedSchema": {}}}),
                    );
                }
                if q & 2 != 0 {
                    requests.insert(
                        "s".into(),
                        json!({"method": "sampling/createMessage",
                        "params": {"messages": [], "maxTokens": 1}}),
                    );
                }
                if q & 4 != 0 {
                    requests.insert("r".into(), json!({"method": "roots/list"}));
                }
                if q & 0x10 != 0 {
                    requests.insert("u".into(), json!({"method": "tasks/get"}));
                }
                let mut r = json!({"resultType": "input_required", "inputRequests": requests});
                if q & 0x20 == 0 {
                    r["requestState"] = Value::from(state);
                }
                r
            }
            5 => json!({"resultType": "input_required", "requestState": state}),
            6 if q & 1 == 0 => json!({"resultType": "task", "taskId": "t"}),
            6 => json!({"resultType": "task", "taskId": format!("t{}", q % 3),
                "status": "working", "pollIntervalMs": q, "ttlMs": u64::from(q) * 10}),
            _ if q & 0x40 != 0 => json!({"task": {"taskId": "t", "status": "working",
                "pollInterval": q}}),
            _ => json!({"resultType": 7}),
        }),
        "tasks/get" => {
            let status = [
                "working",
                "input_required",
                "completed",
                "failed",
                "cancelled",
            ][usize::from(q % 5)];
            let mut task = json!({"resultType": "complete", "taskId": format!("t{}", p % 3),
                "status": status, "pollIntervalMs": p});
            match status {
                "input_required" => {
                    task["inputRequests"] = json!({format!("k{}", p % 4): {
                        "method": "elicitation/create",
                        "params": {"mode": "form", "message": "ok?", "requestedSchema": {}}}})
                }
                "completed" if p & 0x40 == 0 => {
                    task["result"] = json!({"content": [{"type": "text", "text": state}]})
                }
                "failed" if p & 0x40 == 0 => {
                    task["error"] = json!({"code": -32000, "message": "failed"})
                }
                _ => {}
            }
            Ok(task)
        }
        "tasks/result" => Ok(json!({"content": [{"type": "text", "text": state}]})),
        _ => Ok(json!({})),
    }
}

pub(super) fn server_id(b: u8) -> Value {
    if b & 8 == 0 {
        Value::from(i64::from(b % 8))
    } else {
        Value::from(format!("s{}", b % 8))
    }
}

/// The `task` member of a server's request that asks to run as a task: a TTL of any size, none,
/// or one of the wrong type.
pub(super) fn task_params(q: u8) -> Value {
    match q >> 5 {
        0 => json!({}),
        1 => json!({"ttl": 0}),
        2 => json!({"ttl": u64::MAX}),
        3 => json!({"ttl": -5}),
        4 => json!(true),
        _ => json!({"ttl": u64::from(q) * 20}),
    }
}

/// A tasks method and its params, as a server sends them to the client that runs its tasks:
/// the first tasks' ids, unknown or malformed ones, cursors good and bad.
pub(super) fn tasks_request(p: u8, q: u8, state: &str) -> (&'static str, Value) {
    let task_id = match p >> 6 {
        0 | 1 => Value::from(format!("task-{}", 1 + (p >> 3) % 4)),
        2 => Value::from(state),
        _ => Value::from(i64::from(q)),
    };
    match q >> 5 {
        0 | 1 => ("tasks/get", json!({"taskId": task_id})),
        2 | 3 => ("tasks/result", json!({"taskId": task_id})),
        4 => ("tasks/cancel", json!({"taskId": task_id})),
        5 => ("tasks/list", json!({})),
        6 => ("tasks/list", json!({"cursor": format!("{}", p % 40)})),
        _ => ("tasks/list", json!({"cursor": state})),
    }
}
