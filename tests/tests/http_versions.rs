//! Which HTTP version goes to a server, and what a server that speaks another makes of it.
//!
//! Over TLS, ALPN decides, as curl has it: HTTP/2 asked of a server whose TLS agrees only
//! HTTP/1.1 (the fault server behind a TLS front that offers no ALPN; our Python test server
//! under uvicorn) is HTTP/1.1, on mcpwire's own client, and nothing goes in HTTP/2 (no
//! connection preface reaches the server); the responses, the counters (what `info` shows) and
//! a diagnostic event say which version was spoken. That path also delivers an answer that
//! arrives together with the server's close of its socket without a TLS `close_notify`, which
//! libcurl's reader drops. HTTP/2 with prior knowledge (h2c) is for `http://` alone.

use std::time::Duration;

use mcpwire::{
    ConnectOptions, Diagnostic, Era, Event, HttpExchangeNote, HttpVersion, HttpVersionChoice,
    ProxySetting, ServerConfig,
};
use mcpwire_tests::fault_http::{FaultServer, Rule};
use mcpwire_tests::scenario::{call_within, handshake_rules, run, tool_result, Notes};
use mcpwire_tests::tls_front::TlsFront;

/// Handshake-era options speaking `version`, accepting the TLS front's throwaway certificate,
/// with every exchange note kept.
fn options(version: HttpVersionChoice) -> (ConnectOptions, Notes) {
    let (mut options, notes) =
        mcpwire_tests::scenario::noting_exchanges(Default::default(), Era::Handshake);
    options.http_client.version = version;
    options.http_client.proxy = ProxySetting::Direct;
    options.http_client.tls.danger_accept_invalid_certificates = true;
    (options, notes)
}

/// The versions of the responses seen.
fn versions(notes: &Notes) -> Vec<Option<HttpVersion>> {
    notes
        .lock()
        .unwrap()
        .iter()
        .filter_map(|n| match n {
            HttpExchangeNote::Response { version, .. } => Some(*version),
            _ => None,
        })
        .collect()
}

/// The HTTP notes among the connection's events, once it has ended.
async fn http_notes(mut events: mcpwire::Events) -> Vec<String> {
    let mut notes = Vec::new();
    while let Some(event) = events.next().await {
        if let Event::Diagnostic(Diagnostic::Http(note)) = event {
            notes.push(note);
        }
    }
    notes
}

const CHOICES: [HttpVersionChoice; 3] = [
    HttpVersionChoice::Http2,
    HttpVersionChoice::Negotiate,
    HttpVersionChoice::Http2PriorKnowledge,
];

/// HTTP/2 asked of a server whose TLS agrees only HTTP/1.1: HTTP/1.1 is spoken, every call is
/// answered, no HTTP/2 preface reaches the server, and (HTTP/2 asked for) a diagnostic says
/// HTTP/1.1 was spoken.
#[test]
fn http2_asked_of_an_http1_only_tls_server_speaks_http1_by_alpn() {
    for choice in CHOICES {
        let mut rules = vec![Rule::post("tools/call").json(200, &tool_result("ok"))];
        rules.extend(handshake_rules("s-1", 405));
        let server = FaultServer::start(rules);
        let front = TlsFront::start(server.addr());
        let (options, notes) = options(choice);
        run(async {
            let client =
                mcpwire_tests::scenario::connect(&ServerConfig::http(front.url()), options)
                    .await
                    .unwrap_or_else(|e| panic!("{choice:?}: {e}; server saw {:?}", server.log()));
            let events = client.events();
            for _ in 0..3 {
                let r = call_within(&client, "add", Duration::from_secs(5)).await;
                assert_eq!(r.map(|r| r.text()).unwrap(), "ok", "{choice:?}");
            }
            let counters = client.http_counters().unwrap();
            assert_eq!(counters.http2_responses, 0, "{choice:?}: {counters:?}");
            assert_eq!(counters.unsent_failures, 0, "{choice:?}: {counters:?}");
            client.close().await;
            let seen = versions(&notes);
            assert!(
                !seen.is_empty() && seen.iter().all(|v| *v == Some(HttpVersion::Http1)),
                "{choice:?}: {seen:?}"
            );
            let said = http_notes(events).await;
            let told = said
                .iter()
                .any(|n| n.contains("HTTP/2 was asked for") && n.contains("HTTP/1.1 is spoken"));
            assert_eq!(
                told,
                choice == HttpVersionChoice::Http2,
                "{choice:?}: {said:?}"
            );
        });
        let log = server.log();
        assert!(
            !log.iter().any(|l| l.starts_with("PRI")),
            "{choice:?}: the HTTP/2 preface reached an HTTP/1.1 server: {log:?}"
        );
        assert!(server.unmatched().is_empty(), "{:?}", server.notes());
    }
}

