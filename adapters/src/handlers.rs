//! What the application does when the server asks: elicitation, sampling, roots.
//!
//! Handlers are async functions. They are called the moment the server's request is decoded,
//! whatever our own calls are doing, and their answers go back as soon as they are ready. Each
//! runs as a task of its own in the connection's driver task, outside every lock of the
//! connection: a slow handler holds up nothing else. A handler that returns `Err` answers the
//! server with that error; one that panics, or whose answer cannot be serialized, answers with
//! `-32603` and the fixed message [`HANDLER_FAILED`](mcpwire_core::HANDLER_FAILED) (its own
//! words go to [`Event::HandlerFailed`](mcpwire_core::Event::HandlerFailed) and `tracing`,
//! never to the server), and the connection, every other call and every later handler go on.

use std::future::Future;
use std::sync::Arc;

use mcpwire_core::jsonrpc::ErrorObject;
use mcpwire_core::types::{
    fill_from_defaults, ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitAction,
    ElicitResult, Root,
};
use serde::Serialize;
use serde_json::{json, Map, Value};

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

/// An elicitation handler's answer: an [`ElicitResult`], or an accepted form whose content is
/// any value that serializes to a JSON object (a struct of the host's, a map, `json!({…})`).
/// A content that does not (a failing `Serialize`, a string, a list) fails the handler: the
/// server gets `-32603` with the fixed message, the host an
/// [`Event::HandlerFailed`](mcpwire_core::Event::HandlerFailed) saying why.
///
/// ```
/// use mcpwire::ElicitAnswer;
///
/// #[derive(serde::Serialize)]
/// struct Contact { name: String, age: u32 }
///
/// let answer = ElicitAnswer::accept(Contact { name: "Ann".into(), age: 40 });
/// let result = answer.into_result().unwrap();
/// assert_eq!(result.content.unwrap()["age"], 40);
/// assert!(ElicitAnswer::accept("not a form").into_result().is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitAnswer {
    answer: Result<ElicitResult, String>,
}

impl ElicitAnswer {
    /// Accepts, with `content` as the form's values.
    pub fn accept(content: impl Serialize) -> Self {
        let answer = match serde_json::to_value(content) {
            Ok(Value::Object(content)) => Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(content),
                meta: None,
            }),
            Ok(other) => Err(format!(
                "its content is not a JSON object but {}",
                match other {
                    Value::Null => "null",
                    Value::Bool(_) => "a boolean",
                    Value::Number(_) => "a number",
                    Value::String(_) => "a string",
                    Value::Array(_) => "a list",
                    Value::Object(_) => "an object",
                }
            )),
            Err(e) => Err(format!("its content cannot be serialized: {e}")),
        };
        ElicitAnswer { answer }
    }

    /// Declines (the user said no).
    pub fn decline() -> Self {
        ElicitResult::decline().into()
    }

    /// Cancels (the user dismissed it).
    pub fn cancel() -> Self {
        ElicitResult {
            action: ElicitAction::Cancel,
            content: None,
            meta: None,
        }
        .into()
    }

    /// The same answer, with `_meta`.
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        if let Ok(result) = &mut self.answer {
            result.meta = Some(meta);
        }
        self
    }

    /// The answer as it goes to the server, or why it cannot go.
    pub fn into_result(self) -> Result<ElicitResult, String> {
        self.answer
    }
}

impl From<ElicitResult> for ElicitAnswer {
    fn from(result: ElicitResult) -> Self {
        ElicitAnswer { answer: Ok(result) }
    }
}

type ElicitFn =
    dyn Fn(ElicitationRequest) -> BoxFuture<Result<ElicitAnswer, ErrorObject>> + Send + Sync;
type SamplingFn = dyn Fn(CreateMessageParams) -> BoxFuture<Result<CreateMessageResult, ErrorObject>>
    + Send
    + Sync;
type SamplingJsonFn = dyn Fn(Value) -> BoxFuture<Result<Value, ErrorObject>> + Send + Sync;
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
    pub(crate) sampling_json: Option<Arc<SamplingJsonFn>>,
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
            .field(
                "sampling",
                &(self.sampling.is_some() || self.sampling_json.is_some()),
            )
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

    /// Answers elicitations (form mode; see [`with_url_elicitation`](Self::with_url_elicitation))
    /// with an [`ElicitResult`], or an [`ElicitAnswer`] whose content is any `Serialize` value.
    pub fn on_elicitation<F, Fut, A>(mut self, f: F) -> Self
    where
        F: Fn(ElicitationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<A, ErrorObject>> + Send + 'static,
        A: Into<ElicitAnswer> + 'static,
    {
        self.elicitation = Some(Arc::new(move |r| {
            let answer = f(r);
            Box::pin(async move { answer.await.map(Into::into) })
        }));
        self
    }

    /// Also declares url-mode elicitation (the handler then receives url requests too).
    pub fn with_url_elicitation(mut self) -> Self {
        self.url_elicitation = true;
        self
    }

    /// Answers `sampling/createMessage`: the handler reads the request as
    /// [`CreateMessageParams`] (its messages typed) and gives the model's answer as a
    /// [`CreateMessageResult`] (`CreateMessageResult::text(model, text)` for a text answer).
    /// A request whose params do not read as the spec's is refused with `-32602`, without
    /// calling the handler. Replaces a handler set with [`on_sampling_json`](Self::on_sampling_json).
    ///
    /// ```
    /// use mcpwire::core::types::CreateMessageResult;
    /// use mcpwire::Handlers;
    ///
    /// let handlers = Handlers::new().on_sampling(|request| async move {
    ///     let asked = request.messages.last().map(|m| m.text_content()).unwrap_or_default();
    ///     Ok(CreateMessageResult::text("my-model", &format!("you said: {asked}")))
    /// });
    /// # let _ = handlers;
    /// ```
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.sampling = Some(Arc::new(move |p| Box::pin(f(p))));
        self.sampling_json = None;
        self
    }

    /// Answers `sampling/createMessage` with raw JSON: the request's params as sent, and a
    /// `CreateMessageResult` object written by the host. Replaces a handler set with
    /// [`on_sampling`](Self::on_sampling).
    pub fn on_sampling_json<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
    {
        self.sampling_json = Some(Arc::new(move |p| Box::pin(f(p))));
        self.sampling = None;
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
        if self.sampling.is_some() || self.sampling_json.is_some() {
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
