//! The SSE decoder against vectors written from the WHATWG HTML standard, section "Interpreting an
//! event stream". Every vector is fed whole, byte by byte, at every 2-way split (and every 3-way
//! split when short), and in random splits; all must give the same events, diagnostics and final
//! state. A second check compares the decoder with a literal, whole-input reading of the standard
//! on generated streams.

use mcpwire_core::codec::sse::{SseDecoder, SseError, DEFAULT_MAX_EVENT_SIZE};
use proptest::prelude::*;

/// One thing the decoder handed out: an event (type, data, last event id) or a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Event(String, String, String),
    Error(SseError),
}

/// Everything handed out for one input, and the state at the end.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    items: Vec<Item>,
    last_event_id: String,
    retry: Option<u64>,
}

/// Feeds `input` cut at `cuts` (sorted offsets), draining after every push, borrowing events.
fn run(input: &[u8], cap: usize, cuts: &[usize]) -> Outcome {
    let mut dec = SseDecoder::with_max_event_size(cap);
    let mut items = Vec::new();
    let mut drain = |dec: &mut SseDecoder| {
        while let Some(item) = dec.next_event_ref() {
            match item {
                Ok(ev) => items.push(Item::Event(
                    ev.event_type.to_owned(),
                    ev.data.to_owned(),
                    ev.last_event_id.to_owned(),
                )),
                Err(e) => items.push(Item::Error(e)),
            }
        }
    };
    let mut from = 0;
    for &cut in cuts.iter().chain(Some(&input.len())) {
        let cut = cut.clamp(from, input.len());
        dec.push(&input[from..cut]);
        from = cut;
        drain(&mut dec);
    }
    dec.finish();
    drain(&mut dec);
    assert!(dec.next_event_ref().is_none(), "nothing after the end");
    Outcome {
        items,
        last_event_id: dec.last_event_id().to_owned(),
        retry: dec.retry(),
    }
}

/// The same, through the owned API, with the id read from the decoder's state.
fn run_owned(input: &[u8], cap: usize, chunk: usize) -> Outcome {
    let mut dec = SseDecoder::with_max_event_size(cap);
    let mut items = Vec::new();
    let mut drain = |dec: &mut SseDecoder| {
        while let Some(item) = dec.next_event() {
            match item {
                Ok(ev) => items.push(Item::Event(
                    ev.event_type.into_owned(),
                    ev.data,
                    dec.last_event_id().to_owned(),
                )),
                Err(e) => items.push(Item::Error(e)),
            }
        }
    };
    for piece in input.chunks(chunk.max(1)) {
        dec.push(piece);
        drain(&mut dec);
    }
    dec.finish();
    drain(&mut dec);
    Outcome {
        items,
        last_event_id: dec.last_event_id().to_owned(),
        retry: dec.retry(),
    }
}

/// A vector: input, cap, and what the standard says comes out.
struct V {
    name: &'static str,
    input: Vec<u8>,
    cap: usize,
    expected: Outcome,
}

fn v(name: &'static str, input: impl AsRef<[u8]>) -> V {
    V {
        name,
        input: input.as_ref().to_vec(),
        cap: DEFAULT_MAX_EVENT_SIZE,
        expected: Outcome {
            items: Vec::new(),
            last_event_id: String::new(),
            retry: None,
        },
    }
}

impl V {
    /// An event of type `message` with no id.
    fn m(self, data: &str) -> Self {
        self.e("message", data, "")
    }
    /// An event of type `message` with the given last event id.
    fn mi(self, data: &str, id: &str) -> Self {
        self.e("message", data, id)
    }
    fn e(mut self, event_type: &str, data: &str, id: &str) -> Self {
        self.expected.items.push(Item::Event(
            event_type.to_owned(),
            data.to_owned(),
            id.to_owned(),
        ));
        self
    }
    /// The last event id at the end.
    fn id(mut self, id: &str) -> Self {
        self.expected.last_event_id = id.to_owned();
        self
    }
    fn retry(mut self, ms: u64) -> Self {
        self.expected.retry = Some(ms);
        self
    }
    fn cap(mut self, cap: usize) -> Self {
        self.cap = cap;
        self
    }
    fn too_large(mut self) -> Self {
        let limit = self.cap;
        self.expected
            .items
            .push(Item::Error(SseError::EventTooLarge { limit }));
        self
    }
    fn unfinished(mut self, data_len: usize, unterminated_line: bool) -> Self {
        self.expected
            .items
            .push(Item::Error(SseError::UnfinishedEvent {
                data_len,
                unterminated_line,
            }));
        self
    }
}