/// Over TLS, a server that closes its socket right after each answer, without a TLS
/// `close_notify` (the answer and the close arrive together): every answer that arrived whole
/// is delivered, whichever version was asked for (libcurl's reader dropped most of them, and
/// the calls said they may have run).
#[test]
fn answers_before_a_close_without_close_notify_are_delivered() {
    for choice in [HttpVersionChoice::Negotiate, HttpVersionChoice::Http2] {
        let mut rules = vec![Rule::post("tools/call")
            .json(200, &tool_result("ok"))
            .close()];
        rules.extend(handshake_rules("s-1", 405));
        let server = FaultServer::start(rules);
        let front = TlsFront::without_close_notify(server.addr());
        let (options, _notes) = options(choice);
        run(async {
            let client =
                mcpwire_tests::scenario::connect(&ServerConfig::http(front.url()), options)
                    .await
                    .unwrap_or_else(|e| panic!("{choice:?}: {e}"));
            for i in 0..10 {
                // The close has come before the next call (a request that meets a close on its
                // way is a race no client wins: not this test's).
                mcpwire_tests::scenario::sleep(Duration::from_millis(50)).await;
                let r = call_within(&client, "add", Duration::from_secs(5)).await;
                match r {
                    Ok(r) => assert_eq!(r.text(), "ok"),
                    Err(e) => panic!("{choice:?}: call {i}: {e}"),
                }
            }
            client.close().await;
        });
    }
}

/// The same against a real HTTP/1.1-only TLS server (our Python test server under uvicorn,
/// which agrees no `h2`), in both eras: HTTP/2 asked for, HTTP/1.1 spoken, all answered.
#[test]
fn http2_asked_of_a_real_http1_only_tls_server_speaks_http1() {
    if mcpwire_tests::peers_skipped("http2_asked_of_a_real_http1_only_tls_server_speaks_http1") {
        return;
    }
    let certs = mcpwire_tests::tls::TlsCerts::generate();
    let server = mcpwire_tests::tls::python_https(&certs, "server", None);
    for era in [Era::Auto, Era::Handshake] {
        let (mut options, notes) = options(HttpVersionChoice::Http2);
        options.era = era;
        options.http_client.tls.danger_accept_invalid_certificates = false;
        options.http_client.tls.extra_ca_files = vec![certs.ca()];
        mcpwire_tests::scenario::run_against(&server, Duration::from_secs(60), async {
            let client =
                mcpwire_tests::scenario::connect(&ServerConfig::http(server.url()), options)
                    .await
                    .unwrap_or_else(|e| panic!("{era:?}: {e}"));
            let events = client.events();
            mcpwire_tests::scenario::exercise_py_server(&client, "over HTTP/1.1").await;
            assert_eq!(client.http_counters().unwrap().http2_responses, 0);
            client.close().await;
            let seen = versions(&notes);
            assert!(
                !seen.is_empty() && seen.iter().all(|v| *v == Some(HttpVersion::Http1)),
                "{era:?}: {seen:?}"
            );
            let said = http_notes(events).await;
            assert!(
                said.iter().any(|n| n.contains("did not agree h2")),
                "{era:?}: {said:?}"
            );
        });
    }
}

/// HTTP/2 with prior knowledge (h2c) to a server that speaks HTTP/1.1 only: its HTTP/1.1
/// answer to the preface says at once that it does not speak HTTP/2. The request fails as
/// never sent (an HTTP/1.1 server reads no HTTP/2 frames), with the hint, well within a short
/// start-up time; nothing is taken for a timeout.
#[test]
fn h2c_to_an_http1_server_says_so_at_once() {
    for era in [Era::Handshake, Era::Auto] {
        let server = FaultServer::start(handshake_rules("s-1", 405));
        let (mut options, _notes) = options(HttpVersionChoice::Http2PriorKnowledge);
        options.era = era;
        options.init_timeout = Duration::from_millis(1500);
        run(async {
            let e = mcpwire_tests::scenario::connect(&ServerConfig::http(server.url()), options)
                .await
                .expect_err("an HTTP/1.1 server");
            let h = match &e {
                mcpwire::Error::Handshake {
                    error: mcpwire::core::CallError::Local(mcpwire::core::LocalError::Http(h)),
                    ..
                } => h,
                other => panic!("{era:?}: expected the HTTP failure, got {other}"),
            };
            assert_eq!(
                h.hint,
                Some(mcpwire::core::error::Hint::NoH2c),
                "{era:?}: {e}"
            );
            let text = e.to_string();
            assert!(
                text.contains("not sent")
                    && text.contains("it answered the HTTP/2 preface with \"HTTP/1.1 "),
                "{era:?}: {text}"
            );
            assert!(!text.contains("may have"), "{era:?}: {text}");
        });
    }
}
