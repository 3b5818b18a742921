//! What the application does when the server asks: elicitation, sampling, roots.
//!
//! Handlers are async functions. They are called the moment the server's request is decoded,
//! whatever our own calls are doing, and their answers go back as soon as they are ready.

use std::future::Future;
use std::sync::Arc;

use mcpwire_core::jsonrpc::ErrorObject;
use mcpwire_core::types::{
    fill_from_defaults, ClientCapabilities, ElicitAction, ElicitResult, Root,
};
use serde_json::{json, Value};

use crate::future::BoxFuture;

/// An elicitation the server asked for (`elicitation/create`).
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    /// The request's params as sent: `mode`, `message`, `requestedSchema` or `url`.
    pub params: Value,
    /// The requested fields in the order the server wrote them (empty when unknown).
    order: Vec<String>,
}

impl ElicitationRequest {
    /// An elicitation with these params (its fields in their sorted order).
    pub fn new(params: Value) -> Self {
        ElicitationRequest {
            params,
            order: Vec::new(),
        }
    }

    /// An elicitation whose requested fields the server wrote in `order`.
    pub(crate) fn with_order(params: Value, order: Vec<String>) -> Self {
        ElicitationRequest { params, order }
    }

    /// The requested fields (`requestedSchema.properties`) in the order the server wrote them,
    /// the order to ask a person in (`params` keeps its keys sorted). A field the order does
    /// not name comes after, sorted.
    pub fn fields(&self) -> Vec<&str> {
        let Some(props) = self
            .requested_schema()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
        else {
            return Vec::new();
        };
        let mut fields: Vec<&str> = self
            .order
            .iter()
            .map(String::as_str)
            .filter(|f| props.contains_key(*f))
            .collect();
        for name in props.keys() {
            if !fields.contains(&name.as_str()) {
                fields.push(name);
            }
        }
        fields
    }

    /// `form` (the default) or `url`.
    pub fn mode(&self) -> &str {
        self.params
            .get("mode")
            .and_then(Value::as_str)
            .unwrap_or("form")
    }

    /// The message to show the user.
    pub fn message(&self) -> &str {
        self.params
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The schema of the form (form mode).
    pub fn requested_schema(&self) -> Option<&Value> {
        self.params.get("requestedSchema")
    }

    /// The URL to open (url mode).
    pub fn url(&self) -> Option<&str> {
        self.params.get("url").and_then(Value::as_str)
    }

    /// The id of a URL-mode elicitation (2025-11-25): the
    /// [`ElicitationComplete`](mcpwire_core::ServerNotification::ElicitationComplete)
    /// notification names it when the out-of-band step is done.
    pub fn elicitation_id(&self) -> Option<&str> {
        self.params.get("elicitationId").and_then(Value::as_str)
    }

    /// An `accept` answer filled from the schema's defaults; `decline` when a required field
    /// has no default.
    pub fn answer_with_defaults(&self) -> ElicitResult {
        let schema = self.requested_schema().cloned().unwrap_or(json!({}));
        match fill_from_defaults(&schema) {
            Ok(content) => ElicitResult {
                meta: None,
                action: ElicitAction::Accept,
                content: Some(content),
            },
            Err(_) => ElicitResult::decline(),
        }
    }
}

type ElicitFn =
    dyn Fn(ElicitationRequest) -> BoxFuture<Result<ElicitResult, ErrorObject>> + Send + Sync;
type SamplingFn = dyn Fn(Value) -> BoxFuture<Result<Value, ErrorObject>> + Send + Sync;
type RootsFn = dyn Fn() -> BoxFuture<Result<Vec<Root>, ErrorObject>> + Send + Sync;

/// The application's answers to server requests. Only what has a handler is declared to the
/// server as a capability; the rest is refused with the error the protocol prescribes. With an
/// elicitation or sampling handler, the client also declares that the server may ask for those
/// to run as tasks (2025-11-25): the handler is called as for any request, and its answer
/// becomes the task's result.
#[derive(Clone, Default)]
pub struct Handlers {
    pub(crate) elicitation: Option<Arc<ElicitFn>>,
    pub(crate) url_elicitation: bool,
    pub(crate) sampling: Option<Arc<SamplingFn>>,
    pub(crate) sampling_tools: bool,
    pub(crate) roots: Option<Arc<RootsFn>>,
    /// The extensions declared (`capabilities.extensions`), by identifier.
    pub(crate) extensions: Vec<(String, Value)>,
    /// Whether elicitation, sampling and roots are declared only when a server needs them
    /// (stateless era).
    pub(crate) on_demand: bool,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers")
            .field("elicitation", &self.elicitation.is_some())
            .field("url_elicitation", &self.url_elicitation)
            .field("sampling", &self.sampling.is_some())
            .field("sampling_tools", &self.sampling_tools)
            .field("roots", &self.roots.is_some())
            .field("extensions", &self.extensions)
            .field("on_demand", &self.on_demand)
            .finish()
    }
}

