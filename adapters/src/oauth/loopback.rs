//! Signing a person in from a terminal (RFC 8252, native apps): the sign-in page's URL shown
//! (and opened in a browser when there is a display), the redirect caught by a listener on
//! `127.0.0.1`, or the redirect's URL pasted on stdin for a remote shell.
//!
//! The listener is read on the runtime the sign-in runs in (the connection's driver): tokio's
//! reactor and timers inside a tokio runtime, async-io's otherwise.

use std::io::{self, BufRead};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_lite::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, FutureExt};

use url::Url;

use super::options::{AuthorizeError, Authorizer};
use crate::future::BoxFuture;
use crate::runtime::Runtime;

/// The path the redirect comes back to.
const CALLBACK: &str = "/callback";

/// How long one connection to the listener may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest request head read.
const MAX_HEAD: usize = 16 * 1024;

/// Shows the user where to sign in.
pub type UrlShower = Arc<dyn Fn(&Url) + Send + Sync>;

/// An [`Authorizer`] for a person at a terminal (see the module docs). Its redirect URI is
/// [`redirect_uri`](Self::redirect_uri): give that to
/// [`OAuthOptions::new`](super::OAuthOptions::new).
///
/// Requests to the listener that are not the awaited redirect (another path, another `state`)
/// are answered `404` or `400` and ignored: a stray or forged request cannot end the sign-in.
/// How long the user may take is the flow's
/// [`authorization_timeout`](super::OAuthOptions::authorization_timeout).
#[derive(Clone)]
pub struct LoopbackAuthorizer {
    /// Non-blocking; registered with the runtime's reactor for each sign-in.
    listener: Arc<TcpListener>,
    port: u16,
    /// The redirect URI as given ([`LoopbackAuthorizer::bind_redirect`]), else `None`.
    given: Option<String>,
    /// The path the redirect comes back to.
    path: String,
    open_browser: bool,
    read_stdin: bool,
    show: UrlShower,
}

impl std::fmt::Debug for LoopbackAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackAuthorizer")
            .field("port", &self.port)
            .field("open_browser", &self.open_browser)
            .field("read_stdin", &self.read_stdin)
            .finish_non_exhaustive()
    }
}

impl LoopbackAuthorizer {
    /// Listens on `127.0.0.1:port` (`0`: a port the system picks; a fixed one for
    /// authorization servers that compare redirect URIs exactly). By default the URL is
    /// written to stderr, a browser is opened when there is a display, and stdin is not read.
    pub fn bind(port: u16) -> io::Result<LoopbackAuthorizer> {
        let listener = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        Ok(LoopbackAuthorizer {
            listener: Arc::new(listener),
            port,
            given: None,
            path: CALLBACK.to_owned(),
            open_browser: true,
            read_stdin: false,
            show: Arc::new(|url: &Url| {
                eprintln!("Sign in at this address (it opens in your browser if it can):\n  {url}")
            }),
        })
    }

    /// Listens for a redirect URI fixed beforehand (a host file's `redirectUri`, such as
    /// Gemini's `http://localhost:7777/oauth/callback`): an `http` URL of `localhost` or
    /// `127.0.0.1` with a port. It listens on `127.0.0.1` at that port and catches that path;
    /// [`redirect_uri`](Self::redirect_uri) is the URI as given.
    pub fn bind_redirect(uri: &str) -> io::Result<LoopbackAuthorizer> {
        let invalid = |why: &str| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the redirect URI {uri} {why}"),
            )
        };
        let url = Url::parse(uri).map_err(|_| invalid("is not a URL"))?;
        if url.scheme() != "http" || !matches!(url.host_str(), Some("localhost" | "127.0.0.1")) {
            return Err(invalid("is not http on localhost or 127.0.0.1"));
        }
        let port = url.port().ok_or_else(|| invalid("names no port"))?;
        let mut authorizer = LoopbackAuthorizer::bind(port)?;
        authorizer.path = url.path().to_owned();
        authorizer.given = Some(uri.to_owned());
        Ok(authorizer)
    }

    /// The redirect URI: `http://127.0.0.1:<port>/callback`, or the one given to
    /// [`bind_redirect`](Self::bind_redirect).
    pub fn redirect_uri(&self) -> String {
        match &self.given {
            Some(uri) => uri.clone(),
            None => format!("http://127.0.0.1:{}{CALLBACK}", self.port),
        }
    }

    /// Whether to open a browser (when there is a display; default yes).
    pub fn open_browser(mut self, open: bool) -> Self {
        self.open_browser = open;
        self
    }

    /// Whether to take the redirect's URL (or its query) pasted on stdin too, for a shell on
    /// another machine than the browser (default no).
    pub fn read_stdin(mut self, read: bool) -> Self {
        self.read_stdin = read;
        self
    }

    /// How to show the user the sign-in URL (default: a line on stderr).
    pub fn show_url(mut self, show: impl Fn(&Url) + Send + Sync + 'static) -> Self {
        self.show = Arc::new(show);
        self
    }
}