const BOM: &str = "\u{FEFF}";
const R: &str = "\u{FFFD}";

fn vectors() -> Vec<V> {
    let r2 = R.repeat(2);
    let r3 = R.repeat(3);
    let r4 = R.repeat(4);
    vec![
        // Fields and values.
        v("data with one space", "data: x\n\n").m("x"),
        v("data without space", "data:x\n\n").m("x"),
        v("data with two spaces keeps one", "data:  x\n\n").m(" x"),
        v("data with trailing spaces kept", "data: x  \n\n").m("x  "),
        v("data without colon is empty data", "data\n\n").m(""),
        v("data colon only is empty data", "data:\n\n").m(""),
        v("data colon space is empty data", "data: \n\n").m(""),
        v("data tab is not stripped", "data:\tx\n\n").m("\tx"),
        v("two data lines join with LF", "data: a\ndata: b\n\n").m("a\nb"),
        v(
            "empty data line in the middle",
            "data: a\ndata\ndata: b\n\n",
        )
        .m("a\n\nb"),
        v("two empty data lines", "data\ndata\n\n").m("\n"),
        v("three empty data lines", "data:\ndata:\ndata:\n\n").m("\n\n"),
        v("data value with colons", "data: a:b: c\n\n").m("a:b: c"),
        v("data value starting with colon", "data::x\n\n").m(":x"),
        v("value is split at the first colon only", "data:: x\n\n").m(": x"),
        v("blank lines between events", "data: a\n\n\n\ndata: b\n\n")
            .m("a")
            .m("b"),
        v("only blank lines", "\n\n\n"),
        v("empty stream", ""),
        v("event type", "event: foo\ndata: x\n\n").e("foo", "x", ""),
        v("event type without space", "event:foo\ndata: x\n\n").e("foo", "x", ""),
        v("event type with two spaces", "event:  sp\ndata: x\n\n").e(" sp", "x", ""),
        v("event without colon means message", "event\ndata: x\n\n").m("x"),
        v("empty event means message", "event: \ndata: x\n\n").m("x"),
        v("last event field wins", "event: a\nevent: b\ndata: x\n\n").e("b", "x", ""),
        v("explicit message type", "event: message\ndata: x\n\n").m("x"),
        v("event after data in block", "data: x\nevent: late\n\n").e("late", "x", ""),
        v(
            "type resets after dispatch",
            "event: a\ndata: x\n\ndata: y\n\n",
        )
        .e("a", "x", "")
        .m("y"),
        v("type resets on an empty block", "event: a\n\ndata: y\n\n").m("y"),
        v(
            "field names are case sensitive",
            "EVENT: a\nData: z\ndata: x\n\n",
        )
        .m("x"),
        v("unknown field Data", "Data: x\n\n"),
        v("space before colon makes another field", "data : x\n\n"),
        v("leading space makes another field", " data: x\n\n"),
        v("longer name is another field", "datadata: x\n\n"),
        v("shorter name is another field", "dat: x\n\n"),
        v("name with NUL is another field", "data\0: x\n\n"),
        v("unknown field ignored", "foo: bar\ndata: x\n\n").m("x"),
        v("unknown field without colon", "foo\ndata: x\n\n").m("x"),
        v(
            "unknown long field without colon",
            "abcdefghij\ndata: x\n\n",
        )
        .m("x"),
        v("only unknown fields dispatch nothing", "foo: bar\n\n"),
        v("data colon in name position", "data:data: x\n\n").m("data: x"),
        // Ids.
        v("id then data", "id: 1\ndata: x\n\n").mi("x", "1").id("1"),
        v("id after data in block", "data: x\nid: 1\n\n")
            .mi("x", "1")
            .id("1"),
        v("id only block sets the id", "id: 1\n\n").id("1"),
        v("id persists across events", "id: 1\ndata: a\n\ndata: b\n\n")
            .mi("a", "1")
            .mi("b", "1")
            .id("1"),
        v(
            "ids change per event",
            "id: 1\ndata: a\n\nid: 2\ndata: b\n\n",
        )
        .mi("a", "1")
        .mi("b", "2")
        .id("2"),
        v(
            "id without colon resets",
            "id: 1\ndata: a\n\nid\ndata: b\n\n",
        )
        .mi("a", "1")
        .m("b"),
        v("id colon resets", "id: 1\ndata: a\n\nid:\ndata: b\n\n")
            .mi("a", "1")
            .m("b"),
        v(
            "id colon space resets",
            "id: 1\ndata: a\n\nid: \ndata: b\n\n",
        )
        .mi("a", "1")
        .m("b"),
        v("id with NUL ignored", "id: a\0b\ndata: x\n\n").m("x"),
        v(
            "id with NUL keeps the previous",
            "id: 1\n\nid: 2\0\ndata: x\n\n",
        )
        .mi("x", "1")
        .id("1"),
        v("id with only NUL ignored", "id: 1\nid: \0\ndata: x\n\n")
            .mi("x", "1")
            .id("1"),
        v("last id field wins", "id: 1\nid: 2\ndata: x\n\n")
            .mi("x", "2")
            .id("2"),
        v("id keeps a second space", "id:  1\ndata: x\n\n")
            .mi("x", " 1")
            .id(" 1"),
        v("id with colon", "id: a:b\ndata: x\n\n")
            .mi("x", "a:b")
            .id("a:b"),
        v("id in unfinished block is not kept", "id: 1\ndata: x\n").unfinished(1, false),
        v("id line at the end is not kept", "data: a\n\nid: 5\n")
            .m("a")
            .unfinished(0, false),
        v("id kept then unfinished id", "id: 1\n\nid: 2\n")
            .id("1")
            .unfinished(0, false),
        v(
            "id set by a data-less block reaches the next event",
            "id: 7\n\ndata: x\n\n",
        )
        .mi("x", "7")
        .id("7"),
        v("id in block without data, then reset", "id: 7\n\nid\n\n"),
        v("non-ascii id", "id: \u{e9}\u{20ac}\ndata: x\n\n")
            .mi("x", "\u{e9}\u{20ac}")
            .id("\u{e9}\u{20ac}"),
        // Comments.
        v("comment only", ":\n\n"),
        v("comment before data", ": comment\ndata: x\n\n").m("x"),
        v("comment inside block", "data: a\n: c\ndata: b\n\n").m("a\nb"),
        v("comment looking like data", ":data: x\n\n"),
        v("only comments, no blank line", ": one\n: two\n"),
        v("unterminated comment at the end", ": partial"),
        v("comment between events", "data: a\n\n: ping\n\ndata: b\n\n")
            .m("a")
            .m("b"),
        v("comment with CR", ": c\rdata: x\r\r").m("x"),
        // Retry.
        v("retry digits", "retry: 1000\n\n").retry(1000),
        v("retry in an unfinished block takes effect", "retry: 1000\n")
            .retry(1000)
            .unfinished(0, false),
        v("retry with letters ignored", "retry: abc\n\n"),
        v("retry with trailing letter ignored", "retry: 10a\n\n"),
        v("empty retry ignored", "retry: \n\n"),
        v("retry without colon ignored", "retry\n\n"),
        v("invalid retry keeps the previous", "retry: 1\nretry: x\n\n").retry(1),
        v("retry max u64", "retry: 18446744073709551615\n\n").retry(u64::MAX),
        v("retry overflow ignored", "retry: 18446744073709551616\n\n"),
        v(
            "retry overflow keeps the previous",
            "retry: 5\nretry: 99999999999999999999999\n\n",
        )
        .retry(5),
        v("retry leading zeros", "retry: 007\n\n").retry(7),
        v(
            "retry many leading zeros",
            "retry: 000000000000000000000000042\n\n",
        )
        .retry(42),
        v("retry with second space ignored", "retry:  5\n\n"),
        v("retry negative ignored", "retry: -5\n\n"),
        v("retry plus ignored", "retry: +5\n\n"),
        v("retry trailing space ignored", "retry: 5 \n\n"),
        v("retry decimal ignored", "retry: 1.5\n\n"),
        v("retry fullwidth digit ignored", "retry: \u{FF15}\n\n"),
        v("retry zero", "retry: 0\n\n").retry(0),
        v("retry with an event", "retry: 3\ndata: x\n\n")
            .m("x")
            .retry(3),
        v("retry line cut by the end is not read", "retry: 10").unfinished(0, true),
        v(
            "retry in a block after an event",
            "data: a\n\nretry: 9\nretry: 8\n\n",
        )
        .m("a")
        .retry(8),
        // Byte order mark.
        v("bom at start stripped", "\u{FEFF}data: x\n\n").m("x"),
        v(
            "bom twice: the second is data",
            "\u{FEFF}\u{FEFF}data: x\n\n",
        ),
        v(
            "bom after a blank line is data",
            "\u{FEFF}\n\u{FEFF}data: x\n\n",
        ),
        v("bom in a value is data", "data: \u{FEFF}x\n\n").m(&format!("{BOM}x")),
        v("bom alone", "\u{FEFF}"),
        v("bom before comment", "\u{FEFF}:c\ndata: y\n\n").m("y"),
        v("bom then blank line", "\u{FEFF}\n\ndata: y\n\n").m("y"),
        v("bom twice then nothing", "\u{FEFF}\u{FEFF}").unfinished(0, true),
        v(
            "bom prefix two bytes then data",
            b"\xEF\xBBdata: x\n\n".as_slice(),
        ),
        v(
            "bom prefix one byte then data",
            b"\xEFdata: x\n\n".as_slice(),
        ),
        v("bom prefix alone at the end", b"\xEF\xBB".as_slice()).unfinished(0, true),
        v(
            "bom prefix then newline",
            b"\xEF\xBB\n\ndata: x\n\n".as_slice(),
        )
        .m("x"),
        v("bom then bom prefix", b"\xEF\xBB\xBF\xEF\xBB".as_slice()).unfinished(0, true),
        // Line ends.
        v("CRLF", "data: x\r\n\r\n").m("x"),
        v("lone CR", "data: x\r\r").m("x"),
        v("CRLF then LF", "data: x\r\n\n").m("x"),
        v("LF then CRLF", "data: x\n\r\n").m("x"),
        v("CR lines joined", "data: a\rdata: b\r\r").m("a\nb"),
        v("mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n").m("a\nb\nc"),
        v("lone CR as the final byte dispatches", "data: x\r\n\r").m("x"),
        v("LF then lone CR as the final byte", "data: x\n\r").m("x"),
        v("CR at the end ends the line only", "data: x\r").unfinished(1, false),
        v("CR then CRLF is two line ends", "data: x\r\r\n").m("x"),
        v("CR CR LF LF", "data: x\r\r\n\n").m("x"),
        v("leading CRLF blank lines", "\r\n\r\ndata: x\r\n\r\n").m("x"),
        v("LF then CR is a blank line", "data: a\n\rdata: b\n\n")
            .m("a")
            .m("b"),
        v("CR splits a value", "data: a\rb\n\n").m("a"),
        v("empty data with CR", "data:\r\r").m(""),
        v("lone CR stream", "\r"),
        v("CR LF CR LF only", "\r\n\r\n"),
        v("LF CR LF", "data: x\n\r\n\ndata: y\n\n").m("x").m("y"),
        // UTF-8.
        v("lone continuation byte", b"data: \x80\n\n".as_slice()).m(R),
        v("truncated two-byte sequence", b"data: \xC3\n\n".as_slice()).m(R),
        v(
            "truncated three-byte sequence",
            b"data: \xE2\x82\n\n".as_slice(),
        )
        .m(R),
        v(
            "truncated four-byte sequence",
            b"data: \xF0\x9F\x98\n\n".as_slice(),
        )
        .m(R),
        v(
            "valid three-byte sequence",
            b"data: \xE2\x82\xAC\n\n".as_slice(),
        )
        .m("\u{20AC}"),
        v(
            "valid four-byte sequence",
            b"data: \xF0\x9F\x98\x80\n\n".as_slice(),
        )
        .m("\u{1F600}"),
        v("overlong two-byte", b"data: \xC0\xAF\n\n".as_slice()).m(&r2),
        v("overlong three-byte", b"data: \xE0\x80\xAF\n\n".as_slice()).m(&r3),
        v(
            "overlong four-byte",
            b"data: \xF0\x80\x80\xAF\n\n".as_slice(),
        )
        .m(&r4),
        v("encoded surrogate", b"data: \xED\xA0\x80\n\n".as_slice()).m(&r3),
        v(
            "encoded low surrogate",
            b"data: \xED\xBF\xBF\n\n".as_slice(),
        )
        .m(&r3),
        v("above U+10FFFF", b"data: \xF4\x90\x80\x80\n\n".as_slice()).m(&r4),
        v("FF and FE", b"data: \xFF\xFE\n\n".as_slice()).m(&r2),
        v("F5 lead byte", b"data: \xF5\x80\n\n".as_slice()).m(&r2),
        v(
            "truncated sequence between letters",
            b"data: a\xF0\x9F\x98b\n\n".as_slice(),
        )
        .m(&format!("a{R}b")),
        v(
            "truncated sequence before CR",
            b"data: \xE2\x82\rx\n\n".as_slice(),
        )
        .m(R),
        v(
            "valid prefix of three-byte",
            b"data: \xE1\x80\n\n".as_slice(),
        )
        .m(R),
        v(
            "truncated sequence at the end",
            b"data: \xF0\x9F\x98".as_slice(),
        )
        .unfinished(0, true),
        v(
            "invalid id bytes replaced",
            b"id: \x80\ndata: x\n\n".as_slice(),
        )
        .mi("x", R)
        .id(R),
        v("non-ascii event type", "event: \u{20AC}\ndata: x\n\n").e("\u{20AC}", "x", ""),
        v("non-ascii field name ignored", "d\u{e1}ta: x\n\n"),
        v("invalid byte in field name", b"d\x80ta: x\n\n".as_slice()),
        v(
            "mixed valid and invalid",
            b"data: \xC3\xA9\x80\xC3\xA9\n\n".as_slice(),
        )
        .m(&format!("\u{e9}{R}\u{e9}")),
        // MCP shapes.
        v(
            "priming event is dispatched with empty data",
            "id: abc\ndata: \n\n",
        )
        .mi("", "abc")
        .id("abc"),
        v(
            "python priming event with retry",
            "id: ev-3\r\ndata: \r\nretry: 300\r\n\r\n",
        )
        .mi("", "ev-3")
        .id("ev-3")
        .retry(300),
        v(
            "priming then message",
            "id: 1\ndata: \n\nevent: message\nid: 2\ndata: {\"a\":1}\n\n",
        )
        .mi("", "1")
        .mi("{\"a\":1}", "2")
        .id("2"),
        v(
            "json over two data lines",
            "event: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n",
        )
        .m("{\"a\":\n1}"),
        v("endpoint event", "event: endpoint\ndata: /messages?s=1\n\n").e(
            "endpoint",
            "/messages?s=1",
            "",
        ),
        // Unfinished events.
        v("unfinished data", "data: x\n").unfinished(1, false),
        v("unfinished data line", "data: x").unfinished(0, true),
        v("unfinished two lines", "data: ab\ndata: c\n").unfinished(4, false),
        v("unfinished after an event", "data: a\n\ndata: b")
            .m("a")
            .unfinished(0, true),
        v("unfinished event field only", "event: e\n").unfinished(0, false),
        v("unfinished unknown field", "foo: bar").unfinished(0, true),
        v("unfinished short line", "da").unfinished(0, true),
        v("unfinished with comment after data", "data: x\n: c\n").unfinished(1, false),
        v("unfinished line after data", "data: x\ndata: y").unfinished(1, true),
        // The cap.
        v("line exactly at the cap", "data: 0123456789\n\n")
            .cap(16)
            .m("0123456789"),
        v("line one over the cap", "data: 0123456789\n\n")
            .cap(15)
            .too_large(),
        v(
            "recovery after an event too large",
            "data: 0123456789\n\ndata: ok\n\n",
        )
        .cap(15)
        .too_large()
        .m("ok"),
        v(
            "data accumulated past the cap",
            "data: 0123456789\ndata: 0123456789\n\ndata: y\n\n",
        )
        .cap(20)
        .too_large()
        .m("y"),
        v(
            "id and retry still read after the cap",
            "id: 1\ndata: 0123456789abcdefghij\nid: 2\nretry: 4\n\ndata: y\n\n",
        )
        .cap(20)
        .too_large()
        .mi("y", "2")
        .id("2")
        .retry(4),
        v(
            "a long comment never counts",
            ": this comment is longer than the cap\ndata: y\n\n",
        )
        .cap(8)
        .m("y"),
        v(
            "a long unknown field never counts",
            "unknownfield: long long long\ndata: y\n\n",
        )
        .cap(8)
        .m("y"),
        v(
            "reported once per event",
            "data: 0123456789\ndata: more\n\n",
        )
        .cap(10)
        .too_large(),
        v("too large then unfinished", "data: 0123456789\n")
            .cap(10)
            .too_large()
            .unfinished(0, false),
        v("too large line cut by the end", "data: 0123456789")
            .cap(10)
            .too_large()
            .unfinished(0, true),
        v(
            "long event type over the cap",
            "event: 0123456789\ndata: x\n\n",
        )
        .cap(10)
        .too_large(),
        v(
            "type counts with data",
            "event: abcdefgh\ndata: 0123456\n\n",
        )
        .cap(20)
        .too_large(),
        v(
            "retry before the overflow is kept",
            "retry: 5\ndata: 0123456789\n\n",
        )
        .cap(12)
        .too_large()
        .retry(5),
        v(
            "retry after the overflow is read",
            "data: 0123456789\nretry: 7\n\n",
        )
        .cap(12)
        .too_large()
        .retry(7),
        v(
            "two events too large",
            "data: 0123456789\n\ndata: 0123456789\n\n",
        )
        .cap(10)
        .too_large()
        .too_large(),
        v("empty data line at a small cap", "data: \n\n")
            .cap(6)
            .m(""),
        v("zero cap", "data\n\n:\n\n").cap(0).too_large(),
        v("cap with CRLF", "data: 0123456789\r\n\r\ndata: y\r\n\r\n")
            .cap(10)
            .too_large()
            .m("y"),
    ]
}

