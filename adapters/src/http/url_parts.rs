//! The one reader of URLs in the HTTP stack: a URL's scheme, credentials, host, port and the
//! rest, as written (nothing normalised, nothing allocated). The router, mcpwire's own client,
//! the proxy rules, libcurl's explanations and the TLS diagnoses all read a URL through it, so
//! that none of them takes another host or port from it than the others do. A leaf.
//!
//! A server's URL is checked before anything is sent ([`mcpwire_core::config::check_url`]:
//! `http` or `https`, a host, no character a URL cannot carry as it is); a proxy's URL is read
//! here too. OAuth's URLs are values of its own API (`url::Url`), read there.

/// The parts of a URL, as written: `scheme://[userinfo@]host[:port][rest]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UrlParts<'a> {
    /// The scheme as written (`http`, `HTTPS`, `socks5h`).
    pub(crate) scheme: &'a str,
    /// What comes before the last `@` of the authority (`user:password`), when there is one.
    pub(crate) userinfo: Option<&'a str>,
    /// The host and the port as written (`example.com:8080`, `[::1]`), without credentials.
    pub(crate) authority: &'a str,
    /// The host (an IPv6 address without its brackets).
    pub(crate) host: &'a str,
    /// The port, when one is written (an empty one, `h:`, is the scheme's default).
    pub(crate) port: Option<u16>,
    /// The scheme and the whole authority as written (credentials included when written):
    /// `https://h:8443`. A key for the server the URL names, read without a copy.
    pub(crate) origin: &'a str,
    /// The path, query and fragment as written (may be empty).
    pub(crate) rest: &'a str,
}

