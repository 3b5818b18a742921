//! How a connection is opened: the options ([`ConnectOptions`]), the server's process spawned
//! or the HTTP backend chosen, and the handle and the driver wired to one shared state.

use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "smol")]
use futures_lite::{AsyncRead, AsyncWrite};
use mcpwire_core::config::{HttpConfig, ServerConfig, StdioConfig};
use mcpwire_core::tap::FrameObserver;
use mcpwire_core::types::Implementation;
use mcpwire_core::{
    ClientConfig, Connection, Era, HttpOptions, Limits, ShutdownTimeouts, StdioOptions,
};
use serde_json::{Map, Value};

use crate::client::Client;
use crate::contain::Taps;
use crate::driver::run::SharedConnection;
use crate::driver::spans::{ConnectionSpan, Peer, TraceContext};
use crate::driver::state::ConnectionState;
use crate::driver::Driver;
use crate::error::Error;
use crate::handlers::Handlers;
use crate::http::counters::CounterCells;
use crate::http::io::HttpIo;
use crate::http::router::{Refused, Router};
use crate::http::{HttpBackend, HttpClientOptions, HttpExchangeObserver};
#[cfg(feature = "oauth")]
use crate::oauth;
use crate::runtime::child::{Child, Writer};
use crate::runtime::Runtime;
use crate::stdio::pipe_io::PipeIo;
use crate::stdio::pipe_reader::PipeReader;
use crate::stdio::stderr::StderrTail;
use crate::stdio::{ProcessActionObserver, StderrCallback};
use crate::transport::TransportIo;

