//! The event-stream decoder: bytes in, events out.

use std::mem;

use super::event::{Event, EventRef, SseError, Work, DEFAULT_MAX_EVENT_SIZE, MESSAGE};
use super::line::{line_kind, parse_retry, Field, LineKind};
use super::utf8::Utf8Stream;
use crate::codec::scan;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Where the first CR or LF in `text` is. A blank line (the end of every event) and short text
/// are answered without setting up a vector search.
#[inline]
fn find_line_end(text: &[u8]) -> Option<usize> {
    match text.first() {
        Some(b'\n' | b'\r') => Some(0),
        _ if text.len() <= 32 => find_line_end_short(text),
        _ => memchr::memchr2(b'\n', b'\r', text),
    }
}

/// [`find_line_end`] for a small push (at most [`STAGE_PUSH`] bytes).
#[inline(always)]
fn find_line_end_small(text: &[u8]) -> Option<usize> {
    if text.len() <= 32 {
        find_line_end_short(text)
    } else {
        memchr::memchr2(b'\n', b'\r', text)
    }
}

/// [`find_line_end`] eight bytes at a time, in a `u64`: no branch per byte.
#[inline(always)]
fn find_line_end_short(text: &[u8]) -> Option<usize> {
    let mut words = text.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let mut eight = [0; 8];
        eight.copy_from_slice(word);
        if let Some(i) = line_end_in(u64::from_le_bytes(eight)) {
            return Some(at + i);
        }
        at += 8;
    }
    let rest = words.remainder();
    if rest.is_empty() {
        return None;
    }
    line_end_in(scan::load_le(rest)).map(|i| at + i)
}

/// Copies at most 64 bytes with two fixed-size copies that may overlap, inline, rather than a call
/// to `memcpy` for a few bytes.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    debug_assert!(n <= STAGE_PUSH && dst.len() == n);
    fn two<const K: usize>(dst: &mut [u8], src: &[u8]) {
        let n = src.len();
        dst[..K].copy_from_slice(&src[..K]);
        dst[n - K..].copy_from_slice(&src[n - K..]);
    }
    match n {
        32.. => two::<32>(dst, src),
        16.. => two::<16>(dst, src),
        8.. => two::<8>(dst, src),
        4.. => two::<4>(dst, src),
        2.. => two::<2>(dst, src),
        1 => dst[0] = src[0],
        _ => {}
    }
}

/// The index of the first CR or LF byte in a little-endian word.
#[inline]
fn line_end_in(word: u64) -> Option<usize> {
    scan::first_of_two(word, b'\n', b'\r')
}

/// Decodes `bytes` onto `input`, where `line_end` is the first CR or LF in `bytes`, if any. When
/// all of `input` had been searched for a line end, the text of `bytes` before that line end (or
/// all of it) counts as searched too: UTF-8 decoding never makes a CR or LF out of other bytes.
#[inline]
fn decode_searched(
    utf8: &mut Utf8Stream,
    input: &mut String,
    scan: &mut usize,
    copied: &mut u64,
    bytes: &[u8],
    line_end: Option<usize>,
) {
    let before = input.len();
    let searched = *scan == before;
    utf8.decode(bytes, input);
    *copied += (input.len() - before) as u64;
    if searched {
        match line_end {
            None => *scan = input.len(),
            // Replacement characters and a character completed from the previous push only
            // lengthen the text before the line end: if it is not at the same offset, the search
            // starts over from the first byte of `bytes`.
            Some(i) => {
                if matches!(input.as_bytes().get(before + i), Some(b'\n' | b'\r')) {
                    *scan = before + i;
                }
            }
        }
    }
}

/// The raw stage: small pushes without a line end wait here, so that UTF-8 validation runs over
/// many of them at once instead of a few bytes at a time.
const STAGE: usize = 256;

/// Pushes of at most this many bytes may be staged.
const STAGE_PUSH: usize = 64;

