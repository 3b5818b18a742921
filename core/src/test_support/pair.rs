//! The Pair: a client [`Connection`] over stdio and the demo-server core joined in memory under a
//! simulated clock. Every message crosses as JSONL bytes, through the connection's stdio machine;
//! each one the pair carries is recorded as a transcript line.

use std::time::Instant;

use crate::codec::jsonl::{self, JsonlDecoder};
use crate::connection::protocol::vocabulary::events::Event;
use crate::connection::protocol::{CallError, CallId, CallOptions, ClientConfig, Era};
use crate::connection::McpCall;
use crate::connection::{Connection, Output, ProcessAction, StdioInput, StdioOptions};
use crate::jsonrpc::{Id, Message, Parsed, RawJson};
use crate::server::{DemoConfig, DemoServer};
use crate::types::ClientCapabilities;
use serde_json::{json, Value};

use super::epoch;

/// A client connection and the demo server, joined by the harness.
///
/// Scripted tests leave the server out: they take what the client wrote with
/// [`poll_written`](Pair::poll_written) and answer it with [`feed`](Pair::feed).
pub struct Pair {
    /// The client: a stdio connection, started at once (its handshake or era probe is queued).
    pub client: Connection,
    pub server: DemoServer,
    pub t0: Instant,
    pub now: Instant,
    /// One line per message the pair carried: `C→S …` or `S→C …`.
    pub wire: Vec<String>,
    pub events: Vec<Event>,
    /// Every message the pair carried, in order: (from the client, its JSONL line).
    pub frames: Vec<(bool, String)>,
    /// What the connection asked to do to the server process, in order.
    pub actions: Vec<ProcessAction>,
    /// The server's stdin: what the client wrote and the server has not read yet.
    to_server: JsonlDecoder,
}

/// A short signature of a message for transcripts: method and id, or the id answered.
pub fn sig(m: &Message) -> String {
    match m {
        Message::Request(r) => format!("{} #{}", r.method, r.id),
        Message::Notification(n) => n.method.clone(),
        Message::Response(r) => match &r.outcome {
            Ok(_) => format!(
                "result #{}",
                r.id.as_ref().map_or("-".into(), Id::to_string)
            ),
            Err(e) => format!(
                "error {} #{}",
                e.code,
                r.id.as_ref().map_or("-".into(), Id::to_string)
            ),
        },
    }
}

/// Client capabilities declaring elicitation (form mode), roots and sampling.
pub fn caps_all() -> ClientCapabilities {
    ClientCapabilities {
        elicitation: Some(json!({"form": {}})),
        roots: Some(json!({"listChanged": true})),
        sampling: Some(json!({})),
        ..Default::default()
    }
}

/// A client configuration pinned to the handshake era (these tests are about that era).
pub fn legacy() -> ClientConfig {
    ClientConfig {
        era: Era::Handshake,
        ..ClientConfig::default()
    }
}

impl Pair {
    /// A pair whose client declares `caps`, pinned to the handshake era.
    pub fn new(caps: ClientCapabilities, demo: DemoConfig) -> Pair {
        Self::with_config(
            ClientConfig {
                capabilities: caps,
                ..legacy()
            },
            demo,
        )
    }

    /// A pair whose client connection, built with `config`, has just started.
    pub fn with_config(config: ClientConfig, demo: DemoConfig) -> Pair {
        let t0 = epoch();
        Pair {
            client: Connection::stdio(t0, config, StdioOptions::default()),
            server: DemoServer::new(demo),
            t0,
            now: t0,
            wire: Vec::new(),
            events: Vec::new(),
            frames: Vec::new(),
            actions: Vec::new(),
            to_server: JsonlDecoder::new(),
        }
    }

    /// A pair past its handshake, every capability declared; transcript and events cleared.
    pub fn ready() -> Pair {
        Self::ready_with(caps_all(), DemoConfig::default())
    }

    /// A pair past its handshake; transcript and events cleared.
    pub fn ready_with(caps: ClientCapabilities, demo: DemoConfig) -> Pair {
        let mut p = Pair::new(caps, demo);
        p.drive();
        assert!(p.client.is_ready(), "{:?}", p.events);
        p.wire.clear();
        p.events.clear();
        p
    }

    /// A pair past its handshake whose tools are listed (a handshake-era server that runs
    /// tool calls as tasks, as the demo does, has its tools listed before the first tool call):
    /// transcript and events cleared.
    pub fn ready_listed() -> Pair {
        Pair::ready().listed()
    }

    /// This pair with its tools listed, transcript and events cleared (see
    /// [`ready_listed`](Self::ready_listed)).
    pub fn listed(self) -> Pair {
        let mut p = self;
        let now = p.now;
        let list = p
            .client
            .call(now, &McpCall::list_tools(), CallOptions::default())
            .unwrap();
        p.finish(list).unwrap();
        p.wire.clear();
        p.events.clear();
        p.frames.clear();
        p
    }

    /// The time gone on the simulated clock, in milliseconds.
    pub fn ms(&self) -> u128 {
        (self.now - self.t0).as_millis()
    }

