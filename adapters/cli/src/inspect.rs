//! `mcpwire info` and `mcpwire tools`: who the server is, and what tools it has.

use std::time::Duration;

use mcpwire::hosts::ToolFilter;
use mcpwire::{CallOptions, Client, ConnectOptions, ServerConfig};
use serde_json::Value;

use super::{exit, Failure};

/// The proxy an HTTP server is reached through, as `info` shows it (without credentials, with
/// the environment variable it came from), or `none`; `None` for a stdio server.
pub(super) fn proxy_in_use(config: &ServerConfig, options: &ConnectOptions) -> Option<String> {
    let ServerConfig::Http(http) = config else {
        return None;
    };
    Some(
        options
            .http_client
            .proxy_for(&http.url)
            .unwrap_or_else(|| "none".into()),
    )
}

/// `mcpwire info`: the era and why it was chosen, the transport, for HTTP the version spoken
/// (and, when `--http2` asked for HTTP/2 and the server did not agree it, that too) and the
/// proxy in use (`proxy`, from [`proxy_in_use`]), then the server's identity, capabilities
/// and instructions.
pub(super) fn info(
    client: &Client,
    json: bool,
    proxy: Option<&str>,
    asked_http2: bool,
) -> Result<u8, Failure> {
    let init = client
        .server_info()
        .ok_or_else(|| Failure::new(exit::CONNECT, "no handshake"))?;
    let era = client
        .era()
        .map(|e| e.to_string())
        .unwrap_or_else(|| "unknown".into());
    let why = client.era_reason().map(|r| r.to_string());
    let transport = match client.http_transport() {
        None => "stdio",
        Some(mcpwire::HttpKind::Streamable) => "streamable-http",
        Some(_) => "sse (2024-11-05 HTTP+SSE)",
    };
    // The version the responses came in: HTTP/2 once one did.
    let version = client.http_counters().map(|c| match c.http2_responses {
        0 => "HTTP/1.1",
        _ => "HTTP/2",
    });
    if json {
        let v = serde_json::json!({
            "era": era,
            "eraReason": why,
            "transport": transport,
            "httpVersion": version,
            "proxy": proxy,
            "protocolVersion": init.protocol_version,
            "serverInfo": init.server_info,
            "capabilities": init.capabilities,
            "instructions": init.instructions,
        });
        crate::out::json(&v);
        return Ok(exit::OK);
    }
    match &why {
        Some(why) => outln!("era:          {era} ({why})"),
        None => outln!("era:          {era}"),
    }
    outln!("transport:    {transport}");
    match version {
        Some("HTTP/1.1") if asked_http2 => {
            outln!("http:         HTTP/1.1 (HTTP/2 was asked for; the server did not agree it)")
        }
        Some(version) => outln!("http:         {version}"),
        None => {}
    }
    if let Some(proxy) = proxy {
        outln!("proxy:        {proxy}");
    }
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

/// What `tools` shows, of which server.
pub(super) struct ToolsShown<'a> {
    /// The file's tool filter for its server.
    pub filter: &'a ToolFilter,
    /// One tool to show, else all.
    pub name: Option<&'a str>,
    /// As JSON.
    pub json: bool,
    /// The server, whose tools are kept for completion once listed.
    pub config: &'a mcpwire::ServerConfig,
}

pub(super) async fn tools(
    client: &Client,
    shown: ToolsShown<'_>,
    timeout: Duration,
) -> Result<u8, Failure> {
    let ToolsShown {
        filter,
        name,
        json,
        config,
    } = shown;
    let offered = client
        .server_info()
        .is_none_or(|i| i.capabilities.tools.is_some());
    if !offered && name.is_none() {
        // A list the server does not offer: empty, and said so (exit 0), as for resources.
        return Ok(super::nouns::offers_none("tools", json));
    }
    let listed = client
        .list_tools_with(CallOptions::default().timeout(timeout))
        .await?;
    super::complete::remember_tools(config, &listed);
    let tools = filter.keep(listed);
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
    if tools.is_empty() {
        outln!("(none)");
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
        outln!(
            "{:width$}  {}",
            t.name,
            super::show::truncate(description, 100)
        );
    }
    Ok(exit::OK)
}