/// What one step of decoding produced.
enum Step {
    /// An event is ready in the decoder's buffers.
    Dispatch,
    /// A diagnostic.
    Error(SseError),
}

/// An incremental decoder for `text/event-stream` bodies, exactly per the WHATWG HTML standard's
/// "event stream interpretation".
///
/// Drive it with [`push`](Self::push) for each chunk of the body, draining
/// [`next_event_ref`](Self::next_event_ref) or [`next_event`](Self::next_event) until `None` after
/// each push; at the end of the body call [`finish`](Self::finish) and drain once more. The
/// events, diagnostics and state are the same however the body was split into chunks.
///
/// - UTF-8 is decoded as a stream (a character may span chunks); ill-formed bytes become U+FFFD.
/// - One byte order mark is stripped at the very start of the stream, even when split.
/// - Lines end with CRLF, LF or a lone CR; a CR ending one chunk and the LF starting the next are
///   one line end. A line is complete at its CR: an event it ends is dispatched at once.
/// - `data` lines are joined with LF; `event` sets the type (`message` when absent); `id` sets
///   the last event id unless it contains U+0000, and the id persists across events; `retry`
///   with ASCII digits only sets the reconnection time at once; comments and other fields are
///   ignored. A blank line dispatches the event when its data is not empty (a block with a
///   `data` line of empty value has data: it is dispatched with empty data).
/// - An event not ended by a blank line when the stream ends is not dispatched: it is reported as
///   [`SseError::UnfinishedEvent`].
///
/// Memory is bounded by [`max_event_size`](Self::max_event_size): the data, type and id held for
/// one event plus the line being read may not exceed it. An event that would is reported once as
/// [`SseError::EventTooLarge`] and dropped up to its blank line; comments and unknown fields
/// are never held, however long. Between pushes the decoder holds at most the cap plus five
/// bytes ([`buffered`](Self::buffered)) and a copy of the last event id; while one push is being
/// drained, that push's text is held too.
///
/// Work is linear: each byte is validated once (whole runs, with SIMD) and searched once for a
/// line end, and an event's single `data` line is handed out from the input buffer without a copy.
/// Small pushes (up to 64 bytes) without a line end wait raw in a fixed 256-byte stage, so
/// that they are validated together; they never wait past a line end or the cap.
#[derive(Debug)]
pub struct SseDecoder {
    /// Decoded text not yet consumed: the line being read and lines not yet processed. Also holds
    /// a single data line in place (see `data_in_input`).
    input: String,
    /// Start of the first line not yet processed.
    pos: usize,
    /// How far the line-end search has looked (`pos <= scan <= input.len()`).
    scan: usize,
    utf8: Utf8Stream,
    /// Raw bytes pushed but not decoded yet: `stage[..staged]`. They hold no line end, come after
    /// all of `input`, and were already searched for a line end (`scan` moves past their text when
    /// they are decoded). Staged only while the event plus the line being read, with them, stays
    /// within the cap, so staging never delays a diagnostic.
    stage: [u8; STAGE],
    staged: usize,
    /// `input` has text that `advance` has not looked at since it last ran out of input. When it has none, there is nothing to do until the next push or the finish.
    fresh: bool,
    /// `Some(n)`: the stream has begun with `n` bytes of a byte order mark, no more yet.
    bom_seen: Option<u8>,
    /// The last line ended with CR: a LF right after it belongs to that line end.
    skip_lf: bool,
    /// The rest of the line being read is dropped (a comment, an ignored field, a line too long).
    skip_line: bool,
    /// What the start of the line being read said it is.
    pending_field: Option<Field>,
    finished: bool,
    ended: bool,
    /// The event's data as `data` lines append it (each value then LF), unless it is in place.
    data: String,
    /// The event's data is a single line still in `input`: the data buffer is `input[a..b]`
    /// followed by LF. Moved into `data` before `input` is compacted or when a second line comes.
    data_in_input: Option<(usize, usize)>,
    event_type: String,
    /// The last event id buffer (set by `id` fields).
    id_buffer: String,
    /// The last event id string (the buffer's value at the last blank line).
    last_event_id: String,
    id_changed: bool,
    retry: Option<u64>,
    /// A line other than a comment since the last blank line.
    in_event: bool,
    /// The event grew past the cap: drop its data up to the blank line.
    discarding: bool,
    /// The last call handed out an event still in the buffers: clear them on the next call.
    dispatched: bool,
    /// A cap was crossed: give buffer memory back at the next compaction.
    shrink: bool,
    max_event_size: usize,
    /// Bytes scanned in text since dropped from `input`.
    scanned_before: u64,
    work: Work,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder with the default cap ([`DEFAULT_MAX_EVENT_SIZE`], 16 MiB).
    #[must_use]
    pub fn new() -> Self {
        Self::with_max_event_size(DEFAULT_MAX_EVENT_SIZE)
    }

