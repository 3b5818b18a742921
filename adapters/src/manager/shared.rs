//! The Manager's state, shared by the host's handle and each server's supervisor: the servers,
//! the list cache, the events the host has not read, and what a supervisor is told. The
//! handle (`mod.rs`) and the supervisors (`supervise.rs`) import it; it imports neither.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use async_channel::Sender;
use mcpwire_core::config::ServerConfig;
use mcpwire_core::types::Tool;
use serde_json::value::RawValue;

use super::cache::{self, CachedList, Freshness, ListKind};
use super::items::{self, Item, Others, Snapshots};
use super::naming::{self, qualify};
use super::options::ManagerOptions;
use super::state::{Managed, ManagedTool, ManagerEvent, ServerState};
use super::store::{self, Store};
use crate::client::Client;
use crate::hosts::ServerSettings;
use crate::runtime::host::Joinable;
use crate::runtime::Runtime;

/// What the host asks of one server's supervisor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Control {
    /// Try again now (after giving up, or while waiting).
    Restart,
    /// The server cannot be reached (an HTTP request found no connection): its connection
    /// counts as failed, and is made again after the backoff.
    Lost(String),
    /// Stop: close the connection and end.
    Stop,
}

/// One server as the Manager holds it.
pub(super) struct Slot {
    pub(super) config: ServerConfig,
    pub(super) settings: ServerSettings,
    pub(super) key: String,
    pub(super) state: ServerState,
    pub(super) client: Option<Client>,
    /// Its tools as listed in this run, after its filter, under their names (shared: the
    /// namespace is made of them).
    pub(super) tools: Option<Arc<Chunk>>,
    /// Its cached tools, as served while it is not ready (made when first needed, dropped when
    /// the cache changes).
    pub(super) stale: Option<Arc<Chunk>>,
    /// Its prompts and resources, as listed in this run or cached.
    pub(super) others: Others,
    pub(super) control: Option<Sender<Control>>,
    pub(super) task: Option<Joinable>,
}

/// The Manager's state, shared with each server's supervisor.
pub(super) struct Inner {
    pub(super) servers: BTreeMap<String, Slot>,
    /// The lists and eras remembered, in memory (their writer works off this lock).
    pub(super) store: Store,
    pub(super) events: std::collections::VecDeque<ManagerEvent>,
    pub(super) dropped: u64,
    pub(super) seeds: u64,
    /// The naming notes already reported.
    pub(super) notes_seen: Vec<naming::NamingNote>,
    /// The namespace as last made (see [`Shared::namespace`]).
    pub(super) namespace: Option<Arc<Namespace>>,
    /// The prompts and resources as last handed to the host (see [`Shared::items`]).
    pub(super) snapshots: Snapshots,
    /// Counts the changes to what the namespace and the snapshots are made of: a server added
    /// or removed, a state, a live list, a cached list. What was made at the current count is
    /// current.
    pub(super) generation: u64,
}

