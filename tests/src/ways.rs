//! The ways a test reaches its server, so that one scenario holds on every transport and stack.
//!
//! - [`Way`]: how a plain HTTP test server (the fault server, most of all, or a real peer's
//!   Streamable HTTP endpoint) is reached: in clear, over TLS (the server behind a [`TlsFront`])
//!   on mcpwire's own client or on libcurl, or over TLS through an HTTP proxy's tunnel
//!   ([`Proxy`]).
//! - [`Transport`]: how a real peer is reached: its stdio, or its HTTP endpoint one [`Way`].
//! - [`Setting`]: everything a scenario runs in, one value per axis: the transport, and the
//!   [`Runtime`] that drives the client (smol, tokio). The runtime shows in two places alone,
//!   [`Setting::run`] (what drives the test) and [`Setting::connect`] (what runs the
//!   connection), so scenarios run on either unchanged.
//! - [`Reached`]: a real peer started for one setting, with the stderr it wrote whatever the
//!   transport (the stdio server's, or the HTTP server process's).

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpwire::{Client, ConnectOptions, Error, ProxySetting, ServerConfig};

use crate::fault_http::FaultServer;
use crate::proxy::Proxy;
pub use crate::scenario::Runtime;
use crate::tls_front::TlsFront;
use crate::HttpPeer;

/// How a client reaches a plain HTTP server: in clear on mcpwire's own client, or over TLS (the
/// server behind a TLS front) on mcpwire's own client, on libcurl, or on mcpwire's own client
/// through an HTTP proxy's tunnel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// In clear, on mcpwire's own client.
    Clear,
    /// Over TLS, on mcpwire's own client.
    Tls,
    /// Over TLS, on libcurl.
    TlsLibcurl,
    /// Over TLS through an HTTP proxy's `CONNECT` tunnel, on mcpwire's own client.
    TlsProxy,
}

impl Way {
    /// Every way.
    pub const ALL: [Way; 4] = [Way::Clear, Way::Tls, Way::TlsLibcurl, Way::TlsProxy];

    /// One way on each HTTP stack: mcpwire's own client in clear, and libcurl (over TLS).
    pub const STACKS: [Way; 2] = [Way::Clear, Way::TlsLibcurl];

    /// The fault server's URL this way (a TLS front started for it when needed), the options,
    /// and the proxy (kept for as long as it is used).
    pub fn reach(self, server: &FaultServer) -> (ServerConfig, ConnectOptions, Option<Proxy>) {
        self.reach_at(server.addr(), &server.url())
    }

    /// [`reach`](Self::reach) for any plain HTTP server at `addr` whose endpoint is `url`
    /// (`http://127.0.0.1:<port>/mcp`); over TLS, the front's endpoint is `/mcp` too.
    pub fn reach_at(
        self,
        addr: SocketAddr,
        url: &str,
    ) -> (ServerConfig, ConnectOptions, Option<Proxy>) {
        let mut options = ConnectOptions::default();
        if let Way::Clear = self {
            return (ServerConfig::http(url), options, None);
        }
        options.http_client.tls.danger_accept_invalid_certificates = true;
        options.http_client.http1_via_libcurl = matches!(self, Way::TlsLibcurl);
        let proxy = matches!(self, Way::TlsProxy).then(Proxy::start);
        if let Some(proxy) = &proxy {
            options.http_client.proxy = ProxySetting::Url {
                url: proxy.url(),
                no_proxy: Vec::new(),
            };
        }
        let url = TlsFront::start(addr).url();
        (ServerConfig::http(url), options, proxy)
    }
}

impl fmt::Display for Way {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Way::Clear => "HTTP on mcpwire's client",
            Way::Tls => "HTTPS on mcpwire's client",
            Way::TlsLibcurl => "HTTPS on libcurl",
            Way::TlsProxy => "HTTPS through a proxy's tunnel",
        })
    }
}

/// How a real peer is reached: over its stdio, or at its Streamable HTTP endpoint one [`Way`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The peer as a child process, spoken to on its stdin and stdout.
    Stdio,
    /// The peer serving Streamable HTTP, reached this way.
    Http(Way),
}

impl Transport {
    /// Stdio, and HTTP every way.
    pub const ALL: [Transport; 5] = [
        Transport::Stdio,
        Transport::Http(Way::Clear),
        Transport::Http(Way::Tls),
        Transport::Http(Way::TlsLibcurl),
        Transport::Http(Way::TlsProxy),
    ];

    /// HTTP every way.
    pub const HTTP: [Transport; 4] = [
        Transport::Http(Way::Clear),
        Transport::Http(Way::Tls),
        Transport::Http(Way::TlsLibcurl),
        Transport::Http(Way::TlsProxy),
    ];

