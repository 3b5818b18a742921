//! The scripted server at work: reads the client's JSONL, answers from the script, writes its
//! own messages, and keeps the transcript. Each tool call runs as a task of the runtime, so a
//! tool that waits (for the client's answer, for time) holds up nothing else.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_lite::io::BufReader;
use futures_lite::{future, AsyncBufReadExt, AsyncWriteExt};
use mcpwire_core::jsonrpc::ErrorObject;
use mcpwire_core::types::{is_handshake_version, LATEST_HANDSHAKE_VERSION, LATEST_VERSION};
use serde_json::{json, Value};

use super::call::{Boxed, CallSide, ToolCall};
use super::script::{Script, ServerEra};
use super::transcript::{Transcript, Way, WireMessage};

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_SUBSCRIPTION: &str = "io.modelcontextprotocol/subscriptionId";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// Where the server's tasks and timers run: the runtime its client runs on.
pub(super) type Spawner = crate::runtime::Runtime;

/// A call waiting for the client's next try (stateless era): where the answer goes.
struct Round {
    answer: async_channel::Sender<Result<Value, ErrorObject>>,
    /// The request the call answers, moved to the try that brings the inputs.
    answer_to: Arc<Mutex<Value>>,
}

/// The server's state, shared by its reader, its writer, its tasks and its handles.
pub(super) struct Shared {
    pub(super) script: Mutex<Script>,
    pub(super) era: ServerEra,
    pub(super) spawner: Spawner,
    out: async_channel::Sender<Value>,
    stop: async_channel::Sender<()>,
    transcript: Mutex<Vec<WireMessage>>,
    /// Told of each message noted in the transcript.
    noted: event_listener::Event,
    /// Our requests to the client (handshake era), by id.
    pending: Mutex<HashMap<i64, async_channel::Sender<Result<Value, ErrorObject>>>>,
    /// Calls waiting for inputs (stateless era), by request state.
    rounds: Mutex<HashMap<String, Round>>,
    /// Open `subscriptions/listen` requests, with what each asked for.
    listens: Mutex<Vec<(Value, Value)>>,
    next_id: AtomicI64,
    /// Over HTTP: the session open now (none before `initialize` and once it expired), and
    /// how many were opened.
    session: Mutex<(Option<String>, u64)>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn error_value(e: &ErrorObject) -> Value {
    serde_json::to_value(e).unwrap_or(Value::Null)
}

impl Shared {
    /// A server of `script` whose tasks run on `spawner`; the messages it sends come out of
    /// the receiver, and the other one tells its reader to stop.
    pub(super) fn new(
        script: Script,
        era: ServerEra,
        spawner: Spawner,
    ) -> (
        Arc<Shared>,
        async_channel::Receiver<Value>,
        async_channel::Receiver<()>,
    ) {
        let (out, outgoing) = async_channel::unbounded::<Value>();
        let (stop, stopped) = async_channel::bounded::<()>(1);
        let shared = Arc::new(Shared {
            script: Mutex::new(script),
            era,
            spawner,
            out,
            stop,
            transcript: Mutex::new(Vec::new()),
            noted: event_listener::Event::new(),
            pending: Mutex::new(HashMap::new()),
            rounds: Mutex::new(HashMap::new()),
            listens: Mutex::new(Vec::new()),
            next_id: AtomicI64::new(1),
            session: Mutex::new((None, 0)),
        });
        (shared, outgoing, stopped)
    }

    /// Starts the server's reader and writer on `spawner`, over the client's stdin (`input`)
    /// and stdout (`output`).
    pub(super) fn start(
        script: Script,
        era: ServerEra,
        spawner: Spawner,
        input: piper::Reader,
        mut output: piper::Writer,
    ) -> Arc<Shared> {
        let (shared, outgoing, stopped) = Shared::new(script, era, spawner.clone());
        spawner
            .spawn_joinable(async move {
                while let Ok(message) = outgoing.recv().await {
                    let mut line = message.to_string();
                    line.push('\n');
                    if output.write_all(line.as_bytes()).await.is_err() {
                        break;
                    }
                    let _ = output.flush().await;
                }
                // The client reads its end of stream.
                let _ = output.close().await;
            })
            .detach();
        let reader = shared.clone();
        spawner
            .spawn_joinable(async move {
                let mut input = BufReader::new(input);
                let mut line = String::new();
                loop {
                    line.clear();
                    let read = async { Some(input.read_line(&mut line).await) };
                    let stop = async {
                        let _ = stopped.recv().await;
                        None
                    };
                    match future::or(stop, read).await {
                        Some(Ok(n)) if n > 0 => {
                            if let Ok(message) = serde_json::from_str::<Value>(line.trim()) {
                                reader.handle(message);
                            }
                        }
                        _ => break,
                    }
                }
                // The client closed (or the connection was dropped): so does the server.
                reader.end();
            })
            .detach();
        shared
    }

