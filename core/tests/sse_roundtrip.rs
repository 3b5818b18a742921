//! The SSE encoder and decoder together: whatever the encoder writes decodes back to the same
//! events (line ends inside data become LF), ids and retry, in any split and with any line end.

use mcpwire_core::codec::sse::{
    EventFrame, LineEnd, McpSseDecoder, SseDecoder, SseEncoder, SseItem, MESSAGE,
};
use proptest::prelude::*;

/// A frame as generated: owned strings, then borrowed for the encoder.
#[derive(Debug, Clone)]
struct Frame {
    event_type: Option<String>,
    id: Option<String>,
    retry: Option<u64>,
    data: Option<String>,
    comment: Option<String>,
}

impl Frame {
    fn as_frame(&self) -> EventFrame<'_> {
        EventFrame {
            event_type: self.event_type.as_deref(),
            id: self.id.as_deref(),
            retry: self.retry,
            data: self.data.as_deref(),
        }
    }
}

/// Text that may hold spaces, colons, line ends of every kind, NUL, a BOM and non-ASCII.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just(" "),
            Just(":"),
            Just("\n"),
            Just("\r"),
            Just("\r\n"),
            Just("\0"),
            Just("\u{FEFF}"),
            Just("\u{e9}"),
            Just("\u{1F600}"),
            Just("data"),
            Just("x"),
            Just("{\"a\":1}"),
        ],
        0..12,
    )
    .prop_map(|p| p.concat())
}

/// Text a single-line field can carry: no line ends (and, for ids, no NUL).
fn field_text(allow_nul: bool) -> impl Strategy<Value = String> {
    text().prop_map(move |t| {
        t.chars()
            .filter(|c| !matches!(c, '\r' | '\n') && (allow_nul || *c != '\0'))
            .collect()
    })
}

fn frame() -> impl Strategy<Value = Frame> {
    (
        prop::option::of(field_text(true)),
        prop::option::of(field_text(false)),
        prop::option::of(any::<u64>()),
        prop::option::of(text()),
        prop::option::of(text()),
    )
        .prop_map(|(event_type, id, retry, data, comment)| Frame {
            event_type,
            id,
            retry,
            data,
            comment,
        })
}

fn line_end() -> impl Strategy<Value = LineEnd> {
    prop_oneof![Just(LineEnd::Lf), Just(LineEnd::CrLf), Just(LineEnd::Cr)]
}

/// Data as a receiver sees it: CRLF and CR become LF.
fn normalised(data: &str) -> String {
    data.replace("\r\n", "\n").replace('\r', "\n")
}

type Expected = (Vec<(String, String, String)>, String, Option<u64>);

/// What decoding the encoded frames must give.
fn expected(frames: &[Frame]) -> Expected {
    let mut events = Vec::new();
    let mut id = String::new();
    let mut retry = None;
    for f in frames {
        if let Some(new) = &f.id {
            id = new.clone();
        }
        if f.retry.is_some() {
            retry = f.retry;
        }
        if let Some(data) = &f.data {
            let event_type = match f.event_type.as_deref() {
                None | Some("") => MESSAGE.to_owned(),
                Some(t) => t.to_owned(),
            };
            events.push((event_type, normalised(data), id.clone()));
        }
    }
    (events, id, retry)
}

fn decode(bytes: &[u8], chunk: usize) -> Expected {
    let mut dec = SseDecoder::new();
    let mut events = Vec::new();
    for piece in bytes.chunks(chunk.max(1)) {
        dec.push(piece);
        while let Some(item) = dec.next_event_ref() {
            let ev = item.expect("no diagnostics for encoded frames");
            events.push((
                ev.event_type.to_owned(),
                ev.data.to_owned(),
                ev.last_event_id.to_owned(),
            ));
        }
    }
    dec.finish();
    assert!(dec.next_event_ref().is_none(), "encoded frames end cleanly");
    (events, dec.last_event_id().to_owned(), dec.retry())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn encoded_frames_decode_to_the_same_events(
        frames in prop::collection::vec(frame(), 0..8),
        end in line_end(),
        chunk in 1usize..20,
    ) {
        let encoder = SseEncoder::with_line_end(end);
        let mut bytes = Vec::new();
        for f in &frames {
            if let Some(c) = &f.comment {
                encoder.comment(c, &mut bytes);
            }
            encoder.event(&f.as_frame(), &mut bytes).expect("writable frame");
        }
        let expected = expected(&frames);
        prop_assert_eq!(&decode(&bytes, usize::MAX), &expected);
        prop_assert_eq!(&decode(&bytes, chunk), &expected);
        prop_assert_eq!(&decode(&bytes, 1), &expected);
    }
}

#[test]
fn encoded_json_rpc_messages_come_back_through_the_mcp_decoder() {
    let encoder = SseEncoder::with_line_end(LineEnd::CrLf);
    let mut body = Vec::new();
    encoder
        .event(&EventFrame::priming("0").with_retry(300), &mut body)
        .unwrap();
    encoder.comment("keep-alive", &mut body);
    let json = r#"{"jsonrpc":"2.0","id":1,"result":{"text":"two\nlines"}}"#;
    encoder
        .event(
            &EventFrame::message(json).with_type("message").with_id("1"),
            &mut body,
        )
        .unwrap();
    let mut dec = McpSseDecoder::new();
    dec.push(&body);
    match dec.next_item() {
        Some(SseItem::Message(m)) => assert_eq!(m.to_bytes(), json.as_bytes()),
        other => panic!("{other:?}"),
    }
    assert_eq!(dec.next_item(), None);
    assert_eq!(dec.last_event_id(), "1");
    assert_eq!(dec.retry(), Some(300));
}
