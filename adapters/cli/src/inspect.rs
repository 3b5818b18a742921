//! `mcpwire info` and `mcpwire tools`: who the server is, and what tools it has.

use std::time::Duration;

use mcpwire::{CallOptions, Client};
use serde_json::Value;

use super::{exit, Failure};

pub(super) fn info(client: &Client, json: bool) -> Result<u8, Failure> {
    let init = client
        .server_info()
        .ok_or_else(|| Failure::new(exit::CONNECT, "no handshake"))?;
    let era = client
        .era()
        .map(|e| e.to_string())
        .unwrap_or_else(|| "unknown".into());
    let transport = match client.http_transport() {
        None => "stdio",
        Some(mcpwire::HttpTransportKind::Streamable) => "streamable-http",
        Some(_) => "sse (2024-11-05 HTTP+SSE)",
    };
    if json {
        let v = serde_json::json!({
            "era": era,
            "transport": transport,
            "protocolVersion": init.protocol_version,
            "serverInfo": init.server_info,
            "capabilities": init.capabilities,
            "instructions": init.instructions,
        });
        crate::out::json(&v);
        return Ok(exit::OK);
    }
    outln!("era:          {era}");
    outln!("transport:    {transport}");
    outln!("protocol:     {}", init.protocol_version);
    let s = &init.server_info;
    match &s.title {
        Some(t) => outln!("server:       {} {} ({t})", s.name, s.version),
        None => outln!("server:       {} {}", s.name, s.version),
    }
    let caps = serde_json::to_value(&init.capabilities).unwrap_or(Value::Null);
    let names: Vec<&str> = caps
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    outln!("capabilities: {}", names.join(", "));
    if let Some(text) = &init.instructions {
        outln!("instructions:");
        for line in text.lines() {
            outln!("  {line}");
        }
    }
    Ok(exit::OK)
}

pub(super) async fn tools(
    client: &Client,
    name: Option<&str>,
    json: bool,
    timeout: Duration,
) -> Result<u8, Failure> {
    let tools = client
        .list_tools_with(CallOptions::default().timeout(timeout))
        .await?;
    if let Some(name) = name {
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| super::args::unknown_tool(name, &tools))?;
        match json {
            true => crate::out::json(tool),
            false => out!("{}", super::show::tool_detail(tool)),
        }
        return Ok(exit::OK);
    }
    if json {
        crate::out::json(&tools);
        return Ok(exit::OK);
    }
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(4).max(4);
    outln!("{:width$}  DESCRIPTION", "NAME");
    for t in &tools {
        let description = t
            .description
            .as_deref()
            .unwrap_or("")
            .lines()
            .next()
            .unwrap_or("");
        outln!("{:width$}  {}", t.name, truncate(description, 100));
    }
    Ok(exit::OK)
}

pub(super) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let cut: String = s.chars().take(max - 1).collect();
    format!("{cut}…")
}