/// How to connect: who we are, what we answer, limits and taps. Every field has a default,
/// beside it ([`ConnectOptions::default`]): a 30 s handshake, the era detected, no handlers (no
/// client capabilities declared), the design's limits, mcpwire's own HTTP/1.1 client for
/// `http://` and `https://` servers and, with feature `libcurl`, libcurl for HTTP/2, SOCKS and
/// `https://` proxy URLs.
/// Each call's own options (its 30 s timeout, progress) are [`CallOptions`](crate::CallOptions).
///
/// Build one with the setters, by struct update, or field by field:
///
/// ```
/// use std::time::Duration;
/// use mcpwire::{ConnectOptions, Era, Handlers};
///
/// let options = ConnectOptions::default()
///     .handlers(Handlers::new())
///     .on_stderr(|line| eprintln!("server: {line}"));
/// let options = ConnectOptions { era: Era::Handshake, ..options };
/// let mut options = options;
/// options.init_timeout = Duration::from_secs(10);
/// ```
pub struct ConnectOptions {
    /// Who we are.
    pub client_info: Implementation,
    /// How long the start may take, the era probe and the handshake together (default 30 s).
    pub init_timeout: Duration,
    /// Which era to speak (default: detect it with a `server/discover` probe).
    pub era: Era,
    /// How long the probe may go unanswered before the server is taken for a handshake-era one
    /// and started again (default 10 s); never more than a third of `init_timeout` (in whole
    /// seconds from 3 s on), so that `initialize` always gets the rest.
    pub probe_timeout: Duration,
    /// The waits of the graceful shutdown (default 2 s after stdin EOF, 2 s after SIGTERM).
    pub shutdown: ShutdownTimeouts,
    /// The longest stdout line accepted (default 16 MiB).
    pub max_line: usize,
    /// The HTTP transport's limits: the largest JSON body and SSE event, the resume budget and
    /// wait, and whether to open the standalone stream.
    pub http: HttpOptions,
    /// Caps on what the connection holds (pending calls, inbound requests, unread
    /// notifications and events).
    pub limits: Limits,
    /// Answers to server requests; they decide the capabilities declared.
    pub handlers: Handlers,
    /// Whether a tool the server annotates read-only or idempotent is safe to repeat: a call to
    /// it lost after it may have reached the server is then re-issued once instead of failing
    /// with [`Error::MaybeExecuted`]. Off by default: annotations are the server's word.
    pub trust_tool_annotations: bool,
    /// Called with each line the server writes to stderr. Like the observers below, it is
    /// called as the connection steps, in the order things happen: it must not block, nor
    /// wait on the client. A panic in it is caught and told
    /// ([`Event::HandlerFailed`](crate::Event::HandlerFailed)); it is called again next time.
    pub on_stderr: Option<StderrCallback>,
    /// How much of the server's stderr to keep for errors (default 8 KiB).
    pub stderr_tail: usize,
    /// Sees every frame in and out (message bodies only: never HTTP headers, so never an
    /// `Authorization` value). Called while the connection's state is locked, in wire order:
    /// it must not call into the client. A panic in it is caught and told; it is called again.
    pub observer: Option<Box<dyn FrameObserver>>,
    /// How the default HTTP backend reaches servers: TLS trust and client certificates, the
    /// proxy, HTTP versions, the connection pool's limits.
    pub http_client: HttpClientOptions,
    /// The HTTP client for HTTP servers (default: mcpwire's own HTTP/1.1 client for `http://`
    /// and `https://` servers, directly or through an HTTP proxy, and with feature `libcurl`,
    /// `IsahcBackend` (libcurl) for HTTP/2, SOCKS and `https://` proxy URLs, both with
    /// [`ConnectOptions::http_client`]; without that feature, a connection that needs libcurl
    /// fails with [`Error::FeatureMissing`]).
    pub http_backend: Option<Arc<dyn HttpBackend>>,
    /// Sees each HTTP exchange go out and its response head come back (method, URL without
    /// credentials, status, content type, session id; never a request header).
    pub on_http_exchange: Option<HttpExchangeObserver>,
    /// Sees each step of a stdio server's close as it is taken (stdin's end, SIGTERM,
    /// SIGKILL; on Windows the job object's end for both), and a new start of the server
    /// (default none).
    pub on_process_action: Option<ProcessActionObserver>,
    /// OAuth for HTTP servers that answer `401` (default none: such a refusal ends the
    /// request with the HTTP error). See [`oauth`].
    #[cfg(feature = "oauth")]
    pub oauth: Option<oauth::OAuthOptions>,
    /// How errors and the client name the server (default: its command line, or its URL
    /// without credentials). A server read from a host's file whose arguments hold secrets from
    /// the environment or an input is named by
    /// [`LoadedServer::target`](crate::hosts::LoadedServer::target), with `***` in their place.
    pub shown_as: Option<String>,
    /// Gives the entries each request adds to its `params._meta`: the current trace context
    /// (`traceparent`, `tracestate`, `baggage`, W3C Trace Context) most often (default none).
    /// Called in the caller's own task when a call is made, so that it sees the caller's
    /// context; no OpenTelemetry crate is needed. A call's own `_meta` entries win over these,
    /// and the keys the protocol reserves (`progressToken`, `io.modelcontextprotocol/*`) are
    /// never set by them. A panic in it is caught and told
    /// ([`Event::HandlerFailed`](crate::Event::HandlerFailed)); the call goes without them.
    pub trace_context: Option<TraceContext>,
    /// Records `mcp.resource.uri` (the resource's URI) on the spans of `resources/read`,
    /// `resources/subscribe` and `resources/unsubscribe` and, with feature `opentelemetry`, on
    /// their `mcp.client.operation.duration` measures (default off: OpenTelemetry's MCP
    /// conventions make it opt-in, URIs being many and possibly private).
    pub telemetry_resource_uri: bool,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            client_info: Implementation::mcpwire(),
            init_timeout: Duration::from_secs(30),
            era: Era::Auto,
            probe_timeout: Duration::from_secs(10),
            shutdown: ShutdownTimeouts::default(),
            max_line: mcpwire_core::codec::jsonl::DEFAULT_MAX_LINE,
            http: HttpOptions::default(),
            limits: Limits::default(),
            handlers: Handlers::default(),
            trust_tool_annotations: false,
            on_stderr: None,
            stderr_tail: 8 * 1024,
            observer: None,
            http_client: HttpClientOptions::default(),
            http_backend: None,
            on_http_exchange: None,
            on_process_action: None,
            #[cfg(feature = "oauth")]
            oauth: None,
            shown_as: None,
            trace_context: None,
            telemetry_resource_uri: false,
        }
    }
}

impl std::fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectOptions")
            .field("client_info", &self.client_info)
            .field("init_timeout", &self.init_timeout)
            .field("era", &self.era)
            .field("http", &self.http)
            .field("http_client", &self.http_client)
            .field("limits", &self.limits)
            .field("handlers", &self.handlers)
            .finish_non_exhaustive()
    }
}