    /// A decoder whose events (data, type and id held, plus the line being read) may hold at most
    /// `max_event_size` bytes.
    #[must_use]
    pub fn with_max_event_size(max_event_size: usize) -> Self {
        Self {
            input: String::new(),
            pos: 0,
            scan: 0,
            utf8: Utf8Stream::new(),
            stage: [0; STAGE],
            staged: 0,
            fresh: false,
            bom_seen: Some(0),
            skip_lf: false,
            skip_line: false,
            pending_field: None,
            finished: false,
            ended: false,
            data: String::new(),
            data_in_input: None,
            event_type: String::new(),
            id_buffer: String::new(),
            last_event_id: String::new(),
            id_changed: false,
            retry: None,
            in_event: false,
            discarding: false,
            dispatched: false,
            shrink: false,
            max_event_size,
            scanned_before: 0,
            work: Work::default(),
        }
    }

    /// The cap on one event.
    pub fn max_event_size(&self) -> usize {
        self.max_event_size
    }

    /// The last event id: the value of the last `id` field (without U+0000) as of the last blank
    /// line, persisting across events; empty when none was seen. Right after an event is handed
    /// out, it is that event's id. This is what a client sends as `Last-Event-ID` to resume.
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// The reconnection time in milliseconds from the last valid `retry` field, if any. It takes
    /// effect when the field is read, whether or not its event is dispatched.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Whether [`finish`](Self::finish) was called.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The work done so far.
    pub fn work(&self) -> Work {
        Work {
            // Every byte before `scan` was looked at once; compaction moves that count to the base.
            scanned: self.scanned_before + self.scan as u64,
            ..self.work
        }
    }

    /// Bytes held for the event being read and the line being read: what carries over to the
    /// next push once the events are drained. After draining it stays within
    /// [`max_event_size`](Self::max_event_size) plus five bytes (a line too short to sort yet).
    pub fn buffered(&self) -> usize {
        let pending = if self.dispatched { 0 } else { self.held() };
        self.input.len() - self.pos + pending + self.staged
    }

    /// Feeds the next chunk of the body.
    ///
    /// Drain the events after each push: bytes are only stored and decoded here (a small push
    /// without a line end may wait, undecoded, for the next ones), lines are read by
    /// [`next_event_ref`](Self::next_event_ref). Bytes pushed after [`finish`](Self::finish)
    /// are ignored.
    pub fn push(&mut self, bytes: &[u8]) {
        debug_assert!(!self.finished, "SseDecoder::push after finish");
        if bytes.len() <= STAGE_PUSH && !self.finished && self.bom_seen.is_none() {
            let line_end = find_line_end_small(bytes);
            // The common small push, a few bytes inside a line: staged, and that is all.
            if line_end.is_none() && !self.dispatched && self.can_stage(bytes.len()) {
                copy_short(
                    &mut self.stage[self.staged..self.staged + bytes.len()],
                    bytes,
                );
                self.staged += bytes.len();
                self.work.pushed += bytes.len() as u64;
                return;
            }
            self.push_small(bytes, line_end);
        } else {
            self.push_large(bytes);
        }
    }

