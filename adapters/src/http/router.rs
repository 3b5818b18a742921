//! The default HTTP client: which backend carries a request, decided here and nowhere else
//! ([`Router::route`]). mcpwire's own HTTP/1.1 client ([`native`](super::native)) carries what
//! it speaks; libcurl ([`IsahcBackend`], made when first needed: its agent thread is not
//! started for a connection that never uses it) carries the rest, each case a [`Need`]:
//! HTTP/1.1 when [`HttpClientOptions::http1_via_libcurl`] asks, h2c, a SOCKS proxy or an
//! `https://` proxy URL, a URL not written plainly enough to go on the wire as it is
//! (credentials in it, a character to encode), and a server whose TLS agreed `h2`.
//!
//! Over TLS, ALPN decides the version, as curl has it. When the options allow HTTP/2, the native
//! handshake offers `h2` and `http/1.1`: a server that agrees `http/1.1` (or nothing) is spoken
//! to in HTTP/1.1 there, and one that agrees `h2` gets its request back unsent
//! ([`Exchanged::Http2`]), which goes to libcurl, whose own handshake agrees `h2` again; that
//! server is remembered, so that its later requests go to libcurl at once. Learning it costs one
//! TLS handshake (through an HTTP proxy, one tunnel) per server and connection, closed unused.
//! HTTP/2 with prior knowledge (h2c) is for `http://` alone.
//!
//! At connect ([`Router::for_server`]) the server's own URL is routed: the options its
//! backend needs are checked then (a CA file that cannot be read, a client certificate that
//! cannot be used, a proxy URL libcurl refuses), and a server libcurl carries has every request
//! of its connection carried there.
//!
//! libcurl is built with feature `libcurl` only. Without it, the decision is the same and a
//! [`Need`] is refused: at connect, for the server's URL or for options that ask for HTTP/2
//! ([`Refused::NoLibcurl`], which the connection reports as
//! [`Error::FeatureMissing`](crate::Error::FeatureMissing)); later, a request that would go to
//! libcurl fails unsent, its message naming the feature.

#[cfg(feature = "libcurl")]
use std::collections::HashSet;
#[cfg(feature = "libcurl")]
use std::sync::OnceLock;
use std::sync::{Arc, Mutex};

use mcpwire_core::error::HttpErrorKind;
use mcpwire_core::HttpRequest;

use super::backend::{HttpBackend, HttpFailure, HttpResponse};
#[cfg(feature = "libcurl")]
use super::libcurl::IsahcBackend;
use super::native::{Exchanged, Hop, Http1Client, Target};
use super::options::{HttpClientOptions, HttpVersionChoice};
use super::url_parts::UrlParts;
use crate::future::BoxFuture;
use crate::runtime::Runtime;

/// The default HTTP client: mcpwire's own HTTP/1.1 client and libcurl, a request sent to the one
/// [`Router::route`] names.
pub(crate) struct Router {
    /// mcpwire's own client, or why every request goes to libcurl.
    native: Result<Http1Client, Need>,
    /// Whether a plain `http://` request speaks HTTP/2 with prior knowledge (h2c).
    prior_knowledge: bool,
    options: HttpClientOptions,
    /// The target of the last URL mcpwire's own client was given (a connection sends most of
    /// its requests to one URL): read once.
    last: Mutex<Option<Arc<Target>>>,
    #[cfg(feature = "libcurl")]
    libcurl: Arc<Libcurl>,
}

/// Why the default client cannot carry a server's connection.
#[derive(Debug)]
pub(crate) enum Refused {
    /// An option cannot be used, in words.
    Options(String),
    /// The connection needs libcurl, which this build leaves out.
    #[cfg(not(feature = "libcurl"))]
    NoLibcurl(Need),
}

/// The feature that builds libcurl.
#[cfg(not(feature = "libcurl"))]
pub(crate) const LIBCURL_FEATURE: &str = "libcurl";