impl ConnectOptions {
    /// The core's configuration from these options (the capabilities follow the handlers).
    fn client_config(&self) -> ClientConfig {
        let (capabilities, capabilities_on_demand) = self.handlers.declared();
        ClientConfig {
            client_info: self.client_info.clone(),
            capabilities,
            capabilities_on_demand,
            init_timeout: self.init_timeout,
            era: self.era,
            probe_timeout: self.probe_timeout,
            limits: self.limits.clone(),
            trust_tool_annotations: self.trust_tool_annotations,
            ..ClientConfig::default()
        }
    }

    fn stdio_options(&self) -> StdioOptions {
        StdioOptions {
            shutdown: self.shutdown,
            max_line: self.max_line,
        }
    }

    /// Sets the handlers.
    pub fn handlers(mut self, handlers: Handlers) -> Self {
        self.handlers = handlers;
        self
    }

    /// Sets the frame observer.
    pub fn observer(mut self, observer: impl FrameObserver + 'static) -> Self {
        self.observer = Some(Box::new(observer));
        self
    }

    /// Sets the function that gives each request's trace context entries (see the field).
    ///
    /// ```
    /// use mcpwire::ConnectOptions;
    /// use serde_json::{json, Map};
    ///
    /// let options = ConnectOptions::default().trace_context(|| {
    ///     let mut entries = Map::new();
    ///     let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    ///     entries.insert("traceparent".into(), json!(traceparent));
    ///     entries
    /// });
    /// ```
    pub fn trace_context(
        mut self,
        f: impl Fn() -> Map<String, Value> + Send + Sync + 'static,
    ) -> Self {
        self.trace_context = Some(Arc::new(f));
        self
    }

    /// Sets the stderr line callback.
    pub fn on_stderr(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_stderr = Some(Arc::new(f));
        self
    }

    /// The same options with the host's observers wrapped so that a panic in one is caught,
    /// told once on the event stream, and the observer called again next time (see
    /// [`crate::contain`]).
    fn contained(mut self) -> (Self, Taps) {
        let taps = Taps::new();
        self.on_stderr = self.on_stderr.map(|f| taps.stderr(f));
        self.on_process_action = self.on_process_action.map(|f| taps.process(f));
        self.on_http_exchange = self.on_http_exchange.map(|f| taps.http(f));
        self.observer = self.observer.map(|o| taps.frames(o));
        (self, taps)
    }

    /// The handle and the driver of a connection whose core is `conn`, on `runtime`, to a
    /// server named `target` (its process `pid`, 0 for none) at `peer`.
    fn finish(
        mut self,
        taps: Taps,
        mut conn: Connection,
        (target, pid, peer): (String, u32, Peer),
        io: Box<dyn TransportIo>,
        runtime: Runtime,
    ) -> (Client, Driver) {
        if let Some(o) = self.observer.take() {
            conn.set_observer(o);
        }
        // The one wall-clock reading the connection gets: the times of the tasks it runs for
        // the server count on from it.
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        conn.set_wall_clock(runtime.now(), wall);
        let max_unread = self.limits.max_notifications;
        let mut state = ConnectionState::new(conn, target, pid, max_unread);
        state.tap_failures = taps.log;
        state.span = ConnectionSpan::new(&state.target, &peer, self.telemetry_resource_uri);
        state.peer = peer;
        let shared = SharedConnection::new(state, runtime, self.trace_context);
        let driver = Driver::new(shared.clone(), io, self.handlers, self.on_stderr);
        (Client::new(shared), driver)
    }
}

#[cfg(feature = "smol")]
/// Spawns the server (or, for HTTP, prepares the first request) and starts the handshake.
/// Returns the handle and the driver, which must be polled (spawned on an executor) for anything
/// to happen. Spawn failures surface here, and so does an HTTP URL that is not `http://` or
/// `https://` with a host ([`Error::Client`] with [`ClientError::Url`](mcpwire_core::ClientError::Url)),
/// before any IO.
///
/// The connection runs on smol's side of the runtime seam (async-io's reactor and timers,
/// async-process's children) whatever executor polls it, and the host's handlers run as tasks
/// inside the driver's own task. In a tokio host, `mcpwire::tokio` (feature `tokio`) runs it on
/// tokio instead.
pub fn connect(config: &ServerConfig, options: ConnectOptions) -> Result<(Client, Driver), Error> {
    connect_on(config, options, Runtime::Smol { spawn: false })
}

