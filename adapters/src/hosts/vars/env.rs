//! Where variables come from: an injectable environment, and `envFile` files.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The environment variables a loader expands from. Tests pass a map; programs pass
/// [`ProcessEnv`].
pub trait Environment: Send + Sync {
    /// The value of `name`, or `None` when it is not set (an empty value is set).
    fn var(&self, name: &str) -> Option<String>;
}

/// The process's own environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Environment for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        // A value that is not Unicode cannot be written into a configuration either.
        std::env::var_os(name).and_then(|v| v.into_string().ok())
    }
}

impl Environment for BTreeMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

impl Environment for HashMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

impl<const N: usize> Environment for [(&'static str, &'static str); N] {
    fn var(&self, name: &str) -> Option<String> {
        self.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    }
}

/// Why an env file could not be read: the line that is not `NAME=value`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BadLine(pub(crate) usize);

/// Parses an env file (the dotenv format VS Code and Cursor read): `NAME=value` lines, an
/// optional `export ` prefix, `#` comments, blank lines; values bare (trimmed, a ` #` starts a
/// comment), in single quotes (literal) or in double quotes (`\n`, `\t`, `\"`, `\\` escapes; may
/// span lines). No variable is expanded inside, as neither host does.
pub(crate) fn parse_env_file(text: &str) -> Result<Vec<(String, String)>, BadLine> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, raw)) = lines.next() {
        let line = raw.trim_start_matches('\u{feff}').trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        let (name, value) = line.split_once('=').ok_or(BadLine(i + 1))?;
        let name = name.trim();
        let valid_name = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-');
        if !valid_name {
            return Err(BadLine(i + 1));
        }
        let value = value.trim_start();
        let value = if let Some(rest) = value.strip_prefix('"') {
            let mut text = rest.to_owned();
            let mut closed = closing_quote(&text, '"');
            while closed.is_none() {
                let (_, next) = lines.next().ok_or(BadLine(i + 1))?;
                text.push('\n');
                text.push_str(next);
                closed = closing_quote(&text, '"');
            }
            unescape(&text[..closed.unwrap_or_default()])
        } else if let Some(rest) = value.strip_prefix('\'') {
            let end = rest.find('\'').ok_or(BadLine(i + 1))?;
            rest[..end].to_owned()
        } else {
            let end = value.find(" #").unwrap_or(value.len());
            value[..end].trim_end().to_owned()
        };
        match out.iter_mut().find(|(k, _)| k == name) {
            Some(slot) => slot.1 = value,
            None => out.push((name.to_owned(), value)),
        }
    }
    Ok(out)
}

fn closing_quote(text: &str, quote: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            c if c == quote && !escaped => return Some(i),
            _ => escaped = false,
        }
    }
    None
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// The directory a relative path in a configuration is taken against.
pub(crate) fn resolve(base: &Path, path: &str, home: &Path) -> std::path::PathBuf {
    if path == "~" {
        return home.to_owned();
    }
    if let Some(rest) = path.strip_prefix("~/") {
        return home.join(rest);
    }
    base.join(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_files_read_every_documented_form() {
        let text = "# a comment\n\nA=1\nexport B = two words \nC=\"line\\nbreak \\\"q\\\"\"\nD='$NOT ${EXPANDED}'\nE=x # comment\nF=\"multi\nline\"\nA=again\nG=\n";
        let vars = parse_env_file(text).unwrap();
        let get = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("A"), Some("again"));
        assert_eq!(get("B"), Some("two words"));
        assert_eq!(get("C"), Some("line\nbreak \"q\""));
        assert_eq!(get("D"), Some("$NOT ${EXPANDED}"));
        assert_eq!(get("E"), Some("x"));
        assert_eq!(get("F"), Some("multi\nline"));
        assert_eq!(get("G"), Some(""));
        assert_eq!(vars.len(), 7, "a name written twice is kept once");
    }

    #[test]
    fn a_line_that_is_not_name_value_names_its_line() {
        assert_eq!(parse_env_file("A=1\nnot a pair\n"), Err(BadLine(2)));
        assert_eq!(parse_env_file("A=1\n1X=2\n"), Err(BadLine(2)));
        assert_eq!(parse_env_file("Q=\"open\n"), Err(BadLine(1)));
    }

    #[test]
    fn map_environments_tell_unset_from_empty() {
        let env = [("EMPTY", "")];
        assert_eq!(env.var("EMPTY").as_deref(), Some(""));
        assert_eq!(env.var("UNSET"), None);
    }
}