/// Which backend carries a request.
pub(crate) enum Route<'a> {
    /// mcpwire's own client, to this target.
    Native(&'a Http1Client, Arc<Target>),
    /// libcurl, for this reason.
    Libcurl(Need),
}

/// What only libcurl speaks here: why a request goes to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// HTTP/1.1 through libcurl was asked for ([`HttpClientOptions::http1_via_libcurl`]).
    #[cfg(feature = "libcurl")]
    Asked,
    /// HTTP/2 with prior knowledge (h2c) to a plain `http://` URL.
    H2c,
    /// The proxy on the way is SOCKS, or its URL is `https://` (TLS to the proxy).
    Proxy,
    /// The URL is not written plainly enough to go on the wire as it is (credentials, a
    /// character to encode).
    Url,
    /// The server's TLS agreed `h2` (without feature `libcurl`: the options ask for HTTP/2).
    Http2,
}

impl Need {
    /// What it is, in words.
    pub(crate) fn words(self) -> &'static str {
        match self {
            #[cfg(feature = "libcurl")]
            Need::Asked => "HTTP/1.1 through libcurl (http1_via_libcurl)",
            Need::H2c => "HTTP/2 with prior knowledge (h2c)",
            Need::Proxy => "a SOCKS proxy or an https:// proxy URL",
            Need::Url => "a URL with credentials or characters to encode",
            Need::Http2 => "HTTP/2",
        }
    }

    /// What the options ask for that only libcurl speaks, whatever the URL: HTTP/2 in any form
    /// (by ALPN over TLS, or h2c).
    #[cfg(not(feature = "libcurl"))]
    fn of_options(options: &HttpClientOptions) -> Option<Need> {
        match options.version {
            HttpVersionChoice::Http1Only => None,
            HttpVersionChoice::Http2PriorKnowledge => Some(Need::H2c),
            _ => Some(Need::Http2),
        }
    }

    /// The failure of a request that would go to libcurl, in a build without it: unsent.
    #[cfg(not(feature = "libcurl"))]
    fn unsent(self) -> HttpFailure {
        let message = format!(
            "{} needs mcpwire's `{LIBCURL_FEATURE}` feature, which this build leaves out",
            self.words()
        );
        HttpFailure::new(HttpErrorKind::Other, message, true)
    }
}

impl Router {
    /// The client for `options`: each request routed as it comes; mcpwire's own client on the
    /// ambient runtime at each request (see [`Runtime::ambient`]).
    pub(crate) fn new(options: &HttpClientOptions) -> Router {
        #[cfg(feature = "libcurl")]
        let native = match options.http1_via_libcurl {
            true => Err(Need::Asked),
            false => Ok(Http1Client::new(options)),
        };
        #[cfg(not(feature = "libcurl"))]
        let native = Ok(Http1Client::new(options));
        Router {
            native,
            prior_knowledge: options.version == HttpVersionChoice::Http2PriorKnowledge,
            options: options.clone(),
            last: Mutex::new(None),
            #[cfg(feature = "libcurl")]
            libcurl: Arc::new(Libcurl {
                options: options.clone(),
                made: OnceLock::new(),
                http2: Mutex::new(HashSet::new()),
            }),
        }
    }

