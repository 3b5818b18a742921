//! The Manager's cache as it runs: each server's lists and era in memory, under the Manager's
//! lock, and on disk, written off it.
//!
//! A change in memory hands the server's entry (its lists are shared, so this copies no list)
//! to the [`Writer`], which keeps at most one entry a server waiting: a newer one replaces
//! it (the newest wins), so a server whose lists change faster than the disk takes them is
//! written once a change that the disk can keep up with. The writer writes on a thread for
//! blocking work ([`start`]), never under the Manager's lock nor on the executor that
//! runs the connections: a slow or full disk holds up no route, state or call. Files are
//! written as [`ListCache`](super::cache::ListCache) writes them (atomically, the owner's
//! only); a write that fails leaves the memory copy serving, and the next change writes again.
//!
//! Reading is done off the lock too: [`Shared::load`](super::shared::Shared::load) reads a
//! server's file when the server is added, then the memory copy is what is served.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::cache::{self, CachedList, ListKind, ServerCache};
use crate::runtime::Runtime;

/// One server's lists and era, as the Manager serves and writes them (the lists shared).
#[derive(Debug, Clone, Default)]
pub(super) struct Entry {
    pub(super) lists: BTreeMap<ListKind, Arc<CachedList>>,
    pub(super) era: Option<String>,
}

impl From<ServerCache> for Entry {
    fn from(c: ServerCache) -> Self {
        Entry {
            lists: c.lists.into_iter().map(|(k, l)| (k, Arc::new(l))).collect(),
            era: c.era,
        }
    }
}

/// The cache in memory, and the writer of its folder (none: memory only).
pub(super) struct Store {
    /// Each key read or written so far: what it holds (`None`: nothing, or an unreadable
    /// file).
    entries: HashMap<String, Option<Entry>>,
    writer: Option<Arc<Writer>>,
}

impl Store {
    /// A cache in memory only.
    pub(super) fn in_memory() -> Self {
        Store {
            entries: HashMap::new(),
            writer: None,
        }
    }

    /// A cache backed by folder `dir`, written with [`crate::disk::write_atomic`].
    pub(super) fn on_disk(dir: PathBuf) -> Self {
        Self::on_disk_with(dir, Arc::new(crate::disk::write_atomic))
    }

    /// A cache backed by folder `dir`, written with `io`.
    pub(super) fn on_disk_with(dir: PathBuf, io: WriteIo) -> Self {
        Store {
            entries: HashMap::new(),
            writer: Some(Arc::new(Writer {
                dir,
                io,
                queue: Mutex::new(Queue::default()),
                idle: event_listener::Event::new(),
            })),
        }
    }

    /// The folder to read `key`'s file from, when it has not been read yet.
    pub(super) fn to_read(&self, key: &str) -> Option<PathBuf> {
        let writer = self.writer.as_ref()?;
        (!self.entries.contains_key(key)).then(|| writer.dir.clone())
    }

    /// What `key`'s file held, read off the lock: kept unless `key` is in use meanwhile.
    pub(super) fn read(&mut self, key: &str, read: Option<ServerCache>) {
        self.entries
            .entry(key.to_owned())
            .or_insert_with(|| read.map(Entry::from));
    }

    /// What is remembered for `key`, in memory.
    pub(super) fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)?.as_ref()
    }

    /// Stores a list received now (written with the next [`persist`](Self::persist)).
    pub(super) fn put_list(&mut self, key: &str, kind: ListKind, list: CachedList) {
        self.entry(key).lists.insert(kind, Arc::new(list));
    }

    /// Remembers the era (written with the next [`persist`](Self::persist)).
    pub(super) fn put_era(&mut self, key: &str, era: &str) {
        self.entry(key).era = Some(era.to_owned());
    }

    /// Marks the list of `kind` of `key` stale: its ttl becomes 0 (written with the next
    /// [`persist`](Self::persist)).
    pub(super) fn invalidate(&mut self, key: &str, kind: ListKind) {
        let Some(Some(entry)) = self.entries.get_mut(key) else {
            return;
        };
        if let Some(list) = entry.lists.get_mut(&kind) {
            if list.ttl_ms != Some(0) {
                Arc::make_mut(list).ttl_ms = Some(0);
            }
        }
    }

    /// Hands `key`'s entry as it is now to the writer, when backed by a folder: in the order
    /// of the changes, as it is called under the Manager's lock. Gives the writer when a
    /// thread is to be set writing ([`start`]: after the lock is let go).
    #[must_use]
    pub(super) fn persist(&self, key: &str) -> Option<Arc<Writer>> {
        let (writer, entry) = (self.writer.as_ref()?, self.get(key)?);
        writer.schedule(key, entry.clone()).then(|| writer.clone())
    }

    /// The writer, when backed by a folder.
    pub(super) fn writer(&self) -> Option<Arc<Writer>> {
        self.writer.clone()
    }

    fn entry(&mut self, key: &str) -> &mut Entry {
        let slot = self.entries.entry(key.to_owned()).or_default();
        slot.get_or_insert_with(Entry::default)
    }
}

