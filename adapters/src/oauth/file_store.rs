//! A [`TokenStore`] in files, kept between runs: one file per server and issuer, one per
//! issuer's client.
//!
//! Layout, under the folder given (by default [`FileTokenStore::default_dir`]):
//!
//! ```text
//! oauth/                         0700
//!   tokens/<key>.json            0600   {"format":1,"server":…,"savedAt":…,"credentials":{…}}
//!   clients/<key>.json           0600   {"format":1,"client":{…}}
//! ```
//!
//! A token file's key is a hash of the server's URL and the issuer; a client's, of the issuer.
//! Files are written atomically (a temporary file in the same folder, synced, renamed over the
//! old one), so a write cut short leaves the old file whole. On Windows the folder inherits the
//! user profile's access rules (no mode bits), the documented fallback.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::store::{BlockingStore, KnownClient, StoreError};
use crate::disk::{hex, sha256, write_atomic, Encoder};
use crate::future::BoxFuture;
use mcpwire_core::oauth::flow::Credentials;

/// The format number written in each file; a file of another is ignored.
const FORMAT: u32 = 1;

/// Tokens and clients in files (see the module docs).
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    dir: PathBuf,
}

/// What `auth list` shows of one stored sign-in: never a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSignIn {
    /// The server's URL.
    pub server: String,
    /// The authorization server that issued the tokens.
    pub issuer: String,
    /// When the access token expires (Unix seconds), if it said.
    pub expires_at: Option<u64>,
    /// Whether there is a refresh token.
    pub refreshable: bool,
    /// The scopes granted (or requested, when the server did not say).
    pub scopes: Vec<String>,
    /// When it was saved (Unix seconds).
    pub saved_at: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenFile {
    format: u32,
    server: String,
    saved_at: u64,
    credentials: Credentials,
}

#[derive(Serialize, Deserialize)]
struct ClientFile {
    format: u32,
    client: KnownClient,
}

impl FileTokenStore {
    /// A store in `dir` (created when first written).
    pub fn new(dir: impl Into<PathBuf>) -> FileTokenStore {
        FileTokenStore { dir: dir.into() }
    }

    /// The user's folder for mcpwire's sign-ins: `$MCPWIRE_STATE_DIR/oauth` when set, else
    /// `$XDG_STATE_HOME/mcpwire/oauth` or `~/.local/state/mcpwire/oauth` on Linux and other
    /// Unix, `~/Library/Application Support/mcpwire/oauth` on macOS,
    /// `%LOCALAPPDATA%\mcpwire\oauth` (else `%USERPROFILE%\AppData\Local\mcpwire\oauth`) on
    /// Windows; `None` when none can be found.
    pub fn default_dir() -> Option<PathBuf> {
        let abs = std::env::var_os("MCPWIRE_STATE_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());
        if let Some(dir) = abs {
            return Some(dir.join("oauth"));
        }
        crate::os::user_dirs().state().map(|d| d.join("oauth"))
    }

    /// The store in [`FileTokenStore::default_dir`].
    pub fn open_default() -> Result<FileTokenStore, StoreError> {
        let unset = if cfg!(windows) {
            "no folder for sign-ins (neither LOCALAPPDATA nor USERPROFILE is set)"
        } else {
            "no folder for sign-ins (HOME is not set)"
        };
        Self::default_dir()
            .map(FileTokenStore::new)
            .ok_or_else(|| StoreError(unset.into()))
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every sign-in kept, by server then issuer (what `auth list` shows).
    pub fn sign_ins(&self) -> Result<Vec<StoredSignIn>, StoreError> {
        let mut all: Vec<StoredSignIn> = self
            .token_files()?
            .into_iter()
            .map(|(_, f)| {
                let tokens = &f.credentials.tokens;
                StoredSignIn {
                    server: f.server,
                    issuer: f.credentials.issuer.clone(),
                    expires_at: tokens.expires_at,
                    refreshable: tokens.refresh_token.is_some(),
                    scopes: tokens
                        .scopes
                        .clone()
                        .unwrap_or_else(|| f.credentials.requested_scopes.clone()),
                    saved_at: f.saved_at,
                }
            })
            .collect();
        all.sort_by(|a, b| (&a.server, &a.issuer).cmp(&(&b.server, &b.issuer)));
        Ok(all)
    }

    fn tokens_dir(&self) -> PathBuf {
        self.dir.join("tokens")
    }

    fn clients_dir(&self) -> PathBuf {
        self.dir.join("clients")
    }

    /// Every readable token file of the current format, with its path.
    fn token_files(&self) -> Result<Vec<(PathBuf, TokenFile)>, StoreError> {
        let entries = match std::fs::read_dir(self.tokens_dir()) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error("reading", &self.tokens_dir(), &e)),
        };
        let mut files = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            // Temporary files of a write under way (or cut short) start with a dot.
            if path.extension().is_none_or(|e| e != "json") || hidden(&path) {
                continue;
            }
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            match serde_json::from_slice::<TokenFile>(&bytes) {
                Ok(f) if f.format == FORMAT => files.push((path, f)),
                _ => {}
            }
        }
        Ok(files)
    }

    /// The store's own folder, `0700` on Unix.
    fn create_root(&self) -> Result<(), StoreError> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(&self.dir)
            .map_err(|e| io_error("creating", &self.dir, &e))
    }
}

