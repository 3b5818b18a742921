//! The typed MCP calls a client makes: which method, which params, which server capability
//! each needs, and which are lists read over all their pages; and the id a call is known by.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::connection::protocol::call::params::{tool_call_map, ParamsRef};
use crate::types::ServerCapabilities;

/// One application call: a request, or for list methods every page of it. Its value is the id of
/// the call's first request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(pub i64);

/// One MCP call as made: its method, its params (without `_meta`), the server capability it
/// needs, and for a list the key its items are under. Send it with
/// [`Connection::call`](crate::Connection::call); it is also what a call that may have run is
/// sent again from.
#[derive(Debug, Clone, PartialEq)]
pub struct McpCall {
    capability: Option<&'static str>,
    method: Cow<'static, str>,
    params: Option<CallParams>,
    list_key: Option<&'static str>,
    /// The member of the capability that must be `true` (`subscribe` of `resources`), and why
    /// the call is refused without it.
    member: Option<(&'static str, &'static str)>,
    /// A call with rules of its own ([`McpCall::ping`], [`McpCall::listen`]).
    rules: Rules,
}

/// The rules a call is sent under beyond its method: most calls have none of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rules {
    /// Sent as made.
    Plain,
    /// `ping`: refused in the stateless era, allowed before the handshake completes.
    Ping,
    /// `subscriptions/listen`: stateless era only, with no deadline.
    Listen,
}

/// A call's params as built.
#[derive(Debug, Clone, PartialEq)]
enum CallParams {
    Map(Map<String, Value>),
    /// `tools/call`'s, apart (see [`ParamsRef::Tool`]).
    Tool {
        name: String,
        arguments: Option<Value>,
    },
}

impl CallParams {
    fn as_ref(&self) -> ParamsRef<'_> {
        match self {
            CallParams::Map(m) => ParamsRef::Map(m),
            CallParams::Tool { name, arguments } => ParamsRef::Tool {
                name,
                arguments: arguments.as_ref(),
            },
        }
    }

    fn into_map(self) -> Map<String, Value> {
        match self {
            CallParams::Map(m) => m,
            CallParams::Tool { name, arguments } => tool_call_map(&name, arguments),
        }
    }
}

impl McpCall {
    fn listing(capability: &'static str, method: &'static str, key: &'static str) -> Self {
        McpCall {
            capability: Some(capability),
            method: Cow::Borrowed(method),
            params: None,
            list_key: Some(key),
            member: None,
            rules: Rules::Plain,
        }
    }

    fn typed(capability: &'static str, method: &'static str, params: Map<String, Value>) -> Self {
        Self::with_params(capability, method, CallParams::Map(params))
    }

    fn with_params(capability: &'static str, method: &'static str, params: CallParams) -> Self {
        McpCall {
            capability: Some(capability),
            method: Cow::Borrowed(method),
            params: Some(params),
            list_key: None,
            member: None,
            rules: Rules::Plain,
        }
    }

    /// Any request: `method` with `params` (without `_meta`), no capability checked.
    pub fn request(
        method: impl Into<Cow<'static, str>>,
        params: Option<Map<String, Value>>,
    ) -> Self {
        McpCall {
            capability: None,
            method: method.into(),
            params: params.map(CallParams::Map),
            list_key: None,
            member: None,
            rules: Rules::Plain,
        }
    }

    /// `ping`: allowed before the handshake completes; refused in the stateless era, which
    /// removed it. (A `ping` made with [`request`](Self::request) is sent as it is, in any era.)
    pub fn ping() -> Self {
        McpCall {
            rules: Rules::Ping,
            ..Self::request("ping", None)
        }
    }

    /// `subscriptions/listen` (stateless era): asks for the notifications named in
    /// `notifications` (e.g. `{"toolsListChanged": true}`). The call stays open, with no
    /// deadline whatever its options say: its notifications arrive as
    /// [`ServerNotification::ForSubscription`](crate::ServerNotification) after an
    /// acknowledgement; [`Connection::cancel`](crate::Connection::cancel) ends it.
    pub fn listen(notifications: Value) -> Self {
        let mut p = Map::new();
        p.insert("notifications".into(), notifications);
        McpCall {
            rules: Rules::Listen,
            ..Self::request("subscriptions/listen", Some(p))
        }
    }

