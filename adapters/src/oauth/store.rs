//! Where tokens and client registrations are kept: tokens by issuer and resource,
//! registrations by issuer.

use std::collections::HashMap;
use std::sync::Mutex;

pub use mcpwire_core::oauth::flow::KnownClient;

use crate::future::BoxFuture;
use mcpwire_core::oauth::flow::Credentials;

/// A store could not read or write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("token store: {0}")]
pub struct StoreError(pub String);

/// Keeps tokens (by issuer and resource) and client registrations (by issuer). Shared by every
/// connection that uses it; each method is one atomic step.
///
/// `server` is the MCP server's URL as configured: the resource tokens are looked up for
/// before anything says which authorization server issues them.
pub trait TokenStore: Send + Sync + 'static {
    /// The credentials last saved for `server`, whichever issuer gave them.
    fn load(&self, server: &str) -> BoxFuture<Result<Option<Credentials>, StoreError>>;
    /// Keeps `credentials` for `server`, under their issuer (replacing what that issuer gave
    /// before).
    fn save(&self, server: &str, credentials: Credentials) -> BoxFuture<Result<(), StoreError>>;
    /// Forgets every token kept for `server`.
    fn remove(&self, server: &str) -> BoxFuture<Result<(), StoreError>>;
    /// Every client kept, one per issuer.
    fn clients(&self) -> BoxFuture<Result<Vec<KnownClient>, StoreError>>;
    /// Keeps `client` for its issuer (replacing the one kept before).
    fn save_client(&self, client: KnownClient) -> BoxFuture<Result<(), StoreError>>;
}

/// A store whose steps block (files, an OS keychain): each [`TokenStore`] method is one of these
/// steps, run off the async threads by [`BlockingStore::run`].
pub(crate) trait BlockingStore: Clone + Send + Sync + 'static {
    /// [`TokenStore::load`], blocking.
    fn load_now(&self, server: &str) -> Result<Option<Credentials>, StoreError>;
    /// [`TokenStore::save`], blocking.
    fn save_now(&self, server: &str, credentials: Credentials) -> Result<(), StoreError>;
    /// [`TokenStore::remove`], blocking.
    fn remove_now(&self, server: &str) -> Result<(), StoreError>;
    /// [`TokenStore::clients`], blocking.
    fn clients_now(&self) -> Result<Vec<KnownClient>, StoreError>;
    /// [`TokenStore::save_client`], blocking.
    fn save_client_now(&self, client: KnownClient) -> Result<(), StoreError>;
    /// Runs `f` on a copy of the store, off the async threads.
    fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(Self) -> Result<T, StoreError> + Send + 'static,
    ) -> BoxFuture<Result<T, StoreError>>;
}

impl<S: BlockingStore> TokenStore for S {
    fn load(&self, server: &str) -> BoxFuture<Result<Option<Credentials>, StoreError>> {
        let server = server.to_owned();
        self.run(move |s| s.load_now(&server))
    }

    fn save(&self, server: &str, credentials: Credentials) -> BoxFuture<Result<(), StoreError>> {
        let server = server.to_owned();
        self.run(move |s| s.save_now(&server, credentials))
    }

    fn remove(&self, server: &str) -> BoxFuture<Result<(), StoreError>> {
        let server = server.to_owned();
        self.run(move |s| s.remove_now(&server))
    }

    fn clients(&self) -> BoxFuture<Result<Vec<KnownClient>, StoreError>> {
        self.run(|s| s.clients_now())
    }

    fn save_client(&self, client: KnownClient) -> BoxFuture<Result<(), StoreError>> {
        self.run(move |s| s.save_client_now(client))
    }
}

/// A [`TokenStore`] in memory, for the life of the process (the default).
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    inner: Mutex<Memory>,
}

#[derive(Debug, Default)]
struct Memory {
    /// By (server, issuer), with the order of saving.
    tokens: HashMap<(String, String), (u64, Credentials)>,
    clients: HashMap<String, KnownClient>,
    saved: u64,
}

impl MemoryTokenStore {
    fn with<T>(&self, f: impl FnOnce(&mut Memory) -> T) -> T {
        // A poisoned lock only means a panic elsewhere mid-update of plain maps: go on.
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, server: &str) -> BoxFuture<Result<Option<Credentials>, StoreError>> {
        let found = self.with(|m| {
            m.tokens
                .iter()
                .filter(|((s, _), _)| s == server)
                .max_by_key(|(_, (order, _))| *order)
                .map(|(_, (_, c))| c.clone())
        });
        Box::pin(async move { Ok(found) })
    }

    fn save(&self, server: &str, credentials: Credentials) -> BoxFuture<Result<(), StoreError>> {
        self.with(|m| {
            m.saved += 1;
            let key = (server.to_owned(), credentials.issuer.clone());
            m.tokens.insert(key, (m.saved, credentials));
        });
        Box::pin(async { Ok(()) })
    }

    fn remove(&self, server: &str) -> BoxFuture<Result<(), StoreError>> {
        self.with(|m| m.tokens.retain(|(s, _), _| s != server));
        Box::pin(async { Ok(()) })
    }

    fn clients(&self) -> BoxFuture<Result<Vec<KnownClient>, StoreError>> {
        let all = self.with(|m| m.clients.values().cloned().collect());
        Box::pin(async move { Ok(all) })
    }

    fn save_client(&self, client: KnownClient) -> BoxFuture<Result<(), StoreError>> {
        self.with(|m| m.clients.insert(client.issuer.clone(), client));
        Box::pin(async { Ok(()) })
    }
}
