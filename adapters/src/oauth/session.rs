//! One connection's side of authorization: what it does when its core asks, the token it
//! uses, and the refresh ahead of expiry.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use mcpwire_core::oauth::flow::{Credentials, FlowError, OAuthFlow};
use mcpwire_core::AuthorizationRequired;
use url::Url;

use super::options::OAuthOptions;
use super::run::{drive, unix_now};
use super::store::KnownClient;
use crate::future::BoxFuture;
use crate::http::backend::HttpBackend;
use crate::runtime::timer::Timer;
use crate::runtime::Runtime;

/// What an authorization task ends with, for the connection.
pub(crate) enum AuthOutcome {
    /// Use this token from now on.
    Token(String),
    /// No token: the waiting requests end with this reason.
    Failed(String),
    /// Nothing to tell the connection (a refresh ahead of expiry that did not work: the token
    /// in use stays until the server refuses it).
    Nothing,
}

/// What a task hands back: the outcome, and the credentials now in use.
type TaskResult = (AuthOutcome, Option<Credentials>);

/// The per-connection authorization state, polled by the driver outside the lock.
pub(crate) struct AuthSession {
    options: Arc<OAuthOptions>,
    backend: Arc<dyn HttpBackend>,
    /// The server's URL as configured (the store's key).
    server: String,
    /// The credentials whose token the connection uses.
    current: Option<Credentials>,
    task: Option<BoxFuture<TaskResult>>,
    /// When to refresh ahead of expiry (the connection's runtime's timer).
    refresh: Option<(Instant, Timer)>,
    /// The connection's runtime: its timers, for the refresh and the flow's deadlines.
    runtime: Runtime,
    /// A refusal that came while a refresh ahead of expiry ran: handled when it ends.
    queued: Option<AuthorizationRequired>,
    /// The host's part of the last authorization (its authorizer, its token store) panicked:
    /// told once on the event stream.
    failure: Option<mcpwire_core::HandlerFailure>,
}

/// One authorization at a time per server in this process, however many connections wait.
fn gate(server: &str) -> Arc<async_lock::Mutex<()>> {
    static GATES: OnceLock<Mutex<HashMap<String, Arc<async_lock::Mutex<()>>>>> = OnceLock::new();
    let gates = GATES.get_or_init(Default::default);
    let mut gates = gates.lock().unwrap_or_else(|e| e.into_inner());
    gates.entry(server.to_owned()).or_default().clone()
}

impl AuthSession {
    pub(crate) fn new(
        options: OAuthOptions,
        backend: Arc<dyn HttpBackend>,
        server: &str,
        runtime: Runtime,
    ) -> AuthSession {
        AuthSession {
            options: Arc::new(options),
            backend,
            server: server.to_owned(),
            current: None,
            task: None,
            refresh: None,
            runtime,
            queued: None,
            failure: None,
        }
    }

    /// The failure of the host's code met by the last poll, if any.
    pub(crate) fn take_failure(&mut self) -> Option<mcpwire_core::HandlerFailure> {
        self.failure.take()
    }

    /// The core asks for authorization.
    pub(crate) fn required(&mut self, refusal: AuthorizationRequired) {
        if self.task.is_some() {
            // A refresh ahead of expiry is running; the refusal waits for it.
            self.queued = Some(refusal);
            return;
        }
        self.refresh = None;
        let task = authorize(
            self.options.clone(),
            self.backend.clone(),
            self.server.clone(),
            self.current.clone(),
            refusal,
            self.runtime.clone(),
        );
        self.task = Some(Box::pin(task));
    }

    /// Polls the task under way (and the refresh timer). `Some` when the connection must be
    /// told something.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Option<AuthOutcome> {
        if self.task.is_none() {
            if let Some((_, timer)) = self.refresh.as_mut() {
                if timer.poll(cx).is_ready() {
                    self.refresh = None;
                    let task = refresh_ahead(
                        self.options.clone(),
                        self.backend.clone(),
                        self.server.clone(),
                        self.current.clone(),
                        self.runtime.clone(),
                    );
                    self.task = Some(Box::pin(task));
                }
            }
        }
        let task = self.task.as_mut()?;
        // The task runs the host's authorizer and token store: a panic there fails this
        // authorization (what waited for it ends with the reason), never the connection.
        let polled = crate::contain::call(|| task.as_mut().poll(cx));
        let (outcome, credentials) = match polled {
            Ok(Poll::Ready(done)) => done,
            Ok(Poll::Pending) => return None,
            Err(words) => {
                let task = self.task.take();
                let _ = crate::contain::call(move || drop(task));
                let failure = mcpwire_core::HandlerFailure::new(
                    mcpwire_core::HostHandler::Authorization,
                    words,
                );
                crate::driver::trace::handler_failed(&failure);
                self.failure = Some(failure);
                (
                    AuthOutcome::Failed("the host's authorization failed".into()),
                    None,
                )
            }
        };
        self.task = None;
        if credentials.is_some() {
            self.current = credentials;
            self.schedule_refresh();
        }
        if let Some(refusal) = self.queued.take() {
            if !matches!(outcome, AuthOutcome::Token(_)) {
                self.required(refusal);
                return self.poll(cx);
            }
        }
        Some(outcome)
    }

    /// Sets the timer for the refresh ahead of the current token's expiry, when it has a
    /// refresh token and an expiry.
    fn schedule_refresh(&mut self) {
        self.refresh = None;
        let Some(c) = &self.current else { return };
        let (Some(expires_at), Some(_)) = (c.tokens.expires_at, &c.tokens.refresh_token) else {
            return;
        };
        // A margin longer than the token's life would refresh it over and over: then it is
        // refreshed halfway to its expiry instead, and never sooner than a second from now.
        let margin = self.options.refresh_margin.as_secs();
        let remaining = expires_at.saturating_sub(unix_now());
        let wait = remaining.saturating_sub(margin).max(remaining / 2).max(1);
        let at = Instant::now().checked_add(Duration::from_secs(wait));
        if let Some(at) = at {
            let mut timer = self.runtime.timer();
            timer.set_at(at);
            self.refresh = Some((at, timer));
        }
    }
}

