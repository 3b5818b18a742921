//! Variables in configuration values, expanded exactly in the forms each host documents, and
//! never left behind: an unset variable is an error naming it, not an empty string and not
//! literal text (the bug hosts keep shipping, e.g. anthropics/claude-code #6204, #51581).

use std::path::{Path, PathBuf};

use crate::hosts::secret::REDACTED;

/// Which variable forms a host expands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Forms {
    /// `${VAR}`.
    pub braced: bool,
    /// `${VAR:-default}` (the default may hold further variables).
    pub default: bool,
    /// `$VAR`.
    pub bare: bool,
    /// `${env:VAR}`.
    pub env_prefix: bool,
    /// `${userHome}`.
    pub user_home: bool,
    /// `${workspaceFolder}` and `${workspaceFolderBasename}`.
    pub workspace: bool,
    /// `${pathSeparator}` and `${/}`.
    pub separator: bool,
    /// `${input:id}`.
    pub input: bool,
    /// `${file:path}`: the file's contents, without trailing line breaks.
    pub file: bool,
}

impl Forms {
    /// No expansion at all.
    pub const NONE: Forms = Forms {
        braced: false,
        default: false,
        bare: false,
        env_prefix: false,
        user_home: false,
        workspace: false,
        separator: false,
        input: false,
        file: false,
    };

    /// Whether any form is expanded.
    pub fn any(self) -> bool {
        self != Forms::NONE
    }

    fn any_braced(self) -> bool {
        Forms {
            bare: false,
            ..self
        }
        .any()
    }
}

/// A value after expansion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Expanded {
    /// The value.
    pub value: String,
    /// The value with every piece that came from the environment, an input or a file replaced
    /// by `***`: what may be printed.
    pub shown: String,
    /// Whether any piece came from the environment, an input or a file.
    pub secret: bool,
}

impl Expanded {
    fn push(&mut self, text: &str) {
        self.value.push_str(text);
        self.shown.push_str(text);
    }

    fn push_secret(&mut self, text: &str) {
        self.value.push_str(text);
        self.shown.push_str(REDACTED);
        self.secret = true;
    }
}

/// Why a value could not be expanded (the caller adds the file, server and field).
#[derive(Debug)]
pub(crate) enum Problem {
    /// The variable, as written, is not set.
    Unset(String),
    /// An expression the host does not expand (as written, or described).
    Unsupported(String),
    /// `${workspaceFolder}` without a project directory.
    NoWorkspace,
    /// `${input:id}` without a callback.
    InputNeeded(String),
    /// `${input:id}` for an undeclared input.
    UnknownInput(String),
    /// The callback gave no value.
    InputFailed { id: String, reason: String },
    /// `${file:…}` could not be read.
    File {
        file: PathBuf,
        error: std::io::Error,
    },
}

/// Where values come from.
pub(crate) trait Source {
    /// An environment variable.
    fn env(&self, name: &str) -> Option<String>;
    /// The user's home directory.
    fn home(&self) -> &Path;
    /// The project (workspace) directory, if there is one.
    fn workspace(&self) -> Option<&Path>;
    /// The value of an input, asked for (once) if needed.
    fn input(&mut self, id: &str) -> Result<String, Problem>;
    /// The contents of a file named in `${file:…}`.
    fn file(&self, path: &str) -> Result<String, Problem>;
}

/// Expands `text` in the given forms.
pub(crate) fn expand(text: &str, forms: Forms, src: &mut dyn Source) -> Result<Expanded, Problem> {
    let mut out = Expanded::default();
    expand_into(text, forms, src, &mut out)?;
    Ok(out)
}

/// Whether `text` holds something a host might take for a variable (`${…}`).
pub(crate) fn looks_like_variable(text: &str) -> bool {
    text.contains("${")
}

fn expand_into(
    text: &str,
    forms: Forms,
    src: &mut dyn Source,
    out: &mut Expanded,
) -> Result<(), Problem> {
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push(&rest[..i]);
        let after = &rest[i + 1..];
        if let (Some(body), true) = (after.strip_prefix('{'), forms.any_braced()) {
            let Some(end) = matching_brace(body) else {
                return Err(Problem::Unsupported("an unterminated `${`".into()));
            };
            resolve_braced(&body[..end], forms, src, out)?;
            rest = &body[end + 1..];
        } else if forms.bare && after.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            let len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let name = &after[..len];
            let value = src
                .env(name)
                .ok_or_else(|| Problem::Unset(format!("`${name}`")))?;
            out.push_secret(&value);
            rest = &after[len..];
        } else {
            out.push("$");
            rest = after;
        }
    }
    out.push(rest);
    Ok(())
}

