//! `mcpwire_core::Connection` driven directly by tokio, with none of mcpwire's smol adapters: the
//! model for embedding the sans-IO core in any runtime. The core does no IO and reads no clock;
//! one loop ([`Driver::drive`]) drains its outputs and carries them out, waits with
//! `tokio::select!` for stdin, stdout, the child's exit or tokio's timer, and feeds back what
//! happened with the time. Every step below reuses it against the demo server.

use std::future::Future;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpwire_core::jsonrpc::RawJson;
use mcpwire_core::tap::Direction;
use mcpwire_core::types::{CallToolResult, ClientCapabilities, ListToolsResult};
use mcpwire_core::McpCall;
use mcpwire_core::{
    CallError, CallId, CallOptions, CallOutcome, ChosenEra, ClientConfig, Connection, Event,
    LocalError, Output, ProcessAction, ProcessExit, ServerRequest, StdioInput, StdioOptions,
};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// A server process, its connection, and what the driver keeps between waits.
struct Driver {
    conn: Connection,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    /// Bytes for stdin that the pipe has not taken yet, in order.
    unwritten: Vec<u8>,
    /// The connection asked for stdin's end: it comes once `unwritten` is written.
    close_stdin: bool,
    exit: Option<ExitStatus>,
    /// Every event the connection reported, in order: the application's side.
    events: Vec<Event>,
}

