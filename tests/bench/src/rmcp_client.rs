//! rmcp 3.11 as its documentation shows it: `().serve(transport)` on a tokio runtime.
//! `rmcp` = the multi-thread runtime, `rmcp-ct` = current_thread; over HTTP both use rmcp's
//! default transport (`from_uri`: a reqwest client that keeps no idle connection, 16 requests in
//! flight at most); `rmcp-ka` = multi-thread with a pooling reqwest client and 128 in flight.

use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::ServiceExt;

use crate::{announce_ready, check_echo, servers, ClientArgs, Impl, Outcome};

type Client = RunningService<RoleClient, ()>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

async fn connect(args: &ClientArgs) -> Result<Client, String> {
    match (&args.url, args.imp) {
        (None, _) => {
            let (command, argv) = servers::stdio_command(args.server);
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(argv);
            let (transport, _stderr) = TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::inherit())
                .spawn()
                .map_err(err)?;
            ().serve(transport).await.map_err(err)
        }
        (Some(url), Impl::RmcpKa) => {
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .max_concurrent_requests(128);
            let client = reqwest_client(url, None)?;
            let transport = StreamableHttpClientTransport::with_client(client, config);
            ().serve(transport).await.map_err(err)
        }
        (Some(url), _) if url.starts_with("https://") => {
            // As `from_uri` does (no idle connection kept), trusting the bench's certificate.
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            let client = reqwest_client(url, Some(0))?;
            let transport = StreamableHttpClientTransport::with_client(client, config);
            ().serve(transport).await.map_err(err)
        }
        (Some(url), _) => {
            let transport = StreamableHttpClientTransport::from_uri(url.as_str());
            ().serve(transport).await.map_err(err)
        }
    }
}

/// A reqwest client (HTTP/1.1 over TLS for `https://`, trusting the bench server's
/// certificate), keeping at most `idle` idle connections per host when given.
fn reqwest_client(url: &str, idle: Option<usize>) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder();
    if url.starts_with("https://") {
        let pem = crate::servers::certificate_pem();
        let cert = reqwest::Certificate::from_pem(pem.as_bytes()).map_err(err)?;
        builder = builder.add_root_certificate(cert).http1_only();
    }
    if let Some(idle) = idle {
        builder = builder.pool_max_idle_per_host(idle);
    }
    builder.build().map_err(err)
}

async fn echo(client: &Client, message: &str) -> Result<(), String> {
    // The benchmark's own side (the arguments built) is counted apart.
    let arguments = crate::measure::benchmark_side(|| {
        let mut arguments = serde_json::Map::new();
        arguments.insert("message".into(), serde_json::Value::from(message));
        arguments
    });
    let result = client
        .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments))
        .await
        .map_err(err)?;
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.as_str())
        .unwrap_or_default();
    check_echo(message, text)
}

async fn session(args: &ClientArgs) -> Result<Outcome, String> {
    let client = connect(args).await?;
    let mut out = Outcome::default();
    let tools = client.list_tools(None).await.map_err(err)?;
    out.ready_ms = crate::since_start_ms();
    announce_ready(args);
    if !tools.tools.iter().any(|t| t.name == "echo") {
        return Err("the server has no echo tool".into());
    }
    if let Some(info) = client.peer_info() {
        out.era = format!("handshake {}", info.protocol_version);
    }
    let message = args.message();
    let (c, message) = (&client, message.as_str());
    let idle = tokio::time::sleep(std::time::Duration::from_secs(1));
    crate::workload(args, &mut out, echo(c, "warm-up"), idle, move || {
        echo(c, message)
    })
    .await?;
    let _ = client.cancel().await;
    Ok(out)
}

pub fn run(args: &ClientArgs) -> Result<Outcome, String> {
    let runtime = match args.imp {
        Impl::RmcpCt => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        _ => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
    }
    .map_err(err)?;
    runtime.block_on(session(args))
}
