//! Newline-delimited JSON (JSONL): the stdio framing.
//!
//! [`JsonlDecoder`] splits a byte stream into lines. It remembers how far it has scanned, so the
//! total work is O(n) however the bytes are split; it caps one line (default 16 MiB) and, past the
//! cap, reports a typed error and resynchronises at the next newline without holding the line. It
//! strips a trailing `\r` (CRLF), one UTF-8 byte order mark at the start of the stream, and skips
//! blank lines. It does not validate UTF-8: the JSON parser does that once, on the line itself.
//!
//! [`JsonlDecoder::next_message`] parses each line into JSON-RPC messages; a line that is not a
//! message becomes a [`FrameError`] for the caller to report, never a failure of the stream.
//!
//! [`encode`] writes one message as one line.

use super::scan;
use crate::jsonrpc::{self, Message, ParseError, Parsed};

/// The default cap on one line: 16 MiB.
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Counters of the work a decoder has done, to show it stays linear in its input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Work {
    /// Bytes given to [`JsonlDecoder::push`].
    pub pushed: u64,
    /// Bytes examined while searching for newlines. Each byte is examined at most once.
    pub scanned: u64,
    /// Bytes copied into or within the decoder's buffer.
    pub copied: u64,
}

/// Why a line was not handed out as a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// A line was longer than the cap. Its bytes were dropped; decoding resumes after its newline.
    #[error("line exceeds the {limit}-byte cap; skipped to the next newline")]
    LineTooLong {
        /// The cap.
        limit: usize,
        /// The JSON-RPC id read from the line's first bytes, where servers put it, when it is
        /// there: the request the dropped line answered.
        id: Option<crate::jsonrpc::Id>,
        /// Whether its first bytes show a request or notification of the peer (a `"method"`
        /// member): it answered nothing of ours, whatever its id.
        method: bool,
    },
    /// A line that is not a JSON-RPC message (noise on stdout, a truncated write, bad JSON).
    #[error("line is not a JSON-RPC message ({error}): {preview}")]
    NotAMessage {
        /// Why it is not a message.
        error: ParseError,
        /// The start of the line, for the diagnostic (lossy UTF-8, at most 120 bytes).
        preview: String,
    },
}

/// One item from [`JsonlDecoder::next_line`]: a complete line, or a line that was too long.
pub type LineResult<'a> = Result<&'a [u8], FrameError>;

/// A bounded, incremental JSONL line splitter.
#[derive(Debug)]
pub struct JsonlDecoder {
    buf: Vec<u8>,
    /// Start of the first line not yet handed out.
    start: usize,
    /// Bytes of `buf[start..]` already searched for a newline without finding one.
    scanned: usize,
    max_line: usize,
    /// Dropping bytes of an overlong line until its newline.
    discarding: bool,
    /// Bytes dropped so far from the overlong line being discarded.
    discarded: usize,
    /// The BOM check at stream start is still to be made.
    bom_pending: bool,
    finished: bool,
    work: Work,
}

impl Default for JsonlDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl JsonlDecoder {
    /// A decoder with the default line cap (16 MiB).
    pub fn new() -> Self {
        Self::with_max_line(DEFAULT_MAX_LINE)
    }

    /// A decoder with a line cap of `max_line` bytes (excluding the line ending).
    pub fn with_max_line(max_line: usize) -> Self {
        JsonlDecoder {
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            max_line,
            discarding: false,
            discarded: 0,
            bom_pending: true,
            finished: false,
            work: Work::default(),
        }
    }

    /// The line cap.
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    /// Work done so far.
    pub fn work(&self) -> Work {
        self.work
    }