impl Authorizer for LoopbackAuthorizer {
    fn authorize(&self, url: &Url) -> BoxFuture<Result<String, AuthorizeError>> {
        let state = url
            .query_pairs()
            .find(|(k, _)| k == "state")
            .map(|(_, v)| v.into_owned());
        (self.show)(url);
        if self.open_browser && has_display() {
            open_in_browser(url);
        }
        let listener = self.listener.clone();
        let redirect_uri = self.redirect_uri();
        let path = self.path.clone();
        let caught = async move {
            let runtime = Runtime::here()
                .ok_or_else(|| AuthorizeError("no runtime to listen for the redirect on".into()))?;
            let listener = Listener::on(&runtime, &listener)
                .map_err(|e| AuthorizeError(format!("the redirect listener failed: {e}")))?;
            catch_redirect(&runtime, &listener, &redirect_uri, &path, state.as_deref()).await
        };
        if !self.read_stdin {
            return Box::pin(caught);
        }
        Box::pin(caught.or(pasted()))
    }
}

/// The listener in a runtime's reactor.
enum Listener {
    #[cfg(feature = "smol")]
    Smol(async_io::Async<TcpListener>),
    #[cfg(feature = "tokio")]
    Tokio(::tokio::net::TcpListener),
}

impl Listener {
    /// `listener` (a copy of its handle) in `runtime`'s reactor.
    fn on(runtime: &Runtime, listener: &TcpListener) -> io::Result<Listener> {
        let listener = listener.try_clone()?;
        Ok(match *runtime {
            #[cfg(feature = "smol")]
            Runtime::Smol { .. } => Listener::Smol(async_io::Async::new(listener)?),
            // Inside the runtime's context (the sign-in runs in the connection's driver).
            #[cfg(feature = "tokio")]
            Runtime::Tokio(ref handle) => {
                let _entered = handle.enter();
                Listener::Tokio(::tokio::net::TcpListener::from_std(listener)?)
            }
        })
    }
}

/// Accepts connections until the redirect with the awaited `state` comes.
async fn catch_redirect(
    runtime: &Runtime,
    listener: &Listener,
    redirect_uri: &str,
    callback: &str,
    state: Option<&str>,
) -> Result<String, AuthorizeError> {
    let failed = |e: io::Error| AuthorizeError(format!("the redirect listener failed: {e}"));
    loop {
        let handled: Option<Option<String>> = match *listener {
            #[cfg(feature = "smol")]
            Listener::Smol(ref l) => {
                let (stream, _) = l.accept().await.map_err(failed)?;
                within_timeout(runtime, one_request(stream, callback, state)).await
            }
            #[cfg(feature = "tokio")]
            Listener::Tokio(ref l) => {
                let (stream, _) = l.accept().await.map_err(failed)?;
                let stream = crate::runtime::host::TokioIo(stream);
                within_timeout(runtime, one_request(stream, callback, state)).await
            }
        };
        if let Some(Some(query)) = handled {
            return Ok(format!("{redirect_uri}?{query}"));
        }
    }
}

/// One connection's request, unless it takes longer than [`REQUEST_TIMEOUT`].
async fn within_timeout(
    runtime: &Runtime,
    request: impl std::future::Future<Output = Option<String>>,
) -> Option<Option<String>> {
    async { Some(request.await) }
        .or(async {
            runtime.sleep_until(Instant::now() + REQUEST_TIMEOUT).await;
            None
        })
        .await
}

