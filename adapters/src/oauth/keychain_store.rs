//! A [`TokenStore`] in the OS keychain (the `keychain` feature), through the `keyring` crate;
//! see [`KeychainTokenStore`].

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::file_store::{key, FileTokenStore, StoredSignIn};
use super::store::{BlockingStore, KnownClient, StoreError};
use crate::disk::write_atomic;
use crate::future::BoxFuture;
use mcpwire_core::oauth::flow::Credentials;

/// The format number written in each index file; a file of another is ignored.
const FORMAT: u32 = 1;

/// One keychain operation at a time in the process (the index read and written with it).
static KEYCHAIN: Mutex<()> = Mutex::new(());

/// Tokens and clients in the OS keychain (the macOS Keychain, the Windows Credential Manager,
/// or the Secret Service over D-Bus on Linux and FreeBSD), with an index in files.
///
/// Each record that holds a secret is a keychain entry of the service
/// [`KeychainTokenStore::SERVICE`]: the credentials (tokens, client authentication) per server
/// and issuer, the client per issuer, each named by a hash (no URL in a name). A keychain
/// cannot list its entries the same way on every OS, so what is kept is also written in an
/// index, with no secret in it:
///
/// ```text
/// oauth/                             0700   (FileTokenStore::default_dir)
///   keychain/tokens/<key>.json       0600   {"format":1,"server":…,"issuer":…,"expiresAt":…,…}
///   keychain/clients/<key>.json      0600   {"format":1,"issuer":…,"parts":1}
/// ```
///
/// The index is in files beside the file store's rather than in a keychain entry of its own:
/// listing sign-ins ([`KeychainTokenStore::sign_ins`], `auth list`) then needs no keychain
/// access (no unlock prompt), each record's index is one small file written atomically (no
/// shared list rewritten by concurrent processes), and it holds nothing that needs protecting.
/// An entry removed from the keychain by hand leaves an index file without its secret: that
/// sign-in is treated as absent.
///
/// A record longer than [`KeychainTokenStore::PART`] bytes is kept in several entries (the
/// Windows Credential Manager takes 2560 bytes per credential; tokens are often longer).
///
/// Keychain calls block; they run off the async threads (on the blocking pool of the runtime
/// the store is called in: tokio's in a tokio host, else smol's), one at a time in the process
/// (the Secret Service does not take concurrent calls from one process well).
///
/// On Linux and FreeBSD the Secret Service is reached through zbus on async-io, in a tokio host
/// too (keyring 3.6 names zbus with its default features, whose runtime is async-io): there a
/// keychain call starts async-io's thread.
/// The macOS Keychain and the Windows Credential Manager need no runtime.
#[derive(Debug, Clone)]
pub struct KeychainTokenStore {
    dir: PathBuf,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenIndex {
    format: u32,
    server: String,
    issuer: String,
    /// Unix microseconds: the order of saving (the latest one is loaded).
    saved_at_us: u64,
    expires_at: Option<u64>,
    refreshable: bool,
    scopes: Vec<String>,
    /// How many keychain entries the record takes.
    parts: usize,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClientIndex {
    format: u32,
    issuer: String,
    parts: usize,
}

impl KeychainTokenStore {
    /// The keychain service every entry is kept under.
    pub const SERVICE: &'static str = "mcpwire";

    /// The most bytes one keychain entry holds; a longer record is split in several.
    pub const PART: usize = 2048;

    /// The store with its index in [`FileTokenStore::default_dir`], once the keychain has
    /// answered (see [`KeychainTokenStore::open_in`]).
    pub fn open() -> Result<KeychainTokenStore, StoreError> {
        let files = FileTokenStore::open_default()?;
        Self::open_in(files.dir())
    }

    /// The store with its index under `dir` (the folder a [`FileTokenStore`] would use), once
    /// the keychain has answered: one entry is looked up (none is written). Where there is no
    /// keychain (no Secret Service on the session bus, no session bus, a platform without a
    /// keychain backend) fails with `no OS keychain (<the reason>)`.
    pub fn open_in(dir: impl Into<PathBuf>) -> Result<KeychainTokenStore, StoreError> {
        probe()?;
        Ok(KeychainTokenStore { dir: dir.into() })
    }

    /// The folder of the index (the keychain holds the rest).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every sign-in kept, by server then issuer (what `auth list` shows), from the index
    /// alone: the keychain is not asked.
    pub fn sign_ins(&self) -> Result<Vec<StoredSignIn>, StoreError> {
        let mut all: Vec<StoredSignIn> = self
            .token_index()?
            .into_iter()
            .map(|(_, i)| StoredSignIn {
                server: i.server,
                issuer: i.issuer,
                expires_at: i.expires_at,
                refreshable: i.refreshable,
                scopes: i.scopes,
                saved_at: i.saved_at_us / 1_000_000,
            })
            .collect();
        all.sort_by(|a, b| (&a.server, &a.issuer).cmp(&(&b.server, &b.issuer)));
        Ok(all)
    }

    fn tokens_dir(&self) -> PathBuf {
        self.dir.join("keychain").join("tokens")
    }

    fn clients_dir(&self) -> PathBuf {
        self.dir.join("keychain").join("clients")
    }

    /// Every readable token index file of the current format, with its key.
    fn token_index(&self) -> Result<Vec<(String, TokenIndex)>, StoreError> {
        Ok(read_index::<TokenIndex>(&self.tokens_dir())?
            .into_iter()
            .filter(|(_, i)| i.format == FORMAT)
            .collect())
    }
}

impl BlockingStore for KeychainTokenStore {
    fn load_now(&self, server: &str) -> Result<Option<Credentials>, StoreError> {
        let mut kept: Vec<_> = self
            .token_index()?
            .into_iter()
            .filter(|(_, i)| i.server == server)
            .collect();
        kept.sort_by_key(|(_, i)| std::cmp::Reverse(i.saved_at_us));
        // The latest saved whose entries are all there and read back whole.
        for (key, index) in kept {
            let Some(bytes) = read_parts(&token_account(&key), index.parts)? else {
                continue;
            };
            match serde_json::from_slice::<Credentials>(&bytes) {
                Ok(c) if c.issuer == index.issuer => return Ok(Some(c)),
                _ => continue,
            }
        }

        Ok(None)
    }

    fn save_now(&self, server: &str, credentials: Credentials) -> Result<(), StoreError> {
        let key = key(&[server, &credentials.issuer]);
        let dir = self.tokens_dir();
        let before = read_one::<TokenIndex>(&dir, &key).map_or(0, |i| i.parts);
        let bytes = serde_json::to_vec(&credentials).map_err(|e| StoreError(e.to_string()))?;
        let parts = write_parts(&token_account(&key), &bytes, before)?;
        let tokens = &credentials.tokens;
        let index = TokenIndex {
            format: FORMAT,
            server: server.to_owned(),
            issuer: credentials.issuer.clone(),
            saved_at_us: now_us(),
            expires_at: tokens.expires_at,
            refreshable: tokens.refresh_token.is_some(),
            scopes: tokens
                .scopes
                .clone()
                .unwrap_or_else(|| credentials.requested_scopes.clone()),
            parts,
        };
        write_index(&dir, &key, &index)
    }

    fn remove_now(&self, server: &str) -> Result<(), StoreError> {
        let dir = self.tokens_dir();
        for (key, index) in self.token_index()? {
            if index.server == server {
                // The secret first: when the keychain refuses, the index still says what to
                // remove next time.
                delete_parts(&token_account(&key), 0, index.parts)?;
                remove_index(&dir, &key)?;
            }
        }

        Ok(())
    }

    fn clients_now(&self) -> Result<Vec<KnownClient>, StoreError> {
        let mut all = Vec::new();
        for (key, index) in read_index::<ClientIndex>(&self.clients_dir())? {
            if index.format != FORMAT {
                continue;
            }

            let Some(bytes) = read_parts(&client_account(&key), index.parts)? else {
                continue;
            };
            match serde_json::from_slice::<KnownClient>(&bytes) {
                Ok(c) if c.issuer == index.issuer => all.push(c),
                _ => {}
            }
        }

        Ok(all)
    }

    fn save_client_now(&self, client: KnownClient) -> Result<(), StoreError> {
        let key = key(&[&client.issuer]);
        let dir = self.clients_dir();
        let before = read_one::<ClientIndex>(&dir, &key).map_or(0, |i| i.parts);
        let bytes = serde_json::to_vec(&client).map_err(|e| StoreError(e.to_string()))?;
        let parts = write_parts(&client_account(&key), &bytes, before)?;
        let index = ClientIndex {
            format: FORMAT,
            issuer: client.issuer,
            parts,
        };
        write_index(&dir, &key, &index)
    }

    /// Runs `f` off the async threads (keychain calls and file IO block), one at a time.
    fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(Self) -> Result<T, StoreError> + Send + 'static,
    ) -> BoxFuture<Result<T, StoreError>> {
        let store = self.clone();
        crate::runtime::host::unblock_here(move || {
            // A poisoned lock only means a panic elsewhere mid-call: the keychain is still there.
            let _one = KEYCHAIN.lock().unwrap_or_else(|e| e.into_inner());
            f(store)
        })
    }
}

/// Whether the keychain answers: one lookup of an entry never written.
#[cfg(any(
    target_os = "macos",
    target_os = "windows",
    target_os = "linux",
    target_os = "freebsd"
))]
fn probe() -> Result<(), StoreError> {
    let _one = KEYCHAIN.lock().unwrap_or_else(|e| e.into_inner());
    let looked_up = keyring::Entry::new(KeychainTokenStore::SERVICE, "probe")
        .and_then(|entry| entry.get_secret());
    match looked_up {
        Ok(_) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(e) => Err(no_keychain(&reason(&e))),
    }
}