impl Inner {
    /// Something the namespace is made of changed.
    pub(super) fn touch(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    /// The cached list of `kind` of the servers of cache key `key` changed.
    fn cache_changed(&mut self, key: &str, kind: ListKind) {
        for slot in self.servers.values_mut().filter(|s| s.key == key) {
            match kind {
                ListKind::Tools => slot.stale = None,
                _ => slot.others.cache_changed(kind),
            }
        }
        self.touch();
    }
}

/// One server's tools in the namespace, made once per list: when it is listed, or, for a server
/// that is not ready, from its cached list.
pub(super) struct Chunk {
    /// The server's name.
    server: String,
    /// The tools (after the server's filter) under their plain names: the server's, the
    /// separator, the tool's.
    pub(super) tools: Vec<ManagedTool>,
    /// Whether those names are final: legal, short enough, no separator in the server's name
    /// ([`naming::plain_server`]).
    plain: bool,
    /// A hash of the names, in order: a quick test that two chunks have the same names.
    names: u64,
}

impl Chunk {
    /// The chunk of server `server`'s `tools` (after `filter`).
    pub(super) fn new(
        policy: &naming::NamingPolicy,
        server: &str,
        tools: Vec<Tool>,
        filter: &crate::hosts::ToolFilter,
        stale: bool,
    ) -> Chunk {
        let tools = filter.keep(tools);
        let plain = naming::plain_server(
            policy,
            server,
            tools.iter().map(|t| t.name.as_str()),
            std::iter::empty(),
        );
        let separator = naming::separator(policy);
        let mut names = naming::Fnv::default();
        let tools: Vec<ManagedTool> = tools
            .into_iter()
            .map(|tool| {
                let qualified = format!("{server}{separator}{}", tool.name);
                names.write(qualified.as_bytes());
                ManagedTool {
                    qualified,
                    server: server.to_owned(),
                    tool: Arc::new(tool),
                    stale,
                }
            })
            .collect();
        Chunk {
            server: server.to_owned(),
            tools,
            plain,
            names: names.finish(),
        }
    }
}

/// The tools of every server under their qualified names, and when it was made.
pub(super) struct Namespace {
    /// The [`Inner::generation`] it was made at.
    generation: u64,
    /// The tools, server by server (one chunk of every server's when some names had to
    /// change).
    chunks: Vec<Arc<Chunk>>,
    /// The names that had to change.
    pub(super) notes: Vec<naming::NamingNote>,
    /// A qualified name's place: chunk, then tool.
    pub(super) by_name: Arc<std::collections::HashMap<String, (u32, u32)>>,
    /// Each chunk's server and names, when every name is plain: the same give the same
    /// `by_name`.
    made_of: Option<Vec<(String, u64, usize)>>,
    /// Every tool in one list, as the host is handed it: made when first asked for.
    flat: OnceLock<Arc<[ManagedTool]>>,
}

impl Namespace {
    /// Every tool, server by server.
    pub(super) fn tools(&self) -> impl Iterator<Item = &ManagedTool> {
        self.chunks.iter().flat_map(|c| c.tools.iter())
    }

    /// Every tool in one shared list, made once (the namespace's tools are shared, so this
    /// copies names, not tools).
    pub(super) fn snapshot(&self) -> Arc<[ManagedTool]> {
        self.flat
            .get_or_init(|| self.tools().cloned().collect())
            .clone()
    }

    /// How many tools.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.chunks.iter().map(|c| c.tools.len()).sum()
    }

    /// The tool at `at` (a value of `by_name`).
    pub(super) fn get(&self, at: (u32, u32)) -> &ManagedTool {
        &self.chunks[at.0 as usize].tools[at.1 as usize]
    }

    /// Where the first tool that `found` accepts is.
    pub(super) fn position(&self, found: impl Fn(&ManagedTool) -> bool) -> Option<(u32, u32)> {
        self.chunks.iter().enumerate().find_map(|(c, chunk)| {
            let t = chunk.tools.iter().position(&found)?;
            Some((c as u32, t as u32))
        })
    }

    /// The lookup table of names.
    fn index(chunks: &[Arc<Chunk>]) -> std::collections::HashMap<String, (u32, u32)> {
        let mut by_name =
            std::collections::HashMap::with_capacity(chunks.iter().map(|c| c.tools.len()).sum());
        for (c, chunk) in chunks.iter().enumerate() {
            for (t, tool) in chunk.tools.iter().enumerate() {
                by_name.insert(tool.qualified.clone(), (c as u32, t as u32));
            }
        }
        by_name
    }
}

pub(super) struct Shared {
    pub(super) options: ManagerOptions,
    /// The runtime its supervisors, connections, timers and cache writes run on.
    pub(super) runtime: Runtime,
    pub(super) inner: Mutex<Inner>,
    pub(super) changed: event_listener::Event,
}

impl Shared {
    /// The runtime a server's connection runs on: the Manager's (on smol, the host's
    /// handlers run inside the driver's task, as with [`crate::connect`]).
    pub(super) fn connection_runtime(&self) -> Runtime {
        match self.runtime {
            #[cfg(feature = "smol")]
            Runtime::Smol { .. } => Runtime::Smol { spawn: false },
            #[cfg(feature = "tokio")]
            Runtime::Tokio(ref handle) => Runtime::Tokio(handle.clone()),
        }
    }

    /// The state's lock. No host code runs under it; a panic of ours under it leaves the state
    /// between two of its changes, each made whole under the lock: later calls go on rather
    /// than each panicking in turn.
    pub(super) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn emit_locked(&self, inner: &mut Inner, event: ManagerEvent) {
        if inner.events.len() >= self.options.max_events.max(1) {
            inner.events.pop_front();
            inner.dropped += 1;
        }
        inner.events.push_back(event);
    }

