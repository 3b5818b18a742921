//! The JSONL codec: every rule fed whole, byte by byte, at every 2-way split and in random splits.

use mcpwire_core::codec::jsonl::{self, FrameError, JsonlDecoder};
use mcpwire_core::jsonrpc::{Id, Message, ParseError, Parsed};
use proptest::prelude::*;

/// What a decoder hands out, as comparable values: `Ok(line)` or the error.
type Lines = Vec<Result<Vec<u8>, FrameError>>;

fn lines_with(input: &[u8], cap: usize, cuts: &[usize]) -> Lines {
    let mut dec = JsonlDecoder::with_max_line(cap);
    let mut out = Vec::new();
    let mut prev = 0;
    for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
        let cut = cut.clamp(prev, input.len());
        dec.push(&input[prev..cut]);
        prev = cut;
        while let Some(item) = dec.next_line() {
            out.push(item.map(<[u8]>::to_vec));
        }
    }
    dec.finish();
    while let Some(item) = dec.next_line() {
        out.push(item.map(<[u8]>::to_vec));
    }
    let w = dec.work();
    assert!(
        w.scanned <= w.pushed,
        "scanned {} > pushed {}",
        w.scanned,
        w.pushed
    );
    out
}

/// Decodes `input` whole, byte by byte and at every 2-way split; all must agree. Returns the
/// whole-feed result.
fn lines(input: &[u8], cap: usize) -> Lines {
    let whole = lines_with(input, cap, &[]);
    let bytewise: Vec<usize> = (1..input.len()).collect();
    assert_eq!(
        lines_with(input, cap, &bytewise),
        whole,
        "byte by byte: {input:?}"
    );
    for cut in 0..=input.len() {
        assert_eq!(
            lines_with(input, cap, &[cut]),
            whole,
            "split at {cut}: {input:?}"
        );
    }
    whole
}

fn ok(lines: &[&str]) -> Lines {
    lines.iter().map(|l| Ok(l.as_bytes().to_vec())).collect()
}

const BIG: usize = 1 << 20;

#[test]
fn lf_separated_lines() {
    assert_eq!(lines(b"a\nbb\nccc\n", BIG), ok(&["a", "bb", "ccc"]));
}

#[test]
fn crlf_is_stripped() {
    assert_eq!(lines(b"a\r\nbb\r\n", BIG), ok(&["a", "bb"]));
    // Only one trailing CR belongs to the line ending.
    assert_eq!(lines(b"a\r\r\n", BIG), ok(&["a\r"]));
    // A CR inside a line is data.
    assert_eq!(lines(b"a\rb\n", BIG), ok(&["a\rb"]));
}

#[test]
fn blank_lines_are_skipped() {
    assert_eq!(lines(b"\n\na\n\r\n \t\nb\n\n", BIG), ok(&["a", "b"]));
    assert_eq!(lines(b"\n\n\n", BIG), ok(&[]));
    assert_eq!(lines(b"", BIG), ok(&[]));
}

#[test]
fn bom_is_stripped_at_stream_start_only() {
    assert_eq!(
        lines(b"\xEF\xBB\xBFa\n\xEF\xBB\xBFb\n", BIG),
        ok_bytes(&[b"a", b"\xEF\xBB\xBFb"])
    );
    // A BOM alone on the first line leaves a blank line.
    assert_eq!(lines(b"\xEF\xBB\xBF\na\n", BIG), ok(&["a"]));
    // A partial BOM is data.
    assert_eq!(lines(b"\xEF\xBBa\n", BIG), ok_bytes(&[b"\xEF\xBBa"]));
    assert_eq!(lines(b"\xEF\xBB", BIG), ok_bytes(&[b"\xEF\xBB"]));
    assert_eq!(lines(b"\xEF", BIG), ok_bytes(&[b"\xEF"]));
}

fn ok_bytes(lines: &[&[u8]]) -> Lines {
    lines.iter().map(|l| Ok(l.to_vec())).collect()
}

#[test]
fn last_line_without_newline_is_handed_out_at_finish() {
    assert_eq!(lines(b"a\nb", BIG), ok(&["a", "b"]));
    assert_eq!(lines(b"a\nb\r", BIG), ok(&["a", "b"]));
}

