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
//! for tool in manager.tools().iter() {
//!     println!("{} ({}{})", tool.qualified, tool.server, if tool.stale { ", cached" } else { "" });
//! }
//! let result = manager.call_tool("github__search", serde_json::json!({"q": "mcp"})).await?;
//! println!("{}", result.text());
//! manager.close().await;
//! # Ok(()) }
//! ```

pub mod backoff;
pub mod cache;
mod items;
pub mod naming;
mod options;
mod shared;
mod state;
mod store;
mod supervise;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_channel::Sender;
use mcpwire_core::config::ServerConfig;
use mcpwire_core::types::{CallToolResult, Prompt, Resource, Tool};
use serde_json::Value;

use self::cache::{cache_key, Freshness, ListCache, ListKind};
pub use self::options::{CacheLocation, ManagerOptions, OptionsFactory};
use self::shared::{tools_of, Control, Inner, Shared, Slot};
pub use self::state::{Managed, ManagedTool, ManagerError, ManagerEvent, ServerState};
use self::store::Store;
use crate::client::{CallOptions, Client};
use crate::error::Error;
use crate::hosts::{Loaded, ServerSettings};
use crate::runtime::host::Joinable;
use crate::runtime::Runtime;

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
    /// A Manager with no servers yet, on smol: its supervisors on smol's global executor, its
    /// servers' connections on async-io and async-process (as [`crate::connect`]), its cache
    /// written on smol's blocking pool. In a tokio host, [`crate::tokio::manager`] makes the
    /// same Manager on tokio.
    #[cfg(feature = "smol")]
    pub fn new(options: ManagerOptions) -> Manager {
        Manager::on(options, Runtime::Smol { spawn: true })
    }

    /// A Manager with no servers yet, on `runtime`.
    pub(crate) fn on(options: ManagerOptions, runtime: Runtime) -> Manager {
        let dir = match &options.cache {
            CacheLocation::UserCache => cache::default_dir(),
            CacheLocation::At(dir) => Some(dir.clone()),
            CacheLocation::MemoryOnly => None,
        };
        let Some(dir) = dir else {
            return Manager::made(options, Store::in_memory(), runtime);
        };
        // The folder is kept within its limits: what earlier runs left is pruned here (a
        // folder that cannot be read is no failure: the cache still works).
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let _ = ListCache::on_disk(dir.clone()).prune(now_ms, &options.cache_limits);
        Manager::made(options, Store::on_disk(dir), runtime)
    }

    /// A Manager with no servers yet, its lists kept in `store`.
    fn made(options: ManagerOptions, store: Store, runtime: Runtime) -> Manager {
        let seeds = options.jitter_seed.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        });
        Manager {
            shared: Arc::new(Shared {
                options,
                runtime,
                inner: Mutex::new(Inner {
                    servers: BTreeMap::new(),
                    store,
                    events: Default::default(),
                    dropped: 0,
                    seeds,
                    notes_seen: Vec::new(),
                    namespace: None,
                    snapshots: Default::default(),
                    generation: 0,
                }),
                changed: event_listener::Event::new(),
            }),
        }
    }

    /// A Manager running every server of a loaded configuration (a disabled one is held as
    /// `disabled`), each with its settings (start-up and tool timeouts, tool filter, era). On
    /// smol, as [`Manager::new`]; on tokio, [`crate::tokio::manager`] then
    /// [`add_loaded`](Self::add_loaded).
    #[cfg(feature = "smol")]
    pub fn from_loaded(loaded: &Loaded, options: ManagerOptions) -> Manager {
        let manager = Manager::new(options);
        manager.add_loaded(loaded);
        manager
    }

    /// Adds every server of a loaded configuration (a disabled one is held as `disabled`),
    /// each with its settings, as [`add_with`](Self::add_with) does.
    pub fn add_loaded(&self, loaded: &Loaded) {
        for server in &loaded.servers {
            self.add_with(&server.name, server.config.clone(), server.settings.clone());
        }
    }

    /// Adds a server and starts it at once (replacing one of the same name).
    pub fn add(&self, name: &str, config: ServerConfig) {
        self.add_with(name, config, ServerSettings::default());
    }

    /// Adds a server with its settings; a disabled one is held, not started. One whose URL
    /// is not `http://` or `https://` with a host is held as
    /// [`Failed`](ServerState::Failed) at once, the reason naming the URL, and never started
    /// ([`restart`](Self::restart) refuses it too).
    pub fn add_with(&self, name: &str, config: ServerConfig, settings: ServerSettings) {
        self.remove(name);
        let key = cache_key(&config);
        // What an earlier run remembered, read before the lock is taken.
        self.shared.load(&key);
        let refused = match &config {
            ServerConfig::Http(h) => mcpwire_core::config::check_url(&h.url).err(),
            ServerConfig::Stdio(_) => None,
        };
        let enabled = settings.enabled && refused.is_none();
        let mut inner = self.shared.lock();
        inner.seeds = inner.seeds.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let seed = inner.seeds;
        let (control, task) = if enabled {
            let (tx, rx) = async_channel::unbounded();
            let supervisor = supervise::supervise(
                self.shared.clone(),
                name.to_owned(),
                config.clone(),
                settings.clone(),
                rx,
                seed,
            );
            // Its work (handshakes, listings, restarts) is in the span of whoever added it.
            #[cfg(feature = "tracing")]
            let supervisor = tracing::Instrument::in_current_span(supervisor);
            let task = self.shared.runtime.spawn_joinable(supervisor);
            (Some(tx), Some(task))
        } else {
            (None, None)
        };
        let state = match (enabled, refused) {
            (_, Some(e)) => ServerState::Failed {
                reason: e.to_string(),
                stderr_tail: String::new(),
            },
            (true, None) => ServerState::Starting { attempt: 1 },
            (false, None) => ServerState::Disabled,
        };
        inner.touch();
        inner.servers.insert(
            name.to_owned(),
            Slot {
                config,
                settings,
                key,
                state: state.clone(),
                client: None,
                tools: None,
                stale: None,
                others: Default::default(),
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
        let removed = {
            let mut inner = self.shared.lock();
            let removed = inner.servers.remove(name);
            inner.touch();
            removed
        };
        let Some(slot) = removed else {
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
    /// tool filter), a starting, restarting or failed one's from the cache (marked stale).
    ///
    /// One shared list, made again only when a server's list, state or filter changed: taking
    /// it copies nothing, and it stays as it was when the Manager's tools change (take it
    /// again for the new ones).
    pub fn tools(&self) -> Arc<[ManagedTool]> {
        self.shared.namespace().snapshot()
    }

    /// The tools a server listed the last time it ran, from this Manager's cache, without
    /// starting it (it need not be one of the Manager's servers): `None` when none are kept,
    /// or the list is private to other credentials or past its use. A host names with them
    /// the tools of servers it does not run.
    pub fn cached_tools(&self, config: &ServerConfig) -> Option<Vec<Tool>> {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let credentials = cache::credentials_of(config);
        let key = cache_key(config);
        self.shared.load(&key);
        let inner = self.shared.lock();
        let list = inner.store.get(&key)?.lists.get(&ListKind::Tools)?;
        (list.freshness(now_ms, credentials.as_deref()) != Freshness::Unusable)
            .then(|| tools_of(&list.items))
    }

    /// Every server's prompts: a ready server's as listed, a starting, restarting or failed
    /// one's from the cache (marked stale), in one shared list made again only when a list or
    /// a state changed, as for [`tools`](Self::tools). Get one through [`Manager::client`] of
    /// its server.
    pub fn prompts(&self) -> Arc<[Managed<Prompt>]> {
        self.shared.items()
    }

    /// Every server's resources, as for [`prompts`](Self::prompts). Read one through
    /// [`Manager::client`] of its server.
    pub fn resources(&self) -> Arc<[Managed<Resource>]> {
        self.shared.items()
    }

    /// Calls a tool by its qualified name (or `server/tool`), on the server that offers it, with
    /// the default options: the server's tool timeout from its configuration
    /// ([`ServerSettings::tool_timeout`]), else 30 s; no progress. For other options, see
    /// [`call_tool_with`](Self::call_tool_with). The Manager never retries a call: one in
    /// flight when its server went away ends with [`ManagerError::ServerWentAway`].
    pub async fn call_tool(
        &self,
        qualified: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ManagerError> {
        self.call(qualified, arguments, None).await
    }

    /// Calls a tool as [`call_tool`](Self::call_tool) does, with the options of a client's call:
    /// its timeout and maximum total time, progress (with its callback, and progress resetting
    /// the timeout), the check of its arguments, and whether it is safe to repeat (re-issued once
    /// when its connection is lost after it may have reached the server). Dropping the returned
    /// future cancels the call on the wire. The errors are the same; a call that may have run is
    /// [`ManagerError::Call`] holding [`Error::MaybeExecuted`], which
    /// `manager.client(server)?.reissue(&error)` sends again if the host so chooses.
    ///
    /// ```no_run
    /// # async fn run(manager: mcpwire::manager::Manager) -> Result<(), mcpwire::manager::ManagerError> {
    /// use std::time::Duration;
    /// use mcpwire::CallOptions;
    ///
    /// let opts = CallOptions::default()
    ///     .timeout(Duration::from_secs(120))
    ///     .on_progress(|p| eprintln!("{}/{:?}", p.progress, p.total));
    /// let result = manager
    ///     .call_tool_with("builder__compile", serde_json::json!({"target": "all"}), opts)
    ///     .await?;
    /// println!("{}", result.text());
    /// # Ok(()) }
    /// ```
    pub async fn call_tool_with(
        &self,
        qualified: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<CallToolResult, ManagerError> {
        self.call(qualified, arguments, Some(options)).await
    }

    /// A tool call with `options`, or the server's defaults.
    async fn call(
        &self,
        qualified: &str,
        arguments: Value,
        options: Option<CallOptions>,
    ) -> Result<CallToolResult, ManagerError> {
        let route = self.route(qualified)?;
        let (server, tool) = (route.server(), route.tool_name());
        let (client, options) = {
            let inner = self.shared.lock();
            let slot = inner
                .servers
                .get(server)
                .ok_or_else(|| ManagerError::UnknownServer(server.to_owned()))?;
            let options = options.unwrap_or_else(|| {
                let mut defaults = CallOptions::default();
                if let Some(timeout) = slot.settings.tool_timeout {
                    defaults.timeout = timeout;
                }
                defaults
            });
            match (&slot.state, &slot.client) {
                (ServerState::Ready { .. }, Some(client)) => (client.clone(), options),
                (state, _) => {
                    return Err(ManagerError::NotReady {
                        server: server.to_owned(),
                        state: state.clone(),
                    })
                }
            }
        };
        let result = client.call_tool_with(tool, arguments, options).await;
        result.map_err(|e| {
            if let Some(reason) = unreachable(&e) {
                // An HTTP server that cannot be reached: its connection is made again (a new
                // session), after the backoff.
                self.lost(server, reason);
            } else if cut_off(&e) {
                // Cut off mid-exchange: one more request tells whether the server is there.
                let (shared, server, client) =
                    (self.shared.clone(), server.to_owned(), client.clone());
                let runtime = self.shared.runtime.clone();
                runtime
                    .spawn_joinable(async move {
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
            ManagerError::of_call(server, e, client.closed_reason().is_some())
        })
    }

    /// The tool a qualified (or `server/tool`) name stands for, and the server that offers it,
    /// as [`call_tool`](Self::call_tool) finds them, without calling: the exact qualified name
    /// first, then `server/tool` (split at any `/`, the first that matches wins). It is looked
    /// up in the namespace as last made, which is made again only when a server's state or
    /// lists changed, so a lookup costs a lock and a hash lookup.
    pub fn route(&self, name: &str) -> Result<Route, ManagerError> {
        let namespace = self.shared.namespace();
        let found = namespace.by_name.get(name).copied().or_else(|| {
            name.match_indices('/').find_map(|(at, _)| {
                let (server, tool) = (&name[..at], &name[at + 1..]);
                namespace.position(|t| t.server == server && t.tool.name == tool)
            })
        });
        if let Some(at) = found {
            return Ok(Route { namespace, at });
        }
        // A tool the filter leaves out is named as such.
        if let Some((server, tool)) = name.split_once('/') {
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
        Err(ManagerError::UnknownTool(name.to_owned()))
    }

    /// Closes every server concurrently and waits for them (each within its connection's
    /// shutdown budget).
    pub async fn close(&self) {
        type Running = (Option<Sender<Control>>, Option<Joinable>);
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
        // What the servers listed is on disk for the next run, unless the disk takes longer
        // than this (the writes then go on in the background).
        let writer = self.shared.lock().store.writer();
        if let Some(writer) = writer {
            writer
                .flushed(&self.shared.runtime, CLOSE_WRITE_BUDGET)
                .await;
        }
    }
}

/// How long [`Manager::close`] waits for the cache's writes.
const CLOSE_WRITE_BUDGET: Duration = Duration::from_secs(5);

/// A tool found in the Manager's namespace ([`Manager::route`]): which server offers it, under
/// which name, and the tool as listed. It holds the namespace it was found in (shared, not
/// copied), so it stays as it was when the namespace is made again.
#[derive(Clone)]
pub struct Route {
    namespace: Arc<shared::Namespace>,
    at: (u32, u32),
}

impl Route {
    /// The tool, its qualified name and its server.
    pub fn tool(&self) -> &ManagedTool {
        self.namespace.get(self.at)
    }

    /// The server that offers it.
    pub fn server(&self) -> &str {
        &self.tool().server
    }

    /// The tool's name on its server.
    pub fn tool_name(&self) -> &str {
        &self.tool().tool.name
    }
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = self.tool();
        f.debug_struct("Route")
            .field("qualified", &t.qualified)
            .field("server", &t.server)
            .field("tool", &t.tool.name)
            .finish()
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

/// Whether a call's HTTP exchange was cut off in a way that may mean its server is gone.
fn cut_off(e: &Error) -> bool {
    use mcpwire_core::error::HttpErrorKind as K;
    matches!(
        e,
        Error::MaybeExecuted { http: Some(h), .. }
            if matches!(h.kind, K::HeadCutShort | K::BodyCutShort)
    )
}

// On each runtime the build has.
#[cfg(all(test, any(feature = "smol", feature = "tokio")))]
mod tests;