    pub(super) fn emit(&self, event: ManagerEvent) {
        let mut inner = self.lock();
        self.emit_locked(&mut inner, event);
        drop(inner);
        self.changed.notify(usize::MAX);
    }

    pub(super) fn set_state(&self, name: &str, state: ServerState) {
        let mut inner = self.lock();
        self.set_state_locked(&mut inner, name, state);
        drop(inner);
        self.changed.notify(usize::MAX);
    }

    pub(super) fn set_state_locked(&self, inner: &mut Inner, name: &str, state: ServerState) {
        let Some(slot) = inner.servers.get_mut(name) else {
            return;
        };
        if slot.state == state {
            return;
        }
        slot.state = state.clone();
        inner.touch();
        self.emit_locked(
            inner,
            ManagerEvent::State {
                server: name.to_owned(),
                state,
            },
        );
    }

    /// A ready server's client and tools: the state becomes `ready`.
    pub(super) fn set_tools(&self, name: &str, client: Client, tools: Vec<Tool>) {
        let mut inner = self.lock();
        let Some(slot) = inner.servers.get_mut(name) else {
            return;
        };
        let chunk = Chunk::new(
            &self.options.naming,
            name,
            tools,
            &slot.settings.tools,
            false,
        );
        slot.client = Some(client);
        slot.tools = Some(Arc::new(chunk));
        // Listed again while ready: the count follows. The first listing waits for the rest
        // of the server's lists ([`Shared::mark_ready`]).
        let ready = matches!(slot.state, ServerState::Ready { .. });
        inner.touch();
        drop(inner);
        if ready {
            self.mark_ready(name);
        }
    }

    /// The server is ready: its client and lists are in place.
    pub(super) fn mark_ready(&self, name: &str) {
        let mut inner = self.lock();
        let Some(slot) = inner.servers.get_mut(name) else {
            return;
        };
        let count = slot.tools.as_ref().map_or(0, |chunk| chunk.tools.len());
        let era = slot.client.as_ref().and_then(Client::era);
        self.set_state_locked(&mut inner, name, ServerState::Ready { era, tools: count });
        drop(inner);
        self.changed.notify(usize::MAX);
        self.emit(ManagerEvent::ToolsChanged {
            server: name.to_owned(),
        });
        // Making the namespace to find the notes costs as much as all the tools of every
        // server: with many servers becoming ready one after the other, that is quadratic.
        // A server whose names are plain adds no note.
        if !self.plain(name) {
            self.report_naming();
        }
    }

    /// Whether server `name`'s tools get their plain names and change no other name (see
    /// [`naming::plain_server`]), with no note anywhere so far.
    fn plain(&self, name: &str) -> bool {
        let inner = self.lock();
        let Some(slot) = inner.servers.get(name) else {
            return true;
        };
        let no_notes = inner.notes_seen.is_empty()
            && inner.namespace.as_ref().is_none_or(|n| n.notes.is_empty());
        let tools = slot
            .tools
            .iter()
            .flat_map(|chunk| chunk.tools.iter().map(|t| t.tool.name.as_str()));
        let others = inner
            .servers
            .keys()
            .filter(|other| *other != name)
            .map(String::as_str);
        no_notes && naming::plain_server(&self.options.naming, name, tools, others)
    }

    /// The run is over: no client until the next, and the state that follows, in one step
    /// (never `ready` without a client).
    pub(super) fn end_run(&self, name: &str, state: ServerState) {
        let mut inner = self.lock();
        if let Some(slot) = inner.servers.get_mut(name) {
            slot.client = None;
            slot.tools = None;
            slot.others.end_run();
            inner.touch();
        }
        self.set_state_locked(&mut inner, name, state);
        drop(inner);
        self.changed.notify(usize::MAX);
    }

    /// Tells server `name`'s supervisor that its server cannot be reached.
    pub(super) fn lost(&self, name: &str, reason: String) {
        let control = self
            .lock()
            .servers
            .get(name)
            .and_then(|s| s.control.clone());
        if let Some(control) = control {
            let _ = control.try_send(Control::Lost(reason));
        }
    }

