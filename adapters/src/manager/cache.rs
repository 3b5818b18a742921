//! What is served while a server starts and remembered between runs: its lists and its era.
//!
//! A [`ListCache`] holds, for each server, the tool, prompt and resource lists as they were last
//! received and the era the server last spoke ([`ServerCache`]). It lives in memory and, when
//! given a folder ([`default_dir`] is the user's), in one JSON file per server, named by
//! [`cache_key`]: a hash of the server's configuration. No value of the configuration (an
//! environment value, a header) is ever written, in a name or in a file; the credentials a
//! private list was received with are kept only as a [`credentials_fingerprint`]. Files are
//! written atomically (a temporary file in the same folder, synced, then renamed), readable by
//! their owner only.
//!
//! The folder never grows without bound: [`ListCache::prune`] removes the entries not written
//! for [`CacheLimits::max_age`] (30 days), then the least recently written beyond
//! [`CacheLimits::max_entries`] (256 servers) or [`CacheLimits::max_bytes`] (64 MiB in all),
//! and the temporary files an interrupted write left. The Manager prunes its folder when it is
//! made, the command line after it writes a list.
//!
//! The cache reads no clock: wall-clock times are arguments, so it is deterministic to test.
//! Whether a list may be served is [`CachedList::freshness`], after the stateless era's caching
//! hints ([`list_hints`]): `ttlMs` (how long a result is fresh; 0 is stale at once) and
//! `cacheScope` (a `"private"` result is never served to other credentials).

use mcpwire_core::config::ServerConfig;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use crate::disk::{hex, sha256, write_atomic, Encoder};

/// Which list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ListKind {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
}

impl ListKind {
    /// The member of a list result holding the items (`"tools"`, `"prompts"`, `"resources"`).
    pub fn items_key(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Prompts => "prompts",
            ListKind::Resources => "resources",
        }
    }

    /// The method that lists them (`"tools/list"`, …).
    pub fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "tools/list",
            ListKind::Prompts => "prompts/list",
            ListKind::Resources => "resources/list",
        }
    }
}

/// A list as it was last received.
///
/// A list known to be stale (invalidated, or loaded from an earlier run without a ttl) has
/// `ttl_ms` `Some(0)`: as the stateless era reads it, stale at once.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedList {
    /// The items, as the server sent them (each a JSON object), as text: a list is kept for
    /// every server a host runs, and a parsed JSON value (a map per object) takes many times
    /// the memory of its text.
    pub items: Vec<Box<RawValue>>,
    /// Wall-clock time it was received, in milliseconds since the Unix epoch (an input; the
    /// cache reads no clock).
    pub received_at_ms: u64,
    /// The server's `ttlMs`, if any (`None`: no hint, fresh until invalidated in this run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// The server's `cacheScope`, if any (`"public"` / `"private"`; any other value counts as
    /// private).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// For a private result: a fingerprint of the credentials it was received with
    /// ([`credentials_fingerprint`]; never the credentials themselves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

impl PartialEq for CachedList {
    fn eq(&self, other: &Self) -> bool {
        self.items.len() == other.items.len()
            && self
                .items
                .iter()
                .zip(&other.items)
                .all(|(a, b)| a.get() == b.get())
            && (
                self.received_at_ms,
                self.ttl_ms,
                &self.scope,
                &self.credentials,
            ) == (
                other.received_at_ms,
                other.ttl_ms,
                &other.scope,
                &other.credentials,
            )
    }
}

/// What a cached list is good for now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// Within its ttl (and, for a private result, for these credentials): usable as current.
    Fresh,
    /// Past its ttl, or received in an earlier run: served while the server starts, marked
    /// stale.
    Stale,
    /// Not to be served to these credentials (private, received with others).
    Unusable,
}

impl CachedList {
    /// The list of `kind` in a list `result` (`{"tools": [...], "ttlMs": …, "cacheScope": …}`)
    /// received at `received_at_ms` with the credentials of fingerprint `credentials` (kept only
    /// when the result is private). `None` when the result has no such array.
    pub fn from_result(
        kind: ListKind,
        result: &Value,
        received_at_ms: u64,
        credentials: Option<&str>,
    ) -> Option<Self> {
        let items = result
            .get(kind.items_key())?
            .as_array()?
            .iter()
            .filter_map(|v| serde_json::value::to_raw_value(v).ok())
            .collect();
        let (ttl_ms, scope) = list_hints(result);
        Some(Self::made(
            items,
            received_at_ms,
            (ttl_ms, scope),
            credentials,
        ))
    }

    /// As [`from_result`](Self::from_result), from the result's text: the items are kept as
    /// they were sent, never parsed into values.
    pub fn from_raw(
        kind: ListKind,
        result: &str,
        received_at_ms: u64,
        credentials: Option<&str>,
    ) -> Option<Self> {
        // The members' values borrowed from the text, each item copied once.
        let members: BTreeMap<String, &RawValue> = serde_json::from_str(result).ok()?;
        let items: Vec<&RawValue> =
            serde_json::from_str(members.get(kind.items_key())?.get()).ok()?;
        let items = items.into_iter().map(RawValue::to_owned).collect();
        let mut hints = serde_json::Map::new();
        for key in ["ttlMs", "cacheScope"] {
            if let Some(v) = members
                .get(key)
                .and_then(|v| serde_json::from_str(v.get()).ok())
            {
                hints.insert(key.to_owned(), v);
            }
        }
        let hints = list_hints(&Value::Object(hints));
        Some(Self::made(items, received_at_ms, hints, credentials))
    }

