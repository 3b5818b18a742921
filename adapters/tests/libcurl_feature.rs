//! Feature `libcurl`: what only libcurl speaks here (HTTP/2 by ALPN and h2c, SOCKS and
//! `https://` proxy URLs, a URL with credentials) fails at connect in a build without it, with
//! `Error::FeatureMissing` naming the feature and what asked for it, before anything is sent;
//! in a build with it, the same connections pass that check (the connect returns its client and
//! driver; the handshake, not run here, would go through libcurl).

use mcpwire::ServerConfig;
use mcpwire::{ConnectOptions, Error, HttpClientOptions, HttpVersionChoice, ProxySetting};

/// The default options, straight to the server whatever the environment says.
fn direct() -> HttpClientOptions {
    let mut options = HttpClientOptions::default();
    options.proxy = ProxySetting::Direct;
    options
}

/// Each way of asking for libcurl: the words the error must hold, the URL, the options.
fn asks() -> Vec<(&'static str, &'static str, HttpClientOptions)> {
    let direct = direct();
    let version = |version| {
        let mut options = direct.clone();
        options.version = version;
        options
    };
    let proxy = |url: &str| {
        let mut options = HttpClientOptions::default();
        options.proxy = ProxySetting::Url {
            url: url.into(),
            no_proxy: vec![],
        };
        options
    };
    // Nothing listens on port 1.
    let url = "http://127.0.0.1:1/mcp";
    vec![
        ("HTTP/2", url, version(HttpVersionChoice::Http2)),
        (
            "HTTP/2",
            "https://127.0.0.1:1/mcp",
            version(HttpVersionChoice::Negotiate),
        ),
        (
            "(h2c)",
            url,
            version(HttpVersionChoice::Http2PriorKnowledge),
        ),
        ("a SOCKS proxy", url, proxy("socks5h://127.0.0.1:1")),
        ("https:// proxy URL", url, proxy("https://127.0.0.1:1")),
        (
            "credentials",
            "http://ada:secret@127.0.0.1:1/mcp",
            direct.clone(),
        ),
    ]
}

#[test]
fn what_only_libcurl_speaks_needs_the_feature_named_at_connect() {
    for (words, url, http_client) in asks() {
        let options = ConnectOptions {
            http_client,
            ..ConnectOptions::default()
        };
        let connected = mcpwire::connect(&ServerConfig::http(url), options);
        if cfg!(feature = "libcurl") {
            assert!(connected.is_ok(), "{url} ({words}): {:?}", connected.err());
            continue;
        }
        let Err(error) = connected else {
            panic!("{url} ({words}): not refused without libcurl");
        };
        let shown = error.to_string();
        match &error {
            Error::FeatureMissing {
                target,
                feature,
                needed_for,
            } => {
                assert_eq!(*feature, "libcurl", "{shown}");
                assert!(needed_for.contains(words), "{url}: {shown}");
                assert!(!target.contains("secret"), "{shown}");
            }
            other => panic!("{url} ({words}): {other:?}"),
        }
        assert!(shown.contains("`libcurl` feature"), "{shown}");
    }
    // What mcpwire's own client speaks needs no feature.
    let options = ConnectOptions {
        http_client: direct(),
        ..ConnectOptions::default()
    };
    let connected = mcpwire::connect(&ServerConfig::http("http://127.0.0.1:1/mcp"), options);
    assert!(connected.is_ok(), "{:?}", connected.err());
}
