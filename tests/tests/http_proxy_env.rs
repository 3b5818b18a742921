//! The proxy from the environment, read as curl reads it: `http_proxy` (lower case only) for
//! `http://` URLs, `https_proxy` or `HTTPS_PROXY` for `https://` (in a CONNECT tunnel),
//! `ALL_PROXY` for both (SOCKS5 too), `NO_PROXY` for hosts reached directly; an explicit setting
//! (`ProxySetting::Direct`, `ProxySetting::Url`) wins over the environment.
//!
//! One test runs every case in turn, setting and removing the variables between cases: it is
//! alone in this binary, so nothing else in the process reads the environment meanwhile.

use std::time::Duration;

use futures_lite::future;
use mcpwire::{ConnectOptions, Era, HttpClientOptions, ProxySetting, ServerConfig};
use mcpwire_tests::h2::python_h2;
use mcpwire_tests::proxy::{Proxy, ProxyCounts};
use mcpwire_tests::scenario::Runtime;
use mcpwire_tests::{peers_skipped, python_http};
use serde_json::json;

/// Every variable libcurl reads for proxies, in both cases.
const VARS: [&str; 8] = [
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
];

fn clear_env() {
    for v in VARS {
        std::env::remove_var(v);
    }
}

/// Connects with `http_client`, lists the tools, calls one and closes. Returns how many
/// exchanges the client started.
fn use_server(what: &str, config: &ServerConfig, http_client: HttpClientOptions) -> u64 {
    let rt = Runtime::from_env();
    rt.block_on(future::or(
        async {
            let options = ConnectOptions {
                era: Era::Handshake,
                http_client,
                ..ConnectOptions::default()
            };
            let client = rt
                .connect(config, options)
                .await
                .unwrap_or_else(|e| panic!("{what}: connect: {e}"));
            let tools = client.list_tools().await.unwrap();
            assert!(tools.iter().any(|t| t.name == "add"), "{what}");
            let r = client
                .call_tool("add", json!({"a": 1, "b": 2}))
                .await
                .unwrap_or_else(|e| panic!("{what}: call: {e}"));
            assert_eq!(r.text(), "3", "{what}");
            let started = client.http_counters().unwrap().started;
            client.close().await;
            started
        },
        async {
            rt.sleep(Duration::from_secs(30)).await;
            panic!("{what}: not done within 30 s")
        },
    ))
}

/// Which way a case's traffic must go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// Absolute-form requests through the proxy.
    Requests,
    /// CONNECT tunnels through the proxy with HTTP/2 inside: two, the first for mcpwire's own
    /// client's TLS handshake, which learns by ALPN that the server speaks HTTP/2 and carries
    /// nothing, the second libcurl's, which carries every exchange.
    Tunnel,
    /// A SOCKS5 tunnel per connection through the proxy.
    Socks,
    /// Straight to the server: the proxy sees nothing.
    Direct,
}

fn check(what: &str, way: Way, counts: &ProxyCounts, log: &[String]) {
    match way {
        Way::Requests => {
            assert!(counts.requests >= 3, "{what}: {counts:?} {log:?}");
            assert_eq!(counts.tunnels, 0, "{what}: {counts:?} {log:?}");
        }
        Way::Tunnel => {
            assert_eq!(counts.tunnels, 2, "{what}: {counts:?} {log:?}");
            assert_eq!(counts.requests, 0, "{what}: {counts:?} {log:?}");
        }
        Way::Socks => {
            assert!(counts.socks_tunnels >= 1, "{what}: {counts:?} {log:?}");
            assert_eq!(
                (counts.tunnels, counts.requests),
                (0, 0),
                "{what}: {counts:?}"
            );
        }
        Way::Direct => assert_eq!(counts, &ProxyCounts::default(), "{what}: {log:?}"),
    }
}

/// One case: the variables set, whether the server is the HTTPS one, whether the client's
/// setting is `ProxySetting::Direct`, and the way its requests must go.
struct Case {
    what: &'static str,
    vars: &'static [(&'static str, &'static str)],
    tls: bool,
    setting_direct: bool,
    way: Way,
}

/// A case against the plain-HTTP server.
fn over_http(what: &'static str, vars: &'static [(&'static str, &'static str)], way: Way) -> Case {
    Case {
        what,
        vars,
        tls: false,
        setting_direct: false,
        way,
    }
}

/// A case against the HTTPS server.
fn over_https(what: &'static str, vars: &'static [(&'static str, &'static str)], way: Way) -> Case {
    Case {
        tls: true,
        ..over_http(what, vars, way)
    }
}

impl Case {
    /// The client's setting is `ProxySetting::Direct`.
    fn setting_direct(self) -> Case {
        Case {
            setting_direct: true,
            ..self
        }
    }
}