/// Every cut of `len` into two pieces, and into three when `len` is small.
fn splits(len: usize) -> Vec<Vec<usize>> {
    let mut all: Vec<Vec<usize>> = (0..=len).map(|c| vec![c]).collect();
    if len <= 40 {
        for a in 1..len {
            for b in a + 1..len {
                all.push(vec![a, b]);
            }
        }
    }
    all
}

#[test]
fn there_are_enough_vectors() {
    assert!(vectors().len() >= 100, "{} vectors", vectors().len());
}

#[test]
fn vectors_whole() {
    for vec in vectors() {
        assert_eq!(run(&vec.input, vec.cap, &[]), vec.expected, "{}", vec.name);
    }
}

#[test]
fn vectors_byte_by_byte() {
    for vec in vectors() {
        let cuts: Vec<usize> = (1..vec.input.len()).collect();
        assert_eq!(
            run(&vec.input, vec.cap, &cuts),
            vec.expected,
            "{}",
            vec.name
        );
    }
}

#[test]
fn vectors_at_every_split() {
    for vec in vectors() {
        for cuts in splits(vec.input.len()) {
            assert_eq!(
                run(&vec.input, vec.cap, &cuts),
                vec.expected,
                "{} cut at {cuts:?}",
                vec.name
            );
        }
    }
}