    /// The fingerprint of the credentials server `name` is reached with (its
    /// `Authorization` header), for lists the server marks private.
    pub(super) fn credentials_of(&self, name: &str) -> Option<String> {
        cache::credentials_of(&self.lock().servers.get(name)?.config)
    }

    /// A ready server's prompts or resources, as just listed.
    pub(super) fn set_items<T: Item>(&self, name: &str, items: Vec<T>) {
        let mut inner = self.lock();
        if let Some(slot) = inner.servers.get_mut(name) {
            T::listed_mut(&mut slot.others).live = Some(items.into_iter().map(Arc::new).collect());
            inner.touch();
        }
    }

    /// Every server's prompts or resources: a ready server's as listed, a starting,
    /// restarting or failed one's from the cache (stale), as for the tools. One snapshot,
    /// made again only when a list or a state changed since the last ([`Inner::generation`]).
    pub(super) fn items<T: Item>(&self) -> Arc<[Managed<T>]> {
        let mut guard = self.lock();
        let inner = &mut *guard;
        let generation = inner.generation;
        if let Some((made, snapshot)) = T::snapshot(&mut inner.snapshots) {
            if *made == generation {
                return snapshot.clone();
            }
        }
        // The cached lists of servers that are not ready, read once.
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let need: Vec<String> = inner
            .servers
            .iter()
            .filter(|(_, s)| {
                let listed = T::listed(&s.others);
                let live = matches!(s.state, ServerState::Ready { .. }) && listed.live.is_some();
                !live && s.state != ServerState::Disabled && listed.stale.is_none()
            })
            .map(|(name, _)| name.clone())
            .collect();
        for name in need {
            let Some(list) = cached(inner, &name, T::KIND, now_ms) else {
                continue;
            };
            let slot = inner.servers.get_mut(&name).expect("listed above");
            T::listed_mut(&mut slot.others).stale = Some(items::read_cached(&list.items));
        }
        let mut out = Vec::new();
        for (name, slot) in &inner.servers {
            let listed = T::listed(&slot.others);
            let (items, stale) = match (&slot.state, &listed.live) {
                (ServerState::Disabled, _) => continue,
                (ServerState::Ready { .. }, Some(live)) => (live, false),
                _ => match &listed.stale {
                    Some(cached) => (cached, true),
                    None => continue,
                },
            };
            out.extend(items.iter().map(|item| Managed {
                server: name.clone(),
                item: item.clone(),
                stale,
            }));
        }
        let snapshot: Arc<[Managed<T>]> = out.into();
        *T::snapshot(&mut inner.snapshots) = Some((generation, snapshot.clone()));
        snapshot
    }

    pub(super) fn cached_era(&self, key: &str) -> Option<String> {
        self.lock().store.get(key).and_then(|c| c.era.clone())
    }

    pub(super) fn remember_era(&self, key: &str, era: &str) {
        self.lock().store.put_era(key, era);
    }

    pub(super) fn store_list(&self, key: &str, kind: ListKind, list: CachedList) {
        let mut inner = self.lock();
        // A cached list is what a server that is not ready serves.
        inner.cache_changed(key, kind);
        inner.store.put_list(key, kind, list);
    }

    pub(super) fn invalidate(&self, key: &str, kind: ListKind) {
        let mut inner = self.lock();
        inner.cache_changed(key, kind);
        inner.store.invalidate(key, kind);
    }

    /// Has the lists and era of cache key `key` written as they are now, off the lock: in the
    /// order of the changes; a thread is set writing after the lock is let go.
    pub(super) fn persist(&self, key: &str) {
        let writer = self.lock().store.persist(key);
        if let Some(writer) = writer {
            store::start(&self.runtime, writer);
        }
    }

    /// Reads the file of cache key `key`, unless it was read: off the lock (the memory copy
    /// is what is served after).
    pub(super) fn load(&self, key: &str) {
        let Some(dir) = self.lock().store.to_read(key) else {
            return;
        };
        let read = cache::read_entry(&dir, key);
        self.lock().store.read(key, read);
    }

