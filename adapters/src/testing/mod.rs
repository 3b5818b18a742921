//! A kit for a host's own tests (feature `testing`): a scripted MCP server in memory, built
//! from closures, joined to a real [`Client`] by in-process streams on smol or tokio, with no
//! process or socket. It speaks either era ([`ServerEra`]), does on demand what a host must
//! survive (a question to the client in the middle of a call, a slow answer, a JSON-RPC error,
//! an `isError` result, a dropped connection, an HTTP session that expires, `list_changed`), and keeps a [`Transcript`] of
//! what went over the wire, both ways.
//!
//! ```
//! # fn main() -> Result<(), mcpwire::Error> {
//! use mcpwire::testing::{ScriptedServer, ServerEra, ToolResult, Way};
//! use mcpwire::{ConnectOptions, ElicitAnswer, Handlers};
//! use serde_json::json;
//!
//! smol::block_on(async {
//!     // The server: one tool that asks the user before it adds.
//!     let (client, server) = ScriptedServer::new()
//!         .era(ServerEra::Handshake)
//!         .tool("add", json!({"type": "object"}), |call| async move {
//!             let answer = call.elicit("Add them?", json!({"type": "object"})).await?;
//!             if answer["action"] != "accept" {
//!                 return Ok(ToolResult::error("the user said no"));
//!             }
//!             let (a, b) = (&call.arguments["a"], &call.arguments["b"]);
//!             let sum = a.as_i64().unwrap_or(0) + b.as_i64().unwrap_or(0);
//!             Ok(ToolResult::text(&sum.to_string()).structured(json!({"sum": sum})))
//!         })
//!         // The host's handlers under test, then its calls.
//!         .connect_smol(ConnectOptions::default().handlers(
//!             Handlers::new().on_elicitation(|_| async { Ok(ElicitAnswer::accept(json!({}))) }),
//!         ))
//!         .await?;
//!     assert_eq!(client.call_tool("add", json!({"a": 2, "b": 40})).await?.text(), "42");
//!     let wire = server.transcript();
//!     assert!(wire.methods(Way::ToClient).contains(&"elicitation/create"), "{wire}");
//!     client.close().await;
//!     Ok(())
//! })
//! # }
//! ```
//!
//! Time: a tool's [`ToolCall::sleep`] and the connection's own timers run on the runtime's
//! clock. On tokio that clock can be paused (`#[tokio::test(start_paused = true)]` or
//! `Builder::start_paused` on a current_thread runtime): a tool that sleeps a minute then
//! answers at once in real time, and a host's timeouts fire in the order the paused clock
//! says. smol has no such clock: its sleeps are real ones, so keep them short there.
//!
//! An HTTP session that expires: the in-memory pipes carry no session, so
//! [`ScriptedServer::over_http`] serves the same script as a Streamable HTTP server whose
//! exchanges it answers itself, and [`ServerHandle::expire_session`] makes it answer `404` to
//! the session, as a server that forgot it does (plain JSON answers there: questions mid-call,
//! progress and `list_changed` are for the pipes).

mod call;
mod http;
mod script;
mod transcript;
mod wire;

use std::future::Future;
use std::sync::{Arc, PoisonError};

use mcpwire_core::config::ServerConfig;
use mcpwire_core::jsonrpc::ErrorObject;
use serde_json::{json, Value};

pub use call::ToolCall;
pub use script::{ServerEra, ToolResult};
pub use transcript::{Transcript, Way, WireMessage};

use crate::client::Client;
use crate::connect::{connect_on, connect_pipes, ready_or_closed, ConnectOptions};
use crate::error::Error;
use crate::runtime::child::Writer;
use crate::runtime::Runtime;
use crate::stdio::pipe_reader::PipeReader;
use script::{Readable, Script};
use wire::Shared;

/// The room of each in-process pipe.
const PIPE: usize = 256 * 1024;

/// A scripted MCP server, built from closures, then connected to a [`Client`] with
/// [`connect_smol`](Self::connect_smol) or `connect_tokio` (feature `tokio`).
#[derive(Clone, Default)]
pub struct ScriptedServer {
    script: Script,
    era: ServerEra,
    http: bool,
}

impl std::fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedServer")
            .field("name", &self.script.name)
            .field("era", &self.era)
            .field("tools", &self.script.tool_list())
            .finish_non_exhaustive()
    }
}

impl ScriptedServer {
    /// A server with nothing to offer, in the stateless era.
    pub fn new() -> Self {
        Self::default()
    }

    /// Speaks `era` (default: the stateless era).
    pub fn era(mut self, era: ServerEra) -> Self {
        self.era = era;
        self
    }

