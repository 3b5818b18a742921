//! The typed MCP calls a client makes: which method, which params, which server capability
//! each needs, and which are lists read over all their pages.

use serde_json::{Map, Value};

use super::types::ServerCapabilities;

/// One typed call, ready for [`ClientProtocol::call`](super::ClientProtocol::call).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct McpCall {
    /// The server capability the call needs.
    pub(crate) capability: &'static str,
    pub(crate) method: &'static str,
    pub(crate) params: Option<Map<String, Value>>,
    /// For a list: the key its items are under.
    pub(crate) list_key: Option<&'static str>,
}

impl McpCall {
    fn list(capability: &'static str, method: &'static str, key: &'static str) -> Self {
        McpCall {
            capability,
            method,
            params: None,
            list_key: Some(key),
        }
    }

    fn request(capability: &'static str, method: &'static str, params: Map<String, Value>) -> Self {
        McpCall {
            capability,
            method,
            params: Some(params),
            list_key: None,
        }
    }

    /// `tools/list` over all pages; the call's result is `{"tools": [...]}` (with the smallest
    /// `ttlMs` and the `cacheScope` of the pages when the server gave them).
    pub(crate) fn list_tools() -> Self {
        Self::list("tools", "tools/list", "tools")
    }

    /// `prompts/list` over all pages; the result is `{"prompts": [...]}`.
    pub(crate) fn list_prompts() -> Self {
        Self::list("prompts", "prompts/list", "prompts")
    }

    /// `resources/list` over all pages; the result is `{"resources": [...]}`.
    pub(crate) fn list_resources() -> Self {
        Self::list("resources", "resources/list", "resources")
    }

    /// `resources/templates/list` over all pages; the result is `{"resourceTemplates": [...]}`.
    pub(crate) fn list_resource_templates() -> Self {
        Self::list("resources", "resources/templates/list", "resourceTemplates")
    }

    /// `tools/call`. An `isError` result is a result.
    pub(crate) fn call_tool(name: &str, arguments: Option<Value>) -> Self {
        let mut p = Map::new();
        p.insert("name".into(), Value::from(name));
        if let Some(args) = arguments {
            p.insert("arguments".into(), args);
        }
        Self::request("tools", "tools/call", p)
    }

    /// `prompts/get`.
    pub(crate) fn get_prompt(name: &str, arguments: Option<Map<String, Value>>) -> Self {
        let mut p = Map::new();
        p.insert("name".into(), Value::from(name));
        if let Some(args) = arguments {
            p.insert("arguments".into(), Value::Object(args));
        }
        Self::request("prompts", "prompts/get", p)
    }

    /// `resources/read`.
    pub(crate) fn read_resource(uri: &str) -> Self {
        let mut p = Map::new();
        p.insert("uri".into(), Value::from(uri));
        Self::request("resources", "resources/read", p)
    }
}

/// Whether the server's capabilities offer `capability` (a key of its capabilities object).
pub(crate) fn offered(caps: &ServerCapabilities, capability: &str) -> bool {
    match capability {
        "tools" => caps.tools.is_some(),
        "prompts" => caps.prompts.is_some(),
        "resources" => caps.resources.is_some(),
        "logging" => caps.logging.is_some(),
        "completions" => caps.completions.is_some(),
        other => caps.extra.contains_key(other),
    }
}
