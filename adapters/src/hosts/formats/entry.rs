//! Reading one server entry, whatever the host: typed fields, expansion in the fields the host
//! expands, the transport, and the keys left over (kept and reported).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mcpwire_core::config::{HttpConfig, HttpKind, ServerConfig, StdioConfig};
use mcpwire_core::Era;

use crate::hosts::error::{ConfigError, Warning};
use crate::hosts::node::{Node, Object};
use crate::hosts::secret::Shown;
use crate::hosts::server::{LoadedServer, OAuthSettings, Origin, Scope, ServerSettings};
use crate::hosts::vars::dialect::{Field, Rules};
use crate::hosts::vars::env::{parse_env_file, resolve, Environment};
use crate::hosts::vars::expand::{expand, looks_like_variable, Expanded, Problem, Source};
use crate::hosts::vars::inputs::Inputs;

/// What the servers of one file are read with.
pub(crate) struct Cx<'a> {
    pub path: &'a Path,
    pub rules: Rules,
    pub scope: Scope,
    pub env: &'a dyn Environment,
    pub home: &'a Path,
    pub workspace: Option<&'a Path>,
    pub inputs: &'a mut Inputs,
    pub warnings: &'a mut Vec<Warning>,
}

impl Cx<'_> {
    /// The file's root as an object, else the file is not one this host writes.
    pub(crate) fn root_object<'n>(&self, root: &'n Node) -> Result<&'n Object, ConfigError> {
        root.as_object().ok_or_else(|| ConfigError::Unrecognised {
            path: self.path.to_owned(),
        })
    }

    /// The directory relative paths in the file are taken against: the project's, else the
    /// file's own.
    pub(crate) fn base_dir(&self) -> PathBuf {
        match self.workspace {
            Some(w) => w.to_owned(),
            None => self.path.parent().unwrap_or(Path::new(".")).to_owned(),
        }
    }
}

struct Src<'x> {
    env: &'x dyn Environment,
    home: &'x Path,
    workspace: Option<&'x Path>,
    base: PathBuf,
    inputs: &'x mut Inputs,
}

impl Source for Src<'_> {
    fn env(&self, name: &str) -> Option<String> {
        self.env.var(name)
    }
    fn home(&self) -> &Path {
        self.home
    }
    fn workspace(&self) -> Option<&Path> {
        self.workspace
    }
    fn input(&mut self, id: &str) -> Result<String, Problem> {
        self.inputs.value(id)
    }
    fn file(&self, path: &str) -> Result<String, Problem> {
        let file = resolve(&self.base, path, self.home);
        std::fs::read_to_string(&file).map_err(|error| Problem::File { file, error })
    }
}

/// The transport an entry names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    Stdio,
    Http(HttpKind),
}

/// The transport a `type` value names (case and `-`/`_` do not matter).
pub(crate) fn parse_transport(value: &str) -> Option<Transport> {
    let v: String = value
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    Some(match v.as_str() {
        "stdio" | "local" => Transport::Stdio,
        "http" | "streamablehttp" | "streamable" | "remote" => {
            Transport::Http(HttpKind::Streamable)
        }
        "sse" => Transport::Http(HttpKind::Sse),
        _ => return None,
    })
}

/// One server entry being read: fields are taken out as they are read; what is left at the
/// end is unknown.
pub(crate) struct Entry<'c, 'a> {
    pub cx: &'c mut Cx<'a>,
    pub name: String,
    obj: Object,
    shown: Shown,
    pub settings: ServerSettings,
}

impl<'c, 'a> Entry<'c, 'a> {
    pub(crate) fn new(cx: &'c mut Cx<'a>, name: &str, node: Node) -> Result<Self, ConfigError> {
        let Node::Object(obj) = node else {
            return Err(ConfigError::Invalid {
                path: cx.path.to_owned(),
                server: name.to_owned(),
                field: name.to_owned(),
                expected: format!("an object, not {}", node.kind()),
            });
        };
        for key in obj.duplicates() {
            cx.warnings.push(Warning::DuplicateKey {
                path: cx.path.to_owned(),
                key: format!("{name}.{key}"),
            });
        }
        Ok(Entry {
            cx,
            name: name.to_owned(),
            obj,
            shown: Shown::new(),
            settings: ServerSettings::default(),
        })
    }

