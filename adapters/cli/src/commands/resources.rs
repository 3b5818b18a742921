//! `mcpwire resources`: the server's resources and resource templates, and a resource read
//! (its text printed, or its contents written to files).

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};
use mcpwire::{CallOptions, Client};
use serde_json::Value;

use super::call::content;
use super::info::{offers, offers_none};
use crate::exit_codes;
use crate::failure::Failure;
use crate::output;
use crate::output::layout::{first_line, table};

/// `mcpwire resources`.
#[derive(Args, Debug)]
pub(crate) struct ResourcesArgs {
    #[command(subcommand)]
    action: Option<ResourcesAction>,
    /// Print as JSON.
    #[arg(long, global = true)]
    pub(crate) json: bool,
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

/// `mcpwire resources …`.
pub(crate) async fn resources(
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
            let list = client
                .list_resources_with(CallOptions::default().timeout(timeout))
                .await?;
            if a.json {
                output::json(&list);
                return Ok(exit_codes::OK);
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
            let list = client
                .list_resource_templates_with(CallOptions::default().timeout(timeout))
                .await?;
            if a.json {
                output::json(&list);
                return Ok(exit_codes::OK);
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
            let result = client
                .read_resource_with(&uri, CallOptions::default().timeout(timeout))
                .await?;
            if let Some(file) = &output {
                for (i, c) in result.contents.iter().enumerate() {
                    let path = numbered(file, i);
                    let bytes = content_bytes(c).ok_or_else(|| {
                        Failure::new(
                            exit_codes::CALL,
                            format!("content {} is not text or base64", i + 1),
                        )
                    })?;
                    std::fs::write(&path, &bytes).map_err(|e| {
                        Failure::new(
                            exit_codes::USAGE,
                            format!("cannot write {}: {e}", path.display()),
                        )
                    })?;
                    errln!(
                        "wrote {} ({})",
                        path.display(),
                        content::human_size(bytes.len() as u64)
                    );
                }
            }
            if a.json {
                output::json(&result);
            } else if output.is_none() {
                out!("{}", read_text(&result.contents));
            }
        }
    }
    Ok(exit_codes::OK)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
