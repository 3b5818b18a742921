//! Servers as users already describe them: every host's configuration file, read as it is.
//!
//! Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Zed, Codex, Gemini CLI, the
//! portable Copilot format and the MCP Inspector each keep their servers in their own file,
//! spelled their own way (`mcpServers`, `servers` + `inputs`, `context_servers`, TOML
//! `[mcp_servers.NAME]`), and each expands its own variables (`${VAR}`, `${VAR:-default}`,
//! `${env:VAR}`, `${userHome}`, `${workspaceFolder}`, `${input:id}`, `$VAR`, `${file:path}`) in
//! its own fields. A [`Loader`] reads any of them into named [`ServerConfig`]s, with the
//! settings hosts carry beside the transport ([`ServerSettings`]: enabled, timeouts, tool
//! filters, protocol era) and where each came from.
//!
//! - **Recognised by name and shape.** [`Loader::load_file`] tells the host from the file's
//!   name and folder and its top-level keys, and says which it took ([`FileRead`]).
//!   [`Loader::load_host`] reads a host's usual places, the project's file first, then the
//!   user's; [`Loader::discover`] lists every host's files that exist.
//! - **Variables expanded exactly as each host does**, in the fields it expands them in, from
//!   an injectable [`Environment`]. An unset variable is an error naming the variable, the
//!   field and the server: never an empty string, never literal text.
//! - **Nothing is lost.** Keys mcpwire does not know are kept
//!   ([`ServerSettings::unknown`]) and reported ([`Warning::UnknownKey`]).
//! - **Secrets stay secret.** Values from the environment, inputs and files, `env` values and
//!   credential headers print as `***` in [`LoadedServer`]'s `Debug` and `Display`, and no
//!   error or warning holds a value.
//!
//! Reading is all this module does: it opens no connection and imports nothing of the client,
//! the driver or the transports (a loaded server's [`ServerConfig`] goes to
//! [`connect`](crate::connect), or to the [`Manager`](crate::manager::Manager)).
//!
//! ```no_run
//! # fn run() -> Result<(), mcpwire::hosts::ConfigError> {
//! use mcpwire::hosts::{Host, Loader};
//!
//! let mut loader = Loader::from_process()?;
//! let loaded = loader.load_host(Host::ClaudeCode)?;
//! for warning in &loaded.warnings {
//!     eprintln!("warning: {warning}");
//! }
//! for server in loaded.servers.iter().filter(|s| s.settings.enabled) {
//!     println!("{server}"); // name, transport, command or URL; secrets as ***
//!     // mcpwire::connect_smol(&server.config, ...)
//! }
//! # Ok(()) }
//! ```

mod error;
mod formats;
mod host;
mod node;
mod places;
mod secret;
mod server;
mod vars;

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

pub use error::{ConfigError, Warning};
pub use formats::{Detection, CODEX_ENV_VARS};
pub use host::Host;
pub use mcpwire_core::config::{HttpConfig, HttpKind, InheritEnv, ServerConfig, StdioConfig};
pub use places::Place;
pub use secret::is_credential_header;
pub use server::{LoadedServer, OAuthSettings, Origin, Scope, ServerSettings, ToolFilter};
pub use vars::{Environment, InputCallback, InputSpec, ProcessEnv};

use crate::os::Os;
use formats::{detect, looks_like_toml, Cx, Outcome};
use places::Dirs;
use vars::dialect::rules;
use vars::inputs::Inputs;

/// Reads hosts' configuration files. It holds what expansion needs: the home directory, the
/// project directory (`${workspaceFolder}`, the project's files), the environment and the
/// callback that asks for inputs.
pub struct Loader {
    home: PathBuf,
    project: Option<PathBuf>,
    env: Box<dyn Environment>,
    inputs: Inputs,
    isolate: bool,
    only: Option<BTreeSet<String>>,
}