/// [`connect`] on `runtime`.
pub(crate) fn connect_on(
    config: &ServerConfig,
    options: ConnectOptions,
    runtime: Runtime,
) -> Result<(Client, Driver), Error> {
    let (options, taps) = options.contained();
    let stdio = match config {
        ServerConfig::Stdio(s) => s,
        ServerConfig::Http(h) => return connect_http(h, options, taps, runtime),
    };
    let command = shown_as(&options, stdio);
    let child = runtime
        .spawn_server(stdio)
        .map_err(|e| spawn_error(command.clone(), e))?;
    Ok(stdio_connection(
        stdio, options, taps, command, child, runtime,
    ))
}

/// [`connect_on`], the server spawned while the calling thread goes on (it awaits the spawner
/// thread instead of waiting for it): many servers connected at once from one thread are
/// spawned one after the other with no wait between them.
pub(crate) async fn connect_on_async(
    config: &ServerConfig,
    options: ConnectOptions,
    runtime: Runtime,
) -> Result<(Client, Driver), Error> {
    let stdio = match config {
        ServerConfig::Stdio(s) => s,
        ServerConfig::Http(_) => return connect_on(config, options, runtime),
    };
    let (options, taps) = options.contained();
    let command = shown_as(&options, stdio);
    let child = runtime
        .spawn_server_async(stdio)
        .await
        .map_err(|e| spawn_error(command.clone(), e))?;
    Ok(stdio_connection(
        stdio, options, taps, command, child, runtime,
    ))
}