impl BlockingStore for FileTokenStore {
    fn load_now(&self, server: &str) -> Result<Option<Credentials>, StoreError> {
        Ok(self
            .token_files()?
            .into_iter()
            .filter(|(_, f)| f.server == server)
            .max_by_key(|(_, f)| f.saved_at)
            .map(|(_, f)| f.credentials))
    }

    fn save_now(&self, server: &str, credentials: Credentials) -> Result<(), StoreError> {
        let key = key(&[server, &credentials.issuer]);
        let file = TokenFile {
            format: FORMAT,
            server: server.to_owned(),
            saved_at: super::run::unix_now(),
            credentials,
        };
        let bytes = serde_json::to_vec_pretty(&file).map_err(|e| StoreError(e.to_string()))?;
        let dir = self.tokens_dir();
        self.create_root()?;
        write_atomic(&dir, &key, &bytes).map_err(|e| io_error("writing", &dir, &e))
    }

    fn remove_now(&self, server: &str) -> Result<(), StoreError> {
        for (path, f) in self.token_files()? {
            if f.server == server {
                std::fs::remove_file(&path).map_err(|e| io_error("removing", &path, &e))?;
            }
        }

        Ok(())
    }

    fn clients_now(&self) -> Result<Vec<KnownClient>, StoreError> {
        let entries = match std::fs::read_dir(self.clients_dir()) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error("reading", &self.clients_dir(), &e)),
        };
        Ok(entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json") && !hidden(p))
            .filter_map(|p| std::fs::read(p).ok())
            .filter_map(|b| serde_json::from_slice::<ClientFile>(&b).ok())
            .filter(|f| f.format == FORMAT)
            .map(|f| f.client)
            .collect())
    }

    fn save_client_now(&self, client: KnownClient) -> Result<(), StoreError> {
        let key = key(&[&client.issuer]);
        let file = ClientFile {
            format: FORMAT,
            client,
        };
        let bytes = serde_json::to_vec_pretty(&file).map_err(|e| StoreError(e.to_string()))?;
        let dir = self.clients_dir();
        self.create_root()?;
        write_atomic(&dir, &key, &bytes).map_err(|e| io_error("writing", &dir, &e))
    }

    /// Runs `f` off the async threads (file IO blocks): on the blocking pool of the runtime
    /// it is called in (tokio's inside a tokio runtime, else smol's).
    fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(Self) -> Result<T, StoreError> + Send + 'static,
    ) -> BoxFuture<Result<T, StoreError>> {
        let store = self.clone();
        crate::runtime::host::unblock_here(move || f(store))
    }
}

/// A file name for these parts: a hash, so no URL or issuer appears in a name.
pub(super) fn key(parts: &[&str]) -> String {
    let mut enc = Encoder(Vec::new());
    enc.field(b"mcpwire oauth 1");
    for p in parts {
        enc.field(p.as_bytes());
    }
    hex(&sha256(&enc.0)[..16])
}

fn hidden(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.'))
}

fn io_error(doing: &str, path: &Path, e: &std::io::Error) -> StoreError {
    StoreError(format!("{doing} {}: {e}", path.display()))
}