#[test]
fn vectors_through_the_owned_api() {
    for vec in vectors() {
        for chunk in [1, 2, 3, 7, usize::MAX] {
            assert_eq!(
                run_owned(&vec.input, vec.cap, chunk),
                vec.expected,
                "{} in chunks of {chunk}",
                vec.name
            );
        }
    }
}

#[test]
fn event_ids_match_decoder_state_at_dispatch() {
    let mut dec = SseDecoder::new();
    dec.push(b"id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\n");
    let mut seen = Vec::new();
    while let Some(Ok(ev)) = dec.next_event_ref() {
        let id = ev.last_event_id.to_owned();
        seen.push(id);
    }
    assert_eq!(seen, ["1", "2"]);
    // The third id has no blank line yet: the last event id is still the second.
    assert_eq!(dec.last_event_id(), "2");
    dec.push(b"\n");
    assert!(dec.next_event_ref().is_none());
    assert_eq!(dec.last_event_id(), "3");
}

#[test]
fn an_event_ended_by_cr_is_dispatched_before_the_next_byte() {
    let mut dec = SseDecoder::new();
    dec.push(b"data: x\r\r");
    let ev = dec.next_event().expect("dispatched at the CR").unwrap();
    assert_eq!(ev.data, "x");
    // A LF right after belongs to that line end, not a new blank line.
    dec.push(b"\ndata: y\r\n\r\n");
    assert_eq!(dec.next_event().unwrap().unwrap().data, "y");
    assert!(dec.next_event().is_none());
}