impl fmt::Debug for Loader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loader")
            .field("home", &self.home)
            .field("project", &self.project)
            .field("inputs", &self.inputs)
            .field("isolate", &self.isolate)
            .field("only", &self.only)
            .finish_non_exhaustive()
    }
}

/// What was loaded: the servers, the files they came from, the servers that could not be
/// read (with [`Loader::isolate_failures`], or when disabled) and what is worth telling.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Loaded {
    /// The files read, in order.
    pub files: Vec<FileRead>,
    /// The servers, in file order (for a host's several files: the one that takes
    /// precedence first; a name appears once).
    pub servers: Vec<LoadedServer>,
    /// The servers that could not be read.
    pub failed: Vec<ConfigError>,
    /// Unknown keys, variables left as written, shadowed servers, …
    pub warnings: Vec<Warning>,
}

impl Loaded {
    /// The server named `name`.
    pub fn get(&self, name: &str) -> Option<&LoadedServer> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// The servers to start (not disabled).
    pub fn enabled(&self) -> impl Iterator<Item = &LoadedServer> {
        self.servers.iter().filter(|s| s.settings.enabled)
    }
}

/// A file that was read, and as which host's.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileRead {
    /// The file.
    pub path: PathBuf,
    /// The host whose format it was read in.
    pub host: Host,
    /// Which of the host's scopes it is.
    pub scope: Scope,
    /// How the host was decided.
    pub detection: Detection,
}

impl Loader {
    /// A loader for the user whose home directory is `home`, expanding from `env`.
    pub fn new(home: impl Into<PathBuf>, env: impl Environment + 'static) -> Loader {
        Loader {
            home: home.into(),
            project: None,
            env: Box::new(env),
            inputs: Inputs::default(),
            isolate: false,
            only: None,
        }
    }

    /// A loader for this process: its environment, the home directory it names (`HOME`; on
    /// Windows `USERPROFILE`, as the hosts take it there, else `HOME`) and the current
    /// directory as the project.
    pub fn from_process() -> Result<Loader, ConfigError> {
        let env = ProcessEnv;
        let home = home_of(Os::current(), &env).ok_or(ConfigError::NoHome)?;
        let loader = Loader::new(home, env);
        Ok(match std::env::current_dir() {
            Ok(dir) => loader.project(dir),
            Err(_) => loader,
        })
    }

    /// Sets the project directory: where the project's files are looked for, and what
    /// `${workspaceFolder}` is (for a file inside another project's host folder, such as
    /// `/other/.vscode/mcp.json`, that project's).
    pub fn project(mut self, dir: impl Into<PathBuf>) -> Loader {
        self.project = Some(dir.into());
        self
    }

    /// Sets how inputs (`${input:id}`) are asked for. Each is asked once per loader; without
    /// a callback, a server that needs one fails to load with [`ConfigError::InputNeeded`].
    pub fn on_input(
        mut self,
        ask: impl FnMut(&InputSpec) -> Result<String, String> + Send + 'static,
    ) -> Loader {
        self.inputs.callback = Some(Box::new(ask));
        self
    }

    /// Makes a server that cannot be read land in [`Loaded::failed`] instead of failing the
    /// whole load. (A disabled server's failure always does.)
    pub fn isolate_failures(mut self) -> Loader {
        self.isolate = true;
        self
    }