#[test]
fn overlong_line_is_a_typed_error_and_the_stream_resyncs() {
    let out = lines(b"ok\n0123456789ABCDEF\nafter\n", 8);
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(out[0], Ok(b"ok".to_vec()));
    assert!(matches!(
        out[1],
        Err(FrameError::LineTooLong { limit: 8, .. })
    ));
    assert_eq!(out[2], Ok(b"after".to_vec()));
    // A line of exactly the cap passes, with LF or CRLF.
    assert_eq!(
        lines(b"12345678\n12345678\r\nx\n", 8),
        ok(&["12345678", "12345678", "x"])
    );
    // One byte more does not.
    let out = lines(b"123456789\nx\n", 8);
    assert!(matches!(out[0], Err(FrameError::LineTooLong { .. })));
    assert_eq!(out[1..], ok(&["x"])[..]);
    // An overlong final line without a newline.
    let out = lines(b"x\n123456789012", 8);
    assert_eq!(out[0], Ok(b"x".to_vec()));
    assert!(matches!(out[1], Err(FrameError::LineTooLong { .. })));
    assert_eq!(out.len(), 2);
}

#[test]
fn overlong_line_fed_in_small_chunks_is_dropped_without_being_held() {
    let cap = 1024;
    let mut dec = JsonlDecoder::with_max_line(cap);
    let mut errors = 0;
    for _ in 0..10_000 {
        dec.push(&[b'x'; 100]);
        while let Some(item) = dec.next_line() {
            assert!(matches!(item, Err(FrameError::LineTooLong { .. })));
            errors += 1;
        }
        assert!(dec.buffered() <= cap + 2 + 100);
    }
    dec.push(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n");
    let next = dec.next_line().unwrap().unwrap().to_vec();
    assert_eq!(next, br#"{"jsonrpc":"2.0","method":"n"}"#);
    assert_eq!(errors, 1, "the error is reported once per line");
}

#[test]
fn a_1_mib_line_in_7_byte_chunks_is_linear_work() {
    let mut input = vec![b'a'; 1 << 20];
    input.push(b'\n');
    let mut dec = JsonlDecoder::new();
    let mut got = 0;
    for chunk in input.chunks(7) {
        dec.push(chunk);
        while let Some(line) = dec.next_line() {
            assert_eq!(line.unwrap().len(), 1 << 20);
            got += 1;
        }
    }
    assert_eq!(got, 1);
    let w = dec.work();
    let n = input.len() as u64;
    assert_eq!(w.pushed, n);
    assert!(w.scanned <= n, "scanned {} for {n} bytes", w.scanned);
    assert!(w.copied <= 2 * n, "copied {} for {n} bytes", w.copied);
}

#[test]
fn many_small_lines_in_odd_chunks_are_linear_work() {
    let mut input = Vec::new();
    for i in 0..20_000 {
        input.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{}}}}\n").as_bytes(),
        );
    }
    let mut dec = JsonlDecoder::new();
    let mut got = 0;
    for chunk in input.chunks(1000) {
        dec.push(chunk);
        while let Some(m) = dec.next_message() {
            let Parsed::Single(Message::Response(r)) = m.unwrap() else {
                panic!()
            };
            assert_eq!(r.id, Some(Id::Num(got)));
            got += 1;
        }
    }
    assert_eq!(got, 20_000);
    let w = dec.work();
    let n = input.len() as u64;
    assert!(w.scanned <= n);
    assert!(w.copied <= 2 * n, "copied {} for {n}", w.copied);
}

#[test]
fn non_json_line_is_a_diagnostic_and_the_stream_goes_on() {
    let mut dec = JsonlDecoder::new();
    dec.push(b"Starting server...\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n[1,\n\xff\xfe\n");
    let first = dec.next_message().unwrap();
    match first {
        Err(FrameError::NotAMessage {
            error: ParseError::NotJson(_),
            preview,
        }) => {
            assert_eq!(preview, "Starting server...")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        dec.next_message(),
        Some(Ok(Parsed::Single(Message::Response(_))))
    ));
    assert!(matches!(
        dec.next_message(),
        Some(Err(FrameError::NotAMessage { .. }))
    ));
    assert!(matches!(
        dec.next_message(),
        Some(Err(FrameError::NotAMessage {
            error: ParseError::NotJson(_),
            ..
        }))
    ));
    assert!(dec.next_message().is_none());
}

