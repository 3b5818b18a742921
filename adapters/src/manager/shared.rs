//! The Manager's state, shared by the host's handle and each server's supervisor: the servers,
//! the list cache, the events the host has not read, and what a supervisor is told. The
//! handle (`mod.rs`) and the supervisors (`supervise.rs`) import it; it imports neither.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use mcpwire_core::config::ServerConfig;
use mcpwire_core::types::Tool;
use serde_json::Value;
use smol::channel::Sender;

use super::cache::{self, CachedList, Freshness, ListCache, ListKind};
use super::naming::{self, qualify};
use super::options::ManagerOptions;
use super::state::{Managed, ManagedTool, ManagerEvent, ServerState};
use crate::client::Client;
use crate::hosts::ServerSettings;

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
    pub(super) tools: Option<Vec<Tool>>,
    /// Its prompts and resources, as listed in this run (items as sent).
    pub(super) others: BTreeMap<ListKind, Vec<Value>>,
    pub(super) control: Option<Sender<Control>>,
    pub(super) task: Option<smol::Task<()>>,
}

/// The Manager's state, shared with each server's supervisor.
pub(super) struct Inner {
    pub(super) servers: BTreeMap<String, Slot>,
    pub(super) cache: ListCache,
    pub(super) events: std::collections::VecDeque<ManagerEvent>,
    pub(super) dropped: u64,
    pub(super) seeds: u64,
    /// The naming notes already reported.
    pub(super) notes_seen: Vec<naming::NamingNote>,
}

pub(super) struct Shared {
    pub(super) options: ManagerOptions,
    pub(super) inner: Mutex<Inner>,
    pub(super) changed: event_listener::Event,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().expect("not poisoned")
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
    pub(super) fn items<T: serde::de::DeserializeOwned>(&self, kind: ListKind) -> Vec<Managed<T>> {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut inner = self.lock();
        let mut out = Vec::new();
        let names: Vec<String> = inner.servers.keys().cloned().collect();
        for name in names {
            let slot = &inner.servers[&name];
            let live = match &slot.state {
                ServerState::Ready { .. } => slot.others.get(&kind).cloned(),
                _ => None,
            };
            // As for the tools: a ready server's own list; any other that is not disabled
            // (starting, restarting, failed) serves its cached one, stale.
            let (items, stale) = match live {
                Some(items) => (items, false),
                None if slot.state == ServerState::Disabled => continue,
                None => match cached(&mut inner, &name, kind, now_ms) {
                    Some(items) => (items, true),
                    None => continue,
                },
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
    pub(super) fn namespace(&self) -> (Vec<ManagedTool>, Vec<naming::NamingNote>) {
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
                for tool in filter.keep(tools) {
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
    pub(super) fn report_naming(&self) {
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

/// Server `name`'s cached list of `kind`, unless it is private to other credentials.
pub(super) fn cached(
    inner: &mut Inner,
    name: &str,
    kind: ListKind,
    now_ms: u64,
) -> Option<Vec<Value>> {
    let slot = inner.servers.get(name)?;
    let (key, credentials) = (slot.key.clone(), credentials_of_config(&slot.config));
    let list = inner.cache.get(&key)?.lists.get(&kind)?;
    (list.freshness(now_ms, credentials.as_deref()) != Freshness::Unusable)
        .then(|| list.items.clone())
}

/// The fingerprint of the credentials a configuration reaches its server with (an HTTP
/// `Authorization` header).
pub(super) fn credentials_of_config(config: &ServerConfig) -> Option<String> {
    let ServerConfig::Http(http) = config else {
        return None;
    };
    http.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
        .map(|(_, v)| cache::credentials_fingerprint(v))
}

/// The tools in a cached list (items that do not parse are left out).
pub(super) fn tools_of(items: &[Value]) -> Vec<Tool> {
    items
        .iter()
        .filter_map(|v| serde_json::from_value(v.clone()).ok())
        .collect()
}
