//! `mcpwire call`: a tool called with arguments typed by its schema, its progress shown, the
//! server's requests answered (elicitation, sampling), its result printed.

use std::time::Duration;

use mcpwire::{CallOptions, Client};
use serde_json::Value;

use crate::command_line::live_completion;
use crate::exit_codes;
use crate::failure::{hints, Failure};
use crate::output;
use crate::server_logs::LogPrinter;

pub(crate) mod answers;
pub(crate) mod arguments;
pub(crate) mod ask;
pub(crate) mod content;
pub(crate) mod progress;
pub(crate) mod stdin_lines;

/// What `mcpwire call` was asked.
pub(crate) struct CallRequest<'a> {
    /// The tool's name.
    pub(crate) tool: &'a str,
    /// Its arguments as typed.
    pub(crate) args: &'a [String],
    /// `--json`.
    pub(crate) json: bool,
    /// `--output DIR`.
    pub(crate) output: Option<&'a std::path::Path>,
    /// The file's tool filter for its server (allows every tool without a file).
    pub(crate) filter: &'a mcpwire::hosts::ToolFilter,
    /// The server's name in its file.
    pub(crate) server: Option<&'a str>,
    /// The server, whose tools are kept for completion once listed (the Manager keeps its
    /// servers' itself).
    pub(crate) config: Option<&'a mcpwire::ServerConfig>,
}

/// `mcpwire call TOOL ARGS…` on `client`: the tool checked against its list, its arguments typed
/// by its schema, its progress shown, its result printed; the exit code says whether the tool
/// reported an error.
pub(crate) async fn call(
    client: &Client,
    request: CallRequest<'_>,
    logs: &LogPrinter,
    timeout: Duration,
    max_time: Option<Duration>,
) -> Result<u8, Failure> {
    let CallRequest {
        tool,
        args,
        json,
        output,
        filter,
        server,
        config,
    } = request;
    if !filter.allows(tool) {
        let refused = mcpwire::manager::ManagerError::NotAllowed {
            server: server.unwrap_or("the server").to_owned(),
            tool: tool.to_owned(),
        };
        return Err(Failure::new(exit_codes::USAGE, refused.to_string()));
    }
    if let Some(dir) = output {
        std::fs::create_dir_all(dir).map_err(|e| {
            Failure::new(
                exit_codes::USAGE,
                format!("--output: cannot create {}: {e}", dir.display()),
            )
        })?;
    }
    // The tool is checked against the list before anything is sent; a server whose list
    // fails is called all the same.
    let schema = match client
        .list_tools_with(CallOptions::default().timeout(timeout))
        .await
    {
        Ok(tools) => {
            if let Some(config) = config {
                live_completion::remember_tools(config, &tools);
            }
            let tools = filter.keep(tools);
            match tools.iter().find(|t| t.name == tool) {
                Some(t) => t.input_schema_value(),
                None => return Err(arguments::unknown_tool(tool, &tools)),
            }
        }
        Err(_) => Value::Null,
    };
    let arguments = arguments::arguments(args, &schema, "tool")?;
    // Progress extends the timeout (users of every SDK ask for it); --max-time still holds.
    let mut opts = CallOptions::default().timeout(timeout).reset_on_progress();
    opts.max_total = max_time;
    // On a terminal a bar (or a spinner), cleared at the end; otherwise a line each.
    let progress = progress::Printer::new(output::stderr_is_terminal());
    let shown = progress.clone();
    let opts = opts.on_progress(move |p| shown.show(p));
    let outcome = client.call_tool_with(tool, arguments, opts).await;
    progress.clear();
    // The log messages that came before the result are printed before it.
    logs.drain().await;
    let result = match outcome {
        Ok(result) => result,
        // With --json, a JSON-RPC error is JSON too, on stdout (see `finish`); the exit code
        // stays 4.
        Err(e) => {
            let mut f = Failure::from(e);
            if let Some(hint) = hints::stateless_elicitation(client, &f.message) {
                f.message = format!("{}; {hint}", f.message);
            }
            return Err(f);
        }
    };
    let hint = result.is_error.then(|| result.text());
    let hint = hint.and_then(|text| hints::stateless_elicitation(client, &text));
    if json {
        output::json(&result);
    } else {
        let text = content::render(&result.content, tool, output)
            .map_err(|e| Failure::new(exit_codes::USAGE, e))?;
        out!("{text}");
        if result.content.is_empty() {
            if let Some(s) = &result.structured_content {
                outln!("{s}");
            }
        }
    }
    if let Some(hint) = hint {
        errln!("mcpwire: {hint}");
    }
    Ok(if result.is_error {
        exit_codes::TOOL_ERROR
    } else {
        exit_codes::OK
    })
}
