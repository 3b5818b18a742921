//! Proxies set in the client's options (`ProxySetting::Url`), through a loopback proxy that
//! counts what goes through it: plain `http://` requests in absolute form, `https://` in a
//! CONNECT tunnel (HTTP/2 inside it), hosts on the no-proxy list reached directly; a proxy that
//! answers in HTTP/1.1 without `Connection: close` and closes anyway (as tinyproxy does); and
//! each way a proxy fails, told apart: it cannot be reached, it refuses the tunnel or the port,
//! it wants credentials (never "may have run": the request did not reach the server). The
//! proxy from the environment is tested in `http_proxy_env.rs`, alone in its binary since it
//! sets environment variables; a real proxy (proxy.py) in `http_proxy_py.rs`.

use std::time::{Duration, Instant};

use mcpwire::{
    Client, ConnectOptions, Era, HttpClientOptions, HttpExchangeNote, HttpVersion,
    HttpVersionChoice, ProxySetting, ServerConfig,
};
use mcpwire_tests::fault_http::{FaultServer, Rule};
use mcpwire_tests::h2::python_h2;
use mcpwire_tests::proxy::{Proxy, ProxyOptions};
use mcpwire_tests::scenario::{
    connect_handshake, exercise_py_server, handshake_rules, noting_exchanges, run, Notes,
};
use mcpwire_tests::{free_port, peers_skipped, python_http};
use serde_json::json;

fn through(proxy: &Proxy, no_proxy: &[&str]) -> ProxySetting {
    ProxySetting::Url {
        url: proxy.url(),
        no_proxy: no_proxy.iter().map(|s| s.to_string()).collect(),
    }
}

async fn connect(
    config: &ServerConfig,
    http_client: HttpClientOptions,
    era: Era,
) -> (Client, Notes) {
    let (options, notes) = noting_exchanges(http_client, era);
    let client = mcpwire_tests::scenario::connect(config, options)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    (client, notes)
}