#[test]
fn encoder_writes_one_line_per_message() {
    let mut out = Vec::new();
    jsonl::encode(&Message::request(1, "ping", None), &mut out);
    jsonl::encode(
        &Message::notification("notifications/initialized", None),
        &mut out,
    );
    assert_eq!(
        out,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
    );
    let mut dec = JsonlDecoder::new();
    dec.push(&out);
    assert!(matches!(
        dec.next_message(),
        Some(Ok(Parsed::Single(Message::Request(_))))
    ));
    assert!(matches!(
        dec.next_message(),
        Some(Ok(Parsed::Single(Message::Notification(_))))
    ));
}

/// (kind, id, method) of a message, for comparing transcripts.
fn signature(m: &Message) -> (&'static str, Option<Id>, Option<String>) {
    match m {
        Message::Request(r) => ("request", Some(r.id.clone()), Some(r.method.to_string())),
        Message::Notification(n) => ("notification", None, Some(n.method.clone())),
        Message::Response(r) => (
            if r.outcome.is_ok() { "result" } else { "error" },
            r.id.clone(),
            None,
        ),
    }
}

fn decode_all(input: &[u8], chunk: usize) -> Vec<Message> {
    let mut dec = JsonlDecoder::new();
    let mut out = Vec::new();
    for c in input.chunks(chunk.max(1)) {
        dec.push(c);
        while let Some(m) = dec.next_message() {
            match m.expect("every captured line is a message") {
                Parsed::Single(m) => out.push(m),
                Parsed::Batch(_) => panic!("no batches in the captures"),
            }
        }
    }
    dec.finish();
    while let Some(m) = dec.next_message() {
        let Parsed::Single(m) = m.unwrap() else {
            panic!()
        };
        out.push(m);
    }
    out
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/stdio/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn server_everything_stdout_capture_decodes_to_the_expected_messages() {
    let input = fixture("everything-stdio-tssdk-client-s2c.jsonl");
    let p = |s: &str| Some(s.to_string());
    let n = |s: &str| ("notification", None, p(s));
    let mut expected = vec![("result", Some(Id::Num(0)), None)];
    expected.extend(std::iter::repeat_n(
        n("notifications/tools/list_changed"),
        4,
    ));
    expected.push(("request", Some(Id::Num(0)), p("roots/list")));
    expected.push(n("notifications/message"));
    expected.extend(std::iter::repeat_n(n("notifications/progress"), 6));
    expected.push(("result", Some(Id::Num(2)), None));
    expected.extend(std::iter::repeat_n(n("notifications/progress"), 5));
    expected.push(("request", Some(Id::Num(1)), p("elicitation/create")));
    expected.push(("result", Some(Id::Num(5)), None));
    expected.extend(std::iter::repeat_n(n("notifications/progress"), 3));
    for chunk in [usize::MAX, 1, 7, 4096] {
        let got: Vec<_> = decode_all(&input, chunk).iter().map(signature).collect();
        assert_eq!(got, expected, "chunk {chunk}");
    }
}

#[test]
fn ts_sdk_client_stdin_capture_decodes_to_the_expected_messages() {
    let input = fixture("everything-stdio-tssdk-client-c2s.jsonl");
    let got: Vec<_> = decode_all(&input, 7).iter().map(signature).collect();
    let r = |id: i64, m: &str| ("request", Some(Id::Num(id)), Some(m.to_string()));
    let n = |m: &str| ("notification", None, Some(m.to_string()));
    assert_eq!(
        got,
        vec![
            r(0, "initialize"),
            n("notifications/initialized"),
            r(1, "tools/call"),
            ("result", Some(Id::Num(0)), None),
            n("notifications/cancelled"),
            r(2, "tools/call"),
            r(3, "tools/call"),
            r(4, "tools/call"),
            n("notifications/cancelled"),
            n("notifications/cancelled"),
            r(5, "tools/call"),
            ("result", Some(Id::Num(1)), None),
        ]
    );
    // The cancellation's params stay raw and read back typed on demand.
    let msgs = decode_all(&input, usize::MAX);
    let Message::Notification(c) = &msgs[4] else {
        panic!()
    };
    let v: serde_json::Value = c.params_as().unwrap();
    assert_eq!(v["requestId"], 1);
}

fn decode_lenient(input: &[u8], chunk: usize) -> Vec<Result<Parsed<Message>, FrameError>> {
    let mut dec = JsonlDecoder::new();
    let mut out = Vec::new();
    for c in input.chunks(chunk.max(1)) {
        dec.push(c);
        while let Some(m) = dec.next_message() {
            out.push(m);
        }
    }
    dec.finish();
    while let Some(m) = dec.next_message() {
        out.push(m);
    }
    out
}

/// The server's side (`<<` lines) of a timestamped transcript, as a JSONL stream.
fn server_side(transcript: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(transcript.to_vec()).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some((_, json)) = line.split_once(" << ") {
            out.extend_from_slice(json.as_bytes());
            out.push(b'\n');
        }
    }
    out
}