/// How a file is written: the folder, the key, the bytes (the tests' own can block or fail).
pub(super) type WriteIo = Arc<dyn Fn(&Path, &str, &[u8]) -> io::Result<()> + Send + Sync>;

/// Writes the entries handed to it, one server at a time, off the Manager's lock.
pub(super) struct Writer {
    dir: PathBuf,
    io: WriteIo,
    /// Its own lock, never held over IO.
    queue: Mutex<Queue>,
    /// Notified when the queue is done.
    idle: event_listener::Event,
}

#[derive(Default)]
struct Queue {
    /// The newest entry of each server waiting to be written.
    waiting: BTreeMap<String, Entry>,
    /// Whether a thread is writing (it takes what waits until nothing does).
    busy: bool,
}

impl Writer {
    /// Hands `entry` over for `key`: it replaces the one waiting, if any. Gives whether a
    /// thread is to be set writing (none is).
    fn schedule(&self, key: &str, entry: Entry) -> bool {
        let mut queue = self.queue();
        queue.waiting.insert(key.to_owned(), entry);
        !std::mem::replace(&mut queue.busy, true)
    }

    /// Writes what waits until nothing does.
    fn drain(&self) {
        loop {
            let next = {
                let mut queue = self.queue();
                let next = queue.waiting.pop_first();
                queue.busy = next.is_some();
                next
            };
            let Some((key, entry)) = next else {
                self.idle.notify(usize::MAX);
                return;
            };
            // A file that cannot be written is no failure: the memory copy serves, and the
            // next change writes again.
            let _ = self.write(&key, &entry);
        }
    }