    /// The method.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The params, without `_meta` (for a tool call, made into a map now).
    pub fn params(&self) -> Option<Cow<'_, Map<String, Value>>> {
        Some(match self.params.as_ref()? {
            CallParams::Map(m) => Cow::Borrowed(m),
            tool => Cow::Owned(tool.as_ref().to_map()),
        })
    }

    /// The `name` param of the call when it is a string: the tool of a `tools/call`, the
    /// prompt of a `prompts/get` (what a trace names the call after), read without a copy.
    pub fn name(&self) -> Option<&str> {
        match self.params.as_ref()? {
            CallParams::Map(m) => m.get("name")?.as_str(),
            CallParams::Tool { name, .. } => Some(name),
        }
    }

    /// The method and the params, taken apart.
    pub fn into_parts(self) -> (Cow<'static, str>, Option<Map<String, Value>>) {
        (self.method, self.params.map(CallParams::into_map))
    }

    /// The params as the protocol sends them.
    pub(crate) fn params_ref(&self) -> Option<ParamsRef<'_>> {
        self.params.as_ref().map(CallParams::as_ref)
    }

    /// The server capability the call needs, if any.
    pub(crate) fn capability(&self) -> Option<&'static str> {
        self.capability
    }

    /// The rules the call is sent under beyond its method.
    pub(crate) fn rules(&self) -> Rules {
        self.rules
    }

    /// The member of the capability that must be `true`, and the refusal without it.
    pub(crate) fn member(&self) -> Option<(&'static str, &'static str)> {
        self.member
    }

    /// For a list read over all its pages: its method and the key its items are under.
    pub(crate) fn list(&self) -> Option<(&'static str, &'static str)> {
        match (&self.method, self.list_key) {
            (Cow::Borrowed(method), Some(key)) => Some((method, key)),
            _ => None,
        }
    }

    /// The method, as the protocol sends it.
    pub(crate) fn method_cow(&self) -> &Cow<'static, str> {
        &self.method
    }

    /// `tools/list` over all pages; the call's result is `{"tools": [...]}` (with the smallest
    /// `ttlMs` and the `cacheScope` of the pages when the server gave them).
    pub fn list_tools() -> Self {
        Self::listing("tools", "tools/list", "tools")
    }

    /// `prompts/list` over all pages; the result is `{"prompts": [...]}`.
    pub fn list_prompts() -> Self {
        Self::listing("prompts", "prompts/list", "prompts")
    }

    /// `resources/list` over all pages; the result is `{"resources": [...]}`.
    pub fn list_resources() -> Self {
        Self::listing("resources", "resources/list", "resources")
    }

    /// `resources/templates/list` over all pages; the result is `{"resourceTemplates": [...]}`.
    pub fn list_resource_templates() -> Self {
        Self::listing("resources", "resources/templates/list", "resourceTemplates")
    }

    /// `skills/list` over all pages (the `io.modelcontextprotocol/skills` extension); the
    /// result is `{"skills": [...]}`. It reads no skill file.
    pub fn list_skills() -> Self {
        Self::listing(crate::skills::SKILLS_EXTENSION, "skills/list", "skills")
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is `uri`. It reads no skill file.
    pub fn get_skill(uri: &str) -> Self {
        let mut p = Map::new();
        p.insert("uri".into(), Value::from(uri));
        Self::typed(crate::skills::SKILLS_EXTENSION, "skills/get", p)
    }

    /// `tools/call`. An `isError` result is a result.
    pub fn call_tool(name: &str, arguments: Option<Value>) -> Self {
        let params = CallParams::Tool {
            name: name.to_owned(),
            arguments,
        };
        Self::with_params("tools", "tools/call", params)
    }

    /// `prompts/get`.
    pub fn get_prompt(name: &str, arguments: Option<Map<String, Value>>) -> Self {
        let mut p = Map::new();
        p.insert("name".into(), Value::from(name));
        if let Some(args) = arguments {
            p.insert("arguments".into(), Value::Object(args));
        }
        Self::typed("prompts", "prompts/get", p)
    }

    /// `resources/read`.
    pub fn read_resource(uri: &str) -> Self {
        let mut p = Map::new();
        p.insert("uri".into(), Value::from(uri));
        Self::typed("resources", "resources/read", p)
    }

    /// `completion/complete`: suggestions for the argument `name` whose value so far is
    /// `value`, of the prompt or resource template `reference` (`{"type": "ref/prompt", "name":
    /// …}` or `{"type": "ref/resource", "uri": …}`); `context` holds arguments already chosen.
    pub fn complete(
        reference: Value,
        name: &str,
        value: &str,
        context: Option<Map<String, Value>>,
    ) -> Self {
        let mut p = Map::new();
        p.insert("ref".into(), reference);
        p.insert(
            "argument".into(),
            serde_json::json!({"name": name, "value": value}),
        );
        if let Some(arguments) = context {
            p.insert(
                "context".into(),
                serde_json::json!({ "arguments": arguments }),
            );
        }
        Self::typed("completions", "completion/complete", p)
    }

    /// Log messages at `level` and above: `logging/setLevel` in the handshake era; in the
    /// stateless era (which removed it) nothing is sent, and every request from then on asks
    /// for them with `io.modelcontextprotocol/logLevel` in its `_meta`.
    pub fn set_log_level(level: &str) -> Self {
        let mut p = Map::new();
        p.insert("level".into(), Value::from(level));
        Self::typed("logging", "logging/setLevel", p)
    }

    /// `notifications/resources/updated` for `uri`: `resources/subscribe` in the handshake
    /// era; in the stateless era, which removed it, a `subscriptions/listen` asking for
    /// `resourceSubscriptions: [uri]` (the call ends when the server acknowledges it).
    pub fn subscribe_resource(uri: &str) -> Self {
        let mut p = Map::new();
        p.insert("uri".into(), Value::from(uri));
        let mut call = Self::typed("resources", "resources/subscribe", p);
        call.member = Some((
            "subscribe",
            "resources/subscribe (its resources capability has no subscribe: true)",
        ));
        call
    }

    /// The end of [`subscribe_resource`](Self::subscribe_resource)'s notifications:
    /// `resources/unsubscribe` in the handshake era; in the stateless era the resource's
    /// `subscriptions/listen` ends.
    pub fn unsubscribe_resource(uri: &str) -> Self {
        let mut p = Map::new();
        p.insert("uri".into(), Value::from(uri));
        Self::typed("resources", "resources/unsubscribe", p)
    }
}

/// Whether the server's `capability` has `member: true` (`resources.subscribe`).
pub(crate) fn offered_member(caps: &ServerCapabilities, capability: &str, member: &str) -> bool {
    let object = match capability {
        "tools" => caps.tools.as_ref(),
        "prompts" => caps.prompts.as_ref(),
        "resources" => caps.resources.as_ref(),
        other => caps.extra.get(other),
    };
    object.and_then(|o| o.get(member)) == Some(&Value::Bool(true))
}

/// Whether the server's capabilities offer `capability`: a key of its capabilities object, or an
/// extension's identifier (`io.modelcontextprotocol/skills`), declared under `extensions`.
pub(crate) fn offered(caps: &ServerCapabilities, capability: &str) -> bool {
    match capability {
        extension if extension.contains('/') => caps
            .extra
            .get("extensions")
            .and_then(|e| e.get(extension))
            .is_some_and(Value::is_object),
        "tools" => caps.tools.is_some(),
        "prompts" => caps.prompts.is_some(),
        "resources" => caps.resources.is_some(),
        "logging" => caps.logging.is_some(),
        "completions" => caps.completions.is_some(),
        other => caps.extra.contains_key(other),
    }
}