#[cfg(not(any(
    target_os = "macos",
    target_os = "windows",
    target_os = "linux",
    target_os = "freebsd"
)))]
fn probe() -> Result<(), StoreError> {
    Err(no_keychain("no keychain backend for this platform"))
}

/// The probe's failure: `no OS keychain (<reason>)`.
fn no_keychain(reason: &str) -> StoreError {
    StoreError(format!("no OS keychain ({reason})"))
}

/// The keychain account of a token record (`key`: a hash of the server's URL and the issuer).
fn token_account(key: &str) -> String {
    format!("oauth-token-{key}")
}

/// The keychain account of a client record (`key`: a hash of the issuer).
fn client_account(key: &str) -> String {
    format!("oauth-client-{key}")
}

/// The account of part `n` of a record (the first has the record's own name).
fn part_account(account: &str, n: usize) -> String {
    if n == 0 {
        account.to_owned()
    } else {
        format!("{account}-part{n}")
    }
}

fn entry(account: &str) -> Result<keyring::Entry, StoreError> {
    keyring::Entry::new(KeychainTokenStore::SERVICE, account)
        .map_err(|e| keychain_error("naming an entry", &e))
}

/// A keychain failure in words. `keyring`'s own words never hold the secret (its
/// "not UTF-8" error keeps the bytes but does not print them); neither do these.
fn keychain_error(doing: &str, e: &keyring::Error) -> StoreError {
    StoreError(format!("OS keychain, {doing}: {}", reason(e)))
}