    /// Whether `key` is (still) present.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.obj.contains(key)
    }

    /// Takes `key` out, whatever its value.
    pub(crate) fn take(&mut self, key: &str) -> Option<Node> {
        self.obj.take(key)
    }

    pub(crate) fn invalid(&self, field: &str, expected: &str) -> ConfigError {
        ConfigError::Invalid {
            path: self.cx.path.to_owned(),
            server: self.name.clone(),
            field: field.to_owned(),
            expected: expected.to_owned(),
        }
    }

    pub(crate) fn missing(&self, field: &str) -> ConfigError {
        ConfigError::Missing {
            path: self.cx.path.to_owned(),
            server: self.name.clone(),
            field: field.to_owned(),
        }
    }

    /// Refuses a header that cannot be sent, or that the HTTP client sets itself
    /// ([`mcpwire_core::header::check_configured`]); `field` is the key it came from.
    pub(crate) fn check_header(
        &self,
        field: &str,
        name: &str,
        value: &str,
    ) -> Result<(), ConfigError> {
        mcpwire_core::header::check_configured(name, value).map_err(|error| ConfigError::Header {
            path: self.cx.path.to_owned(),
            server: self.name.clone(),
            field: field.to_owned(),
            error: Box::new(error),
        })
    }

    /// Checks an HTTP server's URL (from `field`) as a connection would, naming it as it may
    /// be shown. VS Code's own socket forms (`unix:///path.sock#/mcp`, `pipe:///name`) are
    /// kept as written, so that its file reads; a connection refuses them (mcpwire speaks HTTP
    /// over TCP only).
    pub(crate) fn check_url(&self, field: &str, url: &str) -> Result<(), ConfigError> {
        let socket = ["unix://", "pipe://"].iter().any(|s| url.starts_with(s));
        if socket && self.cx.rules.host == crate::hosts::Host::VsCode {
            return Ok(());
        }
        mcpwire_core::config::check_url(url).map_err(|mut error| {
            if let Some(shown) = self.shown.get("url") {
                error.url = mcpwire_core::error::redact_url(shown);
            }
            ConfigError::Url {
                path: self.cx.path.to_owned(),
                server: self.name.clone(),
                field: field.to_owned(),
                error: Box::new(error),
            }
        })
    }

    pub(crate) fn unset(&self, field: &str, variable: &str) -> ConfigError {
        ConfigError::UnsetVariable {
            path: self.cx.path.to_owned(),
            server: self.name.clone(),
            field: field.to_owned(),
            variable: format!("`{variable}`"),
        }
    }

    /// Keeps the printable form of a field whose value came from a secret.
    pub(crate) fn note_shown(&mut self, slot: String, shown: String) {
        self.shown.insert(slot, shown);
    }

    /// A string, as written (no expansion).
    pub(crate) fn string(&mut self, key: &str) -> Result<Option<String>, ConfigError> {
        match self.take(key) {
            None | Some(Node::Null) => Ok(None),
            Some(Node::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.invalid(key, &format!("a string, not {}", other.kind()))),
        }
    }

    /// A boolean.
    pub(crate) fn bool(&mut self, key: &str) -> Result<Option<bool>, ConfigError> {
        match self.take(key) {
            None | Some(Node::Null) => Ok(None),
            Some(Node::Bool(b)) => Ok(Some(b)),
            Some(other) => Err(self.invalid(key, &format!("true or false, not {}", other.kind()))),
        }
    }

    /// A duration written as a number of `unit`s (`1000` for milliseconds, `1` for seconds);
    /// `0` means none when `zero_is_none`.
    pub(crate) fn duration(
        &mut self,
        key: &str,
        unit: u32,
        zero_is_none: bool,
    ) -> Result<Option<Duration>, ConfigError> {
        let n = match self.take(key) {
            None | Some(Node::Null) => return Ok(None),
            Some(Node::Number(n)) => n.as_f64(),
            Some(other) => {
                return Err(self.invalid(key, &format!("a number, not {}", other.kind())))
            }
        };
        let Some(seconds) = n.map(|n| n / f64::from(unit)) else {
            return Err(self.invalid(key, "a number"));
        };
        if zero_is_none && seconds == 0.0 {
            return Ok(None);
        }
        Duration::try_from_secs_f64(seconds)
            .map(Some)
            .map_err(|_| self.invalid(key, "a non-negative number"))
    }

    /// A list of names (tool names, variable names), as written.
    pub(crate) fn names(&mut self, key: &str) -> Result<Option<Vec<String>>, ConfigError> {
        match self.take(key) {
            None | Some(Node::Null) => Ok(None),
            Some(Node::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Node::String(s) => Ok(s),
                    other => Err(self.invalid(
                        &format!("{key}[{i}]"),
                        &format!("a string, not {}", other.kind()),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => {
                Err(self.invalid(key, &format!("an array of strings, not {}", other.kind())))
            }
        }
    }

    /// A map of strings, as written (Codex's `env_http_headers`).
    pub(crate) fn name_map(
        &mut self,
        key: &str,
    ) -> Result<Option<Vec<(String, String)>>, ConfigError> {
        match self.take(key) {
            None | Some(Node::Null) => Ok(None),
            Some(Node::Object(o)) => o
                .into_entries()
                .into_iter()
                .map(|(k, v)| match v {
                    Node::String(s) => Ok((k, s)),
                    other => Err(self.invalid(
                        &format!("{key}.{k}"),
                        &format!("a string, not {}", other.kind()),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(self.invalid(key, &format!("an object, not {}", other.kind()))),
        }
    }

    /// Expands `text` (the value of the field written `label`) if the host expands `field`.
    /// `shown_as` names the printable form's slot when the value holds a secret.
    pub(crate) fn expand(
        &mut self,
        label: &str,
        field: Field,
        text: &str,
        shown_as: Option<String>,
    ) -> Result<String, ConfigError> {
        if !self.cx.rules.expands(field) {
            if looks_like_variable(text) {
                self.cx.warnings.push(Warning::NotExpanded {
                    path: self.cx.path.to_owned(),
                    server: self.name.clone(),
                    field: label.to_owned(),
                    host: self.cx.rules.host,
                });
            }
            return Ok(text.to_owned());
        }
        let base = self.cx.base_dir();
        let mut src = Src {
            env: self.cx.env,
            home: self.cx.home,
            workspace: self.cx.workspace,
            base,
            inputs: self.cx.inputs,
        };
        let forms = self.cx.rules.forms_in(field);
        let Expanded {
            value,
            shown,
            secret,
        } = expand(text, forms, &mut src).map_err(|p| self.problem(label, p))?;
        if secret {
            let slot = shown_as.unwrap_or_else(|| field.shown_name().to_owned());
            self.shown.insert(slot, shown);
        }
        Ok(value)
    }

    fn problem(&self, field: &str, problem: Problem) -> ConfigError {
        let path = self.cx.path.to_owned();
        let server = self.name.clone();
        let field = field.to_owned();
        match problem {
            Problem::Unset(variable) => ConfigError::UnsetVariable {
                path,
                server,
                field,
                variable,
            },
            Problem::Unsupported(expression) => ConfigError::UnsupportedVariable {
                path,
                server,
                field,
                expression,
                host: self.cx.rules.host,
            },
            Problem::NoWorkspace => ConfigError::NoWorkspace {
                path,
                server,
                field,
            },
            Problem::InputNeeded(id) => ConfigError::InputNeeded {
                path,
                server,
                field,
                id,
            },
            Problem::UnknownInput(id) => ConfigError::UnknownInput {
                path,
                server,
                field,
                id,
            },
            Problem::InputFailed { id, reason } => ConfigError::InputFailed {
                path,
                server,
                id,
                reason,
            },
            Problem::File { file, error } => ConfigError::Referenced {
                path,
                server,
                field,
                file,
                source: Arc::new(error),
            },
        }
    }

    /// A string field, expanded if the host expands `field`.
    pub(crate) fn text(&mut self, key: &str, field: Field) -> Result<Option<String>, ConfigError> {
        match self.string(key)? {
            None => Ok(None),
            Some(s) => self.expand(key, field, &s, None).map(Some),
        }
    }

    /// An array of strings (`args`), each expanded if the host expands `field`.
    pub(crate) fn list(
        &mut self,
        key: &str,
        field: Field,
        shown_offset: usize,
    ) -> Result<Option<Vec<String>>, ConfigError> {
        let Some(items) = self.names(key)? else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let slot = format!("{}[{}]", field.shown_name(), i + shown_offset);
            out.push(self.expand(&format!("{key}[{i}]"), field, item, Some(slot))?);
        }
        Ok(Some(out))
    }

    /// An object of strings (`headers`), each value expanded if the host expands `field`.
    pub(crate) fn map(
        &mut self,
        key: &str,
        field: Field,
    ) -> Result<Option<BTreeMap<String, String>>, ConfigError> {
        let Some(pairs) = self.name_map(key)? else {
            return Ok(None);
        };
        let mut out = BTreeMap::new();
        for (name, value) in pairs {
            let slot = format!("{}.{name}", field.shown_name());
            let value = self.expand(&format!("{key}.{name}"), field, &value, Some(slot))?;
            out.insert(name, value);
        }
        Ok(Some(out))
    }

    /// `env`: strings (numbers and booleans as written), each expanded if the host expands
    /// `env`; a `null` value names a variable to remove (VS Code), in the second list.
    pub(crate) fn env(
        &mut self,
        key: &str,
    ) -> Result<(BTreeMap<String, String>, Vec<String>), ConfigError> {
        let mut out = BTreeMap::new();
        let mut removed = Vec::new();
        let pairs = match self.take(key) {
            None | Some(Node::Null) => return Ok((out, removed)),
            Some(Node::Object(o)) => o.into_entries(),
            Some(other) => {
                return Err(self.invalid(key, &format!("an object, not {}", other.kind())))
            }
        };
        for (name, value) in pairs {
            let label = format!("{key}.{name}");
            let text = match value {
                Node::String(s) => s,
                Node::Number(n) => n.to_string(),
                Node::Bool(b) => b.to_string(),
                Node::Null => {
                    removed.push(name);
                    continue;
                }
                other => {
                    return Err(self.invalid(&label, &format!("a string, not {}", other.kind())))
                }
            };
            let value = self.expand(&label, Field::Env, &text, Some(label.clone()))?;
            out.insert(name, value);
        }
        Ok((out, removed))
    }

    /// A host's OAuth block under `key`, its client id, secret, scopes and redirect URI
    /// written under the keys `names` gives (an empty name: the host has none). Its other
    /// keys are kept as unknown keys (`key.name`); with `enabled: false` (Gemini) the block
    /// says nothing.
    pub(crate) fn oauth(&mut self, key: &str, names: [&str; 4]) -> Result<(), ConfigError> {
        let mut block = match self.take(key) {
            None | Some(Node::Null) => return Ok(()),
            Some(Node::Object(o)) => o,
            Some(other) => {
                return Err(self.invalid(key, &format!("an object, not {}", other.kind())))
            }
        };
        let mut text = |name: &str, e: &Self| -> Result<Option<String>, ConfigError> {
            match (name.is_empty(), block.take(name)) {
                (true, _) | (_, None | Some(Node::Null)) => Ok(None),
                (_, Some(Node::String(s))) => Ok(Some(s)),
                (_, Some(other)) => Err(e.invalid(
                    &format!("{key}.{name}"),
                    &format!("a string, not {}", other.kind()),
                )),
            }
        };
        let client_id = text(names[0], self)?;
        let client_secret = text(names[1], self)?;
        let redirect_uri = text(names[3], self)?;
        let scopes = match block.take(names[2]) {
            None | Some(Node::Null) => None,
            // One string of scopes, separated by spaces, as OAuth writes them.
            Some(Node::String(s)) => Some(s.split_whitespace().map(str::to_owned).collect()),
            Some(Node::Array(items)) => Some(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, n)| match n {
                        Node::String(s) => Ok(s),
                        other => Err(self.invalid(
                            &format!("{key}.{}[{i}]", names[2]),
                            &format!("a string, not {}", other.kind()),
                        )),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(other) => {
                return Err(self.invalid(
                    &format!("{key}.{}", names[2]),
                    &format!("an array of strings, not {}", other.kind()),
                ))
            }
        };
        let enabled = !matches!(block.take("enabled"), Some(Node::Bool(false)));
        for (name, value) in block.into_entries() {
            let name = format!("{key}.{name}");
            self.cx.warnings.push(Warning::UnknownKey {
                path: self.cx.path.to_owned(),
                server: self.name.clone(),
                key: name.clone(),
            });
            self.settings.unknown.insert(name, value.to_json());
        }
        let settings = OAuthSettings {
            client_id,
            client_secret,
            scopes,
            redirect_uri,
        };
        if enabled && settings != OAuthSettings::default() {
            self.settings.oauth = Some(settings);
        }
        Ok(())
    }

    /// `enabled` / `disabled` (both allowed, but they must agree) and `protocolEra`.
    pub(crate) fn flags(&mut self) -> Result<(), ConfigError> {
        let enabled = self.bool("enabled")?;
        let disabled = self.bool("disabled")?;
        self.settings.enabled = match (enabled, disabled) {
            (Some(e), Some(d)) if e == d => {
                return Err(ConfigError::Conflict {
                    path: self.cx.path.to_owned(),
                    server: self.name.clone(),
                })
            }
            (Some(e), _) => e,
            (None, Some(d)) => !d,
            (None, None) => true,
        };
        if let Some(era) = self.string("protocolEra")? {
            self.settings.era = Some(match era.to_ascii_lowercase().as_str() {
                "auto" => Era::Auto,
                "legacy" => Era::Handshake,
                "modern" => Era::Stateless,
                _ => return Err(self.invalid("protocolEra", "auto, legacy or modern")),
            });
        }
        Ok(())
    }

    /// A stdio server: `command` (a string, or an array of the command and its first
    /// arguments), `args`, `env`, `cwd`, and `envFile` when `env_file` names its key.
    pub(crate) fn stdio(&mut self, env_file: Option<&str>) -> Result<StdioConfig, ConfigError> {
        let (command, mut args) = match self.take("command") {
            None | Some(Node::Null) => return Err(self.missing("command")),
            Some(Node::String(s)) => (self.expand("command", Field::Command, &s, None)?, vec![]),
            Some(Node::Array(words)) if !words.is_empty() => {
                let mut out = Vec::new();
                for (i, w) in words.into_iter().enumerate() {
                    let Node::String(w) = w else {
                        return Err(self.invalid(&format!("command[{i}]"), "a string"));
                    };
                    let (field, slot) = match i {
                        0 => (Field::Command, "command".to_owned()),
                        _ => (Field::Args, format!("args[{}]", i - 1)),
                    };
                    out.push(self.expand(&format!("command[{i}]"), field, &w, Some(slot))?);
                }
                let command = out.remove(0);
                (command, out)
            }
            Some(other) => {
                return Err(self.invalid("command", &format!("a string, not {}", other.kind())))
            }
        };
        let offset = args.len();
        args.extend(self.list("args", Field::Args, offset)?.unwrap_or_default());
        let (mut env, env_remove) = self.env("env")?;
        if let Some(key) = env_file {
            if let Some(file) = self.text(key, Field::EnvFile)? {
                let file = resolve(&self.cx.base_dir(), &file, self.cx.home);
                for (name, value) in self.read_env_file(key, &file)? {
                    // A variable `env` removes stays removed.
                    if !env_remove.contains(&name) {
                        env.entry(name).or_insert(value);
                    }
                }
                self.settings.env_file = Some(file);
            }
        }
        let cwd = self.text("cwd", Field::Cwd)?.map(PathBuf::from);
        Ok(StdioConfig {
            command,
            args,
            env,
            env_remove,
            cwd,
            ..StdioConfig::default()
        })
    }

    fn read_env_file(&self, key: &str, file: &Path) -> Result<Vec<(String, String)>, ConfigError> {
        let text = std::fs::read_to_string(file).map_err(|e| ConfigError::Referenced {
            path: self.cx.path.to_owned(),
            server: self.name.clone(),
            field: key.to_owned(),
            file: file.to_owned(),
            source: Arc::new(e),
        })?;
        parse_env_file(&text).map_err(|bad| ConfigError::EnvFileSyntax {
            file: file.to_owned(),
            line: bad.0,
            server: self.name.clone(),
        })
    }

    /// An HTTP server: the URL under `url_key`, and `headers`.
    pub(crate) fn http(
        &mut self,
        kind: HttpKind,
        url_key: &str,
    ) -> Result<HttpConfig, ConfigError> {
        let url = self
            .text(url_key, Field::Url)?
            .ok_or_else(|| self.missing(url_key))?;
        self.check_url(url_key, &url)?;
        let headers = self.map("headers", Field::Headers)?.unwrap_or_default();
        for (name, value) in &headers {
            self.check_header("headers", name, value)?;
        }
        Ok(HttpConfig {
            kind,
            url,
            headers,
            extra: serde_json::Map::new(),
        })
    }

    /// The server, with what is left over kept as unknown keys and reported.
    pub(crate) fn finish(mut self, config: ServerConfig) -> LoadedServer {
        for (key, value) in std::mem::take(&mut self.obj).into_entries() {
            self.cx.warnings.push(Warning::UnknownKey {
                path: self.cx.path.to_owned(),
                server: self.name.clone(),
                key: key.clone(),
            });
            self.settings.unknown.insert(key, value.to_json());
        }
        LoadedServer {
            name: self.name,
            config,
            settings: self.settings,
            origin: Origin {
                path: self.cx.path.to_owned(),
                host: self.cx.rules.host,
                scope: self.cx.scope,
            },
            shown: self.shown,
        }
    }
}