impl<'a> UrlParts<'a> {
    /// The parts of `url`; `None` when it is not `scheme://authority…` with a host, or its
    /// port is not a number up to 65535, or an IPv6 host is not an address.
    pub(crate) fn read(url: &'a str) -> Option<UrlParts<'a>> {
        let (scheme, after) = url.split_once("://")?;
        let is_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
        if !is_scheme {
            return None;
        }
        let end = after.find(['/', '?', '#']).unwrap_or(after.len());
        let (whole, rest) = after.split_at(end);
        let (userinfo, authority) = match whole.rsplit_once('@') {
            Some((userinfo, authority)) => (Some(userinfo), authority),
            None => (None, whole),
        };
        let port_of = |p: &str| match p {
            "" => Some(None),
            p if p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => {
                p.parse::<u16>().ok().map(Some)
            }
            _ => None,
        };
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (host, after) = v6.split_once(']')?;
                host.parse::<std::net::Ipv6Addr>().ok()?;
                let port = match after.strip_prefix(':') {
                    Some(p) => port_of(p)?,
                    None if after.is_empty() => None,
                    None => return None,
                };
                (host, port)
            }
            None => match authority.rsplit_once(':') {
                Some((host, p)) => (host, port_of(p)?),
                None => (authority, None),
            },
        };
        if host.is_empty() {
            return None;
        }
        Some(UrlParts {
            scheme,
            userinfo,
            authority,
            host,
            port,
            origin: &url[..scheme.len() + 3 + end],
            rest,
        })
    }

    /// Whether the scheme is `https` (in any case).
    pub(crate) fn is_https(&self) -> bool {
        self.scheme.eq_ignore_ascii_case("https")
    }

    /// Whether the scheme is `http` or `https` (in any case).
    pub(crate) fn is_http(&self) -> bool {
        self.is_https() || self.scheme.eq_ignore_ascii_case("http")
    }

    /// The port, or the scheme's default for `http` (80) and `https` (443).
    pub(crate) fn port_or_default(&self) -> Option<u16> {
        self.port.or(if self.is_https() {
            Some(443)
        } else if self.is_http() {
            Some(80)
        } else {
            None
        })
    }

    /// `host:port`, an IPv6 host in brackets, the port the scheme's default when none is
    /// written: as a `CONNECT` names a server, and words about it (libcurl's explanations).
    #[cfg_attr(not(feature = "libcurl"), allow(dead_code))]
    pub(crate) fn host_and_port(&self) -> Option<String> {
        let port = self.port_or_default()?;
        Some(if self.host.contains(':') {
            format!("[{}]:{port}", self.host)
        } else {
            format!("{}:{port}", self.host)
        })
    }

    /// The path and query, without the fragment (`/` when empty, `/?q` for a bare query): a
    /// request's target.
    pub(crate) fn path_and_query(&self) -> std::borrow::Cow<'a, str> {
        let path = self.rest.split('#').next().unwrap_or("");
        match path {
            "" => "/".into(),
            p if p.starts_with('?') => format!("/{p}").into(),
            p => p.into(),
        }
    }

    /// The user name and password of the credentials, as written (percent-encoded); `None`
    /// when there are none (an empty name and password are none).
    pub(crate) fn credentials(&self) -> Option<(&'a str, &'a str)> {
        let userinfo = self.userinfo?;
        let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
        (!user.is_empty() || !password.is_empty()).then_some((user, password))
    }

    /// Whether `url` (whose parts these are) is written plainly enough to go on the wire as
    /// it is: `http` or `https`, no credentials, no percent-encoding in the authority, an
    /// explicit port when there is a colon, and nothing but visible ASCII (a name to encode, a
    /// space to escape: another client's business).
    pub(crate) fn written_plainly(&self, url: &str) -> bool {
        let visible = url.bytes().all(|b| (0x21..0x7f).contains(&b));
        self.is_http()
            && self.userinfo.is_none()
            && !self.authority.contains('%')
            && !self.authority.ends_with(':')
            && visible
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_as_written() {
        let p = UrlParts::read("http://[::1]:8080?x=1").unwrap();
        assert_eq!(
            (p.host, p.port, p.authority, p.path_and_query().as_ref()),
            ("::1", Some(8080), "[::1]:8080", "/?x=1")
        );
        assert_eq!(p.host_and_port().as_deref(), Some("[::1]:8080"));
        let p = UrlParts::read("http://localhost/a/b#frag").unwrap();
        assert_eq!(
            (
                p.authority,
                p.port_or_default(),
                p.path_and_query().as_ref()
            ),
            ("localhost", Some(80), "/a/b")
        );
        let p = UrlParts::read("https://example.com/mcp").unwrap();
        assert!(p.is_https());
        assert_eq!(
            (p.port_or_default(), p.origin),
            (Some(443), "https://example.com")
        );
        let p = UrlParts::read("HTTPS://u:p%40w@Example.com:8443/mcp?q#f").unwrap();
        assert!(p.is_https() && p.is_http());
        assert_eq!(p.credentials(), Some(("u", "p%40w")));
        assert_eq!(
            (p.host, p.port, p.origin, p.rest),
            (
                "Example.com",
                Some(8443),
                "HTTPS://u:p%40w@Example.com:8443",
                "/mcp?q#f"
            )
        );
        // The last `@` ends the credentials; an empty port is the default.
        let p = UrlParts::read("http://a@b@h:/").unwrap();
        assert_eq!((p.userinfo, p.host, p.port), (Some("a@b"), "h", None));
        let p = UrlParts::read("socks5h://proxy").unwrap();
        assert_eq!((p.scheme, p.port_or_default()), ("socks5h", None));
        for (url, credentials) in [
            ("http://u@h", Some(("u", ""))),
            ("http://:p@h", Some(("", "p"))),
            ("http://:@h", None),
            ("http://@h", None),
            ("http://h", None),
        ] {
            let p = UrlParts::read(url).unwrap();
            assert_eq!(p.credentials(), credentials, "{url}");
        }
    }

    #[test]
    fn what_is_not_read() {
        for url in [
            "h/mcp",
            "127.0.0.1:8000/mcp",
            "1http://h/",
            "ht tp://h/",
            "http:///mcp",
            "http://:8000/mcp",
            "http://u@/mcp",
            "http://h:+80/",
            "http://h:99999/",
            "http://h:8o/",
            "http://[localhost]/",
            "http://[::1/",
            "http://[::1]x/",
        ] {
            assert_eq!(UrlParts::read(url), None, "{url}");
        }
    }

    #[test]
    fn what_is_written_plainly() {
        let plain = |url: &str| UrlParts::read(url).is_some_and(|p| p.written_plainly(url));
        for url in [
            "http://h/mcp",
            "https://h:8443/mcp?x=%20",
            "http://[::1]:1/",
            "HTTP://h/",
        ] {
            assert!(plain(url), "{url}");
        }
        for url in [
            "http://user:pw@h/mcp",
            "http://h/a b",
            "http://h/\u{e9}",
            "http://h%2e/",
            "http://h:/",
            "ftp://h/mcp",
        ] {
            assert!(!plain(url), "{url}");
        }
    }

    proptest::proptest! {
        /// For a server URL the core lets through, the port read here is the one the URL
        /// standard reads (`url::Url`), and so is the host, but for what that standard rewrites
        /// (a name's letter case, an IPv6 address's spelling, IPv4 in another base).
        #[test]
        fn host_and_port_agree_with_the_url_standard(
            https in proptest::bool::ANY,
            userinfo in proptest::option::of("[a-z0-9:]{0,6}"),
            host in "[a-zA-Z0-9.-]{1,12}|\\[::[0-9a-f]{1,4}\\]|[0-9]{1,3}(\\.[0-9]{1,3}){3}",
            port in proptest::option::of(0u32..70000),
            rest in "[/?#][a-zA-Z0-9/?#=&._~-]{0,12}|",
        ) {
            let scheme = if https { "https" } else { "http" };
            let userinfo = userinfo.map(|u| format!("{u}@")).unwrap_or_default();
            let port = port.map(|p| format!(":{p}")).unwrap_or_default();
            let url = format!("{scheme}://{userinfo}{host}{port}{rest}");
            proptest::prop_assume!(mcpwire_core::config::check_url(&url).is_ok());
            let ours = UrlParts::read(&url);
            proptest::prop_assert!(ours.is_some(), "{} not read", url);
            // The standard refuses some hosts the core lets through (`1.2.3.999`): nothing to
            // compare then.
            if let (Some(ours), Ok(theirs)) = (ours, url::Url::parse(&url)) {
                proptest::prop_assert_eq!(ours.port_or_default(), theirs.port_or_known_default());
                let their_host = match theirs.host() {
                    Some(url::Host::Ipv6(addr)) => addr.to_string(),
                    Some(host) => host.to_string(),
                    None => String::new(),
                };
                let our_host = match ours.host.parse::<std::net::Ipv6Addr>() {
                    Ok(addr) => addr.to_string(),
                    Err(_) => ours.host.to_ascii_lowercase(),
                };
                let rewritten_ipv4 = theirs.host().is_some_and(|h| matches!(h, url::Host::Ipv4(_)))
                    && their_host != our_host;
                if !rewritten_ipv4 {
                    proptest::prop_assert_eq!(their_host, our_host);
                }
            }
        }
    }
}
