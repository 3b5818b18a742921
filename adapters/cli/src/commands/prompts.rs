//! `mcpwire prompts`: the server's prompts, and one prompt's messages for its arguments.

use std::time::Duration;

use clap::{Args, Subcommand};
use mcpwire::{CallOptions, Client};
use serde_json::{json, Map, Value};

use super::call::arguments;
use super::info::{offers, offers_none};
use crate::exit_codes;
use crate::failure::Failure;
use crate::output;
use crate::output::layout::{first_line, table};

/// `mcpwire prompts`.
#[derive(Args, Debug)]
pub(crate) struct PromptsArgs {
    #[command(subcommand)]
    action: Option<PromptsAction>,
    /// Print as JSON.
    #[arg(long, global = true)]
    pub(crate) json: bool,
}

#[derive(Subcommand, Debug)]
enum PromptsAction {
    /// Lists the prompts (the default).
    List,
    /// Gets a prompt's messages: `mcpwire prompts get greet name=Ada`.
    Get {
        /// The prompt's name.
        name: String,
        /// Arguments as key=value (strings) and key:=JSON, or one JSON object, or - to read
        /// it from stdin.
        args: Vec<String>,
    },
}

/// `mcpwire prompts …`.
pub(crate) async fn prompts(
    client: &Client,
    a: PromptsArgs,
    timeout: Duration,
) -> Result<u8, Failure> {
    let action = a.action.unwrap_or(PromptsAction::List);
    if !offers(client, |c| c.prompts.is_some()) {
        return match action {
            PromptsAction::List => Ok(offers_none("prompts", a.json)),
            PromptsAction::Get { name, .. } => Err(Failure::new(
                exit_codes::USAGE,
                format!("no prompt {name}: the server offers no prompts"),
            )),
        };
    }
    let list = client
        .list_prompts_with(CallOptions::default().timeout(timeout))
        .await?;
    let (name, words) = match action {
        PromptsAction::List => {
            if a.json {
                output::json(&list);
                return Ok(exit_codes::OK);
            }
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|p| {
                    let arguments: Vec<String> = p
                        .arguments
                        .iter()
                        .flatten()
                        .filter_map(|arg| {
                            let name = arg.get("name")?.as_str()?;
                            let required = arg.get("required") == Some(&Value::Bool(true));
                            Some(format!("{name}{}", if required { "*" } else { "" }))
                        })
                        .collect();
                    vec![
                        p.name.clone(),
                        arguments.join(" "),
                        first_line(p.description.as_deref()),
                    ]
                })
                .collect();
            table(&["NAME", "ARGUMENTS", "DESCRIPTION"], &rows);
            if rows.iter().any(|r| r[1].contains('*')) {
                outln!("(* required)");
            }
            return Ok(exit_codes::OK);
        }
        PromptsAction::Get { name, args } => (name, args),
    };
    let prompt = list.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = list.iter().map(|p| p.name.as_str()).collect();
        if names.is_empty() {
            return Failure::new(
                exit_codes::USAGE,
                format!("no prompt {name}: the server lists no prompts"),
            );
        }
        let hint = arguments::did_you_mean(&name, &names);
        Failure::new(
            exit_codes::USAGE,
            format!("no prompt {name}{hint}; the prompts: {}", names.join(", ")),
        )
    })?;
    // A prompt's arguments are strings: its declared ones make the schema, those it marks
    // required among them.
    let mut properties = Map::new();
    let mut required = Vec::new();
    for arg in prompt.arguments.iter().flatten() {
        if let Some(n) = arg.get("name").and_then(Value::as_str) {
            properties.insert(n.into(), json!({"type": "string"}));
            if arg.get("required") == Some(&Value::Bool(true)) {
                required.push(n);
            }
        }
    }
    let schema = json!({"type": "object", "properties": properties, "required": required});
    let arguments = match arguments::arguments(&words, &schema, "prompt")? {
        Value::Object(m) if m.is_empty() => None,
        Value::Object(m) => Some(m),
        _ => None,
    };
    let result = client
        .get_prompt_with(&name, arguments, CallOptions::default().timeout(timeout))
        .await?;
    if a.json {
        output::json(&result);
        return Ok(exit_codes::OK);
    }
    if let Some(d) = &result.description {
        outln!("# {d}");
    }
    for m in &result.messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("?");
        let text = match m.get("content") {
            Some(c) if c.get("type") == Some(&json!("text")) => c
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            Some(c) => format!("[{}]", c.get("type").and_then(Value::as_str).unwrap_or("?")),
            None => String::new(),
        };
        outln!("{role}: {text}");
    }
    Ok(exit_codes::OK)
}