    /// Reads only the servers with these names (so that no other server's variables are
    /// expanded, nor its inputs asked for).
    pub fn only<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Loader {
        self.only = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Forgets the inputs answered so far: they will be asked again.
    pub fn forget_inputs(&mut self) {
        self.inputs.forget();
    }

    /// Reads `path`, recognising its host by name and shape.
    pub fn load_file(&mut self, path: impl AsRef<Path>) -> Result<Loaded, ConfigError> {
        let path = path.as_ref();
        let text = read(path)?;
        self.read(path, &text, None, Scope::File)
    }

    /// Reads `path` as `host`'s file.
    pub fn load_file_as(
        &mut self,
        path: impl AsRef<Path>,
        host: Host,
    ) -> Result<Loaded, ConfigError> {
        let path = path.as_ref();
        let text = read(path)?;
        self.read(path, &text, Some((host, Detection::Given)), Scope::File)
    }

    /// Reads `text` as the contents of `path` (which names it in messages and decides the
    /// host by name when `host` is `None`).
    pub fn load_str(
        &mut self,
        text: &str,
        path: impl AsRef<Path>,
        host: Option<Host>,
    ) -> Result<Loaded, ConfigError> {
        let given = host.map(|h| (h, Detection::Given));
        self.read(path.as_ref(), text, given, Scope::File)
    }

    /// The files `host` keeps its servers in, whether they exist or not, the one that takes
    /// precedence first.
    pub fn places(&self, host: Host) -> Vec<Place> {
        places::places(host, &self.dirs())
    }

    /// Every host's files that exist: the project's first, then the user's, in the order
    /// hosts.md gives (Claude Code, Cursor, VS Code, …).
    pub fn discover(&self) -> Vec<Place> {
        places::all_places(&self.dirs())
            .into_iter()
            .filter(|p| p.path.is_file())
            .collect()
    }

    /// Reads every file of `host` that exists. A server defined in several keeps the
    /// definition of the file that takes precedence (the project's over the user's; for
    /// Claude Code, `~/.claude.json`'s per-project entry over both), and the others are
    /// reported as [`Warning::Shadowed`].
    pub fn load_host(&mut self, host: Host) -> Result<Loaded, ConfigError> {
        let mut all = Loaded::default();
        for place in self.places(host) {
            let text = match std::fs::read_to_string(&place.path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(ConfigError::Read {
                        path: place.path,
                        source: Arc::new(e),
                    })
                }
            };
            let loaded = self.read(
                &place.path,
                &text,
                Some((host, Detection::FileName)),
                place.scope,
            )?;
            all.files.extend(loaded.files);
            all.servers.extend(loaded.servers);
            all.failed.extend(loaded.failed);
            all.warnings.extend(loaded.warnings);
        }
        all.servers = keep_first(all.servers, &mut all.warnings);
        Ok(all)
    }

    fn dirs(&self) -> Dirs<'_> {
        Dirs {
            os: Os::current(),
            home: &self.home,
            project: self.project.as_deref(),
            env: &*self.env,
        }
    }

    /// The project directory for a file: the one holding it in a host's project folder
    /// (`P/.vscode/mcp.json` → `P`, `P/.mcp.json` → `P`), else the loader's. A host folder in
    /// the home directory (`~/.cursor/mcp.json`) is the user's, not a project's. Always an
    /// absolute path without `.` or `..`, however the file or the project was named
    /// (`.vscode/mcp.json` from within `P` is `P` too, not `""`).
    fn workspace_for(&self, path: &Path) -> Option<PathBuf> {
        let path = absolute(path);
        let implied = || {
            let parent = path.parent()?;
            let parent_name = parent.file_name()?.to_str()?;
            let project =
                if [".vscode", ".cursor", ".gemini", ".codex", ".zed"].contains(&parent_name) {
                    parent.parent()?
                } else if path.file_name()? == ".mcp.json" {
                    parent
                } else {
                    return None;
                };
            (project != absolute(&self.home)).then(|| project.to_owned())
        };
        implied().or_else(|| self.project.as_deref().map(absolute))
    }

    fn read(
        &mut self,
        path: &Path,
        text: &str,
        given: Option<(Host, Detection)>,
        scope: Scope,
    ) -> Result<Loaded, ConfigError> {
        let toml = match given {
            Some((host, _)) => host == Host::Codex,
            None => looks_like_toml(path, text),
        };
        let root = if toml {
            node::parse_toml(path, text)?
        } else {
            node::parse_json(path, text)?
        };
        let (host, detection) = match given {
            Some(g) => g,
            None => detect(path, &root, toml).ok_or_else(|| ConfigError::Unrecognised {
                path: path.to_owned(),
            })?,
        };
        let workspace = self.workspace_for(path);
        let mut warnings = Vec::new();
        let only = self.only.clone();
        let keep = |name: &str| only.as_ref().is_none_or(|o| o.contains(name));
        let mut cx = Cx {
            path,
            rules: rules(host),
            scope,
            env: &*self.env,
            home: &self.home,
            workspace: workspace.as_deref(),
            inputs: &mut self.inputs,
            warnings: &mut warnings,
        };
        let outcomes: Vec<Outcome> = formats::read(&mut cx, &root, Some(&keep))?;
        let mut loaded = Loaded {
            files: vec![FileRead {
                path: path.to_owned(),
                host,
                scope,
                detection,
            }],
            warnings,
            ..Loaded::default()
        };
        for outcome in outcomes {
            match outcome {
                Ok(server) => loaded.servers.push(server),
                Err(failed) if failed.enabled && !self.isolate => return Err(*failed.error),
                Err(failed) => loaded.failed.push(*failed.error),
            }
        }
        loaded.servers = keep_first(loaded.servers, &mut loaded.warnings);
        Ok(loaded)
    }
}