    /// The client of a connection to the server at `url`, its options checked for the backend
    /// that carries that URL: a CA file that cannot be read fails the connection whichever does;
    /// for mcpwire's own client over TLS, a certificate or key that cannot be used; for libcurl,
    /// made now, anything it refuses (a proxy URL that does not parse). A server libcurl
    /// carries has all its connection's requests carried there (its OAuth exchanges too).
    /// Without feature `libcurl`, a [`Need`] of the URL or the options is refused.
    /// mcpwire's own client runs on `runtime`, the connection's.
    pub(crate) fn for_server(
        options: &HttpClientOptions,
        url: &str,
        runtime: Runtime,
    ) -> Result<Router, Refused> {
        #[cfg(not(feature = "libcurl"))]
        if let Some(need) = Need::of_options(options) {
            return Err(Refused::NoLibcurl(need));
        }
        let mut router = Router::new(options);
        if let Ok(native) = &mut router.native {
            native.set_runtime(runtime);
        }
        let native_tls = match router.route(url) {
            Route::Native(native, target) => Ok(target.tls.then_some(native)),
            Route::Libcurl(need) => Err(need),
        };
        match native_tls {
            Ok(tls) => {
                options.tls.trust_pem().map_err(Refused::Options)?;
                if let Some(native) = tls {
                    native.prepare_tls().map_err(Refused::Options)?;
                }
            }
            #[cfg(feature = "libcurl")]
            Err(need) => {
                router.libcurl.made().map_err(Refused::Options)?;
                router.native = Err(need);
            }
            #[cfg(not(feature = "libcurl"))]
            Err(need) => return Err(Refused::NoLibcurl(need)),
        }
        Ok(router)
    }

    /// Which backend carries a request to `url`: the one place that decides.
    pub(crate) fn route(&self, url: &str) -> Route<'_> {
        let native = match &self.native {
            Ok(native) => native,
            Err(need) => return Route::Libcurl(*need),
        };
        let target = match self.last_target(url) {
            Some(target) => target,
            None => {
                let Some(parts) = UrlParts::read(url).filter(|p| p.written_plainly(url)) else {
                    return Route::Libcurl(Need::Url);
                };
                if self.prior_knowledge && !parts.is_https() {
                    return Route::Libcurl(Need::H2c);
                }
                // An HTTP proxy is spoken to by mcpwire's own client; SOCKS and an `https://`
                // proxy URL, by libcurl.
                let hop = match self.options.proxy.route(url).map(Hop::of) {
                    None => None,
                    Some(Some(hop)) => Some(hop),
                    Some(None) => return Route::Libcurl(Need::Proxy),
                };
                self.keep_target(Target::new(url, &parts, hop))
            }
        };
        #[cfg(feature = "libcurl")]
        if target.tls && native.offers_http2() && self.libcurl.knows_http2(&target.key) {
            return Route::Libcurl(Need::Http2);
        }
        Route::Native(native, target)
    }

    /// The target kept for `url`, when it was the last one read.
    fn last_target(&self, url: &str) -> Option<Arc<Target>> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        last.as_ref().filter(|t| t.url == url).cloned()
    }

    /// Keeps `target` as the last one read.
    fn keep_target(&self, target: Target) -> Arc<Target> {
        let target = Arc::new(target);
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        *last = Some(target.clone());
        target
    }
}

impl HttpBackend for Router {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
        // Each backend refuses a header HTTP cannot carry itself, before anything is sent.
        let (native, target) = match self.route(&request.url) {
            Route::Native(native, target) => (native, target),
            #[cfg(feature = "libcurl")]
            Route::Libcurl(need) => return self.libcurl.send(request, need),
            #[cfg(not(feature = "libcurl"))]
            Route::Libcurl(need) => {
                let failure = need.unsent();
                return Box::pin(async move { Err(failure) });
            }
        };
        let exchange = native.send(target.clone(), request);
        #[cfg(feature = "libcurl")]
        let libcurl = self.libcurl.clone();
        Box::pin(async move {
            match exchange.await {
                Exchanged::Done(done) => done,
                // The server agreed `h2`: libcurl speaks it (nothing of the request was sent).
                #[cfg(feature = "libcurl")]
                Exchanged::Http2(request) => {
                    libcurl.spoke_http2(&target.key);
                    libcurl.send(request, Need::Http2).await
                }
                // Never offered without libcurl; were it agreed, nothing was sent.
                #[cfg(not(feature = "libcurl"))]
                Exchanged::Http2(_) => Err(Need::Http2.unsent()),
            }
        })
    }
}