/// Waits up to 5 s for `check` (the proxy counts a request once it has read its head, which
/// may come a moment after the client handed it over).
fn eventually(mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if check() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn an_explicit_proxy_carries_every_http_request() {
    if peers_skipped("an_explicit_proxy_carries_every_http_request") {
        return;
    }
    for era in [Era::Auto, Era::Handshake] {
        // The Python peer's app under Hypercorn, cleartext: it logs each request it serves.
        let server = python_h2(false, &[]);
        let proxy = Proxy::start();
        run(async {
            let mut options = HttpClientOptions::default();
            options.proxy = through(&proxy, &[]);
            let (client, notes) = connect(&server.config(), options, era).await;
            exercise_py_server(&client, "streamed through the proxy").await;
            let started = client.http_counters().unwrap().started;
            assert!(
                eventually(|| proxy.counts().requests == started),
                "{era:?}: the client started {started} exchanges, the proxy forwarded {:?}: {:?}",
                proxy.counts(),
                proxy.log()
            );
            // The proxy closes each connection after its response: none is reused.
            assert!(notes.lock().unwrap().iter().all(|n| !matches!(
                n,
                HttpExchangeNote::Response {
                    reused_connection: true,
                    ..
                }
            )));
            client.close().await;
        });
        // The server served each request the proxy forwarded, the DELETE at close included.
        assert!(
            eventually(|| server.requests().len() as u64 == proxy.counts().requests),
            "{era:?}: served {}, forwarded {:?}",
            server.requests().len(),
            proxy.counts()
        );
        let counts = proxy.counts();
        eprintln!("{era:?}: {counts:?}");
        assert_eq!(counts.tunnels, 0);
        assert!(counts.requests >= 4, "{counts:?}");
        let log = proxy.log();
        assert!(
            log.iter()
                .any(|l| l == &format!("POST {} HTTP/1.1", server.url())),
            "{log:?}"
        );
    }
}

#[test]
fn hosts_on_the_no_proxy_list_are_reached_directly() {
    if peers_skipped("hosts_on_the_no_proxy_list_are_reached_directly") {
        return;
    }
    let (config, _server) = python_http(&[]);
    for no_proxy in [&["127.0.0.1"][..], &["localhost", "127.0.0.1"], &["*"]] {
        let proxy = Proxy::start();
        run(async {
            let mut options = HttpClientOptions::default();
            options.proxy = through(&proxy, no_proxy);
            let (client, _notes) = connect(&config, options, Era::Handshake).await;
            exercise_py_server(&client, "streamed through the proxy").await;
            client.close().await;
        });
        assert_eq!(
            proxy.counts(),
            Default::default(),
            "{no_proxy:?}: {:?}",
            proxy.log()
        );
    }
}

#[test]
fn https_goes_through_one_connect_tunnel_with_http2_inside() {
    if peers_skipped("https_goes_through_one_connect_tunnel_with_http2_inside") {
        return;
    }
    let server = python_h2(true, &[]);
    let proxy = Proxy::start();
    run(async {
        let mut options = server.client_options();
        options.proxy = through(&proxy, &[]);
        let (client, notes) = connect(&server.config(), options, Era::Handshake).await;
        exercise_py_server(&client, "streamed through the proxy").await;
        let counters = client.http_counters().unwrap();
        eprintln!("through the tunnel: {counters:?}");
        assert_eq!(counters.connections, 1, "{counters:?}");
        let versions: Vec<_> = notes
            .lock()
            .unwrap()
            .iter()
            .filter_map(|n| match n {
                HttpExchangeNote::Response { version, .. } => Some(*version),
                _ => None,
            })
            .collect();
        assert!(
            versions.iter().all(|v| *v == Some(HttpVersion::Http2)),
            "{versions:?}"
        );
        client.close().await;
    });
    // Two tunnels: in the first, mcpwire's own client's TLS handshake learned by ALPN that the
    // server speaks HTTP/2 and carried nothing; every exchange went through the second,
    // libcurl's.
    let counts = proxy.counts();
    assert_eq!(counts.tunnels, 2, "{counts:?}: {:?}", proxy.log());
    assert_eq!(counts.requests, 0, "{counts:?}");
    let port = server
        .url()
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let tunnel = format!("CONNECT 127.0.0.1:{port} HTTP/1.1");
    assert_eq!(proxy.log(), [tunnel.clone(), tunnel], "{counts:?}");
    // The server saw every request over HTTP/2, on the proxy's one connection (its log is
    // read as it comes: the DELETE at close is the last line).
    assert!(eventually(|| server
        .requests()
        .iter()
        .any(|r| r.method == "DELETE")));
    let clients: std::collections::BTreeSet<String> =
        server.requests().into_iter().map(|r| r.client).collect();
    assert_eq!(clients.len(), 1, "{}", server.stderr_text());
    assert!(server.requests().iter().all(|r| r.version == "2"));

    // HTTP/1.1 only: one tunnel per connection the client opens.
    let server = python_h2(true, &[]);
    let proxy = Proxy::start();
    run(async {
        let mut options = server.client_options();
        options.proxy = through(&proxy, &[]);
        options.version = HttpVersionChoice::Http1Only;
        let (client, _notes) = connect(&server.config(), options, Era::Handshake).await;
        exercise_py_server(&client, "streamed through the proxy").await;
        let connections = client.http_counters().unwrap().connections;
        client.close().await;
        let counts = proxy.counts();
        assert!(
            counts.tunnels >= connections,
            "{counts:?} for {connections} connections"
        );
        assert_eq!(counts.requests, 0, "{counts:?}");
    });
    assert!(server.requests().iter().all(|r| r.version == "1.1"));
}

#[test]
fn a_proxy_that_is_not_there_fails_the_connect_unsent() {
    if peers_skipped("a_proxy_that_is_not_there_fails_the_connect_unsent") {
        return;
    }
    let (config, server) = python_http(&[]);
    let gone = format!("http://127.0.0.1:{}", mcpwire_tests::free_port());
    // (proxy URL, the kinds accepted in the error's Debug form)
    let cases = [
        // Nothing listens at the proxy's port: the backend knows a proxy was in the way.
        (gone, &["kind: Proxy(Unreachable)"][..]),
        // The proxy's name does not resolve: libcurl's own code (CURLE_COULDNT_RESOLVE_PROXY).
        (
            "http://no-such-proxy.invalid:3128".to_owned(),
            &["kind: Proxy(Unreachable)"][..],
        ),
    ];
    for (url, kinds) in cases {
        run(async {
            let mut options = ConnectOptions::default();
            options.http_client.proxy = ProxySetting::Url {
                url: url.clone(),
                no_proxy: Vec::new(),
            };
            let err = mcpwire_tests::scenario::connect(&config, options)
                .await
                .unwrap_err();
            let debug = format!("{err:?}");
            eprintln!("{url}: {err}\n{debug}");
            // Nothing reached anyone: a failure to connect, not sent.
            assert!(!err.maybe_executed(), "{debug}");
            assert!(kinds.iter().any(|k| debug.contains(k)), "{url}: {debug}");
            assert!(err.to_string().contains("not sent"), "{err}");
        });
    }
    drop(server);
}

#[test]
fn proxy_credentials_are_sent_and_never_shown() {
    if peers_skipped("proxy_credentials_are_sent_and_never_shown") {
        return;
    }
    let proxy = Proxy::requiring("alice:s3cret");
    let port = proxy.addr().port();
    let setting = ProxySetting::Url {
        url: format!("http://alice:s3cret@127.0.0.1:{port}"),
        no_proxy: Vec::new(),
    };
    // http: each request carries the credentials.
    let server = python_h2(false, &[]);
    run(async {
        let mut options = HttpClientOptions::default();
        options.proxy = setting.clone();
        let (client, notes) = connect(&server.config(), options, Era::Handshake).await;
        exercise_py_server(&client, "streamed through the proxy").await;
        client.close().await;
        let notes = format!("{:?}", notes.lock().unwrap());
        assert!(!notes.contains("s3cret"), "{notes}");
    });
    // https: the CONNECT carries them, on libcurl (HTTP/2) and on mcpwire's own client
    // (HTTP/1.1): one tunnel each, its connection reused.
    let tls = python_h2(true, &[]);
    let mut connections = 0;
    for version in [HttpVersionChoice::Http2, HttpVersionChoice::Http1Only] {
        run(async {
            let mut options = tls.client_options();
            options.proxy = setting.clone();
            options.version = version;
            let (client, _notes) = connect(&tls.config(), options, Era::Handshake).await;
            exercise_py_server(&client, "streamed through the proxy").await;
            connections += client.http_counters().unwrap().connections;
            client.close().await;
        });
    }
    let counts = proxy.counts();
    assert_eq!(counts.unauthorized, 0, "{counts:?}: {:?}", proxy.log());
    // A tunnel per connection (HTTP/2 has one; HTTP/1.1 one for the calls and one for the
    // stream), each kept for the calls that follow.
    assert!(counts.requests >= 4, "{counts:?}");
    assert!(
        (3..=connections + 1).contains(&counts.tunnels),
        "{counts:?} for {connections} connections"
    );
    let expected = Some("Basic YWxpY2U6czNjcmV0".to_owned());
    assert!(
        proxy.authorizations().iter().all(|a| *a == expected),
        "{:?}",
        proxy.authorizations()
    );

    // Wrong credentials: the proxy refuses, and no error shows the password.
    let wrong = format!("http://alice:wrong-s3cret@127.0.0.1:{port}");
    for what in ["http", "https"] {
        let config = if what == "http" {
            server.config()
        } else {
            tls.config()
        };
        run(async {
            let mut http_client = tls.client_options();
            http_client.proxy = ProxySetting::Url {
                url: wrong.clone(),
                no_proxy: Vec::new(),
            };
            let options = ConnectOptions {
                http_client,
                ..ConnectOptions::default()
            };
            let err = mcpwire_tests::scenario::connect(&config, options)
                .await
                .unwrap_err();
            let shown = format!("{err}\n{err:?}");
            eprintln!("{what} through a proxy refusing the credentials: {shown}");
            // Either way the failure is the proxy's, and says what to do.
            assert_credentials_wanted(&err, true, &format!("http://127.0.0.1:{port}"));
            // The request never reached the server: it was not sent.
            assert!(shown.contains("not sent"), "{shown}");
        });
    }
    // Refused each time (libcurl tries a refused CONNECT a second time before it gives up, and
    // a second CONNECT asks the proxy why); no further tunnel or request went through.
    let after = proxy.counts();
    assert!(after.unauthorized >= 2, "{after:?}: {:?}", proxy.log());
    assert_eq!(
        (after.tunnels, after.requests),
        (counts.tunnels, counts.requests),
        "{after:?}"
    );
}

#[test]
fn socks5_proxies_tunnel_http_and_https() {
    if peers_skipped("socks5_proxies_tunnel_http_and_https") {
        return;
    }
    let cleartext = python_h2(false, &[]);
    let tls = python_h2(true, &[]);
    for scheme in ["socks5", "socks5h"] {
        for server in [&cleartext, &tls] {
            let proxy = Proxy::start();
            run(async {
                let mut options = server.client_options();
                options.proxy = ProxySetting::Url {
                    url: format!("{scheme}://127.0.0.1:{}", proxy.addr().port()),
                    no_proxy: Vec::new(),
                };
                let (client, _notes) = connect(&server.config(), options, Era::Handshake).await;
                exercise_py_server(&client, "streamed through the proxy").await;
                let connections = client.http_counters().unwrap().connections;
                client.close().await;
                let counts = proxy.counts();
                eprintln!("{scheme} to {}: {counts:?}", server.url());
                // One SOCKS tunnel per connection the client opened (the DELETE at close may
                // open one more).
                assert!(
                    counts.socks_tunnels >= connections.max(1),
                    "{counts:?} for {connections} connections: {:?}",
                    proxy.log()
                );
                assert_eq!((counts.tunnels, counts.requests), (0, 0), "{counts:?}");
                if server.url().starts_with("https") {
                    // HTTP/2 inside: one connection, one tunnel.
                    assert_eq!(counts.socks_tunnels, 1, "{:?}", proxy.log());
                }
            });
        }
    }
}

/// Checks that `err` is the proxy `proxy` asking for credentials (refusing those given when
/// `given`): its kind, words a person can act on, never "may have run", no password shown.
fn assert_credentials_wanted(err: &mcpwire::Error, given: bool, proxy: &str) {
    let (shown, debug) = (err.to_string(), format!("{err:?}"));
    eprintln!(
        "credentials {}: {shown}",
        if given { "refused" } else { "wanted" }
    );
    assert!(!err.maybe_executed(), "{debug}");
    assert!(debug.contains("kind: Proxy(Credentials)"), "{debug}");
    assert!(
        !shown.contains("may have") && !shown.contains("cut short"),
        "{shown}"
    );
    assert!(!format!("{shown}{debug}").contains("s3cret"), "{debug}");
    assert!(shown.contains(&format!("the proxy {proxy} ")), "{shown}");
    assert!(shown.contains("HTTP 407"), "{shown}");
    if given {
        assert!(
            shown.contains("refused the credentials in its URL"),
            "{shown}"
        );
    } else {
        assert!(
            shown.contains("wants credentials")
                && shown.contains("put them in the proxy URL")
                && shown.contains("http://user:password@host:port"),
            "{shown}"
        );
    }
}

/// `n` sequential `tools/call`s of `add`, each of which must succeed.
async fn calls(client: &Client, n: u64, what: &str) {
    for i in 0..n {
        let r = client
            .call_tool("add", json!({"a": i, "b": 1}))
            .await
            .unwrap_or_else(|e| panic!("{what}: call {i} failed: {e}"));
        assert_eq!(r.text(), (i + 1).to_string(), "{what}");
    }
}

/// Whether any response came on a connection an earlier exchange had used.
fn any_reused(notes: &Notes) -> bool {
    notes.lock().unwrap().iter().any(|n| {
        matches!(
            n,
            HttpExchangeNote::Response {
                reused_connection: true,
                ..
            }
        )
    })
}

#[test]
fn a_proxy_that_closes_without_saying_so_carries_every_call() {
    if peers_skipped("a_proxy_that_closes_without_saying_so_carries_every_call") {
        return;
    }
    let unannounced = || {
        Proxy::with_options(ProxyOptions {
            close_unannounced: true,
            ..ProxyOptions::default()
        })
    };
    // Plain http: each response head looks like a keep-alive connection's, and the proxy
    // closes it after the response; a call sent on it would be lost after sending. None is.
    let server = python_h2(false, &[]);
    let proxy = unannounced();
    run(async {
        let mut options = HttpClientOptions::default();
        options.proxy = through(&proxy, &[]);
        let (client, notes) = connect(&server.config(), options, Era::Handshake).await;
        calls(
            &client,
            20,
            "plain http through a proxy closing unannounced",
        )
        .await;
        exercise_py_server(&client, "streamed through the proxy").await;
        calls(&client, 5, "plain http, after a stream").await;
        assert!(!any_reused(&notes), "{:?}", notes.lock().unwrap());
        let started = client.http_counters().unwrap().started;
        client.close().await;
        assert!(
            eventually(|| proxy.counts().requests >= started),
            "{:?}: {:?}",
            proxy.counts(),
            proxy.log()
        );
    });
    assert_eq!(proxy.counts().tunnels, 0);

    // https: in a CONNECT tunnel the connection is the server's (HTTP/1.1 inside, for several
    // connections); the proxy's habit does not touch it, and its connections are reused.
    let server = python_h2(true, &[]);
    let proxy = unannounced();
    run(async {
        let mut options = server.client_options();
        options.proxy = through(&proxy, &[]);
        options.version = HttpVersionChoice::Http1Only;
        let (client, notes) = connect(&server.config(), options, Era::Handshake).await;
        calls(&client, 20, "https through a proxy closing unannounced").await;
        exercise_py_server(&client, "streamed through the tunnel").await;
        assert!(any_reused(&notes), "a tunnel's connection is reused");
        let counters = client.http_counters().unwrap();
        client.close().await;
        let counts = proxy.counts();
        eprintln!("https through a proxy closing unannounced: {counts:?}, {counters:?}");
        assert_eq!(counts.requests, 0, "{counts:?}");
        assert!(
            counts.tunnels >= 1 && counts.tunnels < counters.started,
            "{counts:?} for {counters:?}"
        );
    });
}

#[test]
fn a_proxy_asking_for_credentials_says_so_on_both_paths() {
    if peers_skipped("a_proxy_asking_for_credentials_says_so_on_both_paths") {
        return;
    }
    let http = python_h2(false, &[]);
    let https = python_h2(true, &[]);
    for close_unannounced in [false, true] {
        let proxy = Proxy::with_options(ProxyOptions {
            credentials: Some("alice:s3cret".into()),
            close_unannounced,
            ..ProxyOptions::default()
        });
        let shown = proxy.url();
        for (server, libcurl) in [
            (&http, false),
            (&http, true),
            (&https, false),
            (&https, true),
        ] {
            for given in [None, Some("alice:wrong-s3cret")] {
                let url = match given {
                    None => proxy.url(),
                    Some(credentials) => format!("http://{credentials}@{}", proxy.addr()),
                };
                eprintln!(
                    "{} through a proxy{} with {given:?}",
                    server.url(),
                    if close_unannounced {
                        " closing unannounced"
                    } else {
                        ""
                    }
                );
                run(async {
                    let mut http_client = server.client_options();
                    http_client.proxy = ProxySetting::Url {
                        url,
                        no_proxy: Vec::new(),
                    };
                    // Both stacks: mcpwire's own client (HTTP/1.1), and libcurl (HTTP/2 over
                    // TLS, HTTP/1.1 by the escape hatch in clear).
                    http_client.http1_via_libcurl = libcurl;
                    if !libcurl {
                        http_client.version = HttpVersionChoice::Http1Only;
                    }
                    let options = ConnectOptions {
                        http_client,
                        ..ConnectOptions::default()
                    };
                    let err = mcpwire_tests::scenario::connect(&server.config(), options)
                        .await
                        .unwrap_err();
                    assert_credentials_wanted(&err, given.is_some(), &shown);
                });
            }
        }
        let counts = proxy.counts();
        assert_eq!((counts.requests, counts.tunnels), (0, 0), "{counts:?}");
        assert!(counts.unauthorized >= 8, "{counts:?}");
    }
    // Nothing reached either server.
    assert!(http.requests().is_empty() && https.requests().is_empty());
}

#[test]
fn a_tools_call_the_proxy_asks_credentials_for_did_not_run() {
    if peers_skipped("a_tools_call_the_proxy_asks_credentials_for_did_not_run") {
        return;
    }
    // A plain-http call that meets a 407 (the proxy's configuration changed under a live
    // connection), from a proxy that answers it as in the report: no `Connection: close`, a
    // body cut short by the close.
    let server = python_h2(false, &[]);
    let proxy = Proxy::with_options(ProxyOptions {
        close_unannounced: true,
        ..ProxyOptions::default()
    });
    run(async {
        let mut options = HttpClientOptions::default();
        options.proxy = through(&proxy, &[]);
        let (client, _notes) = connect(&server.config(), options, Era::Handshake).await;
        calls(&client, 2, "before the proxy wants credentials").await;
        let served = server.requests_of("tools/call").len();
        proxy.set_credentials(Some("alice:s3cret"));
        let err = client
            .call_tool("add", json!({"a": 1, "b": 2}))
            .await
            .unwrap_err();
        assert_credentials_wanted(&err, false, &proxy.url());
        assert_eq!(
            server.requests_of("tools/call").len(),
            served,
            "the call reached the server"
        );
        // The proxy lets requests through again: the same connection goes on.
        proxy.set_credentials(None);
        calls(&client, 2, "after the proxy let requests through again").await;
        client.close().await;
    });
}

#[test]
fn a_proxy_that_cannot_be_reached_or_refuses_the_tunnel_says_which() {
    // No server is needed: each request stops at the proxy.
    let gone = format!("http://127.0.0.1:{}", free_port());
    let closed = free_port();
    let plain = Proxy::start();
    let port_443_only = Proxy::with_options(ProxyOptions {
        connect_ports: vec![443],
        ..ProxyOptions::default()
    });
    let socks = format!("socks5h://{}", plain.addr());
    let tls_port = free_port();
    // (what, server URL, proxy URL, kind, words)
    let cases = [
        (
            "nothing listens at the proxy's port (CONNECT)",
            format!("https://127.0.0.1:{tls_port}/mcp"),
            gone.clone(),
            "Proxy(Unreachable)",
            format!("the proxy {gone} cannot be reached"),
        ),
        (
            "nothing listens at the proxy's port (plain http)",
            format!("http://127.0.0.1:{tls_port}/mcp"),
            gone.clone(),
            "Proxy(Unreachable)",
            format!("the proxy {gone} cannot be reached"),
        ),
        (
            "the proxy refuses the port",
            format!("https://127.0.0.1:{tls_port}/mcp"),
            port_443_only.url(),
            "Proxy(Refused)",
            format!("refused to open a tunnel to 127.0.0.1:{tls_port} (HTTP 403)"),
        ),
        (
            "the proxy refuses the host",
            "https://mcp.invalid/mcp".to_owned(),
            plain.url(),
            "Proxy(Refused)",
            "refused to open a tunnel to mcp.invalid:443 (HTTP 403)".to_owned(),
        ),
        (
            "the proxy cannot reach the server",
            format!("https://127.0.0.1:{closed}/mcp"),
            plain.url(),
            "Proxy(Refused)",
            format!("could not open a tunnel to 127.0.0.1:{closed} (HTTP 502)"),
        ),
        (
            "a SOCKS proxy refuses the host",
            "https://mcp.invalid/mcp".to_owned(),
            socks.clone(),
            "Proxy(Refused)",
            format!("the SOCKS proxy {socks} refused to connect to mcp.invalid:443"),
        ),
    ];
    for (what, server, proxy, kind, words) in cases {
        run(async {
            let mut options = ConnectOptions::default();
            options.http_client.proxy = ProxySetting::Url {
                url: proxy,
                no_proxy: Vec::new(),
            };
            let err = mcpwire_tests::scenario::connect(&ServerConfig::http(&server), options)
                .await
                .unwrap_err();
            let (shown, debug) = (err.to_string(), format!("{err:?}"));
            eprintln!("{what}: {shown}");
            assert!(!err.maybe_executed(), "{what}: {debug}");
            assert!(debug.contains(&format!("kind: {kind}")), "{what}: {debug}");
            assert!(shown.contains(&words), "{what}: {shown}");
            assert!(
                shown.contains(&format!("{server} not reached through the proxy: not sent")),
                "{what}: {shown}"
            );
            for other in ["credentials", "cannot be reached", "refused to"] {
                if !words.contains(other) {
                    assert!(!shown.contains(other), "{what}: {shown}");
                }
            }
        });
    }
    // Only a CONNECT (and the proxy's `502` to it) reached the proxy's origin side.
    let counts = plain.counts();
    assert_eq!(counts.requests, 0, "{counts:?}: {:?}", plain.log());
}

#[test]
fn a_407_from_a_proxy_the_client_does_not_know_of_is_still_the_proxys() {
    // An intercepting proxy on the way to a plain-http server the client reaches "directly"
    // answers a call with 407: only a proxy does. Both HTTP clients hand the status to the
    // core, which reads it as the proxy wanting credentials, never as the server's failure.
    for native in [true, false] {
        let mut rules = handshake_rules("s-1", 405);
        rules.insert(
            0,
            Rule::post("tools/call").status_with(
                407,
                &[
                    ("Proxy-Authenticate", "Basic realm=\"corp\""),
                    ("Content-Type", "text/html"),
                ],
                "<html>Proxy Authentication Required</html>",
            ),
        );
        let server = FaultServer::start(rules);
        run(async {
            let mut options = ConnectOptions::default();
            options.http_client.proxy = ProxySetting::Direct;
            options.http_client.http1_via_libcurl = !native;
            let client = connect_handshake(&ServerConfig::http(server.url()), options).await;
            let err = client
                .call_tool("add", json!({"a": 1, "b": 2}))
                .await
                .unwrap_err();
            let (shown, debug) = (err.to_string(), format!("{err:?}"));
            eprintln!("native {native}: {shown}");
            assert!(!err.maybe_executed(), "{debug}");
            assert!(debug.contains("kind: Proxy(Credentials)"), "{debug}");
            assert!(
                shown.contains(&format!(
                    "HTTP 407 from the proxy, not from {} (the request did not reach it)",
                    server.url()
                )) && shown.contains("http://user:password@host:port"),
                "{shown}"
            );
            client.close().await;
        });
    }
}

/// A host that must never be asked to sign in: counts the times it was.
struct NeverAsked(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl mcpwire::oauth::Authorizer for NeverAsked {
    fn authorize(
        &self,
        _url: &mcpwire::oauth::Url,
    ) -> mcpwire::BoxFuture<Result<String, mcpwire::oauth::AuthorizeError>> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async { Err(mcpwire::oauth::AuthorizeError("asked".into())) })
    }
}