    /// Drains the client's outputs, as the drive rule asks after every input and command: the
    /// bytes it wrote wait on the server's stdin (their buffer given back), its events go to
    /// [`events`](Self::events), its process actions to [`actions`](Self::actions).
    pub fn drain(&mut self) {
        while let Some(out) = self.client.poll_output() {
            match out {
                Output::Write(bytes) => {
                    self.to_server.push(&bytes);
                    self.client.recycle(bytes);
                }
                Output::Event(e) => self.events.push(e),
                Output::Process(a) => self.actions.push(a),
                other => panic!("not a stdio output: {other:?}"),
            }
        }
    }

    /// The next line the client wrote and the server has not read, taken off the wire
    /// unrecorded (for a test that plays the server, or holds a message back).
    pub fn poll_written_line(&mut self) -> Option<String> {
        self.drain();
        let line = self.to_server.next_line()?;
        let line = line.expect("the client writes whole lines");
        Some(String::from_utf8(line.to_vec()).expect("JSON is UTF-8"))
    }

    /// The next message the client wrote and the server has not read, taken off the wire
    /// unrecorded.
    pub fn poll_written(&mut self) -> Option<Message> {
        let line = self.poll_written_line()?;
        match crate::jsonrpc::parse(line.as_bytes()) {
            Ok(Parsed::Single(m)) => Some(m),
            other => panic!("the client wrote {line}: {other:?}"),
        }
    }

    /// The events so far and not yet taken, the client's outputs drained first.
    pub fn take_events(&mut self) -> Vec<Event> {
        self.drain();
        std::mem::take(&mut self.events)
    }

    /// Hands the client `message` as one line of the server's stdout, unrecorded (a message
    /// written by hand, or one held back).
    pub fn feed(&mut self, message: &Message) {
        self.drain();
        let mut line = Vec::new();
        jsonl::encode(message, &mut line);
        self.client
            .handle_stdio(self.now, StdioInput::Stdout(&line))
            .unwrap();
        self.drain();
    }

    /// The server reads what the client wrote, each line recorded. Whether there was any.
    fn server_reads(&mut self) -> bool {
        let mut read = false;
        while let Some(line) = self.to_server.next_line() {
            let line = line.expect("the client writes whole lines");
            self.frames
                .push((true, String::from_utf8_lossy(line).into()));
            let Ok(Parsed::Single(m)) = crate::jsonrpc::parse(line) else {
                panic!("the client wrote {:?}", self.frames.last())
            };
            self.wire.push(format!("C→S {}", sig(&m)));
            self.server.handle_message(self.now, m);
            read = true;
        }
        read
    }

    /// The server's queued messages reach the client's stdout in one read, each recorded.
    /// Whether there were any.
    fn client_reads(&mut self) -> bool {
        let mut bytes = Vec::new();
        while let Some(m) = self.server.poll_transmit() {
            let start = bytes.len();
            jsonl::encode(&m, &mut bytes);
            let line = &bytes[start..bytes.len() - 1];
            self.frames
                .push((false, String::from_utf8_lossy(line).into()));
            self.wire.push(format!("S→C {}", sig(&m)));
        }
        if bytes.is_empty() {
            return false;
        }
        self.client
            .handle_stdio(self.now, StdioInput::Stdout(&bytes))
            .unwrap();
        true
    }

    /// Moves bytes both ways until neither side has anything to send; the client's outputs are
    /// drained after each of its inputs.
    pub fn drive(&mut self) {
        for _ in 0..100_000 {
            self.drain();
            let read = self.server_reads();
            if !self.client_reads() && !read {
                return;
            }
        }
        panic!("the pair never went idle");
    }

    /// Drives, jumping the clock to the next deadline, until `done` holds.
    pub fn run_until(&mut self, mut done: impl FnMut(&Pair) -> bool) {
        for _ in 0..100_000 {
            self.drive();
            if done(self) {
                return;
            }
            let next = [self.client.poll_timeout(), self.server.poll_timeout()]
                .into_iter()
                .flatten()
                .min()
                .expect("stuck: nothing to wait for and the condition does not hold");
            assert!(next >= self.now, "a deadline in the past stayed armed");
            self.now = next;
            self.client.handle_timeout(self.now);
            self.server.handle_timeout(self.now);
        }
        panic!("the condition never held");
    }

    /// The server's notifications received so far and not yet taken, in order.
    pub fn take_notifications(&mut self) -> Vec<crate::connection::protocol::ServerNotification> {
        let mut taken = Vec::new();
        self.events.retain(|e| match e {
            Event::Notification(n) => {
                taken.push(n.clone());
                false
            }
            _ => true,
        });
        taken
    }

    /// How `call` ended, once it has.
    pub fn done(&self, call: CallId) -> Option<&Result<RawJson, CallError>> {
        self.events.iter().find_map(|e| match e {
            Event::CallDone { call: c, outcome } if *c == call => Some(outcome),
            _ => None,
        })
    }

    /// Runs the pair until `call` ends, and checks it ended exactly once.
    pub fn finish(&mut self, call: CallId) -> Result<RawJson, CallError> {
        self.run_until(|p| p.done(call).is_some());
        let outcomes: Vec<_> = self
            .events
            .iter()
            .filter(|e| matches!(e, Event::CallDone { call: c, .. } if *c == call))
            .collect();
        assert_eq!(outcomes.len(), 1, "a call ends exactly once");
        self.done(call).unwrap().clone()
    }
}

/// The text of a tool result's first content block.
pub fn text_of(result: &RawJson) -> String {
    let v: Value = result.parse().unwrap();
    v["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}
