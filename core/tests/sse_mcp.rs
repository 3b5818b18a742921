//! MCP over SSE: real captured response bodies decode to the expected JSON-RPC messages however
//! the network split them, and the MCP layer's own rules (priming events, other event types,
//! malformed JSON, batches, unfinished events).

use mcpwire_core::codec::sse::{
    McpSseDecoder, SseDecoder, SseDiagnostic, SseError, SseItem, MESSAGE,
};
use mcpwire_core::jsonrpc::{Id, Message, ParseError};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/sse/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The body of a `curl -i` capture: everything after the blank line that ends the head.
fn curl_body(capture: &[u8]) -> &[u8] {
    let end = capture
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP head");
    &capture[end + 4..]
}

/// The bodies of the HTTP/1.1 responses on one captured connection, each as the list of its
/// chunks (transfer-encoding chunked), in the order they crossed the wire. The last response may
/// end without its final chunk (the connection was closed, or the capture stopped).
fn chunked_responses(mut wire: &[u8]) -> Vec<Vec<Vec<u8>>> {
    fn line(wire: &mut &[u8]) -> String {
        let end = wire.windows(2).position(|w| w == b"\r\n").expect("CRLF");
        let text = String::from_utf8(wire[..end].to_vec()).expect("ASCII");
        *wire = &wire[end + 2..];
        text
    }
    let mut responses = Vec::new();
    while !wire.is_empty() {
        let mut chunked = false;
        loop {
            let header = line(&mut wire);
            if header.is_empty() {
                break;
            }
            chunked |= header.eq_ignore_ascii_case("transfer-encoding: chunked");
        }
        assert!(chunked, "captured responses are chunked");
        let mut chunks = Vec::new();
        while !wire.is_empty() {
            let size = usize::from_str_radix(&line(&mut wire), 16).expect("chunk size");
            if size == 0 {
                assert!(line(&mut wire).is_empty(), "no trailers");
                break;
            }
            chunks.push(wire[..size].to_vec());
            wire = &wire[size..];
            assert!(line(&mut wire).is_empty(), "chunk ends with CRLF");
        }
        responses.push(chunks);
    }
    responses
}

/// What an MCP stream gave: items, and the decoder's state at the end.
#[derive(Debug, PartialEq)]
struct Decoded {
    items: Vec<SseItem>,
    last_event_id: String,
    retry: Option<u64>,
}

fn decode_pieces<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> Decoded {
    let mut dec = McpSseDecoder::new();
    let mut items = Vec::new();
    for piece in pieces {
        dec.push(piece);
        items.extend(std::iter::from_fn(|| dec.next_item()));
    }
    dec.finish();
    items.extend(std::iter::from_fn(|| dec.next_item()));
    Decoded {
        items,
        last_event_id: dec.last_event_id().to_owned(),
        retry: dec.retry(),
    }
}

/// Decodes `body` whole and in the chunk sizes a network produces (and at every 2-way split when
/// the body is small), checks that all agree, and returns the result.
fn decode_every_way(body: &[u8]) -> Decoded {
    let whole = decode_pieces([body]);
    for size in [1, 7, 64, 1460, 16 * 1024] {
        assert_eq!(decode_pieces(body.chunks(size)), whole, "chunks of {size}");
    }
    if body.len() <= 1500 {
        for cut in 0..=body.len() {
            let (a, b) = body.split_at(cut);
            assert_eq!(decode_pieces([a, b]), whole, "cut at {cut}");
        }
    }
    whole
}

fn messages(decoded: &Decoded) -> Vec<&Message> {
    decoded
        .items
        .iter()
        .map(|item| match item {
            SseItem::Message(m) => m,
            other => panic!("unexpected item {other:?}"),
        })
        .collect()
}

/// The result of a response to request `id`, as raw JSON text.
fn result_of(message: &Message, id: i64) -> &str {
    match message {
        Message::Response(r) => {
            assert_eq!(r.id, Some(Id::Num(id)));
            r.outcome.as_ref().expect("a result").get()
        }
        other => panic!("expected the response to {id}, got {other:?}"),
    }
}

