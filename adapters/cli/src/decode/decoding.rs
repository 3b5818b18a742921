//! One captured body decoded as the client decodes it: by its content type, SSE events and
//! JSON-RPC messages in order, again with other byte splits and line endings, and how those
//! decodings differ.

use mcpwire_core::codec::sse::{McpSseDecoder, SseDecoder, SseDiagnostic, SseError, SseItem};
use mcpwire_core::jsonrpc::{self, Id, Message, ParseError, Parsed, Response};
use serde_json::{json, Value};

use crate::exit_codes;
use crate::failure::Failure;

/// How the body is framed, from its content type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Sse,
    Json,
}

impl Format {
    /// Matches the media type (before any parameter), case-insensitively.
    pub(super) fn of(content_type: &str) -> Result<Self, Failure> {
        let media = content_type.split(';').next().unwrap_or("").trim();
        if media.eq_ignore_ascii_case("text/event-stream") {
            Ok(Format::Sse)
        } else if media.eq_ignore_ascii_case("application/json") {
            Ok(Format::Json)
        } else {
            Err(Failure::new(
                exit_codes::USAGE,
                format!(
                    "decode: unsupported content type {content_type:?}: a response body is \
                     text/event-stream or application/json"
                ),
            ))
        }
    }
}

/// The request whose response is looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Wanted {
    /// No `--request-id`: any response will do.
    Any,
    /// An integer id: matches a number, or a string holding the same canonical integer.
    Int(i64),
    /// Any other id: matches a string id equal to it.
    Str(String),
}

impl Wanted {
    pub(super) fn parse(given: Option<&str>) -> Self {
        match given {
            None => Wanted::Any,
            Some(s) => match s.parse::<i64>() {
                // Only the canonical spelling is a number: `007` stays the string "007".
                Ok(n) if n.to_string() == s => Wanted::Int(n),
                _ => Wanted::Str(s.to_owned()),
            },
        }
    }

    pub(super) fn matches(&self, response: &Response) -> bool {
        match self {
            Wanted::Any => true,
            Wanted::Int(n) => response.id.as_ref().and_then(Id::as_i64) == Some(*n),
            Wanted::Str(s) => matches!(&response.id, Some(Id::Str(id)) if id == s),
        }
    }

    pub(super) fn label(&self) -> String {
        match self {
            Wanted::Any => "any".to_owned(),
            Wanted::Int(n) => n.to_string(),
            Wanted::Str(s) => format!("{s:?}"),
        }
    }

    pub(super) fn to_json(&self) -> Value {
        match self {
            Wanted::Any => Value::Null,
            Wanted::Int(n) => json!(n),
            Wanted::Str(s) => json!(s),
        }
    }
}

/// One thing the body yielded, in order.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Item {
    /// A dispatched SSE event (priming events included); its messages follow it.
    Event {
        event_type: String,
        /// The last event id as of this event (ids persist across events).
        id: String,
        data: String,
    },
    /// A JSON-RPC message.
    Message(Message),
    /// Something that is not a message.
    Diagnostic(Diag),
}

/// Why part of a body was not a message.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Diag {
    /// The event stream itself: an event over the cap, or the body ended inside an event.
    Stream(SseError),
    /// An event of a type other than `message`.
    EventType(String),
    /// Text that is not a JSON-RPC message (an event's data, a batch element or a JSON body),
    /// with the text it came from.
    NotAMessage { error: ParseError, text: String },
    /// Anything else the MCP decoder reported.
    Other(String),
}

impl Diag {
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Diag::Stream(SseError::UnfinishedEvent { .. }) => "unfinished-event",
            Diag::Stream(SseError::EventTooLarge { .. }) => "event-too-large",
            Diag::Stream(_) => "stream",
            Diag::EventType(_) => "unexpected-event-type",
            Diag::NotAMessage { .. } => "not-a-message",
            Diag::Other(_) => "other",
        }
    }

    /// Whether it is about the stream rather than one event.
    pub(super) fn is_stream(&self) -> bool {
        matches!(self, Diag::Stream(_))
    }

    pub(super) fn text(&self) -> String {
        match self {
            Diag::Stream(e) => e.to_string(),
            Diag::EventType(t) => format!("event type {t:?} is not a JSON-RPC message"),
            Diag::NotAMessage { error, text } => format!("{error}; text: {}", preview(text, 80)),
            Diag::Other(s) => s.clone(),
        }
    }

    /// What the MCP decoder reports for it (it keeps only a preview of the text).
    fn mcp_key(&self) -> String {
        match self {
            Diag::NotAMessage { error, .. } => format!("not-a-message: {error}"),
            d => format!("{}: {}", d.kind(), d.text()),
        }
    }
}

