//! The typed calls of [`Client`] beyond tools, tasks and skills: prompts, resources,
//! completion, the log level and resource subscriptions, each in both eras.
//!
//! The stateless era (2026-07-28) removed `logging/setLevel` and `resources/subscribe`: there
//! the core carries them on what replaces them (the per-request
//! `io.modelcontextprotocol/logLevel`, and `subscriptions/listen` with
//! `resourceSubscriptions`), so these calls mean the same in both eras.

use mcpwire_core::jsonrpc::RawJson;
use mcpwire_core::typed_result;
use mcpwire_core::types::{
    CompleteResult, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, Prompt, ReadResourceResult, Resource, ResourceTemplate,
};
use mcpwire_core::McpCall;
use serde_json::{Map, Value};

use super::handle::Client;
use crate::error::Error;
use mcpwire_core::CallOptions;

/// What `completion/complete` completes an argument of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionRef {
    /// A prompt, by name (`ref/prompt`).
    Prompt(String),
    /// A resource template, by its URI template (`ref/resource`).
    Resource(String),
}

impl CompletionRef {
    fn to_json(&self) -> Value {
        match self {
            CompletionRef::Prompt(name) => serde_json::json!({"type": "ref/prompt", "name": name}),
            CompletionRef::Resource(uri) => serde_json::json!({"type": "ref/resource", "uri": uri}),
        }
    }
}

impl Client {
    /// Makes any MCP call built with [`McpCall`] (a list over all its pages, with the
    /// smallest `ttlMs` and the `cacheScope` of the pages kept) and gives its result as sent.
    pub async fn mcp_call(&self, call: McpCall, opts: CallOptions) -> Result<RawJson, Error> {
        self.send_call(&opts, call).await
    }

    /// Every prompt, over all pages.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        self.list_prompts_with(CallOptions::default()).await
    }

    /// Every prompt, over all pages, with options (a timeout).
    pub async fn list_prompts_with(&self, opts: CallOptions) -> Result<Vec<Prompt>, Error> {
        let raw = self.send_call(&opts, McpCall::list_prompts()).await?;
        Ok(typed_result::<ListPromptsResult>(&raw, "prompts/list")?.prompts)
    }

    /// Gets a prompt.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<GetPromptResult, Error> {
        self.get_prompt_with(name, arguments, CallOptions::default())
            .await
    }

    /// Gets a prompt, with options.
    pub async fn get_prompt_with(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        opts: CallOptions,
    ) -> Result<GetPromptResult, Error> {
        let raw = self
            .send_call(&opts, McpCall::get_prompt(name, arguments))
            .await?;
        Ok(typed_result(&raw, "prompts/get")?)
    }

    /// Every resource, over all pages.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        self.list_resources_with(CallOptions::default()).await
    }

    /// Every resource, over all pages, with options.
    pub async fn list_resources_with(&self, opts: CallOptions) -> Result<Vec<Resource>, Error> {
        let raw = self.send_call(&opts, McpCall::list_resources()).await?;
        Ok(typed_result::<ListResourcesResult>(&raw, "resources/list")?.resources)
    }

    /// Every resource template, over all pages.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.list_resource_templates_with(CallOptions::default())
            .await
    }

    /// Every resource template, over all pages, with options.
    pub async fn list_resource_templates_with(
        &self,
        opts: CallOptions,
    ) -> Result<Vec<ResourceTemplate>, Error> {
        let raw = self
            .send_call(&opts, McpCall::list_resource_templates())
            .await?;
        let method = "resources/templates/list";
        Ok(typed_result::<ListResourceTemplatesResult>(&raw, method)?.resource_templates)
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        self.read_resource_with(uri, CallOptions::default()).await
    }

    /// Reads a resource, with options.
    pub async fn read_resource_with(
        &self,
        uri: &str,
        opts: CallOptions,
    ) -> Result<ReadResourceResult, Error> {
        let raw = self.send_call(&opts, McpCall::read_resource(uri)).await?;
        Ok(typed_result(&raw, "resources/read")?)
    }

    /// `completion/complete`: the server's suggestions for the argument `name` of `reference`,
    /// whose value so far is `value`; `context` holds the arguments already chosen. Fails with
    /// [`ClientError::NotSupported`](mcpwire_core::ClientError::NotSupported) when the server does not offer `completions`.
    pub async fn complete(
        &self,
        reference: &CompletionRef,
        name: &str,
        value: &str,
        context: Option<Map<String, Value>>,
        opts: CallOptions,
    ) -> Result<CompleteResult, Error> {
        let call = McpCall::complete(reference.to_json(), name, value, context);
        let raw = self.send_call(&opts, call).await?;
        Ok(typed_result(&raw, "completion/complete")?)
    }

    /// Asks for log messages at `level` (`debug`, `info`, `notice`, `warning`, `error`,
    /// `critical`, `alert`, `emergency`) and above, on
    /// [`notifications`](Client::notifications). Handshake era: `logging/setLevel`. Stateless
    /// era, which removed it: nothing is sent, and every request from then on carries the level
    /// (`io.modelcontextprotocol/logLevel` in its `_meta`); until a level is set no request asks
    /// for logs.
    pub async fn set_log_level(&self, level: &str, opts: CallOptions) -> Result<(), Error> {
        self.send_call(&opts, McpCall::set_log_level(level)).await?;
        Ok(())
    }

    /// Subscribes to `uri`: `notifications/resources/updated` for it arrive on
    /// [`notifications`](Client::notifications) as
    /// [`ServerNotification::ResourceUpdated`](mcpwire_core::ServerNotification::ResourceUpdated) in
    /// both eras. Handshake era: `resources/subscribe`. Stateless era, which removed it: a
    /// `subscriptions/listen` asking for `resourceSubscriptions: [uri]`, and this ends when the
    /// server acknowledges it (with [`CallError::Declined`](mcpwire_core::CallError::Declined)
    /// when it leaves the resource out). Fails with
    /// [`ClientError::NotSupported`](mcpwire_core::ClientError::NotSupported), sending nothing,
    /// when the server's `resources` capability lacks `subscribe: true`.
    pub async fn subscribe_resource(&self, uri: &str, opts: CallOptions) -> Result<(), Error> {
        self.send_call(&opts, McpCall::subscribe_resource(uri))
            .await?;
        Ok(())
    }

    /// Ends [`subscribe_resource`](Client::subscribe_resource)'s notifications for `uri`:
    /// `resources/unsubscribe` in the handshake era; in the stateless era its listen ends.
    pub async fn unsubscribe_resource(&self, uri: &str, opts: CallOptions) -> Result<(), Error> {
        self.send_call(&opts, McpCall::unsubscribe_resource(uri))
            .await?;
        Ok(())
    }
}
