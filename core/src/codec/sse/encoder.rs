//! The event-stream encoder: events in, bytes out.

/// The line end an [`SseEncoder`] writes. Decoders accept all three.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LineEnd {
    /// `\n`, as the TypeScript servers write.
    #[default]
    Lf,
    /// `\r\n`, as the Python servers write.
    CrLf,
    /// A lone `\r`.
    Cr,
}

impl LineEnd {
    fn bytes(self) -> &'static [u8] {
        match self {
            Self::Lf => b"\n",
            Self::CrLf => b"\r\n",
            Self::Cr => b"\r",
        }
    }
}

/// One event block to write: its fields, then a blank line.
///
/// `data: None` writes no `data` line: such a block dispatches nothing but still sets the last
/// event id and the reconnection time. `data: Some("")` writes one empty `data` line: the event is
/// dispatched with empty data (the form of the MCP priming event).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct EventFrame<'a> {
    /// The `event` field; `None` (or empty) means the receiver sees type `message`.
    pub event_type: Option<&'a str>,
    /// The `id` field; `Some("")` resets the receiver's last event id.
    pub id: Option<&'a str>,
    /// The `retry` field, in milliseconds.
    pub retry: Option<u64>,
    /// The data; each line (split at LF, CR or CRLF) becomes one `data` line.
    pub data: Option<&'a str>,
}

impl<'a> EventFrame<'a> {
    /// An event of type `message` with this data.
    pub const fn message(data: &'a str) -> Self {
        Self {
            event_type: None,
            id: None,
            retry: None,
            data: Some(data),
        }
    }

    /// The MCP priming event: an id and one empty `data` line.
    pub const fn priming(id: &'a str) -> Self {
        Self {
            event_type: None,
            id: Some(id),
            retry: None,
            data: Some(""),
        }
    }

    /// Sets the `event` field.
    #[must_use]
    pub const fn with_type(mut self, event_type: &'a str) -> Self {
        self.event_type = Some(event_type);
        self
    }

    /// Sets the `id` field.
    #[must_use]
    pub const fn with_id(mut self, id: &'a str) -> Self {
        self.id = Some(id);
        self
    }

    /// Sets the `retry` field.
    #[must_use]
    pub const fn with_retry(mut self, ms: u64) -> Self {
        self.retry = Some(ms);
        self
    }
}

/// Why an [`EventFrame`] cannot be written as given.
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum SseEncodeError {
    /// A single-line field holds a line break, which would end the field early.
    #[error("the SSE {field} field contains a line break")]
    LineBreak {
        /// `event` or `id`.
        field: &'static str,
    },
    /// The id holds U+0000: a receiver would ignore the whole field.
    #[error("the SSE id field contains U+0000, which receivers ignore")]
    NulInId,
}

/// Writes `text/event-stream` bytes.
///
/// Values are written after `: ` so that a value beginning with a space keeps it. Decoding what
/// this writes gives back the events, with line ends in data turned into LF.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SseEncoder {
    line_end: LineEnd,
}

impl SseEncoder {
    /// An encoder writing LF line ends.
    pub const fn new() -> Self {
        Self {
            line_end: LineEnd::Lf,
        }
    }

    /// An encoder writing the given line ends.
    pub const fn with_line_end(line_end: LineEnd) -> Self {
        Self { line_end }
    }

    /// Appends one event block to `out`. Nothing is written when the frame is refused.
    pub fn event(&self, frame: &EventFrame<'_>, out: &mut Vec<u8>) -> Result<(), SseEncodeError> {
        let has_break = |s: &str| memchr::memchr2(b'\n', b'\r', s.as_bytes()).is_some();
        if frame.event_type.is_some_and(has_break) {
            return Err(SseEncodeError::LineBreak { field: "event" });
        }
        if let Some(id) = frame.id {
            if has_break(id) {
                return Err(SseEncodeError::LineBreak { field: "id" });
            }
            if id.as_bytes().contains(&0) {
                return Err(SseEncodeError::NulInId);
            }
        }
        let data_len = frame.data.map_or(0, str::len);
        out.reserve(data_len + 32);
        if let Some(event_type) = frame.event_type {
            self.field(b"event", event_type.as_bytes(), out);
        }
        if let Some(id) = frame.id {
            self.field(b"id", id.as_bytes(), out);
        }
        if let Some(ms) = frame.retry {
            self.field(b"retry", ms.to_string().as_bytes(), out);
        }
        if let Some(data) = frame.data {
            for line in lines(data.as_bytes()) {
                self.field(b"data", line, out);
            }
        }
        out.extend_from_slice(self.line_end.bytes());
        Ok(())
    }

    /// Appends a comment (one `:` line per line of `text`), which receivers ignore: a keep-alive.
    pub fn comment(&self, text: &str, out: &mut Vec<u8>) {
        for line in lines(text.as_bytes()) {
            out.push(b':');
            if !line.is_empty() {
                out.push(b' ');
                out.extend_from_slice(line);
            }
            out.extend_from_slice(self.line_end.bytes());
        }
    }

    fn field(&self, name: &[u8], value: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(name);
        out.push(b':');
        if !value.is_empty() {
            out.push(b' ');
            out.extend_from_slice(value);
        }
        out.extend_from_slice(self.line_end.bytes());
    }
}

/// The lines of `text`, split at LF, CR or CRLF; an empty text is one empty line, and a line end
/// at the end leaves an empty last line.
fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        match memchr::memchr2(b'\n', b'\r', text) {
            None => {
                rest = None;
                Some(text)
            }
            Some(i) => {
                let skip = if text[i] == b'\r' && text.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                rest = Some(&text[i + skip..]);
                Some(&text[..i])
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(frame: EventFrame<'_>) -> String {
        let mut out = Vec::new();
        SseEncoder::new().event(&frame, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn writes_fields_in_order() {
        let frame = EventFrame::message("a\r\nb\rc\n")
            .with_type("t")
            .with_id("7")
            .with_retry(300);
        assert_eq!(
            encode(frame),
            "event: t\nid: 7\nretry: 300\ndata: a\ndata: b\ndata: c\ndata:\n\n"
        );
        assert_eq!(encode(EventFrame::priming("p")), "id: p\ndata:\n\n");
        assert_eq!(encode(EventFrame::default()), "\n");
    }

    #[test]
    fn refuses_what_cannot_be_written() {
        let mut out = Vec::new();
        let enc = SseEncoder::new();
        let bad_type = EventFrame::message("x").with_type("a\nb");
        assert_eq!(
            enc.event(&bad_type, &mut out),
            Err(SseEncodeError::LineBreak { field: "event" })
        );
        let bad_id = EventFrame::message("x").with_id("a\rb");
        assert_eq!(
            enc.event(&bad_id, &mut out),
            Err(SseEncodeError::LineBreak { field: "id" })
        );
        let nul = EventFrame::message("x").with_id("a\0");
        assert_eq!(enc.event(&nul, &mut out), Err(SseEncodeError::NulInId));
        assert!(out.is_empty());
    }

    #[test]
    fn comments() {
        let mut out = Vec::new();
        SseEncoder::with_line_end(LineEnd::CrLf).comment("ping\nx", &mut out);
        SseEncoder::new().comment("", &mut out);
        assert_eq!(out, b": ping\r\n: x\r\n:\n");
    }
}
