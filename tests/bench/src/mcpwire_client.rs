//! mcpwire as a host uses it: `connect_smol` (default) or `connect` with the driver and the
//! caller polled on one thread (`mcpwire-1t`); and as a tokio host uses it (`run_tokio`):
//! `mcpwire::tokio::connect`, the connection on tokio's reactor, timers and tasks, the driver
//! spawned on the runtime (`mcpwire-tokio` on the multi-thread runtime, `mcpwire-tokio-ct` on
//! current_thread).

use mcpwire::{Client, ConnectOptions, Era, ServerConfig};

use crate::measure::benchmark_side;
use crate::{announce_ready, check_echo, servers, ClientArgs, Impl, Outcome};

fn config(args: &ClientArgs) -> ServerConfig {
    match &args.url {
        Some(url) => ServerConfig::http(url.clone()),
        None => {
            let (command, argv) = servers::stdio_command(args.server);
            ServerConfig::stdio(command, argv)
        }
    }
}

fn err(e: mcpwire::Error) -> String {
    e.to_string()
}

async fn echo(client: &Client, message: &str) -> Result<(), String> {
    // The benchmark's own side (the arguments built, the text read back) is counted apart.
    let arguments = benchmark_side(|| serde_json::json!({ "message": message }));
    let result = client.call_tool("echo", arguments).await.map_err(err)?;
    benchmark_side(|| check_echo(message, &result.text()))
}

/// Everything after the handshake: the workload (`idle` is the idle workload's second, on the
/// host's own timer), then the close.
async fn session(
    client: &Client,
    args: &ClientArgs,
    idle: impl std::future::Future<Output = ()>,
) -> Result<Outcome, String> {
    let mut out = Outcome::default();
    let tools = client.list_tools().await.map_err(err)?;
    out.ready_ms = crate::since_start_ms();
    announce_ready(args);
    if !tools.iter().any(|t| t.name == "echo") {
        return Err("the server has no echo tool".into());
    }
    out.era = match (client.era(), client.server_info()) {
        (Some(era), Some(info)) => format!("{era} {}", info.protocol_version),
        (Some(era), None) => era.to_string(),
        _ => String::new(),
    };
    let message = args.message();
    let message = message.as_str();
    crate::workload(args, &mut out, echo(client, "warm-up"), idle, move || {
        echo(client, message)
    })
    .await?;
    out.connections = client.http_counters().map(|c| c.connections);
    client.close().await;
    Ok(out)
}

/// The idle workload's second on smol's timer (async-io's).
async fn smol_idle() {
    smol::Timer::after(IDLE).await;
}

const IDLE: std::time::Duration = std::time::Duration::from_secs(1);

/// How long the driver may take to end once the connection is closed.
const DRIVER_END: std::time::Duration = std::time::Duration::from_secs(5);

/// The options of every mcpwire client here.
fn options(args: &ClientArgs) -> ConnectOptions {
    // The handshake era pinned, like for like with rmcp and the floor (which speak only that
    // era; `Era::Auto` would settle on the stateless era against the Python server); the
    // stateless era is `mcpwire-2026`'s. Pinning skips the `server/discover` probe.
    let era = match args.imp {
        Impl::McpwireStateless => Era::Stateless,
        _ => Era::Handshake,
    };
    let mut options = ConnectOptions {
        era,
        ..ConnectOptions::default()
    };
    if args
        .url
        .as_deref()
        .is_some_and(|u| u.starts_with("https://"))
    {
        options.http_client.tls.extra_ca_pem = vec![servers::certificate_pem()];
    }
    options.http_client.http1_via_libcurl = args.imp == Impl::McpwireLibcurl;
    options
}

pub fn run(args: &ClientArgs) -> Result<Outcome, String> {
    let config = config(args);
    let options = options(args);
    match args.imp {
        Impl::Mcpwire | Impl::McpwireStateless | Impl::McpwireLibcurl => smol::block_on(async {
            let client = mcpwire::connect_smol(&config, options).await.map_err(err)?;
            session(&client, args, smol_idle()).await
        }),
        Impl::Mcpwire1t => {
            let (client, driver) = mcpwire::connect(&config, options).map_err(err)?;
            let ex = smol::LocalExecutor::new();
            let driver = ex.spawn(driver);
            smol::block_on(ex.run(async {
                client.ready().await.map_err(err)?;
                let out = session(&client, args, smol_idle()).await;
                drop(client);
                // The driver ends once the connection is closed; never wait long for it.
                futures_lite::future::or(driver, async {
                    smol::Timer::after(DRIVER_END).await;
                })
                .await;
                out
            }))
        }
        _ => unreachable!("not an mcpwire implementation for smol"),
    }
}

/// mcpwire in a tokio host: the runtime of `mcpwire-tokio` (multi-thread) or
/// `mcpwire-tokio-ct` (current_thread), `mcpwire::tokio::connect` inside it (the driver spawned
/// on the runtime), the caller in `block_on`. Nothing of smol's family runs: over stdio the
/// pipes, over HTTP and https mcpwire's own HTTP/1.1 client's sockets are in tokio's reactor.
pub fn run_tokio(args: &ClientArgs) -> Result<Outcome, String> {
    let runtime = match args.imp {
        Impl::McpwireTokio => tokio::runtime::Builder::new_multi_thread(),
        Impl::McpwireTokioCt => tokio::runtime::Builder::new_current_thread(),
        _ => unreachable!("not an mcpwire implementation for tokio"),
    }
    .enable_all()
    .build()
    .map_err(|e| e.to_string())?;
    let config = config(args);
    let options = options(args);
    runtime.block_on(async {
        let client = mcpwire::tokio::connect(&config, options)
            .await
            .map_err(err)?;
        session(&client, args, tokio::time::sleep(IDLE)).await
    })
}