impl From<SseDiagnostic> for Diag {
    fn from(d: SseDiagnostic) -> Self {
        match d {
            SseDiagnostic::Stream(e) => Diag::Stream(e),
            SseDiagnostic::UnexpectedEventType { event_type, .. } => Diag::EventType(event_type),
            SseDiagnostic::NotAMessage { error, preview } => Diag::NotAMessage {
                error,
                text: preview,
            },
            other => Diag::Other(other.to_string()),
        }
    }
}

/// The start of `text`, at most `max` characters, on one line.
fn preview(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if text.chars().nth(max).is_some() {
        out.push('…');
    }
    out.replace(['\r', '\n'], " ")
}

/// One decoding of a body.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Trace {
    pub(super) items: Vec<Item>,
    pub(super) last_event_id: String,
    pub(super) retry: Option<u64>,
}

/// What `decode` found.
pub(super) struct Report {
    pub(super) trace: Trace,
    /// For a JSON body: whether it was a batch, and of how many elements.
    pub(super) batch: Option<usize>,
    /// How the other splits differ from the whole-body decoding (empty: identical).
    pub(super) split_differences: Vec<String>,
    /// How the other line endings differ (empty: identical).
    pub(super) line_end_differences: Vec<String>,
    /// How many other decodings were compared (0 for a JSON body, parsed whole).
    pub(super) compared: usize,
}

/// Pushes the messages (or diagnostics) one JSON text holds; returns the batch size if a batch.
fn messages_of(text: &[u8], items: &mut Vec<Item>) -> Option<usize> {
    // A body that is not text (gzip, say) is summarised, never dumped.
    let not_a_message = |error| {
        Item::Diagnostic(Diag::NotAMessage {
            error,
            text: crate::output::text_or_size(text).into_owned(),
        })
    };
    match jsonrpc::parse(text) {
        Ok(Parsed::Single(message)) => {
            items.push(Item::Message(message));
            None
        }
        Ok(Parsed::Batch(elements)) => {
            let n = elements.len();
            for element in elements {
                items.push(match element {
                    Ok(message) => Item::Message(message),
                    Err(error) => not_a_message(error),
                });
            }
            Some(n)
        }
        Err(error) => {
            items.push(not_a_message(error));
            None
        }
    }
}

/// Decodes an event stream fed in `chunks`, event by event: what the MCP decoder yields, with
/// the events it came from.
fn sse_trace<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Trace {
    let mut decoder = SseDecoder::new();
    let mut items = Vec::new();
    for chunk in chunks {
        decoder.push(chunk);
        drain_events(&mut decoder, &mut items);
    }
    decoder.finish();
    drain_events(&mut decoder, &mut items);
    Trace {
        items,
        last_event_id: decoder.last_event_id().to_owned(),
        retry: decoder.retry(),
    }
}

fn drain_events(decoder: &mut SseDecoder, items: &mut Vec<Item>) {
    while let Some(next) = decoder.next_event_ref() {
        let event = match next {
            Ok(event) => event,
            Err(error) => {
                items.push(Item::Diagnostic(Diag::Stream(error)));
                continue;
            }
        };
        items.push(Item::Event {
            event_type: event.event_type.to_owned(),
            id: event.last_event_id.to_owned(),
            data: event.data.to_owned(),
        });
        if !event.is_message() {
            items.push(Item::Diagnostic(Diag::EventType(
                event.event_type.to_owned(),
            )));
        } else if !event.data.is_empty() {
            messages_of(event.data.as_bytes(), items);
        }
    }
}

/// What [`McpSseDecoder`], the client's own decoder, yields for `chunks`: messages and
/// diagnostics (as [`Diag::mcp_key`]), then its last event id and retry.
type McpView = (Vec<Result<Message, String>>, String, Option<u64>);

fn mcp_trace<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> McpView {
    let mut decoder = McpSseDecoder::new();
    let mut out = Vec::new();
    let mut drain = |decoder: &mut McpSseDecoder| {
        while let Some(item) = decoder.next_item() {
            out.push(match item {
                SseItem::Message(m) => Ok(m),
                SseItem::Diagnostic(d) => Err(Diag::from(d).mcp_key()),
                other => Err(format!("other: {other:?}")),
            });
        }
    };
    for chunk in chunks {
        decoder.push(chunk);
        drain(&mut decoder);
    }
    decoder.finish();
    drain(&mut decoder);
    let last = decoder.last_event_id().to_owned();
    let retry = decoder.retry();
    (out, last, retry)
}

/// The MCP decoder's view of a trace.
fn mcp_view(trace: &Trace) -> McpView {
    let items = trace
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Event { .. } => None,
            Item::Message(m) => Some(Ok(m.clone())),
            Item::Diagnostic(d) => Some(Err(d.mcp_key())),
        })
        .collect();
    (items, trace.last_event_id.clone(), trace.retry)
}

/// How a body is cut into chunks.
#[derive(Debug, Clone, Copy)]
enum Split {
    Whole,
    Every(usize),
    Random(u64),
}