/// The progress value of a `notifications/progress`.
fn progress_of(message: &Message) -> u64 {
    match message {
        Message::Notification(n) => {
            assert_eq!(n.method, "notifications/progress");
            let params: serde_json::Value =
                serde_json::from_str(n.params.as_ref().expect("params").get()).unwrap();
            params["progress"].as_u64().expect("a progress number")
        }
        other => panic!("expected a progress notification, got {other:?}"),
    }
}

// ----- Captures from the Python server (CRLF line ends, `event: message`, no ids) -----------------

#[test]
fn python_initialize_response() {
    let decoded = decode_every_way(&fixture("py-sse-2025-11-25-01-initialize.resp.body.bin"));
    let msgs = messages(&decoded);
    assert_eq!(msgs.len(), 1);
    assert!(result_of(msgs[0], 1).contains("\"protocolVersion\":\"2025-11-25\""));
    assert_eq!(decoded.last_event_id, "");
    assert_eq!(decoded.retry, None);
}

#[test]
fn python_tools_list_response() {
    let decoded = decode_every_way(&fixture("py-sse-2025-11-25-03-tools-list.resp.body.bin"));
    let msgs = messages(&decoded);
    assert_eq!(msgs.len(), 1);
    let result: serde_json::Value = serde_json::from_str(result_of(msgs[0], 2)).unwrap();
    let names: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "ask_name", "greet", "slow"]);
}

#[test]
fn python_tools_call_with_progress() {
    let decoded = decode_every_way(&fixture(
        "py-sse-2025-11-25-04-tools-call-progress.resp.body.bin",
    ));
    let msgs = messages(&decoded);
    assert_eq!(msgs.len(), 3);
    assert_eq!(progress_of(msgs[0]), 1);
    assert_eq!(progress_of(msgs[1]), 2);
    assert!(result_of(msgs[2], 3).contains("done after 2 steps"));
}

#[test]
fn python_modern_tools_call_with_progress_crlf() {
    let body = fixture("py-2026-07-28-03-tools-call-progress-sse.resp.body.bin");
    assert!(body.windows(4).any(|w| w == b"\r\n\r\n"), "CRLF capture");
    let decoded = decode_every_way(&body);
    let msgs = messages(&decoded);
    assert_eq!(msgs.len(), 3);
    assert_eq!(progress_of(msgs[0]), 1);
    assert_eq!(progress_of(msgs[1]), 2);
    assert!(result_of(msgs[2], 3).contains("\"resultType\":\"complete\""));
}

#[test]
fn python_resumable_stream_dropped_then_resumed_with_get() {
    let responses = chunked_responses(&fixture("py-resumable-drop-then-get.s2c.bin"));
    assert_eq!(responses.len(), 2);

    // The POST's stream: only the priming event, then the server closed it.
    let post = decode_pieces(responses[0].iter().map(Vec::as_slice));
    assert_eq!(post.items, []);
    assert_eq!(post.last_event_id, "ev-3");
    assert_eq!(post.retry, Some(300));

    // The resumed GET stream, fed chunk by chunk as it arrived: the replayed progress, a new
    // priming event, more progress, and the result.
    let get = decode_pieces(responses[1].iter().map(Vec::as_slice));
    let whole: Vec<u8> = responses[1].concat();
    assert_eq!(decode_every_way(&whole), get);
    let msgs = messages(&get);
    assert_eq!(msgs.len(), 3);
    assert_eq!(progress_of(msgs[0]), 1);
    assert_eq!(progress_of(msgs[1]), 2);
    assert!(result_of(msgs[2], 2).contains("finished after stream drop"));
    assert_eq!(get.last_event_id, "ev-7");
    assert_eq!(get.retry, Some(300));
}

// ----- Captures from server-everything (LF line ends, priming events, UUID ids) -----------------