    /// A list of `items` with its hints, keeping `credentials` only when it is private to them.
    fn made(
        items: Vec<Box<RawValue>>,
        received_at_ms: u64,
        (ttl_ms, scope): (Option<u64>, Option<String>),
        credentials: Option<&str>,
    ) -> Self {
        let mut list = CachedList {
            items,
            received_at_ms,
            ttl_ms,
            scope,
            credentials: None,
        };
        if list.is_private() {
            list.credentials = credentials.map(str::to_owned);
        }
        list
    }

    /// Whether the result is private to the credentials it was received with: its scope is
    /// `"private"`, or a value this version does not know.
    pub fn is_private(&self) -> bool {
        !matches!(self.scope.as_deref(), None | Some("public"))
    }

    /// How usable it is at wall-clock `now_ms` for the credentials of fingerprint `credentials`
    /// ([`credentials_fingerprint`]; `None`: no credentials). A private list is usable only
    /// with the credentials it was received with; within its ttl it is fresh (a time before its
    /// reception is not trusted: stale); without a ttl it is fresh until invalidated. Lists
    /// loaded from an earlier run are never fresh unless their ttl says so.
    pub fn freshness(&self, now_ms: u64, credentials: Option<&str>) -> Freshness {
        if self.is_private() && self.credentials.as_deref() != credentials {
            return Freshness::Unusable;
        }
        match self.ttl_ms {
            None => Freshness::Fresh,
            Some(ttl) => match now_ms.checked_sub(self.received_at_ms) {
                Some(age) if age < ttl => Freshness::Fresh,
                _ => Freshness::Stale,
            },
        }
    }
}

/// Reads the caching hints of a list result object: its `ttlMs` (a negative one is 0) and its
/// `cacheScope`. The 2026-07-28 specification puts both at the top level of the result (not in
/// `_meta`); an absent `ttlMs` is `None` here (the core already reads it as 0 in that era).
pub fn list_hints(result: &Value) -> (Option<u64>, Option<String>) {
    let ttl = result
        .get("ttlMs")
        .and_then(|t| t.as_u64().or_else(|| t.as_f64().map(|f| f.max(0.0) as u64)));
    let scope = result
        .get("cacheScope")
        .and_then(Value::as_str)
        .map(str::to_owned);
    (ttl, scope)
}

/// What the cache holds for one server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCache {
    /// Its lists, by kind (in JSON, keyed `"tools"`, `"prompts"`, `"resources"`).
    #[serde(default)]
    pub lists: BTreeMap<ListKind, CachedList>,
    /// The era last detected, as the protocol version it spoke (`"2025-11-25"`,
    /// `"2026-07-28"`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<String>,
}

/// The key of a server's cache entry: a stable hash (hex, 32 digits) of what reaches the
/// server — for stdio the command, arguments, environment and working directory; for HTTP the
/// transport, URL and headers (names in any case). Other members (timeouts, filters, unknown
/// keys) do not change it. SHA-256 of a length-prefixed encoding, the same across runs,
/// platforms and Rust versions; it reveals no value of the configuration.
pub fn cache_key(config: &ServerConfig) -> String {
    let mut enc = Encoder(Vec::new());
    enc.field(b"mcpwire cache key 1");
    match config {
        ServerConfig::Stdio(c) => {
            enc.field(b"stdio");
            enc.field(c.command.as_bytes());
            enc.count(c.args.len());
            for a in &c.args {
                enc.field(a.as_bytes());
            }
            // A BTreeMap: in the order of the names, whatever the order they were written in.
            enc.count(c.env.len());
            for (k, v) in &c.env {
                enc.field(k.as_bytes());
                enc.field(v.as_bytes());
            }
            match &c.cwd {
                None => enc.count(0),
                Some(cwd) => {
                    enc.count(1);
                    enc.field(cwd.to_string_lossy().as_bytes());
                }
            }
        }
        ServerConfig::Http(c) => {
            enc.field(b"http");
            // The name `type` gives it (`"http"`, `"sse"`).
            let kind = serde_json::to_value(c.kind).unwrap_or_default();
            enc.field(kind.as_str().unwrap_or_default().as_bytes());
            enc.field(c.url.as_bytes());
            let mut headers: Vec<(String, &str)> = c
                .headers
                .iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), v.as_str()))
                .collect();
            headers.sort();
            enc.count(headers.len());
            for (k, v) in headers {
                enc.field(k.as_bytes());
                enc.field(v.as_bytes());
            }
        }
    }
    hex(&sha256(&enc.0)[..16])
}

/// A fingerprint of credentials (e.g. the `Authorization` header's value): a stable hash (hex,
/// 32 digits; SHA-256 with a prefix of its own), from which the secret cannot be recovered in
/// practice. Only this is ever written to disk.
pub fn credentials_fingerprint(secret: &str) -> String {
    let mut enc = Encoder(Vec::new());
    enc.field(b"mcpwire credentials 1");
    enc.field(secret.as_bytes());
    hex(&sha256(&enc.0)[..16])
}

