//! The rest of the client's surface as typed views: extensions in capabilities (both eras), MCP
//! Apps (`io.modelcontextprotocol/ui`), the declaration of sampling with tools, and the URL-mode
//! elicitation's `-32042` error.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::initialize::{ClientCapabilities, ServerCapabilities};
use super::resources::Resource;
use super::tools::Tool;
use crate::jsonrpc::ErrorObject;

/// The MCP Apps extension's identifier, as declared under `capabilities.extensions`.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an MCP App's HTML (`ui://` resources).
pub const UI_MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The error code of a call that needs a URL-mode elicitation first (2025-11-25).
pub const URL_ELICITATION_REQUIRED: i64 = -32042;

fn extensions_of(extra: &Map<String, Value>) -> Option<&Map<String, Value>> {
    extra.get("extensions").and_then(Value::as_object)
}

impl ClientCapabilities {
    /// Declares an extension the host supports, with its settings (`{}` for none), under
    /// `extensions`: sent in `initialize` (handshake era) and on every request (stateless era).
    pub fn with_extension(mut self, id: &str, settings: Value) -> Self {
        let extensions = self
            .extra
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()));
        if !extensions.is_object() {
            *extensions = Value::Object(Map::new());
        }
        if let Value::Object(map) = extensions {
            map.insert(id.to_owned(), settings);
        }
        self
    }

    /// Declares MCP Apps: the host renders `text/html;profile=mcp-app` UI resources.
    pub fn with_ui(self) -> Self {
        self.with_extension(
            UI_EXTENSION,
            serde_json::json!({"mimeTypes": [UI_MIME_TYPE]}),
        )
    }

    /// Declares sampling with tools (`sampling.tools`): the host's model may be given tools
    /// (`tools`, `toolChoice`) and answer with `tool_use` content.
    pub fn with_sampling_tools(mut self) -> Self {
        let mut sampling = match self.sampling.take() {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        sampling.insert("tools".into(), Value::Object(Map::new()));
        self.sampling = Some(Value::Object(sampling));
        self
    }

    /// The extensions declared, by identifier.
    pub fn extensions(&self) -> Option<&Map<String, Value>> {
        extensions_of(&self.extra)
    }

    /// Declares tasks (2025-11-25, handshake era) for the server's requests already declared:
    /// `elicitation/create` when elicitation is, `sampling/createMessage` when sampling is, with
    /// `tasks/list` and `tasks/cancel`. The connection then runs a request that asks for a task
    /// as one: it answers at once with the task, and the application's answer becomes the
    /// task's result. Call it after the other builders; without elicitation or sampling it
    /// declares nothing.
    pub fn with_tasks(mut self) -> Self {
        let mut requests = Map::new();
        if self.elicitation.is_some() {
            requests.insert("elicitation".into(), serde_json::json!({"create": {}}));
        }
        if self.sampling.is_some() {
            requests.insert("sampling".into(), serde_json::json!({"createMessage": {}}));
        }
        if requests.is_empty() {
            self.extra.remove("tasks");
            return self;
        }
        let tasks = serde_json::json!({"list": {}, "cancel": {}, "requests": requests});
        self.extra.insert("tasks".into(), tasks);
        self
    }

    /// Whether sampling with tools is declared.
    pub fn sampling_tools(&self) -> bool {
        self.sampling
            .as_ref()
            .is_some_and(|s| s.get("tools").is_some())
    }
}

impl ServerCapabilities {
    /// The extensions the server declares, by identifier (`capabilities.extensions`).
    pub fn extensions(&self) -> Option<&Map<String, Value>> {
        extensions_of(&self.extra)
    }

    /// The settings of one extension the server declares.
    pub fn extension(&self, id: &str) -> Option<&Value> {
        self.extensions().and_then(|e| e.get(id))
    }
}

/// Who may call a tool of an MCP App (`_meta.ui.visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UiVisibility {
    /// The model (the agent) may call it.
    pub model: bool,
    /// The App's UI may call it.
    pub app: bool,
}