    /// Bytes held for a line not yet complete.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Feeds bytes read from the stream. Then call [`next_line`](Self::next_line) or
    /// [`next_message`](Self::next_message) until it returns `None` (the drive rule): memory
    /// then stays within the line cap plus one push.
    pub fn push(&mut self, mut bytes: &[u8]) {
        debug_assert!(!self.finished, "push after finish");
        self.work.pushed += bytes.len() as u64;
        if self.discarding {
            match memchr::memchr(b'\n', bytes) {
                None => {
                    self.work.scanned += bytes.len() as u64;
                    self.discarded = self.discarded.saturating_add(bytes.len());
                    return;
                }
                Some(i) => {
                    self.work.scanned += i as u64 + 1;
                    self.discarding = false;
                    self.discarded = 0;
                    bytes = &bytes[i + 1..];
                }
            }
        }
        if bytes.is_empty() {
            return;
        }
        // Drop what was handed out when that keeps copying linear: the bytes moved are fewer
        // than the bytes consumed since the last move.
        if self.start > 0 && self.start >= self.buf.len() - self.start {
            let keep = self.buf.len() - self.start;
            self.buf.copy_within(self.start.., 0);
            self.buf.truncate(keep);
            self.work.copied += keep as u64;
            self.start = 0;
        }
        let before = self.buf.len();
        self.buf.extend_from_slice(bytes);
        self.work.copied += bytes.len() as u64;
        // A small push (a few bytes at a time) is searched here, while it is at hand: when it
        // holds no newline, draining is then a test without a call (see `next_line`).
        if bytes.len() <= 16 && !self.bom_pending && self.start + self.scanned == before {
            let clear = find_newline(bytes).unwrap_or(bytes.len());
            self.scanned += clear;
            self.work.scanned += clear as u64;
        }
    }

    /// Marks the end of the stream: a last line without a newline is then handed out.
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// How much of a line over the cap its id is read from: the first `max_line + 1` bytes,
    /// which are held whenever such a line is given up, however its bytes came (whole, or a
    /// few at a time), so the id found does not depend on the reads.
    fn seen(&self, len: usize) -> usize {
        len.min(self.max_line + 1)
    }

    /// Drops the unfinished line held in the buffer, which is over the cap, and skips the rest
    /// of it up to its newline.
    fn give_up_line(&mut self) -> FrameError {
        let len = self.buf.len() - self.start;
        let seen = &self.buf[self.start..][..self.seen(len)];
        let (id, method) = (jsonrpc::sniff_id(seen), jsonrpc::sniff_method(seen));
        self.buf.clear();
        self.start = 0;
        self.scanned = 0;
        self.discarding = true;
        self.discarded = len;
        FrameError::LineTooLong {
            limit: self.max_line,
            id,
            method,
        }
    }