/// Handles a refusal: a token another connection stored since, a refresh, or the whole flow.
async fn authorize(
    options: Arc<OAuthOptions>,
    backend: Arc<dyn HttpBackend>,
    server: String,
    current: Option<Credentials>,
    refusal: AuthorizationRequired,
    runtime: Runtime,
) -> TaskResult {
    let gate = gate(&server);
    let _one_at_a_time = gate.lock().await;
    let store = options.store.clone();
    let stored = store.load(&server).await.ok().flatten();
    let in_use = current.as_ref().map(|c| c.tokens.access_token.as_str());
    let margin = options.refresh_margin.as_secs();
    if let Some(stored) = &stored {
        let fresh = !stored.tokens.needs_refresh(unix_now(), margin);
        if refusal.status == 401 && fresh && Some(stored.tokens.access_token.as_str()) != in_use {
            // Another connection (or an earlier run) got it: no need to ask again.
            return (
                AuthOutcome::Token(stored.tokens.access_token.clone()),
                Some(stored.clone()),
            );
        }
    }
    let previous = current.or(stored);
    if refusal.status == 401 {
        if let Some(p) = previous
            .as_ref()
            .filter(|p| p.tokens.refresh_token.is_some())
        {
            let flow = OAuthFlow::refresh(Instant::now(), p, options.exchange_timeout);
            if let Ok(c) = drive(flow, backend.clone(), &options, &runtime).await {
                return keep(&options, &server, c).await;
            }
        }
    }
    let known = store.clients().await.unwrap_or_default();
    let server_url = match Url::parse(&server) {
        Ok(u) => u,
        Err(e) => return failed(FlowError::InvalidServerUrl(format!("{server}: {e}"))),
    };
    let config = options.flow_config(server_url, known);
    let challenges: Vec<&str> = refusal.challenges.iter().map(String::as_str).collect();
    let random = match random_bytes() {
        Ok(r) => r,
        Err(reason) => return (AuthOutcome::Failed(reason), None),
    };
    let now = Instant::now();
    let flow = match previous.as_ref().filter(|_| refusal.is_step_up()) {
        Some(p) => OAuthFlow::step_up(now, config, p, &challenges, &random),
        None => OAuthFlow::start(now, config, &challenges, &random),
    };
    match drive(flow, backend, &options, &runtime).await {
        Ok(c) => keep(&options, &server, c).await,
        Err(e) => failed(e),
    }
}

/// Refreshes ahead of expiry; nothing changes when it does not work.
async fn refresh_ahead(
    options: Arc<OAuthOptions>,
    backend: Arc<dyn HttpBackend>,
    server: String,
    current: Option<Credentials>,
    runtime: Runtime,
) -> TaskResult {
    let Some(current) = current else {
        return (AuthOutcome::Nothing, None);
    };
    let gate = gate(&server);
    let _one_at_a_time = gate.lock().await;
    let store = options.store.clone();
    if let Ok(Some(stored)) = store.load(&server).await {
        let margin = options.refresh_margin.as_secs();
        if stored.tokens.access_token != current.tokens.access_token
            && !stored.tokens.needs_refresh(unix_now(), margin)
        {
            // Another connection refreshed it already.
            let token = stored.tokens.access_token.clone();
            return (AuthOutcome::Token(token), Some(stored));
        }
    }
    let flow = OAuthFlow::refresh(Instant::now(), &current, options.exchange_timeout);
    match drive(flow, backend, &options, &runtime).await {
        Ok(c) => keep(&options, &server, c).await,
        Err(_) => (AuthOutcome::Nothing, None),
    }
}

/// Stores new credentials (and, for a grant with a user, their client) and hands their token
/// on. A client of a grant without a user is never one a sign-in should reuse.
async fn keep(options: &OAuthOptions, server: &str, c: Credentials) -> TaskResult {
    // A store that cannot write costs the next run a sign-in, not this one its token.
    if options.grant.is_interactive() {
        let _ = options.store.save_client(KnownClient::of(&c)).await;
    }
    let _ = options.store.save(server, c.clone()).await;
    (AuthOutcome::Token(c.tokens.access_token.clone()), Some(c))
}

fn failed(error: FlowError) -> TaskResult {
    (AuthOutcome::Failed(error.to_string()), None)
}

/// 48 random bytes from the system: 32 for the PKCE verifier, 16 for `state` (or a client
/// assertion's `jti`).
fn random_bytes() -> Result<[u8; 48], String> {
    let mut random = [0u8; 48];
    getrandom::getrandom(&mut random).map_err(|e| format!("no randomness from the system: {e}"))?;
    Ok(random)
}