#[test]
fn the_bom_is_stripped_when_pushed_one_byte_at_a_time() {
    let mut dec = SseDecoder::new();
    for b in b"\xEF\xBB\xBFdata: x\n\n" {
        dec.push(&[*b]);
    }
    assert_eq!(dec.next_event().unwrap().unwrap().data, "x");
}

#[test]
fn finish_is_idempotent_and_the_end_is_reported_once() {
    let mut dec = SseDecoder::new();
    dec.push(b"data: a\n\ndata: b\n");
    dec.finish();
    dec.finish();
    assert_eq!(dec.next_event().unwrap().unwrap().data, "a");
    assert_eq!(
        dec.next_event(),
        Some(Err(SseError::UnfinishedEvent {
            data_len: 1,
            unterminated_line: false
        }))
    );
    assert_eq!(dec.next_event(), None);
    assert_eq!(dec.next_event(), None);
    assert!(dec.is_finished());
}

#[test]
fn empty_pushes_change_nothing() {
    let mut dec = SseDecoder::new();
    dec.push(b"");
    dec.push(b"\xEF");
    dec.push(b"");
    dec.push(b"\xBB\xBF");
    dec.push(b"");
    dec.push(b"data: x\r");
    dec.push(b"");
    dec.push(b"\r");
    assert_eq!(dec.next_event().unwrap().unwrap().data, "x");
}

