//! The Manager's state, shared by the host's handle and each server's supervisor: the servers,
//! the list cache, the events the host has not read, and what a supervisor is told. The
//! handle (`mod.rs`) and the supervisors (`supervise.rs`) import it; it imports neither.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
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
    /// Its tools as listed in this run (shared: the namespace keeps the list it was made of).
    pub(super) tools: Option<Arc<Vec<Tool>>>,
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
    /// The namespace as last made from live lists only (see [`Shared::namespace`]).
    pub(super) namespace: Option<Arc<Namespace>>,
}

/// The tools of every server under their qualified names, and how it was made.
pub(super) struct Namespace {
    /// What it was made from: each server that is not disabled, its live list and its
    /// filter. The same inputs give the same namespace.
    from: Vec<(String, Arc<Vec<Tool>>, crate::hosts::ToolFilter)>,
    /// The tools.
    pub(super) tools: Vec<ManagedTool>,
    /// The names that had to change.
    pub(super) notes: Vec<naming::NamingNote>,
    /// A qualified name's place in `tools`.
    pub(super) by_name: std::collections::HashMap<String, usize>,
}

impl Namespace {
    fn made_from(&self, from: &[(String, Arc<Vec<Tool>>, crate::hosts::ToolFilter)]) -> bool {
        self.from.len() == from.len()
            && self
                .from
                .iter()
                .zip(from)
                .all(|(a, b)| a.0 == b.0 && Arc::ptr_eq(&a.1, &b.1) && a.2 == b.2)
    }
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
        slot.tools = Some(Arc::new(tools));
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
        cache::credentials_of(&self.lock().servers.get(name)?.config)
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

    /// The namespace, and the notes on names that had to change. Made again only when a
    /// server's live list, state or filter changed: when every server that is not disabled is
    /// ready with its own list, the last one is kept for as long as those stay the same. One
    /// made from a cached list (a server starting, restarting or failed) is not kept: the
    /// cache's freshness passes with time.
    pub(super) fn namespace(&self) -> Arc<Namespace> {
        let mut inner = self.lock();
        let mut from = Vec::with_capacity(inner.servers.len());
        let mut live = true;
        for (name, slot) in &inner.servers {
            match (&slot.state, &slot.tools) {
                (ServerState::Disabled, _) => {}
                (ServerState::Ready { .. }, Some(tools)) => {
                    from.push((name.clone(), tools.clone(), slot.settings.tools.clone()));
                }
                _ => live = false,
            }
        }
        if live {
            if let Some(kept) = inner.namespace.as_ref().filter(|n| n.made_from(&from)) {
                return kept.clone();
            }
        }
        let namespace = Arc::new(self.make_namespace(&mut inner, from));
        inner.namespace = live.then(|| namespace.clone());
        namespace
    }