/// The platform's own words where it gave some.
fn reason(e: &keyring::Error) -> String {
    match e {
        keyring::Error::NoStorageAccess(inner) | keyring::Error::PlatformFailure(inner) => {
            inner.to_string()
        }
        other => other.to_string(),
    }
}

/// Writes `bytes` as `account`'s parts; removes the parts beyond them a record of `before`
/// parts had. Returns how many parts it took.
fn write_parts(account: &str, bytes: &[u8], before: usize) -> Result<usize, StoreError> {
    let chunks: Vec<&[u8]> = if bytes.is_empty() {
        vec![bytes]
    } else {
        bytes.chunks(KeychainTokenStore::PART).collect()
    };
    for (n, chunk) in chunks.iter().enumerate() {
        entry(&part_account(account, n))?
            .set_secret(chunk)
            .map_err(|e| keychain_error("writing an entry", &e))?;
    }
    delete_parts(account, chunks.len(), before)?;
    Ok(chunks.len())
}

/// `account`'s record, its `parts` joined; `None` when an entry is missing.
fn read_parts(account: &str, parts: usize) -> Result<Option<Vec<u8>>, StoreError> {
    let mut bytes = Vec::new();
    for n in 0..parts.max(1) {
        match entry(&part_account(account, n))?.get_secret() {
            Ok(part) => bytes.extend_from_slice(&part),
            Err(keyring::Error::NoEntry) => return Ok(None),
            Err(e) => return Err(keychain_error("reading an entry", &e)),
        }
    }
    Ok(Some(bytes))
}

/// Deletes `account`'s parts `from..to` (those already gone are fine).
fn delete_parts(account: &str, from: usize, to: usize) -> Result<(), StoreError> {
    for n in from..to {
        match entry(&part_account(account, n))?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => {}
            Err(e) => return Err(keychain_error("removing an entry", &e)),
        }
    }
    Ok(())
}

/// Every readable index file in `dir`, with its key (its name without `.json`).
fn read_index<T: DeserializeOwned>(dir: &Path) -> Result<Vec<(String, T)>, StoreError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error("reading", dir, &e)),
    };
    let mut all = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        // Temporary files of a write under way (or cut short) start with a dot.
        let Some(key) = path
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.starts_with('.'))
            .and_then(|n| n.strip_suffix(".json"))
        else {
            continue;
        };
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        if let Ok(index) = serde_json::from_slice::<T>(&bytes) {
            all.push((key.to_owned(), index));
        }
    }
    Ok(all)
}

/// The index file of `key` in `dir`, if there is a readable one.
fn read_one<T: DeserializeOwned>(dir: &Path, key: &str) -> Option<T> {
    let bytes = std::fs::read(dir.join(format!("{key}.json"))).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn write_index(dir: &Path, key: &str, index: &impl Serialize) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec_pretty(index).map_err(|e| StoreError(e.to_string()))?;
    write_atomic(dir, key, &bytes).map_err(|e| io_error("writing", dir, &e))
}

fn remove_index(dir: &Path, key: &str) -> Result<(), StoreError> {
    let path = dir.join(format!("{key}.json"));
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error("removing", &path, &e)),
    }
}

/// Unix microseconds, never the same twice in the process (the order of saving).
fn now_us() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
    let prev = LAST
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| {
            Some(now.max(last + 1))
        })
        .unwrap_or(0);
    now.max(prev + 1)
}

fn io_error(doing: &str, path: &Path, e: &std::io::Error) -> StoreError {
    StoreError(format!("{doing} {}: {e}", path.display()))
}