impl Tool {
    /// `_meta` as a JSON value, when the tool has one.
    pub fn meta_value(&self) -> Option<Map<String, Value>> {
        self.meta.as_ref().and_then(|m| m.parse().ok())
    }

    /// The MCP App settings of this tool (`_meta.ui`), untouched.
    pub fn ui(&self) -> Option<Value> {
        self.meta_value()?.remove("ui")
    }

    /// The `ui://` resource that renders this tool's results: `_meta.ui.resourceUri`, or the
    /// older flat `_meta["ui/resourceUri"]`.
    pub fn ui_resource_uri(&self) -> Option<String> {
        let meta = self.meta_value()?;
        let nested = meta.get("ui").and_then(|u| u.get("resourceUri"));
        nested
            .or_else(|| meta.get("ui/resourceUri"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// Who may call the tool: `_meta.ui.visibility` (`"model"`, `"app"`); both when absent.
    pub fn ui_visibility(&self) -> UiVisibility {
        let listed = self
            .ui()
            .and_then(|u| u.get("visibility").and_then(Value::as_array).cloned());
        match listed {
            Some(list) => {
                let has = |w: &str| list.iter().any(|v| v.as_str() == Some(w));
                UiVisibility {
                    model: has("model"),
                    app: has("app"),
                }
            }
            None => UiVisibility {
                model: true,
                app: true,
            },
        }
    }

    /// Whether the tool is for its App's UI only: a host keeps it from the model.
    pub fn is_app_only(&self) -> bool {
        !self.ui_visibility().model
    }
}

impl Resource {
    /// Whether this is an MCP App's UI: a `ui://` URI or the App MIME type.
    pub fn is_ui(&self) -> bool {
        self.uri.starts_with("ui://") || self.mime_type.as_deref() == Some(UI_MIME_TYPE)
    }
}

/// The URL-mode elicitations a `-32042` error asks for (`data.elicitations`, 2025-11-25): each
/// with `mode: "url"`, `elicitationId`, `url` and `message`. `None` for any other error.
pub fn url_elicitations_required(error: &ErrorObject) -> Option<Vec<Value>> {
    if error.code != URL_ELICITATION_REQUIRED {
        return None;
    }
    #[derive(Deserialize)]
    struct Data {
        #[serde(default)]
        elicitations: Vec<Value>,
    }
    let data: Data = error.data_as().and_then(Result::ok).unwrap_or(Data {
        elicitations: Vec::new(),
    });
    Some(data.elicitations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn extensions_are_declared_and_read_in_capabilities() {
        let caps = ClientCapabilities::default()
            .with_ui()
            .with_extension("com.example/x", json!({"on": true}));
        let sent = serde_json::to_value(&caps).unwrap();
        assert_eq!(
            sent["extensions"],
            json!({UI_EXTENSION: {"mimeTypes": [UI_MIME_TYPE]}, "com.example/x": {"on": true}})
        );
        assert!(caps.extensions().unwrap().contains_key(UI_EXTENSION));
        let server: ServerCapabilities =
            serde_json::from_value(json!({"tools": {}, "extensions": {UI_EXTENSION: {}}})).unwrap();
        assert_eq!(server.extension(UI_EXTENSION), Some(&json!({})));
        assert_eq!(server.extension("other"), None);
    }

    #[test]
    fn tasks_are_declared_for_the_requests_declared_only() {
        let caps = ClientCapabilities::default()
            .with_elicitation(false)
            .with_tasks();
        assert_eq!(
            serde_json::to_value(&caps).unwrap()["tasks"],
            json!({"list": {}, "cancel": {}, "requests": {"elicitation": {"create": {}}}})
        );
        let both = caps.with_sampling().with_tasks();
        assert_eq!(
            serde_json::to_value(&both).unwrap()["tasks"]["requests"],
            json!({"elicitation": {"create": {}}, "sampling": {"createMessage": {}}})
        );
        let roots_only = ClientCapabilities::default().with_roots().with_tasks();
        assert!(!serde_json::to_value(&roots_only)
            .unwrap()
            .as_object()
            .unwrap()
            .contains_key("tasks"));
    }

    #[test]
    fn sampling_tools_keeps_what_sampling_had() {
        let caps = ClientCapabilities {
            sampling: Some(json!({"context": {}})),
            ..ClientCapabilities::default()
        }
        .with_sampling_tools();
        assert_eq!(caps.sampling, Some(json!({"context": {}, "tools": {}})));
        assert!(caps.sampling_tools());
        assert!(!ClientCapabilities::default()
            .with_sampling()
            .sampling_tools());
    }

    #[test]
    fn a_tool_s_ui_meta_is_kept_byte_for_byte_and_read() {
        let meta = r#"{"ui":{"resourceUri":"ui://demo/app.html","visibility":["app"],"csp":{"connectDomains":[]}},"z":1,"a":2}"#;
        let text = format!(
            r#"{{"name":"t","title":"T","inputSchema":{{}},"icons":[{{"src":"data:x","sizes":["16x16"]}}],"_meta":{meta}}}"#
        );
        let tool: Tool = serde_json::from_str(&text).unwrap();
        assert_eq!(tool.meta.as_ref().unwrap().get(), meta);
        assert_eq!(tool.title.as_deref(), Some("T"));
        assert!(tool.icons.is_some());
        assert_eq!(
            tool.ui_resource_uri().as_deref(),
            Some("ui://demo/app.html")
        );
        assert!(tool.is_app_only());
        let again = serde_json::to_string(&tool).unwrap();
        assert!(again.contains(meta), "{again}");
        // No `_meta.ui`: callable by both; the older flat key is read too.
        let plain: Tool = serde_json::from_value(json!({"name": "p", "inputSchema": {},
            "_meta": {"ui/resourceUri": "ui://old"}}))
        .unwrap();
        assert!(!plain.is_app_only());
        assert_eq!(plain.ui_resource_uri().as_deref(), Some("ui://old"));
    }

    #[test]
    fn prompts_and_resources_keep_titles_icons_and_meta() {
        let p: super::super::Prompt = serde_json::from_value(json!({"name": "p", "title": "P",
            "icons": [{"src": "https://x/i.png"}], "_meta": {"k": 1}}))
        .unwrap();
        assert_eq!(p.title.as_deref(), Some("P"));
        assert_eq!(p.meta.unwrap().get(), r#"{"k":1}"#);
        let r: Resource = serde_json::from_value(json!({"uri": "ui://demo/app.html",
            "name": "app", "title": "App", "description": "d", "mimeType": UI_MIME_TYPE,
            "icons": [], "_meta": {"ui": {"prefersBorder": true}}, "size": 3}))
        .unwrap();
        assert!(r.is_ui());
        assert_eq!(r.description.as_deref(), Some("d"));
        assert_eq!(r.extra["size"], 3);
    }

    #[test]
    fn log_and_progress_notifications_keep_their_meta() {
        let log: super::super::LoggingMessageParams = serde_json::from_value(
            json!({"level": "info", "data": "x", "_meta": {"trace": "t-1"}}),
        )
        .unwrap();
        assert_eq!(log.meta, Some(json!({"trace": "t-1"})));
        let progress: super::super::ProgressParams = serde_json::from_value(
            json!({"progressToken": 1, "progress": 0.5, "_meta": {"k": true}}),
        )
        .unwrap();
        assert_eq!(progress.meta, Some(json!({"k": true})));
        let again = serde_json::to_value(&progress).unwrap();
        assert_eq!(again["_meta"], json!({"k": true}));
    }

    #[test]
    fn url_elicitation_required_is_read_from_the_error() {
        let e = ErrorObject {
            code: URL_ELICITATION_REQUIRED,
            message: "needs a sign-in".into(),
            data: Some(
                crate::jsonrpc::RawJson::new(&json!({"elicitations": [{"mode": "url",
                "elicitationId": "e1", "url": "https://example.com/go", "message": "Sign in"}]}))
                .unwrap(),
            ),
        };
        let list = url_elicitations_required(&e).unwrap();
        assert_eq!(list[0]["elicitationId"], "e1");
        let other = ErrorObject::new(-32602, "no");
        assert_eq!(url_elicitations_required(&other), None);
    }
}