/// How a stdio server is named in errors: as the options show it, else its command line.
fn shown_as(options: &ConnectOptions, stdio: &StdioConfig) -> String {
    options.shown_as.clone().unwrap_or_else(|| {
        std::iter::once(stdio.command.as_str())
            .chain(stdio.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// The connection to a stdio server just spawned.
fn stdio_connection(
    stdio: &StdioConfig,
    options: ConnectOptions,
    taps: Taps,
    command: String,
    child: Child,
    runtime: Runtime,
) -> (Client, Driver) {
    let pid = child.pid;
    let conn = Connection::stdio(
        runtime.now(),
        options.client_config(),
        options.stdio_options(),
    );
    let tail = StderrTail::new(options.stderr_tail, options.on_stderr.clone());
    let mut io = PipeIo::child(child, tail, stdio.clone(), runtime.clone());
    io.observe(options.on_process_action.clone());
    let server = (command, pid, Peer::pipe());
    options.finish(taps, conn, server, Box::new(io), runtime)
}

/// The error of a spawn that failed: [`Error::FileLimit`] when it was for want of file
/// descriptors, else [`Error::Spawn`].
fn spawn_error(command: String, e: std::io::Error) -> Error {
    #[cfg(unix)]
    if let Some(limit) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<crate::stdio::spawn::FdLimit>())
    {
        return Error::FileLimit {
            command,
            soft: limit.soft,
            hard: limit.hard,
            whole_system: limit.whole_system,
        };
    }
    Error::Spawn {
        command,
        message: e.to_string(),
    }
}

fn connect_http(
    config: &HttpConfig,
    options: ConnectOptions,
    taps: Taps,
    runtime: Runtime,
) -> Result<(Client, Driver), Error> {
    // A URL no HTTP client can be given fails here, by name, before anything is read or sent.
    mcpwire_core::config::check_url(&config.url)
        .map_err(|e| Error::Client(mcpwire_core::ClientError::Url(e)))?;
    // The URL names the connection in errors and events: without its credentials.
    let shown =
        (options.shown_as.clone()).unwrap_or_else(|| mcpwire_core::error::redact_url(&config.url));
    let backend = match options.http_backend.clone() {
        Some(b) => b,
        // The default client: its options checked here for the server's URL, by name.
        None => match Router::for_server(&options.http_client, &config.url, runtime.clone()) {
            Ok(router) => Arc::new(router),
            Err(Refused::Options(message)) => {
                return Err(Error::HttpOptions {
                    target: shown,
                    message,
                })
            }
            #[cfg(not(feature = "libcurl"))]
            Err(Refused::NoLibcurl(need)) => {
                return Err(Error::FeatureMissing {
                    target: shown,
                    feature: crate::http::router::LIBCURL_FEATURE,
                    needed_for: need.words(),
                })
            }
        },
    };
    #[cfg(feature = "oauth")]
    let oauth = options.oauth.clone();
    #[cfg(feature = "oauth")]
    let backend = match &oauth {
        Some(o) if o.dpop => {
            oauth::dpop_backend(backend, &config.url).map_err(|message| Error::HttpOptions {
                target: shown.clone(),
                message,
            })?
        }
        _ => backend,
    };
    let http = HttpOptions {
        #[cfg(feature = "oauth")]
        authorization: options.http.authorization || oauth.is_some(),
        ..options.http.clone()
    };
    let conn = Connection::http(runtime.now(), options.client_config(), config, http)?;
    let counters = Arc::new(CounterCells::default());
    #[cfg(feature = "oauth")]
    let auth_backend = backend.clone();
    let io = Box::new(HttpIo::new(
        backend,
        options.on_http_exchange.clone(),
        &options.http_client,
        counters.clone(),
    ));
    let peer = Peer::of_url(&config.url);
    #[cfg(feature = "oauth")]
    let auth_runtime = runtime.clone();
    #[allow(unused_mut)]
    let (client, mut driver) = options.finish(taps, conn, (shown, 0, peer), io, runtime);
    #[cfg(feature = "oauth")]
    if let Some(oauth) = oauth {
        driver.set_auth(oauth::AuthSession::new(
            oauth,
            auth_backend,
            &config.url,
            auth_runtime,
        ));
    }
    client.set_http_counters(counters);
    Ok((client, driver))
}

#[cfg(feature = "smol")]
/// Connects to a server over any pair of byte streams that carry its stdout and stdin (JSONL):
/// an SSH channel, `docker exec`, a child the host started itself, an in-process server.
/// `name` names it in errors. There is no process to signal: closing closes `stdin` and waits
/// for `stdout` to end, and an era probe that needs a fresh server fails the connection.
pub fn connect_streams<R, W>(
    name: &str,
    stdout: R,
    stdin: W,
    options: ConnectOptions,
) -> (Client, Driver)
where
    R: AsyncRead + Send + 'static,
    W: AsyncWrite + Send + 'static,
{
    let stdout = PipeReader::Stream(Box::pin(stdout));
    let stdin = Writer::Futures(Box::pin(stdin));
    let runtime = Runtime::Smol { spawn: false };
    connect_pipes(name, stdout, stdin, options, runtime)
}

/// A connection over a server's stdout and stdin, as readers and a writer of `runtime`.
pub(crate) fn connect_pipes(
    name: &str,
    stdout: PipeReader,
    stdin: Writer,
    options: ConnectOptions,
    runtime: Runtime,
) -> (Client, Driver) {
    let (options, taps) = options.contained();
    let conn = Connection::stdio(
        runtime.now(),
        options.client_config(),
        options.stdio_options(),
    );
    let mut io = PipeIo::streams(Some(stdout), Some(stdin));
    io.observe(options.on_process_action.clone());
    let server = (name.to_owned(), 0, Peer::pipe());
    options.finish(taps, conn, server, Box::new(io), runtime)
}

#[cfg(feature = "smol")]
/// Connects, spawns the driver on smol's global executor and waits for the handshake. When
/// the handshake fails, the connection is closed as on every other path (a stdio server gets
/// stdin EOF, then SIGTERM, then SIGKILL, and is reaped) before the error is returned.
/// The host's handlers run as tasks of their own on smol's global executor.
pub async fn connect_smol(config: &ServerConfig, options: ConnectOptions) -> Result<Client, Error> {
    let (client, driver) = connect_on_async(config, options, Runtime::Smol { spawn: true }).await?;
    smol::spawn(driver).detach();
    ready_or_closed(client).await
}

/// Waits for the handshake; when it fails, closes the connection (as on every other path)
/// before giving the error.
pub(crate) async fn ready_or_closed(client: Client) -> Result<Client, Error> {
    if let Err(e) = client.ready().await {
        client.close().await;
        return Err(e);
    }
    Ok(client)
}