    /// HTTP on each stack (see [`Way::STACKS`]).
    pub const HTTP_STACKS: [Transport; 2] = [
        Transport::Http(Way::STACKS[0]),
        Transport::Http(Way::STACKS[1]),
    ];
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transport::Stdio => f.write_str("stdio"),
            Transport::Http(way) => way.fmt(f),
        }
    }
}

/// Everything one run of a scenario is set in, one value per axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// How the peer is reached.
    pub transport: Transport,
    /// What drives the test and runs the connection.
    pub runtime: Runtime,
}

impl Setting {
    /// Every setting over `transports`: each transport crossed with the runtimes it differs
    /// on. mcpwire's own HTTP client (in clear, over TLS, through a proxy's tunnel) runs on
    /// each runtime's sockets: smol and tokio. Stdio's runtime axis is the adapter crate's own
    /// (`tests/runtimes` there), and libcurl runs on its own thread whatever the runtime: smol
    /// alone for those.
    pub fn each(transports: &[Transport]) -> Vec<Setting> {
        let mut settings = Vec::new();
        for &transport in transports {
            let runtimes: &[Runtime] = match transport {
                Transport::Http(Way::Clear | Way::Tls | Way::TlsProxy) => {
                    &[Runtime::Smol, Runtime::Tokio]
                }
                Transport::Stdio | Transport::Http(Way::TlsLibcurl) => &[Runtime::Smol],
            };
            for &runtime in runtimes {
                settings.push(Setting { transport, runtime });
            }
        }
        settings
    }

    /// Runs `f` to its end on this setting's runtime; panics when it has not ended within
    /// `limit`, with `context()` after the message (a server's stderr).
    pub fn run<T>(
        &self,
        limit: Duration,
        f: impl Future<Output = T>,
        context: impl FnOnce() -> String,
    ) -> T {
        self.runtime.run(limit, f, context)
    }

    /// Connects to `config` with this setting's runtime running the connection.
    pub async fn connect(
        &self,
        config: &ServerConfig,
        options: ConnectOptions,
    ) -> Result<Client, Error> {
        self.runtime.connect(config, options).await
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} on {}", self.transport, self.runtime)
    }
}

/// A real peer started for one setting: the server to connect to and the stderr the peer
/// writes, whatever the transport. What the way needs (the HTTP server process, a proxy) lives
/// as long as this.
pub struct Reached {
    /// The server, as the client is given it.
    pub config: ServerConfig,
    stderr: Arc<Mutex<Vec<String>>>,
    peer: Option<HttpPeer>,
    _proxy: Option<Proxy>,
}

impl Reached {
    /// Reaches a peer over `transport`: over stdio, `stdio()` is the command the connection
    /// starts; over HTTP, `http()` starts the server process. Gives the options the transport
    /// needs (TLS trust, libcurl, a proxy; over stdio, the hook that keeps the server's stderr):
    /// build the test's own on them.
    pub fn start(
        transport: Transport,
        stdio: impl FnOnce() -> ServerConfig,
        http: impl FnOnce() -> HttpPeer,
    ) -> (Reached, ConnectOptions) {
        match transport {
            Transport::Stdio => {
                let stderr = Arc::new(Mutex::new(Vec::new()));
                let lines = stderr.clone();
                let options = ConnectOptions::default()
                    .on_stderr(move |line| lines.lock().unwrap().push(line.to_owned()));
                let reached = Reached {
                    config: stdio(),
                    stderr,
                    peer: None,
                    _proxy: None,
                };
                (reached, options)
            }
            Transport::Http(way) => {
                let peer = http();
                let addr = addr_of(peer.url());
                let (config, options, proxy) = way.reach_at(addr, peer.url());
                let reached = Reached {
                    config,
                    stderr: Arc::default(),
                    peer: Some(peer),
                    _proxy: proxy,
                };
                (reached, options)
            }
        }
    }

    /// The peer's stderr lines so far.
    pub fn stderr(&self) -> Vec<String> {
        match &self.peer {
            Some(peer) => peer.stderr(),
            None => self.stderr.lock().unwrap().clone(),
        }
    }

    /// Waits up to `timeout` for a stderr line containing `needle` (on any runtime).
    pub async fn wait_for_stderr(&self, needle: &str, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.stderr().iter().any(|l| l.contains(needle)) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            async_io::Timer::after(Duration::from_millis(20)).await;
        }
    }

    /// The stderr so far, for a failure's message.
    pub fn stderr_text(&self) -> String {
        format!("; server stderr:\n{}", self.stderr().join("\n"))
    }
}

/// The socket address of a loopback URL (`http://127.0.0.1:<port>/…`).
fn addr_of(url: &str) -> SocketAddr {
    let rest = url
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("not a plain http URL: {url}"));
    let authority = rest.split('/').next().unwrap_or(rest);
    authority
        .parse()
        .unwrap_or_else(|e| panic!("not an address in {url}: {e}"))
}