/// The fingerprint of the credentials `config` reaches its server with (an HTTP
/// `Authorization` header), the key a private list is kept under; `None` without any.
pub fn credentials_of(config: &ServerConfig) -> Option<String> {
    let ServerConfig::Http(http) = config else {
        return None;
    };
    http.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
        .map(|(_, v)| credentials_fingerprint(v))
}

/// The user's cache folder for mcpwire: `$XDG_CACHE_HOME/mcpwire` or `~/.cache/mcpwire` on
/// Linux and other Unix, `~/Library/Caches/mcpwire` on macOS, `%LOCALAPPDATA%\mcpwire\cache`
/// (else `%USERPROFILE%\AppData\Local\mcpwire\cache`) on Windows (read from the
/// environment; relative paths ignored); `None` when none can be found.
pub fn default_dir() -> Option<PathBuf> {
    crate::os::user_dirs().cache()
}

/// How much a cache folder keeps (see [`ListCache::prune`]). Each connection that lists a
/// server's tools writes its entry again, so the time an entry was last written is when its
/// server was last reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheLimits {
    /// An entry not written for this long is removed (default 30 days).
    pub max_age: Duration,
    /// The most entries (servers) kept; past it the least recently written are removed
    /// (default 256).
    pub max_entries: usize,
    /// The most bytes all entries take together; past it the least recently written are
    /// removed (default 64 MiB).
    pub max_bytes: u64,
}

impl Default for CacheLimits {
    fn default() -> Self {
        CacheLimits {
            max_age: Duration::from_secs(30 * 24 * 3600),
            max_entries: 256,
            max_bytes: 64 << 20,
        }
    }
}

/// How old a temporary file must be before a prune takes it for one an interrupted write left
/// (a write in progress is much younger).
const STALE_TEMPORARY: Duration = Duration::from_secs(3600);

/// The format number written in each file; a file of another is ignored.
const FORMAT: u32 = 1;

/// The largest file read back (a larger one is ignored).
const MAX_FILE: u64 = 64 << 20;

/// One server's file as written.
#[derive(Serialize)]
struct FileOut<'a> {
    #[serde(rename = "mcpwireCache")]
    format: u32,
    lists: BTreeMap<ListKind, &'a CachedList>,
    #[serde(skip_serializing_if = "Option::is_none")]
    era: Option<&'a str>,
}

/// The bytes of one server's file: its lists and its era.
pub(super) fn encode<'a>(
    lists: impl Iterator<Item = (ListKind, &'a CachedList)>,
    era: Option<&'a str>,
) -> io::Result<Vec<u8>> {
    let out = FileOut {
        format: FORMAT,
        lists: lists.collect(),
        era,
    };
    serde_json::to_vec(&out).map_err(io::Error::other)
}

/// What the file of `key` in `dir` holds, as [`ListCache::get`] reads it (`None`: no file, an
/// unreadable one, or a key unfit for a file name).
pub(super) fn read_entry(dir: &Path, key: &str) -> Option<ServerCache> {
    valid_key(key).then(|| read_file(&dir.join(format!("{key}.json"))))?
}

/// One server's file as read.
#[derive(Deserialize)]
struct FileIn {
    #[serde(rename = "mcpwireCache")]
    format: u32,
    #[serde(default)]
    lists: BTreeMap<ListKind, CachedList>,
    #[serde(default)]
    era: Option<String>,
}

/// The cache: in memory, backed by one JSON file per server in a folder (none: memory only).
#[derive(Debug)]
pub struct ListCache {
    dir: Option<PathBuf>,
    /// Each key used so far: what it holds (`None`: nothing, or an unreadable file).
    entries: HashMap<String, Option<ServerCache>>,
}

impl ListCache {
    /// A cache in memory only.
    pub fn in_memory() -> Self {
        ListCache {
            dir: None,
            entries: HashMap::new(),
        }
    }

    /// A cache backed by `dir` (created on first write, `0700` on Unix), one `<key>.json` per
    /// server.
    pub fn on_disk(dir: PathBuf) -> Self {
        ListCache {
            dir: Some(dir),
            entries: HashMap::new(),
        }
    }

    /// The folder backing it, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// What is remembered for `key` (read from disk on first use). A file that is missing, does
    /// not parse, or is of another format gives `None` (and is replaced on the next write);
    /// lists read from disk without a ttl are stale (`ttl_ms` `Some(0)`).
    pub fn get(&mut self, key: &str) -> Option<&ServerCache> {
        self.load(key);
        self.entries.get(key)?.as_ref()
    }

    /// Stores a list received now. Written through to disk atomically (a temporary file in the
    /// same folder, synced, then renamed; `0600` on Unix). An error writing is returned; the
    /// memory copy is kept. A key not made of ASCII letters, digits, `-` and `_` (at most 64)
    /// is kept in memory only, and writing it is an `InvalidInput` error.
    pub fn put_list(&mut self, key: &str, kind: ListKind, list: CachedList) -> io::Result<()> {
        self.entry(key).lists.insert(kind, list);
        self.write(key)
    }

    /// Remembers the era (the protocol version spoken); written through like
    /// [`put_list`](Self::put_list).
    pub fn put_era(&mut self, key: &str, era: &str) -> io::Result<()> {
        self.entry(key).era = Some(era.to_owned());
        self.write(key)
    }