#[test]
fn everything_initialize_with_priming_event() {
    let capture = fixture("everything-http-01-initialize-req-2026-07-28.sse.txt");
    let body = curl_body(&capture);

    // At the event-stream level the priming event is an event with empty data.
    let mut dec = SseDecoder::new();
    dec.push(body);
    let priming = dec.next_event().unwrap().unwrap();
    assert_eq!(
        (priming.event_type.as_ref(), priming.data.as_str()),
        (MESSAGE, "")
    );
    assert_eq!(dec.last_event_id(), "a42dec47-83f3-472c-bdee-718b0cbdc74d");
    let response = dec.next_event().unwrap().unwrap();
    assert!(response.is_message());
    assert_eq!(dec.last_event_id(), "78e1a4a5-3543-412a-9f5e-47097c75caec");
    dec.finish();
    assert_eq!(dec.next_event(), None);

    // The MCP layer skips it silently.
    let decoded = decode_every_way(body);
    let msgs = messages(&decoded);
    assert_eq!(msgs.len(), 1);
    assert!(result_of(msgs[0], 1).contains("\"protocolVersion\":\"2025-11-25\""));
    assert_eq!(
        decoded.last_event_id,
        "78e1a4a5-3543-412a-9f5e-47097c75caec"
    );
    assert_eq!(decoded.retry, None);
}

#[test]
fn everything_get_stream_carries_a_server_request() {
    let capture = fixture("everything-http-03-get-stream.sse.txt");
    let decoded = decode_every_way(curl_body(&capture));
    let msgs = messages(&decoded);
    assert_eq!(msgs.len(), 1);
    match msgs[0] {
        Message::Request(r) => {
            assert_eq!(r.method, "roots/list");
            assert_eq!(r.id, Id::Num(0));
        }
        other => panic!("expected roots/list, got {other:?}"),
    }
    assert_eq!(
        decoded.last_event_id,
        "0825fbe7-a170-4628-a2ca-0cc968116ccf"
    );
}

