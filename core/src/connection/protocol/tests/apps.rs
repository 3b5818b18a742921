//! The rest of the client surface against the demo server, in both eras: extensions declared and
//! read (MCP Apps), a tool's `_meta.ui` and icons kept as sent, an app-only tool marked, a
//! `ui://` resource read like any other, structured output checked against the listed schemas
//! (feature `schemas`), and the URL-mode elicitation's completion notification.

use serde_json::{json, Value};

use crate::connection::protocol::vocabulary::calls::McpCall;
use crate::connection::protocol::{CallOptions, ServerNotification};
use crate::server::{DemoConfig, FORECAST_UI};
use crate::types::{
    ListResourcesResult, ListToolsResult, ReadResourceResult, UI_EXTENSION, UI_MIME_TYPE,
};

use crate::test_support::*;

/// A pair ready in the handshake era, and one ready in the stateless era, both declaring the
/// UI extension.
fn both_eras() -> [Pair; 2] {
    let caps = caps_all().with_ui();
    let legacy = Pair::ready_with(caps.clone(), DemoConfig::default());
    let mut modern = Pair::with_config(
        crate::ClientConfig {
            capabilities: caps,
            ..crate::ClientConfig::default()
        },
        DemoConfig::default(),
    );
    modern.drive();
    assert!(modern.client.is_ready());
    modern.frames.clear();
    [legacy, modern]
}

fn list_tools(p: &mut Pair) -> ListToolsResult {
    let c = p
        .client
        .call(p.now, &McpCall::list_tools(), CallOptions::default())
        .unwrap();
    p.finish(c).unwrap().parse().unwrap()
}

#[test]
fn the_ui_extension_is_declared_in_both_eras_and_the_server_s_is_read() {
    // Handshake era: in `initialize`.
    let mut p = Pair::new(caps_all().with_ui(), DemoConfig::default());
    p.drive();
    let (_, init) = p
        .frames
        .iter()
        .find(|(c, f)| *c && f.contains("initialize"))
        .unwrap();
    let init: Value = serde_json::from_str(init).unwrap();
    let declared = &init["params"]["capabilities"]["extensions"][UI_EXTENSION];
    assert_eq!(declared, &json!({"mimeTypes": [UI_MIME_TYPE]}));
    let server = p.client.server().unwrap();
    assert_eq!(
        server.capabilities.extension(UI_EXTENSION),
        Some(&json!({}))
    );
    // Stateless era: on every request.
    let [_, mut modern] = both_eras();
    list_tools(&mut modern);
    let (_, sent) = modern.frames.iter().find(|(c, _)| *c).unwrap();
    let sent: Value = serde_json::from_str(sent).unwrap();
    let caps = &sent["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert_eq!(
        caps["extensions"][UI_EXTENSION]["mimeTypes"][0],
        UI_MIME_TYPE
    );
    let server = modern.client.server().unwrap();
    assert!(server.capabilities.extension(UI_EXTENSION).is_some());
}

#[test]
fn a_tool_s_ui_meta_and_icons_pass_through_untouched_and_app_only_tools_are_marked() {
    for mut p in both_eras() {
        let list = list_tools(&mut p);
        let forecast = list.tools.iter().find(|t| t.name == "forecast").unwrap();
        assert_eq!(forecast.title.as_deref(), Some("Weather forecast"));
        assert!(forecast
            .icons
            .as_ref()
            .unwrap()
            .get()
            .contains("image/svg+xml"));
        assert_eq!(forecast.ui_resource_uri().as_deref(), Some(FORECAST_UI));
        assert_eq!(
            forecast.ui(),
            Some(json!({"resourceUri": FORECAST_UI, "visibility": ["model", "app"]}))
        );
        assert!(!forecast.is_app_only());
        // The `_meta` text is exactly what the server wrote.
        let sent = p
            .frames
            .iter()
            .rev()
            .find(|(c, f)| !*c && f.contains("forecast-refresh"))
            .unwrap();
        assert!(sent.1.contains(forecast.meta.as_ref().unwrap().get()));
        let refresh = list
            .tools
            .iter()
            .find(|t| t.name == "forecast-refresh")
            .unwrap();
        assert!(refresh.is_app_only());
        let for_model: Vec<&str> = list
            .tools
            .iter()
            .filter(|t| !t.is_app_only())
            .map(|t| t.name.as_str())
            .collect();
        assert!(!for_model.contains(&"forecast-refresh"));
        assert!(for_model.contains(&"forecast"));
    }
}