#[test]
fn python_and_everything_transcripts_decode_with_crlf_and_bom() {
    for (name, expected_count) in [
        ("py-stdio-2025-11-25-transcript.txt", (7, 1)),
        ("py-stdio-2026-07-28-transcript.txt", (4, 2)),
        ("everything-stdio-transcript.txt", (19, 5)),
    ] {
        let lf = server_side(&fixture(name));
        // The same stream with a BOM and CRLF line endings decodes to the same messages.
        let mut crlf = b"\xEF\xBB\xBF".to_vec();
        for b in &lf {
            if *b == b'\n' {
                crlf.push(b'\r');
            }
            crlf.push(*b);
        }
        let a = decode_lenient(&lf, usize::MAX);
        let messages = a.iter().filter(|m| m.is_ok()).count();
        // The transcripts cut long lines short: those are diagnostics, not failures.
        let cut = a
            .iter()
            .filter(|m| {
                matches!(
                    m,
                    Err(FrameError::NotAMessage {
                        error: ParseError::NotJson(_),
                        ..
                    })
                )
            })
            .count();
        assert_eq!((messages, cut), expected_count, "{name}");
        for chunk in [1, 3, 1460] {
            assert_eq!(decode_lenient(&crlf, chunk), a, "{name} chunk {chunk}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_splits_give_identical_lines(
        lines_in in proptest::collection::vec(
            proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'\r'), Just(b' '), Just(0xEF), Just(0xBB), Just(0xBF), Just(b'{')], 0..40),
            0..12),
        endings in proptest::collection::vec(prop_oneof![Just(&b"\n"[..]), Just(&b"\r\n"[..])], 12),
        bom in any::<bool>(),
        cap in 4usize..48,
        cuts in proptest::collection::vec(0usize..600, 0..20),
    ) {
        let mut input = Vec::new();
        if bom { input.extend_from_slice(b"\xEF\xBB\xBF"); }
        for (l, e) in lines_in.iter().zip(endings.iter()) {
            input.extend_from_slice(l);
            input.extend_from_slice(e);
        }
        let mut cuts = cuts;
        cuts.sort_unstable();
        let whole = lines_with(&input, cap, &[]);
        prop_assert_eq!(lines_with(&input, cap, &cuts), whole);
    }
}

#[test]
fn an_overlong_line_reads_the_same_id_however_its_bytes_came() {
    // Its id lies past the cap: fed whole or a byte at a time, the line over the cap is judged
    // by the same first bytes (the fuzz target found the two disagreeing).
    let mut input = b"\x00{\"x\":\"".to_vec();
    input.extend_from_slice(&[b'a'; 64]);
    input.extend_from_slice(b"\",\"id\":1}\n");
    let out = lines(&input, 16);
    assert!(
        matches!(out[0], Err(FrameError::LineTooLong { id: None, .. })),
        "{out:?}"
    );
    // A number cut off where the look ends is not read as a shorter one.
    assert_eq!(mcpwire_core::jsonrpc::sniff_id(b"{\"id\":12"), None);
    assert_eq!(
        mcpwire_core::jsonrpc::sniff_id(b"{\"id\":12,"),
        Some(mcpwire_core::jsonrpc::Id::Num(12))
    );
}

#[test]
fn an_overlong_request_of_the_peer_is_told_apart_from_an_answer() {
    let mut request =
        b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sampling/createMessage\",\"params\":{\"x\":\""
            .to_vec();
    request.extend_from_slice(&[b'a'; 200]);
    request.extend_from_slice(b"\"}}\n");
    let out = lines(&request, 128);
    assert!(
        matches!(out[0], Err(FrameError::LineTooLong { method: true, .. })),
        "{out:?}"
    );
    let mut answer = b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"x\":\"".to_vec();
    answer.extend_from_slice(&[b'a'; 200]);
    answer.extend_from_slice(b"\"}}\n");
    let out = lines(&answer, 128);
    assert!(
        matches!(
            out[0],
            Err(FrameError::LineTooLong {
                method: false,
                id: Some(_),
                ..
            })
        ),
        "{out:?}"
    );
}