/// libcurl behind the router, made when first needed, and the servers found to speak HTTP/2.
#[cfg(feature = "libcurl")]
struct Libcurl {
    options: HttpClientOptions,
    made: OnceLock<Result<Arc<IsahcBackend>, String>>,
    /// The servers (mcpwire's own client's keys) whose TLS agreed `h2`.
    http2: Mutex<HashSet<String>>,
}

#[cfg(feature = "libcurl")]
impl Libcurl {
    /// The backend, made now if it was not; why it cannot be made.
    fn made(&self) -> Result<&Arc<IsahcBackend>, String> {
        let made = self
            .made
            .get_or_init(|| IsahcBackend::with_options(&self.options).map(Arc::new));
        made.as_ref().map_err(String::clone)
    }

    /// Sends `request` through libcurl, which carries it for `need`.
    fn send(
        &self,
        request: HttpRequest,
        need: Need,
    ) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
        match self.made() {
            Ok(isahc) => isahc.send(request),
            Err(e) => {
                let message = format!("libcurl, for {}, could not be set up: {e}", need.words());
                let failure = HttpFailure::new(HttpErrorKind::Other, message, true);
                Box::pin(async move { Err(failure) })
            }
        }
    }

    /// Whether the server `key` agreed `h2` in a TLS handshake of mcpwire's own client.
    fn knows_http2(&self, key: &str) -> bool {
        let known = self.http2.lock().unwrap_or_else(|e| e.into_inner());
        known.contains(key)
    }

    /// The server `key` agreed `h2`: its requests go to libcurl from now on.
    fn spoke_http2(&self, key: &str) {
        let mut known = self.http2.lock().unwrap_or_else(|e| e.into_inner());
        if !known.contains(key) {
            known.insert(key.to_owned());
        }
    }
}

#[cfg(all(test, feature = "smol"))]
mod tests {
    use mcpwire_core::HttpMethod;

    use super::*;
    use crate::http::options::ProxySetting;

