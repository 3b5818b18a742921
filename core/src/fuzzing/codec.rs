use crate::codec::jsonl::{FrameError, JsonlDecoder};
use crate::jsonrpc::{self, Message, Parsed};

/// Everything a JSONL decoder hands out for one input, in order.
type Items = Vec<Result<Parsed<Message>, FrameError>>;

fn decode_jsonl(data: &[u8], max_line: usize, split: impl Fn(usize) -> usize) -> Items {
    let mut dec = JsonlDecoder::with_max_line(max_line);
    let mut out = Vec::new();
    let mut rest = data;
    let mut round = 0;
    while !rest.is_empty() {
        let n = split(round).clamp(1, rest.len());
        round += 1;
        dec.push(&rest[..n]);
        rest = &rest[n..];
        while let Some(item) = dec.next_message() {
            out.push(item);
        }
        // Memory stays within the cap plus one push (plus the slack byte for `\r`).
        assert!(
            dec.buffered() <= max_line + 1 + n,
            "buffer grew past the cap"
        );
    }
    dec.finish();
    while let Some(item) = dec.next_message() {
        out.push(item);
    }
    assert!(
        dec.work().scanned <= dec.work().pushed,
        "a byte was scanned twice"
    );
    out
}

/// JSONL decoder: no panic; the same items whole, byte by byte and in input-derived splits;
/// memory bounded by the cap; each byte scanned once.
pub fn jsonl(data: &[u8]) {
    let (seed, body) = match data.split_first() {
        Some((s, b)) => (*s as usize, b),
        None => return,
    };
    let cap = 64 + seed;
    let whole = decode_jsonl(body, cap, |_| usize::MAX);
    let bytewise = decode_jsonl(body, cap, |_| 1);
    let split = decode_jsonl(body, cap, |i| {
        (seed.wrapping_mul(31).wrapping_add(i * 7)) % 23 + 1
    });
    assert_eq!(whole, bytewise, "byte-by-byte feed differs from whole feed");
    assert_eq!(whole, split, "split feed differs from whole feed");
}

/// JSON-RPC parser: no panic; a parsed message re-encodes without newlines and parses back to
/// the same message.
pub fn jsonrpc(data: &[u8]) {
    let Ok(parsed) = jsonrpc::parse(data) else {
        return;
    };
    let messages = match parsed {
        Parsed::Single(m) => vec![m],
        Parsed::Batch(items) => items.into_iter().filter_map(Result::ok).collect(),
    };
    for m in messages {
        let bytes = m.to_bytes();
        assert!(!bytes.contains(&b'\n') && !bytes.contains(&b'\r'));
        match jsonrpc::parse(&bytes) {
            Ok(Parsed::Single(again)) => assert_eq!(canonical(&again), canonical(&m)),
            other => panic!("re-encoded message did not parse back: {other:?}"),
        }
    }
}

/// A message with its raw values normalised (whitespace inside raw JSON may change on re-encode).
fn canonical(m: &Message) -> String {
    let v: serde_json::Value = serde_json::from_slice(&m.to_bytes()).expect("valid JSON");
    v.to_string()
}