/// A proxy that asks for its credentials as tinyproxy does, with `401` and `WWW-Authenticate:
/// Basic realm="Tinyproxy"`, on both stacks, in clear (the proxy forwards the request: the 401
/// may be the proxy's or the server's) and over TLS (its answer to the CONNECT, surely its
/// own): the error names the proxy and how to give it credentials, never "may have run", and
/// no OAuth discovery follows (before, the 401 was blamed on the server and the discovery
/// went through the proxy, five more refusals).
#[test]
fn a_proxy_asking_for_credentials_with_a_401_is_named_and_no_oauth_discovery_follows() {
    use mcpwire_tests::tls_front::TlsFront;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let server = FaultServer::start(handshake_rules("s-1", 405));
    let front = TlsFront::start(server.addr());
    for given in [None, Some("alice:wrong-s3cret")] {
        let proxy = Proxy::with_options(ProxyOptions {
            credentials: Some("alice:s3cret".into()),
            asks_with_401: true,
            ..ProxyOptions::default()
        });
        let proxy_url = match given {
            None => proxy.url(),
            Some(credentials) => format!("http://{credentials}@{}", proxy.addr()),
        };
        for (url, libcurl) in [
            (server.url(), false),
            (server.url(), true),
            (front.url(), false),
            (front.url(), true),
        ] {
            let asked = Arc::new(AtomicUsize::new(0));
            let mut http_client = HttpClientOptions::default();
            http_client.proxy = ProxySetting::Url {
                url: proxy_url.clone(),
                no_proxy: Vec::new(),
            };
            http_client.http1_via_libcurl = libcurl;
            http_client.tls.danger_accept_invalid_certificates = true;
            let redirect = "http://127.0.0.1:9/callback";
            let options = ConnectOptions {
                http_client,
                oauth: Some(mcpwire::oauth::OAuthOptions::new(
                    NeverAsked(asked.clone()),
                    redirect,
                )),
                ..ConnectOptions::default()
            };
            let before = proxy.log().len();
            let err = run(async {
                mcpwire_tests::scenario::connect(&ServerConfig::http(&url), options)
                    .await
                    .unwrap_err()
            });
            let (shown, debug) = (err.to_string(), format!("{err:?}"));
            let case = format!("{url} (libcurl: {libcurl}, credentials: {given:?})");
            eprintln!("{case}: {shown}");
            assert!(!err.maybe_executed(), "{case}: {debug}");
            assert!(
                debug.contains("kind: Proxy(Credentials)"),
                "{case}: {debug}"
            );
            assert!(!shown.contains("may have"), "{case}: {shown}");
            assert!(!format!("{shown}{debug}").contains("s3cret"), "{debug}");
            assert!(shown.contains("HTTP 401"), "{case}: {shown}");
            assert!(shown.contains(&proxy.url()), "{case}: {shown}");
            let how = match given {
                None => "put",
                Some(_) => "refused the credentials in its URL",
            };
            assert!(shown.contains(how), "{case}: {shown}");
            if given.is_none() {
                assert!(
                    shown.contains("http://user:password@host:port"),
                    "{case}: {shown}"
                );
            }
            // No OAuth discovery went through the proxy, nobody was asked to sign in.
            let log = proxy.log()[before..].to_vec();
            assert!(
                !log.iter().any(|l| l.contains(".well-known")),
                "{case}: {log:?}"
            );
            assert!(log.iter().all(|l| l.ends_with("-> 401")), "{case}: {log:?}");
            assert_eq!(asked.load(Ordering::SeqCst), 0, "{case}");
        }
    }
    assert!(server.requests().is_empty(), "{:?}", server.log());
}