/// The index of the `}` closing a `${`, counting nested `${…}` (a default may hold one).
fn matching_brace(body: &str) -> Option<usize> {
    let bytes = body.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 1;
            }
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn resolve_braced(
    body: &str,
    forms: Forms,
    src: &mut dyn Source,
    out: &mut Expanded,
) -> Result<(), Problem> {
    if let Some(name) = body.strip_prefix("env:").filter(|_| forms.env_prefix) {
        let value = src
            .env(name)
            .ok_or_else(|| Problem::Unset(format!("`${{env:{name}}}`")))?;
        out.push_secret(&value);
    } else if let Some(id) = body.strip_prefix("input:").filter(|_| forms.input) {
        let value = src.input(id)?;
        out.push_secret(&value);
    } else if let Some(path) = body.strip_prefix("file:").filter(|_| forms.file) {
        let value = src.file(path)?;
        out.push_secret(value.trim_end_matches(['\n', '\r']));
    } else if body == "userHome" && forms.user_home {
        out.push(&src.home().to_string_lossy());
    } else if body == "workspaceFolder" && forms.workspace {
        let dir = src.workspace().ok_or(Problem::NoWorkspace)?;
        out.push(&dir.to_string_lossy());
    } else if body == "workspaceFolderBasename" && forms.workspace {
        let dir = src.workspace().ok_or(Problem::NoWorkspace)?;
        out.push(&dir.file_name().unwrap_or_default().to_string_lossy());
    } else if (body == "pathSeparator" || body == "/") && forms.separator {
        out.push(std::path::MAIN_SEPARATOR_STR);
    } else if let Some((name, default)) = body
        .split_once(":-")
        .filter(|(name, _)| forms.default && is_name(name))
    {
        // As in POSIX shells, `:-` takes the default when the variable is unset or empty.
        match src.env(name).filter(|v| !v.is_empty()) {
            Some(value) => out.push_secret(&value),
            None => expand_into(default, forms, src, out)?,
        }
    } else if is_name(body) && forms.braced {
        let value = src
            .env(body)
            .ok_or_else(|| Problem::Unset(format!("`${{{body}}}`")))?;
        out.push_secret(&value);
    } else {
        return Err(unsupported(body));
    }
    Ok(())
}

fn unsupported(body: &str) -> Problem {
    let printable = body.len() <= 64
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_:-./~".contains(c));
    Problem::Unsupported(if printable {
        format!("`${{{body}}}`")
    } else {
        "a `${…}` expression".to_owned()
    })
}

