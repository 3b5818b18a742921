use std::time::{Duration, Instant};

use crate::error::Closed;
use crate::jsonrpc::{self, ErrorObject, Id, Message, RawJson};
use crate::rpc::{
    Engine, EngineError, Limits, LocalError, Origin, Output, ProgressToken, RequestOptions,
    Responded,
};

/// Reads the fuzz input as a sequence of small values; every read past the end gives `None`.
struct Input<'a> {
    data: &'a [u8],
}

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.data.split_first()?;
        self.data = rest;
        Some(b)
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes([self.byte()?, self.byte()?]))
    }

    fn bytes(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head
    }
}

const METHODS: [&str; 4] = ["tools/call", "initialize", "ping", "tools/list"];

/// What the harness knows independently of the engine.
struct Model {
    config: Limits,
    engine: Engine,
    now: Instant,
    /// Per id ever issued (ids are 0, 1, 2, …): whether its one outcome was seen.
    ended: Vec<bool>,
    /// Progress tokens handed to requests, active or not.
    tokens: Vec<ProgressToken>,
    closed: bool,
    /// Whether the one `Output::Closed` was seen.
    closed_event: bool,
}

impl Model {
    fn pending(&self) -> usize {
        self.ended.iter().filter(|e| !**e).count()
    }

    /// An id of ours to aim at: mostly one that was issued, sometimes one that never was.
    fn pick_id(&self, b: u8) -> i64 {
        let issued = self.ended.len() as i64;
        if b & 0x80 == 0 && issued > 0 {
            i64::from(b) % issued
        } else {
            match b % 3 {
                0 => issued + i64::from(b),
                1 => -1 - i64::from(b),
                _ => i64::MAX,
            }
        }
    }

    /// Drains the outputs after an input or command and checks every invariant that holds
    /// between calls.
    fn drain(&mut self) {
        while let Some(out) = self.engine.poll_output() {
            match out {
                Output::Completed { id, .. } => {
                    let slot = usize::try_from(id).ok().and_then(|i| self.ended.get_mut(i));
                    let Some(ended) = slot else {
                        panic!("an outcome for request {id}, which was never issued");
                    };
                    assert!(!*ended, "request {id} ended twice");
                    *ended = true;
                }
                Output::Closed(_) => {
                    assert!(!self.closed_event, "the terminal event came twice");
                    self.closed_event = true;
                }
                Output::Send(Message::Request(r)) => {
                    assert_eq!(
                        r.id,
                        Id::Num(self.ended.len() as i64 - 1),
                        "the request sent is the one just issued"
                    );
                }
                _ => {}
            }
        }
        let stats = self.engine.stats();
        assert_eq!(
            stats.pending,
            self.pending(),
            "pending table and model differ"
        );
        assert!(stats.pending <= self.config.max_pending);
        assert!(stats.inbound <= self.config.max_inbound);
        assert!(stats.notifications <= self.config.max_notifications);
        assert!(stats.progress_tokens <= stats.pending);
        assert!(stats.ended_remembered <= self.config.ended_record);
        assert!(
            stats.timers <= 2 * 2 * stats.pending + 64,
            "stale timers pile up"
        );
        if stats.pending == 0 {
            assert_eq!(stats.timers, 0);
            assert_eq!(self.engine.poll_timeout(), None);
        }
        if self.closed {
            assert_eq!(stats.pending, 0, "something pending after close");
            assert!(self.ended.iter().all(|e| *e), "a request never ended");
        }
    }

    fn fire(&mut self) {
        self.engine.handle_timeout(self.now);
        assert!(
            self.engine.poll_timeout().is_none_or(|t| t > self.now),
            "a deadline <= now stayed armed"
        );
        self.drain();
    }

    fn request(&mut self, input: &mut Input<'_>) -> Option<()> {
        let flags = input.byte()?;
        let method = METHODS[usize::from(flags % 4)];
        let mut opts = RequestOptions::new()
            .timeout(Duration::from_millis(u64::from(input.u16()?)))
            .reset_on_progress(flags & 0x04 != 0)
            .cancel_on_wire(flags & 0x08 == 0);
        if flags & 0x10 != 0 {
            opts = opts.max_total(Duration::from_millis(u64::from(input.u16()?)));
        }
        if flags & 0x20 != 0 {
            opts = opts.origin(Origin::PROTOCOL.with_exchange(u64::from(flags)));
        }
        if flags & 0x40 != 0 {
            // A fresh token, or (sometimes) one handed out before, which may still be active.
            let pick = input.byte()?;
            let earlier = match self.tokens.len() {
                0 => None,
                n => self.tokens.get(usize::from(pick) % n),
            };
            let token = match earlier {
                Some(t) if pick & 1 == 0 => t.clone(),
                _ if pick & 2 == 0 => ProgressToken::Num(self.engine.next_id()),
                _ => ProgressToken::Str(format!("t{}", self.tokens.len())),
            };
            opts = opts.progress_token(token);
        }
        let expected = self.engine.next_id();
        let token = opts.progress_token.clone();
        let before = self.engine.stats().pending;
        match self.engine.request(self.now, method, None, opts) {
            Ok(id) => {
                assert!(!self.closed, "a request accepted after close");
                assert_eq!(id, expected);
                assert_eq!(
                    id,
                    self.ended.len() as i64,
                    "ids are 0, 1, 2, … never reused"
                );
                self.ended.push(false);
                self.tokens.extend(token);
            }
            Err(EngineError::Closed(_)) => assert!(self.closed),
            Err(EngineError::TooManyPending { limit }) => {
                assert_eq!(limit, self.config.max_pending);
                assert!(before >= limit);
            }
            Err(EngineError::ProgressTokenInUse(_)) => {}
            Err(e) => panic!("unexpected refusal: {e}"),
        }
        self.drain();
        Some(())
    }