    /// Makes the namespace: each server's live list (`from`), or for one that is starting,
    /// restarting or failed its cached list, stale.
    fn make_namespace(
        &self,
        inner: &mut Inner,
        from: Vec<(String, Arc<Vec<Tool>>, crate::hosts::ToolFilter)>,
    ) -> Namespace {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut found: Vec<(String, Tool, bool)> = Vec::new();
        let names: Vec<String> = inner.servers.keys().cloned().collect();
        for name in names {
            let slot = &inner.servers[&name];
            let filter = slot.settings.tools.clone();
            let tools = match (&slot.state, &slot.tools) {
                (ServerState::Ready { .. }, Some(tools)) => Some(((**tools).clone(), false)),
                (ServerState::Disabled, _) => None,
                _ => cached(inner, &name, ListKind::Tools, now_ms)
                    .map(|items| (tools_of(&items), true)),
            };
            if let Some((tools, stale)) = tools {
                for tool in filter.keep(tools) {
                    found.push((name.clone(), tool, stale));
                }
            }
        }
        let pairs: Vec<(String, String)> = found
            .iter()
            .map(|(s, t, _)| (s.clone(), t.name.clone()))
            .collect();
        let (names, notes) = qualify(&self.options.naming, &pairs);
        let by_pair: std::collections::HashMap<(&str, &str), &str> = names
            .iter()
            .map(|q| ((q.server.as_str(), q.tool.as_str()), q.qualified.as_str()))
            .collect();
        let mut tools = Vec::with_capacity(found.len());
        for (server, tool, stale) in found {
            let qualified = by_pair
                .get(&(server.as_str(), tool.name.as_str()))
                .map_or_else(|| tool.name.clone(), |q| (*q).to_owned());
            tools.push(ManagedTool {
                qualified,
                server,
                tool,
                stale,
            });
        }
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.qualified.clone(), i))
            .collect();
        Namespace {
            from,
            tools,
            notes,
            by_name,
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
    inner: &mut Inner,
    name: &str,
    kind: ListKind,
    now_ms: u64,
) -> Option<Vec<Value>> {
    let slot = inner.servers.get(name)?;
    let (key, credentials) = (slot.key.clone(), cache::credentials_of(&slot.config));
    let list = inner.cache.get(&key)?.lists.get(&kind)?;
    (list.freshness(now_ms, credentials.as_deref()) != Freshness::Unusable)
        .then(|| list.items.clone())
}

/// The tools in a cached list (items that do not parse are left out).
pub(super) fn tools_of(items: &[Value]) -> Vec<Tool> {
    items
        .iter()
        .filter_map(|v| serde_json::from_value(v.clone()).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> Shared {
        Shared {
            options: ManagerOptions::default(),
            inner: Mutex::new(Inner {
                servers: BTreeMap::new(),
                cache: ListCache::in_memory(),
                events: Default::default(),
                dropped: 0,
                seeds: 0,
                notes_seen: Vec::new(),
                namespace: None,
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

    fn ready(list: Arc<Vec<Tool>>) -> Slot {
        Slot {
            config: ServerConfig::stdio("x", Vec::<String>::new()),
            settings: ServerSettings::default(),
            key: "k".into(),
            state: ServerState::Ready {
                era: None,
                tools: list.len(),
            },
            client: None,
            tools: Some(list),
            others: BTreeMap::new(),
            control: None,
            task: None,
        }
    }

    #[test]
    fn the_namespace_is_made_again_only_when_a_servers_list_state_or_filter_changes() {
        let s = shared();
        {
            let mut inner = s.lock();
            inner.servers.insert("a".into(), ready(tools(&["x", "y"])));
            inner.servers.insert("b".into(), ready(tools(&["x"])));
        }
        let first = s.namespace();
        assert_eq!(first.tools.len(), 3);
        assert_eq!(first.by_name.len(), 3);
        assert!(Arc::ptr_eq(&first, &s.namespace()), "the same lists: kept");
        // Listed again: made again.
        s.lock().servers.get_mut("b").unwrap().tools = Some(tools(&["x", "z"]));
        let second = s.namespace();
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(second.tools.len(), 4);
        assert!(Arc::ptr_eq(&second, &s.namespace()));
        // A filter changed: made again.
        let filter = crate::hosts::ToolFilter {
            exclude: vec!["z".into()],
            ..Default::default()
        };
        s.lock().servers.get_mut("b").unwrap().settings.tools = filter;
        let third = s.namespace();
        assert!(!Arc::ptr_eq(&second, &third));
        assert_eq!(third.tools.len(), 3);
        // A server restarting serves its cache (none here): not kept.
        s.lock().servers.get_mut("a").unwrap().state = ServerState::Restarting {
            attempt: 2,
            next_try_at: std::time::Instant::now(),
            reason: "gone".into(),
        };
        let fourth = s.namespace();
        assert_eq!(fourth.tools.len(), 1);
        assert!(!Arc::ptr_eq(&fourth, &s.namespace()));
    }
}
