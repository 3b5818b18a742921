//! `mcpwire tools`: the server's tools, one a line; with a NAME, that tool in detail.

use std::time::Duration;

use mcpwire::hosts::ToolFilter;
use mcpwire::{CallOptions, Client};

use super::call::arguments;
use super::info::offers_none;
use crate::command_line::live_completion;
use crate::exit_codes;
use crate::failure::Failure;
use crate::output;
use crate::output::layout::truncate;

pub(crate) mod detail;

/// What `tools` shows, of which server.
pub(crate) struct ToolsShown<'a> {
    /// The file's tool filter for its server.
    pub filter: &'a ToolFilter,
    /// One tool to show, else all.
    pub name: Option<&'a str>,
    /// As JSON.
    pub json: bool,
    /// The server, whose tools are kept for completion once listed.
    pub config: &'a mcpwire::ServerConfig,
}

/// `mcpwire tools [NAME]` against one server: its tools (those its file allows), or one in
/// detail.
pub(crate) async fn tools(
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
        return Ok(offers_none("tools", json));
    }
    let listed = client
        .list_tools_with(CallOptions::default().timeout(timeout))
        .await?;
    live_completion::remember_tools(config, &listed);
    let tools = filter.keep(listed);
    if let Some(name) = name {
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| arguments::unknown_tool(name, &tools))?;
        match json {
            true => output::json(tool),
            false => out!("{}", detail::tool_detail(tool)),
        }
        return Ok(exit_codes::OK);
    }
    if json {
        output::json(&tools);
        return Ok(exit_codes::OK);
    }
    if tools.is_empty() {
        outln!("(none)");
        return Ok(exit_codes::OK);
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
    Ok(exit_codes::OK)
}
