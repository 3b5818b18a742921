//! HTTP/2: our Python test server's MCP app under Hypercorn (pinned), over TLS (HTTP/2 chosen by
//! ALPN) and cleartext (h2c with prior knowledge); many calls multiplexed on one connection;
//! and at most once over HTTP/2: a stream the server refused (`RST_STREAM(REFUSED_STREAM)`,
//! from a scripted h2c server) was not processed, so the call is sent again.
//!
//! Versions and connections are counted server-side: each server logs every request with its
//! HTTP version and the client's address, one address per TCP connection.
//!
//! These run on the runtime `MCPWIRE_TEST_RUNTIME` names, but the test command runs them on smol
//! only: HTTP/2 is libcurl's, on its own sockets and thread whatever the runtime (as in
//! `ways::Setting::each`), and a tokio rerun would cost about 23 s for the same sockets.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpwire::{
    CallOptions, ChosenEra, Client, Era, HttpClientOptions, HttpCounters, HttpExchangeNote,
    HttpVersion, HttpVersionChoice,
};
use mcpwire_tests::h2::{h2_fault, python_h2, H2Peer, ServedRequest};
use mcpwire_tests::peers_skipped;
use mcpwire_tests::scenario::{exercise_py_server, noting_exchanges, run_within, Notes};
use serde_json::json;

/// Runs `test` with a 60 s limit, showing the server's stderr when it is exceeded.
fn within_a_minute<F: std::future::Future<Output = ()>>(server: &H2Peer, test: F) {
    run_within(Duration::from_secs(60), test, || {
        format!("; server stderr:\n{}", server.stderr_text())
    })
}

/// Connects with these client options and era, keeping every exchange note.
async fn connect(server: &H2Peer, http_client: HttpClientOptions, era: Era) -> (Client, Notes) {
    let (options, notes) = noting_exchanges(http_client, era);
    let client = mcpwire_tests::scenario::connect(&server.config(), options)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}\n{}", server.stderr_text()));
    (client, notes)
}

