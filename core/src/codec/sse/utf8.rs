//! UTF-8 decoding as a stream, with replacement (Encoding standard, "UTF-8 decode" in replacement
//! mode): every maximal subpart of an ill-formed sequence becomes one U+FFFD, exactly as
//! `String::from_utf8_lossy` does on the whole input, however the bytes are split.
//!
//! Whole runs are validated with `simdutf8`; replacement work happens only when a run is invalid.
//! Only a character cut by the end of a push goes through the byte-at-a-time decoder.

const REPLACEMENT: char = '\u{FFFD}';

/// The Encoding standard's UTF-8 decoder state between two bytes: how much of a character has
/// been seen and which byte may come next.
#[derive(Debug, Clone, Copy)]
pub(super) struct Utf8Stream {
    code_point: u32,
    needed: u8,
    seen: u8,
    lower: u8,
    upper: u8,
}

impl Utf8Stream {
    pub(super) const fn new() -> Self {
        Self {
            code_point: 0,
            needed: 0,
            seen: 0,
            lower: 0x80,
            upper: 0xBF,
        }
    }

    /// Decodes `bytes` onto `out`. A character cut at the end stays here until the next call.
    pub(super) fn decode(&mut self, mut bytes: &[u8], out: &mut String) {
        while self.needed != 0 {
            let Some((&b, rest)) = bytes.split_first() else {
                return;
            };
            if self.step(b, out) {
                bytes = rest;
            }
        }
        // Text that ends in ASCII cannot end inside a character.
        let split = match bytes.last() {
            Some(&b) if b < 0x80 => bytes.len(),
            _ => incomplete_tail_start(bytes),
        };
        let (body, tail) = bytes.split_at(split);
        decode_run(body, out);
        for &b in tail {
            if !self.step(b, out) {
                // The byte ended an ill-formed sequence and starts afresh: with nothing pending,
                // it is always taken.
                self.step(b, out);
            }
        }
    }

    /// End of stream: a character still unfinished becomes one U+FFFD.
    pub(super) fn finish(&mut self, out: &mut String) {
        if self.needed != 0 {
            *self = Self::new();
            out.push(REPLACEMENT);
        }
    }

    /// One byte through the decoder. Returns false when the byte was not taken: it ended an
    /// ill-formed sequence (already replaced) and must be decoded again from a clean state.
    fn step(&mut self, b: u8, out: &mut String) -> bool {
        if self.needed == 0 {
            match b {
                0x00..=0x7F => out.push(char::from(b)),
                0xC2..=0xDF => {
                    self.needed = 1;
                    self.code_point = u32::from(b & 0x1F);
                }
                0xE0..=0xEF => {
                    if b == 0xE0 {
                        self.lower = 0xA0;
                    } else if b == 0xED {
                        self.upper = 0x9F;
                    }
                    self.needed = 2;
                    self.code_point = u32::from(b & 0x0F);
                }
                0xF0..=0xF4 => {
                    if b == 0xF0 {
                        self.lower = 0x90;
                    } else if b == 0xF4 {
                        self.upper = 0x8F;
                    }
                    self.needed = 3;
                    self.code_point = u32::from(b & 0x07);
                }
                _ => out.push(REPLACEMENT),
            }
            return true;
        }
        if b < self.lower || b > self.upper {
            *self = Self::new();
            out.push(REPLACEMENT);
            return false;
        }
        self.lower = 0x80;
        self.upper = 0xBF;
        self.code_point = (self.code_point << 6) | u32::from(b & 0x3F);
        self.seen += 1;
        if self.seen == self.needed {
            // The bounds above admit only scalar values; the fallback is never taken.
            out.push(char::from_u32(self.code_point).unwrap_or(REPLACEMENT));
            *self = Self::new();
        }
        true
    }
}

/// Where a character cut by the end of `bytes` begins (`bytes.len()` if none is cut). The split
/// point is always a byte that is not a continuation byte, so decoding the two sides apart gives
/// what decoding them together would.
fn incomplete_tail_start(bytes: &[u8]) -> usize {
    let len = bytes.len();
    for i in (len.saturating_sub(3)..len).rev() {
        let b = bytes[i];
        if b & 0xC0 != 0x80 {
            let width = match b {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            return if len - i < width { i } else { len };
        }
    }
    len
}

/// Decodes a run that does not end inside a character.
fn decode_run(bytes: &[u8], out: &mut String) {
    // `simdutf8` hands runs shorter than one 64-byte block to the standard library's scalar
    // check, which costs a few nanoseconds per byte on text that is not ASCII. A short run is
    // padded with spaces to a full block instead: the padded block is valid exactly when the run
    // is (the run does not end inside a character), and the run ends on a character boundary.
    const BLOCK: usize = 64;
    if bytes.len() < BLOCK {
        let mut padded = [b' '; BLOCK];
        padded[..bytes.len()].copy_from_slice(bytes);
        if let Ok(text) = simdutf8::basic::from_utf8(&padded) {
            out.push_str(&text[..bytes.len()]);
            return;
        }
    } else if let Ok(text) = simdutf8::basic::from_utf8(bytes) {
        out.push_str(text);
        return;
    }
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            out.push(REPLACEMENT);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Utf8Stream;

    fn chunked(bytes: &[u8], size: usize) -> String {
        let mut out = String::new();
        let mut dec = Utf8Stream::new();
        for chunk in bytes.chunks(size.max(1)) {
            dec.decode(chunk, &mut out);
        }
        dec.finish(&mut out);
        out
    }

    #[test]
    fn matches_lossy_decoding_at_every_chunk_size() {
        let cases: &[&[u8]] = &[
            b"plain ascii",
            "h\u{e9}llo \u{20ac} \u{1F600}".as_bytes(),
            b"\x80",
            b"\xC0\x80",
            b"\xE0\x80\x80",
            b"\xED\xA0\x80",
            b"\xF0\x8F\xBF\xBF",
            b"\xF4\x90\x80\x80",
            b"\xF5",
            b"\xE2\x82",
            b"\xE2\x82A",
            b"\xF0\x9F\x98",
            b"\xF0\x9F\x98\xF0\x9F\x98\x80",
            b"a\xFFb\xFEc",
            b"\xE2\x82\xF0\x90",
        ];
        for case in cases {
            let expected = String::from_utf8_lossy(case);
            for size in 1..=case.len() {
                assert_eq!(
                    chunked(case, size),
                    expected,
                    "{case:?} in chunks of {size}"
                );
            }
        }
    }
}