/// Rounds of pseudo-random splits.
const RANDOM_ROUNDS: u64 = 8;

impl Split {
    fn name(self) -> String {
        match self {
            Split::Whole => "whole".to_owned(),
            Split::Every(n) => format!("{n}-byte"),
            Split::Random(round) => format!("random #{}", round + 1),
        }
    }

    fn chunks(self, body: &[u8]) -> Vec<&[u8]> {
        match self {
            Split::Whole => vec![body],
            Split::Every(n) => body.chunks(n).collect(),
            Split::Random(round) => {
                // Seeded from the body's length, so a run is repeatable; chunks of 1 up to
                // 2, 4, … 256 bytes as the rounds go on.
                let mut rng =
                    SplitMix64((body.len() as u64) ^ round.wrapping_mul(0xA076_1D64_78BD_642F));
                let max = 2u64 << round.min(16);
                let mut out = Vec::new();
                let mut rest = body;
                while !rest.is_empty() {
                    let n = (1 + rng.next() % max).min(rest.len() as u64) as usize;
                    let (chunk, tail) = rest.split_at(n);
                    out.push(chunk);
                    rest = tail;
                }
                out
            }
        }
    }
}

/// A small deterministic pseudo-random generator (SplitMix64).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `body` with every line end (CRLF, LF or a lone CR) replaced by `end`. Data never holds a CR
/// or LF, so an event stream means the same with any of them.
fn with_line_ends(body: &[u8], end: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + body.len() / 16);
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'\r' => {
                out.extend_from_slice(end);
                i += if body.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
            }
            b'\n' => {
                out.extend_from_slice(end);
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

pub(super) fn decode_sse(body: &[u8]) -> Report {
    let reference = sse_trace([body]);
    let reference_mcp = mcp_view(&reference);
    let mut compared = 0;
    let mut compare = |name: String, bytes: &[u8], split: Split, differences: &mut Vec<String>| {
        let chunks = split.chunks(bytes);
        let trace = sse_trace(chunks.iter().copied());
        if let Some(d) = diff_traces(&reference, &trace) {
            differences.push(format!("{name}: {d}"));
        }
        let mcp = mcp_trace(chunks.iter().copied());
        if let Some(d) = diff_mcp(&reference_mcp, &mcp) {
            differences.push(format!("{name}, MCP decoder: {d}"));
        }
        compared += 1;
    };
    let mut split_differences = Vec::new();
    let splits = [Split::Whole, Split::Every(1), Split::Every(7)]
        .into_iter()
        .chain((0..RANDOM_ROUNDS).map(Split::Random));
    for split in splits {
        compare(split.name(), body, split, &mut split_differences);
    }
    let mut line_end_differences = Vec::new();
    for (name, end) in [("LF", &b"\n"[..]), ("CRLF", b"\r\n"), ("CR", b"\r")] {
        let variant = with_line_ends(body, end);
        if variant == body {
            continue;
        }
        for split in [Split::Whole, Split::Every(1)] {
            let label = format!("{name} line ends, {}", split.name());
            compare(label, &variant, split, &mut line_end_differences);
        }
    }
    Report {
        trace: reference,
        batch: None,
        split_differences,
        line_end_differences,
        compared,
    }
}

pub(super) fn decode_json(body: &[u8]) -> Report {
    let mut items = Vec::new();
    let batch = messages_of(body, &mut items);
    Report {
        trace: Trace {
            items,
            last_event_id: String::new(),
            retry: None,
        },
        batch,
        split_differences: Vec::new(),
        line_end_differences: Vec::new(),
        compared: 0,
    }
}

/// The first difference between two decodings, if any.
fn diff_traces(expected: &Trace, got: &Trace) -> Option<String> {
    if let Some(d) = diff_items(&expected.items, &got.items, describe_item) {
        return Some(d);
    }
    diff_state(
        (&expected.last_event_id, expected.retry),
        (&got.last_event_id, got.retry),
    )
}

fn diff_mcp(expected: &McpView, got: &McpView) -> Option<String> {
    let describe = |item: &Result<Message, String>| match item {
        Ok(m) => describe_message(m),
        Err(d) => format!("diagnostic {d}"),
    };
    if let Some(d) = diff_items(&expected.0, &got.0, describe) {
        return Some(d);
    }
    diff_state((&expected.1, expected.2), (&got.1, got.2))
}

fn diff_items<T: PartialEq>(
    expected: &[T],
    got: &[T],
    describe: impl Fn(&T) -> String,
) -> Option<String> {
    for (i, (a, b)) in expected.iter().zip(got).enumerate() {
        if a != b {
            return Some(format!(
                "item {}: {} instead of {}",
                i + 1,
                describe(b),
                describe(a)
            ));
        }
    }
    (expected.len() != got.len())
        .then(|| format!("{} items instead of {}", got.len(), expected.len()))
}

fn diff_state(expected: (&str, Option<u64>), got: (&str, Option<u64>)) -> Option<String> {
    if expected.0 != got.0 {
        return Some(format!(
            "last event id {:?} instead of {:?}",
            got.0, expected.0
        ));
    }
    (expected.1 != got.1).then(|| format!("retry {:?} instead of {:?}", got.1, expected.1))
}

fn describe_item(item: &Item) -> String {
    match item {
        Item::Event {
            event_type,
            id,
            data,
        } => format!(
            "event type={event_type} id={} data={} bytes",
            show_id(id),
            data.len()
        ),
        Item::Message(m) => describe_message(m),
        Item::Diagnostic(d) => format!("diagnostic {}: {}", d.kind(), d.text()),
    }
}

/// A message in one line: its kind, id and method.
pub(super) fn describe_message(m: &Message) -> String {
    match m {
        Message::Request(r) => format!("request id={} method={}", r.id, r.method),
        Message::Notification(n) => format!("notification method={}", n.method),
        Message::Response(r) => format!("response id={}", show_response_id(r)),
    }
}

/// An event's id as shown: `(none)` when it has none.
pub(super) fn show_id(id: &str) -> String {
    if id.is_empty() {
        "(none)".to_owned()
    } else {
        id.to_owned()
    }
}

/// A response's id as shown: `null` when it has none.
pub(super) fn show_response_id(r: &Response) -> String {
    r.id.as_ref()
        .map(ToString::to_string)
        .unwrap_or_else(|| "null".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_type_decides_case_insensitively() {
        assert_eq!(
            Format::of("Text/Event-Stream; charset=utf-8").ok(),
            Some(Format::Sse)
        );
        assert_eq!(Format::of(" application/JSON ").ok(), Some(Format::Json));
        assert!(Format::of("text/plain").is_err());
        assert!(Format::of("application/json-seq").is_err());
    }

    #[test]
    fn integer_ids_match_numbers_echoed_as_strings() {
        let response = |id: Id| Response {
            id: Some(id),
            outcome: Err(jsonrpc::ErrorObject::new(-1, "x")),
        };
        let seven = Wanted::parse(Some("7"));
        assert!(seven.matches(&response(Id::Num(7))));
        assert!(seven.matches(&response(Id::Str("7".into()))));
        assert!(!seven.matches(&response(Id::Str("007".into()))));
        let padded = Wanted::parse(Some("007"));
        assert!(padded.matches(&response(Id::Str("007".into()))));
        assert!(!padded.matches(&response(Id::Num(7))));
        let null = Response {
            id: None,
            outcome: Err(jsonrpc::ErrorObject::new(-1, "x")),
        };
        assert!(!seven.matches(&null));
        assert!(Wanted::Any.matches(&null));
    }

    #[test]
    fn splits_cover_the_body_in_order() {
        let body: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let splits = [Split::Whole, Split::Every(1), Split::Every(7)]
            .into_iter()
            .chain((0..RANDOM_ROUNDS).map(Split::Random));
        for split in splits {
            let chunks = split.chunks(&body);
            assert!(chunks.iter().all(|c| !c.is_empty()), "{}", split.name());
            assert_eq!(chunks.concat(), body, "{}", split.name());
        }
        // Deterministic: the same body gives the same cuts.
        assert_eq!(
            Split::Random(3).chunks(&body),
            Split::Random(3).chunks(&body)
        );
    }

    #[test]
    fn differences_are_named() {
        let body = b"id: a\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        let whole = sse_trace([&body[..]]);
        assert_eq!(diff_traces(&whole, &sse_trace(body.chunks(1))), None);
        assert_eq!(diff_mcp(&mcp_view(&whole), &mcp_trace([&body[..]])), None);
        let cut = sse_trace([&body[..body.len() - 1]]);
        let d = diff_traces(&whole, &cut).unwrap_or_default();
        assert!(d.starts_with("item 1: diagnostic unfinished-event"), "{d}");
        let mut other = whole.clone();
        other.retry = Some(5);
        assert_eq!(
            diff_traces(&whole, &other).as_deref(),
            Some("retry Some(5) instead of None")
        );
        let (mut items, id, retry) = mcp_view(&whole);
        items.pop();
        let d = diff_mcp(&mcp_view(&whole), &(items, id, retry));
        assert_eq!(d.as_deref(), Some("0 items instead of 1"));
    }

    #[test]
    fn line_ends_are_rewritten_as_units() {
        assert_eq!(with_line_ends(b"a\r\nb\rc\n\n\r", b"\n"), b"a\nb\nc\n\n\n");
        assert_eq!(with_line_ends(b"a\n\rb", b"\r\n"), b"a\r\n\r\nb");
    }
}