// ----- Random splits -------------------------------------------------------------------------

fn cuts_from(len: usize, sizes: &[usize]) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut at = 0;
    for &s in sizes {
        at += s;
        if at >= len {
            break;
        }
        cuts.push(at);
    }
    cuts
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn vectors_in_random_splits(index in 0usize..1000, sizes in prop::collection::vec(1usize..9, 0..48)) {
        let all = vectors();
        let vec = &all[index % all.len()];
        let cuts = cuts_from(vec.input.len(), &sizes);
        prop_assert_eq!(run(&vec.input, vec.cap, &cuts), vec.expected.clone(), "{}", vec.name);
    }
}

// ----- A literal reading of the standard, whole input at once ------------------------------------

/// The standard's steps applied to the whole stream: decode (one leading BOM stripped, lossy),
/// cut into lines, process each line, report what the end left unfinished.
fn reference(input: &[u8]) -> Outcome {
    let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    let text = String::from_utf8_lossy(input);
    let mut lines = Vec::new();
    let mut rest: &str = &text;
    while let Some(i) = rest.find(['\r', '\n']) {
        lines.push(&rest[..i]);
        let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
        rest = &rest[i + skip..];
    }
    let tail = rest;

    let (mut data, mut event_type, mut id_buffer) = (String::new(), String::new(), String::new());
    let mut last_event_id = String::new();
    let mut retry = None;
    let mut items = Vec::new();
    let mut in_event = false;
    for line in lines {
        if line.is_empty() {
            in_event = false;
            last_event_id = id_buffer.clone();
            if data.is_empty() {
                event_type.clear();
                continue;
            }
            if data.ends_with('\n') {
                data.pop();
            }
            let t = if event_type.is_empty() {
                "message".to_owned()
            } else {
                event_type.clone()
            };
            items.push(Item::Event(t, data.clone(), last_event_id.clone()));
            data.clear();
            event_type.clear();
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        in_event = true;
        let (field, value) = match line.find(':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (line, ""),
        };
        match field {
            "event" => event_type = value.to_owned(),
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            // "If the field value does not contain U+0000 NULL, then set the last event ID
            // buffer to the field value. Otherwise, ignore the field."
            "id" if !value.contains('\0') => id_buffer = value.to_owned(),
            // "If the field value consists of only ASCII digits, then interpret the field value
            // as an integer in base ten": an empty value or one too large for u64 is ignored.
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse::<u64>() {
                    retry = Some(ms);
                }
            }
            _ => {}
        }
    }
    let unfinished = in_event || (!tail.is_empty() && !tail.starts_with(':'));
    if unfinished {
        items.push(Item::Error(SseError::UnfinishedEvent {
            data_len: data.len().saturating_sub(1),
            unterminated_line: !tail.is_empty(),
        }));
    }
    Outcome {
        items,
        last_event_id,
        retry,
    }
}