    /// Whether the connection ended.
    pub(super) fn ended(&self) -> bool {
        self.out.is_closed()
    }

    /// Over HTTP: opens a new session and gives its id.
    pub(super) fn new_session(&self) -> String {
        let mut session = lock(&self.session);
        session.1 += 1;
        let id = format!("scripted-session-{}", session.1);
        session.0 = Some(id.clone());
        id
    }

    /// Over HTTP: whether `sent` names the session open now.
    pub(super) fn session_holds(&self, sent: &Option<String>) -> bool {
        let session = lock(&self.session);
        session.0.is_some() && session.0 == *sent
    }

    /// Over HTTP: the session expires (the next request in it is answered `404`).
    pub(super) fn expire_session(&self) {
        lock(&self.session).0 = None;
    }

    /// The connection ended: nothing more goes out, nobody waits for an answer.
    pub(super) fn end(&self) {
        self.out.close();
        lock(&self.pending).clear();
        lock(&self.rounds).clear();
    }

    /// Sends `message` to the client, and notes it.
    pub(super) fn send(&self, message: Value) {
        self.note(Way::ToClient, message.clone());
        let _ = self.out.try_send(message);
    }

    /// A message from the client refused before it reached the server (over HTTP, outside
    /// the session): noted, not handled.
    pub(super) fn note_refused(&self, message: Value) {
        self.note(Way::ToServer, message);
    }

    fn note(&self, way: Way, message: Value) {
        lock(&self.transcript).push(WireMessage { way, message });
        self.noted.notify(usize::MAX);
    }

    /// Waits until a message named `method` went `way`, and gives the first such.
    pub(super) async fn wait_for(&self, way: Way, method: &str) -> WireMessage {
        loop {
            let listener = self.noted.listen();
            let found = lock(&self.transcript)
                .iter()
                .find(|m| m.way == way && m.method() == Some(method))
                .cloned();
            if let Some(found) = found {
                return found;
            }
            listener.await;
        }
    }

    pub(super) fn transcript(&self) -> Transcript {
        Transcript {
            messages: lock(&self.transcript).clone(),
        }
    }

    /// Ends the connection at once: nothing more is read, and the client reads the end of its
    /// stream once what was already sent is written.
    pub(super) fn drop_connection(&self) {
        let _ = self.stop.try_send(());
        self.out.close();
    }

    fn respond(&self, id: &Value, answer: Result<Value, ErrorObject>) {
        let message = match answer {
            Ok(mut result) => {
                if self.era == ServerEra::Stateless {
                    if let Some(object) = result.as_object_mut() {
                        object
                            .entry("resultType")
                            .or_insert_with(|| json!("complete"));
                    }
                }
                json!({"jsonrpc": "2.0", "id": id, "result": result})
            }
            Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": error_value(&e)}),
        };
        self.send(message);
    }

    /// Sends a notification: to a handshake-era client as it is; in the stateless era, a
    /// `list_changed` goes to each subscription that asked for it, tagged with it.
    pub(super) fn notify(&self, method: &str, params: Value) {
        if self.era == ServerEra::Handshake {
            return self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
        }
        let wanted = match method {
            "notifications/tools/list_changed" => "toolsListChanged",
            "notifications/prompts/list_changed" => "promptsListChanged",
            "notifications/resources/list_changed" => "resourcesListChanged",
            _ => return self.send(json!({"jsonrpc": "2.0", "method": method, "params": params})),
        };
        let listens = lock(&self.listens).clone();
        for (id, filter) in listens {
            if filter.get(wanted) == Some(&Value::Bool(true)) {
                let mut p = params.clone();
                if !p.is_object() {
                    p = json!({});
                }
                p["_meta"] = json!({ META_SUBSCRIPTION: id });
                self.send(json!({"jsonrpc": "2.0", "method": method, "params": p}));
            }
        }
    }