/// Reads one request; answers it; the query when it is the awaited redirect.
async fn one_request(
    mut stream: impl AsyncRead + AsyncWrite + Unpin,
    callback: &str,
    state: Option<&str>,
) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let got_state = url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned());
    let awaited = method == "GET" && path == callback && got_state.as_deref() == state;
    let (status, page) = match (awaited, path == callback) {
        (true, _) => (
            "200 OK",
            "Signed in. You can close this window and go back to the terminal.",
        ),
        (false, true) => (
            "400 Bad Request",
            "This is not the sign-in being waited for.",
        ),
        (false, false) => ("404 Not Found", "Nothing here."),
    };
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>mcpwire</title></head>\
         <body><p>{page}</p></body></html>"
    );
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\nCache-Control: no-store\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.flush().await;
    awaited.then(|| query.to_owned())
}

/// A line pasted on stdin: the redirect's URL, or its query. Read on a thread of its own
/// (`mcpwire-stdin`, only when [`LoopbackAuthorizer::read_stdin`] is on), not a runtime's
/// pool for blocking work: a read nobody answers would hold up that runtime's shutdown (tokio
/// waits for its blocking tasks). The thread ends with the first line, or at the end of stdin.
async fn pasted() -> Result<String, AuthorizeError> {
    let (tx, rx) = async_channel::bounded(1);
    let reader = std::thread::Builder::new()
        .name("mcpwire-stdin".into())
        .spawn(move || loop {
            let mut line = String::new();
            let read = io::stdin().lock().read_line(&mut line).map(|n| (n, line));
            match read {
                Ok((_, line)) if !line.is_empty() && line.trim().is_empty() => continue,
                other => {
                    let _ = tx.send_blocking(other);
                    return;
                }
            }
        });
    if let Err(e) = reader {
        return Err(AuthorizeError(format!("reading stdin: {e}")));
    }
    match rx.recv().await {
        Ok(Ok((_, line))) if !line.trim().is_empty() => Ok(line.trim().to_owned()),
        // No stdin (closed): only the listener is left; wait for it.
        Ok(Ok(_)) | Err(_) => std::future::pending().await,
        Ok(Err(e)) => Err(AuthorizeError(format!("reading stdin: {e}"))),
    }
}

/// Whether a browser can be shown: a graphical session on Linux and other Unix; always on
/// macOS and Windows.
fn has_display() -> bool {
    if cfg!(any(target_os = "macos", windows)) {
        return true;
    }
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()))
}

/// Opens `url` in the user's browser, best effort (the URL was shown anyway).
fn open_in_browser(url: &Url) {
    let url = url.as_str();
    #[cfg(target_os = "macos")]
    let command = std::process::Command::new("open").arg(url).spawn();
    // `rundll32` takes the URL as one argument: no shell reads its `&`s.
    #[cfg(windows)]
    let command = std::process::Command::new("rundll32")
        .args(["url.dll,FileProtocolHandler", url])
        .spawn();
    #[cfg(not(any(target_os = "macos", windows)))]
    let command = std::process::Command::new("xdg-open")
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = command {
        // Reaped off the async threads (the runtime's pool for blocking work); its outcome
        // does not matter.
        match Runtime::here() {
            Some(runtime) => runtime.unblock_detached(move || drop(child.wait())),
            None => drop(std::thread::spawn(move || child.wait())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_redirect_uri_is_listened_on_as_given_when_it_is_loopback_http_with_a_port() {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = free.local_addr().unwrap().port();
        drop(free);
        let uri = format!("http://localhost:{port}/oauth/callback");
        let a = LoopbackAuthorizer::bind_redirect(&uri).unwrap();
        assert_eq!(a.redirect_uri(), uri);
        assert_eq!((a.port, a.path.as_str()), (port, "/oauth/callback"));
        for bad in [
            "https://localhost:7777/cb",
            "http://example.com:7777/cb",
            "http://localhost/cb",
            "not a url",
        ] {
            let e = LoopbackAuthorizer::bind_redirect(bad).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad}");
        }
    }
}