impl Handlers {
    /// No handlers: the client declares no client capabilities.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers elicitations (form mode; see [`with_url_elicitation`](Self::with_url_elicitation)).
    pub fn on_elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ElicitationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.elicitation = Some(Arc::new(move |r| Box::pin(f(r))));
        self
    }

    /// Also declares url-mode elicitation (the handler then receives url requests too).
    pub fn with_url_elicitation(mut self) -> Self {
        self.url_elicitation = true;
        self
    }

    /// Answers `sampling/createMessage` with a `CreateMessageResult` object.
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
    {
        self.sampling = Some(Arc::new(move |p| Box::pin(f(p))));
        self
    }

    /// Also declares sampling with tools (`sampling.tools`): the handler then receives
    /// requests with `tools` and `toolChoice` (read them with
    /// [`CreateMessageParams`](mcpwire_core::types::CreateMessageParams)) and may answer with
    /// `tool_use` content and `stopReason: "toolUse"`. Without it, a request that gives tools is
    /// refused with `-32602`, as is one whose tool messages break the rules.
    pub fn with_sampling_tools(mut self) -> Self {
        self.sampling_tools = true;
        self
    }

    /// Declares an extension the host supports (`capabilities.extensions`, in both eras), with
    /// its settings (`{}` for none).
    pub fn with_extension(mut self, id: &str, settings: Value) -> Self {
        self.extensions.retain(|(known, _)| known != id);
        self.extensions.push((id.to_owned(), settings));
        self
    }

    /// Declares MCP Apps: the host renders `ui://` resources of type
    /// `text/html;profile=mcp-app` (see [`Tool::ui`](mcpwire_core::types::Tool::ui) and
    /// [`Tool::is_app_only`](mcpwire_core::types::Tool::is_app_only)).
    pub fn with_ui(self) -> Self {
        let settings = json!({"mimeTypes": [mcpwire_core::types::UI_MIME_TYPE]});
        self.with_extension(mcpwire_core::types::UI_EXTENSION, settings)
    }

    /// Answers `roots/list`.
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, ErrorObject>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move || Box::pin(f())));
        self
    }

    /// Declares elicitation, sampling and roots, in the stateless era, only on a request a
    /// server refused without them (`-32021`), which is then sent once more declaring them:
    /// a server that can do without (an elicitation it may skip, a sampling it may do itself)
    /// then asks the user nothing. Extensions are declared on every request as before; in the
    /// handshake era everything is declared in `initialize` (a session's capabilities are fixed
    /// at its start).
    pub fn declare_when_required(mut self) -> Self {
        self.on_demand = true;
        self
    }

    /// The capabilities declared on every request, and those declared only when a server needs
    /// them (see [`declare_when_required`](Self::declare_when_required)).
    pub(crate) fn declared(&self) -> (ClientCapabilities, ClientCapabilities) {
        let all = self.capabilities();
        if !self.on_demand {
            return (all, ClientCapabilities::default());
        }
        let inputs = ClientCapabilities {
            roots: all.roots.clone(),
            sampling: all.sampling.clone(),
            elicitation: all.elicitation.clone(),
            extra: Default::default(),
        };
        let always = ClientCapabilities {
            extra: all.extra,
            ..ClientCapabilities::default()
        };
        (always, inputs)
    }

    /// The capabilities these handlers let the client declare: only what has a handler.
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if self.elicitation.is_some() {
            caps = caps.with_elicitation(self.url_elicitation);
        }
        if self.sampling.is_some() {
            caps = caps.with_sampling();
            if self.sampling_tools {
                caps = caps.with_sampling_tools();
            }
        }
        if self.roots.is_some() {
            caps = caps.with_roots();
        }
        // The server may ask for an elicitation or a sampling to run as a task (2025-11-25):
        // the connection runs it, and the handler's answer is the task's result.
        caps = caps.with_tasks();
        for (id, settings) in &self.extensions {
            caps = caps.with_extension(id, settings.clone());
        }
        caps
    }
}
