//! Why an HTTP exchange failed, the authentication challenge a server sent, why the connection
//! closed, and what a stdio server wrote that is not JSON-RPC.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// The connection has closed, and why: it ends every call still pending
/// ([`LocalError::Closed`](crate::LocalError::Closed)), refuses every later command
/// ([`ClientError::Closed`](crate::ClientError::Closed)) and is the last event
/// ([`Event::Closed`](crate::Event::Closed)). One close gives one reason to all three.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the connection closed: {reason}")]
pub struct Closed {
    /// Why: how the process exited (with the tail of its stderr), the failure that ended the
    /// transport, or the reason given to `close`.
    pub reason: Arc<str>,
}

impl Closed {
    /// A close for this reason.
    pub fn new(reason: impl Into<Arc<str>>) -> Closed {
        Closed {
            reason: reason.into(),
        }
    }
}

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
    /// What a person may try, as the HTTP client found it (a plain `http://` request that met
    /// a TLS server, HTTP/2 with prior knowledge that met an HTTP/1.1 server). See
    /// [`HttpError::suggestion`] for this or the one the failure itself tells.
    pub hint: Option<Hint>,
}

impl HttpError {
    /// What a person may try: [`HttpError::hint`] when the HTTP client found one, else the one
    /// the failure itself tells (an `https://` server that does not speak TLS, a certificate
    /// from an unknown issuer, a `400` saying a plain HTTP request was sent to an HTTPS port).
    pub fn suggestion(&self) -> Option<Hint> {
        if let Some(hint) = &self.hint {
            return Some(hint.clone());
        }
        match &self.kind {
            HttpErrorKind::Tls(TlsFailure::NotTls) => Some(Hint::PlainHttp {
                url: with_scheme(&self.url, "http"),
            }),
            HttpErrorKind::Tls(failure) => failure.hint(),
            HttpErrorKind::Status
                if self.status == Some(400)
                    && self.url.starts_with("http://")
                    && says_plain_http_to_tls(&self.body_excerpt) =>
            {
                Some(Hint::Https {
                    url: with_scheme(&self.url, "https"),
                })
            }
            _ => None,
        }
    }

    /// Where a redirect points, resolved against [`HttpError::url`] when the server named a
    /// relative `Location` (`/v2/mcp`, `../mcp`, `?x=1`); `None` for any other failure.
    pub fn redirect_target(&self) -> Option<String> {
        match &self.kind {
            HttpErrorKind::Redirect {
                location: Some(location),
            } => Some(crate::url::resolve_location(&self.url, location)),
            _ => None,
        }
    }

    /// The body as it is shown: an HTML page by its `<title>` (an error page of a proxy, a
    /// load balancer or a web server), any other body by its excerpt.
    pub fn body_shown(&self) -> Cow<'_, str> {
        let html = self
            .content_type
            .as_deref()
            .is_some_and(|c| c.trim_start().to_ascii_lowercase().starts_with("text/html"))
            || looks_like_html(&self.body_excerpt);
        match html.then(|| html_title(&self.body_excerpt)).flatten() {
            Some(title) => Cow::Owned(title),
            None => Cow::Borrowed(&self.body_excerpt),
        }
    }
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
        if let Some(target) = self.redirect_target() {
            write!(f, " (to {target}; redirects are not followed)")?;
        }
        let body = self.body_shown();
        if !body.is_empty() {
            write!(f, ": {body}")?;
        }
        if let Some(hint) = self.suggestion() {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

/// What a person may try after a failure that looks like a known mistake
/// ([`HttpError::suggestion`], [`TlsFailure::hint`]). Its `Display` is the library's words,
/// naming the library's options; a command line may say the same with its own flags.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Hint {
    /// A plain `http://` URL whose server speaks TLS on that port (it answered the request
    /// with a TLS alert, closed it and then answered a TLS handshake, or said so in a `400`).
    Https {
        /// The same URL with `https://` (without credentials).
        url: String,
    },
    /// An `https://` URL whose server does not speak TLS on that port (it answered the TLS
    /// handshake with bytes that are not a TLS record, such as an HTTP `400`).
    PlainHttp {
        /// The same URL with `http://` (without credentials).
        url: String,
    },
    /// HTTP/2 with prior knowledge (h2c) was spoken to a plain `http://` server that gave no
    /// HTTP/2 answer: most likely it speaks HTTP/1.1 only.
    NoH2c,
    /// The server's certificate is signed by an authority that is not trusted: trust that
    /// authority's certificate as an extra CA.
    TrustCa,
}

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hint::Https { url } => {
                write!(f, "is it https? The server speaks TLS on this port: {url}")
            }
            Hint::PlainHttp { url } => write!(f, "is it plain http? Try {url}"),
            Hint::NoH2c => f.write_str(
                "does it speak h2c? It gave no HTTP/2 answer to HTTP/2 with prior knowledge; \
                 without http_client.version = Http2PriorKnowledge, HTTP/1.1 is spoken",
            ),
            Hint::TrustCa => f.write_str("trust its CA with http_client.tls.extra_ca_files (PEM)"),
        }
    }
}

