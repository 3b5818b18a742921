//! How the Manager runs its servers: start-up timeout, restarts, naming, the cache's place,
//! each server's connect options.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::backoff::RestartPolicy;
use super::cache::CacheLimits;
use super::naming::NamingPolicy;
use crate::connect::ConnectOptions;

/// Makes the connect options of the server named (its handlers told which server asks).
pub type OptionsFactory = Arc<dyn Fn(&str) -> ConnectOptions + Send + Sync>;

/// Where the Manager keeps its lists and eras between runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheLocation {
    /// The user's cache folder ([`super::cache::default_dir`]); memory only when there is none.
    #[default]
    UserCache,
    /// This folder.
    At(PathBuf),
    /// Memory only.
    MemoryOnly,
}

/// How the Manager runs its servers. Every field has a default (below, and
/// [`ManagerOptions::default`]).
///
/// It is `#[non_exhaustive]`: outside this crate `ManagerOptions { cache, ..Default::default() }`
/// does not compile (E0639). Build one with the setters, or from the default, field by field:
///
/// ```
/// use std::time::Duration;
/// use mcpwire::manager::{CacheLocation, ManagerOptions};
///
/// let options = ManagerOptions::default()
///     .cache(CacheLocation::MemoryOnly)
///     .startup_timeout(Duration::from_secs(10));
///
/// let mut same = ManagerOptions::default();
/// same.cache = CacheLocation::MemoryOnly;
/// same.startup_timeout = Duration::from_secs(10);
/// # assert_eq!(format!("{options:?}"), format!("{same:?}"));
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct ManagerOptions {
    /// How long a server may take to be ready, unless its configuration says (default 30 s).
    pub startup_timeout: Duration,
    /// How restarts are spaced and limited (default [`RestartPolicy::default`]: from 500 ms,
    /// doubling up to 30 s, giving up after 5 failures in a row).
    pub restart: RestartPolicy,
    /// How tools are named in the one namespace (default `server__tool`, at most 128
    /// characters).
    pub naming: NamingPolicy,
    /// Where lists and eras are remembered (default: the user's cache folder).
    pub cache: CacheLocation,
    /// How much a cache folder keeps: it is pruned to these limits when the Manager is made
    /// (default [`CacheLimits::default`]: entries written in the last 30 days, at most 256 of
    /// them and 64 MiB in all, the least recently written removed first).
    pub cache_limits: CacheLimits,
    /// The connect options of each server (default: [`ConnectOptions::default`]). Handlers
    /// made here answer that server's requests: the name says which server asks.
    pub connect_options: OptionsFactory,
    /// The seed of the restart delays' jitter (default: from the clock).
    pub jitter_seed: Option<u64>,
    /// How many events wait unread before the oldest are dropped (default 1024).
    pub max_events: usize,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        ManagerOptions {
            startup_timeout: Duration::from_secs(30),
            restart: RestartPolicy::default(),
            naming: NamingPolicy::default(),
            cache: CacheLocation::default(),
            cache_limits: CacheLimits::default(),
            connect_options: Arc::new(|_| ConnectOptions::default()),
            jitter_seed: None,
            max_events: 1024,
        }
    }
}

impl ManagerOptions {
    /// Sets how long a server may take to be ready, unless its configuration says.
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// Sets how restarts are spaced and limited.
    pub fn restart(mut self, policy: RestartPolicy) -> Self {
        self.restart = policy;
        self
    }

    /// Sets how tools are named in the one namespace.
    pub fn naming(mut self, policy: NamingPolicy) -> Self {
        self.naming = policy;
        self
    }

    /// Sets where lists and eras are remembered.
    pub fn cache(mut self, location: CacheLocation) -> Self {
        self.cache = location;
        self
    }

    /// Sets the connect options of each server, made for the server named (its handlers told
    /// which server asks). A panic in `f` fails that server's start, with its words, and is
    /// told as [`ManagerEvent::HandlerFailed`](super::ManagerEvent::HandlerFailed).
    pub fn connect_options(
        mut self,
        f: impl Fn(&str) -> ConnectOptions + Send + Sync + 'static,
    ) -> Self {
        self.connect_options = Arc::new(f);
        self
    }

    /// Sets the seed of the restart delays' jitter.
    pub fn jitter_seed(mut self, seed: u64) -> Self {
        self.jitter_seed = Some(seed);
        self
    }

    /// Sets how many events wait unread before the oldest are dropped.
    pub fn max_events(mut self, max: usize) -> Self {
        self.max_events = max;
        self
    }
}

impl std::fmt::Debug for ManagerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagerOptions")
            .field("startup_timeout", &self.startup_timeout)
            .field("restart", &self.restart)
            .field("naming", &self.naming)
            .field("cache", &self.cache)
            .field("jitter_seed", &self.jitter_seed)
            .field("max_events", &self.max_events)
            .field("cache_limits", &self.cache_limits)
            .finish_non_exhaustive()
    }
}