#[test]
fn everything_tools_list() {
    let capture = fixture("everything-http-04-tools-list.sse.txt");
    let decoded = decode_every_way(curl_body(&capture));
    let msgs = messages(&decoded);
    assert_eq!(msgs.len(), 1);
    let result: serde_json::Value = serde_json::from_str(result_of(msgs[0], 2)).unwrap();
    let tools = result["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 16);
    assert_eq!(tools[0]["name"], "echo");
    assert_eq!(
        decoded.last_event_id,
        "c40f355f-a0ea-4b1a-bbb0-0ec61af1b8a0"
    );
}

#[test]
fn everything_tools_call_with_progress() {
    let capture = fixture("everything-http-05-tools-call-progress.sse.txt");
    let body = curl_body(&capture);
    let mut dec = SseDecoder::new();
    dec.push(body);
    let mut ids = Vec::new();
    while let Some(Ok(ev)) = dec.next_event_ref() {
        ids.push(ev.last_event_id.to_owned());
    }
    assert_eq!(
        ids,
        [
            "a423771c-9188-4063-aead-284afe838f5e",
            "4d609168-8c8e-4dd6-a9ec-7183bf583025",
            "88db72c6-ac6d-45c1-be21-e974d42681b4",
            "9f668d73-9836-4c1f-80c3-52d34c4d3fc4",
        ]
    );

    let decoded = decode_every_way(body);
    let msgs = messages(&decoded);
    assert_eq!(msgs.len(), 3);
    assert_eq!(progress_of(msgs[0]), 1);
    assert_eq!(progress_of(msgs[1]), 2);
    assert!(result_of(msgs[2], 3).contains("Long running operation completed"));
    assert_eq!(
        decoded.last_event_id,
        "9f668d73-9836-4c1f-80c3-52d34c4d3fc4"
    );
}

// ----- The MCP layer's rules ----------------------------------------------------------------------

const PING: &str = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;

fn decode_str(body: &str) -> Decoded {
    decode_every_way(body.as_bytes())
}

#[test]
fn priming_event_yields_nothing_but_moves_the_id() {
    let decoded = decode_str("id: p1\ndata:\nretry: 250\n\n");
    assert_eq!(decoded.items, []);
    assert_eq!(decoded.last_event_id, "p1");
    assert_eq!(decoded.retry, Some(250));
}

#[test]
fn json_over_several_data_lines_is_one_message() {
    let decoded = decode_str(
        "data: {\"jsonrpc\":\"2.0\",\ndata:  \"id\":7,\ndata:  \"method\":\"ping\"}\n\n",
    );
    match messages(&decoded)[..] {
        [Message::Request(r)] => {
            assert_eq!((r.id.clone(), r.method.as_ref()), (Id::Num(7), "ping"))
        }
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn other_event_types_are_diagnostics_and_the_stream_goes_on() {
    let decoded = decode_str(&format!(
        "event: endpoint\ndata: /messages?session=1\n\ndata: {PING}\n\n"
    ));
    assert_eq!(decoded.items.len(), 2);
    assert_eq!(
        decoded.items[0],
        SseItem::Diagnostic(SseDiagnostic::UnexpectedEventType {
            event_type: "endpoint".into(),
            data: "/messages?session=1".into(),
        })
    );
    assert!(matches!(
        decoded.items[1],
        SseItem::Message(Message::Request(_))
    ));
}

#[test]
fn malformed_json_is_a_diagnostic_and_the_stream_goes_on() {
    let decoded = decode_str(&format!(
        "data: {{\"jsonrpc\":\n\ndata: 42\n\ndata: {PING}\n\n"
    ));
    assert_eq!(decoded.items.len(), 3);
    match &decoded.items[0] {
        SseItem::Diagnostic(SseDiagnostic::NotAMessage { error, preview }) => {
            assert!(matches!(error, ParseError::NotJson(_)));
            assert_eq!(preview, "{\"jsonrpc\":");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        &decoded.items[1],
        SseItem::Diagnostic(SseDiagnostic::NotAMessage {
            error: ParseError::NotObject,
            ..
        })
    ));
    assert!(matches!(decoded.items[2], SseItem::Message(_)));
}

#[test]
fn a_batch_yields_each_element_in_order() {
    let decoded = decode_str(&format!(
        "data: [{PING},1,{{\"jsonrpc\":\"2.0\",\"method\":\"n\"}}]\n\ndata: {PING}\n\n"
    ));
    let kinds: Vec<&str> = decoded
        .items
        .iter()
        .map(|i| match i {
            SseItem::Message(Message::Request(_)) => "request",
            SseItem::Message(Message::Notification(_)) => "notification",
            SseItem::Diagnostic(SseDiagnostic::NotAMessage { .. }) => "bad element",
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["request", "bad element", "notification", "request"]);
}

#[test]
fn a_stream_cut_mid_event_is_reported() {
    let decoded = decode_str(&format!("data: {PING}\n\ndata: {{\"jsonrpc\":\"2.0\","));
    assert_eq!(decoded.items.len(), 2);
    assert!(matches!(decoded.items[0], SseItem::Message(_)));
    assert_eq!(
        decoded.items[1],
        SseItem::Diagnostic(SseDiagnostic::Stream(SseError::UnfinishedEvent {
            data_len: 0,
            unterminated_line: true,
        }))
    );
}

#[test]
fn an_event_over_the_cap_is_reported_and_the_next_one_delivered() {
    let mut dec = McpSseDecoder::with_max_event_size(64);
    let big = "x".repeat(100);
    dec.push(format!("data: {big}\n\ndata: {PING}\n\n").as_bytes());
    assert_eq!(
        dec.next_item(),
        Some(SseItem::Diagnostic(SseDiagnostic::Stream(
            SseError::EventTooLarge { limit: 64 }
        )))
    );
    assert!(matches!(dec.next_item(), Some(SseItem::Message(_))));
    assert_eq!(dec.next_item(), None);
}

#[test]
fn a_burst_of_priming_events_is_drained_in_a_loop() {
    let mut body = String::new();
    for i in 0..50_000 {
        body.push_str(&format!("id: {i}\ndata:\n\n"));
    }
    body.push_str(&format!("data: {PING}\n\n"));
    let mut dec = McpSseDecoder::new();
    dec.push(body.as_bytes());
    assert!(matches!(dec.next_item(), Some(SseItem::Message(_))));
    assert_eq!(dec.next_item(), None);
    assert_eq!(dec.last_event_id(), "49999");
    assert_eq!(dec.decoder().work().events, 50_001);
}
