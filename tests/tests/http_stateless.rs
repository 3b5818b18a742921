//! The stateless era over Streamable HTTP and era detection, through real sockets: the public
//! `Client` (with `Era::Auto`, the default) against the scripted fault server playing a
//! 2026-07-28 server or an older one.

use std::time::{Duration, Instant};

use mcpwire::core::{CallError, LocalError};
use mcpwire::{ChosenEra, Client, ConnectOptions, Error, ServerConfig};
use mcpwire_tests::fault_http::{FaultServer, Recorded, Rule};
use mcpwire_tests::scenario::run;
use serde_json::json;

const DISCOVER: &str = r#"{"jsonrpc":"2.0","id":{{id}},"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern","version":"1"}},"ttlMs":0}}"#;
const INIT: &str = r#"{"jsonrpc":"2.0","id":{{id}},"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"older","version":"1"}}}"#;
const RESULT: &str =
    r#"{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"ok"}]}}"#;

async fn connect(server: &FaultServer) -> Result<Client, Error> {
    mcpwire_tests::scenario::connect(&ServerConfig::http(server.url()), ConnectOptions::default())
        .await
}

fn methods(reqs: &[Recorded]) -> Vec<String> {
    reqs.iter()
        .map(|r| match r.rpc_method() {
            Some(m) => format!("{} {m}", r.method),
            None => r.method.clone(),
        })
        .collect()
}

