//! `mcpwire tasks`: the server's tasks (the 2025-11-25 `tasks/list`), one task's state
//! (`tasks/get`, either era) and its cancellation (`tasks/cancel`).

use std::time::Duration;

use clap::{Args, Subcommand};
use mcpwire::{CallOptions, ChosenEra, Client};
use serde_json::{Map, Value};

use crate::exit_codes;
use crate::failure::Failure;

/// `mcpwire tasks …`.
#[derive(Args, Debug)]
pub(crate) struct TasksArgs {
    #[command(subcommand)]
    command: Option<TasksCommand>,
    /// Print as JSON.
    #[arg(long, global = true)]
    pub(crate) json: bool,
}

#[derive(Subcommand, Debug)]
enum TasksCommand {
    /// One task's state (and its result or error once it has ended).
    Get {
        /// The task's id.
        id: String,
    },
    /// Asks the server to cancel a task (cancellation is the server's to honour).
    Cancel {
        /// The task's id.
        id: String,
    },
}

/// Runs `mcpwire tasks`.
pub(crate) async fn tasks(
    client: &Client,
    args: TasksArgs,
    timeout: Duration,
) -> Result<u8, Failure> {
    let opts = || CallOptions::default().timeout(timeout);
    let with_id = |id: &str| {
        let mut params = Map::new();
        params.insert("taskId".into(), Value::from(id));
        Some(params)
    };
    let (method, params) = match &args.command {
        None if client.era() == Some(ChosenEra::Stateless) => {
            return Err(Failure::new(
                exit_codes::USAGE,
                "the 2026-07-28 tasks extension has no list of tasks: \
                 use `mcpwire tasks get ID` for one task",
            ))
        }
        None => ("tasks/list", None),
        Some(TasksCommand::Get { id }) => ("tasks/get", with_id(id)),
        Some(TasksCommand::Cancel { id }) => ("tasks/cancel", with_id(id)),
    };
    let raw = client.request(method, params, opts()).await?;
    let value: Value = raw
        .parse()
        .map_err(|e| Failure::new(exit_codes::CALL, format!("{method}: {e}")))?;
    if args.json {
        crate::output::json(&value);
        return Ok(exit_codes::OK);
    }
    match &args.command {
        None => {
            let all = value["tasks"].as_array().cloned().unwrap_or_default();
            if all.is_empty() {
                outln!("(none)");
            }
            for task in &all {
                outln!("{}", line(task));
            }
        }
        Some(TasksCommand::Get { .. }) => outln!("{}", line(&value)),
        Some(TasksCommand::Cancel { id }) => outln!("asked to cancel {id}"),
    }
    Ok(exit_codes::OK)
}

/// A task in one line: its id, status and message.
fn line(task: &Value) -> String {
    let text = |k: &str| task[k].as_str().unwrap_or("").to_owned();
    let mut out = format!("{}  {}", text("taskId"), text("status"));
    if let Some(m) = task["statusMessage"].as_str() {
        out.push_str(&format!("  {m}"));
    }
    out
}