/// The form a host with `forms` would expand instead of `expression` (as [`Problem::Unsupported`]
/// writes it), if there is one.
pub(crate) fn hint(expression: &str, forms: Forms) -> Option<String> {
    let body = expression.strip_prefix("`${")?.strip_suffix("}`")?;
    let name = body.strip_prefix("env:").unwrap_or(body);
    let name = name.split_once(":-").map_or(name, |(n, _)| n);
    if !is_name(name) {
        None
    } else if forms.env_prefix {
        Some(format!("write `${{env:{name}}}`"))
    } else if forms.braced {
        Some(format!("write `${{{name}}}`"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    struct Src {
        env: BTreeMap<String, String>,
        workspace: Option<PathBuf>,
        inputs: BTreeMap<String, String>,
        asked: Vec<String>,
    }

    impl Src {
        fn new(vars: &[(&str, &str)]) -> Src {
            Src {
                env: vars
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                workspace: Some(PathBuf::from("/work/proj")),
                inputs: BTreeMap::from([("key".into(), "k-123".into())]),
                asked: Vec::new(),
            }
        }
    }

    impl Source for Src {
        fn env(&self, name: &str) -> Option<String> {
            self.env.get(name).cloned()
        }
        fn home(&self) -> &Path {
            Path::new("/home/u")
        }
        fn workspace(&self) -> Option<&Path> {
            self.workspace.as_deref()
        }
        fn input(&mut self, id: &str) -> Result<String, Problem> {
            self.asked.push(id.to_owned());
            self.inputs
                .get(id)
                .cloned()
                .ok_or_else(|| Problem::UnknownInput(id.to_owned()))
        }
        fn file(&self, path: &str) -> Result<String, Problem> {
            Ok(format!("contents of {path}\n"))
        }
    }

    const CLAUDE_CODE: Forms = Forms {
        braced: true,
        default: true,
        ..Forms::NONE
    };
    const VSCODE: Forms = Forms {
        env_prefix: true,
        user_home: true,
        workspace: true,
        separator: true,
        input: true,
        ..Forms::NONE
    };
    const GEMINI: Forms = Forms {
        braced: true,
        bare: true,
        default: true,
        ..Forms::NONE
    };

    fn ok(text: &str, forms: Forms, src: &mut Src) -> Expanded {
        expand(text, forms, src).unwrap_or_else(|e| panic!("{text}: {e:?}"))
    }

    #[test]
    fn braced_and_default_forms_expand_and_are_shown_redacted() {
        let mut src = Src::new(&[("TOKEN", "s3cret"), ("EMPTY", "")]);
        let e = ok("Bearer ${TOKEN}", CLAUDE_CODE, &mut src);
        assert_eq!(e.value, "Bearer s3cret");
        assert_eq!(e.shown, "Bearer ***");
        assert!(e.secret);
        let e = ok("${MISSING:-https://x}/${EMPTY:-d}", CLAUDE_CODE, &mut src);
        assert_eq!((e.value.as_str(), e.secret), ("https://x/d", false));
        let e = ok("${MISSING:-${TOKEN}}", CLAUDE_CODE, &mut src);
        assert_eq!((e.value.as_str(), e.shown.as_str()), ("s3cret", "***"));
        assert_eq!(ok("${EMPTY}", CLAUDE_CODE, &mut src).value, "");
        assert_eq!(ok("a $TOKEN b", CLAUDE_CODE, &mut src).value, "a $TOKEN b");
    }

    #[test]
    fn an_unset_variable_is_an_error_naming_it() {
        let mut src = Src::new(&[]);
        for (text, forms, name) in [
            ("x${API_KEY}y", CLAUDE_CODE, "`${API_KEY}`"),
            ("${env:API_KEY}", VSCODE, "`${env:API_KEY}`"),
            ("$API_KEY", GEMINI, "`$API_KEY`"),
            ("${A:-${B}}", CLAUDE_CODE, "`${B}`"),
        ] {
            match expand(text, forms, &mut src) {
                Err(Problem::Unset(v)) => assert_eq!(v, name),
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn forms_a_host_does_not_expand_are_refused_with_a_hint() {
        let mut src = Src::new(&[("HOME", "/h")]);
        match expand("${HOME}", VSCODE, &mut src) {
            Err(Problem::Unsupported(expression)) => {
                assert_eq!(expression, "`${HOME}`");
                assert_eq!(
                    hint(&expression, VSCODE).as_deref(),
                    Some("write `${env:HOME}`")
                );
            }
            other => panic!("{other:?}"),
        }
        match expand("${env:HOME}", CLAUDE_CODE, &mut src) {
            Err(Problem::Unsupported(expression)) => assert_eq!(
                hint(&expression, CLAUDE_CODE).as_deref(),
                Some("write `${HOME}`")
            ),
            other => panic!("{other:?}"),
        }
        match expand("${command:pick}", VSCODE, &mut src) {
            Err(Problem::Unsupported(expression)) => {
                assert_eq!(hint(&expression, VSCODE), None)
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            expand("a ${unterminated", CLAUDE_CODE, &mut src),
            Err(Problem::Unsupported(_))
        ));
    }

    #[test]
    fn vscode_predefined_variables_and_inputs() {
        let mut src = Src::new(&[("TOKEN", "t")]);
        let e = ok(
            "${userHome}|${workspaceFolder}|${workspaceFolderBasename}|${pathSeparator}|${/}",
            VSCODE,
            &mut src,
        );
        let sep = std::path::MAIN_SEPARATOR_STR;
        assert_eq!(e.value, format!("/home/u|/work/proj|proj|{sep}|{sep}"));
        assert!(!e.secret, "paths of the machine are not secrets");
        let e = ok("key=${input:key}", VSCODE, &mut src);
        assert_eq!(
            (e.value.as_str(), e.shown.as_str()),
            ("key=k-123", "key=***")
        );
        assert_eq!(src.asked, ["key"]);
        src.workspace = None;
        assert!(matches!(
            expand("${workspaceFolder}/x", VSCODE, &mut src),
            Err(Problem::NoWorkspace)
        ));
    }

    #[test]
    fn bare_names_expand_only_where_the_host_expands_them() {
        let mut src = Src::new(&[("USER_1", "me")]);
        assert_eq!(ok("$USER_1-$5 $", GEMINI, &mut src).value, "me-$5 $");
        assert_eq!(ok("${USER_1}", GEMINI, &mut src).value, "me");
    }

    #[test]
    fn file_contents_lose_their_trailing_line_break() {
        let forms = Forms {
            file: true,
            env_prefix: true,
            ..Forms::NONE
        };
        let e = ok("${file:/run/secret}", forms, &mut Src::new(&[]));
        assert_eq!(
            (e.value.as_str(), e.shown.as_str()),
            ("contents of /run/secret", "***")
        );
    }
}
