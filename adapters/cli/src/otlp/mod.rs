//! `--otlp URL` and `OTEL_EXPORTER_OTLP_ENDPOINT`: the command's spans (its own, the
//! connection's and one per request, as mcpwire makes them after OpenTelemetry's MCP
//! conventions) exported over OTLP/HTTP in protobuf when the command ends, through mcpwire's own
//! HTTP client; each request carries its span's trace context in `params._meta.traceparent`,
//! so that the server's spans join the trace (and `--verbose` shows it).
//!
//! The export is bounded: at most [`MAX_SPANS`](recorder::MAX_SPANS) spans are kept, and it
//! gets `OTEL_EXPORTER_OTLP_TIMEOUT` (10 s by default) or until a stop request, whichever comes
//! first. A collector that is down, slow or refuses costs one line on stderr, never the
//! command's outcome or its exit code. After a stop request (Ctrl-C, SIGTERM, SIGHUP) the
//! connection closes gracefully and the spans are exported before the process ends, the call cut
//! short among them; a second request ends the process at once, unexported.

use std::future::Future;
use std::sync::{Arc, OnceLock};

use futures_lite::{future, AsyncReadExt};
use mcpwire::core::{HttpMethod, HttpRequest};
use mcpwire::{ConnectOptions, HttpClientOptions};
use serde_json::{Map, Value};
use tracing::Instrument;

use crate::stop;

mod encode;
mod recorder;
mod settings;

use recorder::Recorder;
use settings::Settings;

/// The export this command makes, once [`start`] found one asked for.
struct Export {
    recorder: Arc<Recorder>,
    settings: Settings,
}

static EXPORT: OnceLock<Export> = OnceLock::new();

/// Starts recording spans when an export is asked for (`--otlp URL`, or the environment);
/// says on stderr what is wrong in the environment's settings.
fn start(flag: Option<&str>) {
    let Some(settings) = settings::read(flag, |name| std::env::var(name).ok()) else {
        return;
    };
    for warning in &settings.warnings {
        errln!("mcpwire: warning: {warning}");
    }
    let recorder = Arc::new(Recorder::default());
    if tracing::subscriber::set_global_default(recorder.clone()).is_ok() {
        let _ = EXPORT.set(Export { recorder, settings });
    }
}

/// Runs `work` (a command that connects) in its span, `mcpwire COMMAND`, the parent of its
/// requests' spans; then, when an export is asked for (`flag`: `--otlp URL`, or the
/// environment), exports the spans, with the command's exit code.
pub(crate) fn run<T>(
    flag: Option<&str>,
    command: &str,
    work: impl Future<Output = T>,
    code: impl FnOnce(&T) -> u8,
) -> T {
    start(flag);
    let Some(export) = EXPORT.get() else {
        return smol::block_on(work);
    };
    let span = tracing::info_span!(
        target: "mcpwire::command",
        "mcpwire",
        otel.name = format!("mcpwire {command}").as_str(),
        otel.kind = "internal",
        otel.status_code = tracing::field::Empty,
        mcpwire.command = command,
        process.exit.code = tracing::field::Empty,
    );
    let outcome = smol::block_on(work.instrument(span.clone()));
    let code = code(&outcome);
    span.record("process.exit.code", i64::from(code));
    if code != 0 {
        span.record("otel.status_code", "ERROR");
    }
    drop(span);
    flush(export);
    outcome
}

/// Sets the connection's trace context hook: each request carries its span's `traceparent`,
/// which `verbose` prints (`who` naming the server when several run at once). Nothing when no
/// export runs.
pub(crate) fn trace_context(options: &mut ConnectOptions, verbose: bool, who: Option<&str>) {
    let Some(export) = EXPORT.get() else {
        return;
    };
    let recorder = export.recorder.clone();
    let named = who.map(|w| format!("{w}: ")).unwrap_or_default();
    options.trace_context = Some(Arc::new(move || {
        let mut entries = Map::new();
        if let Some((traceparent, name)) = recorder.traceparent() {
            if verbose {
                errln!("· {named}{name}: traceparent {traceparent}");
            }
            entries.insert("traceparent".into(), Value::String(traceparent));
        }
        entries
    }));
}

/// Exports what was recorded; a failure is one warning on stderr.
fn flush(export: &Export) {
    let (spans, dropped) = export.recorder.take();
    let url = mcpwire::core::error::redact_url(&export.settings.url);
    if dropped > 0 {
        errln!(
            "mcpwire: warning: {dropped} spans were not kept for {url} (more than {})",
            recorder::MAX_SPANS
        );
    }
    if spans.is_empty() {
        return;
    }
    let body = encode::request(&export.settings.service_name, &spans);
    if let Err(why) = smol::block_on(post(&export.settings, body)) {
        let why = why.replace(['\r', '\n'], " ");
        errln!(
            "mcpwire: warning: {} spans not exported to {url}: {why}",
            spans.len()
        );
    }
}

/// Posts `body` to the collector: the outcome within the deadline, and before a stop request
/// (unless one came before: a second one ends the process).
async fn post(settings: &Settings, body: Vec<u8>) -> Result<(), String> {
    let mut headers = vec![
        (
            "Content-Type".to_owned(),
            "application/x-protobuf".to_owned(),
        ),
        (
            "User-Agent".to_owned(),
            mcpwire::core::header::USER_AGENT.to_owned(),
        ),
    ];
    headers.extend(settings.headers.iter().cloned());
    let request = HttpRequest {
        exchange: 0,
        method: HttpMethod::Post,
        url: settings.url.clone(),
        headers,
        body,
    };
    let send = async {
        let client = mcpwire::default_http_client(&HttpClientOptions::default());
        let response = client.send(request).await.map_err(|f| f.message)?;
        let status = response.status;
        // Its answer (an `ExportTraceServiceResponse`, or a `Status` on a refusal) is read, to
        // its end or 64 KiB, and left: a partial success's words are no concern of a command.
        let mut answer = Vec::new();
        let _ = response.body.take(64 * 1024).read_to_end(&mut answer).await;
        match status {
            200..=299 => Ok(()),
            status => Err(format!("the collector answered HTTP {status}")),
        }
    };
    let timeout = settings.timeout;
    let late = async {
        smol::Timer::after(timeout).await;
        Err(format!("no answer within {} ms", timeout.as_millis()))
    };
    let stopped = async {
        if stop::requested().is_some() {
            return future::pending().await;
        }
        let request = stop::wait().await;
        Err(format!("{} before the collector answered", request.words()))
    };
    future::or(send, future::or(late, stopped)).await
}
