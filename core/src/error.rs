//! Why an HTTP exchange failed, and the authentication challenge a server sent.

use std::fmt;

/// An HTTP exchange that did not give what the request needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    /// What kind of failure it was.
    pub kind: HttpErrorKind,
    /// The URL, without credentials (see [`redact_url`]).
    pub url: String,
    /// The status, when a response head arrived.
    pub status: Option<u16>,
    /// The response's content type, if any.
    pub content_type: Option<String>,
    /// The start of the body, as text (at most 512 bytes).
    pub body_excerpt: String,
    /// The parsed `WWW-Authenticate` challenge (401, 403).
    pub challenge: Option<AuthChallenge>,
    /// What went wrong, in words.
    pub reason: String,
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.kind, self.status) {
            // The proxy's own answer, never the server's (which the request did not reach):
            // what the proxy wants, in place of the machine's "unexpected status".
            (HttpErrorKind::Proxy(failure), Some(status)) => write!(
                f,
                "HTTP {status} from the proxy, not from {} (the request did not reach it): \
                 {failure}",
                self.url
            )?,
            (HttpErrorKind::Proxy(_), None) => write!(
                f,
                "{} not reached through the proxy: {}",
                self.url, self.reason
            )?,
            (_, Some(status)) => write!(f, "HTTP {status} from {}: {}", self.url, self.reason)?,
            (_, None) => write!(f, "HTTP exchange with {} failed: {}", self.url, self.reason)?,
        }
        if let HttpErrorKind::Redirect {
            location: Some(location),
        } = &self.kind
        {
            write!(f, " (to {location}; redirects are not followed)")?;
        }
        if !self.body_excerpt.is_empty() {
            write!(f, ": {}", self.body_excerpt)?;
        }
        Ok(())
    }
}

/// What kind of failure an HTTP exchange met.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpErrorKind {
    /// A response came with a status the request cannot use.
    Status,
    /// A redirect (3xx), not followed: a POST is never sent somewhere else behind the
    /// caller's back. Point the client at the new location.
    Redirect {
        /// The `Location` the server named, without credentials.
        location: Option<String>,
    },
    /// A success status with a content type the request cannot use.
    ContentType,
    /// A body that is not what its content type says (not JSON-RPC, no answer in it).
    BadBody,
    /// A body over the cap on one message.
    TooLarge,
    /// The server refused the connection (nothing listens there).
    ConnectionRefused,
    /// The host name did not resolve.
    NameResolution,
    /// No connection within the connect timeout.
    ConnectTimeout,
    /// The TLS handshake failed.
    Tls(TlsFailure),
    /// The proxy failed (which way: [`ProxyFailure`]). The request never reached the server.
    Proxy(ProxyFailure),
    /// No response head within the head timeout.
    HeadTimeout,
    /// No body bytes within the idle timeout.
    BodyTimeout,
    /// The connection closed before the response head was complete (or with no response).
    HeadCutShort,
    /// The connection was reset or closed in the middle of the body.
    BodyCutShort,
    /// The request went on a reused keep-alive connection that the server had closed: not a
    /// byte of a response came. The server most likely never read it, but cannot be shown
    /// not to have: a request safe to repeat is sent again (with a new id, on a new
    /// connection); any other may have run.
    StaleConnection,
    /// The request never left: the connection limit, a closing connection.
    NotSent,
    /// The server refused the request for want of authorization (`401`, or `403` with
    /// `error="insufficient_scope"`) and no token could be had (the reason says why).
    Unauthorized,
    /// A header of the request cannot be sent (a value HTTP cannot carry, a name that is not
    /// a token, a header the HTTP client sets itself): the request never left.
    Header(crate::header::HeaderError),
    /// Any other failure the HTTP client reported (its words are in the reason).
    Other,
}

