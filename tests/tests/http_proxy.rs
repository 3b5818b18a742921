//! Proxies set in the client's options (`ProxySetting::Url`), through a loopback proxy that
//! counts what goes through it: plain `http://` requests in absolute form, `https://` in a
//! CONNECT tunnel (HTTP/2 inside it), hosts on the no-proxy list reached directly, a proxy that
//! is not there. The proxy from the environment is tested in `http_proxy_env.rs`, alone in its
//! binary since it sets environment variables.

use std::time::{Duration, Instant};

use mcpwire::{
    Client, ConnectOptions, Era, HttpClientOptions, HttpExchangeNote, HttpVersion,
    HttpVersionChoice, ProxySetting, ServerConfig,
};
use mcpwire_tests::h2::python_h2;
use mcpwire_tests::proxy::Proxy;
use mcpwire_tests::scenario::{exercise_py_server, noting_exchanges, run, Notes};
use mcpwire_tests::{peers_skipped, python_http};

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
    let client = mcpwire::connect_smol(config, options)
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
    let counts = proxy.counts();
    assert_eq!(counts.tunnels, 1, "{counts:?}: {:?}", proxy.log());
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
    assert_eq!(
        proxy.log(),
        [format!("CONNECT 127.0.0.1:{port} HTTP/1.1")],
        "{counts:?}"
    );
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
        (gone, &["kind: Proxy"][..]),
        // The proxy's name does not resolve: libcurl's own code (CURLE_COULDNT_RESOLVE_PROXY).
        (
            "http://no-such-proxy.invalid:3128".to_owned(),
            &["kind: Proxy"][..],
        ),
    ];
    for (url, kinds) in cases {
        run(async {
            let mut options = ConnectOptions::default();
            options.http_client.proxy = ProxySetting::Url {
                url: url.clone(),
                no_proxy: Vec::new(),
            };
            let err = mcpwire::connect_smol(&config, options).await.unwrap_err();
            let debug = format!("{err:?}");
            eprintln!("{url}: {err}\n{debug}");
            // Nothing reached anyone: a failure to connect, not sent.
            assert!(!err.may_have_run(), "{debug}");
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
    // https: the CONNECT carries them.
    let tls = python_h2(true, &[]);
    run(async {
        let mut options = tls.client_options();
        options.proxy = setting.clone();
        let (client, _notes) = connect(&tls.config(), options, Era::Handshake).await;
        exercise_py_server(&client, "streamed through the proxy").await;
        client.close().await;
    });
    let counts = proxy.counts();
    assert_eq!(counts.unauthorized, 0, "{counts:?}: {:?}", proxy.log());
    assert!(counts.requests >= 4 && counts.tunnels == 1, "{counts:?}");
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
            let err = mcpwire::connect_smol(&config, options).await.unwrap_err();
            let shown = format!("{err}\n{err:?}");
            eprintln!("{what} through a proxy refusing the credentials: {shown}");
            assert!(!shown.contains("s3cret"), "{shown}");
            assert!(!err.may_have_run(), "{shown}");
            // Either way the failure is the proxy's.
            assert!(shown.contains("kind: Proxy"), "{shown}");
            if what == "http" {
                // The proxy's answer comes back as the response.
                assert!(shown.contains("407"), "{shown}");
            } else {
                // libcurl fails the CONNECT with CURLE_COULDNT_CONNECT ("CONNECT tunnel
                // failed, response 407" stays in its error buffer, which isahc does not pass
                // on): the request was not sent.
                assert!(shown.contains("not sent"), "{shown}");
            }
        });
    }
    // Refused each time (libcurl tries a refused CONNECT a second time before it gives up);
    // no further tunnel or request went through.
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