    /// Marks the list of `kind` of `key` stale (on its `notifications/…/list_changed`, or when
    /// a call shows it wrong): its ttl becomes 0. Written through when it can be; an error
    /// writing is not reported (the memory copy is stale either way).
    pub fn invalidate(&mut self, key: &str, kind: ListKind) {
        self.load(key);
        let Some(Some(entry)) = self.entries.get_mut(key) else {
            return;
        };
        let Some(list) = entry.lists.get_mut(&kind) else {
            return;
        };
        if list.ttl_ms != Some(0) {
            list.ttl_ms = Some(0);
            let _ = self.write(key);
        }
    }

    /// Forgets `key`, in memory and on disk (a missing file is no error).
    pub fn forget(&mut self, key: &str) -> io::Result<()> {
        self.entries.insert(key.to_owned(), None);
        let Some(path) = self.file(key) else {
            return Ok(());
        };
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Removes from the folder, at wall-clock `now_ms` (milliseconds since the Unix epoch),
    /// the entries not written for `limits.max_age`, then, newest first, those beyond
    /// `limits.max_entries` or `limits.max_bytes`, and temporary files an interrupted write
    /// left. The entries this cache has read or written are kept whatever their age (they are
    /// in use), and counted first. Files that are not the cache's are left alone. Gives how
    /// many entries were removed; nothing to do for a cache in memory, or a folder not yet
    /// made.
    pub fn prune(&mut self, now_ms: u64, limits: &CacheLimits) -> io::Result<usize> {
        let Some(dir) = &self.dir else {
            return Ok(0);
        };
        let listing = match std::fs::read_dir(dir) {
            Ok(listing) => listing,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        let age_of = |meta: &std::fs::Metadata| {
            let written = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis() as u64);
            // A time after now (a clock set back) counts as now.
            Duration::from_millis(now_ms.saturating_sub(written))
        };
        // (in use, age, bytes, path) of each entry.
        let mut found = Vec::new();
        for item in listing {
            let item = item?;
            let Ok(meta) = item.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let name = item.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') && name.ends_with(".tmp") {
                if age_of(&meta) > STALE_TEMPORARY {
                    let _ = std::fs::remove_file(item.path());
                }
                continue;
            }
            let Some(key) = name.strip_suffix(".json").filter(|k| valid_key(k)) else {
                continue;
            };
            let in_use = self.entries.contains_key(key);
            found.push((in_use, age_of(&meta), meta.len(), item.path()));
        }
        // In use first, then the most recently written.
        found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.3.cmp(&b.3)));
        let (mut kept, mut bytes, mut removed) = (0usize, 0u64, 0usize);
        for (in_use, age, len, path) in found {
            let fits = kept < limits.max_entries && bytes.saturating_add(len) <= limits.max_bytes;
            if in_use || (age <= limits.max_age && fits) {
                kept += 1;
                bytes = bytes.saturating_add(len);
                continue;
            }
            match std::fs::remove_file(&path) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(removed)
    }

    /// The entry of `key`, loaded, created if empty.
    fn entry(&mut self, key: &str) -> &mut ServerCache {
        self.load(key);
        let slot = self.entries.entry(key.to_owned()).or_default();
        slot.get_or_insert_with(ServerCache::default)
    }

    /// Reads `key`'s file the first time `key` is used.
    fn load(&mut self, key: &str) {
        if self.entries.contains_key(key) {
            return;
        }
        let loaded = self.file(key).and_then(|path| read_file(&path));
        self.entries.insert(key.to_owned(), loaded);
    }

    /// The file of `key`, when backed by a folder and `key` is fit to be a file name.
    fn file(&self, key: &str) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        valid_key(key).then(|| dir.join(format!("{key}.json")))
    }

    /// Writes `key`'s entry to its file, if backed by a folder.
    fn write(&self, key: &str) -> io::Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        if !valid_key(key) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cache key unfit for a file name",
            ));
        }
        let empty = ServerCache::default();
        let entry = match self.entries.get(key) {
            Some(Some(e)) => e,
            _ => &empty,
        };
        let lists = entry.lists.iter().map(|(kind, list)| (*kind, list));
        let bytes = encode(lists, entry.era.as_deref())?;
        write_atomic(dir, key, &bytes)
    }
}

