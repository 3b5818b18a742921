//! `mcpwire complete`: the server's completions of a prompt's or resource template's argument
//! (`completion/complete`).

use std::time::Duration;

use clap::Args;
use mcpwire::{CallOptions, Client, CompletionRef, Error};
use serde_json::Value;

use super::call::arguments;
use crate::exit_codes;
use crate::failure::Failure;
use crate::output;

/// `mcpwire complete`.
#[derive(Args, Debug)]
pub(crate) struct CompleteArgs {
    /// The prompt whose argument to complete.
    #[arg(
        long,
        value_name = "NAME",
        required_unless_present = "template",
        conflicts_with = "template"
    )]
    prompt: Option<String>,
    /// The resource template (its URI template) whose argument to complete.
    #[arg(long, value_name = "URI_TEMPLATE")]
    template: Option<String>,
    /// The argument: NAME, or NAME=VALUE with what is typed so far.
    argument: String,
    /// An argument already chosen, as key=value (repeatable).
    #[arg(long = "context", value_name = "KEY=VALUE")]
    context: Vec<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `mcpwire complete`: the server's suggestions, one a line.
pub(crate) async fn complete(
    client: &Client,
    a: CompleteArgs,
    timeout: Duration,
) -> Result<u8, Failure> {
    let reference = match (a.prompt, a.template) {
        (Some(p), _) => CompletionRef::Prompt(p),
        (None, Some(t)) => CompletionRef::Resource(t),
        (None, None) => {
            return Err(Failure::new(
                exit_codes::USAGE,
                "give --prompt NAME or --template URI_TEMPLATE",
            ))
        }
    };
    let (name, value) = a.argument.split_once('=').unwrap_or((&a.argument, ""));
    let context = match a.context.is_empty() {
        true => None,
        false => match arguments::typed_arguments(&a.context, &Value::Null, "prompt")? {
            Value::Object(m) => Some(
                m.into_iter()
                    .map(|(k, v)| {
                        let v = match v {
                            Value::String(s) => Value::String(s),
                            other => Value::String(other.to_string()),
                        };
                        (k, v)
                    })
                    .collect(),
            ),
            _ => None,
        },
    };
    let result = match client
        .complete(
            &reference,
            name,
            value,
            context,
            CallOptions::default().timeout(timeout),
        )
        .await
    {
        Err(Error::Client(mcpwire::core::ClientError::NotSupported(_))) => {
            return Err(Failure::new(
                exit_codes::CALL,
                "the server does not offer completions",
            ))
        }
        other => other?,
    };
    if a.json {
        output::json(&result);
        return Ok(exit_codes::OK);
    }
    let c = &result.completion;
    for v in &c.values {
        outln!("{v}");
    }
    let total = c.total.unwrap_or(c.values.len() as u64);
    if c.has_more == Some(true) || total > c.values.len() as u64 {
        errln!("({} of {total} shown)", c.values.len());
    }
    Ok(exit_codes::OK)
}
