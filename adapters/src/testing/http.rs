//! The scripted server behind an [`HttpBackend`] of its own, for HTTP-shaped tests: each POST
//! answered with plain JSON, the handshake era's session (`Mcp-Session-Id`) given with the
//! `initialize` result, checked on every later request and answered `404` once it expired.
//! The server's own requests and notifications have no stream here (no SSE, no standalone
//! GET), so questions mid-call, progress and `list_changed` are for the in-memory pipes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures_lite::io::Cursor;
use mcpwire_core::error::HttpErrorKind;
use mcpwire_core::{HttpMethod, HttpRequest};
use serde_json::Value;

use super::script::{Script, ServerEra};
use super::wire::{Shared, Spawner};
use crate::future::BoxFuture;
use crate::http::{HttpBackend, HttpFailure, HttpResponse};

/// Where each POSTed request's answer goes, by its id as JSON text.
type Waiting = Mutex<HashMap<String, async_channel::Sender<Value>>>;

/// The scripted server as an HTTP backend.
pub(super) struct ScriptedHttp {
    shared: Arc<Shared>,
    waiting: Arc<Waiting>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn response(status: u16, headers: Vec<(String, String)>, body: Vec<u8>) -> HttpResponse {
    HttpResponse::new(status, headers, Box::pin(Cursor::new(body)))
}

impl ScriptedHttp {
    /// Starts the server on `spawner`: its answers go to the POSTs waiting for them; what else
    /// it sends has nowhere to go and is only in the transcript.
    pub(super) fn start(script: Script, era: ServerEra, spawner: Spawner) -> ScriptedHttp {
        let (shared, outgoing, stopped) = Shared::new(script, era, spawner.clone());
        let waiting: Arc<Waiting> = Arc::default();
        let router = waiting.clone();
        spawner
            .spawn_joinable(async move {
                while let Ok(message) = outgoing.recv().await {
                    let id = message
                        .get("id")
                        .filter(|_| message.get("method").is_none());
                    let waiter = id.and_then(|id| lock(&router).remove(&id.to_string()));
                    if let Some(waiter) = waiter {
                        let _ = waiter.try_send(message);
                    }
                }
                // Dropped: nobody waits any more.
                lock(&router).clear();
            })
            .detach();
        let ender = shared.clone();
        spawner
            .spawn_joinable(async move {
                let _ = stopped.recv().await;
                ender.end();
            })
            .detach();
        ScriptedHttp { shared, waiting }
    }

    pub(super) fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    async fn exchange(
        shared: Arc<Shared>,
        waiting: Arc<Waiting>,
        request: HttpRequest,
    ) -> Result<HttpResponse, HttpFailure> {
        if shared.ended() {
            let words = "the scripted server dropped the connection";
            return Err(HttpFailure::new(
                HttpErrorKind::ConnectionRefused,
                words,
                true,
            ));
        }
        let post = match request.method {
            HttpMethod::Post => request.body,
            // No standalone stream.
            HttpMethod::Get => return Ok(response(405, Vec::new(), Vec::new())),
            HttpMethod::Delete => {
                shared.expire_session();
                return Ok(response(200, Vec::new(), Vec::new()));
            }
        };
        let Ok(message) = serde_json::from_slice::<Value>(&post) else {
            return Ok(response(400, Vec::new(), Vec::new()));
        };
        let method = message.get("method").and_then(Value::as_str);
        let initialize = method == Some("initialize");
        let sent = request
            .headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("mcp-session-id"))
            .map(|(_, value)| value.clone());
        // The handshake era's session: a request in a session the server does not know is
        // answered `404`, one in none (the stateless era's probe aside, which the server
        // refuses as an older one does) `400`. Refused on the wire: in the transcript, with no
        // answer.
        let probe = message
            .pointer("/params/_meta")
            .is_some_and(|m| m.get("io.modelcontextprotocol/protocolVersion").is_some());
        if shared.era == ServerEra::Handshake && !initialize && !probe {
            let status = match &sent {
                None => Some(400),
                Some(_) if !shared.session_holds(&sent) => Some(404),
                Some(_) => None,
            };
            if let Some(status) = status {
                shared.note_refused(message);
                return Ok(response(status, Vec::new(), Vec::new()));
            }
        }
        let id = message.get("id").filter(|_| method.is_some()).cloned();
        let Some(id) = id else {
            // A notification or an answer: taken, nothing to say.
            shared.handle(message);
            return Ok(response(202, Vec::new(), Vec::new()));
        };
        let (answer, answered) = async_channel::bounded(1);
        lock(&waiting).insert(id.to_string(), answer);
        shared.handle(message);
        let Ok(answer) = answered.recv().await else {
            return Err(HttpFailure::maybe_sent(
                "the scripted server dropped the connection",
            ));
        };
        let mut headers = vec![("Content-Type".to_owned(), "application/json".to_owned())];
        if initialize && answer.get("result").is_some() && shared.era == ServerEra::Handshake {
            headers.push(("Mcp-Session-Id".to_owned(), shared.new_session()));
        }
        Ok(response(200, headers, answer.to_string().into_bytes()))
    }
}

impl HttpBackend for ScriptedHttp {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
        let (shared, waiting) = (self.shared.clone(), self.waiting.clone());
        Box::pin(Self::exchange(shared, waiting, request))
    }
}
