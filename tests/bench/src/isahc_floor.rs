//! The floor of mcpwire's HTTP design: isahc (libcurl driven by its agent thread), the client
//! mcpwire's default backend wraps, with no MCP client above it. The same JSON-RPC exchanges as
//! the hand-written floor, written by hand, over isahc's async API under `smol::block_on`, with
//! keep-alive. What mcpwire costs over HTTP beyond this is mcpwire's own; what this costs over
//! the hand-written floor is libcurl's and the hop to its thread.

use isahc::{AsyncReadResponseExt, HttpClient, Request};

use crate::floor::{call, check_len, memfind, sse_data, INITIALIZE, INITIALIZED, TOOLS_LIST};
use crate::{announce_ready, ClientArgs, Outcome};

/// What every request carries after the handshake.
struct Session {
    url: String,
    id: Option<String>,
    version: Option<String>,
}

/// One exchange: the status, the session header, and the JSON (an SSE body's data).
async fn post(
    client: &HttpClient,
    s: &Session,
    method: &str,
    body: Vec<u8>,
) -> Result<(u16, Option<String>, Vec<u8>), String> {
    let mut req = Request::builder()
        .method(method)
        .uri(&s.url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    if let (Some(id), Some(v)) = (&s.id, &s.version) {
        req = req
            .header("Mcp-Session-Id", id.as_str())
            .header("Mcp-Protocol-Version", v.as_str());
    }
    let req = req.body(body).map_err(|e| e.to_string())?;
    let mut resp = client.send_async(req).await.map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let session = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let sse = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    let bytes = resp.bytes().await.map_err(|e| e.to_string())?;
    let json = if sse { sse_data(&bytes) } else { bytes };
    if !(200..300).contains(&status) {
        return Err(format!(
            "{method}: HTTP {status}: {}",
            String::from_utf8_lossy(&json[..json.len().min(200)])
        ));
    }
    Ok((status, session, json))
}

pub fn run(args: &ClientArgs) -> Result<Outcome, String> {
    let url = args.url.clone().ok_or("isahc-floor speaks HTTP only")?;
    let client = if url.starts_with("https://") {
        // HTTP/1.1 over TLS, trusting the bench server's certificate, as mcpwire's client does.
        use isahc::config::{Configurable, VersionNegotiation};
        use isahc::tls::{TlsConfig, TrustStore};
        let pem = crate::servers::certificate_pem();
        let trust = TrustStore::builder()
            .certificate_from_pem(pem.into_bytes())
            .build();
        HttpClient::builder()
            .version_negotiation(VersionNegotiation::http11())
            .tls_config(TlsConfig::builder().trust_store(trust).build())
            .build()
    } else {
        HttpClient::new()
    }
    .map_err(|e| e.to_string())?;
    smol::block_on(async {
        let mut out = Outcome::default();
        let mut s = Session {
            url,
            id: None,
            version: None,
        };
        let (_, session, init) = post(&client, &s, "POST", INITIALIZE.into()).await?;
        let value: serde_json::Value = serde_json::from_slice(&init).map_err(|e| e.to_string())?;
        let version = value["result"]["protocolVersion"]
            .as_str()
            .ok_or("no protocolVersion")?
            .to_owned();
        out.era = format!("handshake {version}");
        s.id = session;
        s.version = Some(version);
        post(&client, &s, "POST", INITIALIZED.into()).await?;
        let (_, _, tools) = post(&client, &s, "POST", TOOLS_LIST.into()).await?;
        if memfind(&tools, b"\"echo\"").is_none() {
            return Err("the server has no echo tool".into());
        }
        out.ready_ms = crate::since_start_ms();
        announce_ready(args);
        let message = serde_json::to_string(&args.message()).expect("a string");
        let sent = args.message().len();
        let next_id = std::sync::atomic::AtomicU64::new(2);
        let echo = || async {
            let id = next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut body = Vec::with_capacity(message.len() + 128);
            call(&mut body, id, &message);
            let (_, _, json) = post(&client, &s, "POST", body).await?;
            check_len(&json, sent)
        };
        let idle = async {
            smol::Timer::after(std::time::Duration::from_secs(1)).await;
        };
        crate::workload(args, &mut out, echo(), idle, echo).await?;
        let _ = post(&client, &s, "DELETE", Vec::new()).await;
        Ok(out)
    })
}