/// `url` (`http://` or `https://`) with its scheme replaced by `scheme`, keeping the port it
/// went to: a URL without a port gets its old scheme's default written out
/// (`https://h/mcp` becomes `http://h:443/mcp`).
pub fn with_scheme(url: &str, scheme: &str) -> String {
    let Some((old, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    // A port follows the last colon, after any IPv6 literal's closing bracket.
    let host_end = authority.rfind(']').unwrap_or(0);
    let has_port = authority[host_end..].contains(':');
    let default = match old.to_ascii_lowercase().as_str() {
        "https" => Some(443),
        "http" => Some(80),
        _ => None,
    };
    match default {
        Some(port) if !has_port && !old.eq_ignore_ascii_case(scheme) => {
            format!("{scheme}://{authority}:{port}{tail}")
        }
        _ => format!("{scheme}://{rest}"),
    }
}

/// Whether an error body says a plain HTTP request reached a TLS port, in the words of the
/// usual servers (nginx: "The plain HTTP request was sent to HTTPS port"; Go: "Client sent an
/// HTTP request to an HTTPS server"; Apache: "speaking plain HTTP to an SSL-enabled server
/// port").
fn says_plain_http_to_tls(body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    [
        "to https port",
        "to an https server",
        "ssl-enabled server port",
    ]
    .iter()
    .any(|words| body.contains(words))
}

/// Whether a body excerpt is the start of an HTML page.
fn looks_like_html(body: &str) -> bool {
    let start: String = body
        .trim_start()
        .chars()
        .take(16)
        .collect::<String>()
        .to_ascii_lowercase();
    start.starts_with("<!doctype html") || start.starts_with("<html")
}

/// The text of an HTML page's `<title>`: whitespace collapsed, the usual character
/// references (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;`) decoded; `None` when there is none
/// (or it is empty).
fn html_title(html: &str) -> Option<String> {
    // ASCII lower-casing keeps every byte offset.
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let spaced = html
        .get(start..end)?
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let title = [
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&amp;", "&"),
    ]
    .iter()
    .fold(spaced, |t, (from, to)| t.replace(from, to));
    (!title.is_empty()).then_some(title)
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
    /// The request went on a reused keep-alive connection the server had closed: no byte of a
    /// response came (libcurl: none counted). The server most likely never read it, but cannot
    /// be shown not to have: a request safe to repeat, and the start's probe and `initialize`,
    /// go again (a new id, a new connection); any other may have run.
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
    /// The server does not speak TLS on this port: it answered the TLS handshake with bytes
    /// that are not a TLS record (a plain HTTP server's `400`, most often).
    NotTls,
    /// Another handshake failure (the reason says which).
    Other,
}

impl TlsFailure {
    /// What a person may try: trust the CA of a certificate from an unknown issuer. (A server
    /// that does not speak TLS gets its hint from [`HttpError::suggestion`], which knows the
    /// URL.)
    pub fn hint(&self) -> Option<Hint> {
        match self {
            TlsFailure::UnknownIssuer => Some(Hint::TrustCa),
            _ => None,
        }
    }
}

impl fmt::Display for TlsFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TlsFailure::UnknownIssuer => "the server's certificate is signed by an unknown issuer",
            TlsFailure::NameMismatch => "the server's certificate is not valid for this host name",
            TlsFailure::Expired => "the server's certificate has expired",
            TlsFailure::NotYetValid => "the server's certificate is not valid yet",
            TlsFailure::ClientCertificate => {
                "the server wants a client certificate, or refused the one given"
            }
            TlsFailure::BadClientCertificate => "the client certificate or key cannot be used",
            TlsFailure::NotTls => "the server does not speak TLS on this port",
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

/// How an exchange failed, as the driver reports it ([`HttpInput::Failure`](crate::HttpInput::Failure)
/// or [`HttpInput::Unsent`](crate::HttpInput::Unsent)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExchangeFailure {
    /// What kind of failure.
    pub kind: HttpErrorKind,
    /// In words.
    pub message: String,
    /// What a person may try, when the HTTP client found it out ([`HttpError::hint`]).
    pub hint: Option<Hint>,
}

impl ExchangeFailure {
    /// A failure of this kind.
    pub fn new(kind: HttpErrorKind, message: impl Into<String>) -> Self {
        ExchangeFailure {
            kind,
            message: message.into(),
            hint: None,
        }
    }

    /// The failure with `hint` (see [`HttpError::hint`]).
    pub fn with_hint(mut self, hint: Hint) -> Self {
        self.hint = Some(hint);
        self
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

/// The server refused a request for want of authorization: the driver is to authorize and
/// hand the connection a token, or give up
/// ([`Connection::handle_authorization`](crate::Connection::handle_authorization)).
/// Until then the requests wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationRequired {
    /// `401` (no token, or one the server no longer takes), or `403` (the token lacks a scope:
    /// a step-up).
    pub status: u16,
    /// The URL that refused, without credentials.
    pub url: String,
    /// Every `WWW-Authenticate` value of the response, verbatim, in order.
    pub challenges: Vec<String>,
    /// The first challenge, parsed.
    pub challenge: Option<AuthChallenge>,
}

impl AuthorizationRequired {
    /// The error of a request that waited for this authorization when none could be had
    /// (`reason`): the refusal's status, URL and challenge.
    pub(crate) fn failed(&self, reason: &str) -> HttpError {
        HttpError {
            kind: HttpErrorKind::Unauthorized,
            url: self.url.clone(),
            status: Some(self.status),
            content_type: None,
            body_excerpt: String::new(),
            challenge: self.challenge.clone(),
            reason: format!("authorization failed: {reason}"),
            hint: None,
        }
    }

    /// Whether the server asks for more scopes (`403` with `error="insufficient_scope"`).
    pub fn is_step_up(&self) -> bool {
        self.status == 403
    }
}

/// What a stdio server wrote on its stdout that is not JSON-RPC (a banner, a log line, a
/// `print`): how many such lines, and the first of them as they may be shown to a person. A
/// server that writes its logs on stdout may answer nothing a client can read, and fails its
/// handshake for a reason it never says: this is what it said instead
/// ([`Connection::stray_output`](crate::Connection::stray_output)). Bounded: a count and at
/// most [`StrayOutput::KEPT`] cut lines, however much it writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StrayOutput {
    /// How many lines.
    pub lines: u64,
    /// The first lines (at most [`StrayOutput::KEPT`]), each cut to [`StrayOutput::CUT`]
    /// characters (then `…`) and escaped as Rust escapes a string's characters (`\u{1b}`,
    /// `\r`, `\"`, `\\`): nothing in them for a terminal to act on.
    pub first: Vec<String>,
}

impl StrayOutput {
    /// How many of the first lines are kept.
    pub const KEPT: usize = 2;
    /// How many characters of a kept line are kept.
    pub const CUT: usize = 100;

    /// Counts one more line (its bytes, without the line ending), kept when it is among the
    /// first.
    pub fn note(&mut self, line: &[u8]) {
        self.lines += 1;
        if self.first.len() >= Self::KEPT {
            return;
        }
        // CUT characters take at most 4 bytes each.
        let text = String::from_utf8_lossy(&line[..line.len().min(Self::CUT * 4)]);
        let end = text.char_indices().nth(Self::CUT).map(|(at, _)| at);
        let mut shown = text[..end.unwrap_or(text.len())].escape_debug().to_string();
        if end.is_some() || line.len() > Self::CUT * 4 {
            shown.push('…');
        }
        self.first.push(shown);
    }
}

impl fmt::Display for StrayOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first = self.first.iter().map(|l| format!("\"{l}\""));
        let first = first.collect::<Vec<_>>().join(", ");
        match self.lines {
            1 => write!(
                f,
                "the server wrote 1 line on stdout that is not JSON-RPC: {first}"
            ),
            n if n <= self.first.len() as u64 => write!(
                f,
                "the server wrote {n} lines on stdout that are not JSON-RPC: {first}"
            ),
            n => write!(
                f,
                "the server wrote {n} lines on stdout that are not JSON-RPC, the first {}: \
                 {first}",
                self.first.len()
            ),
        }
    }
}

