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
/// A number past the range of `f64` is valid JSON that the parser takes (raw values stay text)
/// but `Value` cannot hold: such a message is compared as its encoding, which a second encode
/// leaves as it is.
fn canonical(m: &Message) -> String {
    let bytes = m.to_bytes();
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(v) => v.to_string(),
        Err(_) => String::from_utf8(bytes).expect("an encoding is UTF-8"),
    }
}

/// HTTP/1.1 response reading: no panic; the head is found the same whether the bytes come
/// whole or one by one; a body decodes to the same bytes and the same end in any pieces and
/// read sizes; nothing grows past the caps.
pub fn http1(data: &[u8]) {
    use crate::codec::http1::{parse_response_head, BodyDecoder, MAX_HEAD};
    let (seed, body) = match data.split_first() {
        Some((s, b)) => (*s as usize, b),
        None => return,
    };
    let whole = parse_response_head(body, seed & 1 == 1);
    // Fed a byte at a time, the head is the same once it is complete.
    let mut fed = None;
    for n in 1..=body.len().min(MAX_HEAD + 16) {
        match parse_response_head(&body[..n], seed & 1 == 1) {
            Ok(None) => continue,
            other => {
                fed = Some(other);
                break;
            }
        }
    }
    if let Some(Ok(Some((head, used)))) = &fed {
        assert!(*used <= MAX_HEAD, "a head past the cap");
        let Ok(Some((whole_head, whole_used))) = &whole else {
            panic!("a head found in a prefix but not in the whole: {whole:?}");
        };
        assert_eq!((head, used), (whole_head, whole_used));
        let rest = &body[*used..];
        let decode = |step: usize, max: usize| {
            let mut d = BodyDecoder::new(head.framing);
            let (mut out, mut buf, mut at) = (Vec::new(), Vec::new(), 0);
            loop {
                let r = match d.decode(&buf, max) {
                    Ok(r) => r,
                    Err(e) => return (out, Err(e)),
                };
                assert!(r.data.end <= r.consumed && r.consumed <= buf.len());
                assert!(r.data.len() <= max);
                out.extend_from_slice(&buf[r.data.clone()]);
                buf.drain(..r.consumed);
                assert!(
                    buf.len() <= (16 * 1024usize).saturating_add(step),
                    "undecoded bytes pile up"
                );
                if d.is_done() {
                    return (out, Ok(true));
                }
                if r.consumed == 0 {
                    if at == rest.len() {
                        return (out, d.end_of_input().map(|()| d.is_done()));
                    }
                    let n = step.min(rest.len() - at);
                    buf.extend_from_slice(&rest[at..at + n]);
                    at += n;
                }
            }
        };
        let all = decode(usize::MAX, usize::MAX);
        let pieces = decode(seed % 13 + 1, seed % 7 + 1);
        assert_eq!(all, pieces, "pieces decode differently");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_http1_entry_point_holds_on_sample_inputs() {
        let inputs: &[&[u8]] = &[
            b"",
            b"\x00HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef",
            b"\x05HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            b"\x01HTTP/1.1 200 OK\r\n\r\nbody",
            b"\x08HTTP/1.0 200 OK\nTransfer-Encoding: chunked\n\nz\n",
            b"\x03HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No\r\n\r\n",
            b"\x02HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x\r\nab",
        ];
        for input in inputs {
            super::http1(input);
        }
    }
}