    /// A push that is not small, or comes before the byte order mark is settled or after the end.
    #[inline(never)]
    fn push_large(&mut self, bytes: &[u8]) {
        if self.finished {
            return;
        }
        self.settle();
        self.work.pushed += bytes.len() as u64;
        self.fresh = true;
        self.flush_stage(None);
        self.compact();
        let before = self.input.len();
        let mut bytes = bytes;
        if let Some(seen) = self.bom_seen {
            let mut n = usize::from(seen);
            let mut i = 0;
            while n < BOM.len() && i < bytes.len() && bytes[i] == BOM[n] {
                n += 1;
                i += 1;
            }
            if n == BOM.len() {
                self.bom_seen = None;
                bytes = &bytes[i..];
            } else if i == bytes.len() {
                // Still a prefix of a byte order mark: wait for the next byte.
                self.bom_seen = Some(n as u8);
                return;
            } else {
                self.bom_seen = None;
                self.utf8.decode(&BOM[..n], &mut self.input);
                bytes = &bytes[i..];
            }
        }
        self.utf8.decode(bytes, &mut self.input);
        self.work.copied += (self.input.len() - before) as u64;
    }

    /// A small push, `line_end` its first CR or LF: staged when it holds no line end and may wait;
    /// otherwise decoded, together with the stage when both fit in it.
    #[inline(never)]
    fn push_small(&mut self, bytes: &[u8], line_end: Option<usize>) {
        self.settle();
        self.work.pushed += bytes.len() as u64;
        if line_end.is_none() {
            if self.staged + bytes.len() > STAGE {
                self.flush_stage(None);
            }
            if self.can_stage(bytes.len()) {
                copy_short(
                    &mut self.stage[self.staged..self.staged + bytes.len()],
                    bytes,
                );
                self.staged += bytes.len();
                return;
            }
        }
        if self.staged + bytes.len() <= STAGE {
            let at = self.staged;
            copy_short(&mut self.stage[at..at + bytes.len()], bytes);
            self.staged += bytes.len();
            self.flush_stage(line_end.map(|i| at + i));
        } else {
            self.flush_stage(None);
            self.fresh = true;
            self.compact();
            decode_searched(
                &mut self.utf8,
                &mut self.input,
                &mut self.scan,
                &mut self.work.copied,
                bytes,
                line_end,
            );
        }
    }

    /// Whether `len` more bytes without a line end may wait in the stage: they fit, everything
    /// before them has been searched, and the event with them stays within the cap.
    #[inline]
    fn can_stage(&self, len: usize) -> bool {
        self.staged + len <= STAGE
            && self.scan == self.input.len()
            && self.buffered() + len <= self.max_event_size
    }

    /// Decodes the staged bytes onto `input`; `line_end` is where the first CR or LF among them
    /// is, if any.
    #[inline]
    fn flush_stage(&mut self, line_end: Option<usize>) {
        if self.staged == 0 {
            return;
        }
        self.fresh = true;
        self.compact();
        let staged = mem::take(&mut self.staged);
        decode_searched(
            &mut self.utf8,
            &mut self.input,
            &mut self.scan,
            &mut self.work.copied,
            &self.stage[..staged],
            line_end,
        );
    }