#[test]
fn a_ui_resource_is_listed_and_read_like_any_other() {
    for mut p in both_eras() {
        let c = p
            .client
            .call(p.now, &McpCall::list_resources(), CallOptions::default())
            .unwrap();
        let list: ListResourcesResult = p.finish(c).unwrap().parse().unwrap();
        let ui = list.resources.iter().find(|r| r.is_ui()).unwrap();
        assert_eq!(ui.uri, FORECAST_UI);
        assert_eq!(ui.title.as_deref(), Some("Forecast App"));
        assert_eq!(
            ui.meta.as_ref().unwrap().get(),
            r#"{"ui":{"prefersBorder":true}}"#
        );
        let c = p
            .client
            .call(
                p.now,
                &McpCall::read_resource(FORECAST_UI),
                CallOptions::default(),
            )
            .unwrap();
        let read: ReadResourceResult = p.finish(c).unwrap().parse().unwrap();
        assert_eq!(read.contents[0]["mimeType"], UI_MIME_TYPE);
        assert!(read.contents[0]["text"]
            .as_str()
            .unwrap()
            .contains("<html>"));
    }
}

#[cfg(feature = "schemas")]
#[test]
fn structured_output_is_checked_against_the_listed_schema_in_both_eras() {
    use crate::connection::protocol::CallError;
    use crate::schema::{SchemaKind, SchemaViolation};
    for mut p in both_eras() {
        list_tools(&mut p);
        let call = |p: &mut Pair, tool: &str, args: Value| {
            let c = p
                .client
                .call(
                    p.now,
                    &McpCall::call_tool(tool, Some(args)),
                    CallOptions::default(),
                )
                .unwrap();
            p.finish(c)
        };
        let good = call(&mut p, "forecast", json!({"city": "Paris"})).unwrap();
        assert!(good.get().contains("structuredContent"));
        let wrong = call(
            &mut p,
            "forecast",
            json!({"city": "Paris", "break": "type"}),
        );
        let Err(CallError::Schema { error, result }) = wrong else {
            panic!("{wrong:?}")
        };
        assert_eq!(
            (error.tool.as_str(), error.kind),
            ("forecast", SchemaKind::Output)
        );
        assert!(
            matches!(error.violation, SchemaViolation::DoesNotMatch(_)),
            "{error}"
        );
        assert!(result.is_some(), "the result is kept");
        let missing = call(
            &mut p,
            "forecast",
            json!({"city": "Paris", "break": "missing"}),
        );
        assert!(
            matches!(&missing, Err(CallError::Schema { error, .. })
                if error.violation == SchemaViolation::MissingStructuredContent),
            "{missing:?}"
        );
        // `add` declares a schema too, and meets it; an isError result passes as it is.
        assert!(call(&mut p, "add", json!({"a": 1, "b": 2})).is_ok());
        assert!(call(&mut p, "fail", json!({})).is_ok());
        // The schemas are the host's to use too.
        let schemas = p.client.tool_schemas().unwrap();
        assert!(schemas
            .check_input("forecast", Some(&json!({"town": "Paris"})))
            .is_err());
    }
}

#[test]
fn a_url_elicitation_s_completion_is_a_typed_notification() {
    let mut p = Pair::ready_with(caps_all().with_elicitation(true), DemoConfig::default());
    p.server.notify(
        p.now,
        "notifications/elicitation/complete",
        Some(json!({"elicitationId": "e-42"})),
    );
    p.server.notify(
        p.now,
        "notifications/elicitation/complete",
        Some(json!({"noId": true})),
    );
    p.drive();
    let n: Vec<_> = p.take_notifications();
    assert_eq!(
        n[0],
        ServerNotification::ElicitationComplete {
            elicitation_id: "e-42".into()
        }
    );
    // One without its id is kept as it came, not dropped.
    assert!(matches!(&n[1], ServerNotification::Other(o)
        if o.method == "notifications/elicitation/complete"));
}

