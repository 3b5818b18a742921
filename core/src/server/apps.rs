//! The demo server's structured output and MCP App: `forecast`, a tool with an `outputSchema`
//! (which breaks it on request: `"break": "type"` sends a `structuredContent` of the wrong
//! shape, `"break": "missing"` none at all) whose results a UI renders, the UI itself as the
//! `ui://demo/forecast.html` resource (`text/html;profile=mcp-app`), and `forecast-refresh`, a
//! tool only that UI may call (visibility `["app"]`). The same in both eras.

use serde_json::{json, Value};

use crate::jsonrpc::{codes, ErrorObject};
use crate::types::{UI_EXTENSION, UI_MIME_TYPE};

/// The URI of the demo App's UI.
pub const FORECAST_UI: &str = "ui://demo/forecast.html";

const HTML: &str = "<!doctype html><html><body><h1>Forecast</h1><p id=\"out\"></p></body></html>";

/// The extension as the demo server declares it.
pub(super) fn extension() -> (&'static str, Value) {
    (UI_EXTENSION, json!({}))
}

/// The tools of this file.
pub(super) fn tools() -> Vec<Value> {
    vec![
        json!({"name": "forecast", "title": "Weather forecast",
         "description": "Tomorrow's weather for a city, as structured output (shown by the forecast App). `break` sends output that breaks the schema: \"type\" or \"missing\".",
         "icons": [{"src": "data:image/svg+xml;base64,PHN2Zy8+", "mimeType": "image/svg+xml", "sizes": ["any"]}],
         "inputSchema": {"type": "object", "properties": {
             "city": {"type": "string"},
             "break": {"type": "string", "enum": ["type", "missing"]}},
             "required": ["city"], "additionalProperties": false},
         "outputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema",
             "type": "object", "properties": {
                 "city": {"type": "string"},
                 "temperature": {"type": "number"},
                 "conditions": {"type": "string", "enum": ["sunny", "cloudy", "rain"]}},
             "required": ["city", "temperature", "conditions"]},
         "_meta": {"ui": {"resourceUri": FORECAST_UI, "visibility": ["model", "app"]}}}),
        json!({"name": "forecast-refresh",
         "description": "Refreshes the forecast App (for the App's UI only).",
         "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
         "_meta": {"ui": {"resourceUri": FORECAST_UI, "visibility": ["app"]}}}),
    ]
}

/// A call of one of this file's tools; `None` for any other tool.
pub(super) fn call_tool(name: &str, args: &Value) -> Option<Result<Value, ErrorObject>> {
    let city = args.get("city").and_then(Value::as_str);
    Some(match (name, city) {
        ("forecast", Some(city)) => {
            // A fixed forecast, decided by the name: the same city, the same answer.
            let temperature = 10 + (city.len() % 15) as i64;
            let conditions = ["sunny", "cloudy", "rain"][city.len() % 3];
            let text = format!("{city}: {temperature} °C, {conditions}");
            let structured = match args.get("break").and_then(Value::as_str) {
                Some("type") => Some(json!({"city": city, "temperature": "warm",
                                            "conditions": conditions})),
                Some("missing") => None,
                _ => Some(json!({"city": city, "temperature": temperature,
                                 "conditions": conditions})),
            };
            let mut result = json!({"content": [{"type": "text", "text": text}]});
            if let Some(structured) = structured {
                result["structuredContent"] = structured;
            }
            Ok(result)
        }
        ("forecast-refresh", _) => Ok(json!({"content": [{"type": "text", "text": "refreshed"}]})),
        ("forecast", None) => Err(ErrorObject::new(
            codes::INVALID_PARAMS,
            "forecast needs a string city",
        )),
        _ => return None,
    })
}

/// The resources of this file, for `resources/list`.
pub(super) fn resources() -> Vec<Value> {
    vec![
        json!({"uri": FORECAST_UI, "name": "forecast-ui", "title": "Forecast App",
                "description": "The forecast tool's UI.", "mimeType": UI_MIME_TYPE,
                "_meta": {"ui": {"prefersBorder": true}}}),
    ]
}

/// `resources/read` of one of this file's resources, if `uri` is one.
pub(super) fn read(uri: &str) -> Option<Value> {
    (uri == FORECAST_UI).then(|| {
        json!({"contents": [{"uri": FORECAST_UI, "mimeType": UI_MIME_TYPE, "text": HTML,
                             "_meta": {"ui": {"prefersBorder": true}}}]})
    })
}
