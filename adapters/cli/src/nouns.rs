//! The MCP nouns beyond tools: resources, prompts, ping, completion and the log level. Each
//! prints aligned text for people, or JSON with `--json`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use mcpwire::{CallOptions, ChosenEra, Client, CompletionRef, Error};
use serde_json::{json, Map, Value};

use super::show::truncate;
use super::{args, content, exit, logs, Failure};

/// `mcpwire resources`.
#[derive(Args, Debug)]
pub(super) struct ResourcesArgs {
    #[command(subcommand)]
    action: Option<ResourcesAction>,
    /// Print as JSON.
    #[arg(long, global = true)]
    pub(super) json: bool,
}

#[derive(Subcommand, Debug)]
enum ResourcesAction {
    /// Lists the resources (the default).
    List,
    /// Reads a resource: text contents are printed, binary ones only written with --output.
    Read {
        /// The resource's URI.
        uri: String,
        /// Write the contents to FILE instead of printing them (several contents: FILE,
        /// FILE.2, FILE.3…; binary contents decoded).
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Lists the resource templates.
    Templates,
}

/// `mcpwire prompts`.
#[derive(Args, Debug)]
pub(super) struct PromptsArgs {
    #[command(subcommand)]
    action: Option<PromptsAction>,
    /// Print as JSON.
    #[arg(long, global = true)]
    pub(super) json: bool,
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

/// `mcpwire complete`.
#[derive(Args, Debug)]
pub(super) struct CompleteArgs {
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
    pub(super) json: bool,
}

fn print_json<T: serde::Serialize + ?Sized>(value: &T) {
    crate::out::json(value);
}

fn opts(timeout: Duration) -> CallOptions {
    CallOptions::default().timeout(timeout)
}

/// Prints rows as columns, each as wide as its widest cell; the last column is not padded.
/// No rows: `(none)`.
pub(super) fn table(header: &[&str], rows: &[Vec<String>]) {
    if rows.is_empty() {
        outln!("(none)");
        return;
    }
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len() - 1;
        let mut out = String::new();
        for (i, cell) in cells.into_iter().enumerate() {
            match i == last {
                true => out.push_str(cell),
                false => out.push_str(&format!("{cell:w$}  ", w = widths[i])),
            }
        }
        outln!("{}", out.trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

/// The first line of a text, cut at 80 characters.
pub(super) fn first_line(text: Option<&str>) -> String {
    truncate(text.unwrap_or("").lines().next().unwrap_or(""), 80)
}

/// `mcpwire resources …`.
pub(super) async fn resources(
    client: &Client,
    a: ResourcesArgs,
    timeout: Duration,
) -> Result<u8, Failure> {
    let action = a.action.unwrap_or(ResourcesAction::List);
    let listing = matches!(action, ResourcesAction::List | ResourcesAction::Templates);
    if listing && !offers(client, |c| c.resources.is_some()) {
        return Ok(offers_none("resources", a.json));
    }
    match action {
        ResourcesAction::List => {
            let list = client.list_resources_with(opts(timeout)).await?;
            if a.json {
                print_json(&list);
                return Ok(exit::OK);
            }
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|r| {
                    let description = r.description.as_deref();
                    vec![
                        r.uri.clone(),
                        r.name.clone(),
                        r.mime_type.clone().unwrap_or_default(),
                        first_line(description),
                    ]
                })
                .collect();
            table(&["URI", "NAME", "TYPE", "DESCRIPTION"], &rows);
        }
        ResourcesAction::Templates => {
            let list = client.list_resource_templates_with(opts(timeout)).await?;
            if a.json {
                print_json(&list);
                return Ok(exit::OK);
            }
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|t| {
                    vec![
                        t.uri_template.clone(),
                        t.name.clone(),
                        t.mime_type.clone().unwrap_or_default(),
                        first_line(t.description.as_deref()),
                    ]
                })
                .collect();
            table(&["URI TEMPLATE", "NAME", "TYPE", "DESCRIPTION"], &rows);
        }
        ResourcesAction::Read { uri, output } => {
            let result = client.read_resource_with(&uri, opts(timeout)).await?;
            if let Some(file) = &output {
                for (i, c) in result.contents.iter().enumerate() {
                    let path = numbered(file, i);
                    let bytes = content_bytes(c).ok_or_else(|| {
                        Failure::new(
                            exit::CALL,
                            format!("content {} is not text or base64", i + 1),
                        )
                    })?;
                    std::fs::write(&path, &bytes).map_err(|e| {
                        Failure::new(exit::USAGE, format!("cannot write {}: {e}", path.display()))
                    })?;
                    errln!(
                        "wrote {} ({})",
                        path.display(),
                        content::human_size(bytes.len() as u64)
                    );
                }
            }
            if a.json {
                print_json(&result);
            } else if output.is_none() {
                out!("{}", read_text(&result.contents));
            }
        }
    }
    Ok(exit::OK)
}

/// Whether the server declared the capability `has` looks for (when its capabilities are
/// known).
fn offers(
    client: &Client,
    has: impl Fn(&mcpwire::core::types::ServerCapabilities) -> bool,
) -> bool {
    client.server_info().is_none_or(|i| has(&i.capabilities))
}

/// A list the server does not offer: empty, and said so (exit 0).
pub(super) fn offers_none(what: &str, json: bool) -> u8 {
    match json {
        true => print_json(&json!([])),
        false => outln!("(the server offers no {what})"),
    }
    exit::OK
}

/// The file content `index` of `--output FILE` goes to: FILE, then FILE.2, FILE.3…
fn numbered(file: &Path, index: usize) -> PathBuf {
    match index {
        0 => file.to_owned(),
        i => {
            let mut name = file.as_os_str().to_owned();
            name.push(format!(".{}", i + 1));
            PathBuf::from(name)
        }
    }
}

/// A content's bytes: its text, or its blob decoded.
fn content_bytes(c: &Value) -> Option<Vec<u8>> {
    if let Some(text) = c.get("text").and_then(Value::as_str) {
        return Some(text.as_bytes().to_vec());
    }
    content::decode_base64(c.get("blob")?.as_str()?)
}

/// Text contents as they are; a binary one as a line saying what it is and how to save it.
fn read_text(contents: &[Value]) -> String {
    let mut out = String::new();
    for c in contents {
        if let Some(text) = c.get("text").and_then(Value::as_str) {
            out.push_str(text);
            if !text.ends_with('\n') {
                out.push('\n');
            }
            continue;
        }
        let mime = c
            .get("mimeType")
            .and_then(Value::as_str)
            .unwrap_or("binary");
        let size = c
            .get("blob")
            .and_then(Value::as_str)
            .and_then(content::decoded_len)
            .map(|n| content::human_size(n as u64))
            .unwrap_or_else(|| "not valid base64".into());
        out.push_str(&format!("[{mime}, {size}; write it with --output FILE]\n"));
    }
    out
}

/// `mcpwire prompts …`.
pub(super) async fn prompts(
    client: &Client,
    a: PromptsArgs,
    timeout: Duration,
) -> Result<u8, Failure> {
    let action = a.action.unwrap_or(PromptsAction::List);
    if !offers(client, |c| c.prompts.is_some()) {
        return match action {
            PromptsAction::List => Ok(offers_none("prompts", a.json)),
            PromptsAction::Get { name, .. } => Err(Failure::new(
                exit::USAGE,
                format!("no prompt {name}: the server offers no prompts"),
            )),
        };
    }
    let list = client.list_prompts_with(opts(timeout)).await?;
    let (name, words) = match action {
        PromptsAction::List => {
            if a.json {
                print_json(&list);
                return Ok(exit::OK);
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
            return Ok(exit::OK);
        }
        PromptsAction::Get { name, args } => (name, args),
    };
    let prompt = list.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = list.iter().map(|p| p.name.as_str()).collect();
        if names.is_empty() {
            return Failure::new(
                exit::USAGE,
                format!("no prompt {name}: the server lists no prompts"),
            );
        }
        let hint = args::did_you_mean(&name, &names);
        Failure::new(
            exit::USAGE,
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
    let arguments = match args::arguments(&words, &schema, "prompt")? {
        Value::Object(m) if m.is_empty() => None,
        Value::Object(m) => Some(m),
        _ => None,
    };
    let result = client
        .get_prompt_with(&name, arguments, opts(timeout))
        .await?;
    if a.json {
        print_json(&result);
        return Ok(exit::OK);
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
    Ok(exit::OK)
}

/// The message for a command the stateless era has no request for.
fn not_in_stateless(client: &Client, what: &str, instead: &str) -> Result<(), Failure> {
    match client.era() {
        Some(ChosenEra::Stateless) => Err(Failure::new(
            exit::USAGE,
            format!("{what} does not exist in the stateless era (2026-07-28): {instead}; or use --era handshake with a server that speaks it"),
        )),
        _ => Ok(()),
    }
}

/// `mcpwire ping`: the round trip's time.
pub(super) async fn ping(client: &Client, json: bool, timeout: Duration) -> Result<u8, Failure> {
    not_in_stateless(
        client,
        "ping",
        "every request stands on its own, so any request (mcpwire info) checks the server",
    )?;
    let started = Instant::now();
    client
        .ping_with(CallOptions::default().timeout(timeout))
        .await?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    match json {
        true => print_json(&json!({"ok": true, "ms": ms})),
        false => outln!("pong in {ms:.1} ms"),
    }
    Ok(exit::OK)
}

/// `mcpwire complete`: the server's suggestions, one a line.
pub(super) async fn complete(
    client: &Client,
    a: CompleteArgs,
    timeout: Duration,
) -> Result<u8, Failure> {
    let reference = match (a.prompt, a.template) {
        (Some(p), _) => CompletionRef::Prompt(p),
        (None, Some(t)) => CompletionRef::Resource(t),
        (None, None) => {
            return Err(Failure::new(
                exit::USAGE,
                "give --prompt NAME or --template URI_TEMPLATE",
            ))
        }
    };
    let (name, value) = a.argument.split_once('=').unwrap_or((&a.argument, ""));
    let context = match a.context.is_empty() {
        true => None,
        false => match args::typed_arguments(&a.context, &Value::Null, "prompt")? {
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
        .complete(&reference, name, value, context, opts(timeout))
        .await
    {
        Err(Error::Client(mcpwire::core::ClientError::NotSupported(_))) => {
            return Err(Failure::new(
                exit::CALL,
                "the server does not offer completions",
            ))
        }
        other => other?,
    };
    if a.json {
        print_json(&result);
        return Ok(exit::OK);
    }
    let c = &result.completion;
    for v in &c.values {
        outln!("{v}");
    }
    let total = c.total.unwrap_or(c.values.len() as u64);
    if c.has_more == Some(true) || total > c.values.len() as u64 {
        errln!("({} of {total} shown)", c.values.len());
    }
    Ok(exit::OK)
}

/// `mcpwire log-level LEVEL`: logging/setLevel.
pub(super) async fn log_level(
    client: &Client,
    level: logs::LogLevel,
    json: bool,
    timeout: Duration,
) -> Result<u8, Failure> {
    client.set_log_level(level.name(), opts(timeout)).await?;
    match (json, client.era()) {
        (true, _) => print_json(&json!({"level": level.name()})),
        (false, Some(ChosenEra::Stateless)) => outln!(
            "log level {} asked for by each request of this connection (the stateless era has no logging/setLevel)",
            level.name()
        ),
        (false, _) => outln!("log level set to {}", level.name()),
    }
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_contents_are_described_never_dumped() {
        let contents = vec![
            json!({"uri": "a", "text": "hello"}),
            json!({"uri": "b", "mimeType": "image/png", "blob": "AAECAw=="}),
        ];
        assert_eq!(
            read_text(&contents),
            "hello\n[image/png, 4 B; write it with --output FILE]\n"
        );
        assert_eq!(content_bytes(&contents[1]), Some(vec![0, 1, 2, 3]));
    }

    #[test]
    fn several_contents_go_to_numbered_files() {
        assert_eq!(numbered(Path::new("x.png"), 0), PathBuf::from("x.png"));
        assert_eq!(numbered(Path::new("x.png"), 2), PathBuf::from("x.png.3"));
    }
}