    /// Asks the client `method` for the call answering `answer_to`, and waits for its answer:
    /// a request in the handshake era, an `input_required` round in the stateless era.
    pub(super) async fn ask(
        &self,
        answer_to: &Arc<Mutex<Value>>,
        method: &str,
        params: Value,
    ) -> Result<Value, ErrorObject> {
        let (answer, answered) = async_channel::bounded(1);
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        match self.era {
            ServerEra::Handshake => {
                lock(&self.pending).insert(n, answer);
                self.send(json!({"jsonrpc": "2.0", "id": n, "method": method, "params": params}));
            }
            ServerEra::Stateless => {
                let state = format!("scripted-round-{n}");
                let round = Round {
                    answer,
                    answer_to: answer_to.clone(),
                };
                lock(&self.rounds).insert(state.clone(), round);
                let id = lock(answer_to).clone();
                let result = json!({"resultType": "input_required", "requestState": state,
                    "inputRequests": {"input": {"method": method, "params": params}}});
                self.respond(&id, Ok(result));
            }
        }
        answered
            .recv()
            .await
            .unwrap_or_else(|_| Err(ErrorObject::new(-32000, "the connection ended")))
    }

    /// A message from the client.
    pub(super) fn handle(self: &Arc<Self>, message: Value) {
        self.note(Way::ToServer, message.clone());
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").cloned();
        let params = message.get("params").cloned().unwrap_or(json!({}));
        match (method, id) {
            (Some(method), Some(id)) => self.request(method, id, params),
            (Some(_), None) => {} // Notifications are only noted.
            (None, Some(id)) => {
                let waiting = id.as_i64().and_then(|n| lock(&self.pending).remove(&n));
                if let Some(waiting) = waiting {
                    let answer = match (message.get("result"), message.get("error")) {
                        (Some(result), _) => Ok(result.clone()),
                        (None, Some(e)) => Err(serde_json::from_value(e.clone())
                            .unwrap_or_else(|_| ErrorObject::new(-32603, e.to_string()))),
                        (None, None) => Err(ErrorObject::new(-32603, "an empty response")),
                    };
                    let _ = waiting.try_send(answer);
                }
            }
            (None, None) => {}
        }
    }

    fn request(self: &Arc<Self>, method: &str, id: Value, params: Value) {
        let version = params
            .pointer(&format!("/_meta/{}", META_VERSION.replace('/', "~1")))
            .and_then(Value::as_str);
        let not_found = || {
            let e = ErrorObject::new(METHOD_NOT_FOUND, format!("method not found: {method}"));
            Err(e)
        };
        let answer = match (self.era, version) {
            // An older server does not know the stateless era's requests (the probe included).
            (ServerEra::Handshake, Some(_)) => not_found(),
            (ServerEra::Stateless, v) if v != Some(LATEST_VERSION) => not_found(),
            _ => {
                let failure = lock(&self.script).failures.get(method).cloned();
                match failure {
                    Some(e) => Err(e),
                    None => match self.serve(method, &id, &params) {
                        Some(answer) => answer,
                        None => return,
                    },
                }
            }
        };
        self.respond(&id, answer);
    }

    fn server_info(&self) -> Value {
        let script = lock(&self.script);
        json!({"name": script.name, "version": "1.0.0"})
    }