/// Whether `key` may name a file: 1 to 64 ASCII letters, digits, `-` and `_`.
pub(super) fn valid_key(key: &str) -> bool {
    (1..=64).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Reads one server's file: `None` when missing, not a regular file (a pipe there would block
/// the read for ever), unreadable, too large, not JSON of the format, or of another format.
/// Lists without a ttl come from an earlier run: stale.
fn read_file(path: &Path) -> Option<ServerCache> {
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Should a pipe take the file's place meanwhile, opening it does not wait for a writer.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_FILE {
        return None;
    }
    let parsed: FileIn = serde_json::from_slice(&bytes).ok()?;
    if parsed.format != FORMAT {
        return None;
    }
    let mut cache = ServerCache {
        lists: parsed.lists,
        era: parsed.era,
    };
    for list in cache.lists.values_mut() {
        list.ttl_ms.get_or_insert(0);
    }
    Some(cache)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A fresh folder under the system's temporary folder, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            static N: AtomicU32 = AtomicU32::new(0);
            let n = N.fetch_add(1, Ordering::Relaxed);
            let p = std::env::temp_dir().join(format!(
                "mcpwire-cache-test-{}-{name}-{n}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&p);
            TempDir(p)
        }

        /// The cache folder inside (not yet created).
        fn cache(&self) -> PathBuf {
            self.0.join("cache")
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn list(ttl: Option<u64>, at: u64) -> CachedList {
        CachedList {
            items: vec![serde_json::value::to_raw_value(
                &json!({"name": "t", "inputSchema": {"type": "object"}}),
            )
            .unwrap()],
            received_at_ms: at,
            ttl_ms: ttl,
            scope: Some("public".into()),
            credentials: None,
        }
    }

    fn stdio_config() -> ServerConfig {
        mcpwire_core::config::parse_mcp_servers(
            r#"{"mcpServers": {"s": {"command": "npx", "args": ["-y", "pkg"],
                "env": {"B": "2", "A": "1"}, "cwd": "/srv"}}}"#,
        )
        .unwrap()
        .remove("s")
        .unwrap()
    }

    fn http_config(headers: &[(&str, &str)]) -> ServerConfig {
        let mut c = ServerConfig::http("https://example.com/mcp");
        if let ServerConfig::Http(h) = &mut c {
            for (k, v) in headers {
                h.headers.insert((*k).into(), (*v).into());
            }
        }
        c
    }

    #[test]
    fn sha256_matches_the_standard_vectors() {
        assert_eq!(
            hex(&sha256(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hex(&sha256(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            )),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            hex(&sha256(&[b'a'; 1000])),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
        );
    }

    #[test]
    fn the_key_of_a_fixed_config_never_changes() {
        assert_eq!(cache_key(&stdio_config()), STDIO_KEY);
        assert_eq!(
            cache_key(&http_config(&[("Authorization", "Bearer x")])),
            HTTP_KEY
        );
        let key = cache_key(&stdio_config());
        assert_eq!(key.len(), 32);
        assert!(key.bytes().all(|b| b.is_ascii_hexdigit()));
    }

    const STDIO_KEY: &str = "b900abab5dfa125d4e94f06de3929f6f";
    const HTTP_KEY: &str = "7a2dc2d6df1fa66a9def7ec85e6d2603";

    #[test]
    fn the_key_follows_what_reaches_the_server_only() {
        let base = stdio_config();
        let key = cache_key(&base);
        let ServerConfig::Stdio(s) = &base else {
            panic!()
        };
        let mut variants = Vec::new();
        let mut v = s.clone();
        v.command = "npm".into();
        variants.push(v);
        let mut v = s.clone();
        v.args.push("x".into());
        variants.push(v);
        let mut v = s.clone();
        v.args = vec!["-ypkg".into()];
        variants.push(v);
        let mut v = s.clone();
        v.env.insert("A".into(), "other".into());
        variants.push(v);
        let mut v = s.clone();
        v.cwd = None;
        variants.push(v);
        let mut keys: Vec<String> = variants
            .into_iter()
            .map(|v| cache_key(&ServerConfig::Stdio(v)))
            .collect();
        keys.push(key.clone());
        keys.push(cache_key(&http_config(&[])));
        keys.push(cache_key(&http_config(&[("Authorization", "Bearer y")])));
        keys.push(cache_key(&http_config(&[("Authorization", "Bearer x")])));
        let mut sse = http_config(&[]);
        if let ServerConfig::Http(h) = &mut sse {
            h.kind = mcpwire_core::config::HttpKind::Sse;
        }
        keys.push(cache_key(&sse));
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "every config has its own key");

        // The order members were written in, the case of header names and members that do
        // not reach the server change nothing.
        let mut reordered = s.clone();
        reordered.env = BTreeMap::new();
        reordered.env.insert("B".into(), "2".into());
        reordered.env.insert("A".into(), "1".into());
        reordered.extra.insert("disabled".into(), json!(false));
        reordered.extra.insert("timeout".into(), json!(5));
        assert_eq!(cache_key(&ServerConfig::Stdio(reordered)), key);
        let parsed = mcpwire_core::config::parse_mcp_servers(
            r#"{"mcpServers": {"s": {"cwd": "/srv", "env": {"A": "1", "B": "2"},
                "args": ["-y", "pkg"], "command": "npx"}}}"#,
        )
        .unwrap();
        assert_eq!(cache_key(&parsed["s"]), key);
        assert_eq!(
            cache_key(&http_config(&[("X-A", "1"), ("x-b", "2")])),
            cache_key(&http_config(&[("x-b", "2"), ("x-a", "1")]))
        );
    }

    #[test]
    fn fingerprints_are_stable_distinct_and_hide_the_secret() {
        let a = credentials_fingerprint("Bearer secret-token");
        assert_eq!(a, credentials_fingerprint("Bearer secret-token"));
        assert_ne!(a, credentials_fingerprint("Bearer secret-tokem"));
        assert_eq!(a.len(), 32);
        assert!(!a.contains("secret"));
    }

    #[test]
    fn hints_are_read_from_the_result() {
        let r = json!({"tools": [], "ttlMs": 5000, "cacheScope": "private"});
        assert_eq!(list_hints(&r), (Some(5000), Some("private".into())));
        assert_eq!(list_hints(&json!({"tools": []})), (None, None));
        assert_eq!(list_hints(&json!({"ttlMs": -3})).0, Some(0));
        assert_eq!(list_hints(&json!({"ttlMs": 1500.7})).0, Some(1500));
        assert_eq!(list_hints(&json!({"cacheScope": 3})).1, None);

        let l = CachedList::from_result(ListKind::Tools, &r, 7, Some("fp")).unwrap();
        assert_eq!((l.items.len(), l.received_at_ms), (0, 7));
        assert_eq!(l.credentials.as_deref(), Some("fp"), "private: kept");
        let public = json!({"prompts": [{"name": "p"}], "ttlMs": 1, "cacheScope": "public"});
        let l = CachedList::from_result(ListKind::Prompts, &public, 7, Some("fp")).unwrap();
        assert_eq!(
            (l.items.len(), l.credentials),
            (1, None),
            "public: not kept"
        );
        assert!(CachedList::from_result(ListKind::Resources, &public, 7, None).is_none());
        // From the text: the same list, the items as sent.
        for (kind, result) in [(ListKind::Tools, &r), (ListKind::Prompts, &public)] {
            let text = result.to_string();
            assert_eq!(
                CachedList::from_raw(kind, &text, 7, Some("fp")),
                CachedList::from_result(kind, result, 7, Some("fp"))
            );
        }
        let spaced = r#"{"tools": [ {"name": "t"} ], "ttlMs": 3}"#;
        let l = CachedList::from_raw(ListKind::Tools, spaced, 0, None).unwrap();
        assert_eq!((l.items[0].get(), l.ttl_ms), (r#"{"name": "t"}"#, Some(3)));
        assert!(CachedList::from_raw(ListKind::Prompts, spaced, 0, None).is_none());
        assert!(CachedList::from_raw(ListKind::Tools, "[]", 0, None).is_none());
    }

    #[test]
    fn freshness_follows_the_ttl_on_the_wall_clock() {
        let l = list(Some(500), 1_000);
        assert_eq!(l.freshness(1_000, None), Freshness::Fresh);
        assert_eq!(l.freshness(1_499, None), Freshness::Fresh);
        assert_eq!(l.freshness(1_500, None), Freshness::Stale);
        assert_eq!(l.freshness(u64::MAX, None), Freshness::Stale);
        assert_eq!(l.freshness(999, None), Freshness::Stale, "before it came");
        assert_eq!(
            list(Some(0), 1_000).freshness(1_000, None),
            Freshness::Stale
        );
        assert_eq!(
            list(None, 1_000).freshness(9_999_999, None),
            Freshness::Fresh
        );
        let l = list(Some(u64::MAX), 1_000);
        assert_eq!(l.freshness(u64::MAX, None), Freshness::Fresh);
    }

    #[test]
    fn a_private_list_serves_only_its_credentials() {
        let a = credentials_fingerprint("token-a");
        let b = credentials_fingerprint("token-b");
        let mut l = list(Some(500), 1_000);
        l.scope = Some("private".into());
        l.credentials = Some(a.clone());
        assert_eq!(l.freshness(1_100, Some(&a)), Freshness::Fresh);
        assert_eq!(l.freshness(2_000, Some(&a)), Freshness::Stale);
        assert_eq!(l.freshness(1_100, Some(&b)), Freshness::Unusable);
        assert_eq!(l.freshness(2_000, Some(&b)), Freshness::Unusable);
        assert_eq!(l.freshness(1_100, None), Freshness::Unusable);
        l.scope = Some("per-user".into());
        assert_eq!(l.freshness(1_100, Some(&b)), Freshness::Unusable, "unknown");
        l.credentials = None;
        assert_eq!(l.freshness(1_100, None), Freshness::Fresh);
        assert_eq!(l.freshness(1_100, Some(&a)), Freshness::Unusable);
        l.scope = Some("public".into());
        assert_eq!(l.freshness(1_100, Some(&b)), Freshness::Fresh);
        l.scope = None;
        assert_eq!(l.freshness(1_100, Some(&b)), Freshness::Fresh);
    }

    #[test]
    fn lists_and_era_round_trip_through_disk() {
        let tmp = TempDir::new("round-trip");
        let key = cache_key(&stdio_config());
        let mut private = list(Some(60_000), 1_000);
        private.scope = Some("private".into());
        private.credentials = Some(credentials_fingerprint("t"));
        {
            let mut c = ListCache::on_disk(tmp.cache());
            assert!(c.get(&key).is_none());
            c.put_list(&key, ListKind::Tools, private.clone()).unwrap();
            c.put_list(&key, ListKind::Prompts, list(None, 2_000))
                .unwrap();
            c.put_era(&key, "2026-07-28").unwrap();
            assert_eq!(c.get(&key).unwrap().lists.len(), 2);
        }
        let mut c = ListCache::on_disk(tmp.cache());
        let got = c.get(&key).unwrap().clone();
        assert_eq!(got.era.as_deref(), Some("2026-07-28"));
        assert_eq!(got.lists[&ListKind::Tools], private, "a ttl is kept");
        let prompts = &got.lists[&ListKind::Prompts];
        assert_eq!(
            prompts.ttl_ms,
            Some(0),
            "no ttl: from an earlier run, stale"
        );
        assert_eq!(prompts.freshness(2_000, None), Freshness::Stale);
        assert_eq!(prompts.items[0].get(), list(None, 2_000).items[0].get());
        let fp = credentials_fingerprint("t");
        assert_eq!(
            got.lists[&ListKind::Tools].freshness(30_000, Some(&fp)),
            Freshness::Fresh,
            "within its ttl, a list of an earlier run is fresh"
        );
        assert!(c.get(&cache_key(&http_config(&[]))).is_none());

        // The file's shape: lists keyed by name, the format number.
        let text = std::fs::read_to_string(tmp.cache().join(format!("{key}.json"))).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["mcpwireCache"], 1);
        assert_eq!(v["lists"]["tools"]["ttlMs"], 60_000);
        assert_eq!(v["lists"]["tools"]["scope"], "private");
        assert_eq!(v["era"], "2026-07-28");
    }

    #[test]
    fn writes_leave_no_temporary_file() {
        let tmp = TempDir::new("atomic");
        let mut c = ListCache::on_disk(tmp.cache());
        let key = "abc123";
        for i in 0..20 {
            c.put_list(key, ListKind::Tools, list(Some(i), i)).unwrap();
            c.put_era(key, "2025-11-25").unwrap();
        }
        c.put_list("other", ListKind::Resources, list(None, 0))
            .unwrap();
        assert_eq!(names(&tmp.cache()), ["abc123.json", "other.json"]);
        let mut fresh = ListCache::on_disk(tmp.cache());
        assert_eq!(
            fresh.get(key).unwrap().lists[&ListKind::Tools].ttl_ms,
            Some(19)
        );
    }

    #[test]
    fn a_prune_keeps_what_is_in_use_and_the_newest_within_the_limits() {
        let tmp = TempDir::new("prune");
        let now = std::time::SystemTime::now();
        let now_ms = now.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
        let mut writer = ListCache::on_disk(tmp.cache());
        for (key, days) in [("a", 40), ("b", 3), ("c", 2), ("d", 1)] {
            writer.put_era(key, "2025-11-25").unwrap();
            let path = tmp.cache().join(format!("{key}.json"));
            let file = std::fs::File::options().write(true).open(path).unwrap();
            file.set_modified(now - Duration::from_secs(days * 86_400))
                .unwrap();
        }
        // Nothing in use: `a` is too old, and of the others the two newest fit.
        let mut c = ListCache::on_disk(tmp.cache());
        let limits = CacheLimits {
            max_entries: 2,
            ..CacheLimits::default()
        };
        assert_eq!(c.prune(now_ms, &limits).unwrap(), 2);
        assert_eq!(names(&tmp.cache()), ["c.json", "d.json"]);
        // An entry in use is kept and counted first, however old.
        let mut c = ListCache::on_disk(tmp.cache());
        assert!(c.get("c").is_some());
        let one = CacheLimits {
            max_entries: 1,
            ..CacheLimits::default()
        };
        assert_eq!(c.prune(now_ms, &one).unwrap(), 1);
        assert_eq!(names(&tmp.cache()), ["c.json"]);
        // The bytes: none fits in 1 byte but the one in use.
        let tiny = CacheLimits {
            max_bytes: 1,
            ..CacheLimits::default()
        };
        assert_eq!(c.prune(now_ms, &tiny).unwrap(), 0);
        // A cache in memory, or a folder not made yet, has nothing to prune.
        assert_eq!(ListCache::in_memory().prune(now_ms, &limits).unwrap(), 0);
        let missing = ListCache::on_disk(tmp.0.join("none")).prune(now_ms, &limits);
        assert_eq!(missing.unwrap(), 0);
    }

    #[test]
    fn an_unreadable_file_is_ignored_then_replaced() {
        let tmp = TempDir::new("corrupt");
        std::fs::create_dir_all(tmp.cache()).unwrap();
        let bad: [(&str, &[u8]); 5] = [
            ("a", b"{not json"),
            ("b", b"\xff\xfe\x00"),
            ("c", br#"{"mcpwireCache": 2, "lists": {}}"#),
            ("d", br#"{"lists": {}}"#),
            (
                "e",
                br#"{"mcpwireCache": 1, "lists": {"tools": {"items": 3}}}"#,
            ),
        ];
        for (key, bytes) in bad {
            std::fs::write(tmp.cache().join(format!("{key}.json")), bytes).unwrap();
        }
        let mut c = ListCache::on_disk(tmp.cache());
        for (key, _) in bad {
            assert!(c.get(key).is_none(), "{key}");
        }
        c.put_era("a", "2025-06-18").unwrap();
        let mut again = ListCache::on_disk(tmp.cache());
        assert_eq!(again.get("a").unwrap().era.as_deref(), Some("2025-06-18"));
        let unknown = br#"{"mcpwireCache": 1, "lists": {"tools": {"items": [],
            "receivedAtMs": 5, "later": true}}, "era": "2026-07-28", "more": 1}"#;
        std::fs::write(tmp.cache().join("f.json"), unknown).unwrap();
        let got = again.get("f").unwrap();
        assert_eq!(
            got.lists[&ListKind::Tools].received_at_ms,
            5,
            "unknown keys pass"
        );
    }

    #[test]
    fn invalidate_marks_one_kind_stale_and_persists() {
        let tmp = TempDir::new("invalidate");
        let mut c = ListCache::on_disk(tmp.cache());
        let key = "k";
        c.put_list(key, ListKind::Tools, list(Some(60_000), 1_000))
            .unwrap();
        c.put_list(key, ListKind::Prompts, list(Some(60_000), 1_000))
            .unwrap();
        c.invalidate(key, ListKind::Tools);
        c.invalidate(key, ListKind::Resources);
        c.invalidate("nothing", ListKind::Tools);
        let at = |c: &mut ListCache, kind| c.get(key).unwrap().lists[&kind].freshness(2_000, None);
        assert_eq!(at(&mut c, ListKind::Tools), Freshness::Stale);
        assert_eq!(at(&mut c, ListKind::Prompts), Freshness::Fresh);
        assert!(!c.get(key).unwrap().lists.contains_key(&ListKind::Resources));
        assert!(c.get("nothing").is_none());
        let mut again = ListCache::on_disk(tmp.cache());
        assert_eq!(at(&mut again, ListKind::Tools), Freshness::Stale);
        assert_eq!(at(&mut again, ListKind::Prompts), Freshness::Fresh);
        // A new list replaces the stale one.
        again
            .put_list(key, ListKind::Tools, list(Some(60_000), 1_500))
            .unwrap();
        assert_eq!(at(&mut again, ListKind::Tools), Freshness::Fresh);
    }

    #[test]
    fn forget_removes_memory_and_file() {
        let tmp = TempDir::new("forget");
        let mut c = ListCache::on_disk(tmp.cache());
        c.put_era("k", "2025-11-25").unwrap();
        c.put_era("j", "2025-11-25").unwrap();
        c.forget("k").unwrap();
        assert!(c.get("k").is_none());
        assert_eq!(names(&tmp.cache()), ["j.json"]);
        assert!(ListCache::on_disk(tmp.cache()).get("k").is_none());
        c.forget("k").unwrap();
        c.forget("never").unwrap();
        c.put_era("k", "2026-07-28").unwrap();
        assert_eq!(c.get("k").unwrap().era.as_deref(), Some("2026-07-28"));
    }

    #[test]
    fn memory_only_and_unfit_keys() {
        let mut m = ListCache::in_memory();
        assert!(m.dir().is_none());
        m.put_list("../x", ListKind::Tools, list(None, 1)).unwrap();
        m.put_era("../x", "2025-11-25").unwrap();
        assert_eq!(m.get("../x").unwrap().lists.len(), 1);
        m.invalidate("../x", ListKind::Tools);
        assert_eq!(
            m.get("../x").unwrap().lists[&ListKind::Tools].ttl_ms,
            Some(0)
        );
        m.forget("../x").unwrap();
        assert!(m.get("../x").is_none());

        let tmp = TempDir::new("unfit");
        let mut c = ListCache::on_disk(tmp.cache());
        for key in ["../x", "", "a.b", &"a".repeat(65)] {
            let e = c.put_era(key, "2025-11-25").unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
            assert_eq!(c.get(key).unwrap().era.as_deref(), Some("2025-11-25"));
        }
        assert!(!tmp.0.join("x.json").exists());
        assert!(!tmp.cache().exists(), "nothing written");
    }

    #[cfg(unix)]
    #[test]
    fn the_folder_and_files_are_the_owners_only() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = TempDir::new("modes");
        let mut c = ListCache::on_disk(tmp.cache());
        c.put_era("k", "2025-11-25").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&tmp.cache()), 0o700);
        assert_eq!(mode(&tmp.cache().join("k.json")), 0o600);
        c.put_era("k", "2026-07-28").unwrap();
        assert_eq!(mode(&tmp.cache().join("k.json")), 0o600, "rewritten");
    }

    #[test]
    fn no_secret_reaches_the_disk() {
        let tmp = TempDir::new("secrets");
        let env_secret = "env-secret-value-4711";
        let header_secret = "Bearer header-secret-0815";
        let mut stdio = stdio_config();
        if let ServerConfig::Stdio(s) = &mut stdio {
            s.env.insert("API_KEY".into(), env_secret.into());
        }
        let http = http_config(&[("Authorization", header_secret)]);
        let mut c = ListCache::on_disk(tmp.cache());
        for config in [&stdio, &http] {
            let key = cache_key(config);
            let fp = credentials_fingerprint(header_secret);
            let result = json!({"tools": [{"name": "t"}], "ttlMs": 10, "cacheScope": "private"});
            let l = CachedList::from_result(ListKind::Tools, &result, 1, Some(&fp)).unwrap();
            c.put_list(&key, ListKind::Tools, l).unwrap();
            c.put_era(&key, "2026-07-28").unwrap();
            c.invalidate(&key, ListKind::Tools);
        }
        let files = names(&tmp.cache());
        assert_eq!(files.len(), 2);
        for name in files {
            let text = std::fs::read_to_string(tmp.cache().join(&name)).unwrap();
            for secret in [
                env_secret,
                "header-secret",
                "API_KEY",
                "Authorization",
                "/srv",
            ] {
                assert!(!name.contains(secret), "{name}");
                assert!(!text.contains(secret), "{name}: {text}");
            }
        }
    }

    #[test]
    fn server_cache_serializes_with_named_kinds() {
        let mut s = ServerCache::default();
        s.lists.insert(ListKind::Resources, list(Some(1), 2));
        s.era = Some("2025-11-25".into());
        let text = serde_json::to_string(&s).unwrap();
        assert!(text.contains(r#""resources":{"#), "{text}");
        assert_eq!(serde_json::from_str::<ServerCache>(&text).unwrap(), s);
        assert_eq!(ListKind::Prompts.method(), "prompts/list");
    }
}
