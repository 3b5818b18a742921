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

/// The proxy answered `407`: it wants credentials, or refused those in its URL. `challenge`
/// is its `Proxy-Authenticate`, when known.
pub(crate) fn credentials_wanted(route: &ProxyRoute, challenge: Option<&str>) -> HttpFailure {
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
            "the proxy {proxy} refused the credentials in its URL (HTTP 407{asked}): check the \
             user name and password{}, with characters such as @ : / percent-encoded{unoffered}",
            where_to_put(route)
        )
    } else {
        format!(
            "the proxy {proxy} wants credentials (HTTP 407{asked}): put them in the proxy \
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