    /// Marks the end of the body. Events already complete can still be drained; then one
    /// [`SseError::UnfinishedEvent`] if the body ended inside an event; then `None` for good.
    /// A line cut by the end of the body is not processed.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.settle();
        self.flush_stage(None);
        self.fresh = true;
        if let Some(seen) = self.bom_seen.take() {
            self.utf8.decode(&BOM[..usize::from(seen)], &mut self.input);
        }
        self.utf8.finish(&mut self.input);
        self.finished = true;
    }

    /// The next event or diagnostic, borrowed from the decoder's buffers (no allocation), or
    /// `None` when more input is needed (or, after [`finish`](Self::finish), when the stream is
    /// done).
    #[must_use = "an event not taken is lost"]
    #[inline]
    pub fn next_event_ref(&mut self) -> Option<Result<EventRef<'_>, SseError>> {
        // Nothing new since the input last ran out (a push that only staged bytes): answered
        // here, without a call.
        if !self.fresh && !self.finished {
            return None;
        }
        self.take_event()
    }

    fn take_event(&mut self) -> Option<Result<EventRef<'_>, SseError>> {
        match self.advance()? {
            Step::Error(error) => Some(Err(error)),
            Step::Dispatch => {
                let data = match self.data_in_input {
                    Some((a, b)) => &self.input[a..b],
                    // The data buffer ends with the LF of its last line: drop that one.
                    None => &self.data[..self.data.len() - 1],
                };
                let event_type = if self.event_type.is_empty() {
                    MESSAGE
                } else {
                    &self.event_type
                };
                Some(Ok(EventRef {
                    event_type,
                    data,
                    last_event_id: &self.last_event_id,
                }))
            }
        }
    }

    /// The next event or diagnostic, owned (one allocation for the data), or `None` when more
    /// input is needed (or, after [`finish`](Self::finish), when the stream is done).
    #[must_use = "an event not taken is lost"]
    pub fn next_event(&mut self) -> Option<Result<Event, SseError>> {
        self.next_event_ref().map(|r| r.map(|e| e.to_event()))
    }

    /// Clears the buffers of an event handed out by the previous call.
    #[inline]
    fn settle(&mut self) {
        if self.dispatched {
            self.dispatched = false;
            self.data.clear();
            self.data_in_input = None;
            self.event_type.clear();
        }
    }

    /// Drops processed lines from the front of `input`, moving an in-place data line out first;
    /// only when the bytes to move are fewer than those dropped, so that copying stays linear.
    #[inline]
    fn compact(&mut self) {
        let len = self.input.len();
        if !self.shrink && (self.pos == 0 || self.pos < len - self.pos) {
            return;
        }
        self.materialize();
        let len = self.input.len();
        if self.pos == len {
            self.input.clear();
        } else if self.pos > 0 {
            self.input.drain(..self.pos);
            self.work.copied += (len - self.pos) as u64;
        }
        self.scanned_before += self.pos as u64;
        self.scan -= self.pos;
        self.pos = 0;
        if mem::take(&mut self.shrink) {
            self.input.shrink_to(SHRINK_TO);
            self.data.shrink_to(SHRINK_TO);
        }
    }

    /// Moves a data line held in place into the data buffer.
    #[inline]
    fn materialize(&mut self) {
        if let Some((a, b)) = self.data_in_input.take() {
            self.data.push_str(&self.input[a..b]);
            self.data.push('\n');
            self.work.copied += (b - a + 1) as u64;
        }
    }

    /// Bytes of the data buffer (each line with its LF).
    #[inline]
    fn data_len(&self) -> usize {
        match self.data_in_input {
            Some((a, b)) => b - a + 1,
            None => self.data.len(),
        }
    }

    /// Bytes held for the event being read: counted against the cap with the line being read.
    #[inline]
    fn held(&self) -> usize {
        self.data_len() + self.event_type.len() + self.id_buffer.len()
    }

    /// Reads lines until an event is dispatched, a diagnostic is due, or the input runs out.
    fn advance(&mut self) -> Option<Step> {
        self.settle();
        if !self.fresh && !self.finished {
            return None;
        }
        loop {
            let bytes = self.input.as_bytes();
            let len = bytes.len();
            if self.skip_lf {
                if self.pos == len {
                    break;
                }
                self.skip_lf = false;
                if bytes[self.pos] == b'\n' {
                    self.pos += 1;
                    self.scan = self.pos;
                    continue;
                }
            }
            let from = self.scan;
            match find_line_end(&bytes[from..]) {
                Some(i) => {
                    let end = from + i;
                    self.skip_lf = bytes[end] == b'\r';
                    let start = self.pos;
                    self.pos = end + 1;
                    self.scan = self.pos;
                    self.pending_field = None;
                    if mem::take(&mut self.skip_line) {
                        continue;
                    }
                    if let Some(step) = self.line(start, end) {
                        return Some(step);
                    }
                }
                None => {
                    self.scan = len;
                    if let Some(step) = self.partial_line() {
                        return Some(step);
                    }
                    break;
                }
            }
        }
        self.fresh = false;
        if self.finished {
            self.end_of_stream()
        } else {
            None
        }
    }

    /// Processes the complete line `input[start..end]`.
    fn line(&mut self, start: usize, end: usize) -> Option<Step> {
        if start == end {
            return self.blank_line();
        }
        let line = &self.input.as_bytes()[start..end];
        if line[0] != b':' {
            self.in_event = true;
        }
        let (field, value) = match line_kind(line, true) {
            LineKind::Field(field, value) => (field, start + value),
            LineKind::Ignored | LineKind::Undecided => return None,
        };
        if let Some(step) = self.check_size(field, end - start) {
            return step;
        }
        // `value` follows an ASCII colon or space and `end` is at a line end: both on
        // character boundaries.
        match field {
            Field::Data => {
                if self.data_in_input.is_none() && self.data.is_empty() {
                    self.data_in_input = Some((value, end));
                } else {
                    self.materialize();
                    self.data.push_str(&self.input[value..end]);
                    self.data.push('\n');
                    self.work.copied += (end - value + 1) as u64;
                }
            }
            Field::Event => {
                self.event_type.clear();
                self.event_type.push_str(&self.input[value..end]);
            }
            Field::Id => {
                let id = &self.input[value..end];
                if memchr::memchr(0, id.as_bytes()).is_none() {
                    self.id_buffer.clear();
                    self.id_buffer.push_str(id);
                    self.id_changed = true;
                }
            }
            Field::Retry => {
                if let Some(ms) = parse_retry(&self.input.as_bytes()[value..end]) {
                    self.retry = Some(ms);
                }
            }
        }
        None
    }

    /// Applies the cap to a line of a kept field, `len` bytes long so far. `Some(None)`: drop the
    /// line quietly; `Some(Some(step))`: the event just crossed the cap.
    fn check_size(&mut self, field: Field, len: usize) -> Option<Option<Step>> {
        if self.discarding && field == Field::Data {
            return Some(None);
        }
        if self.held().saturating_add(len) <= self.max_event_size {
            return None;
        }
        if self.discarding {
            return Some(None);
        }
        self.discarding = true;
        self.shrink = true;
        self.data.clear();
        self.data_in_input = None;
        Some(Some(Step::Error(SseError::EventTooLarge {
            limit: self.max_event_size,
        })))
    }

    /// Looks at the line being read, not complete yet: drops it when its bytes are not needed,
    /// applies the cap to it otherwise.
    fn partial_line(&mut self) -> Option<Step> {
        let len = self.input.len();
        if self.pos == len {
            return None;
        }
        if !self.skip_line {
            let line = &self.input.as_bytes()[self.pos..len];
            let field = match self.pending_field {
                Some(field) => Some(field),
                None => {
                    if line[0] != b':' {
                        self.in_event = true;
                    }
                    match line_kind(line, false) {
                        LineKind::Undecided => return None,
                        LineKind::Ignored => None,
                        LineKind::Field(field, _) => Some(field),
                    }
                }
            };
            match field {
                None => self.skip_line = true,
                Some(field) => {
                    self.pending_field = Some(field);
                    match self.check_size(field, len - self.pos) {
                        None => return None,
                        Some(step) => {
                            self.skip_line = true;
                            self.pos = len;
                            self.scan = len;
                            return step;
                        }
                    }
                }
            }
        }
        // The line is dropped: its bytes go at the next compaction.
        self.pos = len;
        self.scan = len;
        None
    }

    /// A blank line: the id buffer becomes the last event id, and the event is dispatched if it
    /// has data.
    fn blank_line(&mut self) -> Option<Step> {
        self.in_event = false;
        if self.id_changed {
            self.id_changed = false;
            self.last_event_id.clone_from(&self.id_buffer);
        }
        if mem::take(&mut self.discarding) || self.data_len() == 0 {
            self.data.clear();
            self.data_in_input = None;
            self.event_type.clear();
            return None;
        }
        self.dispatched = true;
        self.work.events += 1;
        Some(Step::Dispatch)
    }

    /// After [`finish`](Self::finish), once every complete line is processed: reports an event
    /// the stream ended inside, once, and frees the buffers.
    fn end_of_stream(&mut self) -> Option<Step> {
        if mem::replace(&mut self.ended, true) {
            return None;
        }
        let partial = &self.input.as_bytes()[self.pos..];
        let unterminated_line = self.skip_line || !partial.is_empty();
        let unfinished = self.in_event || partial.first().is_some_and(|&b| b != b':');
        let data_len = self.data_len().saturating_sub(1);
        self.scanned_before += self.scan as u64;
        self.input = String::new();
        self.data = String::new();
        self.event_type = String::new();
        self.data_in_input = None;
        self.pos = 0;
        self.scan = 0;
        self.skip_line = false;
        self.discarding = false;
        self.in_event = false;
        unfinished.then_some(Step::Error(SseError::UnfinishedEvent {
            data_len,
            unterminated_line,
        }))
    }
}

