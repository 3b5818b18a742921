use crate::codec::sse::{McpSseDecoder, SseDecoder, SseError, SseItem};

/// One thing an SSE decoder handed out.
#[derive(Debug, PartialEq, Eq)]
enum Item {
    Event {
        event_type: String,
        data: String,
        last_event_id: String,
    },
    Error(SseError),
}

/// Everything a decoder handed out for one input, and its final state.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    items: Vec<Item>,
    last_event_id: String,
    retry: Option<u64>,
}

fn decode_sse(data: &[u8], cap: usize, split: impl Fn(usize) -> usize) -> Outcome {
    let mut dec = SseDecoder::with_max_event_size(cap);
    let mut items = Vec::new();
    let drain = |dec: &mut SseDecoder, items: &mut Vec<Item>| {
        while let Some(item) = dec.next_event_ref() {
            items.push(match item {
                Ok(event) => {
                    assert!(!event.event_type.is_empty());
                    Item::Event {
                        event_type: event.event_type.to_owned(),
                        data: event.data.to_owned(),
                        last_event_id: event.last_event_id.to_owned(),
                    }
                }
                Err(error) => Item::Error(error),
            });
        }
    };
    let mut rest = data;
    let mut round = 0;
    while !rest.is_empty() {
        let n = split(round).clamp(1, rest.len());
        round += 1;
        dec.push(&rest[..n]);
        rest = &rest[n..];
        drain(&mut dec, &mut items);
        // What carries over to the next push: the event and the line being read, within the cap
        // (plus a line too short to sort yet).
        assert!(dec.buffered() <= cap + 5, "buffer grew past the cap");
    }
    dec.finish();
    drain(&mut dec, &mut items);
    assert!(dec.next_event_ref().is_none(), "items after the end");
    let work = dec.work();
    // Replacement can make the decoded text up to three times the input.
    let decoded = 3 * work.pushed + 9;
    assert!(work.scanned <= decoded, "a byte was scanned twice");
    assert!(work.copied <= 3 * decoded, "copying is not linear");
    Outcome {
        items,
        last_event_id: dec.last_event_id().to_owned(),
        retry: dec.retry(),
    }
}

fn decode_mcp(data: &[u8], cap: usize, split: impl Fn(usize) -> usize) -> Vec<SseItem> {
    let mut dec = McpSseDecoder::with_max_event_size(cap);
    let mut items = Vec::new();
    let mut rest = data;
    let mut round = 0;
    while !rest.is_empty() {
        let n = split(round).clamp(1, rest.len());
        round += 1;
        dec.push(&rest[..n]);
        rest = &rest[n..];
        items.extend(std::iter::from_fn(|| dec.next_item()));
    }
    dec.finish();
    items.extend(std::iter::from_fn(|| dec.next_item()));
    items
}

/// SSE decoder: no panic; the same events, diagnostics and final state whole, byte by byte and in
/// input-derived splits; memory bounded by the cap; each byte scanned once. The MCP layer on top
/// yields the same items whatever the splits.
pub fn sse(data: &[u8]) {
    let (seed, body) = match data.split_first() {
        Some((s, b)) => (usize::from(*s), b),
        None => return,
    };
    // Small caps make overflow reachable with short inputs; 4 KiB is the usual case.
    let cap = if seed & 1 == 0 { 4096 } else { 8 + seed };
    let pieces = |i: usize| (seed.wrapping_mul(31).wrapping_add(i * 7)) % 23 + 1;
    let whole = decode_sse(body, cap, |_| usize::MAX);
    let bytewise = decode_sse(body, cap, |_| 1);
    let split = decode_sse(body, cap, pieces);
    assert_eq!(whole, bytewise, "byte-by-byte feed differs from whole feed");
    assert_eq!(whole, split, "split feed differs from whole feed");
    let mcp_whole = decode_mcp(body, cap, |_| usize::MAX);
    let mcp_split = decode_mcp(body, cap, pieces);
    assert_eq!(mcp_whole, mcp_split, "MCP items depend on the split");
}

#[cfg(test)]
mod tests {
    use super::sse;

    #[test]
    fn entry_point_holds_on_sample_inputs() {
        let inputs: &[&[u8]] = &[
            b"",
            b"\x00",
            b"\x00data: x\n\n",
            b"\x01data: 0123456789abcdef\n\nid: 1\ndata: y\r\n\r\n",
            b"\x00\xEF\xBB\xBFdata: \xE2\x82\xAC\r\rid\0:\x80\ndata\n\n",
            b"\x03: c\rretry: 10\nevent: e\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n\n",
            b"\x05data: [{\"jsonrpc\":\"2.0\",\"method\":\"m\"},1]\n\ndata: {\n\ndata: x",
            b"\x07data: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\ndata: b\n\ndata: c\n\n",
        ];
        for input in inputs {
            sse(input);
        }
    }
}