    /// A response to one of our ids (or one never sent), as the transport would decode it.
    fn response(&mut self, input: &mut Input<'_>) -> Option<()> {
        let form = input.byte()?;
        let id = self.pick_id(input.byte()?);
        let text = match form % 4 {
            0 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"ok":true}}}}"#),
            1 => {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"no"}}}}"#)
            }
            2 => format!(r#"{{"jsonrpc":"2.0","id":"{id}","result":null}}"#),
            _ => r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#.into(),
        };
        let was_pending = self.engine.is_pending(id);
        self.feed(text.as_bytes());
        if form % 4 == 3 {
            assert_eq!(
                self.engine.is_pending(id),
                was_pending,
                "a response without id ended a request"
            );
        } else {
            assert!(
                !self.engine.is_pending(id),
                "a matching response left its request pending"
            );
        }
        Some(())
    }

    fn progress(&mut self, input: &mut Input<'_>) -> Option<()> {
        let pick = input.byte()?;
        let value = input.byte()?;
        let known = match self.tokens.len() {
            0 => None,
            n if pick & 0x80 == 0 => self.tokens.get(usize::from(pick) % n),
            _ => None,
        };
        let token = match known {
            Some(ProgressToken::Num(n)) => n.to_string(),
            Some(ProgressToken::Str(s)) => format!("{s:?}"),
            _ => format!("{pick}"),
        };
        let text = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":{value}}}}}"#
        );
        self.feed(text.as_bytes());
        Some(())
    }

    fn inbound_id(b: u8) -> Id {
        if b & 0x08 == 0 {
            Id::Num(i64::from(b % 8))
        } else {
            Id::Str(format!("s{}", b % 8))
        }
    }

    fn inbound_request(&mut self, input: &mut Input<'_>) -> Option<()> {
        let id = Self::inbound_id(input.byte()?);
        let message = Message::request(id, "sampling/createMessage", None);
        self.engine.handle_message(self.now, message);
        self.drain();
        Some(())
    }

    fn respond(&mut self, input: &mut Input<'_>) -> Option<()> {
        let b = input.byte()?;
        let id = Self::inbound_id(b);
        let answer = if b & 0x10 == 0 {
            Ok(RawJson::from_string("{}".to_owned()).ok()?)
        } else {
            Err(ErrorObject::new(-32000, "declined"))
        };
        let first = self.engine.respond(self.now, &id, answer.clone());
        self.drain();
        match first {
            Ok(Responded::Sent | Responded::SuppressedAfterCancel | Responded::TaskResult) => {
                // Answered once: a second answer is refused.
                let again = self.engine.respond(self.now, &id, answer);
                assert_eq!(again, Err(EngineError::UnknownInbound(id)));
            }
            Err(EngineError::Closed(_)) => assert!(self.closed),
            Err(EngineError::UnknownInbound(_)) => {}
            Err(e) => panic!("unexpected refusal: {e}"),
        }
        self.drain();
        Some(())
    }

    fn peer_cancel(&mut self, input: &mut Input<'_>) -> Option<()> {
        let id = match Self::inbound_id(input.byte()?) {
            Id::Num(n) => n.to_string(),
            Id::Str(s) => format!("{s:?}"),
        };
        let text = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
        );
        self.feed(text.as_bytes());
        Some(())
    }

    fn end_one(&mut self, input: &mut Input<'_>, cancel: bool) -> Option<()> {
        let b = input.byte()?;
        let id = self.pick_id(input.byte()?);
        let was_pending = self.engine.is_pending(id);
        let result = if cancel {
            let reason = (b & 1 == 0).then(|| "fuzz".to_owned());
            self.engine.cancel(self.now, id, reason)
        } else {
            let error = match b % 4 {
                0 => LocalError::StreamLost,
                1 => LocalError::SessionExpired,
                2 => LocalError::Closed(Closed::new("fuzz")),
                _ => LocalError::Cancelled { reason: None },
            };
            self.engine.fail(self.now, id, error)
        };
        match result {
            Ok(()) => assert!(was_pending),
            Err(EngineError::Closed(_)) => assert!(self.closed),
            Err(EngineError::NotPending(n)) => assert!(!was_pending && n == id),
            Err(e) => panic!("unexpected refusal: {e}"),
        }
        self.drain();
        Some(())
    }

    fn feed(&mut self, bytes: &[u8]) {
        if let Ok(parsed) = jsonrpc::parse(bytes) {
            self.engine.handle_parsed(self.now, parsed);
        }
        self.drain();
    }

    fn close(&mut self, how: u8) {
        if how & 1 == 0 {
            self.engine.close(self.now, "fuzz");
        } else {
            self.engine.close_with(self.now, LocalError::StreamLost);
        }
        self.closed = true;
        self.drain();
        assert!(self.closed_event);
        let stats = self.engine.stats();
        assert_eq!(stats.timers, 0);
        assert_eq!(stats.progress_tokens, 0);
        assert_eq!(stats.inbound, 0);
        assert_eq!(self.engine.poll_timeout(), None);
    }
}