impl Driver {
    fn spawn(config: ClientConfig) -> Driver {
        let mut child = Command::new(env!("CARGO_BIN_EXE_demo-server"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // The demo server is silent on stderr. For any other server, drain it (a full pipe
            // stalls the server) and pass its tail with `StdioInput::Exit`.
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the demo server starts");
        Driver {
            // The process is up: the connection queues its era probe at once.
            conn: Connection::stdio(Instant::now(), config, StdioOptions::default()),
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            child,
            unwritten: Vec::new(),
            close_stdin: false,
            exit: None,
            events: Vec::new(),
        }
    }

    /// The driver loop. Runs until `pick` returns something for an event, and returns it; with
    /// a `pick` that never does, runs until the connection is finished and returns `None`.
    async fn drive<T>(&mut self, mut pick: impl FnMut(&Event) -> Option<T>) -> Option<T> {
        let (mut picked, mut buf) = (None, vec![0; 64 * 1024]);
        loop {
            // 1. Drain every output (the drive rule) and carry each out, in order.
            while let Some(out) = self.conn.poll_output() {
                match out {
                    Output::Write(bytes) => self.unwritten.extend_from_slice(&bytes),
                    Output::Process(ProcessAction::CloseStdin) => self.close_stdin = true,
                    // tokio can only SIGKILL; a driver with libc sends SIGTERM for Terminate.
                    Output::Process(ProcessAction::Terminate | ProcessAction::Kill) => {
                        let _ = self.child.start_kill(); // it may have exited already
                    }
                    Output::Process(ProcessAction::SpawnAgain) => {
                        unreachable!("asked only after an unanswered era probe; the demo answers")
                    }
                    Output::Event(event) => {
                        picked = picked.or_else(|| pick(&event));
                        self.events.push(event);
                    }
                    other => unreachable!("not a stdio output: {other:?}"),
                }
            }
            if picked.is_some() || self.conn.is_finished() {
                return picked;
            }
            if self.close_stdin && self.unwritten.is_empty() {
                self.stdin = None; // dropping the pipe is the end of file
            }
            // A deadline that has passed fires now, whatever the timer did.
            let deadline = self.conn.poll_timeout();
            if deadline.is_some_and(|t| t <= Instant::now()) {
                self.conn.handle_timeout(Instant::now());
                continue;
            }
            // 2. Wait for the first of: stdin taking bytes, stdout bytes, the exit, the
            //    deadline. 3. Feed it to the connection, with the time it happened.
            let stdin = self.stdin.as_mut().filter(|_| !self.unwritten.is_empty());
            tokio::select! {
                written = or_never(stdin.map(|s| s.write(&self.unwritten))) => match written {
                    Ok(n) => drop(self.unwritten.drain(..n)),
                    // A broken pipe: the server is gone; stdout's end and the exit will tell.
                    Err(_) => self.stdin = None,
                },
                read = or_never(self.stdout.as_mut().map(|s| s.read(&mut buf))) => match read {
                    Ok(0) | Err(_) => {
                        self.stdout = None;
                        self.conn.handle_stdio(Instant::now(), StdioInput::StdoutEof).unwrap();
                    }
                    Ok(n) => self.conn.handle_stdio(Instant::now(), StdioInput::Stdout(&buf[..n])).unwrap(),
                },
                // Taken once stdout has ended, so that nothing the server wrote is lost.
                status = self.child.wait(), if self.stdout.is_none() && self.exit.is_none() => {
                    let status = status.expect("the demo server's exit status");
                    let exit = ProcessExit { code: status.code(), signal: status.signal() };
                    self.conn.handle_stdio(Instant::now(), StdioInput::Exit { exit, stderr_tail: "" }).unwrap();
                    self.exit = Some(status);
                }
                // The core's clock is std's; tokio's timer takes it converted.
                () = or_never(deadline.map(|t| tokio::time::sleep_until(t.into()))) => {}
            }
        }
    }

    fn call(&mut self, tool: &str, args: Value, options: CallOptions) -> CallId {
        let now = Instant::now();
        self.conn
            .call(now, &McpCall::call_tool(tool, Some(args)), options)
            .unwrap()
    }

    /// Drives until `call` ends; its outcome.
    async fn outcome(&mut self, call: CallId) -> CallOutcome {
        let done = |e: &Event| match e {
            Event::CallDone { call: c, outcome } if *c == call => Some(outcome.clone()),
            _ => None,
        };
        self.drive(done).await.expect("the call ends")
    }

    async fn tool_result(&mut self, call: CallId) -> CallToolResult {
        self.outcome(call).await.unwrap().parse().unwrap()
    }
}

/// `future`'s output, or never when there is none: a `select!` branch with nothing to wait for.
async fn or_never<F: Future>(future: Option<F>) -> F::Output {
    match future {
        Some(future) => future.await,
        None => std::future::pending().await,
    }
}

#[tokio::test]
async fn tokio_drives_the_core() {
    let run = tokio::time::timeout(Duration::from_secs(30), scenario());
    run.await.expect("the scenario ends within 30 s");
}

async fn scenario() {
    // `Era::Auto`, the default, probes for the era; declaring elicitation lets `ask` ask.
    let capabilities = ClientCapabilities::default().with_elicitation(false);
    let mut d = Driver::spawn(ClientConfig {
        capabilities,
        ..Default::default()
    });
    // Installed before the first drain, the frame observer sees every frame sent.
    let sent = Arc::new(Mutex::new(Vec::<Value>::new()));
    let tap = Arc::clone(&sent);
    let observer = move |direction: Direction, frame: &[u8]| {
        if direction == Direction::Outgoing {
            let frame: Value = serde_json::from_slice(frame).unwrap();
            tap.lock().unwrap().push(frame);
        }
    };
    d.conn.set_observer(Box::new(observer));

    // The demo server speaks both eras; its `server/discover` answer settles the stateless one.
    let ready = d.drive(|e| match e {
        Event::Ready { era, .. } => Some(*era),
        Event::HandshakeFailed(error) => panic!("no connection: {error}"),
        _ => None,
    });
    assert_eq!(ready.await, Some(ChosenEra::Stateless));

    let now = Instant::now();
    let call = d
        .conn
        .call(now, &McpCall::list_tools(), CallOptions::default())
        .unwrap();
    let listed: ListToolsResult = d.outcome(call).await.unwrap().parse().unwrap();
    for tool in ["add", "slow", "ask"] {
        assert!(listed.tools.iter().any(|t| t.name == tool), "{tool}");
    }

    let call = d.call("add", json!({"a": 2, "b": 40}), CallOptions::default());
    let sum = d.tool_result(call).await;
    assert_eq!(sum.text(), "42");
    assert_eq!(sum.structured_content, Some(json!({"sum": 42})));

    // `ask` makes the server ask the user (an elicitation), and the application answers.
    let call = d.call("ask", json!({}), CallOptions::default());
    let asked = d.drive(|e| match e {
        Event::ServerRequest(ServerRequest::Elicitation { id, params, .. }) => {
            Some((id.clone(), params.clone()))
        }
        _ => None,
    });
    let (id, params) = asked.await.unwrap();
    assert_eq!(params["message"], "What is your name?");
    let answer = RawJson::new(&json!({"action": "accept", "content": {"name": "Ada"}})).unwrap();
    d.conn.respond(Instant::now(), &id, Ok(answer)).unwrap();
    assert_eq!(d.tool_result(call).await.text(), "hello, Ada");

    // `slow` with progress: updates come before its end.
    let progress = CallOptions {
        progress: true,
        ..Default::default()
    };
    let call = d.call("slow", json!({"steps": 2}), progress.clone());
    assert_eq!(d.tool_result(call).await.text(), "done after 2 steps");
    let updated = |e: &Event| matches!(e, Event::Progress { call: c, .. } if *c == call);
    assert!(d.events.iter().any(updated));

    // A long `slow`, cancelled once it runs: it ends here at once, and the server is told.
    let call = d.call("slow", json!({"steps": 1000, "interval_ms": 20}), progress);
    let running = |e: &Event| matches!(e, Event::Progress { call: c, .. } if *c == call);
    d.drive(|e| running(e).then_some(())).await.unwrap();
    let reason = Some("enough".to_owned());
    d.conn.cancel(Instant::now(), call, reason).unwrap();
    let outcome = d.outcome(call).await;
    let cancelled = matches!(outcome, Err(CallError::Local(LocalError::Cancelled { .. })));
    assert!(cancelled, "{outcome:?}");
    let params = json!({"requestId": call.0, "reason": "enough"});
    let notice = |m: &Value| m["method"] == "notifications/cancelled" && m["params"] == params;
    assert!(sent.lock().unwrap().iter().any(notice), "not sent");

    // Close: stdin ends once all is written, the server exits, the connection finishes.
    d.conn.close(Instant::now());
    assert_eq!(d.drive(|_| None::<()>).await, None);
    assert!(d.conn.is_finished());
    assert!(matches!(d.events.last(), Some(Event::Closed(_))));
    assert!(d.exit.expect("the server exited").success());
}