/// Pieces streams are made of: field names, separators, line ends, and awkward bytes.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => Just(b"data".to_vec()),
        2 => Just(b"id".to_vec()),
        2 => Just(b"event".to_vec()),
        2 => Just(b"retry".to_vec()),
        4 => Just(b":".to_vec()),
        3 => Just(b" ".to_vec()),
        4 => Just(b"\n".to_vec()),
        3 => Just(b"\r".to_vec()),
        2 => Just(b"\r\n".to_vec()),
        3 => Just(b"x".to_vec()),
        2 => Just(b"42".to_vec()),
        1 => Just(b"\0".to_vec()),
        1 => Just(b"\xEF\xBB\xBF".to_vec()),
        1 => Just(b"\xEF\xBB".to_vec()),
        1 => Just("\u{20AC}".as_bytes().to_vec()),
        1 => Just(b"\xE2\x82".to_vec()),
        1 => Just(b"\xF0\x9F".to_vec()),
        1 => Just(b"\x80".to_vec()),
        1 => any::<u8>().prop_map(|b| vec![b]),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(piece(), 0..40).prop_map(|p| p.concat())
}

#[test]
fn the_reference_agrees_with_the_vectors() {
    for vec in vectors()
        .into_iter()
        .filter(|v| v.cap == DEFAULT_MAX_EVENT_SIZE)
    {
        assert_eq!(reference(&vec.input), vec.expected, "{}", vec.name);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn decoder_matches_the_standard_in_any_split(
        input in stream(),
        sizes in prop::collection::vec(1usize..12, 0..40),
    ) {
        let expected = reference(&input);
        prop_assert_eq!(&run(&input, DEFAULT_MAX_EVENT_SIZE, &[]), &expected);
        let cuts = cuts_from(input.len(), &sizes);
        prop_assert_eq!(&run(&input, DEFAULT_MAX_EVENT_SIZE, &cuts), &expected);
        let bytewise: Vec<usize> = (1..input.len()).collect();
        prop_assert_eq!(&run(&input, DEFAULT_MAX_EVENT_SIZE, &bytewise), &expected);
    }

    #[test]
    fn small_caps_give_the_same_result_in_any_split(
        input in stream(),
        cap in 0usize..40,
        sizes in prop::collection::vec(1usize..12, 0..40),
    ) {
        let whole = run(&input, cap, &[]);
        let cuts = cuts_from(input.len(), &sizes);
        prop_assert_eq!(&run(&input, cap, &cuts), &whole);
        let bytewise: Vec<usize> = (1..input.len()).collect();
        prop_assert_eq!(&run(&input, cap, &bytewise), &whole);
    }
}