/// Request engine: a structured sequence of operations taken from the input (requests with
/// options, responses, progress, the peer's requests and cancels, our answers, cancels,
/// transport failures, time jumps, raw bytes, close). Invariants: no panic; each issued id ends
/// exactly once and all have ended after close; nothing pending, armed or held after close; no
/// deadline `<= now` stays armed after `handle_timeout(now)`; caps hold.
pub fn engine_ops(data: &[u8]) {
    let mut input = Input { data };
    let mut config = Limits::default();
    if let Some(b) = input.byte() {
        config.max_pending = usize::from(b % 16) + 1;
        config.max_inbound = usize::from((b >> 4) % 8);
    }
    if let Some(b) = input.byte() {
        config.max_notifications = usize::from(b % 8);
        config.ended_record = usize::from((b >> 3) % 8);
    }
    // The harness's one epoch; the engine only ever sees offsets from it.
    let epoch = Instant::now();
    let mut m = Model {
        engine: Engine::new(config.clone()),
        config,
        now: epoch,
        ended: Vec::new(),
        tokens: Vec::new(),
        closed: false,
        closed_event: false,
    };
    while let Some(op) = input.byte() {
        let done = match op % 16 {
            0..=2 => m.request(&mut input),
            3 | 4 => m.response(&mut input),
            5 => m.progress(&mut input),
            6 => m.inbound_request(&mut input),
            7 => m.respond(&mut input),
            8 => m.peer_cancel(&mut input),
            9 => m.end_one(&mut input, true),
            10 => m.end_one(&mut input, false),
            11 => input.u16().map(|ms| {
                m.now += Duration::from_millis(u64::from(ms));
            }),
            12 => {
                // Jump straight to the next deadline, as a driver's timer would.
                if let Some(t) = m.engine.poll_timeout() {
                    m.now = m.now.max(t);
                }
                m.fire();
                Some(())
            }
            13 => {
                m.fire();
                Some(())
            }
            14 => {
                let n = input.byte().map_or(0, usize::from);
                let raw = input.bytes(n).to_vec();
                m.feed(&raw);
                Some(())
            }
            _ => {
                if op & 0x10 != 0 {
                    let _ = m.engine.poll_notification();
                    Some(())
                } else if op & 0x20 != 0 {
                    let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
                    m.feed(note.as_bytes());
                    Some(())
                } else {
                    m.close(op >> 6);
                    Some(())
                }
            }
        };
        if done.is_none() {
            break;
        }
    }
    // However the input ended, a close ends everything exactly once.
    m.close(0);
    while m.engine.poll_notification().is_some() {}
    assert_eq!(m.engine.unread_notifications(), 0);
}

#[cfg(test)]
mod tests {
    use super::engine_ops;
    use crate::test_support::Rng;

    #[test]
    fn engine_ops_holds_its_invariants_on_pseudo_random_inputs() {
        let mut rng = Rng(0xE61E);
        for round in 0..400 {
            let len = (rng.next() % 600) as usize;
            let data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let result = std::panic::catch_unwind(|| engine_ops(&data));
            assert!(result.is_ok(), "round {round}: input {data:?}");
        }
    }

    #[test]
    fn engine_ops_takes_empty_and_tiny_inputs() {
        for data in [&[][..], &[0], &[0, 0], &[255; 3], &[1, 2, 0, 3]] {
            engine_ops(data);
        }
    }

    #[test]
    fn engine_ops_covers_a_hand_written_sequence() {
        let mut data = vec![0x7F, 0x3F];
        // Three requests with progress tokens and resets, a progress, a jump to the next
        // deadline, a response, a cancel, an inbound request answered twice, a close.
        for _ in 0..3 {
            data.extend([0, 0x54, 0x10, 0x00, 0x00, 0x01, 0x03]);
        }
        data.extend([5, 0, 7]);
        data.extend([12]);
        data.extend([3, 0, 1]);
        data.extend([9, 0, 2]);
        data.extend([6, 1, 7, 1, 7, 1]);
        data.extend([15]);
        engine_ops(&data);
    }
}
