//! One server's life under the Manager: connect within its start-up timeout, list its tools,
//! watch it until its connection ends, then wait (backoff) and connect again, or give up after
//! failures in a row until the host asks again.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_channel::Receiver;
use futures_lite::future;
use mcpwire_core::config::ServerConfig;
use mcpwire_core::{ChosenEra, Era, ServerNotification};

use super::backoff::{Jitter, Next, Restarts};
use super::cache::{cache_key, CachedList, ListKind};
use super::items::Item;
use super::shared::{Control, Shared};
use super::state::{ManagerEvent, ServerState};
use crate::client::{CallOptions, Client};
use crate::error::Error;
use crate::hosts::ServerSettings;
use crate::runtime::host::Joinable;
use mcpwire_core::types::{Prompt, Resource, Tool};
use mcpwire_core::{CallError, Diagnostic, McpCall};

/// The end of a server's stderr, bounded.
#[derive(Default)]
pub(super) struct Tail {
    lines: VecDeque<String>,
    bytes: usize,
}

/// How much of a server's stderr the state keeps.
const TAIL_BYTES: usize = 2048;

impl Tail {
    fn push(&mut self, line: &str) {
        self.bytes += line.len() + 1;
        self.lines.push_back(line.to_owned());
        while self.bytes > TAIL_BYTES && self.lines.len() > 1 {
            let gone = self.lines.pop_front().expect("not empty");
            self.bytes -= gone.len() + 1;
        }
    }