/// Closes `client` and, in the handshake era, waits (up to 5 s) until the server has logged its
/// DELETE: the log is read from the server's stderr as it comes, so the next client's requests
/// are told apart from this one's by position.
async fn close_and_settle(server: &H2Peer, client: Client, era: Era) {
    let deletes = || {
        server
            .requests()
            .iter()
            .filter(|r| r.method == "DELETE")
            .count()
    };
    let before = deletes();
    client.close().await;
    if era == Era::Handshake {
        let deadline = Instant::now() + Duration::from_secs(5);
        while deletes() == before && Instant::now() < deadline {
            mcpwire_tests::scenario::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Waits (up to 5 s) until the server has logged `started` requests after the first `from`. The
/// server logs a request after answering it, so a client's last lines may come after the client
/// is done; waited for, none of them is counted with the next client's.
async fn logged(server: &H2Peer, from: usize, started: u64) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while (requests_since(server, from).len() as u64) < started && Instant::now() < deadline {
        mcpwire_tests::scenario::sleep(Duration::from_millis(10)).await;
    }
}

/// The requests the server logged after the first `from` (one server serves several clients
/// in turn: see [`close_and_settle`]).
fn requests_since(server: &H2Peer, from: usize) -> Vec<ServedRequest> {
    server.requests().into_iter().skip(from).collect()
}

/// The distinct client addresses (TCP connections) of the requests after the first `from`
/// whose JSON-RPC method is `rpc` (any, for `None`).
fn connections_since(server: &H2Peer, from: usize, rpc: Option<&str>) -> BTreeSet<String> {
    requests_since(server, from)
        .into_iter()
        .filter(|r| rpc.is_none_or(|m| r.rpc == m))
        .map(|r| r.client)
        .collect()
}

/// Every request the server logged after the first `from` was HTTP/`version`.
fn assert_all_version(server: &H2Peer, from: usize, version: &str) {
    let requests = requests_since(server, from);
    assert!(!requests.is_empty(), "{}", server.stderr_text());
    for r in &requests {
        assert_eq!(r.version, version, "{r:?}\n{}", server.stderr_text());
    }
}

/// The HTTP versions of the responses the client saw, and how many came on a reused
/// connection.
fn response_versions(notes: &Notes) -> (Vec<Option<HttpVersion>>, usize) {
    let notes = notes.lock().unwrap();
    let mut versions = Vec::new();
    let mut reused = 0;
    for note in notes.iter() {
        if let HttpExchangeNote::Response {
            version,
            reused_connection,
            ..
        } = note
        {
            versions.push(*version);
            reused += usize::from(*reused_connection);
        }
    }
    (versions, reused)
}

/// Every response the client saw came over `version`, all but the first on a reused
/// connection; the counters agree, and count one connection.
fn assert_one_connection_of(client: &Client, notes: &Notes, version: HttpVersion) -> HttpCounters {
    let (versions, reused) = response_versions(notes);
    assert!(!versions.is_empty());
    assert!(versions.iter().all(|v| *v == Some(version)), "{versions:?}");
    assert_eq!(reused, versions.len() - 1, "{:?}", notes.lock().unwrap());
    let counters = client
        .http_counters()
        .expect("an HTTP connection's counters");
    assert_eq!(counters.connections, 1, "{counters:?}");
    assert_eq!(
        counters.reused_connections,
        versions.len() as u64 - 1,
        "{counters:?}"
    );
    let h2 = if version == HttpVersion::Http2 {
        versions.len() as u64
    } else {
        0
    };
    assert_eq!(counters.http2_responses, h2, "{counters:?}");
    assert_eq!(counters.unsent_failures, 0, "{counters:?}");
    counters
}

#[test]
fn tls_negotiates_http2_in_both_eras() {
    if peers_skipped("tls_negotiates_http2_in_both_eras") {
        return;
    }
    let server = python_h2(true, &[]);
    let chosen = [HttpVersionChoice::Http2, HttpVersionChoice::Negotiate];
    for (era, version) in [Era::Auto, Era::Handshake].into_iter().zip(chosen) {
        let from = server.requests().len();
        within_a_minute(&server, async {
            let mut options = server.client_options();
            options.version = version;
            let (client, notes) = connect(&server, options, era).await;
            let expected = match era {
                Era::Auto => ChosenEra::Stateless,
                _ => ChosenEra::Handshake,
            };
            assert_eq!(client.era(), Some(expected));
            exercise_py_server(&client, "over HTTP/2").await;
            let counters = assert_one_connection_of(&client, &notes, HttpVersion::Http2);
            close_and_settle(&server, client, era).await;
            logged(&server, from, counters.started).await;
            assert_all_version(&server, from, "2");
            let connections = connections_since(&server, from, None);
            eprintln!(
                "{era:?} over TLS: {} requests on {} connection(s); {counters:?}",
                requests_since(&server, from).len(),
                connections.len(),
            );
            assert_eq!(connections.len(), 1, "{}", server.stderr_text());
        });
    }
}

#[test]
fn cleartext_speaks_h2c_only_with_prior_knowledge() {
    if peers_skipped("cleartext_speaks_h2c_only_with_prior_knowledge") {
        return;
    }
    let server = python_h2(false, &[]);
    for (version, expected, seen) in [
        (
            HttpVersionChoice::Http2PriorKnowledge,
            "2",
            HttpVersion::Http2,
        ),
        (HttpVersionChoice::Negotiate, "1.1", HttpVersion::Http1),
    ] {
        for era in [Era::Auto, Era::Handshake] {
            let from = server.requests().len();
            within_a_minute(&server, async {
                let mut options = HttpClientOptions::default();
                options.version = version;
                let (client, notes) = connect(&server, options, era).await;
                exercise_py_server(&client, "over HTTP/2").await;
                let (versions, _) = response_versions(&notes);
                assert!(versions.iter().all(|v| *v == Some(seen)), "{versions:?}");
                if seen == HttpVersion::Http2 {
                    assert_one_connection_of(&client, &notes, seen);
                }
                let started = client.http_counters().map_or(0, |c| c.started);
                close_and_settle(&server, client, era).await;
                logged(&server, from, started).await;
                assert_all_version(&server, from, expected);
            });
        }
    }
}

#[test]
fn calls_beyond_the_streams_of_a_connection_wait_in_the_counted_queue() {
    if peers_skipped("calls_beyond_the_streams_of_a_connection_wait_in_the_counted_queue") {
        return;
    }
    // One connection carrying 8 streams at once: of 50 calls offered together, 8 go and the
    // others wait in the client's queue, each announced, on the same one connection.
    let server = python_h2(true, &[]);
    within_a_minute(&server, async {
        let mut options = server.client_options();
        options.max_connections_per_host = 1;
        options.streams_per_connection = 8;
        // The stateless era: no standalone stream holds a slot.
        let (client, notes) = connect(&server, options, Era::Auto).await;
        assert_eq!(client.era(), Some(ChosenEra::Stateless));
        fifty_at_once(&client, 0.3).await;
        let counters = assert_one_connection_of(&client, &notes, HttpVersion::Http2);
        eprintln!("8 streams per connection: {counters:?}");
        assert!(counters.queued_total >= 42, "{counters:?}");
        assert!(counters.queued_peak <= 42, "{counters:?}");
        assert_eq!(counters.queued, 0, "{counters:?}");
        let queued = notes
            .lock()
            .unwrap()
            .iter()
            .filter(|n| matches!(n, HttpExchangeNote::Queued { .. }))
            .count();
        assert_eq!(queued as u64, counters.queued_total, "{counters:?}");
        client.close().await;
        // Each call's log line was written before its answer; wait for the reader to have
        // them all.
        let deadline = Instant::now() + Duration::from_secs(5);
        while server.requests_of("tools/call").len() < 50 && Instant::now() < deadline {
            mcpwire_tests::scenario::sleep(Duration::from_millis(10)).await;
        }
    });
    assert_eq!(server.requests_of("tools/call").len(), 50);
    assert_eq!(connections_since(&server, 0, Some("tools/call")).len(), 1);
}

#[test]
fn a_dropped_sse_stream_resumes_over_http2() {
    if peers_skipped("a_dropped_sse_stream_resumes_over_http2") {
        return;
    }
    // The server ends the call's HTTP/2 stream mid-call; the client resumes it with
    // Last-Event-ID on a new stream of the same connection.
    let server = python_h2(true, &["--resumable"]);
    within_a_minute(&server, async {
        let (client, notes) = connect(&server, server.client_options(), Era::Handshake).await;
        let steps = Arc::new(Mutex::new(0));
        let st = steps.clone();
        let opts = CallOptions::default()
            .timeout(Duration::from_secs(20))
            .on_progress(move |_| *st.lock().unwrap() += 1);
        let r = client
            .call_tool_with("drop_stream_then_finish", json!({}), opts)
            .await
            .unwrap_or_else(|e| panic!("{e:?}\n{}", server.stderr_text()));
        assert_eq!(r.text(), "finished after the stream dropped");
        assert_eq!(*steps.lock().unwrap(), 2);
        assert_one_connection_of(&client, &notes, HttpVersion::Http2);
        close_and_settle(&server, client, Era::Handshake).await;
    });
    let resumed = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET")
        .count();
    assert!(
        resumed >= 2,
        "the standalone stream and the resumption: {}",
        server.stderr_text()
    );
    assert_all_version(&server, 0, "2");
}

/// 50 calls in flight at once on one client, each held `delay` seconds by the server.
async fn fifty_at_once(client: &Client, delay: f64) {
    let calls: Vec<_> = (0..50)
        .map(|k| {
            let client = client.clone();
            mcpwire_tests::scenario::spawn(async move {
                client
                    .call_tool("slow", json!({"steps": 1, "delay": delay}))
                    .await
                    .unwrap_or_else(|e| panic!("call {k}: {e:?}"))
            })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.text(), "done after 1 steps");
    }
}

#[test]
fn fifty_concurrent_calls_share_one_http2_connection() {
    if peers_skipped("fifty_concurrent_calls_share_one_http2_connection") {
        return;
    }
    let tls = python_h2(true, &[]);
    let cleartext = python_h2(false, &[]);
    // HTTP/2 over TLS and h2c: one connection carries all 50 at once (the default pool allows
    // 16 per host; none more is opened).
    for server in [&tls, &cleartext] {
        let from = server.requests().len();
        let url = server.url();
        within_a_minute(server, async {
            let mut options = server.client_options();
            options.version = HttpVersionChoice::Http2PriorKnowledge;
            let (client, notes) = connect(server, options, Era::Handshake).await;
            fifty_at_once(&client, 0.2).await;
            let counters = assert_one_connection_of(&client, &notes, HttpVersion::Http2);
            eprintln!("HTTP/2 ({url}): 50 calls: {counters:?}");
            // One connection carries them all at once: none waited in the client's queue.
            assert_eq!(counters.queued_total, 0, "{counters:?}");
            close_and_settle(server, client, Era::Handshake).await;
        });
        let calls = requests_since(server, from)
            .into_iter()
            .filter(|r| r.rpc == "tools/call")
            .count();
        assert_eq!(calls, 50);
        assert_all_version(server, from, "2");
        let all = connections_since(server, from, None);
        assert_eq!(all.len(), 1, "{url}: {all:?}\n{}", server.stderr_text());
    }
    // HTTP/1.1 only: the same load needs several connections, one exchange each at a time.
    let server = &tls;
    let from = server.requests().len();
    within_a_minute(server, async {
        let mut options = server.client_options();
        options.version = HttpVersionChoice::Http1Only;
        let (client, notes) = connect(server, options, Era::Handshake).await;
        fifty_at_once(&client, 0.2).await;
        let counters = client.http_counters().unwrap();
        close_and_settle(server, client, Era::Handshake).await;
        assert_all_version(server, from, "1.1");
        let used = connections_since(server, from, Some("tools/call")).len();
        let all = connections_since(server, from, None);
        eprintln!(
            "HTTP/1.1: 50 calls on {used} connections ({} in all): {counters:?}",
            all.len()
        );
        assert!(
            (2..=16).contains(&used),
            "{used} connections\n{}",
            server.stderr_text()
        );
        // At most 16 connections (one of them holding the standalone GET stream): the rest
        // waited in the client's queue, each announced to the exchange observer.
        assert!(all.len() <= 16, "{all:?}");
        // The client saw the connections of its responses so far (the DELETE at close may
        // open one more, after this reading).
        assert!(
            (used as u64..=all.len() as u64).contains(&counters.connections),
            "{counters:?}: {used} connections for the calls, {} in all",
            all.len()
        );
        assert_eq!(counters.http2_responses, 0, "{counters:?}");
        assert!(counters.queued_total > 0, "{counters:?}");
        let queued = notes
            .lock()
            .unwrap()
            .iter()
            .filter(|n| matches!(n, HttpExchangeNote::Queued { .. }))
            .count();
        assert_eq!(queued as u64, counters.queued_total, "{counters:?}");
    });
}

/// Calls `tool` on the h2c fault server (after the handshake, so on a reused connection) and
/// returns the outcome with the tools/call POSTs the server saw, by action.
fn call_fault(tool: &str) -> (Result<String, mcpwire::Error>, Vec<String>) {
    let server = h2_fault();
    let mut outcome = None;
    within_a_minute(&server, async {
        let (client, notes) = connect(&server, prior_knowledge(), Era::Handshake).await;
        let r = client.call_tool(tool, json!({})).await.map(|r| r.text());
        eprintln!("{tool}: {r:?}\nnotes: {:?}", notes.lock().unwrap());
        // The connection still works afterwards.
        let after = client.call_tool("add", json!({})).await;
        assert_eq!(after.unwrap().text(), "ok add", "{}", server.stderr_text());
        close_and_settle(&server, client, Era::Handshake).await;
        outcome = Some(r);
    });
    let actions = actions_of(&server, tool);
    eprintln!("{tool}: server:\n{}", server.stderr_text());
    (outcome.unwrap(), actions)
}

/// Client options speaking HTTP/2 by prior knowledge, the fault server's only version.
fn prior_knowledge() -> HttpClientOptions {
    let mut options = HttpClientOptions::default();
    options.version = HttpVersionChoice::Http2PriorKnowledge;
    options
}

/// What the fault server did with each `tools/call` of `tool`, in order.
fn actions_of(server: &H2Peer, tool: &str) -> Vec<String> {
    server
        .requests_of("tools/call")
        .into_iter()
        .filter(|r| r.tool == tool)
        .map(|r| r.action)
        .collect()
}

// A stream the server refused (RST_STREAM REFUSED_STREAM, RFC 9113 8.7) or left out of a
// GOAWAY was not processed and could be sent again at once. Through isahc, libcurl reports both
// exactly as it reports a connection lost after the server read the request (code 65, its
// retry on a fresh connection refused because the body cannot be rewound), so the backend
// cannot tell them apart: they end as may-have-run, are never repeated behind the caller's
// back, and the caller's reissue goes through.

#[test]
fn a_refused_http2_stream_is_not_repeated_and_the_callers_reissue_goes_through() {
    if peers_skipped("a_refused_http2_stream_is_not_repeated_and_the_callers_reissue_goes_through")
    {
        return;
    }
    let (r, actions) = call_fault_and_reissue("refuse_once");
    assert_eq!(r.unwrap(), "ok refuse_once");
    assert_eq!(actions, ["refused", "answered"]);
}

#[test]
fn a_stream_left_out_by_goaway_is_not_repeated_and_the_callers_reissue_goes_through() {
    if peers_skipped(
        "a_stream_left_out_by_goaway_is_not_repeated_and_the_callers_reissue_goes_through",
    ) {
        return;
    }
    let (r, actions) = call_fault_and_reissue("goaway_once");
    assert_eq!(r.unwrap(), "ok goaway_once");
    assert_eq!(actions, ["goaway", "answered"]);
}

/// Calls `tool` on the h2c fault server: the first attempt must end as may-have-run with
/// nothing sent again; the caller then reissues it. Gives the reissue's text and what the
/// server did with each `tools/call` of `tool`.
fn call_fault_and_reissue(tool: &str) -> (Result<String, mcpwire::Error>, Vec<String>) {
    let server = h2_fault();
    let mut outcome = None;
    within_a_minute(&server, async {
        let (client, _notes) = connect(&server, prior_knowledge(), Era::Handshake).await;
        let err = client
            .call_tool(tool, json!({}))
            .await
            .expect_err("lost after sending");
        assert!(err.maybe_executed(), "{err:?}");
        // Not repeated behind the caller's back: one attempt reached the server so far. The
        // server logs it as it ends the stream, which the client may see first: its line is
        // waited for (a second line would come no sooner).
        let logged = Instant::now();
        while actions_of(&server, tool).is_empty() && logged.elapsed() < Duration::from_secs(5) {
            mcpwire_tests::scenario::sleep(Duration::from_millis(20)).await;
        }
        let so_far = actions_of(&server, tool).len();
        assert_eq!(so_far, 1, "{}", server.stderr_text());
        let again = client.reissue(&err).await.map(|raw| {
            let v: serde_json::Value = serde_json::from_str(raw.get()).expect("JSON");
            v["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        });
        close_and_settle(&server, client, Era::Handshake).await;
        outcome = Some(again);
    });
    (outcome.unwrap(), actions_of(&server, tool))
}

#[test]
fn a_reset_http2_stream_may_have_run_and_is_not_repeated() {
    if peers_skipped("a_reset_http2_stream_may_have_run_and_is_not_repeated") {
        return;
    }
    // RST_STREAM(INTERNAL_ERROR) after the server read the request: it may have acted on it.
    let (r, actions) = call_fault("reset");
    let err = r.unwrap_err();
    assert!(err.maybe_executed(), "{err:?}");
    assert_eq!(actions, ["reset"]);
}

#[test]
fn a_connection_closed_after_the_request_may_have_run_and_is_not_repeated() {
    if peers_skipped("a_connection_closed_after_the_request_may_have_run_and_is_not_repeated") {
        return;
    }
    // The connection closed without a GOAWAY after the server read the request.
    let (r, actions) = call_fault("vanish");
    let err = r.unwrap_err();
    assert!(err.maybe_executed(), "{err:?}");
    assert_eq!(actions, ["vanished"]);
}