    /// One request; `None` when it is answered later (a tool call, a subscription).
    fn serve(
        self: &Arc<Self>,
        method: &str,
        id: &Value,
        params: &Value,
    ) -> Option<Result<Value, ErrorObject>> {
        let invalid = |words: &str| Err(ErrorObject::new(INVALID_PARAMS, words));
        let text = |key: &str| params.get(key).and_then(Value::as_str).unwrap_or_default();
        Some(match method {
            "server/discover" => Ok(json!({
                "supportedVersions": [LATEST_VERSION],
                "capabilities": lock(&self.script).capabilities(),
                "ttlMs": 60_000,
                "cacheScope": "public",
                "_meta": { META_SERVER_INFO: self.server_info() }
            })),
            "initialize" => {
                let asked = text("protocolVersion");
                let version = if is_handshake_version(asked) {
                    asked
                } else {
                    LATEST_HANDSHAKE_VERSION
                };
                Ok(json!({"protocolVersion": version,
                          "capabilities": lock(&self.script).capabilities(),
                          "serverInfo": self.server_info()}))
            }
            "ping" | "logging/setLevel" => Ok(json!({})),
            "subscriptions/listen" => {
                let asked = params.get("notifications").cloned().unwrap_or(json!({}));
                let ack = json!({"notifications": asked, "_meta": { META_SUBSCRIPTION: id }});
                let method = "notifications/subscriptions/acknowledged";
                self.send(json!({"jsonrpc": "2.0", "method": method, "params": ack}));
                lock(&self.listens).push((id.clone(), asked));
                return None;
            }
            "tools/list" => Ok(json!({"tools": lock(&self.script).tool_list()})),
            "tools/call" => return self.call_tool(id, params),
            "prompts/list" => Ok(json!({"prompts": lock(&self.script).prompt_list()})),
            "prompts/get" => {
                let prompt = lock(&self.script).prompt(text("name"));
                match prompt {
                    Some(f) => f(params.get("arguments").cloned().unwrap_or(json!({}))),
                    None => invalid("unknown prompt"),
                }
            }
            "resources/list" => Ok(json!({"resources": lock(&self.script).resource_list()})),
            "resources/templates/list" => {
                Ok(json!({"resourceTemplates": lock(&self.script).template_list()}))
            }
            "resources/read" => {
                let uri = text("uri");
                let reader = lock(&self.script).reader(uri);
                match reader {
                    Some((f, mime)) => f(uri).map(
                        |text| json!({"contents": [{"uri": uri, "mimeType": mime, "text": text}]}),
                    ),
                    None => Err(ErrorObject::new(-32002, "resource not found")),
                }
            }
            "completion/complete" => {
                let complete = lock(&self.script).completion.clone();
                match complete {
                    Some(f) => {
                        let values = f(
                            params.get("ref").unwrap_or(&Value::Null),
                            params.get("argument").unwrap_or(&Value::Null),
                        );
                        let total = values.len();
                        Ok(
                            json!({"completion": {"values": values, "total": total, "hasMore": false}}),
                        )
                    }
                    None => Err(ErrorObject::new(METHOD_NOT_FOUND, "no completions")),
                }
            }
            _ => Err(ErrorObject::new(
                METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            )),
        })
    }

    fn call_tool(
        self: &Arc<Self>,
        id: &Value,
        params: &Value,
    ) -> Option<Result<Value, ErrorObject>> {
        // The next try of a call waiting for inputs (stateless era).
        if let Some(state) = params.get("requestState").and_then(Value::as_str) {
            let Some(round) = lock(&self.rounds).remove(state) else {
                let e = ErrorObject::new(INVALID_PARAMS, "requestState unknown");
                return Some(Err(e));
            };
            *lock(&round.answer_to) = id.clone();
            let answer = params.pointer("/inputResponses/input").cloned();
            let answer = answer.ok_or_else(|| ErrorObject::new(INVALID_PARAMS, "no inputs"));
            let _ = round.answer.try_send(answer);
            return None;
        }
        let name = params.get("name").and_then(Value::as_str).unwrap_or("");
        let Some(tool) = lock(&self.script).tool(name) else {
            let e = ErrorObject::new(INVALID_PARAMS, format!("unknown tool: {name}"));
            return Some(Err(e));
        };
        let answer_to = Arc::new(Mutex::new(id.clone()));
        let call = ToolCall::new(
            name.to_owned(),
            params.get("arguments").cloned().unwrap_or(json!({})),
            params.pointer("/_meta/progressToken").cloned(),
            answer_to.clone(),
            self.clone(),
        );
        let run = tool(call);
        let shared = self.clone();
        self.spawner
            .spawn_joinable(async move {
                let answer = run.await.map(|result| Value::Object(result.into_map()));
                let id = lock(&answer_to).clone();
                shared.respond(&id, answer);
            })
            .detach();
        None
    }
}

impl CallSide for Shared {
    fn ask(
        self: Arc<Self>,
        answer_to: Arc<Mutex<Value>>,
        method: String,
        params: Value,
    ) -> Boxed<Result<Value, ErrorObject>> {
        Box::pin(async move { Shared::ask(&self, &answer_to, &method, params).await })
    }

    fn notify(&self, method: &str, params: Value) {
        Shared::notify(self, method, params);
    }

    fn sleep(&self, duration: Duration) -> Boxed<()> {
        let runtime = self.spawner.clone();
        Box::pin(async move { runtime.sleep(duration).await })
    }

    fn drop_connection(&self) {
        Shared::drop_connection(self);
    }
}
