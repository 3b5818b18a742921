//! Through a real forward proxy, the pinned proxy.py (`tests/peers/python-requirements.txt`),
//! on `127.0.0.1`: plain `http://` requests it forwards and `https://` in its CONNECT tunnels,
//! several `tools/call`s in a row on each; with `--basic-auth`, the right credentials carry
//! everything, and none or wrong ones get its `407` on both paths, read as the proxy wanting
//! credentials (never "may have run": nothing reached the server). The project's own loopback
//! proxy, which also counts and misbehaves on purpose, is in `http_proxy.rs`.

use mcpwire::{ConnectOptions, Era, HttpClientOptions, HttpExchangeNote, ProxySetting};
use mcpwire_tests::h2::{python_h2, H2Peer};
use mcpwire_tests::peers_skipped;
use mcpwire_tests::proxy::ProxyPy;
use mcpwire_tests::scenario::{exercise_py_server, noting_exchanges, run};
use serde_json::json;

/// The two HTTP stacks: mcpwire's own client (HTTP/1.1; `false`) and libcurl (`true`: HTTP/2
/// over TLS, HTTP/1.1 in clear).
const STACKS: [bool; 2] = [false, true];

/// The options for `server` through the proxy at `url`, on mcpwire's own client or libcurl.
fn through(server: &H2Peer, url: String, libcurl: bool) -> HttpClientOptions {
    let mut options = server.client_options();
    options.proxy = ProxySetting::Url {
        url,
        no_proxy: Vec::new(),
    };
    options.http1_via_libcurl = libcurl;
    if !libcurl {
        options.version = mcpwire::HttpVersionChoice::Http1Only;
    }
    options
}

/// Connects to `server` through `url`, makes `n` calls in a row and the usual exercise, and
/// closes; returns the HTTP exchange notes.
fn use_through(
    what: &str,
    server: &H2Peer,
    url: String,
    n: u64,
    libcurl: bool,
) -> Vec<HttpExchangeNote> {
    let what = format!("{what} (libcurl: {libcurl})");
    run(async {
        let (options, notes) = noting_exchanges(through(server, url, libcurl), Era::Handshake);
        let client = mcpwire_tests::scenario::connect(&server.config(), options)
            .await
            .unwrap_or_else(|e| panic!("{what}: connect: {e}"));
        for i in 0..n {
            let r = client
                .call_tool("add", json!({"a": i, "b": 1}))
                .await
                .unwrap_or_else(|e| panic!("{what}: call {i} failed: {e}"));
            assert_eq!(r.text(), (i + 1).to_string(), "{what}");
        }
        exercise_py_server(&client, "streamed through proxy.py").await;
        client.close().await;
        let notes = notes.lock().unwrap().clone();
        notes
    })
}

/// The port of `server`'s URL.
fn port_of(server: &H2Peer) -> u16 {
    let authority = server.url().split('/').nth(2).unwrap();
    authority.rsplit_once(':').unwrap().1.parse().unwrap()
}

#[test]
fn proxy_py_carries_plain_http_and_connect_tunnels() {
    if peers_skipped("proxy_py_carries_plain_http_and_connect_tunnels") {
        return;
    }
    let proxy = ProxyPy::start(None);
    let http = python_h2(false, &[]);
    let https = python_h2(true, &[]);

    for libcurl in STACKS {
        let before = http.requests_of("tools/call").len();
        let notes = use_through(
            "plain http through proxy.py",
            &http,
            proxy.url(),
            20,
            libcurl,
        );
        let calls = http.requests_of("tools/call").len() - before;
        assert!(calls >= 21, "{calls} calls served:\n{}", http.stderr_text());
        // Each exchange the client started reached the server through the proxy.
        let responses = notes
            .iter()
            .filter(|n| matches!(n, HttpExchangeNote::Response { .. }))
            .count();
        assert!(responses >= 24, "{responses} responses: {notes:?}");

        let before = https.requests_of("tools/call").len();
        use_through("https through proxy.py", &https, proxy.url(), 20, libcurl);
        assert!(https.requests_of("tools/call").len() - before >= 21);
    }
    // proxy.py logs a tunnel when it closes, a moment after the client let it go.
    let (http_port, tls_port) = (port_of(&http), port_of(&https));
    let forwarded = format!("POST 127.0.0.1:{http_port}/mcp - 200");
    let tunnel = format!("CONNECT 127.0.0.1:{tls_port}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let log = loop {
        let log = proxy.access_log();
        let seen = |needle: &str| log.iter().any(|l| l.contains(needle));
        if (seen(&forwarded) && seen(&tunnel)) || std::time::Instant::now() >= deadline {
            break log;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    eprintln!("proxy.py's access log:\n{}", log.join("\n"));
    assert!(log.iter().any(|l| l.contains(&forwarded)), "{log:?}");
    assert!(log.iter().any(|l| l.contains(&tunnel)), "{log:?}");
}

#[test]
fn proxy_py_asking_for_credentials() {
    if peers_skipped("proxy_py_asking_for_credentials") {
        return;
    }
    let proxy = ProxyPy::start(Some("alice:s3cret"));
    let http = python_h2(false, &[]);
    let https = python_h2(true, &[]);
    let port = proxy.port();
    let with = |credentials: &str| format!("http://{credentials}@127.0.0.1:{port}");

    // The right credentials carry both paths.
    for libcurl in STACKS {
        let right = with("alice:s3cret");
        use_through(
            "plain http with credentials",
            &http,
            right.clone(),
            5,
            libcurl,
        );
        use_through("https with credentials", &https, right, 5, libcurl);
    }
    let served = (http.requests().len(), https.requests().len());

    // None, or wrong ones: proxy.py's 407, on both paths.
    for (server, libcurl) in [
        (&http, false),
        (&http, true),
        (&https, false),
        (&https, true),
    ] {
        for given in [None, Some("alice:wrong-s3cret")] {
            let url = given.map_or_else(|| proxy.url(), with);
            let what = format!("{} through proxy.py with {given:?}", server.url());
            run(async {
                let options = ConnectOptions {
                    http_client: through(server, url, libcurl),
                    ..ConnectOptions::default()
                };
                let err = mcpwire_tests::scenario::connect(&server.config(), options)
                    .await
                    .unwrap_err();
                let (shown, debug) = (err.to_string(), format!("{err:?}"));
                eprintln!("{what}: {shown}");
                assert!(!err.maybe_executed(), "{what}: {debug}");
                assert!(
                    debug.contains("kind: Proxy(Credentials)"),
                    "{what}: {debug}"
                );
                assert!(!shown.contains("may have"), "{what}: {shown}");
                assert!(!format!("{shown}{debug}").contains("s3cret"), "{what}");
                assert!(shown.contains("not sent"), "{what}: {shown}");
                assert!(
                    shown.contains(&format!("the proxy http://127.0.0.1:{port} ")),
                    "{what}: {shown}"
                );
                if given.is_some() {
                    assert!(shown.contains("refused the credentials"), "{what}: {shown}");
                } else {
                    assert!(
                        shown.contains("wants credentials")
                            && shown.contains("http://user:password@host:port"),
                        "{what}: {shown}"
                    );
                }
            });
        }
    }
    // Nothing more reached either server.
    assert_eq!(
        (http.requests().len(), https.requests().len()),
        served,
        "{}",
        proxy.access_log().join("\n")
    );
}