/// `path` made absolute against the current directory, without `.` and `..` components: the
/// folder as a host names it. Symbolic links are left as they are (a `..` after one goes up
/// from the link's own name, as a person reads the path).
fn absolute(path: &Path) -> PathBuf {
    let whole = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut out = PathBuf::new();
    for part in whole.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                // `/..` is `/`.
                out.pop();
            }
            part => out.push(part),
        }
    }
    out
}

/// The home directory `env` names on `os`: `HOME`; on Windows `USERPROFILE` (what the hosts
/// and Node's `os.homedir()` take there; `HOME` may be a Unix-like shell's), else `HOME`.
fn home_of(os: Os, env: &dyn Environment) -> Option<String> {
    let var = |name: &str| env.var(name).filter(|v| !v.is_empty());
    match os {
        Os::Windows => var("USERPROFILE").or_else(|| var("HOME")),
        Os::Linux | Os::Mac => var("HOME"),
    }
}

fn read(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|e| ConfigError::Read {
        path: path.to_owned(),
        source: Arc::new(e),
    })
}

/// Keeps the first server of each name, the ones of a scope that takes precedence first.
fn keep_first(mut servers: Vec<LoadedServer>, warnings: &mut Vec<Warning>) -> Vec<LoadedServer> {
    let rank = |s: Scope| match s {
        Scope::Local | Scope::File => 0,
        Scope::Project => 1,
        Scope::User => 2,
    };
    servers.sort_by_key(|s| rank(s.origin.scope));
    let mut out: Vec<LoadedServer> = Vec::with_capacity(servers.len());
    for server in servers {
        match out.iter().find(|s| s.name == server.name) {
            Some(kept) => warnings.push(Warning::Shadowed {
                server: server.name.clone(),
                kept: kept.origin.path.clone(),
                ignored: server.origin.path.clone(),
            }),
            None => out.push(server),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn the_home_is_home_and_on_windows_the_user_profile_first() {
        let env = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let both = env(&[("HOME", "/home/msys"), ("USERPROFILE", "C:\\Users\\u")]);
        assert_eq!(home_of(Os::Linux, &both).as_deref(), Some("/home/msys"));
        assert_eq!(home_of(Os::Mac, &both).as_deref(), Some("/home/msys"));
        assert_eq!(home_of(Os::Windows, &both).as_deref(), Some("C:\\Users\\u"));
        let home_only = env(&[("HOME", "/h"), ("USERPROFILE", "")]);
        assert_eq!(home_of(Os::Windows, &home_only).as_deref(), Some("/h"));
        let profile_only = env(&[("USERPROFILE", "/p")]);
        assert_eq!(home_of(Os::Linux, &profile_only), None);
        assert_eq!(home_of(Os::Windows, &env(&[])), None);
    }
}
