//! One call of a scripted tool, as its closure sees it: the arguments, and what it may ask of
//! the client or do to the connection before it answers. The server behind it is only the
//! [`CallSide`] it reaches through.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire_core::jsonrpc::ErrorObject;
use serde_json::{json, Map, Value};

/// A boxed future of the kit.
pub(super) type Boxed<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// What a call reaches of its server.
pub(super) trait CallSide: Send + Sync {
    /// Asks the client `method` for the call answering `answer_to`, and waits for its answer.
    fn ask(
        self: Arc<Self>,
        answer_to: Arc<Mutex<Value>>,
        method: String,
        params: Value,
    ) -> Boxed<Result<Value, ErrorObject>>;

    /// Sends a notification.
    fn notify(&self, method: &str, params: Value);

    /// A wake-up after `duration` on the runtime's clock.
    fn sleep(&self, duration: Duration) -> Boxed<()>;

    /// Ends the connection.
    fn drop_connection(&self);
}

/// One call of a scripted tool: its arguments, and what the tool may do before it answers.
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// The call's arguments (`{}` when none were given).
    pub arguments: Value,
    progress_token: Option<Value>,
    answer_to: Arc<Mutex<Value>>,
    side: Arc<dyn CallSide>,
}

impl std::fmt::Debug for ToolCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCall")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .field("progress_token", &self.progress_token)
            .finish_non_exhaustive()
    }
}

impl ToolCall {
    pub(super) fn new(
        name: String,
        arguments: Value,
        progress_token: Option<Value>,
        answer_to: Arc<Mutex<Value>>,
        side: Arc<dyn CallSide>,
    ) -> ToolCall {
        ToolCall {
            name,
            arguments,
            progress_token,
            answer_to,
            side,
        }
    }

    /// Sends `notifications/progress` for this call, when the client asked for progress
    /// (gave a `progressToken`); nothing otherwise.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.progress_token else {
            return;
        };
        let mut p = Map::new();
        p.insert("progressToken".into(), token.clone());
        p.insert("progress".into(), json!(progress));
        if let Some(total) = total {
            p.insert("total".into(), json!(total));
        }
        if let Some(message) = message {
            p.insert("message".into(), json!(message));
        }
        self.side.notify("notifications/progress", Value::Object(p));
    }

    /// Asks the client `method` with `params` and waits for its answer (the result object, or
    /// the JSON-RPC error it answered with). In the handshake era a request of the server's;
    /// in the stateless era an `input_required` round: the call is answered with the question,
    /// the client retries it with the answer, and this call goes on (its answer then goes to
    /// the retry). A client that fails to answer a round never retries: the tool then waits
    /// until the connection ends.
    pub async fn ask(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let side = self.side.clone();
        side.ask(self.answer_to.clone(), method.to_owned(), params)
            .await
    }

    /// Asks the user through the client (`elicitation/create`, form mode): `message` and the
    /// `requestedSchema` of the answer. The client's answer: `{"action": …, "content": …}`.
    pub async fn elicit(&self, message: &str, schema: Value) -> Result<Value, ErrorObject> {
        let params = json!({"mode": "form", "message": message, "requestedSchema": schema});
        self.ask("elicitation/create", params).await
    }

    /// Asks the client's model (`sampling/createMessage`) with one user message.
    pub async fn sample(&self, prompt: &str, max_tokens: u32) -> Result<Value, ErrorObject> {
        let message = json!({"role": "user", "content": {"type": "text", "text": prompt}});
        let params = json!({"messages": [message], "maxTokens": max_tokens});
        self.ask("sampling/createMessage", params).await
    }

    /// Asks the client for its roots (`roots/list`): `{"roots": […]}`.
    pub async fn roots(&self) -> Result<Value, ErrorObject> {
        self.ask("roots/list", json!({})).await
    }

    /// Waits `duration` on the runtime's clock (tokio's, paused or not; smol's real one).
    pub async fn sleep(&self, duration: Duration) {
        self.side.sleep(duration).await;
    }

    /// Sends a notification to the client meanwhile (see
    /// [`ServerHandle::notify`](super::ServerHandle::notify)).
    pub fn notify(&self, method: &str, params: Value) {
        self.side.notify(method, params);
    }

    /// Drops the connection in the middle of the call (see
    /// [`ServerHandle::drop_connection`](super::ServerHandle::drop_connection)): the call gets
    /// no answer.
    pub fn drop_connection(&self) {
        self.side.drop_connection();
    }
}
