//! `mcpwire skills`: the server's skills (SEP-2640), and with a NAME that skill's files, each
//! read and verified against the skill's entry. Listing reads no file.

use std::time::Duration;

use clap::Args;
use mcpwire::core::skills::{Skill, SkillError, VerifiedSkill};
use mcpwire::{CallOptions, Client, Error};
use serde_json::{json, Value};

use crate::commands::call::content;
use crate::exit_codes;
use crate::failure::Failure;
use crate::output::layout::{first_line, table};

/// `mcpwire skills`.
#[derive(Args, Debug)]
pub(crate) struct SkillsArgs {
    /// A skill to get: its name, its path or its SKILL.md URI. Each of its files is read and
    /// verified against the skill's entry (size, SHA-256 digest, the SKILL.md frontmatter);
    /// on a mismatch nothing of the skill is printed and the exit code is 7.
    name: Option<String>,
    /// Print as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `mcpwire skills [NAME]`.
pub(crate) async fn skills(
    client: &Client,
    a: SkillsArgs,
    timeout: Duration,
) -> Result<u8, Failure> {
    let opts = CallOptions::default().timeout(timeout);
    let Some(name) = a.name else {
        let list = client.list_skills_with(opts).await?;
        if a.json {
            crate::output::json(&list);
        } else {
            let rows: Vec<Vec<String>> = list.iter().map(row).collect();
            table(&["NAME", "URI", "FILES", "DESCRIPTION"], &rows);
        }
        return Ok(exit_codes::OK);
    };
    let skill = client
        .get_skill_with(&name, opts)
        .await
        .map_err(|e| rejected(&name, e))?;
    if a.json {
        crate::output::json(&as_json(&skill));
        return Ok(exit_codes::OK);
    }
    errln!(
        "{}: {}, verified against the entry",
        skill.entry.name().unwrap_or(&name),
        files_and_size(&skill.entry)
    );
    for (i, file) in skill.files.iter().enumerate() {
        let gap = if i == 0 { "" } else { "\n" };
        outln!("{gap}==> {} <==", file.path_in(&skill.entry));
        match file.text() {
            Some(text) => {
                out!("{text}");
                if !text.is_empty() && !text.ends_with('\n') {
                    outln!();
                }
            }
            None => outln!(
                "({}, {}; not shown)",
                file.mime_type.as_deref().unwrap_or("binary"),
                content::human_size(file.bytes.len() as u64)
            ),
        }
    }
    Ok(exit_codes::OK)
}

/// One skill of the list: its name, URI, files and description.
fn row(s: &Skill) -> Vec<String> {
    vec![
        s.name().unwrap_or("").to_owned(),
        s.uri.clone(),
        files_and_size(s),
        first_line(s.description()),
    ]
}

/// `2 files, 1.0 KiB`, or `dynamic`.
fn files_and_size(s: &Skill) -> String {
    match s.files() {
        Some(files) => {
            let n = files.len();
            let plural = if n == 1 { "" } else { "s" };
            let size = content::human_size(s.total_size());
            format!("{n} file{plural}, {size}")
        }
        None => "dynamic".into(),
    }
}

/// The verified skill as JSON: its entry, and each file with its path and its text (a file
/// that is not UTF-8 is marked binary).
fn as_json(skill: &VerifiedSkill) -> Value {
    let files: Vec<Value> = skill
        .files
        .iter()
        .map(|f| {
            let mut v =
                json!({"uri": f.uri, "path": f.path_in(&skill.entry), "size": f.bytes.len()});
            if let Some(mime) = &f.mime_type {
                v["mimeType"] = json!(mime);
            }
            match f.text() {
                Some(text) => v["text"] = json!(text),
                None => v["binary"] = json!(true),
            }
            v
        })
        .collect();
    json!({"skill": skill.entry, "verified": true, "files": files})
}

/// The failure for a skill that could not be had: not found (a usage error), rejected by the
/// verification (exit 7), or the call's own failure.
fn rejected(name: &str, e: Error) -> Failure {
    match e {
        Error::Skill(e @ (SkillError::NotFound { .. } | SkillError::Ambiguous { .. })) => {
            Failure::new(exit_codes::USAGE, format!("{e}; see `mcpwire skills`"))
        }
        Error::Skill(e) => Failure::new(
            exit_codes::UNVERIFIED,
            format!("skill {name} rejected, nothing of it is used: {e}"),
        ),
        other => other.into(),
    }
}
