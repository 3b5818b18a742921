//! `mcpwire demo`: a guided tour of the protocol against the built-in demo server; and
//! `mcpwire serve-demo`, that server on stdin and stdout.
//!
//! The tour connects like any host, through the public `Client`, to this program's own demo
//! server run as a child (`mcpwire serve-demo`), twice: once pinned to the handshake era and
//! once detecting the era. Each step prints one short paragraph: what went over the wire, as a
//! frame observer saw it, and what came back. Nothing shown is written in advance: every value
//! is read from the frames and the answers of this run.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::{
    CallOptions, Client, ConnectOptions, Direction, ElicitAction, Era, Handlers, ServerConfig,
    ServerNotification,
};
use serde_json::{json, Map, Value};
use smol::Timer;

use crate::exit_codes;
use crate::failure::Failure;

/// How long any one request of the tour may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Runs the tour and turns its outcome into the exit code.
pub fn main() -> ExitCode {
    // When stdout's reader goes away (`mcpwire demo | head`), the tour goes on unseen to its
    // last step, which closes its servers gracefully; then the process ends by SIGPIPE.
    crate::output::close_first();
    let outcome = smol::block_on(run());
    crate::output::end_if_lost();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            errln!("mcpwire demo: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

/// `mcpwire serve-demo`: the built-in demo server on stdin and stdout, until stdin ends.
pub(crate) fn serve(handshake_only: bool, tools: usize) -> ExitCode {
    let stdin = smol::Unblock::new(std::io::stdin());
    // The demo server's own protocol (JSON-RPC, one message a line), not text for a terminal.
    let stdout = smol::Unblock::new(crate::output::raw_stdout());
    let config = mcpwire::core::server::DemoConfig {
        handshake_only,
        extra_tools: tools,
        ..Default::default()
    };
    match smol::block_on(mcpwire::serve_demo(stdin, stdout, config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("mcpwire serve-demo: {e}");
            ExitCode::from(1)
        }
    }
}

/// Every frame of one connection, in order, as its frame observer saw them.
#[derive(Clone, Default)]
struct Wire(Arc<Mutex<Vec<(Direction, Value)>>>);

impl Wire {
    /// The observer to give the connection.
    fn observer(&self) -> impl FnMut(Direction, &[u8]) + Send + 'static {
        let frames = self.0.clone();
        move |direction, bytes| {
            let frame = serde_json::from_slice(bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()));
            lock(&frames).push((direction, frame));
        }
    }

    /// Where the next frame will be: a step's frames are those after its mark.
    fn mark(&self) -> usize {
        lock(&self.0).len()
    }

    /// The frames since `mark`.
    fn since(&self, mark: usize) -> Vec<(Direction, Value)> {
        lock(&self.0).get(mark..).unwrap_or_default().to_vec()
    }

    /// The frames since `mark` in a few words each, e.g.
    /// `→ tools/call slow #3 · ← notifications/progress ×3 · ← result #3`.
    fn summary(&self, mark: usize) -> String {
        let mut groups: Vec<(String, usize)> = Vec::new();
        for (direction, frame) in self.since(mark) {
            let arrow = match direction {
                Direction::Outgoing => "→",
                Direction::Incoming => "←",
            };
            let label = format!("{arrow} {}", label(&frame));
            match groups.last_mut() {
                Some((last, n)) if *last == label => *n += 1,
                _ => groups.push((label, 1)),
            }
        }
        if groups.is_empty() {
            return "(no frames)".into();
        }
        // Wrapped between frames, to fit a terminal under the paragraph's "wire: ".
        let mut text = String::new();
        let mut width = 0;
        for (i, (label, n)) in groups.into_iter().enumerate() {
            let part = match n {
                1 => label,
                n => format!("{label} ×{n}"),
            };
            let len = part.chars().count();
            if i > 0 && width + 3 + len > 88 {
                text.push_str(" ·\n         ");
                width = 0;
            } else if i > 0 {
                text.push_str(" · ");
                width += 3;
            }
            text.push_str(&part);
            width += len;
        }
        text
    }

    /// Waits until a frame since `mark` satisfies `found` (at most `within`).
    async fn wait_for(
        &self,
        mark: usize,
        within: Duration,
        found: impl Fn(Direction, &Value) -> bool,
    ) -> Option<Value> {
        let deadline = Instant::now() + within;
        loop {
            let hit = self
                .since(mark)
                .into_iter()
                .find(|(d, f)| found(*d, f))
                .map(|(_, f)| f);
            if hit.is_some() || Instant::now() >= deadline {
                return hit;
            }
            Timer::after(Duration::from_millis(5)).await;
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A frame in a few words: a request's method and id (a tool call's tool too), a
/// notification's method, a response's id and kind.
fn label(frame: &Value) -> String {
    let id = frame
        .get("id")
        .map(|id| format!(" #{id}"))
        .unwrap_or_default();
    if let Some(method) = frame.get("method").and_then(Value::as_str) {
        let tool = match method {
            "tools/call" => frame
                .pointer("/params/name")
                .and_then(Value::as_str)
                .map(|n| format!(" {n}"))
                .unwrap_or_default(),
            _ => String::new(),
        };
        return format!("{method}{tool}{id}");
    }
    if let Some(error) = frame.get("error") {
        return format!("error{id} ({})", error.get("code").unwrap_or(&Value::Null));
    }
    match frame.pointer("/result/resultType").and_then(Value::as_str) {
        Some(kind) if kind != "complete" => format!("result{id} ({kind})"),
        _ => format!("result{id}"),
    }
}

/// A step's title.
fn title(n: usize, text: &str) {
    outln!("\n{n}. {text}");
}

/// A line of a step's paragraph.
fn line(text: impl AsRef<str>) {
    outln!("   {}", text.as_ref());
}

/// The elicitations one connection was asked, each with the answer given.
type Asked = Arc<Mutex<Vec<(String, Value)>>>;

/// Handlers that answer every elicitation from its schema's defaults, noting each.
fn defaults_handlers(asked: &Asked) -> Handlers {
    let asked = asked.clone();
    Handlers::new().on_elicitation(move |request| {
        let asked = asked.clone();
        async move {
            let answer = request.answer_with_defaults();
            let shown = match answer.action {
                ElicitAction::Accept => answer.content.clone().map(Value::Object),
                _ => None,
            };
            lock(&asked).push((request.message().to_owned(), shown.unwrap_or(Value::Null)));
            Ok(answer)
        }
    })
}

/// One connection of the tour: the client, its frames and the questions it was asked.
struct Tour {
    client: Client,
    wire: Wire,
    asked: Asked,
}

impl Tour {
    /// Connects to a `serve-demo` child, one that speaks only the handshake era when
    /// `handshake_only`.
    async fn connect(era: Era, handshake_only: bool) -> Result<Tour, Failure> {
        let me = std::env::current_exe().map_err(|e| {
            Failure::new(
                exit_codes::CONNECT,
                format!("cannot find this program: {e}"),
            )
        })?;
        let args = match handshake_only {
            true => &["serve-demo", "--handshake-only"][..],
            false => &["serve-demo"][..],
        };
        let server = ServerConfig::stdio(me.to_string_lossy().into_owned(), args.iter().copied());
        let wire = Wire::default();
        let asked = Asked::default();
        let options = ConnectOptions {
            era,
            init_timeout: TIMEOUT,
            ..ConnectOptions::default()
        }
        .handlers(defaults_handlers(&asked))
        .observer(wire.observer());
        let client = mcpwire::connect_smol(&server, options).await?;
        Ok(Tour {
            client,
            wire,
            asked,
        })
    }

    /// The era the connection settled on, and the server's protocol version and name.
    fn identity(&self) -> Result<(String, String, String), Failure> {
        let info = self
            .client
            .server_info()
            .ok_or_else(|| Failure::new(exit_codes::CONNECT, "no handshake"))?;
        let era = self.client.era().map(|e| e.to_string()).unwrap_or_default();
        let server = format!("{} {}", info.server_info.name, info.server_info.version);
        Ok((era, info.protocol_version.clone(), server))
    }
}

fn opts() -> CallOptions {
    CallOptions::default().timeout(TIMEOUT)
}

/// The text of the first content block of a prompt message or resource contents.
fn text_of(v: &Value) -> String {
    v.pointer("/content/text")
        .or_else(|| v.get("text"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

async fn run() -> Result<(), Failure> {
    outln!("mcpwire demo: a tour of MCP against the built-in demo server (mcpwire serve-demo),");
    outln!("run as a child over stdio. \"→\" is a frame we sent, \"←\" one the server sent.");

    // 1. The handshake era, pinned.
    let old = Tour::connect(Era::Handshake, false).await?;
    let (era, version, server) = old.identity()?;
    title(1, "The handshake era (pinned with Era::Handshake)");
    line(format!("wire: {}", old.wire.summary(0)));
    line(format!(
        "initialize agreed on protocol {version} with {server}; the connection's era: {era}."
    ));
    line(
        "Pinned, the client sends no probe: it starts with initialize, as handshake-era hosts do.",
    );

    // 2. The stateless era, detected.
    let new = Tour::connect(Era::Auto, false).await?;
    let (era, version, _) = new.identity()?;
    let frames = new.wire.since(0);
    let probe = frames
        .first()
        .map(|(_, f)| label(f))
        .unwrap_or_else(|| "nothing".into());
    let supported = frames
        .iter()
        .find_map(|(_, f)| f.pointer("/result/supportedVersions"))
        .map(|v| v.to_string())
        .unwrap_or_else(|| "not said".into());
    title(
        2,
        "Era detection (Era::Auto): the stateless era, else initialize",
    );
    line(format!("wire: {}", new.wire.summary(0)));
    line(format!(
        "the probe {probe} was answered, listing {supported};"
    ));
    line(format!(
        "so the era is {era}: protocol {version}, no initialize, each request carries its _meta."
    ));
    fallback().await?;

    tools(&old).await?;
    progress(&old).await?;
    elicitation(&old).await?;
    input_rounds(&new).await?;
    cancel(&old).await?;
    resources(&old).await?;
    prompts(&old).await?;
    notification(&old).await?;
    close(&old, &new).await;
    outln!("\nThe tour is over. `mcpwire --help` lists the commands;");
    outln!("`mcpwire --verbose call slow` prints every frame of a call.");
    Ok(())
}

/// Step 2, continued: detection against a server that predates the stateless era.
async fn fallback() -> Result<(), Failure> {
    let older = Tour::connect(Era::Auto, true).await?;
    let (era, version, _) = older.identity()?;
    let frames = older.wire.since(0);
    let refusal = frames
        .iter()
        .find_map(|(_, f)| f.get("error"))
        .map(|e| {
            let code = e.get("code").unwrap_or(&Value::Null);
            let message = e.get("message").and_then(Value::as_str).unwrap_or("");
            format!("{code} {message:?}")
        })
        .unwrap_or_else(|| "not refused".into());
    line("Against `serve-demo --handshake-only`, a server that predates 2026-07-28:");
    line(format!("wire: {}", older.wire.summary(0)));
    line(format!(
        "the probe was refused ({refusal}), so the client fell back to initialize: \
         the era is {era}, protocol {version}."
    ));
    older.client.close().await;
    Ok(())
}

async fn tools(t: &Tour) -> Result<(), Failure> {
    let mark = t.wire.mark();
    let tools = t.client.list_tools_with(opts()).await?;
    title(3, "Tools");
    line(format!("wire: {}", t.wire.summary(mark)));
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    line(format!("{} tools: {}.", tools.len(), names.join(", ")));
    Ok(())
}

async fn progress(t: &Tour) -> Result<(), Failure> {
    let mark = t.wire.mark();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let noted = seen.clone();
    let options = opts().on_progress(move |p| {
        let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
        lock(&noted).push(format!("{}{total}", p.progress));
    });
    let args = json!({"steps": 3, "interval_ms": 20});
    let result = t.client.call_tool_with("slow", args, options).await?;
    title(4, "A call with progress");
    line(format!("wire: {}", t.wire.summary(mark)));
    line(format!(
        "the call carried a progressToken; the server reported {}, then answered {:?}.",
        lock(&seen).join(", "),
        result.text()
    ));
    Ok(())
}

async fn elicitation(t: &Tour) -> Result<(), Failure> {
    let mark = t.wire.mark();
    let before = lock(&t.asked).len();
    let result = t.client.call_tool_with("ask", json!({}), opts()).await?;
    let asked = lock(&t.asked).get(before..).unwrap_or_default().to_vec();
    title(5, "An elicitation, answered from the schema's defaults");
    line(format!("wire: {}", t.wire.summary(mark)));
    for (question, answer) in &asked {
        line(format!(
            "mid-call the server asked {question:?} (elicitation/create, a request to us);"
        ));
        line(format!("we answered {answer} from the form's defaults."));
    }
    line(format!("The tool replied {:?}.", result.text()));
    Ok(())
}

async fn input_rounds(t: &Tour) -> Result<(), Failure> {
    let mark = t.wire.mark();
    let before = lock(&t.asked).len();
    let result = t.client.call_tool_with("survey", json!({}), opts()).await?;
    let asked = lock(&t.asked).get(before..).unwrap_or_default().to_vec();
    // The requestState each retry echoed, byte for byte, from the frames that went out.
    let states: Vec<String> = t
        .wire
        .since(mark)
        .iter()
        .filter(|(d, _)| *d == Direction::Outgoing)
        .filter_map(|(_, f)| f.pointer("/params/requestState"))
        .map(|s| s.to_string())
        .collect();
    title(6, "Two input_required rounds (stateless era)");
    line(format!("wire: {}", t.wire.summary(mark)));
    for (i, (question, answer)) in asked.iter().enumerate() {
        let state = states.get(i).map(String::as_str).unwrap_or("none");
        line(format!(
            "round {}: asked {question:?}; sent again with {answer}, requestState {state}",
            i + 1
        ));
    }
    line(format!(
        "each round a new request id and no request to us; the final result: {:?}.",
        result.text()
    ));
    Ok(())
}

async fn cancel(t: &Tour) -> Result<(), Failure> {
    let mark = t.wire.mark();
    let (tx, rx) = smol::channel::bounded::<()>(1);
    let options = opts().on_progress(move |_| {
        let _ = tx.try_send(());
    });
    let call = t
        .client
        .call_tool_with("slow", json!({"steps": 100, "interval_ms": 50}), options);
    // Dropping the call's future is how a caller gives up: it is cancelled on the wire.
    let ended = future::or(async { Some(call.await) }, async {
        let _ = rx.recv().await;
        None
    })
    .await;
    if let Some(outcome) = ended {
        outcome?;
        return Err(Failure::new(
            exit_codes::CALL,
            "the slow call ended before it could be cancelled",
        ));
    }
    let is_cancel = |d: Direction, f: &Value| {
        d == Direction::Outgoing
            && f.get("method").and_then(Value::as_str) == Some("notifications/cancelled")
    };
    let frame = t
        .wire
        .wait_for(mark, Duration::from_secs(2), is_cancel)
        .await
        .ok_or_else(|| Failure::new(exit_codes::CALL, "no notifications/cancelled went out"))?;
    // The server stops: nothing more for that call over a few of its intervals.
    Timer::after(Duration::from_millis(200)).await;
    let frames = t.wire.since(mark);
    let at = frames
        .iter()
        .position(|(d, f)| is_cancel(*d, f))
        .unwrap_or(frames.len());
    let after = frames[at..]
        .iter()
        .filter(|(d, _)| *d == Direction::Incoming)
        .count();
    title(7, "A cancelled slow call");
    line(format!("wire: {}", t.wire.summary(mark)));
    line("at the first progress report the caller dropped the call's future; this went out:");
    line(format!("  {frame}"));
    line(format!(
        "frames from the server in the 200 ms after it: {after}; calls still in flight: {}.",
        t.client.calls_in_flight()
    ));
    Ok(())
}

async fn resources(t: &Tour) -> Result<(), Failure> {
    let mark = t.wire.mark();
    let list = t.client.list_resources().await?;
    let templates = t.client.list_resource_templates().await?;
    let mut read = Vec::new();
    for r in &list {
        let contents = t.client.read_resource(&r.uri).await?;
        read.push((r.uri.clone(), contents.contents.first().map(text_of)));
    }
    let mut filled = Vec::new();
    for template in &templates {
        let uri = template.uri_template.replace("{text}", "hello");
        let contents = t.client.read_resource(&uri).await?;
        filled.push((uri, contents.contents.first().map(text_of)));
    }
    title(8, "Resources");
    line(format!("wire: {}", t.wire.summary(mark)));
    let mut text = String::new();
    for (uri, content) in read.iter().chain(&filled) {
        let _ = write!(text, "{uri} → {:?}; ", content.clone().unwrap_or_default());
    }
    let names: Vec<String> = list
        .iter()
        .map(|r| {
            format!(
                "{} ({})",
                r.uri,
                r.mime_type.as_deref().unwrap_or("no type")
            )
        })
        .collect();
    let patterns: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    line(format!(
        "{} resource(s): {}; template(s): {}.",
        list.len(),
        names.join(", "),
        patterns.join(", ")
    ));
    line(format!("read: {}", text.trim_end_matches("; ")));
    Ok(())
}

async fn prompts(t: &Tour) -> Result<(), Failure> {
    let mark = t.wire.mark();
    let list = t.client.list_prompts().await?;
    let mut got = Vec::new();
    for p in &list {
        let mut args = Map::new();
        for a in p.arguments.iter().flatten() {
            if let Some(name) = a.get("name").and_then(Value::as_str) {
                args.insert(name.into(), Value::from("Ada"));
            }
        }
        let shown = Value::Object(args.clone()).to_string();
        let result = t.client.get_prompt(&p.name, Some(args)).await?;
        let first = result.messages.first();
        let role = first
            .and_then(|m| m.get("role"))
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        got.push(format!(
            "{} {shown} → {role}: {:?}",
            p.name,
            first.map(text_of).unwrap_or_default()
        ));
    }
    title(9, "Prompts");
    line(format!("wire: {}", t.wire.summary(mark)));
    let names: Vec<&str> = list.iter().map(|p| p.name.as_str()).collect();
    line(format!(
        "{} prompt(s): {}; got {}.",
        list.len(),
        names.join(", "),
        got.join("; ")
    ));
    Ok(())
}

async fn notification(t: &Tour) -> Result<(), Failure> {
    let mut notes = t.client.notifications();
    let mark = t.wire.mark();
    let mut params = Map::new();
    params.insert("level".into(), Value::from("info"));
    t.client
        .request("logging/setLevel", Some(params), opts())
        .await?;
    let args = json!({"steps": 2, "interval_ms": 10});
    t.client.call_tool_with("slow", args, opts()).await?;
    // The log messages came before the result; read what is queued.
    let mut logs = Vec::new();
    let deadline = Instant::now() + Duration::from_millis(500);
    while logs.len() < 2 && Instant::now() < deadline {
        let next = future::or(async { notes.next().await }, async {
            Timer::at(deadline).await;
            None
        })
        .await;
        match next {
            Some(ServerNotification::Log(log)) => {
                let data = log.data.as_str().map(str::to_owned);
                let data = data.unwrap_or_else(|| log.data.to_string());
                logs.push(format!("[{}] {data:?}", log.level));
            }
            Some(_) => {}
            None => break,
        }
    }
    title(10, "A server notification");
    line(format!("wire: {}", t.wire.summary(mark)));
    line(format!(
        "after logging/setLevel info, slow's steps came as log messages: {}.",
        logs.join(", ")
    ));
    Ok(())
}

async fn close(old: &Tour, new: &Tour) {
    title(11, "A clean close");
    for (name, t) in [("handshake", old), ("stateless", new)] {
        let mark = t.wire.mark();
        let pid = t.client.pid();
        let started = Instant::now();
        t.client.close().await;
        let took = started.elapsed().as_millis();
        let reason = t
            .client
            .closed_reason()
            .map(|r| r.to_string())
            .unwrap_or_else(|| "not said".into());
        line(format!(
            "{name}: close() closed the server's stdin ({} frames); it ended ({reason}) \
             in {took} ms, process {pid} {}.",
            t.wire.since(mark).len(),
            if process_gone(pid) {
                "is gone"
            } else {
                "is still there"
            }
        ));
    }
}

/// Whether no process `pid` exists any more (reaped).
#[cfg(unix)]
fn process_gone(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    !alive && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Whether process `pid` has ended: none has that id any more, or the one that has it exited
/// (its object lives on while someone holds a handle to it).
#[cfg(windows)]
fn process_gone(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::{CloseHandle, WAIT_OBJECT_0};
    use windows_sys::Win32::System::Threading::{
        OpenProcess, WaitForSingleObject, PROCESS_SYNCHRONIZE,
    };
    // SAFETY: opening a process by id takes no pointers; failure (no such process) is a null
    // handle. An open handle is waited on without blocking, then closed once.
    unsafe {
        let handle = OpenProcess(PROCESS_SYNCHRONIZE, 0, pid);
        if handle.is_null() {
            return true;
        }
        let exited = WaitForSingleObject(handle, 0) == WAIT_OBJECT_0;
        CloseHandle(handle);
        exited
    }
}
