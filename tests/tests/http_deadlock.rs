//! The elicitation deadlock, end to end: a tool asks the user a question in the middle of a
//! `tools/call`, on that call's own SSE stream, and the server offers no standalone GET stream.
//! The client must dispatch the question while it waits for the result, answer it with a new
//! POST, and only then does the result come, on the first stream. A client that reads only the
//! standalone stream, or that waits for one stream before reading another, hangs here until the
//! deadline.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::{CallOptions, ConnectOptions, ElicitAction, ElicitResult, Handlers, ServerConfig};
use mcpwire_tests::fault_http::{FaultServer, Matcher, Rule};
use mcpwire_tests::scenario::{Runtime, HANDSHAKE_INIT};
use serde_json::json;

const SESSION: &str = "sess-elicit";
const ELICIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"mode":"form","message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}"#;
/// How long the server waits for the answer; the call's own deadline is the same.
const GENEROUS: Duration = Duration::from_secs(30);

#[test]
fn an_elicitation_on_the_call_stream_without_a_get_stream_is_answered_and_the_call_completes() {
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{{/params/_meta/progressToken}},"progress":1,"total":2,"message":"asking"}}"#;
    let result =
        r#"{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"thanks"}]}}"#;
    let server = FaultServer::start(vec![
        Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", SESSION)], HANDSHAKE_INIT),
        Rule::notifications().status(202),
        Rule::responses().status(202),
        // No standalone stream.
        Rule::get().status(405),
        Rule::delete().status(200),
        Rule::post("tools/call")
            .tool("ask")
            .head_chunked(200, &[("Content-Type", "text/event-stream")])
            .body(format!("event: message\ndata: {progress}\n\n"))
            .body(format!("event: message\ndata: {ELICIT}\n\n"))
            .wait_for(Matcher::response_to(json!(0)), GENEROUS)
            .body(format!("event: message\ndata: {result}\n\n")),
    ]);

    let handler_ran: Arc<Mutex<Vec<(Instant, String)>>> = Arc::default();
    let seen = handler_ran.clone();
    let handlers = Handlers::new().on_elicitation(move |req| {
        seen.lock()
            .unwrap()
            .push((Instant::now(), req.message().to_owned()));
        async move {
            Ok(ElicitResult {
                meta: None,
                action: ElicitAction::Accept,
                content: Some(serde_json::from_value(json!({"name": "Ada"})).unwrap()),
            })
        }
    });

    let rt = Runtime::from_env();
    let (start, returned, outcome) = rt.block_on(future::or(
        async {
            // A server of the handshake era: the elicitation comes as a server request.
            let options = ConnectOptions {
                era: mcpwire::Era::Handshake,
                ..ConnectOptions::default()
            }
            .handlers(handlers);
            let client = rt
                .connect(&ServerConfig::http(server.url()), options)
                .await
                .unwrap();
            let start = Instant::now();
            let outcome = client
                .call_tool_with(
                    "ask",
                    json!({}),
                    CallOptions::default().timeout(GENEROUS).on_progress(|_| {}),
                )
                .await;
            let returned = Instant::now();
            client.close().await;
            (start, returned, outcome)
        },
        async {
            rt.sleep(GENEROUS + Duration::from_secs(15)).await;
            panic!("deadlock: nothing ended within {GENEROUS:?}")
        },
    ));
    let elapsed = returned - start;
    eprintln!("elicitation round trip on the call's own stream, no GET stream: {elapsed:?}");

    let result = outcome.unwrap_or_else(|e| {
        panic!(
            "the call failed: {e}; server log {:?}; notes {:?}",
            server.log(),
            server.notes()
        )
    });
    assert_eq!(result.text(), "thanks");
    assert!(
        server.notes().iter().all(|n| !n.contains("never came")),
        "{:?}",
        server.notes()
    );

    // The handler ran once, with the server's question.
    let ran = handler_ran.lock().unwrap().clone();
    assert_eq!(ran.len(), 1, "{ran:?}");
    assert_eq!(ran[0].1, "What is your name?");

    // The answer went back as its own POST, on another connection, while the call's stream
    // was still open, carrying the session.
    let reqs = server.requests();
    let call = reqs
        .iter()
        .find(|r| r.rpc_method().as_deref() == Some("tools/call"))
        .unwrap();
    let answer = server
        .matching(&Matcher::response_to(json!(0)))
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no answer POSTed: {:?}", server.log()));
    let body = answer.json().unwrap();
    assert_eq!(body["result"]["action"], "accept", "{body}");
    assert_eq!(body["result"]["content"]["name"], "Ada", "{body}");
    assert_eq!(answer.header("mcp-session-id"), Some(SESSION));
    assert_eq!(answer.header("mcp-protocol-version"), Some("2025-11-25"));
    assert_ne!(answer.connection, call.connection, "{:?}", server.log());
    assert_eq!(
        server.matching(&Matcher::responses()).len(),
        1,
        "answered once: {:?}",
        server.log()
    );

    // The order: the call, the handler, the answer on the wire, then the result.
    assert!(
        call.at <= ran[0].0,
        "the handler ran before the call was sent"
    );
    assert!(
        ran[0].0 <= answer.at,
        "the answer was sent before the handler ran"
    );
    assert!(
        answer.at <= returned,
        "the result came before the answer was sent"
    );
    assert!(elapsed < GENEROUS, "{elapsed:?}");
}