    /// The next complete line (without its line ending), or a [`FrameError::LineTooLong`] for a
    /// line that was dropped; `None` when more bytes are needed.
    #[inline]
    pub fn next_line(&mut self) -> Option<LineResult<'_>> {
        // All that is held was searched and holds no newline, and neither the cap, the stream's
        // end nor a byte order mark is to be dealt with: nothing to do.
        if self.start + self.scanned == self.buf.len()
            && !self.finished
            && !self.bom_pending
            && self.scanned <= self.max_line + 1
        {
            return None;
        }
        self.read_line()
    }

    fn read_line(&mut self) -> Option<LineResult<'_>> {
        loop {
            if self.bom_pending {
                let avail = &self.buf[self.start..];
                let n = avail.len().min(BOM.len());
                if avail[..n] != BOM[..n] {
                    self.bom_pending = false;
                } else if n == BOM.len() {
                    self.start += BOM.len();
                    self.bom_pending = false;
                } else if !self.finished {
                    return None;
                } else {
                    self.bom_pending = false;
                }
            }
            let from = self.start + self.scanned;
            let (line_start, line_end, next) = match find_newline(&self.buf[from..]) {
                Some(i) => {
                    self.work.scanned += i as u64 + 1;
                    let end = from + i;
                    (self.start, end, end + 1)
                }
                None => {
                    self.work.scanned += (self.buf.len() - from) as u64;
                    self.scanned = self.buf.len() - self.start;
                    // A line of exactly `max_line` bytes may still be waiting for its `\n`
                    // after a `\r`, hence the one byte of slack.
                    if self.scanned > self.max_line + 1 && !self.finished {
                        self.bom_pending = false;
                        return Some(Err(self.give_up_line()));
                    }
                    if self.finished && self.start < self.buf.len() {
                        let (s, e) = (self.start, self.buf.len());
                        (s, e, e)
                    } else {
                        if self.start == self.buf.len() {
                            self.buf.clear();
                            self.start = 0;
                            self.scanned = 0;
                        }
                        return None;
                    }
                }
            };
            self.start = next;
            self.scanned = 0;
            let mut end = line_end;
            if end > line_start && self.buf[end - 1] == b'\r' {
                end -= 1;
            }
            let line_len = end - line_start;
            if line_len > self.max_line {
                let seen = &self.buf[line_start..][..self.seen(line_len)];
                return Some(Err(FrameError::LineTooLong {
                    limit: self.max_line,
                    id: jsonrpc::sniff_id(seen),
                    method: jsonrpc::sniff_method(seen),
                }));
            }
            let line = &self.buf[line_start..end];
            if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
                continue;
            }
            return Some(Ok(&self.buf[line_start..end]));
        }
    }

    /// The next line parsed as JSON-RPC: a message, a batch split into messages, or a
    /// [`FrameError`] for a line that was too long or not a message. `None` when more bytes are
    /// needed.
    pub fn next_message(&mut self) -> Option<Result<Parsed<Message>, FrameError>> {
        Some(match self.next_line()? {
            Err(e) => Err(e),
            Ok(line) => jsonrpc::parse(line).map_err(|error| FrameError::NotAMessage {
                error,
                preview: preview(line),
            }),
        })
    }
}

/// Where the first LF in `bytes` is. Short input (a small push) is searched eight bytes at a time
/// in a `u64`, without the set-up of a vector search.
#[inline]
fn find_newline(bytes: &[u8]) -> Option<usize> {
    if bytes.len() >= 16 {
        return memchr::memchr(b'\n', bytes);
    }
    let (head, rest) = bytes.split_at(bytes.len().min(8));
    if let Some(i) = newline_in(scan::load_le(head)) {
        return Some(i);
    }
    newline_in(scan::load_le(rest)).map(|i| 8 + i)
}

/// The index of the first LF byte in a little-endian word.
#[inline]
fn newline_in(word: u64) -> Option<usize> {
    scan::first_byte(word, b'\n')
}

/// The start of `line` as text for a diagnostic: at most 120 bytes, lossy UTF-8.
pub fn preview(line: &[u8]) -> String {
    const MAX: usize = 120;
    let cut = &line[..line.len().min(MAX)];
    let mut s = String::from_utf8_lossy(cut).into_owned();
    if line.len() > MAX {
        s.push('…');
    }
    s
}

/// Appends `message` as one JSONL line (compact JSON and `\n`) to `out`.
pub fn encode(message: &Message, out: &mut Vec<u8>) {
    message.encode_into(out);
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::find_newline;

    #[test]
    fn newlines_are_found_word_by_word_as_byte_by_byte() {
        // Bytes next to LF in value, and bytes whose borrow could mark a neighbour.
        let fillers = [b'a', 0x00, 0x01, 0x09, 0x0B, 0x0D, 0x80, 0x8A, 0xFF];
        for len in 0..=40 {
            for &filler in &fillers {
                let mut text = vec![filler; len];
                assert_eq!(find_newline(&text), None, "{len} x {filler:#x}");
                for at in 0..len {
                    text[at] = b'\n';
                    for (later, byte) in text.iter_mut().enumerate().skip(at + 1) {
                        *byte = if later % 3 == 0 { b'\n' } else { filler };
                    }
                    assert_eq!(find_newline(&text), Some(at), "{text:?}");
                    text.fill(filler);
                }
            }
        }
    }
}
