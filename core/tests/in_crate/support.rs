//! Shared harness: the client core and the demo-server core joined in memory under a simulated
//! clock. Every message crosses as JSONL bytes; each one is recorded as a transcript line.

use std::time::Instant;

use crate::codec::jsonl::{self, JsonlDecoder};
use crate::connection::protocol::calls::McpCall;
use crate::connection::protocol::events::Event;
use crate::connection::protocol::{
    CallError, CallId, CallOptions, ClientConfig, ClientError, ClientProtocol, Era,
};
use crate::jsonrpc::{Id, Message, Parsed, RawJson};
use crate::server::{DemoConfig, DemoServer};
use crate::types::ClientCapabilities;
use serde_json::{json, Value};

/// The one reading of the clock in the core's tests: every instant is an offset from it.
pub fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Deterministic pseudo-random numbers (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

pub struct Pair {
    pub client: ClientProtocol,
    pub server: DemoServer,
    pub t0: Instant,
    pub now: Instant,
    /// One line per message: `C→S …` or `S→C …`.
    pub wire: Vec<String>,
    pub events: Vec<Event>,
    /// Every message as sent, in order: (from the client, its JSON text).
    pub frames: Vec<(bool, String)>,
    pub to_server: JsonlDecoder,
    pub to_client: JsonlDecoder,
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
    pub fn new(caps: ClientCapabilities, demo: DemoConfig) -> Pair {
        Self::with_config(
            ClientConfig {
                capabilities: caps,
                ..legacy()
            },
            demo,
        )
    }

    pub fn with_config(config: ClientConfig, demo: DemoConfig) -> Pair {
        let t0 = epoch();
        Pair {
            client: ClientProtocol::new(config),
            server: DemoServer::new(demo),
            t0,
            now: t0,
            wire: Vec::new(),
            events: Vec::new(),
            frames: Vec::new(),
            to_server: JsonlDecoder::new(),
            to_client: JsonlDecoder::new(),
        }
    }

    pub fn ready() -> Pair {
        Self::ready_with(caps_all(), DemoConfig::default())
    }

    pub fn ready_with(caps: ClientCapabilities, demo: DemoConfig) -> Pair {
        let mut p = Pair::new(caps, demo);
        p.client.start(p.now).unwrap();
        p.drive();
        assert!(p.client.is_ready(), "{:?}", p.events);
        p.wire.clear();
        p.events.clear();
        p
    }

    pub fn ms(&self) -> u128 {
        (self.now - self.t0).as_millis()
    }

    /// Moves messages both ways, as JSONL bytes, until neither side has anything to send.
    pub fn drive(&mut self) {
        for _ in 0..100_000 {
            let mut moved = false;
            while let Some(m) = self.client.poll_sent() {
                moved = true;
                let mut bytes = Vec::new();
                jsonl::encode(&m, &mut bytes);
                self.frames.push((
                    true,
                    String::from_utf8_lossy(&bytes[..bytes.len() - 1]).into(),
                ));
                self.to_server.push(&bytes);
                while let Some(Ok(Parsed::Single(m))) = self.to_server.next_message() {
                    self.wire.push(format!("C→S {}", sig(&m)));
                    self.server.handle_message(self.now, m);
                }
            }
            while let Some(m) = self.server.poll_transmit() {
                moved = true;
                let mut bytes = Vec::new();
                jsonl::encode(&m, &mut bytes);
                self.frames.push((
                    false,
                    String::from_utf8_lossy(&bytes[..bytes.len() - 1]).into(),
                ));
                self.to_client.push(&bytes);
                while let Some(Ok(Parsed::Single(m))) = self.to_client.next_message() {
                    self.wire.push(format!("S→C {}", sig(&m)));
                    self.client.handle_message(self.now, m);
                }
            }
            while let Some(e) = self.client.poll_event() {
                self.events.push(e);
            }
            if !moved {
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

    pub fn done(&self, call: CallId) -> Option<&Result<RawJson, CallError>> {
        self.events.iter().find_map(|e| match e {
            Event::CallDone { call: c, outcome } if *c == call => Some(outcome),
            _ => None,
        })
    }

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

pub fn text_of(result: &RawJson) -> String {
    let v: Value = result.parse().unwrap();
    v["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The typed calls, as the protocol layer's tests make them.
pub trait Calls {
    fn list_tools(&mut self, now: Instant, opts: CallOptions) -> Result<CallId, ClientError>;
    fn list_prompts(&mut self, now: Instant, opts: CallOptions) -> Result<CallId, ClientError>;
    fn list_resources(&mut self, now: Instant, opts: CallOptions) -> Result<CallId, ClientError>;
    fn list_resource_templates(
        &mut self,
        now: Instant,
        opts: CallOptions,
    ) -> Result<CallId, ClientError>;
    fn call_tool(
        &mut self,
        now: Instant,
        name: &str,
        arguments: Option<Value>,
        opts: CallOptions,
    ) -> Result<CallId, ClientError>;
    fn get_prompt(
        &mut self,
        now: Instant,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        opts: CallOptions,
    ) -> Result<CallId, ClientError>;
    fn read_resource(
        &mut self,
        now: Instant,
        uri: &str,
        opts: CallOptions,
    ) -> Result<CallId, ClientError>;
}

impl Calls for ClientProtocol {
    fn list_tools(&mut self, now: Instant, opts: CallOptions) -> Result<CallId, ClientError> {
        self.call(now, &McpCall::list_tools(), opts)
    }
    fn list_prompts(&mut self, now: Instant, opts: CallOptions) -> Result<CallId, ClientError> {
        self.call(now, &McpCall::list_prompts(), opts)
    }
    fn list_resources(&mut self, now: Instant, opts: CallOptions) -> Result<CallId, ClientError> {
        self.call(now, &McpCall::list_resources(), opts)
    }
    fn list_resource_templates(
        &mut self,
        now: Instant,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        self.call(now, &McpCall::list_resource_templates(), opts)
    }
    fn call_tool(
        &mut self,
        now: Instant,
        name: &str,
        arguments: Option<Value>,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        self.call(now, &McpCall::call_tool(name, arguments), opts)
    }
    fn get_prompt(
        &mut self,
        now: Instant,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        self.call(now, &McpCall::get_prompt(name, arguments), opts)
    }
    fn read_resource(
        &mut self,
        now: Instant,
        uri: &str,
        opts: CallOptions,
    ) -> Result<CallId, ClientError> {
        self.call(now, &McpCall::read_resource(uri), opts)
    }
}