    fn post(url: &str) -> HttpRequest {
        HttpRequest {
            exchange: 0,
            method: HttpMethod::Post,
            url: url.to_owned(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: b"{}".to_vec(),
        }
    }

    /// The runtime these tests run the client on (smol's `block_on`).
    fn smol_side() -> Runtime {
        Runtime::Smol { spawn: false }
    }

    fn direct() -> HttpClientOptions {
        HttpClientOptions {
            proxy: ProxySetting::Direct,
            ..HttpClientOptions::default()
        }
    }

    /// Where a request to `url` goes: mcpwire's own client (through a proxy or not), or
    /// libcurl and why.
    #[derive(Debug, PartialEq)]
    enum Went {
        Native { proxied: bool },
        Libcurl(Need),
    }

    fn went(router: &Router, url: &str) -> Went {
        match router.route(url) {
            Route::Native(_, target) => Went::Native {
                proxied: target.proxy.is_some(),
            },
            Route::Libcurl(need) => Went::Libcurl(need),
        }
    }

    const NATIVE: Went = Went::Native { proxied: false };
    const PROXIED: Went = Went::Native { proxied: true };

    #[test]
    fn each_request_goes_where_the_one_decision_sends_it() {
        let router = Router::new(&direct());
        for url in ["http://h/mcp", "https://h:8443/mcp?x=1", "HTTP://[::1]:1/"] {
            assert_eq!(went(&router, url), NATIVE, "{url}");
        }
        // Not written plainly enough to go on the wire as it is: libcurl's business.
        for url in [
            "http://user:pw@h/mcp",
            "http://h/a b",
            "http://h/\u{e9}",
            "http://h:/",
            "http://h%2e/",
            "http://h:+80/",
            "http://[localhost]/",
            "ftp://h/mcp",
        ] {
            assert_eq!(went(&router, url), Went::Libcurl(Need::Url), "{url}");
        }
        // Over TLS, whatever the version: ALPN decides. In clear, h2c is libcurl's.
        for version in [
            HttpVersionChoice::Http2,
            HttpVersionChoice::Negotiate,
            HttpVersionChoice::Http2PriorKnowledge,
        ] {
            let router = Router::new(&HttpClientOptions {
                version,
                ..direct()
            });
            assert_eq!(went(&router, "https://h/mcp"), NATIVE, "{version:?}");
            let plain = match version {
                HttpVersionChoice::Http2PriorKnowledge => Went::Libcurl(Need::H2c),
                _ => NATIVE,
            };
            assert_eq!(went(&router, "http://h/mcp"), plain, "{version:?}");
        }
        // An HTTP proxy is spoken to by mcpwire's own client; SOCKS and an `https://` proxy
        // URL, by libcurl.
        let through = |proxy: &str| {
            Router::new(&HttpClientOptions {
                proxy: ProxySetting::Url {
                    url: proxy.into(),
                    no_proxy: vec!["near".into()],
                },
                ..HttpClientOptions::default()
            })
        };
        let router = through("http://proxy:3128");
        assert_eq!(went(&router, "http://far/mcp"), PROXIED);
        assert_eq!(went(&router, "https://far/mcp"), PROXIED);
        assert_eq!(went(&router, "https://near/mcp"), NATIVE);
        for proxy in ["socks5h://proxy:1080", "https://proxy:3129"] {
            let router = through(proxy);
            for url in ["http://far/mcp", "https://far/mcp"] {
                assert_eq!(went(&router, url), Went::Libcurl(Need::Proxy), "{proxy}");
            }
            assert_eq!(went(&router, "http://near/mcp"), NATIVE, "{proxy}");
        }
        #[cfg(feature = "libcurl")]
        {
            let router = Router::new(&HttpClientOptions {
                http1_via_libcurl: true,
                ..direct()
            });
            assert_eq!(went(&router, "http://h/mcp"), Went::Libcurl(Need::Asked));
        }
    }

    #[cfg(feature = "libcurl")]
    #[test]
    fn a_server_that_agreed_h2_goes_to_libcurl_when_http2_is_allowed() {
        for (version, after) in [
            (HttpVersionChoice::Negotiate, Went::Libcurl(Need::Http2)),
            (HttpVersionChoice::Http1Only, NATIVE),
        ] {
            let router = Router::new(&HttpClientOptions {
                version,
                ..direct()
            });
            let key = match router.route("https://h/mcp") {
                Route::Native(_, target) => target.key.clone(),
                Route::Libcurl(need) => panic!("{need:?}"),
            };
            router.libcurl.spoke_http2(&key);
            assert_eq!(went(&router, "https://h/mcp"), after, "{version:?}");
            assert_eq!(went(&router, "https://other/mcp"), NATIVE, "{version:?}");
        }
    }

    #[cfg(feature = "libcurl")]
    #[test]
    fn a_server_libcurl_carries_has_all_its_requests_carried_there() {
        let router =
            Router::for_server(&direct(), "http://user@127.0.0.1:1/mcp", smol_side()).unwrap();
        assert_eq!(
            went(&router, "http://127.0.0.1:1/other"),
            Went::Libcurl(Need::Url)
        );
        let router = Router::for_server(&direct(), "http://127.0.0.1:1/mcp", smol_side()).unwrap();
        assert_eq!(went(&router, "http://127.0.0.1:1/other"), NATIVE);
        // Its options are checked at connect, by the backend that carries its URL.
        let mut options = direct();
        options.tls.extra_ca_pem.push("no certificate".into());
        for url in ["https://h/mcp", "http://u@h/mcp"] {
            let Some(Refused::Options(e)) = Router::for_server(&options, url, smol_side()).err()
            else {
                panic!("{url}: not refused");
            };
            assert!(e.contains("holds no PEM certificate"), "{url}: {e}");
        }
        let options = HttpClientOptions {
            proxy: ProxySetting::Url {
                url: "socks5h://pro xy:1080".into(),
                no_proxy: vec![],
            },
            ..HttpClientOptions::default()
        };
        let e = Router::for_server(&options, "https://h/mcp", smol_side()).err();
        assert!(matches!(e, Some(Refused::Options(e)) if e.contains("the proxy URL is not valid")));
    }

    #[test]
    fn a_bad_request_header_is_refused_unsent_whichever_backend_carries_it() {
        // Nothing listens on port 1: a request that went would fail otherwise.
        let router = Router::new(&direct());
        // Without libcurl, the second is refused for what it needs (below).
        let urls = match cfg!(feature = "libcurl") {
            true => &["http://127.0.0.1:1/mcp", "http://user@127.0.0.1:1/mcp"][..],
            false => &["http://127.0.0.1:1/mcp"][..],
        };
        for &url in urls {
            let mut request = post(url);
            request.headers.push(("X-Name".into(), "caf\u{e9}".into()));
            let failure = smol::block_on(router.send(request)).err().expect("refused");
            assert!(
                matches!(&failure.kind, HttpErrorKind::Header(e) if e.name() == "X-Name"),
                "{url}: {failure:?}"
            );
            assert!(
                failure.unsent && failure.message.contains("X-Name"),
                "{failure:?}"
            );
        }
    }

    #[cfg(not(feature = "libcurl"))]
    #[test]
    fn without_libcurl_each_need_is_refused_naming_the_feature() {
        let need = |options: &HttpClientOptions, url: &str| match Router::for_server(
            options,
            url,
            smol_side(),
        ) {
            Err(Refused::NoLibcurl(need)) => Some(need),
            Err(Refused::Options(e)) => panic!("{url}: {e}"),
            Ok(_) => None,
        };
        // What mcpwire's own client speaks is carried.
        assert_eq!(need(&direct(), "http://127.0.0.1:1/mcp"), None);
        assert_eq!(need(&direct(), "https://h/mcp"), None);
        // At connect: the URL's need, and the options' (HTTP/2 in any form, whatever the URL).
        assert_eq!(need(&direct(), "http://u@h/mcp"), Some(Need::Url));
        for (version, wanted) in [
            (HttpVersionChoice::Http2, Need::Http2),
            (HttpVersionChoice::Negotiate, Need::Http2),
            (HttpVersionChoice::Http2PriorKnowledge, Need::H2c),
        ] {
            let options = HttpClientOptions {
                version,
                ..direct()
            };
            for url in ["http://h/mcp", "https://h/mcp"] {
                assert_eq!(need(&options, url), Some(wanted), "{version:?} {url}");
            }
        }
        for proxy in ["socks5h://proxy:1080", "https://proxy:3129"] {
            let options = HttpClientOptions {
                proxy: ProxySetting::Url {
                    url: proxy.into(),
                    no_proxy: vec!["near".into()],
                },
                ..HttpClientOptions::default()
            };
            assert_eq!(
                need(&options, "https://far/mcp"),
                Some(Need::Proxy),
                "{proxy}"
            );
            assert_eq!(need(&options, "http://near/mcp"), None, "{proxy}");
        }
        // Later, a request that would go to libcurl fails unsent, naming the feature (nothing
        // listens on port 1: a request that went would fail otherwise).
        let router =
            Router::for_server(&direct(), "http://127.0.0.1:1/mcp", smol_side()).expect("carried");
        let failure = smol::block_on(router.send(post("http://user@127.0.0.1:1/mcp")))
            .err()
            .expect("refused");
        assert!(failure.unsent, "{failure:?}");
        assert!(
            failure.message.contains("`libcurl` feature")
                && failure.message.contains(Need::Url.words()),
            "{failure:?}"
        );
    }
}