    /// Serves over HTTP instead of the in-memory pipes: the client connects to a Streamable
    /// HTTP server (`http://scripted.invalid/mcp`) whose exchanges the server answers itself
    /// (through [`ConnectOptions::http_backend`]), each POST with plain JSON. In the handshake
    /// era `initialize` opens a session (`Mcp-Session-Id`) that
    /// [`ServerHandle::expire_session`] ends, as a server that forgot it answers `404`. The
    /// server's requests and notifications have no stream there: questions mid-call,
    /// progress and `list_changed` need the pipes.
    pub fn over_http(mut self) -> Self {
        self.http = true;
        self
    }

    /// Its name in `serverInfo` (default `scripted`).
    pub fn name(mut self, name: &str) -> Self {
        self.script.name = name.to_owned();
        self
    }

    /// A tool named `name` taking `input_schema`, answered by `f` from the [`ToolCall`]
    /// (its arguments, and what it may ask or do meanwhile). `Err` answers the call with that
    /// JSON-RPC error; [`ToolResult::error`] gives an `isError` result.
    pub fn tool<F, Fut>(self, name: &str, input_schema: Value, f: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, ErrorObject>> + Send + 'static,
    {
        self.tool_def(json!({"name": name, "inputSchema": input_schema}), f)
    }

    /// A tool from its whole definition (`name`, `inputSchema`, and `description`,
    /// `outputSchema`, `annotations`, … as wanted), answered by `f`.
    pub fn tool_def<F, Fut>(mut self, definition: Value, f: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, ErrorObject>> + Send + 'static,
    {
        self.script
            .add_tool(definition, Arc::new(move |call| Box::pin(f(call))));
        self
    }

    /// A prompt named `name` with its `arguments` (`[{"name": …, "required": …}]`), its
    /// `prompts/get` result (`{"messages": […]}`) made by `f` from the arguments given.
    pub fn prompt<F>(mut self, name: &str, arguments: Value, f: F) -> Self
    where
        F: Fn(Value) -> Result<Value, ErrorObject> + Send + Sync + 'static,
    {
        let definition = json!({"name": name, "arguments": arguments});
        self.script.prompts.push((definition, Arc::new(f)));
        self
    }

    /// A text resource at `uri`, its text read by `f` (given the URI).
    pub fn resource<F>(mut self, uri: &str, name: &str, f: F) -> Self
    where
        F: Fn(&str) -> Result<String, ErrorObject> + Send + Sync + 'static,
    {
        let definition = json!({"uri": uri, "name": name, "mimeType": "text/plain"});
        let read = Arc::new(f);
        self.script.resources.push(Readable { definition, read });
        self
    }

    /// A resource template (`demo://notes/{id}`): each URI that starts as the template does
    /// before its first `{` is read by `f` (given the URI).
    pub fn template<F>(mut self, uri_template: &str, name: &str, f: F) -> Self
    where
        F: Fn(&str) -> Result<String, ErrorObject> + Send + Sync + 'static,
    {
        let definition = json!({"uriTemplate": uri_template, "name": name});
        let read = Arc::new(f);
        self.script.templates.push(Readable { definition, read });
        self
    }

    /// Answers `completion/complete` with the values `f` gives for the request's `ref` and
    /// `argument` (and declares the `completions` capability).
    pub fn completion<F>(mut self, f: F) -> Self
    where
        F: Fn(&Value, &Value) -> Vec<String> + Send + Sync + 'static,
    {
        self.script.completion = Some(Arc::new(f));
        self
    }

    /// Answers every request of `method` with `error` (a JSON-RPC error), whatever its params.
    pub fn fail(mut self, method: &str, error: ErrorObject) -> Self {
        self.script.failures.insert(method.to_owned(), error);
        self
    }

    /// Starts the server on `runtime` and connects a client on the same runtime to it.
    fn start(self, runtime: Runtime, mut options: ConnectOptions) -> Result<Connected, Error> {
        let spawner = runtime.clone();
        if self.http {
            let backend = http::ScriptedHttp::start(self.script, self.era, spawner);
            let server = ServerHandle {
                shared: backend.shared(),
            };
            options.http_backend = Some(Arc::new(backend));
            let config = ServerConfig::http("http://scripted.invalid/mcp");
            let (client, driver) = connect_on(&config, options, runtime)?;
            return Ok(Connected {
                client,
                driver,
                server,
            });
        }
        let (server_reads, client_writes) = piper::pipe(PIPE);
        let (client_reads, server_writes) = piper::pipe(PIPE);
        let shared = Shared::start(self.script, self.era, spawner, server_reads, server_writes);
        let stdout = PipeReader::Stream(Box::pin(client_reads));
        let stdin = Writer::Futures(Box::pin(client_writes));
        let name = format!("scripted server {}", lock_name(&shared));
        let (client, driver) = connect_pipes(&name, stdout, stdin, options, runtime);
        Ok(Connected {
            client,
            driver,
            server: ServerHandle { shared },
        })
    }

    /// Starts the server on smol's global executor and connects a client to it, its driver
    /// and the host's handlers spawned there, as [`connect_smol`](crate::connect_smol) does;
    /// waits for the handshake (or the era's discovery).
    pub async fn connect_smol(
        self,
        options: ConnectOptions,
    ) -> Result<(Client, ServerHandle), Error> {
        let c = self.start(Runtime::Smol { spawn: true }, options)?;
        smol::spawn(c.driver).detach();
        Ok((ready_or_closed(c.client).await?, c.server))
    }

    /// Starts the server on the tokio runtime current here and connects a client to it, as
    /// [`mcpwire::tokio::connect`](crate::tokio::connect) does: its driver, handlers, timers
    /// and the server's tasks all on that runtime (so its paused clock holds for them all).
    /// Outside a tokio runtime: [`Error::NoRuntime`].
    #[cfg(feature = "tokio")]
    pub async fn connect_tokio(
        self,
        options: ConnectOptions,
    ) -> Result<(Client, ServerHandle), Error> {
        let handle = ::tokio::runtime::Handle::try_current().map_err(|e| Error::NoRuntime {
            runtime: "tokio",
            message: e.to_string(),
        })?;
        let c = self.start(Runtime::Tokio(handle), options)?;
        ::tokio::spawn(c.driver);
        Ok((ready_or_closed(c.client).await?, c.server))
    }
}

fn lock_name(shared: &Shared) -> String {
    let script = shared.script.lock().unwrap_or_else(PoisonError::into_inner);
    script.name.clone()
}

struct Connected {
    client: Client,
    driver: crate::driver::Driver,
    server: ServerHandle,
}

/// The running scripted server: its transcript, and what a test makes it do.
#[derive(Clone)]
pub struct ServerHandle {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("era", &self.shared.era)
            .finish_non_exhaustive()
    }
}

impl ServerHandle {
    /// What went over the wire so far, both ways, in order.
    pub fn transcript(&self) -> Transcript {
        self.shared.transcript()
    }

