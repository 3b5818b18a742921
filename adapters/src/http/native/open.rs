//! A new connection of mcpwire's own client, and every wait on the network it makes, on the
//! connection's runtime ([`Runtime`]'s network side): the host's name resolved (by the system's
//! resolver, on a blocking thread), the TCP connect to its addresses by Happy
//! Eyeballs ([`super::happy_eyeballs`]), an HTTP proxy's `CONNECT` tunnel, the TLS handshake,
//! each bounded by the connect timeout's timer.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_lite::FutureExt;
use mcpwire_core::error::HttpErrorKind;

use super::conn::Conn;
use super::happy_eyeballs;
use super::target::Target;
use crate::http::backend::HttpFailure;
use crate::runtime::net::Socket;
use crate::runtime::Runtime;

/// A new connection to `target`: TCP (to its proxy, if it has one), then through an HTTP proxy
/// for `https://` a `CONNECT` tunnel, then the TLS handshake for `https://` (`tls`); the TCP
/// connect within the connect timeout, and the tunnel and the handshake within another.
pub(super) async fn open(
    runtime: &Runtime,
    target: &Target,
    timeout: Duration,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> Result<Conn, HttpFailure> {
    let hop = target.proxy.as_deref();
    let (host, port) = match hop {
        Some(hop) => (hop.host.as_str(), hop.port),
        None => (target.host.as_str(), target.port),
    };
    let stream = connect(runtime, host, port, timeout)
        .await
        .map_err(|f| match hop {
            Some(hop) => hop.connect_failed(f),
            None => f,
        })?;
    let mut conn = Conn::plain(stream);
    if hop.is_none() && tls.is_none() {
        return Ok(conn);
    }
    let what = if tls.is_some() {
        "TLS handshake"
    } else {
        "tunnel"
    };
    let setup = async {
        if let Some(hop) = hop.filter(|_| target.tls) {
            hop.tunnel(&mut conn, &target.host_and_port()).await?;
        }
        if let Some(config) = tls {
            conn.start_tls(config, &target.host).await?;
        }
        Ok(())
    };
    let timer = async {
        runtime.sleep(timeout).await;
        Err(HttpFailure::new(
            HttpErrorKind::ConnectTimeout,
            format!("no {what} within the connect timeout"),
            true,
        ))
    };
    setup.or(timer).await?;
    Ok(conn)
}

/// Connects to the first of the host's addresses that answers, the attempts overlapping as
/// Happy Eyeballs has them (an address that never answers does not hold up the others); the
/// name's resolution and the connects together within `timeout`.
async fn connect(
    runtime: &Runtime,
    host: &str,
    port: u16,
    timeout: Duration,
) -> Result<Socket, HttpFailure> {
    let attempt = async {
        let addrs = resolve(runtime, host, port).await?;
        happy_eyeballs::connect(runtime, addrs).await.map_err(|e| {
            HttpFailure::new(
                HttpErrorKind::ConnectionRefused,
                format!(
                    "the connection was refused or the host cannot be reached: is the server running, on this port? ({e})"
                ),
                true,
            )
        })
    };
    let timer = async {
        runtime.sleep(timeout).await;
        Err(HttpFailure::new(
            HttpErrorKind::ConnectTimeout,
            "no connection within the connect timeout",
            true,
        ))
    };
    // Small requests go out at once: the socket is made so.
    attempt.or(timer).await
}

/// The host's addresses: an IP literal as it is, a name through the system's resolver (on a
/// blocking thread of the runtime's: it may take a while).
async fn resolve(runtime: &Runtime, host: &str, port: u16) -> Result<Vec<SocketAddr>, HttpFailure> {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    match runtime.resolve(host, port).await {
        Ok(addrs) if !addrs.is_empty() => Ok(addrs),
        Ok(_) | Err(_) => Err(HttpFailure::new(
            HttpErrorKind::NameResolution,
            "the host name does not resolve",
            true,
        )),
    }
}