#[test]
fn sampling_with_tools_is_declared_carried_and_answered_byte_for_byte() {
    use crate::connection::protocol::vocabulary::events::Event;
    use crate::connection::protocol::ServerRequest;
    use crate::jsonrpc::{Id, Message, RawJson};
    use crate::types::CreateMessageParams;
    let caps = crate::types::ClientCapabilities::default()
        .with_sampling()
        .with_sampling_tools();
    // The server is played by hand.
    let mut c = Pair::new(caps, DemoConfig::default());
    let now = c.now;
    let init = c.poll_written().unwrap();
    let Message::Request(init) = init else {
        panic!("{init:?}")
    };
    let params: Value = init.params_as().unwrap();
    assert_eq!(params["capabilities"]["sampling"], json!({"tools": {}}));
    let answer = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                        "serverInfo": {"name": "s", "version": "1"}});
    c.feed(&Message::result(init.id, RawJson::new(&answer).unwrap()));
    while c.poll_written().is_some() {}
    c.take_events();
    let asked = r#"{"messages":[{"role":"user","content":{"type":"text","text":"Paris?"}}],"maxTokens":9,"tools":[{"name":"forecast","inputSchema":{"type":"object"},"_meta":{"z":1,"a":2}}],"toolChoice":{"mode":"auto"}}"#;
    let request = Message::request(
        Id::Str("s1".into()),
        "sampling/createMessage",
        Some(RawJson::from_string(asked.into()).unwrap()),
    );
    c.feed(&request);
    let Some(Event::ServerRequest(ServerRequest::Sampling { id, params })) =
        c.take_events().into_iter().next()
    else {
        panic!("no sampling request")
    };
    let typed: CreateMessageParams = serde_json::from_value(params).unwrap();
    assert_eq!(
        typed.tools.unwrap()[0].meta.as_ref().unwrap().get(),
        r#"{"a":2,"z":1}"#
    );
    assert_eq!(typed.tool_choice, Some(json!({"mode": "auto"})));
    let reply = r#"{"role":"assistant","content":[{"type":"tool_use","id":"u1","name":"forecast","input":{"city":"Paris"}}],"model":"m","stopReason":"toolUse"}"#;
    c.client
        .respond(now, &id, Ok(RawJson::from_string(reply.into()).unwrap()))
        .unwrap();
    // The line as written to the server's stdin.
    let sent = c.poll_written_line().unwrap();
    assert!(sent.contains(reply), "{sent}");
    assert!(sent.contains(r#""id":"s1""#), "{sent}");
}

#[test]
fn sampling_with_tools_not_declared_is_refused_before_the_application_sees_it() {
    use crate::connection::protocol::vocabulary::events::{Diagnostic, Event};
    use crate::jsonrpc::{Id, Message, RawJson};
    // Sampling declared, its tools not.
    let caps = crate::types::ClientCapabilities::default().with_sampling();
    let mut c = Pair::new(caps, DemoConfig::default());
    let Some(Message::Request(init)) = c.poll_written() else {
        panic!("no initialize")
    };
    let answer = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                        "serverInfo": {"name": "s", "version": "1"}});
    c.feed(&Message::result(init.id, RawJson::new(&answer).unwrap()));
    while c.poll_written().is_some() {}
    c.take_events();
    let asked = r#"{"messages":[],"maxTokens":9,"tools":[{"name":"forecast","inputSchema":{"type":"object"}}]}"#;
    c.feed(&Message::request(
        Id::Str("s1".into()),
        "sampling/createMessage",
        Some(RawJson::from_string(asked.into()).unwrap()),
    ));
    let events = c.take_events();
    assert!(
        matches!(&events[..], [Event::Diagnostic(Diagnostic::RefusedServerRequest { error, .. })]
            if error.code == -32602),
        "{events:?}"
    );
    let Some(Message::Response(refusal)) = c.poll_written() else {
        panic!("no answer")
    };
    assert_eq!(refusal.id, Some(Id::Str("s1".into())));
    let error = refusal.outcome.unwrap_err();
    assert_eq!(error.message, "sampling with tools was not declared");
}
