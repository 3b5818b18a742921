//! Many servers at once: the [`Manager`] connects them concurrently, isolates their failures,
//! restarts and reconnects them with backoff, caches their lists, and gives the host one
//! namespace of tools.
//!
//! Its decisions are small pure types, testable without IO: [`backoff`] (when to try again),
//! [`naming`] (one legal, collision-free name per tool), [`cache`] (what is served while a
//! server starts, and what is remembered between runs).
//!
//! It stands above everything else in the crate: it reads [`hosts`](crate::hosts) files,
//! connects with [`connect`](crate::connect) and calls each server's [`Client`]; nothing else
//! in the crate imports it.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use mcpwire::hosts::Loader;
//! use mcpwire::manager::{Manager, ManagerOptions};
//!
//! let loaded = Loader::from_process()?.load_file(std::path::Path::new(".mcp.json"))?;
//! let manager = Manager::from_loaded(&loaded, ManagerOptions::default());
//! manager.wait_settled().await; // or use each server the moment it is ready
//! for tool in manager.tools() {
//!     println!("{} ({}{})", tool.qualified, tool.server, if tool.stale { ", cached" } else { "" });
//! }
//! let result = manager.call_tool("github__search", serde_json::json!({"q": "mcp"})).await?;
//! println!("{}", result.text());
//! manager.close().await;
//! # Ok(()) }
//! ```

pub mod backoff;
pub mod cache;
pub mod naming;
mod options;
mod state;
mod supervise;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcpwire_core::config::ServerConfig;
use mcpwire_core::types::{CallToolResult, Prompt, Resource, Tool};
use serde_json::Value;
use smol::channel::Sender;

use self::cache::{cache_key, CachedList, Freshness, ListCache, ListKind};
use self::naming::{qualify, resolve, Qualified};
pub use self::options::{CacheLocation, ManagerOptions, OptionsFactory};
pub use self::state::{ManagerError, ManagerEvent, ServerState};
use self::supervise::Control;
use crate::client::{CallOptions, Client};
use crate::error::Error;
use crate::hosts::{Loaded, ServerSettings};

/// One tool in the host's namespace.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagedTool {
    /// Its name in the namespace (`server__tool` by default).
    pub qualified: String,
    /// The server that offers it.
    pub server: String,
    /// The tool as the server lists it.
    pub tool: Tool,
    /// Served from the cache while the server is not ready.
    pub stale: bool,
}

/// A prompt or resource of one server.
#[derive(Debug, Clone, PartialEq)]
pub struct Managed<T> {
    /// The server that offers it.
    pub server: String,
    /// The item as the server lists it.
    pub item: T,
    /// Served from the cache while the server is not ready.
    pub stale: bool,
}

/// One server as the Manager holds it.
struct Slot {
    config: ServerConfig,
    settings: ServerSettings,
    key: String,
    state: ServerState,
    client: Option<Client>,
    tools: Option<Vec<Tool>>,
    /// Its prompts and resources, as listed in this run (items as sent).
    others: BTreeMap<ListKind, Vec<Value>>,
    control: Option<Sender<Control>>,
    task: Option<smol::Task<()>>,
}

/// The Manager's state, shared with each server's supervisor.
struct Inner {
    servers: BTreeMap<String, Slot>,
    cache: ListCache,
    events: std::collections::VecDeque<ManagerEvent>,
    dropped: u64,
    seeds: u64,
    /// The naming notes already reported.
    notes_seen: Vec<naming::NamingNote>,
}

