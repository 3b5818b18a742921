//! The child's stderr: drained all the time (a full pipe must never stall the server), its tail
//! kept in a bounded ring for errors, and whole lines handed to an optional callback.

use std::collections::VecDeque;
use std::sync::Arc;

/// Called with each line the server writes to stderr (without the line ending).
pub type StderrCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// The longest line handed to the callback; longer ones are cut.
const MAX_LINE: usize = 64 * 1024;

pub(crate) struct StderrTail {
    ring: VecDeque<u8>,
    cap: usize,
    line: Vec<u8>,
    callback: Option<StderrCallback>,
    /// Whether older output was dropped from the ring.
    cut: bool,
}

impl StderrTail {
    pub(crate) fn new(cap: usize, callback: Option<StderrCallback>) -> Self {
        StderrTail {
            ring: VecDeque::with_capacity(cap.min(64 * 1024)),
            cap,
            line: Vec::new(),
            callback,
            cut: false,
        }
    }

    /// Takes bytes read from stderr; returns the complete lines for the callback.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let keep = bytes.len().min(self.cap);
        let overflow = (self.ring.len() + keep).saturating_sub(self.cap);
        self.ring.drain(..overflow);
        self.cut |= overflow > 0 || keep < bytes.len();
        self.ring.extend(&bytes[bytes.len() - keep..]);
        let mut lines = Vec::new();
        if self.callback.is_none() {
            return lines;
        }
        for &b in bytes {
            if b == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                lines.push(String::from_utf8_lossy(&line).into_owned());
            } else if self.line.len() < MAX_LINE {
                self.line.push(b);
            }
        }
        lines
    }

    /// Forgets what was kept: the server was started again, and its errors are its own.
    pub(crate) fn clear(&mut self) {
        self.ring.clear();
        self.line.clear();
        self.cut = false;
    }

    /// The last lines the server wrote to stderr, as text. When older output was dropped, the
    /// tail starts at a line boundary (or, with no line end in it, at a character boundary),
    /// marked with `…`: never inside a character.
    pub(crate) fn tail(&self) -> String {
        let (a, b) = self.ring.as_slices();
        let mut all = Vec::with_capacity(a.len() + b.len());
        all.extend_from_slice(a);
        all.extend_from_slice(b);
        if !self.cut {
            return String::from_utf8_lossy(&all).into_owned();
        }
        let start = match all.iter().position(|&b| b == b'\n') {
            Some(nl) if nl + 1 < all.len() => nl + 1,
            // No whole line: skip the rest of a character cut in two.
            _ => all.iter().take_while(|&&b| b & 0xC0 == 0x80).count(),
        };
        format!("…{}", String::from_utf8_lossy(&all[start..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_tail_and_splits_lines() {
        let mut t = StderrTail::new(8, Some(Arc::new(|_| {})));
        assert_eq!(t.push(b"hello\r\nwor"), vec!["hello".to_string()]);
        assert_eq!(t.push(b"ld\n"), vec!["world".to_string()]);
        // Older output was dropped: the tail starts at a line boundary, marked.
        assert_eq!(t.tail(), "…world\n");
        let mut t = StderrTail::new(4, None);
        t.push(&[b'a'; 100]);
        t.push(b"xyz");
        assert_eq!(t.tail(), "…axyz");
        let mut t = StderrTail::new(64, None);
        t.push(b"all of it\n");
        assert_eq!(t.tail(), "all of it\n", "nothing dropped, nothing marked");
    }

    #[test]
    fn a_tail_never_starts_inside_a_character() {
        // A box-drawing line (3 bytes a character) cut by the ring, and no line end after it.
        let mut t = StderrTail::new(10, None);
        t.push("╭────────────╮".as_bytes());
        let tail = t.tail();
        assert!(
            tail.starts_with('…') && !tail.contains('\u{FFFD}'),
            "{tail:?}"
        );
        // With a line end in the tail, whole lines only.
        let mut t = StderrTail::new(16, None);
        t.push("╭──────╮\nError: boom\n".as_bytes());
        assert_eq!(t.tail(), "…Error: boom\n");
    }
}