    /// The namespace, and the notes on names that had to change: the one last made, unless
    /// something it is made of changed since ([`Inner::generation`]), so that looking a name
    /// up costs one comparison and a hash lookup. One made from cached lists is kept too:
    /// whether a cached list is served depends on the credentials only (time decides whether
    /// it is fresh or stale, and a server that is not ready is marked stale either way).
    pub(super) fn namespace(&self) -> Arc<Namespace> {
        let mut inner = self.lock();
        if let Some(kept) = inner
            .namespace
            .as_ref()
            .filter(|n| n.generation == inner.generation)
        {
            return kept.clone();
        }
        let namespace = Arc::new(self.make_namespace(&mut inner));
        inner.namespace = Some(namespace.clone());
        namespace
    }

    /// Makes the namespace: each ready server's live list, or for one that is starting,
    /// restarting or failed its cached list, stale. When every name is plain (the usual case)
    /// the servers' chunks are taken as they are, and the lookup table of the last namespace
    /// too when the names are the same (a server restarted): no tool is copied, nothing sorted.
    fn make_namespace(&self, inner: &mut Inner) -> Namespace {
        let generation = inner.generation;
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        // The chunks of servers that are not ready, from the cache, made once.
        let need: Vec<String> = inner
            .servers
            .iter()
            .filter(|(_, s)| {
                let live = matches!(s.state, ServerState::Ready { .. }) && s.tools.is_some();
                !live && s.state != ServerState::Disabled && s.stale.is_none()
            })
            .map(|(name, _)| name.clone())
            .collect();
        for name in need {
            let Some(list) = cached(inner, &name, ListKind::Tools, now_ms) else {
                continue;
            };
            let slot = inner.servers.get_mut(&name).expect("listed above");
            let chunk = Chunk::new(
                &self.options.naming,
                &name,
                tools_of(&list.items),
                &slot.settings.tools,
                true,
            );
            slot.stale = Some(Arc::new(chunk));
        }
        let mut chunks = Vec::with_capacity(inner.servers.len());
        let mut plain = true;
        for (name, slot) in &inner.servers {
            let chunk = match (&slot.state, &slot.tools) {
                (ServerState::Disabled, _) => continue,
                (ServerState::Ready { .. }, Some(tools)) => tools,
                _ => match &slot.stale {
                    Some(stale) => stale,
                    None => continue,
                },
            };
            plain &= chunk.plain && naming::plain_server_name(&self.options.naming, name);
            chunks.push(chunk.clone());
        }
        if plain {
            let made_of: Vec<(String, u64, usize)> = chunks
                .iter()
                .map(|c| (c.server.clone(), c.names, c.tools.len()))
                .collect();
            // The last table serves when every chunk has the same names in the same place
            // (a server restarted, listed the same tools): compared name by name where the
            // chunk is another, so a table never points at another tool.
            let by_name = match &inner.namespace {
                Some(last)
                    if last.made_of.as_ref() == Some(&made_of)
                        && last.chunks.iter().zip(&chunks).all(|(a, b)| {
                            Arc::ptr_eq(a, b)
                                || a.tools
                                    .iter()
                                    .zip(&b.tools)
                                    .all(|(x, y)| x.qualified == y.qualified)
                        }) =>
                {
                    last.by_name.clone()
                }
                _ => Arc::new(Namespace::index(&chunks)),
            };
            // The host's list serves again when the chunks are the same ones (a state changed
            // that changed no tool).
            let flat = match &inner.namespace {
                Some(last)
                    if last.chunks.len() == chunks.len()
                        && last
                            .chunks
                            .iter()
                            .zip(&chunks)
                            .all(|(a, b)| Arc::ptr_eq(a, b)) =>
                {
                    last.flat.clone()
                }
                _ => OnceLock::new(),
            };
            return Namespace {
                generation,
                chunks,
                notes: Vec::new(),
                by_name,
                made_of: Some(made_of),
                flat,
            };
        }
        // Some names must change: every pair is named at once.
        let found: Vec<&ManagedTool> = chunks.iter().flat_map(|c| c.tools.iter()).collect();
        let pairs: Vec<(String, String)> = found
            .iter()
            .map(|t| (t.server.clone(), t.tool.name.clone()))
            .collect();
        let (names, notes) = qualify(&self.options.naming, &pairs);
        let by_pair: std::collections::HashMap<(&str, &str), &str> = names
            .iter()
            .map(|q| ((q.server.as_str(), q.tool.as_str()), q.qualified.as_str()))
            .collect();
        let tools: Vec<ManagedTool> = found
            .into_iter()
            .map(|t| {
                let qualified = by_pair
                    .get(&(t.server.as_str(), t.tool.name.as_str()))
                    .map_or_else(|| t.tool.name.clone(), |q| (*q).to_owned());
                ManagedTool {
                    qualified,
                    ..t.clone()
                }
            })
            .collect();
        let chunks = vec![Arc::new(Chunk {
            server: String::new(),
            tools,
            plain: false,
            names: 0,
        })];
        let by_name = Arc::new(Namespace::index(&chunks));
        Namespace {
            generation,
            chunks,
            notes,
            by_name,
            made_of: None,
            flat: OnceLock::new(),
        }
    }