    /// Waits until a message named `method` went `way` (a request or a notification), and
    /// gives the first such: for what the client sends after a call ended on its side (its
    /// `notifications/cancelled` after a timeout), which the transcript may not hold yet when
    /// the call returns. Wrap it in the test's own deadline: it waits as long as it takes.
    pub async fn wait_for(&self, way: Way, method: &str) -> WireMessage {
        self.shared.wait_for(way, method).await
    }

    /// Sends a notification to the client. In the stateless era a `list_changed` goes to each
    /// subscription (`subscriptions/listen`) that asked for it, and nowhere without one.
    pub fn notify(&self, method: &str, params: Value) {
        self.shared.notify(method, params);
    }

    /// Says the tools changed (`notifications/tools/list_changed`).
    pub fn tools_changed(&self) {
        self.notify("notifications/tools/list_changed", json!({}));
    }

    /// Says the prompts changed (`notifications/prompts/list_changed`).
    pub fn prompts_changed(&self) {
        self.notify("notifications/prompts/list_changed", json!({}));
    }

    /// Says the resources changed (`notifications/resources/list_changed`).
    pub fn resources_changed(&self) {
        self.notify("notifications/resources/list_changed", json!({}));
    }

    /// Adds a tool (or replaces the one of that name) while the server runs; say so with
    /// [`tools_changed`](Self::tools_changed).
    pub fn add_tool<F, Fut>(&self, name: &str, input_schema: Value, f: F)
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, ErrorObject>> + Send + 'static,
    {
        let definition = json!({"name": name, "inputSchema": input_schema});
        let mut script = self
            .shared
            .script
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        script.add_tool(definition, Arc::new(move |call| Box::pin(f(call))));
    }

    /// Removes the tool named `name` while the server runs.
    pub fn remove_tool(&self, name: &str) {
        let mut script = self
            .shared
            .script
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        script
            .tools
            .retain(|(d, _)| d.get("name").and_then(Value::as_str) != Some(name));
    }

    /// Over HTTP ([`ScriptedServer::over_http`], handshake era): the session expires, and the
    /// next request in it is answered `404`, as by a server that restarted or forgot it; the
    /// client's next `initialize` opens a new one. Nothing over the pipes.
    pub fn expire_session(&self) {
        self.shared.expire_session();
    }

    /// Drops the connection: the server reads nothing more, and the client reads the end of
    /// its stream once what was already sent is written. Calls in flight get no answer.
    pub fn drop_connection(&self) {
        self.shared.drop_connection();
    }
}
