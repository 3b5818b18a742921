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
}

impl StderrTail {
    pub(crate) fn new(cap: usize, callback: Option<StderrCallback>) -> Self {
        StderrTail {
            ring: VecDeque::with_capacity(cap.min(64 * 1024)),
            cap,
            line: Vec::new(),
            callback,
        }
    }

    /// Takes bytes read from stderr; returns the complete lines for the callback.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let keep = bytes.len().min(self.cap);
        let overflow = (self.ring.len() + keep).saturating_sub(self.cap);
        self.ring.drain(..overflow);
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

    /// The last bytes the server wrote to stderr, as text.
    pub(crate) fn tail(&self) -> String {
        let (a, b) = self.ring.as_slices();
        let mut all = Vec::with_capacity(a.len() + b.len());
        all.extend_from_slice(a);
        all.extend_from_slice(b);
        String::from_utf8_lossy(&all).into_owned()
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
        assert_eq!(t.tail(), "lo\r\nworld\n"[2..].to_string());
        let mut t = StderrTail::new(4, None);
        t.push(&[b'a'; 100]);
        t.push(b"xyz");
        assert_eq!(t.tail(), "axyz");
    }
}