    /// Reports the names that had to change and were not reported yet.
    pub(super) fn report_naming(&self) {
        let namespace = self.namespace();
        for note in namespace.notes.iter().cloned() {
            let mut inner = self.lock();
            if inner.notes_seen.contains(&note) {
                continue;
            }
            inner.notes_seen.push(note.clone());
            self.emit_locked(&mut inner, ManagerEvent::Naming(note));
        }
        self.changed.notify(usize::MAX);
    }
}

/// Server `name`'s cached list of `kind`, unless it is private to other credentials.
pub(super) fn cached(
    inner: &Inner,
    name: &str,
    kind: ListKind,
    now_ms: u64,
) -> Option<Arc<CachedList>> {
    let slot = inner.servers.get(name)?;
    let credentials = cache::credentials_of(&slot.config);
    let list = inner.store.get(&slot.key)?.lists.get(&kind)?;
    (list.freshness(now_ms, credentials.as_deref()) != Freshness::Unusable).then(|| list.clone())
}

/// The tools in a cached list (items that do not parse are left out).
pub(super) fn tools_of(items: &[Box<RawValue>]) -> Vec<Tool> {
    items
        .iter()
        .filter_map(|v| serde_json::from_str(v.get()).ok())
        .collect()
}

#[cfg(all(test, feature = "smol"))]
mod tests {
    use super::*;

    fn shared() -> Shared {
        Shared {
            options: ManagerOptions::default(),
            runtime: Runtime::Smol { spawn: true },
            inner: Mutex::new(Inner {
                servers: BTreeMap::new(),
                store: Store::in_memory(),
                events: Default::default(),
                dropped: 0,
                seeds: 0,
                notes_seen: Vec::new(),
                namespace: None,
                snapshots: Default::default(),
                generation: 0,
            }),
            changed: event_listener::Event::new(),
        }
    }

    fn tools(names: &[&str]) -> Arc<Vec<Tool>> {
        let tool = |n: &&str| {
            serde_json::from_value(
                serde_json::json!({"name": n, "inputSchema": {"type": "object"}}),
            )
            .unwrap()
        };
        Arc::new(names.iter().map(tool).collect())
    }

    fn ready(name: &str, list: Arc<Vec<Tool>>) -> Slot {
        let chunk = Chunk::new(
            &Default::default(),
            name,
            list.to_vec(),
            &Default::default(),
            false,
        );
        Slot {
            config: ServerConfig::stdio("x", Vec::<String>::new()),
            settings: ServerSettings::default(),
            key: "k".into(),
            state: ServerState::Ready {
                era: None,
                tools: list.len(),
            },
            client: None,
            tools: Some(Arc::new(chunk)),
            stale: None,
            others: Default::default(),
            control: None,
            task: None,
        }
    }

    #[test]
    fn a_panic_under_the_lock_leaves_the_manager_usable() {
        let s = Arc::new(shared());
        let held = s.clone();
        let panicked = std::thread::spawn(move || {
            let _inner = held.lock();
            panic!("a bug while the lock is held");
        })
        .join();
        assert!(panicked.is_err());
        assert!(s.inner.is_poisoned());
        s.lock()
            .servers
            .insert("a".into(), ready("a", tools(&["x"])));
        s.lock().touch();
        assert_eq!(s.namespace().len(), 1);
        s.emit(ManagerEvent::ToolsChanged { server: "a".into() });
        assert_eq!(s.lock().events.len(), 1);
    }

