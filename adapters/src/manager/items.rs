//! The prompts and resources the Manager serves beside its tools: each server's as listed in
//! this run, or as cached while it is not ready, read once into shared items; and the host's
//! snapshot of each kind, made again only when a list or a state changed.

use std::sync::Arc;

use mcpwire_core::types::{Prompt, Resource};
use serde_json::value::RawValue;

use super::cache::ListKind;
use super::state::Managed;

/// One server's list of one kind.
pub(super) struct Listed<T> {
    /// As listed in this run.
    pub(super) live: Option<Arc<[Arc<T>]>>,
    /// From the cache, as served while the server is not ready (made when first needed,
    /// dropped when the cache changes).
    pub(super) stale: Option<Arc<[Arc<T>]>>,
}

impl<T> Default for Listed<T> {
    fn default() -> Self {
        Listed {
            live: None,
            stale: None,
        }
    }
}

/// A server's prompts and resources.
#[derive(Default)]
pub(super) struct Others {
    pub(super) prompts: Listed<Prompt>,
    pub(super) resources: Listed<Resource>,
}

impl Others {
    /// The run is over: nothing is listed until the next.
    pub(super) fn end_run(&mut self) {
        self.prompts.live = None;
        self.resources.live = None;
    }

    /// The cached list of `kind` changed.
    pub(super) fn cache_changed(&mut self, kind: ListKind) {
        match kind {
            ListKind::Prompts => self.prompts.stale = None,
            ListKind::Resources => self.resources.stale = None,
            ListKind::Tools => {}
        }
    }
}

/// A snapshot for the host, and the generation of the Manager's state it was made at.
type Snapshot<T> = Option<(u64, Arc<[Managed<T>]>)>;

/// The host's snapshot of each kind.
#[derive(Default)]
pub(super) struct Snapshots {
    prompts: Snapshot<Prompt>,
    resources: Snapshot<Resource>,
}

/// A kind of item served beside tools.
pub(super) trait Item: serde::de::DeserializeOwned + Send + Sync + 'static {
    /// Its list.
    const KIND: ListKind;
    /// A server's list of it.
    fn listed(others: &Others) -> &Listed<Self>;
    /// The same, to change.
    fn listed_mut(others: &mut Others) -> &mut Listed<Self>;
    /// The host's snapshot of it.
    fn snapshot(snapshots: &mut Snapshots) -> &mut Snapshot<Self>;
}

impl Item for Prompt {
    const KIND: ListKind = ListKind::Prompts;
    fn listed(others: &Others) -> &Listed<Self> {
        &others.prompts
    }
    fn listed_mut(others: &mut Others) -> &mut Listed<Self> {
        &mut others.prompts
    }
    fn snapshot(snapshots: &mut Snapshots) -> &mut Snapshot<Self> {
        &mut snapshots.prompts
    }
}

impl Item for Resource {
    const KIND: ListKind = ListKind::Resources;
    fn listed(others: &Others) -> &Listed<Self> {
        &others.resources
    }
    fn listed_mut(others: &mut Others) -> &mut Listed<Self> {
        &mut others.resources
    }
    fn snapshot(snapshots: &mut Snapshots) -> &mut Snapshot<Self> {
        &mut snapshots.resources
    }
}

/// The items of a cached list (those that do not read are left out: a file another version
/// wrote).
pub(super) fn read_cached<T: Item>(items: &[Box<RawValue>]) -> Arc<[Arc<T>]> {
    items
        .iter()
        .filter_map(|v| serde_json::from_str(v.get()).ok())
        .map(Arc::new)
        .collect()
}