    fn write(&self, key: &str, entry: &Entry) -> io::Result<()> {
        if !cache::valid_key(key) {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        let lists = entry.lists.iter().map(|(kind, list)| (*kind, &**list));
        let bytes = cache::encode(lists, entry.era.as_deref())?;
        let io = &self.io;
        crate::contain::call(|| io(&self.dir, key, &bytes))
            .unwrap_or_else(|words| Err(io::Error::other(words)))
    }

    /// Waits until everything handed over so far is written (or failed), at most `budget`;
    /// gives whether it was.
    pub(super) async fn flushed(&self, runtime: &Runtime, budget: Duration) -> bool {
        let done = async {
            loop {
                let listener = self.idle.listen();
                if !self.queue().busy {
                    return true;
                }
                listener.await;
            }
        };
        let late = async {
            runtime.sleep_until(Instant::now() + budget).await;
            false
        };
        futures_lite::future::or(done, late).await
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Starts writing `writer`'s queue on a thread for blocking work (`runtime`'s blocking pool,
/// smol's or tokio's: not the threads that run the connections). The one place the Manager's
/// cache reaches the disk from.
pub(super) fn start(runtime: &Runtime, writer: Arc<Writer>) {
    runtime.unblock_detached(move || writer.drain());
}

#[cfg(all(test, feature = "smol"))]
mod tests {
    use super::*;

    fn list(text: &str, ttl: Option<u64>) -> CachedList {
        let raw = format!(r#"{{"tools": [{text}]}}"#);
        let mut l = CachedList::from_raw(ListKind::Tools, &raw, 1, None).unwrap();
        l.ttl_ms = ttl;
        l
    }

    fn persist(store: &Store, key: &str) {
        if let Some(writer) = store.persist(key) {
            start(&SMOL, writer);
        }
    }

    const SMOL: Runtime = Runtime::Smol { spawn: true };

    /// A writer whose writes say they began, then wait until the test lets them go, then say
    /// what they wrote.
    struct Gated {
        store: Store,
        began: smol::channel::Receiver<()>,
        go: smol::channel::Sender<()>,
        written: smol::channel::Receiver<String>,
    }

    fn gated() -> Gated {
        let (go, gate) = smol::channel::unbounded::<()>();
        let (begin, began) = smol::channel::unbounded();
        let (said, written) = smol::channel::unbounded();
        let io: WriteIo = Arc::new(move |_: &Path, key: &str, bytes: &[u8]| {
            let _ = begin.send_blocking(());
            let _ = gate.recv_blocking();
            let text = String::from_utf8_lossy(bytes);
            let _ = said.send_blocking(format!("{key} {text}"));
            Ok(())
        });
        Gated {
            store: Store::on_disk_with(PathBuf::from("unused"), io),
            began,
            go,
            written,
        }
    }

    /// While one write of a server waits on the disk, its later changes wait as one entry,
    /// the newest: two writes in all, the second with the last change.
    #[test]
    fn changes_while_a_write_waits_are_written_once_the_newest() {
        let Gated {
            mut store,
            began,
            go,
            written,
        } = gated();
        store.put_list("k", ListKind::Tools, list(r#"{"name": "a"}"#, None));
        persist(&store, "k");
        began.recv_blocking().unwrap();
        for name in ["b", "c", "d"] {
            store.put_list(
                "k",
                ListKind::Tools,
                list(&format!(r#"{{"name": "{name}"}}"#), None),
            );
            store.put_era("k", name);
            persist(&store, "k");
        }
        let writer = store.writer().unwrap();
        for _ in 0..2 {
            go.send_blocking(()).unwrap();
        }
        assert!(smol::block_on(
            writer.flushed(&SMOL, Duration::from_secs(10))
        ));
        let got: Vec<String> = std::iter::from_fn(|| written.try_recv().ok()).collect();
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].contains(r#"{"name": "a"}"#), "{got:?}");
        assert!(got[1].contains(r#"{"name": "d"}"#) && got[1].contains(r#""era":"d""#));
        // Nothing more waits: one more change is one more write.
        persist(&store, "k");
        go.send_blocking(()).unwrap();
        assert!(smol::block_on(
            writer.flushed(&SMOL, Duration::from_secs(10))
        ));
        let last = written.try_recv().unwrap();
        assert!(last.contains(r#"{"name": "d"}"#), "{last}");
    }

    /// A write that fails, or whose function panics, leaves the writer writing the next.
    #[test]
    fn a_failed_write_is_followed_by_the_next() {
        let tmp = std::env::temp_dir().join(format!("mcpwire-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = calls.clone();
        let io: WriteIo = Arc::new(move |dir: &Path, key: &str, bytes: &[u8]| {
            match count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
                0 => Err(io::Error::from(io::ErrorKind::StorageFull)),
                1 => panic!("a bug in the writer"),
                _ => crate::disk::write_atomic(dir, key, bytes),
            }
        });
        let mut store = Store::on_disk_with(tmp.clone(), io);
        let writer = store.writer().unwrap();
        for ttl in 1..=3 {
            store.put_list("k", ListKind::Tools, list(r#"{"name": "a"}"#, Some(ttl)));
            persist(&store, "k");
            assert!(smol::block_on(
                writer.flushed(&SMOL, Duration::from_secs(10))
            ));
        }
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 3);
        let read = cache::read_entry(&tmp, "k").unwrap();
        assert_eq!(read.lists[&ListKind::Tools].ttl_ms, Some(3));
        // Invalidated in memory: the next write has it stale.
        store.invalidate("k", ListKind::Tools);
        persist(&store, "k");
        assert!(smol::block_on(
            writer.flushed(&SMOL, Duration::from_secs(10))
        ));
        let read = cache::read_entry(&tmp, "k").unwrap();
        assert_eq!(read.lists[&ListKind::Tools].ttl_ms, Some(0));
        let _ = std::fs::remove_dir_all(&tmp);
    }

    /// A pipe in a file's place is no file: read as nothing, at once.
    #[cfg(unix)]
    #[test]
    fn a_pipe_in_a_file_s_place_is_read_as_nothing() {
        let tmp = std::env::temp_dir().join(format!("mcpwire-store-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        let path = std::ffi::CString::new(tmp.join("k.json").to_str().unwrap()).unwrap();
        // SAFETY: a valid, NUL-terminated path; mkfifo reads it only.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        assert!(cache::read_entry(&tmp, "k").is_none());
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
