//! `mcpwire info`: who the server is and what it offers.

use mcpwire::{Client, ConnectOptions, ServerConfig};
use serde_json::{json, Value};

use crate::exit_codes;
use crate::failure::Failure;
use crate::output;

/// The proxy an HTTP server is reached through, as `info` shows it (without credentials, with
/// the environment variable it came from), or `none`; `None` for a stdio server.
pub(crate) fn proxy_in_use(config: &ServerConfig, options: &ConnectOptions) -> Option<String> {
    let ServerConfig::Http(http) = config else {
        return None;
    };
    Some(
        options
            .http_client
            .proxy_for(&http.url)
            .unwrap_or_else(|| "none".into()),
    )
}

/// `mcpwire info`: the era and why it was chosen, the transport, for HTTP the version spoken
/// (and, when `--http2` asked for HTTP/2 and the server did not agree it, that too) and the
/// proxy in use (`proxy`, from [`proxy_in_use`]), then the server's identity, capabilities
/// and instructions.
pub(crate) fn info(
    client: &Client,
    json: bool,
    proxy: Option<&str>,
    asked_http2: bool,
) -> Result<u8, Failure> {
    let init = client
        .server_info()
        .ok_or_else(|| Failure::new(exit_codes::CONNECT, "no handshake"))?;
    let era = client
        .era()
        .map(|e| e.to_string())
        .unwrap_or_else(|| "unknown".into());
    let why = client.era_reason().map(|r| r.to_string());
    let transport = match client.http_transport() {
        None => "stdio",
        Some(mcpwire::HttpKind::Streamable) => "streamable-http",
        Some(_) => "sse (2024-11-05 HTTP+SSE)",
    };
    // The version the responses came in: HTTP/2 once one did.
    let version = client.http_counters().map(|c| match c.http2_responses {
        0 => "HTTP/1.1",
        _ => "HTTP/2",
    });
    if json {
        let v = serde_json::json!({
            "era": era,
            "eraReason": why,
            "transport": transport,
            "httpVersion": version,
            "proxy": proxy,
            "protocolVersion": init.protocol_version,
            "serverInfo": init.server_info,
            "capabilities": init.capabilities,
            "instructions": init.instructions,
        });
        output::json(&v);
        return Ok(exit_codes::OK);
    }
    match &why {
        Some(why) => outln!("era:          {era} ({why})"),
        None => outln!("era:          {era}"),
    }
    outln!("transport:    {transport}");
    match version {
        Some("HTTP/1.1") if asked_http2 => {
            outln!("http:         HTTP/1.1 (HTTP/2 was asked for; the server did not agree it)")
        }
        Some(version) => outln!("http:         {version}"),
        None => {}
    }
    if let Some(proxy) = proxy {
        outln!("proxy:        {proxy}");
    }
    outln!("protocol:     {}", init.protocol_version);
    let s = &init.server_info;
    match &s.title {
        Some(t) => outln!("server:       {} {} ({t})", s.name, s.version),
        None => outln!("server:       {} {}", s.name, s.version),
    }
    let caps = serde_json::to_value(&init.capabilities).unwrap_or(Value::Null);
    let names: Vec<&str> = caps
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    outln!("capabilities: {}", names.join(", "));
    if let Some(text) = &init.instructions {
        outln!("instructions:");
        for line in text.lines() {
            outln!("  {line}");
        }
    }
    Ok(exit_codes::OK)
}

/// Whether the server declared the capability `has` looks for (when its capabilities are
/// known).
pub(crate) fn offers(
    client: &Client,
    has: impl Fn(&mcpwire::core::types::ServerCapabilities) -> bool,
) -> bool {
    client.server_info().is_none_or(|i| has(&i.capabilities))
}

/// A list the server does not offer: empty, and said so (exit 0).
pub(crate) fn offers_none(what: &str, json: bool) -> u8 {
    match json {
        true => output::json(&json!([])),
        false => outln!("(the server offers no {what})"),
    }
    exit_codes::OK
}