/// Capacity kept by the buffers after an event crossed the cap.
const SHRINK_TO: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_values() {
        assert_eq!(parse_retry(b"0"), Some(0));
        assert_eq!(parse_retry(b"007"), Some(7));
        assert_eq!(parse_retry(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_retry(b"18446744073709551616"), None);
        assert_eq!(parse_retry(b""), None);
        assert_eq!(parse_retry(b"1 "), None);
        assert_eq!(parse_retry(b"-1"), None);
        assert_eq!(parse_retry(b"+1"), None);
    }

    #[test]
    fn line_kinds() {
        assert!(matches!(line_kind(b":x", false), LineKind::Ignored));
        assert!(matches!(line_kind(b"dat", false), LineKind::Undecided));
        assert!(matches!(
            line_kind(b"data", true),
            LineKind::Field(Field::Data, 4)
        ));
        assert!(matches!(
            line_kind(b"data: x", false),
            LineKind::Field(Field::Data, 6)
        ));
        assert!(matches!(
            line_kind(b"retry:", false),
            LineKind::Field(Field::Retry, 6)
        ));
        assert!(matches!(line_kind(b"retryy", false), LineKind::Ignored));
        assert!(matches!(line_kind(b"datum", true), LineKind::Ignored));
    }

    #[test]
    fn line_ends_are_found_word_by_word_as_byte_by_byte() {
        // Bytes next to CR and LF in value, and bytes whose borrow could mark a neighbour.
        let fillers = [
            b'a', 0x00, 0x01, 0x09, 0x0B, 0x0C, 0x0E, 0x80, 0x8A, 0x8D, 0xFF,
        ];
        for len in 0..=40 {
            for &filler in &fillers {
                let mut text = vec![filler; len];
                assert_eq!(find_line_end(&text), None, "{len} x {filler:#x}");
                for at in 0..len {
                    for end in [b'\n', b'\r'] {
                        text[at] = end;
                        for (later, byte) in text.iter_mut().enumerate().skip(at + 1) {
                            *byte = if later % 3 == 0 { b'\n' } else { filler };
                        }
                        assert_eq!(find_line_end(&text), Some(at), "{text:?}");
                        text.fill(filler);
                    }
                }
            }
        }
    }

    #[test]
    fn single_data_line_is_handed_out_in_place() {
        let mut dec = SseDecoder::new();
        dec.push(b"data: hello\n\n");
        let ev = dec.next_event_ref().unwrap().unwrap();
        assert_eq!(ev.data, "hello");
        assert_eq!(dec.work().copied, 13);
    }
}