impl HttpErrorKind {
    /// Whether no connection to the server could be made at all (refused, a name that does
    /// not resolve, the connect timeout, a failed TLS handshake, the proxy): the server cannot
    /// be reached, as opposed to a server that answered badly.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            HttpErrorKind::ConnectionRefused
                | HttpErrorKind::NameResolution
                | HttpErrorKind::ConnectTimeout
                | HttpErrorKind::Tls(_)
                | HttpErrorKind::Proxy(_)
        )
    }
}

/// Why a TLS handshake failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TlsFailure {
    /// The server's certificate is signed by an authority that is not trusted.
    UnknownIssuer,
    /// The server's certificate does not name the host.
    NameMismatch,
    /// The server's certificate has expired.
    Expired,
    /// The server's certificate is not valid yet.
    NotYetValid,
    /// The server wants a client certificate, or refused the one given.
    ClientCertificate,
    /// The client certificate or key could not be used.
    BadClientCertificate,
    /// Another handshake failure (the reason says which).
    Other,
}

impl fmt::Display for TlsFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TlsFailure::UnknownIssuer => {
                "the server's certificate is signed by an unknown issuer \
                 (trust its CA with an extra CA file)"
            }
            TlsFailure::NameMismatch => "the server's certificate is not valid for this host name",
            TlsFailure::Expired => "the server's certificate has expired",
            TlsFailure::NotYetValid => "the server's certificate is not valid yet",
            TlsFailure::ClientCertificate => {
                "the server wants a client certificate, or refused the one given"
            }
            TlsFailure::BadClientCertificate => "the client certificate or key cannot be used",
            TlsFailure::Other => "the TLS handshake failed",
        })
    }
}

/// Why a proxy did not carry a request to the server. Whichever it was, the request never
/// reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProxyFailure {
    /// The proxy cannot be reached: nothing listens at its host and port, or its name does not
    /// resolve.
    Unreachable,
    /// The proxy was reached and refused to carry the request: it would not open a tunnel to
    /// the server's host and port (a `CONNECT` answered `403`, a port it does not allow, a
    /// `502` when it could not reach the server), or a SOCKS proxy refused the connection.
    Refused,
    /// The proxy wants credentials (`407 Proxy Authentication Required`), or refused the ones
    /// given.
    Credentials,
    /// Another proxy failure (the reason says which).
    Other,
}

impl fmt::Display for ProxyFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProxyFailure::Unreachable => {
                "the proxy cannot be reached (is it running, at this host and port?)"
            }
            ProxyFailure::Refused => {
                "the proxy refused to carry the request to the server's host and port"
            }
            ProxyFailure::Credentials => {
                "the proxy wants credentials (407): put them in the proxy URL, \
                 http://user:password@host:port, or in the environment variable the proxy \
                 came from (http_proxy, https_proxy, all_proxy)"
            }
            ProxyFailure::Other => "the proxy failed",
        })
    }
}

/// How an exchange failed, as the driver reports it
/// ([`Connection::handle_failure`](crate::Connection::handle_failure)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExchangeFailure {
    /// What kind of failure.
    pub kind: HttpErrorKind,
    /// In words.
    pub message: String,
}

impl ExchangeFailure {
    /// A failure of this kind.
    pub fn new(kind: HttpErrorKind, message: impl Into<String>) -> Self {
        ExchangeFailure {
            kind,
            message: message.into(),
        }
    }
}

impl From<&str> for ExchangeFailure {
    /// A failure known only by its words ([`HttpErrorKind::Other`]).
    fn from(message: &str) -> Self {
        ExchangeFailure::new(HttpErrorKind::Other, message)
    }
}

/// `url` without credentials: no `user:password@`, and the values of query parameters named
/// like secrets (`token`, `key`, `password`…) replaced with `***`.
pub fn redact_url(url: &str) -> String {
    let (scheme, rest) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => ("", url),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let (before_fragment, fragment) = tail.split_at(tail.find('#').unwrap_or(tail.len()));
    let Some((path, query)) = before_fragment.split_once('?') else {
        return format!("{scheme}{host}{tail}");
    };
    let query: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if secret_name(name) => format!("{name}=***"),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{scheme}{host}{path}?{}{fragment}", query.join("&"))
}