    #[test]
    fn the_namespace_is_made_again_only_when_what_it_is_made_of_changes() {
        let s = shared();
        {
            let mut inner = s.lock();
            inner
                .servers
                .insert("a".into(), ready("a", tools(&["x", "y"])));
            inner.servers.insert("b".into(), ready("b", tools(&["x"])));
            inner.touch();
        }
        let first = s.namespace();
        assert_eq!(first.len(), 3);
        assert_eq!(first.by_name.len(), 3);
        assert!(Arc::ptr_eq(&first, &s.namespace()), "nothing changed: kept");
        // Listed again: made again.
        let (stdout, _) = piper::pipe(64);
        let (_, stdin) = piper::pipe(64);
        let (client, _driver) =
            crate::connect_streams("b", stdout, stdin, crate::ConnectOptions::default());
        s.set_tools("b", client, tools(&["x", "z"]).to_vec());
        let second = s.namespace();
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(second.len(), 4);
        assert!(Arc::ptr_eq(&second, &s.namespace()));
        // A server restarting serves its cache, stale: made again, then kept.
        s.end_run(
            "a",
            ServerState::Restarting {
                attempt: 2,
                next_try_at: std::time::Instant::now(),
                reason: "gone".into(),
            },
        );
        let third = s.namespace();
        assert_eq!(third.len(), 2, "no cached list for a: only b's");
        assert!(Arc::ptr_eq(&third, &s.namespace()));
        // A list cached meanwhile is served at once.
        let cached = serde_json::json!({"tools": [
            {"name": "x", "inputSchema": {"type": "object"}}]});
        let list = CachedList::from_result(ListKind::Tools, &cached, 0, None).unwrap();
        s.store_list("k", ListKind::Tools, list);
        s.persist("k");
        let fourth = s.namespace();
        assert!(!Arc::ptr_eq(&third, &fourth));
        assert_eq!(fourth.len(), 3);
        assert!(fourth.tools().any(|t| t.server == "a" && t.stale));
        assert!(Arc::ptr_eq(&fourth, &s.namespace()));
    }

    /// The host's lists are shared: taken again without a change, the same list; after a
    /// change, a new list whose unchanged tools and prompts are the same ones; a state that
    /// changes no tool keeps the list.
    #[test]
    fn the_host_s_lists_are_shared_and_made_again_only_on_a_change() {
        use mcpwire_core::types::Prompt;
        let s = shared();
        {
            let mut inner = s.lock();
            inner
                .servers
                .insert("a".into(), ready("a", tools(&["x", "y"])));
            inner.servers.insert("b".into(), ready("b", tools(&["z"])));
            inner.touch();
        }
        let first = s.namespace().snapshot();
        assert_eq!(first.len(), 3);
        assert!(Arc::ptr_eq(&first, &s.namespace().snapshot()), "no change");
        // A state that changes no tool: the same list.
        s.set_state(
            "b",
            ServerState::Ready {
                era: None,
                tools: 2,
            },
        );
        assert!(Arc::ptr_eq(&first, &s.namespace().snapshot()), "same tools");
        // b listed again: a new list; a's tools in it are the very same.
        let (stdout, _) = piper::pipe(64);
        let (_, stdin) = piper::pipe(64);
        let (client, _driver) =
            crate::connect_streams("b", stdout, stdin, crate::ConnectOptions::default());
        s.set_tools("b", client, tools(&["z", "w"]).to_vec());
        let second = s.namespace().snapshot();
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(second.len(), 4);
        assert!(Arc::ptr_eq(&first[0].tool, &second[0].tool));
        assert!(Arc::ptr_eq(&first[1].tool, &second[1].tool));

        // Prompts: one list until a list or a state changes.
        let prompt =
            |n: &str| -> Prompt { serde_json::from_value(serde_json::json!({"name": n})).unwrap() };
        s.set_items("a", vec![prompt("p"), prompt("q")]);
        let prompts = s.items::<Prompt>();
        assert_eq!(prompts.len(), 2);
        assert!(Arc::ptr_eq(&prompts, &s.items::<Prompt>()));
        s.set_items("b", vec![prompt("r")]);
        let again = s.items::<Prompt>();
        assert_eq!(again.len(), 3);
        assert!(Arc::ptr_eq(&prompts[0].item, &again[0].item), "a's, shared");
        // A server that is not ready serves no live prompt.
        s.end_run("a", ServerState::Disabled);
        let left = s.items::<Prompt>();
        let names: Vec<&str> = left.iter().map(|p| p.item.name.as_str()).collect();
        assert_eq!(names, ["r"]);
    }
}