    fn text(&self) -> String {
        self.lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// Milliseconds since the Unix epoch, for the cache's hints.
fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The era to pin for the next start: the configuration's, else the one remembered (unless it
/// failed last time), else detection.
fn era_for(settings: &ServerSettings, remembered: Option<&str>, trust_memory: bool) -> Era {
    if let Some(era) = settings.era {
        return era;
    }
    match remembered.filter(|_| trust_memory) {
        Some("stateless") => Era::Stateless,
        Some("handshake") => Era::Handshake,
        _ => Era::Auto,
    }
}

/// Runs server `name` until told to stop.
pub(super) async fn supervise(
    shared: Arc<Shared>,
    name: String,
    config: ServerConfig,
    settings: ServerSettings,
    control: Receiver<Control>,
    seed: u64,
) {
    let key = cache_key(&config);
    let mut restarts = Restarts::new(shared.options.restart.clone());
    let mut jitter = Jitter::new(seed);
    let tail = Arc::new(Mutex::new(Tail::default()));
    let mut trust_memory = true;
    let mut attempt = 1;
    loop {
        shared.set_state(&name, ServerState::Starting { attempt });
        let remembered = shared.cached_era(&key);
        let era = era_for(&settings, remembered.as_deref(), trust_memory);
        let pinned_from_memory = settings.era.is_none() && era != Era::Auto;
        let started = start(
            &shared, &name, &key, &config, &settings, era, &tail, &control,
        );
        let reason = match started.await {
            // Stopped while starting (its connection was closed).
            Err(None) => return,
            Err(Some(reason)) => {
                // A remembered era that failed is not trusted again: the next start detects.
                if pinned_from_memory {
                    trust_memory = false;
                }
                reason
            }
            Ok((client, driver)) => {
                trust_memory = true;
                restarts.ready(Instant::now());
                let ended = watch(&shared, &name, &key, &settings, &client, &control).await;
                let reason = match ended {
                    // The server left the era it was remembered in: the next start detects.
                    Watched::EraLeft(reason) => {
                        trust_memory = false;
                        reason
                    }
                    Watched::Stopped => {
                        shared.end_run(&name, ServerState::Disabled);
                        client.close().await;
                        drop(driver);
                        return;
                    }
                    Watched::Ended(reason) => reason,
                    Watched::Failed(reason) => {
                        client.close().await;
                        reason
                    }
                };
                // The client goes with the state that follows (never `ready` without one).
                drop(driver);
                reason
            }
        };
        match restarts.failed(Instant::now(), jitter.unit()) {
            Next::RetryAt { at, attempt: next } => {
                attempt = next;
                shared.end_run(
                    &name,
                    ServerState::Restarting {
                        attempt: next,
                        next_try_at: at,
                        reason,
                    },
                );
                let wait = async {
                    shared.runtime.sleep_until(at).await;
                    true
                };
                let asked = async {
                    loop {
                        match control.recv().await {
                            Ok(Control::Restart) => return true,
                            Ok(Control::Lost(_)) => continue,
                            Ok(Control::Stop) | Err(_) => return false,
                        }
                    }
                };
                if !future::or(wait, asked).await {
                    return;
                }
            }
            Next::GiveUp { .. } => {
                let stderr_tail = tail.lock().unwrap_or_else(|e| e.into_inner()).text();
                shared.end_run(
                    &name,
                    ServerState::Failed {
                        reason,
                        stderr_tail,
                    },
                );
                loop {
                    match control.recv().await {
                        Ok(Control::Restart) => break,
                        Ok(Control::Lost(_)) => continue,
                        Ok(Control::Stop) | Err(_) => return,
                    }
                }
                restarts.reset();
                attempt = 1;
            }
        }
    }
}

/// Fails at `at` with the start-up timeout's words.
async fn timed_out<T>(shared: &Shared, at: Instant, timeout: Duration) -> Result<T, String> {
    shared.runtime.sleep_until(at).await;
    Err(format!("not ready within {timeout:?}"))
}

/// Ends when the server is told to stop (or its controls are gone); a restart or a lost
/// connection asked for meanwhile changes nothing for a start under way.
async fn stopped<T>(control: &Receiver<Control>) -> Option<T> {
    loop {
        match control.recv().await {
            Ok(Control::Stop) | Err(_) => return None,
            Ok(Control::Restart | Control::Lost(_)) => continue,
        }
    }
}

/// Connects within the start-up timeout (the spawn included) and lists the tools; gives the
/// client and its driver's task (dropping it kills the server's process group), or why it
/// failed (`None`: told to stop meanwhile, and the connection was closed gracefully, as on
/// every other path, or never made).
#[allow(clippy::too_many_arguments)]
async fn start(
    shared: &Arc<Shared>,
    name: &str,
    key: &str,
    config: &ServerConfig,
    settings: &ServerSettings,
    era: Era,
    tail: &Arc<Mutex<Tail>>,
    control: &Receiver<Control>,
) -> Result<(Client, Joinable), Option<String>> {
    // The host's function: a panic in it fails this start, with its words, as any other
    // failure to start does (the next try calls it again).
    let mut options =
        crate::contain::call(|| (shared.options.connect_options)(name)).map_err(|words| {
            let failure =
                mcpwire_core::HandlerFailure::new(mcpwire_core::HostHandler::ConnectOptions, words);
            crate::driver::trace::handler_failed(&failure);
            let reason = failure.to_string();
            shared.emit(ManagerEvent::HandlerFailed {
                server: name.to_owned(),
                failure,
            });
            Some(reason)
        })?;
    options.era = era;
    // The file's OAuth client for this server (its id, secret and scopes).
    #[cfg(feature = "oauth")]
    if let (Some(oauth), Some(file)) = (options.oauth.as_mut(), settings.oauth.as_ref()) {
        oauth.use_file_settings(file);
    }
    let timeout = settings
        .startup_timeout
        .unwrap_or(shared.options.startup_timeout);
    options.init_timeout = timeout;
    let theirs = options.on_stderr.take();
    let keep = tail.clone();
    // The host's callback runs with no lock of ours held (the connection catches its panics).
    options.on_stderr = Some(Arc::new(move |line: &str| {
        keep.lock().unwrap_or_else(|e| e.into_inner()).push(line);
        if let Some(f) = &theirs {
            f(line);
        }
    }));
    // The start-up timeout and a stop count from here, the spawn included: a spawn still
    // waiting for the spawner thread is given up (its server killed once made).
    let deadline_at = Instant::now() + timeout;
    let connect = async {
        crate::connect::connect_on_async(config, options, shared.connection_runtime())
            .await
            .map_err(|e| e.to_string())
    };
    let (client, driver) = match future::or(
        async { Some(future::or(connect, timed_out(shared, deadline_at, timeout)).await) },
        stopped(control),
    )
    .await
    {
        Some(connected) => connected.map_err(Some)?,
        None => return Err(None),
    };
    let driver = shared.runtime.spawn_joinable(driver);
    let ready = async {
        client.ready().await.map_err(|e| e.to_string())?;
        match client.era() {
            Some(ChosenEra::Stateless) => shared.remember_era(key, "stateless"),
            Some(ChosenEra::Handshake) => shared.remember_era(key, "handshake"),
            _ => {}
        }
        let listed = list_all(shared, name, key, settings, &client).await;
        // Whatever was listed, and the era, in one write.
        shared.persist(key);
        listed?;
        shared.mark_ready(name);
        Ok(())
    };
    let outcome = future::or(
        async { Some(future::or(ready, timed_out(shared, deadline_at, timeout)).await) },
        stopped(control),
    )
    .await;
    match outcome {
        Some(Ok(())) => Ok((client, driver)),
        Some(Err(reason)) => {
            // The connection is given up: its process group goes with the driver.
            drop(driver);
            Err(Some(reason))
        }
        None => {
            client.close().await;
            drop(driver);
            Err(None)
        }
    }
}

/// Lists `client`'s tools, and its prompts and resources when it offers them, all three asked
/// for at once (one round trip to the server, not three): a list that cannot be read fails the
/// start, with the reason (the tools' first, then the prompts', then the resources').
async fn list_all(
    shared: &Arc<Shared>,
    name: &str,
    key: &str,
    settings: &ServerSettings,
    client: &Client,
) -> Result<(), String> {
    let caps = client.server_info().map(|i| i.capabilities.clone());
    let (prompts, resources) = (
        caps.as_ref().is_some_and(|c| c.prompts.is_some()),
        caps.as_ref().is_some_and(|c| c.resources.is_some()),
    );
    let tools = async {
        list_tools(shared, name, key, settings, client)
            .await
            .map_err(|e| listing_failed(ListKind::Tools, &e))
    };
    let prompts = async {
        if !prompts {
            return Ok(());
        }
        list_other::<Prompt>(shared, name, key, client)
            .await
            .map_err(|e| listing_failed(ListKind::Prompts, &e))
    };
    let resources = async {
        if !resources {
            return Ok(());
        }
        list_other::<Resource>(shared, name, key, client)
            .await
            .map_err(|e| listing_failed(ListKind::Resources, &e))
    };
    let (tools, (prompts, resources)) = future::zip(tools, future::zip(prompts, resources)).await;
    tools.and(prompts).and(resources)
}

/// Lists `client`'s tools into the Manager's view and cache.
async fn list_tools(
    shared: &Arc<Shared>,
    name: &str,
    key: &str,
    settings: &ServerSettings,
    client: &Client,
) -> Result<(), Error> {
    let timeout = settings.tool_timeout.unwrap_or(Duration::from_secs(30));
    let raw = client
        .mcp_call(
            McpCall::list_tools(),
            CallOptions::default().timeout(timeout),
        )
        .await?;
    // The tools straight from the text (one pass, each tool's parts allocated together), the
    // cache's copy as the items' text. A list that does not read as tools is the server's
    // failure, never an empty list.
    let tools: Vec<Tool> = mcpwire_core::typed_result::<ToolsOnly>(&raw, "tools/list")?.tools;
    let credentials = shared.credentials_of(name);
    if let Some(list) = CachedList::from_raw(
        ListKind::Tools,
        raw.get(),
        wall_ms(),
        credentials.as_deref(),
    ) {
        shared.store_list(key, ListKind::Tools, list);
    }
    shared.set_tools(name, client.clone(), tools);
    Ok(())
}

/// The tools of a `tools/list` result.
#[derive(serde::Deserialize)]
struct ToolsOnly {
    #[serde(default)]
    tools: Vec<Tool>,
}

/// Lists `client`'s prompts or resources into the Manager's view and cache. A list that does
/// not read as prompts or resources is an error, never an empty list; a server that answers
/// it has no such method (`-32601`, though it declared the capability) has none.
async fn list_other<T: Item>(
    shared: &Arc<Shared>,
    name: &str,
    key: &str,
    client: &Client,
) -> Result<(), Error> {
    let call = match T::KIND {
        ListKind::Prompts => McpCall::list_prompts(),
        _ => McpCall::list_resources(),
    };
    let raw = match client.mcp_call(call, CallOptions::default()).await {
        Err(Error::Call(CallError::Server(e))) if e.code == METHOD_NOT_FOUND => return Ok(()),
        other => other?,
    };
    let (kind, method) = (T::KIND, T::KIND.method());
    let invalid = |why: String| Error::Call(CallError::InvalidResult(why));
    let credentials = shared.credentials_of(name);
    let list = CachedList::from_raw(kind, raw.get(), wall_ms(), credentials.as_deref())
        .ok_or_else(|| invalid(format!("{method} result has no {}", kind.items_key())))?;
    let items = list
        .items
        .iter()
        .map(|item| {
            serde_json::from_str::<T>(item.get())
                .map_err(|e| invalid(format!("{method}: {e}: {}", item.get())))
        })
        .collect::<Result<Vec<T>, Error>>()?;
    shared.store_list(key, kind, list);
    shared.set_items(name, items);
    Ok(())
}

/// The reason a start or a run ends when list `kind` could not be had.
fn listing_failed(kind: ListKind, e: &Error) -> String {
    format!("listing its {} failed: {e}", kind.items_key())
}

/// JSON-RPC's "method not found".
const METHOD_NOT_FOUND: i64 = -32601;

/// How watching a ready server ended.
enum Watched {
    /// The host asked it to stop.
    Stopped,
    /// Its connection ended, for this reason.
    Ended(String),
    /// Its connection ended because the server no longer speaks the era it was detected in.
    EraLeft(String),
    /// The server failed, for this reason, while its connection is still open (a list could
    /// not be had again): the connection is to be closed.
    Failed(String),
}

/// Watches a ready server: lists again when it says its tools changed; returns when its
/// connection ends or the host stops it.
async fn watch(
    shared: &Arc<Shared>,
    name: &str,
    key: &str,
    settings: &ServerSettings,
    client: &Client,
    control: &Receiver<Control>,
) -> Watched {
    let mut notes = client.notifications();
    let mut events = client.events();
    let ended = async {
        let mut left = false;
        while let Some(event) = events.next().await {
            match event {
                mcpwire_core::Event::EraLeft { .. } => left = true,
                // A handler of the host's failed on this server's connection: the host is told.
                mcpwire_core::Event::HandlerFailed(failure) => {
                    shared.emit(ManagerEvent::HandlerFailed {
                        server: name.to_owned(),
                        failure,
                    })
                }
                // What changed one of its lists: one ended early, a tool left out.
                mcpwire_core::Event::Diagnostic(
                    diagnostic @ (Diagnostic::ListCut { .. } | Diagnostic::ToolDropped { .. }),
                ) => shared.emit(ManagerEvent::Diagnostic {
                    server: name.to_owned(),
                    diagnostic,
                }),
                mcpwire_core::Event::Closed(closed) if left => {
                    return Watched::EraLeft(closed.reason.to_string())
                }
                mcpwire_core::Event::Closed(closed) => {
                    return Watched::Ended(closed.reason.to_string())
                }
                _ => {}
            }
        }
        Watched::Ended(
            client
                .closed_reason()
                .map_or_else(|| "the connection ended".to_owned(), |r| r.to_string()),
        )
    };
    let relist = async {
        while let Some(n) = notes.next().await {
            let other = match n {
                ServerNotification::PromptsListChanged => Some(ListKind::Prompts),
                ServerNotification::ResourcesListChanged => Some(ListKind::Resources),
                _ => None,
            };
            // A list that cannot be had again (it does not read, the server refuses it, no
            // answer in time) is the server's failure: its run ends with the reason, and its
            // cached list is served, stale, until it is ready again.
            if let Some(kind) = other {
                shared.invalidate(key, kind);
                let listed = match kind {
                    ListKind::Prompts => list_other::<Prompt>(shared, name, key, client).await,
                    _ => list_other::<Resource>(shared, name, key, client).await,
                };
                shared.persist(key);
                if let Err(e) = listed {
                    return Watched::Failed(listing_failed(kind, &e));
                }
            }
            if matches!(n, ServerNotification::ToolsListChanged) {
                shared.invalidate(key, ListKind::Tools);
                let listed = list_tools(shared, name, key, settings, client).await;
                shared.persist(key);
                if let Err(e) = listed {
                    return Watched::Failed(listing_failed(ListKind::Tools, &e));
                }
                shared.emit(ManagerEvent::ToolsChanged {
                    server: name.to_owned(),
                });
            }
        }
        future::pending::<Watched>().await
    };
    let stop = async {
        match control.recv().await {
            Ok(Control::Stop) | Err(_) => Watched::Stopped,
            // Asked to restart a ready server: its connection is closed and made again.
            Ok(Control::Restart) => {
                client.close().await;
                Watched::Ended("restarted by the host".into())
            }
            Ok(Control::Lost(reason)) => {
                client.close().await;
                Watched::Ended(reason)
            }
        }
    };
    let run = future::or(ended, relist);
    future::or(stop, run).await
}