pub(super) struct Shared {
    options: ManagerOptions,
    inner: Mutex<Inner>,
    changed: event_listener::Event,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().expect("not poisoned")
    }

    fn emit_locked(&self, inner: &mut Inner, event: ManagerEvent) {
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

    fn set_state_locked(&self, inner: &mut Inner, name: &str, state: ServerState) {
        let Some(slot) = inner.servers.get_mut(name) else {
            return;
        };
        if slot.state == state {
            return;
        }
        slot.state = state.clone();
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
        slot.client = Some(client);
        slot.tools = Some(tools);
        // Listed again while ready: the count follows. The first listing waits for the rest
        // of the server's lists ([`Shared::mark_ready`]).
        let ready = matches!(slot.state, ServerState::Ready { .. });
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
        let count = slot.tools.as_ref().map_or(0, |tools| {
            tools
                .iter()
                .filter(|t| slot.settings.tools.allows(&t.name))
                .count()
        });
        let era = slot.client.as_ref().and_then(Client::era);
        self.set_state_locked(&mut inner, name, ServerState::Ready { era, tools: count });
        drop(inner);
        self.changed.notify(usize::MAX);
        self.emit(ManagerEvent::ToolsChanged {
            server: name.to_owned(),
        });
        self.report_naming();
    }

    /// The run is over: no client until the next, and the state that follows, in one step
    /// (never `ready` without a client).
    pub(super) fn end_run(&self, name: &str, state: ServerState) {
        let mut inner = self.lock();
        if let Some(slot) = inner.servers.get_mut(name) {
            slot.client = None;
            slot.tools = None;
            slot.others.clear();
        }
        self.set_state_locked(&mut inner, name, state);
        drop(inner);
        self.changed.notify(usize::MAX);
    }

    /// Tells server `name`'s supervisor that its server cannot be reached.
    fn lost(&self, name: &str, reason: String) {
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
        credentials_of_config(&self.lock().servers.get(name)?.config)
    }

    /// A ready server's prompts or resources, as just listed.
    pub(super) fn set_others(&self, name: &str, kind: ListKind, items: Vec<Value>) {
        if let Some(slot) = self.lock().servers.get_mut(name) {
            slot.others.insert(kind, items);
        }
    }

    /// Every server's prompts or resources: a ready server's as listed, a starting one's from
    /// the cache (stale).
    fn items<T: serde::de::DeserializeOwned>(&self, kind: ListKind) -> Vec<Managed<T>> {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut inner = self.lock();
        let mut out = Vec::new();
        let names: Vec<String> = inner.servers.keys().cloned().collect();
        for name in names {
            let slot = &inner.servers[&name];
            let (items, stale) = match &slot.state {
                ServerState::Ready { .. } => match slot.others.get(&kind) {
                    Some(items) => (items.clone(), false),
                    None => continue,
                },
                ServerState::Starting { .. } | ServerState::Restarting { .. } => {
                    match cached(&mut inner, &name, kind, now_ms) {
                        Some(items) => (items, true),
                        None => continue,
                    }
                }
                _ => continue,
            };
            for item in items {
                if let Ok(item) = serde_json::from_value(item) {
                    out.push(Managed {
                        server: name.clone(),
                        item,
                        stale,
                    });
                }
            }
        }
        out
    }

    pub(super) fn cached_era(&self, key: &str) -> Option<String> {
        self.lock().cache.get(key).and_then(|c| c.era.clone())
    }

    pub(super) fn remember_era(&self, key: &str, era: &str) {
        // A cache that cannot be written still serves from memory.
        let _ = self.lock().cache.put_era(key, era);
    }

    pub(super) fn store_list(&self, key: &str, kind: ListKind, list: CachedList) {
        let _ = self.lock().cache.put_list(key, kind, list);
    }

    pub(super) fn invalidate(&self, key: &str, kind: ListKind) {
        self.lock().cache.invalidate(key, kind);
    }

    /// The namespace, and the notes on names that had to change.
    fn namespace(&self) -> (Vec<ManagedTool>, Vec<naming::NamingNote>) {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut inner = self.lock();
        let mut found: Vec<(String, Tool, bool)> = Vec::new();
        let names: Vec<String> = inner.servers.keys().cloned().collect();
        for name in names {
            let slot = &inner.servers[&name];
            let filter = slot.settings.tools.clone();
            let listed = match (&slot.state, &slot.tools) {
                (ServerState::Ready { .. }, Some(tools)) => Some((tools.clone(), false)),
                (ServerState::Disabled | ServerState::Failed { .. }, _) => None,
                _ => None,
            };
            let tools = match listed {
                Some(t) => Some(t),
                None if slot.state != ServerState::Disabled => {
                    cached(&mut inner, &name, ListKind::Tools, now_ms)
                        .map(|items| (tools_of(&items), true))
                }
                None => None,
            };
            if let Some((tools, stale)) = tools {
                for tool in tools.into_iter().filter(|t| filter.allows(&t.name)) {
                    found.push((name.clone(), tool, stale));
                }
            }
        }
        drop(inner);
        let pairs: Vec<(String, String)> = found
            .iter()
            .map(|(s, t, _)| (s.clone(), t.name.clone()))
            .collect();
        let (names, notes) = qualify(&self.options.naming, &pairs);
        let by_pair: std::collections::HashMap<(&str, &str), &str> = names
            .iter()
            .map(|q| ((q.server.as_str(), q.tool.as_str()), q.qualified.as_str()))
            .collect();
        let mut out = Vec::with_capacity(found.len());
        for (server, tool, stale) in found {
            let qualified = by_pair
                .get(&(server.as_str(), tool.name.as_str()))
                .map_or_else(|| tool.name.clone(), |q| (*q).to_owned());
            out.push(ManagedTool {
                qualified,
                server,
                tool,
                stale,
            });
        }
        (out, notes)
    }

    /// Reports the names that had to change and were not reported yet.
    fn report_naming(&self) {
        let (_, notes) = self.namespace();
        for note in notes {
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

/// Many servers, one face: see the [module](self).
///
/// Dropping the Manager stops every server at once (each process group is killed);
/// [`Manager::close`] closes them gracefully.
pub struct Manager {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("servers", &self.states())
            .finish()
    }
}

impl Manager {
    /// A Manager with no servers yet.
    pub fn new(options: ManagerOptions) -> Manager {
        let cache = match &options.cache {
            CacheLocation::UserCache => match cache::default_dir() {
                Some(dir) => ListCache::on_disk(dir),
                None => ListCache::in_memory(),
            },
            CacheLocation::At(dir) => ListCache::on_disk(dir.clone()),
            CacheLocation::MemoryOnly => ListCache::in_memory(),
        };
        let seeds = options.jitter_seed.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        });
        Manager {
            shared: Arc::new(Shared {
                options,
                inner: Mutex::new(Inner {
                    servers: BTreeMap::new(),
                    cache,
                    events: Default::default(),
                    dropped: 0,
                    seeds,
                    notes_seen: Vec::new(),
                }),
                changed: event_listener::Event::new(),
            }),
        }
    }

    /// A Manager running every server of a loaded configuration (a disabled one is held as
    /// `disabled`), each with its settings (start-up and tool timeouts, tool filter, era).
    pub fn from_loaded(loaded: &Loaded, options: ManagerOptions) -> Manager {
        let manager = Manager::new(options);
        for server in &loaded.servers {
            manager.add_with(&server.name, server.config.clone(), server.settings.clone());
        }
        manager
    }

    /// Adds a server and starts it at once (replacing one of the same name).
    pub fn add(&self, name: &str, config: ServerConfig) {
        self.add_with(name, config, ServerSettings::default());
    }

    /// Adds a server with its settings; a disabled one is held, not started.
    pub fn add_with(&self, name: &str, config: ServerConfig, settings: ServerSettings) {
        self.remove(name);
        let key = cache_key(&config);
        let enabled = settings.enabled;
        let mut inner = self.shared.lock();
        inner.seeds = inner.seeds.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let seed = inner.seeds;
        let (control, task) = if enabled {
            let (tx, rx) = smol::channel::unbounded();
            let task = smol::spawn(supervise::supervise(
                self.shared.clone(),
                name.to_owned(),
                config.clone(),
                settings.clone(),
                rx,
                seed,
            ));
            (Some(tx), Some(task))
        } else {
            (None, None)
        };
        let state = match enabled {
            true => ServerState::Starting { attempt: 1 },
            false => ServerState::Disabled,
        };
        inner.servers.insert(
            name.to_owned(),
            Slot {
                config,
                settings,
                key,
                state: state.clone(),
                client: None,
                tools: None,
                others: BTreeMap::new(),
                control,
                task,
            },
        );
        self.shared.emit_locked(
            &mut inner,
            ManagerEvent::State {
                server: name.to_owned(),
                state,
            },
        );
        drop(inner);
        self.shared.changed.notify(usize::MAX);
    }

    /// Removes a server: its connection is closed in the background (its process group killed
    /// if it does not end in time). Returns whether there was one.
    pub fn remove(&self, name: &str) -> bool {
        let Some(slot) = self.shared.lock().servers.remove(name) else {
            return false;
        };
        if let Some(control) = &slot.control {
            let _ = control.try_send(Control::Stop);
        }
        if let Some(task) = slot.task {
            // The supervisor closes its connection on Stop; it is left to finish that.
            task.detach();
        }
        self.shared.emit(ManagerEvent::State {
            server: name.to_owned(),
            state: ServerState::Disabled,
        });
        true
    }

    /// Asks a server to connect again now: one that gave up, one waiting for its next try,
    /// or a ready one (its connection is closed and made again).
    pub fn restart(&self, name: &str) -> Result<(), ManagerError> {
        let inner = self.shared.lock();
        let slot = inner
            .servers
            .get(name)
            .ok_or_else(|| ManagerError::UnknownServer(name.to_owned()))?;
        match &slot.control {
            Some(control) => {
                let _ = control.try_send(Control::Restart);
                Ok(())
            }
            None => Err(ManagerError::NotReady {
                server: name.to_owned(),
                state: slot.state.clone(),
            }),
        }
    }

    /// Tells server `name`'s supervisor that its server cannot be reached.
    fn lost(&self, name: &str, reason: String) {
        Shared::lost(&self.shared, name, reason);
    }

    /// Each server and its state, by name.
    pub fn states(&self) -> Vec<(String, ServerState)> {
        self.shared
            .lock()
            .servers
            .iter()
            .map(|(n, s)| (n.clone(), s.state.clone()))
            .collect()
    }

    /// The state of server `name`.
    pub fn state(&self, name: &str) -> Option<ServerState> {
        self.shared
            .lock()
            .servers
            .get(name)
            .map(|s| s.state.clone())
    }

    /// How server `name` is reached.
    pub fn config(&self, name: &str) -> Option<ServerConfig> {
        Some(self.shared.lock().servers.get(name)?.config.clone())
    }

    /// The client of server `name`, while it is ready.
    pub fn client(&self, name: &str) -> Option<Client> {
        self.shared.lock().servers.get(name)?.client.clone()
    }

    /// The next event, waiting for one (events are kept in a bounded queue; when the host falls
    /// behind, the oldest are dropped and a [`ManagerEvent::Dropped`] says how many).
    pub async fn next_event(&self) -> ManagerEvent {
        loop {
            let listener = self.shared.changed.listen();
            {
                let mut inner = self.shared.lock();
                if inner.dropped > 0 {
                    let count = std::mem::take(&mut inner.dropped);
                    return ManagerEvent::Dropped { count };
                }
                if let Some(e) = inner.events.pop_front() {
                    return e;
                }
            }
            listener.await;
        }
    }

    /// Waits until no server is starting: each is ready, failed, disabled, or waiting to try
    /// again. Each server is usable the moment it is ready; this is for hosts that want all.
    pub async fn wait_settled(&self) {
        self.wait_until(|states| states.iter().all(|(_, s)| s.settled()))
            .await
    }

    /// Waits until `done` holds for the states.
    pub async fn wait_until(&self, done: impl Fn(&[(String, ServerState)]) -> bool) {
        loop {
            let listener = self.shared.changed.listen();
            if done(&self.states()) {
                return;
            }
            listener.await;
        }
    }

    /// Every server's tools under their qualified names: a ready server's as listed (after its
    /// tool filter), a starting or restarting one's from the cache (marked stale).
    pub fn tools(&self) -> Vec<ManagedTool> {
        let (all, _) = self.shared.namespace();
        all
    }

    /// The tools a server listed the last time it ran, from this Manager's cache, without
    /// starting it (it need not be one of the Manager's servers): `None` when none are kept,
    /// or the list is private to other credentials or past its use. A host names with them
    /// the tools of servers it does not run.
    pub fn cached_tools(&self, config: &ServerConfig) -> Option<Vec<Tool>> {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let credentials = credentials_of_config(config);
        let mut inner = self.shared.lock();
        let list = inner
            .cache
            .get(&cache_key(config))?
            .lists
            .get(&ListKind::Tools)?;
        (list.freshness(now_ms, credentials.as_deref()) != Freshness::Unusable)
            .then(|| tools_of(&list.items))
    }

    /// Every server's prompts (a starting one's from the cache, stale). Get one through
    /// [`Manager::client`] of its server.
    pub fn prompts(&self) -> Vec<Managed<Prompt>> {
        self.shared.items(ListKind::Prompts)
    }

    /// Every server's resources (a starting one's from the cache, stale). Read one through
    /// [`Manager::client`] of its server.
    pub fn resources(&self) -> Vec<Managed<Resource>> {
        self.shared.items(ListKind::Resources)
    }

    /// Calls a tool by its qualified name (or `server/tool`), on the server that offers it.
    /// The Manager never retries a call: one in flight when its server went away ends with
    /// [`ManagerError::ServerWentAway`].
    pub async fn call_tool(
        &self,
        qualified: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ManagerError> {
        let (server, tool) = self.route(qualified)?;
        let client = {
            let inner = self.shared.lock();
            let slot = inner
                .servers
                .get(&server)
                .ok_or_else(|| ManagerError::UnknownServer(server.clone()))?;
            match (&slot.state, &slot.client) {
                (ServerState::Ready { .. }, Some(client)) => client.clone(),
                (state, _) => {
                    return Err(ManagerError::NotReady {
                        server,
                        state: state.clone(),
                    })
                }
            }
        };
        let result = client.call_tool(&tool, arguments).await;
        result.map_err(|e| {
            if let Some(reason) = unreachable(&e) {
                // An HTTP server that cannot be reached: its connection is made again (a new
                // session), after the backoff.
                self.lost(&server, reason);
            } else if cut_off(&e) {
                // Cut off mid-exchange: one more request tells whether the server is there.
                let (shared, server, client) =
                    (self.shared.clone(), server.clone(), client.clone());
                smol::spawn(async move {
                    // A listing, not a ping: the stateless era has no ping.
                    let ping = client
                        .list_tools_with(CallOptions::default().timeout(Duration::from_secs(5)))
                        .await;
                    // Any failure but the server's own answer (refused, cut off again, no
                    // answer in time) means it cannot be counted on: it is connected again.
                    match ping {
                        Ok(_) | Err(Error::Call(mcpwire_core::CallError::Server(_))) => {}
                        Err(e) => {
                            let reason = unreachable(&e).unwrap_or_else(|| e.to_string());
                            Shared::lost(&shared, &server, reason);
                        }
                    }
                })
                .detach();
            }
            ManagerError::of_call(&server, e, client.closed_reason().is_some())
        })
    }

    /// The server and tool a qualified (or `server/tool`) name stands for.
    fn route(&self, typed: &str) -> Result<(String, String), ManagerError> {
        let (tools, _) = self.shared.namespace();
        let names: Vec<Qualified> = tools
            .iter()
            .map(|t| Qualified {
                qualified: t.qualified.clone(),
                server: t.server.clone(),
                tool: t.tool.name.clone(),
            })
            .collect();
        if let Some(q) = resolve(&names, typed) {
            return Ok((q.server.clone(), q.tool.clone()));
        }
        // A tool the filter leaves out is named as such.
        if let Some((server, tool)) = typed.split_once('/') {
            let inner = self.shared.lock();
            if let Some(slot) = inner.servers.get(server) {
                if !slot.settings.tools.allows(tool) {
                    return Err(ManagerError::NotAllowed {
                        server: server.to_owned(),
                        tool: tool.to_owned(),
                    });
                }
            }
        }
        Err(ManagerError::UnknownTool(typed.to_owned()))
    }

    /// Closes every server concurrently and waits for them (each within its connection's
    /// shutdown budget).
    pub async fn close(&self) {
        type Running = (Option<Sender<Control>>, Option<smol::Task<()>>);
        let slots: Vec<Running> = {
            let mut inner = self.shared.lock();
            inner
                .servers
                .values_mut()
                .map(|s| (s.control.take(), s.task.take()))
                .collect()
        };
        for (control, _) in &slots {
            if let Some(c) = control {
                let _ = c.try_send(Control::Stop);
            }
        }
        for (_, task) in slots {
            if let Some(task) = task {
                task.await;
            }
        }
        let names: Vec<String> = self.shared.lock().servers.keys().cloned().collect();
        for name in names {
            self.shared.set_state(&name, ServerState::Disabled);
        }
    }
}

/// Why a call's error shows its server cannot be reached at all (no connection could be
/// made), if it does.
fn unreachable(e: &Error) -> Option<String> {
    let http = match e {
        Error::Call(mcpwire_core::CallError::Local(mcpwire_core::LocalError::Http(h))) => h,
        _ => return None,
    };
    http.kind.is_unreachable().then(|| http.to_string())
}

/// Server `name`'s cached list of `kind`, unless it is private to other credentials.
fn cached(inner: &mut Inner, name: &str, kind: ListKind, now_ms: u64) -> Option<Vec<Value>> {
    let slot = inner.servers.get(name)?;
    let (key, credentials) = (slot.key.clone(), credentials_of_config(&slot.config));
    let list = inner.cache.get(&key)?.lists.get(&kind)?;
    (list.freshness(now_ms, credentials.as_deref()) != Freshness::Unusable)
        .then(|| list.items.clone())
}

/// The fingerprint of the credentials a configuration reaches its server with (an HTTP
/// `Authorization` header).
fn credentials_of_config(config: &ServerConfig) -> Option<String> {
    let ServerConfig::Http(http) = config else {
        return None;
    };
    http.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
        .map(|(_, v)| cache::credentials_fingerprint(v))
}

/// Whether a call's HTTP exchange was cut off in a way that may mean its server is gone.
fn cut_off(e: &Error) -> bool {
    use mcpwire_core::error::HttpErrorKind as K;
    matches!(
        e,
        Error::MayHaveRun { http: Some(h), .. }
            if matches!(h.kind, K::HeadCutShort | K::BodyCutShort)
    )
}

/// The tools in a cached list (items that do not parse are left out).
fn tools_of(items: &[Value]) -> Vec<Tool> {
    items
        .iter()
        .filter_map(|v| serde_json::from_value(v.clone()).ok())
        .collect()
}