/// Whether a query parameter's name suggests its value is a secret.
fn secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    const PARTS: [&str; 7] = [
        "token",
        "secret",
        "passw",
        "auth",
        "credential",
        "signature",
        "key",
    ];
    PARTS.iter().any(|p| name.contains(p)) || matches!(name.as_str(), "sig" | "pwd" | "code")
}

impl std::error::Error for HttpError {}

/// A `WWW-Authenticate` challenge: its scheme and parameters (for example
/// `Bearer resource_metadata="…", scope="a b", error="insufficient_scope"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthChallenge {
    /// The scheme (`Bearer`).
    pub scheme: String,
    /// The parameters, in order, names lower-cased.
    pub params: Vec<(String, String)>,
}

impl AuthChallenge {
    /// The value of parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Parses the first challenge of a `WWW-Authenticate` value.
    pub fn parse(value: &str) -> Option<AuthChallenge> {
        let value = value.trim();
        let (scheme, mut rest) = match value.find(char::is_whitespace) {
            Some(i) => (&value[..i], value[i..].trim_start()),
            None => (value, ""),
        };
        if scheme.is_empty() {
            return None;
        }
        let mut params = Vec::new();
        while !rest.is_empty() {
            let Some(eq) = rest.find('=') else { break };
            let name = rest[..eq]
                .trim()
                .trim_start_matches(',')
                .trim()
                .to_ascii_lowercase();
            rest = rest[eq + 1..].trim_start();
            let value;
            if let Some(quoted) = rest.strip_prefix('"') {
                let mut out = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, n)) = chars.next() {
                                out.push(n);
                            }
                        }
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => out.push(c),
                    }
                }
                value = out;
                rest = &quoted[end.min(quoted.len())..];
            } else {
                let end = rest.find(',').unwrap_or(rest.len());
                value = rest[..end].trim().to_owned();
                rest = &rest[end..];
            }
            rest = rest.trim_start().trim_start_matches(',').trim_start();
            if !name.is_empty() {
                params.push((name, value));
            }
        }
        Some(AuthChallenge {
            scheme: scheme.to_owned(),
            params,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_credentials() {
        for (url, shown) in [
            ("http://host/mcp", "http://host/mcp"),
            ("https://user:pw@host:8080/mcp", "https://host:8080/mcp"),
            ("http://user@host/mcp?x=1", "http://host/mcp?x=1"),
            (
                "http://h/mcp?api_key=abc&x=1&token=t&Password=p",
                "http://h/mcp?api_key=***&x=1&token=***&Password=***",
            ),
            (
                "http://h/mcp?sig=s&flag#frag?token=x",
                "http://h/mcp?sig=***&flag#frag?token=x",
            ),
            ("http://h/a@b", "http://h/a@b"),
            ("http://u:p@h", "http://h"),
            ("http://u:p@h?access_token=1", "http://h?access_token=***"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
    }

    #[test]
    fn parses_bearer_challenges() {
        let c = AuthChallenge::parse(
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://x/.well-known/oauth-protected-resource", error_description="need \"more\"""#,
        )
        .unwrap();
        assert_eq!(c.scheme, "Bearer");
        assert_eq!(c.param("error"), Some("insufficient_scope"));
        assert_eq!(c.param("scope"), Some("files:read files:write"));
        assert_eq!(c.param("error_description"), Some("need \"more\""));
        assert!(c
            .param("resource_metadata")
            .unwrap()
            .ends_with("protected-resource"));
        let c = AuthChallenge::parse("Bearer realm=x, scope=a").unwrap();
        assert_eq!(c.param("realm"), Some("x"));
        assert_eq!(c.param("scope"), Some("a"));
        assert_eq!(AuthChallenge::parse("Basic").unwrap().params, vec![]);
        assert!(AuthChallenge::parse("").is_none());
    }
}