#[test]
fn a_modern_server_is_detected_and_spoken_to_without_a_session() {
    let server = FaultServer::start(vec![
        Rule::post("server/discover").json(200, DISCOVER),
        Rule::post("tools/call").json(200, RESULT),
    ]);
    let start = Instant::now();
    run(async {
        let client = connect(&server).await.unwrap();
        eprintln!("detection took {:?}", start.elapsed());
        assert_eq!(client.era(), Some(ChosenEra::Stateless));
        let r = client
            .call_tool("get_weather", json!({"city": "Paris"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "ok");
        client.close().await;
    });
    let reqs = server.requests();
    assert_eq!(
        methods(&reqs),
        ["POST server/discover", "POST tools/call"],
        "no initialize, no GET, no DELETE: {:?}",
        server.log()
    );
    for r in &reqs {
        assert_eq!(r.header("mcp-session-id"), None);
        assert_eq!(r.header("mcp-protocol-version"), Some("2026-07-28"));
        let body = r.json().unwrap();
        assert_eq!(
            body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
    }
    assert_eq!(reqs[0].header("mcp-method"), Some("server/discover"));
    assert_eq!(reqs[1].header("mcp-method"), Some("tools/call"));
    assert_eq!(reqs[1].header("mcp-name"), Some("get_weather"));
    assert!(server.unmatched().is_empty(), "{:?}", server.notes());
}

#[test]
fn an_older_server_refusing_the_probe_gets_the_handshake() {
    for status in [400u16, 404, 405] {
        let server = FaultServer::start(vec![
            Rule::post("server/discover").status_with(
                status,
                &[("Content-Type", "text/plain")],
                "no such method",
            ),
            Rule::post("initialize").json_with(200, &[("Mcp-Session-Id", "s-1")], INIT),
            Rule::notifications().status(202),
            Rule::get().status(405),
            Rule::post("tools/call").json(200, RESULT),
            Rule::delete().status(200),
        ]);
        let start = Instant::now();
        run(async {
            let client = connect(&server).await.unwrap();
            eprintln!("{status}: detection took {:?}", start.elapsed());
            assert_eq!(client.era(), Some(ChosenEra::Handshake), "{status}");
            assert_eq!(client.call_tool("x", json!({})).await.unwrap().text(), "ok");
            client.close().await;
        });
        let reqs = server.requests();
        let m = methods(&reqs);
        assert_eq!(m[..2], ["POST server/discover", "POST initialize"], "{m:?}");
        let call = reqs
            .iter()
            .find(|r| r.rpc_method().as_deref() == Some("tools/call"));
        assert_eq!(call.unwrap().header("mcp-session-id"), Some("s-1"));
    }
}

#[test]
fn a_401_on_the_probe_is_an_authorization_failure_not_an_era() {
    let server = FaultServer::start(vec![Rule::post("server/discover").status_with(
        401,
        &[(
            "WWW-Authenticate",
            r#"Bearer resource_metadata="http://127.0.0.1/prm""#,
        )],
        "",
    )]);
    run(async {
        let err = connect(&server).await.unwrap_err();
        let Error::Handshake {
            error: CallError::Local(LocalError::Http(e)),
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(e.status, Some(401));
        assert!(e.challenge.is_some(), "{e:?}");
    });
    assert_eq!(methods(&server.requests()), ["POST server/discover"]);
}

#[test]
fn a_stateless_stream_dropped_mid_call_may_have_run_and_is_not_resumed() {
    let sse = [("Content-Type", "text/event-stream")];
    let server = FaultServer::start(vec![
        Rule::post("server/discover").json(200, DISCOVER),
        Rule::post("tools/call")
            .tool("drop")
            .head_chunked(200, &sse)
            .body("id: ev-1\nretry: 50\ndata: \n\n")
            .close(),
        Rule::post("tools/call").json(200, RESULT),
    ]);
    run(async {
        let client = connect(&server).await.unwrap();
        let err = client.call_tool("drop", json!({})).await.unwrap_err();
        assert!(matches!(err, Error::MaybeExecuted { .. }), "{err:?}");
        mcpwire_tests::scenario::sleep(Duration::from_millis(200)).await;
        // The connection lives on.
        assert_eq!(client.call_tool("x", json!({})).await.unwrap().text(), "ok");
        client.close().await;
    });
    let m = methods(&server.requests());
    assert_eq!(
        m,
        ["POST server/discover", "POST tools/call", "POST tools/call"],
        "sent once, never resumed with a GET"
    );
}

// ----- the 2024-11-05 HTTP+SSE transport against the fault server -----

fn sse_config(server: &FaultServer) -> ServerConfig {
    ServerConfig::Http(mcpwire::core::config::HttpConfig {
        kind: mcpwire::core::config::HttpKind::Sse,
        url: format!("{}/sse", server.url().trim_end_matches("/mcp")),
        headers: Default::default(),
        extra: Default::default(),
    })
}

const SSE: [(&str, &str); 1] = [("Content-Type", "text/event-stream")];
const INIT_OLD: &str = r#"{"jsonrpc":"2.0","id":{{id:initialize}},"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}}"#;

#[test]
fn sse_an_endpoint_on_another_origin_is_refused() {
    let server = FaultServer::start(vec![Rule::get()
        .head_chunked(200, &SSE)
        .body("event: endpoint\ndata: http://evil.example:1/message\n\n")
        .silent()]);
    run(async {
        let err = mcpwire_tests::scenario::connect(&sse_config(&server), ConnectOptions::default())
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Handshake { .. }), "{err:?}");
        assert!(err.to_string().contains("origin"), "{err}");
    });
    assert_eq!(methods(&server.requests()), ["GET"], "nothing POSTed");
}

#[test]
fn sse_the_stream_dropped_with_a_call_pending_ends_it_typed() {
    use mcpwire_tests::fault_http::Matcher;
    let wait = Duration::from_secs(10);
    let server = FaultServer::start(vec![
        Rule::get()
            .head_chunked(200, &SSE)
            .body("event: endpoint\ndata: /message?s=1\n\n")
            .wait_for(Matcher::post("initialize"), wait)
            .body(format!("event: message\ndata: {INIT_OLD}\n\n"))
            .wait_for(Matcher::post("tools/call"), wait)
            .close(),
        Rule::post("initialize").status(202),
        Rule::notifications().status(202),
        Rule::post("tools/call").status(202),
    ]);
    run(async {
        let client =
            mcpwire_tests::scenario::connect(&sse_config(&server), ConnectOptions::default())
                .await
                .unwrap();
        assert_eq!(client.http_transport(), Some(mcpwire::HttpKind::Sse));
        let err = client.call_tool("x", json!({})).await.unwrap_err();
        assert!(matches!(err, Error::MaybeExecuted { .. }), "{err:?}");
        // No reconnect: the connection has ended.
        assert!(client.call_tool("x", json!({})).await.is_err());
    });
    let posts: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.target.clone())
        .collect();
    assert!(posts.iter().all(|t| t == "/message?s=1"), "{posts:?}");
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|r| r.method == "GET")
            .count(),
        1
    );
}

#[test]
fn sse_an_endpoint_that_never_comes_ends_the_connect_with_a_timeout() {
    let server = FaultServer::start(vec![Rule::get()
        .head_chunked(200, &SSE)
        .body(": waiting\n\n")
        .silent()]);
    run(async {
        let options = ConnectOptions {
            init_timeout: Duration::from_millis(500),
            ..ConnectOptions::default()
        };
        let start = Instant::now();
        let err = mcpwire_tests::scenario::connect(&sse_config(&server), options)
            .await
            .unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(
            err.to_string()
                .contains("its event stream named no endpoint within 500 ms"),
            "{err}"
        );
    });
}