#[test]
fn the_environment_proxy_as_curl_reads_it() {
    if peers_skipped("the_environment_proxy_as_curl_reads_it") {
        return;
    }
    let (http_config, _http_server) = python_http(&[]);
    let https = python_h2(true, &[]);
    let https_config = https.config();

    // Variables hold `{proxy}` for the proxy's URL and `{socks}` for its SOCKS5 URL.
    let cases = [
        over_http(
            "http_proxy for http",
            &[("http_proxy", "{proxy}")],
            Way::Requests,
        ),
        over_http(
            "HTTP_PROXY (upper case) is not read for http, as in curl",
            &[("HTTP_PROXY", "{proxy}")],
            Way::Direct,
        ),
        over_http(
            "ALL_PROXY for http",
            &[("ALL_PROXY", "{proxy}")],
            Way::Requests,
        ),
        over_http(
            "NO_PROXY names the host",
            &[("http_proxy", "{proxy}"), ("NO_PROXY", "127.0.0.1")],
            Way::Direct,
        ),
        over_http(
            "no_proxy (lower case) with a list",
            &[
                ("http_proxy", "{proxy}"),
                ("no_proxy", "example.com, 127.0.0.1"),
            ],
            Way::Direct,
        ),
        over_http(
            "NO_PROXY=*",
            &[("ALL_PROXY", "{proxy}"), ("NO_PROXY", "*")],
            Way::Direct,
        ),
        over_http(
            "NO_PROXY naming another host leaves the proxy in use",
            &[("http_proxy", "{proxy}"), ("NO_PROXY", "example.com")],
            Way::Requests,
        ),
        over_http(
            "ProxySetting::Direct ignores http_proxy",
            &[("http_proxy", "{proxy}"), ("ALL_PROXY", "{proxy}")],
            Way::Direct,
        )
        .setting_direct(),
        over_http(
            "ALL_PROXY with socks5h:// for http",
            &[("ALL_PROXY", "{socks}")],
            Way::Socks,
        ),
        over_https(
            "all_proxy (lower case) with socks5h:// for https",
            &[("all_proxy", "{socks}")],
            Way::Socks,
        ),
        over_https(
            "https_proxy for https",
            &[("https_proxy", "{proxy}")],
            Way::Tunnel,
        ),
        over_https(
            "HTTPS_PROXY for https",
            &[("HTTPS_PROXY", "{proxy}")],
            Way::Tunnel,
        ),
        over_https(
            "http_proxy is not for https",
            &[("http_proxy", "{proxy}")],
            Way::Direct,
        ),
        over_https(
            "NO_PROXY for https",
            &[("https_proxy", "{proxy}"), ("NO_PROXY", "127.0.0.1")],
            Way::Direct,
        ),
        over_https(
            "ProxySetting::Direct ignores https_proxy",
            &[("https_proxy", "{proxy}")],
            Way::Direct,
        )
        .setting_direct(),
    ];

    for Case {
        what,
        vars,
        tls,
        setting_direct,
        way,
    } in cases
    {
        clear_env();
        let proxy = Proxy::start();
        for (name, value) in vars {
            let socks = format!("socks5h://{}", proxy.addr());
            std::env::set_var(
                name,
                value
                    .replace("{proxy}", &proxy.url())
                    .replace("{socks}", &socks),
            );
        }
        let (config, mut options) = if tls {
            (&https_config, https.client_options())
        } else {
            (&http_config, HttpClientOptions::default())
        };
        if setting_direct {
            options.proxy = ProxySetting::Direct;
        }
        let started = use_server(what, config, options);
        clear_env();
        let counts = proxy.counts();
        eprintln!("{what}: {counts:?} ({started} exchanges)");
        check(what, way, &counts, &proxy.log());
    }

    // An explicit proxy wins over the environment's.
    clear_env();
    let from_env = Proxy::start();
    let explicit = Proxy::start();
    std::env::set_var("http_proxy", from_env.url());
    std::env::set_var("ALL_PROXY", from_env.url());
    let mut options = HttpClientOptions::default();
    options.proxy = ProxySetting::Url {
        url: explicit.url(),
        no_proxy: Vec::new(),
    };
    use_server("an explicit proxy over http_proxy", &http_config, options);
    clear_env();
    check(
        "the environment's proxy, unused",
        Way::Direct,
        &from_env.counts(),
        &from_env.log(),
    );
    check(
        "the explicit proxy",
        Way::Requests,
        &explicit.counts(),
        &explicit.log(),
    );

    // A proxy from the environment that wants credentials: the error names the variable the
    // credentials go in, on both paths (a forwarded request, a CONNECT).
    let asking = Proxy::requiring("alice:s3cret");
    let gone = format!("http://127.0.0.1:{}", mcpwire_tests::free_port());
    // (variable, value, the HTTPS server, what the error must say)
    let cases = [
        (
            "http_proxy",
            asking.url(),
            false,
            "put them in the proxy URL in the environment variable http_proxy",
        ),
        (
            "HTTPS_PROXY",
            asking.url(),
            true,
            "put them in the proxy URL in the environment variable HTTPS_PROXY",
        ),
        (
            "ALL_PROXY",
            format!("http://alice:wrong@{}", asking.addr()),
            true,
            "refused the credentials in its URL (HTTP 407, Basic): check the user name and \
             password in the environment variable ALL_PROXY",
        ),
        (
            "https_proxy",
            gone.clone(),
            true,
            "(from the environment variable https_proxy) cannot be reached",
        ),
    ];
    for (var, value, tls, words) in cases {
        clear_env();
        std::env::set_var(var, &value);
        let (config, http_client) = if tls {
            (&https_config, https.client_options())
        } else {
            (&http_config, HttpClientOptions::default())
        };
        let rt = Runtime::from_env();
        let err = rt.block_on(async {
            let options = ConnectOptions {
                era: Era::Handshake,
                http_client,
                ..ConnectOptions::default()
            };
            rt.connect(config, options).await.unwrap_err()
        });
        clear_env();
        let (shown, debug) = (err.to_string(), format!("{err:?}"));
        eprintln!("{var}: {shown}");
        assert!(!err.maybe_executed(), "{var}: {debug}");
        assert!(debug.contains("kind: Proxy("), "{var}: {debug}");
        assert!(shown.contains(words), "{var}: {shown}");
    }
    assert_eq!(
        (asking.counts().requests, asking.counts().tunnels),
        (0, 0),
        "{:?}",
        asking.log()
    );
}