/// Where a token the server's configuration gives comes from, in the library's words (the
/// reason of a `401` to a request that carried it says so): a command line may say its own
/// option instead (`--bearer-env NAME`).
pub const CONFIGURED_TOKEN: &str = "the Authorization header of the server's configuration";

/// Why a `401` came to a request that carried the token of the server's configuration: the
/// server refused that token, and what its challenge says of it (`error`,
/// `error_description`).
pub(crate) fn refused_token(challenge: Option<&AuthChallenge>) -> String {
    let error = challenge.and_then(|c| c.param("error"));
    let description = challenge.and_then(|c| c.param("error_description"));
    let says = match (error, description) {
        (Some(e), Some(d)) => format!("; it says {e} ({d})"),
        (Some(e), None) => format!("; it says {e}"),
        (None, Some(d)) => format!("; it says {d}"),
        (None, None) => String::new(),
    };
    format!("the server refused the token ({CONFIGURED_TOKEN}){says}: is it the right one, and still valid?")
}

/// How much of an error body is kept for its excerpt.
pub(crate) const EXCERPT: usize = 512;

/// The text shown of an error body: its first [`EXCERPT`] bytes, trimmed. A character the cut
/// (or the body's end) splits is left out rather than shown as U+FFFD, so a text body stays
/// text; bytes that are not UTF-8 elsewhere are shown as U+FFFD.
pub(crate) fn body_excerpt(bytes: &[u8]) -> String {
    let mut cut = &bytes[..bytes.len().min(EXCERPT)];
    if let Err(e) = std::str::from_utf8(cut) {
        if e.error_len().is_none() {
            cut = &cut[..e.valid_up_to()];
        }
    }
    String::from_utf8_lossy(cut).trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stray_output_counts_every_line_and_keeps_two_escaped_and_cut() {
        let mut stray = StrayOutput::default();
        stray.note(b"1");
        assert_eq!(
            stray.to_string(),
            "the server wrote 1 line on stdout that is not JSON-RPC: \"1\""
        );
        stray.note("\u{1b}]0;title\u{7} \"q\" \\ bidi\u{202e}x".as_bytes());
        assert_eq!(
            stray.first[1],
            "\\u{1b}]0;title\\u{7} \\\"q\\\" \\\\ bidi\\u{202e}x"
        );
        assert!(stray
            .to_string()
            .contains("2 lines on stdout that are not JSON-RPC: \"1\", "));
        // Past two, only counted; a long line cut at 100 characters, not inside one.
        let long = "é".repeat(150);
        for _ in 0..1000 {
            stray.note(long.as_bytes());
        }
        assert_eq!(stray.lines, 1002);
        assert_eq!(stray.first.len(), 2);
        let mut cut = StrayOutput::default();
        cut.note(long.as_bytes());
        cut.note(&[b'x'; 10_000]);
        assert_eq!(cut.first[0], format!("{}…", "é".repeat(100)));
        assert_eq!(cut.first[1], format!("{}…", "x".repeat(100)));
        cut.note(b"third");
        assert!(
            cut.to_string().starts_with(
                "the server wrote 3 lines on stdout that are not JSON-RPC, the first 2: \"éé"
            ),
            "{cut}"
        );
        // Bytes that are not UTF-8 are shown replaced.
        let mut bad = StrayOutput::default();
        bad.note(b"\xff\xfeok");
        assert_eq!(bad.first[0], "\u{fffd}\u{fffd}ok");
    }

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

    fn error(kind: HttpErrorKind, url: &str) -> HttpError {
        HttpError {
            kind,
            url: url.into(),
            status: None,
            content_type: None,
            body_excerpt: String::new(),
            challenge: None,
            reason: "unexpected status".into(),
            hint: None,
        }
    }

    #[test]
    fn relative_redirects_are_resolved_against_the_url() {
        let base = "http://h:8080/a/b/mcp?q=1";
        for (location, resolved) in [
            ("https://new/mcp", "https://new/mcp"),
            ("//other:9/x", "http://other:9/x"),
            ("/v2/mcp", "http://h:8080/v2/mcp"),
            ("v2", "http://h:8080/a/b/v2"),
            ("../v2/mcp?x=1", "http://h:8080/a/v2/mcp?x=1"),
            ("../../../../top", "http://h:8080/top"),
            ("./", "http://h:8080/a/b/"),
            ("..", "http://h:8080/a/"),
            ("?x=2", "http://h:8080/a/b/mcp?x=2"),
            ("#f", "http://h:8080/a/b/mcp?q=1#f"),
            ("", "http://h:8080/a/b/mcp?q=1"),
        ] {
            assert_eq!(
                crate::url::resolve_location(base, location),
                resolved,
                "{location}"
            );
        }
        assert_eq!(crate::url::resolve_location("http://h", "x"), "http://h/x");
        let mut e = error(
            HttpErrorKind::Redirect {
                location: Some("/v2/mcp".into()),
            },
            "https://host/mcp",
        );
        e.status = Some(307);
        assert_eq!(
            e.to_string(),
            "HTTP 307 from https://host/mcp: unexpected status \
             (to https://host/v2/mcp; redirects are not followed)"
        );
    }

    #[test]
    fn an_html_page_is_shown_by_its_title() {
        let mut e = error(HttpErrorKind::Status, "https://h/mcp");
        e.status = Some(502);
        e.body_excerpt = "<!DOCTYPE html>\n<html><head><TITLE>\n 502  Bad &amp; Gateway\n\
                          </TITLE></head><body>nginx</body>"
            .into();
        assert_eq!(e.body_shown(), "502 Bad & Gateway");
        assert!(e.to_string().ends_with(": 502 Bad & Gateway"), "{e}");
        // Declared as HTML, with no title: the excerpt as it is.
        e.body_excerpt = "<p>down</p>".into();
        e.content_type = Some("text/html; charset=utf-8".into());
        assert_eq!(e.body_shown(), "<p>down</p>");
        // Not HTML: as it is, character references and all.
        e.content_type = Some("application/json".into());
        e.body_excerpt = r#"{"error":"a &amp; b <title>x</title>"}"#.into();
        assert_eq!(e.body_shown(), e.body_excerpt);
    }

    #[test]
    fn hints_from_the_failure_itself_or_the_http_client() {
        let tls = |f: TlsFailure| error(HttpErrorKind::Tls(f), "https://h/mcp");
        assert_eq!(
            tls(TlsFailure::UnknownIssuer).suggestion(),
            Some(Hint::TrustCa)
        );
        assert!(tls(TlsFailure::UnknownIssuer)
            .to_string()
            .ends_with("; trust its CA with http_client.tls.extra_ca_files (PEM)"));
        assert_eq!(
            tls(TlsFailure::NotTls).suggestion(),
            Some(Hint::PlainHttp {
                url: "http://h:443/mcp".into()
            })
        );
        assert_eq!(tls(TlsFailure::Expired).suggestion(), None);
        // A 400 saying a plain request went to an HTTPS port (nginx, Go, Apache).
        for body in [
            "400 The plain HTTP request was sent to HTTPS port",
            "Client sent an HTTP request to an HTTPS server.",
            "You're speaking plain HTTP to an SSL-enabled server port.",
        ] {
            let mut e = error(HttpErrorKind::Status, "http://h:8443/mcp");
            e.status = Some(400);
            e.body_excerpt = body.into();
            assert_eq!(
                e.suggestion(),
                Some(Hint::Https {
                    url: "https://h:8443/mcp".into()
                }),
                "{body}"
            );
        }
        let mut e = error(HttpErrorKind::Status, "http://h/mcp");
        e.status = Some(400);
        e.body_excerpt = "bad request".into();
        assert_eq!(e.suggestion(), None);
        // The HTTP client's own hint comes first.
        let mut e = error(HttpErrorKind::HeadCutShort, "http://h/mcp");
        e.hint = Some(Hint::NoH2c);
        assert_eq!(e.suggestion(), Some(Hint::NoH2c));
        assert!(e.to_string().contains("; does it speak h2c?"), "{e}");
        let failure =
            ExchangeFailure::new(HttpErrorKind::HeadCutShort, "cut").with_hint(Hint::NoH2c);
        assert_eq!(failure.hint, Some(Hint::NoH2c));
    }

    #[test]
    fn schemes_change_and_ports_stay() {
        for (url, scheme, changed) in [
            ("https://h/mcp", "http", "http://h:443/mcp"),
            ("http://h/mcp", "https", "https://h:80/mcp"),
            ("http://h:8080/mcp", "https", "https://h:8080/mcp"),
            ("https://[::1]/x?y", "http", "http://[::1]:443/x?y"),
            ("https://[::1]:9/x", "http", "http://[::1]:9/x"),
            ("http://h", "https", "https://h:80"),
            ("http://h/mcp", "http", "http://h/mcp"),
        ] {
            assert_eq!(with_scheme(url, scheme), changed, "{url}");
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

    #[test]
    fn an_excerpt_cut_inside_a_character_stays_text() {
        let body = "é".repeat(400);
        let shown = super::body_excerpt(body.as_bytes());
        assert_eq!(shown, "é".repeat(256));
        let odd = "x".repeat(511) + "é";
        assert_eq!(super::body_excerpt(odd.as_bytes()), "x".repeat(511));
        assert_eq!(super::body_excerpt(b"a\xffb"), "a\u{fffd}b");
    }
}
