//! The sans-IO core driven by hand: a `Connection` and the demo server's own sans-IO machine in
//! one thread, bytes carried between them by this loop. No process, no runtime, no socket:
//! the core consumes bytes and time and emits bytes, process actions and events; a driver does
//! the rest. A real driver does the same with a child's pipes (or HTTP exchanges) and a timer.
//!
//! ```sh
//! cargo run -p mcpwire --features demo --example core_loop
//! ```

use std::time::Instant;

use mcpwire::core::server::{DemoConfig, DemoServer};
use mcpwire::core::types::{CallToolResult, ListToolsResult};
use mcpwire::core::{
    CallId, CallOptions, CallOutcome, ClientConfig, Connection, Event, McpCall, Output,
    ProcessAction, ProcessExit, StdioInput, StdioOptions,
};
use serde_json::json;

/// The client's connection and the server it talks to, in this process.
struct Loop {
    conn: Connection,
    server: DemoServer,
    /// The server's stdin has ended (the connection closed it).
    server_done: bool,
}

impl Loop {
    /// Runs until `pick` returns something for an event, or the connection is finished.
    fn run<T>(&mut self, mut pick: impl FnMut(&Event) -> Option<T>) -> Option<T> {
        loop {
            let now = Instant::now();
            let mut progress = false;
            // 1. Drain the connection's outputs, after every input, and carry each out.
            while let Some(out) = self.conn.poll_output() {
                progress = true;
                match out {
                    Output::Write(bytes) => self.server.handle_stdin(now, &bytes),
                    Output::Process(ProcessAction::CloseStdin) => {
                        self.server.handle_stdin_eof(now);
                        self.server_done = true;
                    }
                    Output::Process(action) => println!("  (process action {action:?})"),
                    Output::Event(event) => {
                        if let Some(found) = pick(&event) {
                            return Some(found);
                        }
                    }
                    other => println!("  (not for stdio: {other:?})"),
                }
            }
            if self.conn.is_finished() {
                return None;
            }
            // 2. What the server wrote is the connection's stdout.
            while let Some(bytes) = self.server.poll_output() {
                progress = true;
                self.conn
                    .handle_stdio(now, StdioInput::Stdout(&bytes))
                    .expect("a stdio connection takes stdio inputs");
            }
            if self.server_done && !progress {
                // The server has exited on its stdin's end: its stdout ends, then the process.
                self.conn
                    .handle_stdio(now, StdioInput::StdoutEof)
                    .expect("a stdio connection takes stdio inputs");
                let exit = ProcessExit {
                    code: Some(0),
                    signal: None,
                };
                let exit = StdioInput::Exit {
                    exit,
                    stderr_tail: "",
                };
                self.conn
                    .handle_stdio(now, exit)
                    .expect("a stdio connection takes stdio inputs");
                continue;
            }
            // 3. Deadlines: the core reads no clock, so the loop tells it the time.
            for deadline in [self.conn.poll_timeout(), self.server.poll_timeout()] {
                if deadline.is_some_and(|t| t <= now) {
                    progress = true;
                }
            }
            if self.conn.poll_timeout().is_some_and(|t| t <= now) {
                self.conn.handle_timeout(now);
            }
            if self.server.poll_timeout().is_some_and(|t| t <= now) {
                self.server.handle_timeout(now);
            }
            if !progress {
                // Nothing to carry: a real loop would wait for IO or the next deadline here.
                match self
                    .conn
                    .poll_timeout()
                    .into_iter()
                    .chain(self.server.poll_timeout())
                    .min()
                {
                    Some(t) => std::thread::sleep(t.saturating_duration_since(Instant::now())),
                    None => panic!("nothing to do and nothing to wait for"),
                }
            }
        }
    }

    /// Runs until `call` ends, and gives its outcome.
    fn outcome(&mut self, call: CallId) -> CallOutcome {
        self.run(|e| match e {
            Event::CallDone { call: c, outcome } if *c == call => Some(outcome.clone()),
            _ => None,
        })
        .expect("the call ends before the connection")
    }
}

fn main() {
    let now = Instant::now();
    let mut l = Loop {
        conn: Connection::stdio(now, ClientConfig::default(), StdioOptions::default()),
        server: DemoServer::new(DemoConfig::default()),
        server_done: false,
    };

    let era = l.run(|e| match e {
        Event::Ready { era, .. } => Some(*era),
        Event::HandshakeFailed(error) => panic!("no connection: {error}"),
        _ => None,
    });
    println!("ready, era {:?}", era.expect("ready"));

    let call = l
        .conn
        .call(
            Instant::now(),
            &McpCall::list_tools(),
            CallOptions::default(),
        )
        .expect("a command");
    let listed: ListToolsResult = l
        .outcome(call)
        .expect("tools/list")
        .parse()
        .expect("a list");
    println!("{} tools", listed.tools.len());

    let args = json!({"a": 2, "b": 40});
    let call = l.conn.call(
        Instant::now(),
        &McpCall::call_tool("add", Some(args)),
        CallOptions::default(),
    );
    let result: CallToolResult = l
        .outcome(call.expect("a command"))
        .expect("add")
        .parse()
        .expect("a result");
    println!("2 + 40 = {}", result.text());
    assert_eq!(result.text(), "42");

    l.conn.close(Instant::now());
    let closed = l.run(|e| match e {
        Event::Closed(reason) => Some(reason.to_string()),
        _ => None,
    });
    println!("closed: {}", closed.unwrap_or_else(|| "finished".into()));
}
