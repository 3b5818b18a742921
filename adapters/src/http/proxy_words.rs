//! What a proxy's failures are called, whichever HTTP client met them: it cannot be reached, it
//! refused the tunnel or the port, it wants credentials (and where to put them). Each is a
//! failure of the proxy's: the request never reached the server.

use mcpwire_core::error::{HttpErrorKind, ProxyFailure};

use super::backend::HttpFailure;
use super::options::ProxyRoute;

/// Where the proxy was set, for a message: ` (from the environment variable …)`, or nothing
/// for an explicit proxy.
pub(crate) fn whence(route: &ProxyRoute) -> String {
    match route.variable {
        Some(var) => format!(" (from the environment variable {var})"),
        None => String::new(),
    }
}

/// Where credentials go, for a message: ` in the environment variable …`, or nothing for an
/// explicit proxy (its URL is where it was given).
pub(crate) fn where_to_put(route: &ProxyRoute) -> String {
    match route.variable {
        Some(var) => format!(" in the environment variable {var}"),
        None => String::new(),
    }
}

/// The proxy cannot be reached.
pub(crate) fn unreachable_proxy(route: &ProxyRoute) -> HttpFailure {
    let message = format!(
        "the proxy {}{} cannot be reached: is it running, at this host and port?",
        route.shown,
        whence(route)
    );
    HttpFailure::new(
        HttpErrorKind::Proxy(ProxyFailure::Unreachable),
        message,
        true,
    )
}

/// The proxy answered `status` (`407`, or a `401` to a `CONNECT`, as tinyproxy does): it wants
/// credentials, or refused those in its URL. `challenge` is its `Proxy-Authenticate` (or
/// `WWW-Authenticate`), when known.
pub(crate) fn credentials_wanted(
    route: &ProxyRoute,
    status: u16,
    challenge: Option<&str>,
) -> HttpFailure {
    let scheme = challenge
        .and_then(|c| c.split_whitespace().next())
        .filter(|s| !s.is_empty());
    let asked = scheme.map(|s| format!(", {s}")).unwrap_or_default();
    // libcurl offers Basic only (isahc asks for no other proxy authentication).
    let unoffered = match scheme {
        Some(s) if !s.eq_ignore_ascii_case("basic") => {
            format!("; it asks for {s} authentication, and only Basic is offered")
        }
        _ => String::new(),
    };
    let proxy = &route.shown;
    let message = if route.credentials {
        format!(
            "the proxy {proxy} refused the credentials in its URL (HTTP {status}{asked}): check the \
             user name and password{}, with characters such as @ : / percent-encoded{unoffered}",
            where_to_put(route)
        )
    } else {
        format!(
            "the proxy {proxy} wants credentials (HTTP {status}{asked}): put them in the proxy \
             URL{}, as http://user:password@host:port{unoffered}",
            where_to_put(route)
        )
    };
    HttpFailure::new(
        HttpErrorKind::Proxy(ProxyFailure::Credentials),
        message,
        true,
    )
}

/// A `401` came back through the proxy, which forwarded the request, asking for credentials
/// OAuth cannot give (`challenge`, its `WWW-Authenticate`: `Basic`, `Digest`…): the proxy may
/// have sent it (tinyproxy asks for its own credentials so), or the server, which then wants no
/// OAuth sign-in. Either way the request did not run; no OAuth discovery follows.
pub(crate) fn unauthorized_through(route: &ProxyRoute, challenge: &str) -> HttpFailure {
    let scheme = challenge.split_whitespace().next().unwrap_or("Basic");
    let realm = mcpwire_core::error::AuthChallenge::parse(challenge)
        .and_then(|c| c.param("realm").map(|r| format!(" (realm \"{r}\")")))
        .unwrap_or_default();
    let proxy = &route.shown;
    let fix = if route.credentials {
        format!(
            "if the proxy asks, it refused the credentials in its URL{}: check the user name \
             and password, with characters such as @ : / percent-encoded",
            where_to_put(route)
        )
    } else {
        format!(
            "if the proxy asks, put its credentials in the proxy URL{}, as \
             http://user:password@host:port",
            where_to_put(route)
        )
    };
    let message = format!(
        "HTTP 401 asking for {scheme} credentials{realm} came back through the proxy \
         {proxy}{}: the proxy itself could be the one asking (some proxies, tinyproxy among \
         them, ask for their credentials with a 401): {fix}; if the server asks, it wants \
         {scheme} credentials, not an OAuth sign-in: give them as a header \
         (Authorization: {scheme} …)",
        whence(route)
    );
    HttpFailure::new(
        HttpErrorKind::Proxy(ProxyFailure::Credentials),
        message,
        true,
    )
}

/// The proxy answered a CONNECT to `target` (`host:port`) with `status`, neither 2xx nor 407.
pub(crate) fn tunnel_refused(route: &ProxyRoute, target: &str, status: u32) -> HttpFailure {
    let (proxy, from) = (&route.shown, whence(route));
    let message = if status >= 500 {
        format!(
            "the proxy {proxy}{from} could not open a tunnel to {target} (HTTP {status}): it \
             cannot reach the server from where it is"
        )
    } else {
        format!(
            "the proxy {proxy}{from} refused to open a tunnel to {target} (HTTP {status}): it \
             does not allow this host or port; ask its administrator, or reach the server \
             without the proxy (no_proxy)"
        )
    };
    HttpFailure::new(HttpErrorKind::Proxy(ProxyFailure::Refused), message, true)
}
