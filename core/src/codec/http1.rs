//! HTTP/1.1 on a client's side, without IO (RFC 9112): a request written out, a response head
//! read, and a response body's framing undone (`Content-Length`, `chunked`, or the
//! connection's end).
//!
//! Incremental and bounded like the other codecs: the head is looked for in whatever has been
//! read so far and may not exceed [`MAX_HEAD`]; a chunk-size line, the trailers and the count
//! of headers are capped. Bytes that break the grammar are a typed [`Http1Error`], never a
//! panic, whatever the input.

use std::io::Write as _;
use std::ops::Range;

use crate::header::is_token_byte;

/// The most bytes a response head may take (status line and headers).
pub const MAX_HEAD: usize = 64 * 1024;
/// The most header lines a response head may have.
pub const MAX_HEADERS: usize = 256;
/// The most bytes of a chunk-size line (with its extensions), and of all trailers together.
const MAX_CHUNK_LINE: usize = 4 * 1024;
const MAX_TRAILERS: usize = 16 * 1024;

/// Why bytes are not an HTTP/1.1 response, or a request cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Http1Error {
    /// The head (with the interim `1xx` heads before it) is over [`MAX_HEAD`] bytes.
    #[error("the response head is over the {MAX_HEAD}-byte limit (interim 1xx heads included)")]
    HeadTooLarge,
    /// The head has more than [`MAX_HEADERS`] header lines.
    #[error("the response head has more than {MAX_HEADERS} header lines")]
    TooManyHeaders,
    /// The response does not start `HTTP/1.x NNN`: it is not HTTP/1.x.
    #[error("the response is not HTTP/1.x: its status line is {0:?}")]
    StatusLine(String),
    /// A header line is not `name: value` (or folds over lines, which RFC 9112 forbids).
    #[error("a response header line is not valid: {0:?}")]
    HeaderLine(String),
    /// `Content-Length` is not a number, is over 2^64-1, or two of them disagree.
    #[error("the response's Content-Length is not a valid length (digits, at most 2^64-1, one value): {0:?}")]
    ContentLength(String),
    /// The server switched protocols, which this client never asks for.
    #[error("the server switched protocols (101), which was not asked for")]
    Switched,
    /// The chunked body's framing is broken.
    #[error("the chunked body is not valid: {0}")]
    Chunked(&'static str),
    /// The connection ended before the body did.
    #[error("the connection closed before the end of the body")]
    CutShort,
    /// A transfer coding other than `chunked` (none is asked for).
    #[error("the response uses a transfer coding that was not asked for: {0:?}")]
    TransferCoding(String),
    /// A part of the request is not valid in HTTP/1.1 (a header name that is not a token, a
    /// control character in a value, a space in the target).
    #[error("the request's {0} is not valid in HTTP/1.1")]
    Request(String),
}

/// Writes a request into `out`: the request line, `Host`, the headers given (a `Host`,
/// `Content-Length`, `Transfer-Encoding` or `Connection` among them is left out: those are
/// this codec's), `Content-Length` when there is a body or the method is `POST`, then the body.
pub fn write_request(
    out: &mut Vec<u8>,
    method: &str,
    target: &str,
    host: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> Result<(), Http1Error> {
    let token = |s: &str| !s.is_empty() && s.bytes().all(is_token_byte);
    let visible = |s: &str| !s.is_empty() && s.bytes().all(|b| (0x21..0x7f).contains(&b));
    for (name, value) in headers {
        // The one header rule of the crate: no CR or LF that would start another header.
        if crate::header::check(name, value).is_err() {
            return Err(Http1Error::Request(format!("header {name:?}")));
        }
    }
    if !token(method) {
        return Err(Http1Error::Request("method".into()));
    }
    if !visible(target) {
        return Err(Http1Error::Request("target".into()));
    }
    if !visible(host) {
        return Err(Http1Error::Request("host".into()));
    }
    // Sized for the whole request at once: the head's lines, then the body (a large body is
    // not copied into a doubled buffer because the head outgrew a guess).
    let head: usize = headers
        .iter()
        .map(|(name, value)| name.len() + value.len() + 4)
        .sum();
    out.reserve(method.len() + target.len() + host.len() + head + 64 + body.len());
    // Writing into a `Vec` cannot fail.
    let _ = write!(out, "{method} {target} HTTP/1.1\r\nHost: {host}\r\n");
    for (name, value) in headers {
        let ours = ["host", "content-length", "transfer-encoding", "connection"];
        if ours.iter().any(|o| name.eq_ignore_ascii_case(o)) {
            continue;
        }
        let _ = write!(out, "{name}: {value}\r\n");
    }
    if !body.is_empty() || method == "POST" {
        let _ = write!(out, "Content-Length: {}\r\n", body.len());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    Ok(())
}

/// How a response's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body (`204`, `304`, a response to `HEAD`).
    Empty,
    /// This many bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the connection closes.
    UntilClose,
}

/// A response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    /// The status code.
    pub status: u16,
    /// The minor version: `HTTP/1.0` or `HTTP/1.1`.
    pub minor_version: u8,
    /// The headers in order, names in lower case, values without surrounding whitespace.
    pub headers: Vec<(String, String)>,
    /// How the body is delimited.
    pub framing: Framing,
    /// Whether the connection may carry another request once the body has been read.
    pub keep_alive: bool,
}

impl ResponseHead {
    /// Whether it is an interim response (`1xx` other than `101`): the final one follows.
    pub fn is_interim(&self) -> bool {
        (100..200).contains(&self.status)
    }
}

/// Reads a response head from the start of `buf`: `None` while it is incomplete, else the
/// head and how many bytes it took. `head_request` tells a response to `HEAD` (no body).
pub fn parse_response_head(
    buf: &[u8],
    head_request: bool,
) -> Result<Option<(ResponseHead, usize)>, Http1Error> {
    HeadReader::default().read(buf, head_request)
}

/// A response head read as its bytes come in: the search for its end goes on from where it
/// stopped, so a head that arrives a byte at a time is scanned once, not once per byte.
#[derive(Debug, Clone, Default)]
pub struct HeadReader {
    /// How much of the buffer is known to hold no end of head.
    scanned: usize,
    /// The bytes of the interim (`1xx`) heads read before: they count against [`MAX_HEAD`], so
    /// that a flood of them fails as at once as one endless head.
    interim: usize,
}

impl HeadReader {
    /// [`parse_response_head`] of `buf`, which holds what the last call saw and more. After a
    /// head is read (its bytes taken off the buffer), the next call starts afresh; after an
    /// interim head, the next head's bytes count with it against [`MAX_HEAD`].
    ///
    /// Bytes that cannot start `HTTP/1.` are refused as soon as they come, not when the head
    /// would have ended.
    pub fn read(
        &mut self,
        buf: &[u8],
        head_request: bool,
    ) -> Result<Option<(ResponseHead, usize)>, Http1Error> {
        const START: &[u8] = b"HTTP/1.";
        let n = buf.len().min(START.len());
        if buf[..n] != START[..n] {
            let line = buf.split(|b| *b == b'\n').next().unwrap_or(buf);
            let shown = String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
            return Err(Http1Error::StatusLine(shown));
        }
        let room = MAX_HEAD.saturating_sub(self.interim);
        let Some(end) = head_end(buf, self.scanned) else {
            self.scanned = buf.len();
            return if buf.len() > room {
                Err(Http1Error::HeadTooLarge)
            } else {
                Ok(None)
            };
        };
        if end > room {
            return Err(Http1Error::HeadTooLarge);
        }
        self.scanned = 0;
        let head = parse_head(&buf[..end], head_request)?;
        self.interim = if head.is_interim() {
            self.interim + end
        } else {
            0
        };
        Ok(Some((head, end)))
    }
}

/// The head that ends at `buf`'s end.
fn parse_head(buf: &[u8], head_request: bool) -> Result<ResponseHead, Http1Error> {
    let end = buf.len();
    if end > MAX_HEAD {
        return Err(Http1Error::HeadTooLarge);
    }
    let text = String::from_utf8_lossy(&buf[..end]);
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let status_line = lines.next().unwrap_or("");
    let (status, minor_version) = status_of(status_line)?;
    let mut headers = Vec::with_capacity(memchr::memchr_iter(b'\n', &buf[..end]).count());
    for line in lines.filter(|l| !l.is_empty()) {
        if headers.len() == MAX_HEADERS {
            return Err(Http1Error::TooManyHeaders);
        }
        headers.push(header_of(line)?);
    }
    if status == 101 {
        return Err(Http1Error::Switched);
    }
    fn value<'h>(
        headers: &'h [(String, String)],
        name: &'static str,
    ) -> impl Iterator<Item = &'h (String, String)> {
        headers.iter().filter(move |(k, _)| k == name)
    }
    let has_token = |name: &'static str, token: &str| {
        value(&headers, name)
            .any(|(_, v)| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    };
    let framing = if head_request || status == 204 || status == 304 || status < 200 {
        Framing::Empty
    } else if value(&headers, "transfer-encoding").next().is_some() {
        // This client asks for no transfer coding (no `TE`): chunked alone is understood, any
        // other would hand on bytes still encoded.
        let codings: Vec<&str> = value(&headers, "transfer-encoding")
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        match codings.as_slice() {
            [c] if c.eq_ignore_ascii_case("chunked") => Framing::Chunked,
            _ => return Err(Http1Error::TransferCoding(codings.join(", "))),
        }
    } else {
        let mut length = None;
        for (_, v) in value(&headers, "content-length") {
            for part in v.split(',') {
                let part = part.trim();
                let n = (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| part.parse::<u64>().ok())
                    .flatten()
                    .ok_or_else(|| Http1Error::ContentLength(v.clone()))?;
                if length.is_some_and(|l| l != n) {
                    return Err(Http1Error::ContentLength(v.clone()));
                }
                length = Some(n);
            }
        }
        length.map_or(Framing::UntilClose, Framing::Length)
    };
    // A `Transfer-Encoding` from HTTP/1.0, or beside a `Content-Length`, is a sign of a
    // confused (or smuggling) peer: that response is read, its connection never reused.
    let suspect = value(&headers, "transfer-encoding").next().is_some()
        && (minor_version == 0 || value(&headers, "content-length").next().is_some());
    let keep_alive = framing != Framing::UntilClose
        && !suspect
        && !has_token("connection", "close")
        && (minor_version == 1 || has_token("connection", "keep-alive"));
    Ok(ResponseHead {
        status,
        minor_version,
        headers,
        framing,
        keep_alive,
    })
}

/// Where the head ends (after its empty line), lines ended by CRLF or a bare LF; `scanned`
/// bytes are known to hold no end (one may start in their last two).
fn head_end(buf: &[u8], scanned: usize) -> Option<usize> {
    let mut from = scanned.saturating_sub(2).min(buf.len());
    while let Some(i) = memchr::memchr(b'\n', &buf[from..]) {
        let at = from + i + 1;
        match buf.get(at) {
            Some(b'\n') => return Some(at + 1),
            Some(b'\r') if buf.get(at + 1) == Some(&b'\n') => return Some(at + 2),
            Some(_) => from = at,
            None => return None,
        }
        if from > MAX_HEAD + 2 {
            return None;
        }
    }
    None
}

fn status_of(line: &str) -> Result<(u16, u8), Http1Error> {
    let bad = || Http1Error::StatusLine(line.chars().take(80).collect());
    let rest = line.strip_prefix("HTTP/1.").ok_or_else(bad)?;
    // A later HTTP/1.x is read as the highest one known (RFC 9110 §2.5).
    let minor = match rest.as_bytes().first() {
        Some(b'0') => 0,
        Some(b'1'..=b'9') => 1,
        _ => return Err(bad()),
    };
    let rest = rest[1..].strip_prefix(' ').ok_or_else(bad)?;
    let code = rest.get(..3).ok_or_else(bad)?;
    if !code.bytes().all(|b| b.is_ascii_digit())
        || !matches!(rest.as_bytes().get(3), None | Some(b' '))
    {
        return Err(bad());
    }
    let status: u16 = code.parse().map_err(|_| bad())?;
    if !(100..=999).contains(&status) {
        return Err(bad());
    }
    Ok((status, minor))
}

fn header_of(line: &str) -> Result<(String, String), Http1Error> {
    let bad = || Http1Error::HeaderLine(line.chars().take(80).collect());
    let (name, value) = line.split_once(':').ok_or_else(bad)?;
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        // A line starting with whitespace is a folded continuation: forbidden, and a smuggling
        // risk.
        return Err(bad());
    }
    let value = value.trim_matches(|c| c == ' ' || c == '\t');
    // Control characters other than a tab (a lone CR, NUL) are refused (RFC 9110 §5.5).
    if value.chars().any(|c| c.is_ascii_control() && c != '\t') {
        return Err(bad());
    }
    Ok((name.to_ascii_lowercase(), value.to_owned()))
}

/// Undoes a body's framing, incrementally: each call takes the bytes read so far and says how
/// many it used and which of them are body.
#[derive(Debug, Clone)]
pub struct BodyDecoder {
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Bytes left of a `Content-Length` body.
    Length(u64),
    /// Until the connection closes.
    UntilClose,
    /// A chunk-size line (read once its line end is in; until then its bytes stay unread).
    Size,
    /// Bytes left of a chunk's data.
    Data(u64),
    /// The CRLF after a chunk's data.
    DataEnd,
    /// The trailers (after the last chunk): bytes of them seen so far, and whether the current
    /// line is empty so far.
    Trailers { seen: usize, line_empty: bool },
    /// The body has ended.
    Done,
}

/// One step of a [`BodyDecoder`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// How many bytes of the input were used.
    pub consumed: usize,
    /// Which of them are body (a range of the input, within the consumed part).
    pub data: Range<usize>,
}

impl BodyDecoder {
    /// A decoder for a body framed as `framing`.
    pub fn new(framing: Framing) -> Self {
        let state = match framing {
            Framing::Empty | Framing::Length(0) => State::Done,
            Framing::Length(n) => State::Length(n),
            Framing::Chunked => State::Size,
            Framing::UntilClose => State::UntilClose,
        };
        BodyDecoder { state }
    }

    /// Whether the body has ended (the connection holds nothing more of it).
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// The connection ended: fine for a body that runs until then (it is now done), else the
    /// body was cut short.
    pub fn end_of_input(&mut self) -> Result<(), Http1Error> {
        match self.state {
            State::Done => Ok(()),
            State::UntilClose => {
                self.state = State::Done;
                Ok(())
            }
            _ => Err(Http1Error::CutShort),
        }
    }

    /// Reads framing from `input` up to and including one run of body bytes, at most `max` of
    /// them. Returns what it used; stops early (with no data) at the end of the body, or when
    /// the input is used up.
    pub fn decode(&mut self, input: &[u8], max: usize) -> Result<Decoded, Http1Error> {
        let mut at = 0;
        loop {
            let rest = &input[at..];
            match self.state {
                State::Done => {
                    return Ok(Decoded {
                        consumed: at,
                        data: at..at,
                    })
                }
                // A run of body bytes: as many as there are, up to `max` and to the run's end.
                State::Length(_) | State::UntilClose | State::Data(_) => {
                    let n = rest.len().min(max);
                    let n = match self.state {
                        State::Length(left) => {
                            let n = take(left, n);
                            self.state = match left - n as u64 {
                                0 => State::Done,
                                l => State::Length(l),
                            };
                            n
                        }
                        State::Data(left) => {
                            let n = take(left, n);
                            self.state = match left - n as u64 {
                                0 => State::DataEnd,
                                l => State::Data(l),
                            };
                            n
                        }
                        _ => n,
                    };
                    return Ok(Decoded {
                        consumed: at + n,
                        data: at..at + n,
                    });
                }
                _ if rest.is_empty() => {
                    return Ok(Decoded {
                        consumed: at,
                        data: at..at,
                    })
                }
                State::DataEnd => match rest {
                    [b'\n', ..] => {
                        at += 1;
                        self.state = State::Size;
                    }
                    [b'\r', b'\n', ..] => {
                        at += 2;
                        self.state = State::Size;
                    }
                    [b'\r'] => {
                        return Ok(Decoded {
                            consumed: at,
                            data: at..at,
                        })
                    }
                    _ => return Err(Http1Error::Chunked("no line end after a chunk's data")),
                },
                State::Size => {
                    // The line is parsed once whole: wait for its LF, keeping what was seen.
                    let Some(lf) = memchr::memchr(b'\n', rest) else {
                        if rest.len() > MAX_CHUNK_LINE {
                            return Err(Http1Error::Chunked("a chunk-size line is too long"));
                        }
                        return Ok(Decoded {
                            consumed: at,
                            data: at..at,
                        });
                    };
                    if lf > MAX_CHUNK_LINE {
                        return Err(Http1Error::Chunked("a chunk-size line is too long"));
                    }
                    let size = chunk_size(&rest[..lf])?;
                    at += lf + 1;
                    self.state = if size == 0 {
                        State::Trailers {
                            seen: 0,
                            line_empty: true,
                        }
                    } else {
                        State::Data(size)
                    };
                }
                State::Trailers { seen, line_empty } => {
                    let b = rest[0];
                    at += 1;
                    let seen = seen + 1;
                    if seen > MAX_TRAILERS {
                        return Err(Http1Error::Chunked("the trailers are too long"));
                    }
                    self.state = match b {
                        b'\n' if line_empty => State::Done,
                        b'\n' => State::Trailers {
                            seen,
                            line_empty: true,
                        },
                        b'\r' => State::Trailers { seen, line_empty },
                        _ => State::Trailers {
                            seen,
                            line_empty: false,
                        },
                    };
                }
            }
        }
    }
}

/// How many bytes of a run of `left` to take when `n` could be.
fn take(left: u64, n: usize) -> usize {
    usize::try_from(left).map_or(n, |l| l.min(n))
}

/// A chunk-size line (without its LF): hex digits, then extensions after `;`.
fn chunk_size(line: &[u8]) -> Result<u64, Http1Error> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let digits_end = line
        .iter()
        .position(|b| !b.is_ascii_hexdigit())
        .unwrap_or(line.len());
    let digits = &line[..digits_end];
    let rest = &line[digits_end..];
    let rest_ok = rest.is_empty()
        || rest[0] == b';'
        || rest
            .iter()
            .take_while(|b| **b == b' ' || **b == b'\t')
            .count()
            > 0
            && matches!(
                rest.iter().find(|b| **b != b' ' && **b != b'\t'),
                None | Some(b';')
            );
    if digits.is_empty() || !rest_ok {
        return Err(Http1Error::Chunked("a chunk size is not hexadecimal"));
    }
    // Leading zeros are legal; what is left fits in 64 bits or is refused.
    let first = digits
        .iter()
        .position(|b| *b != b'0')
        .unwrap_or(digits.len());
    let significant = &digits[first..];
    if significant.len() > 16 {
        return Err(Http1Error::Chunked(
            "a chunk size is over the limit of 16 hex digits (2^64-1 bytes)",
        ));
    }
    // At most 16 hex digits: the value fits in 64 bits.
    Ok(significant.iter().fold(0u64, |acc, b| {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            _ => b - b'A' + 10,
        };
        (acc << 4) | u64::from(digit)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> ResponseHead {
        parse_response_head(text.as_bytes(), false)
            .unwrap()
            .unwrap()
            .0
    }

    /// Decodes `input` fed in pieces of `step` bytes, reading at most `max` at a time.
    fn decode_all(framing: Framing, input: &[u8], step: usize, max: usize) -> (Vec<u8>, bool) {
        let mut d = BodyDecoder::new(framing);
        let (mut out, mut buf, mut fed) = (Vec::new(), Vec::new(), 0);
        loop {
            let r = d.decode(&buf, max).unwrap();
            out.extend_from_slice(&buf[r.data.clone()]);
            buf.drain(..r.consumed);
            if d.is_done() {
                return (out, true);
            }
            if r.data.is_empty() {
                if fed == input.len() {
                    return (out, false);
                }
                let n = step.min(input.len() - fed);
                buf.extend_from_slice(&input[fed..fed + n]);
                fed += n;
            }
        }
    }

    #[test]
    fn writes_a_request_with_its_length_and_without_header_injection() {
        let mut out = Vec::new();
        let headers = vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            ("Content-Length".to_string(), "999".to_string()),
        ];
        write_request(
            &mut out,
            "POST",
            "/mcp?a=1",
            "127.0.0.1:8080",
            &headers,
            b"{}",
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "POST /mcp?a=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        );
        let mut out = Vec::new();
        write_request(&mut out, "DELETE", "/", "h", &[], b"").unwrap();
        assert_eq!(out, b"DELETE / HTTP/1.1\r\nHost: h\r\n\r\n");
        let evil = vec![("Mcp-Session-Id".to_string(), "a\r\nX-Evil: 1".to_string())];
        assert!(matches!(
            write_request(&mut Vec::new(), "POST", "/", "h", &evil, b""),
            Err(Http1Error::Request(_))
        ));
        let bad_name = vec![("Bad Name".to_string(), "v".to_string())];
        assert!(write_request(&mut Vec::new(), "POST", "/", "h", &bad_name, b"").is_err());
        assert!(write_request(&mut Vec::new(), "POST", "/a b", "h", &[], b"").is_err());
        assert!(write_request(&mut Vec::new(), "PO ST", "/", "h", &[], b"").is_err());
    }

    #[test]
    fn reads_heads_and_their_framing() {
        let h = head("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nrest");
        assert_eq!(
            (h.status, h.framing, h.keep_alive),
            (200, Framing::Chunked, true)
        );
        assert_eq!(
            h.headers[0],
            ("content-type".into(), "text/event-stream".into())
        );
        let h = head("HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n");
        assert_eq!(h.framing, Framing::Length(0));
        let h = head("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\n");
        assert!(!h.keep_alive);
        let h = head("HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\n");
        assert!(!h.keep_alive, "HTTP/1.0 closes unless it says keep-alive");
        let h = head("HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!((h.framing, h.keep_alive), (Framing::UntilClose, false));
        let h = head("HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n");
        assert_eq!(h.framing, Framing::Empty);
        let h = head("HTTP/1.1 100 Continue\r\n\r\n");
        assert!(h.is_interim());
        // Bare LFs, a reason with spaces, none at all, a value's whitespace trimmed.
        let h = head("HTTP/1.1 404 Not  Found Here\nX-A:  v \n\n");
        assert_eq!((h.status, h.headers[0].1.as_str()), (404, "v"));
        assert_eq!(head("HTTP/1.1 500\r\n\r\n").status, 500);
        // The same length twice is one length; two lengths are refused.
        assert_eq!(
            head("HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\n").framing,
            Framing::Length(3)
        );
        for bad in [
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        ] {
            assert!(matches!(
                parse_response_head(bad.as_bytes(), false),
                Err(Http1Error::ContentLength(_))
            ));
        }
        for bad in [
            "HTTP/2 200\r\n\r\n",
            "HTTP/1.1 20 OK\r\n\r\n",
            "SSH-2.0-x\r\n\r\n",
            "HTTP/1.1 2000\r\n\r\n",
        ] {
            assert!(
                matches!(
                    parse_response_head(bad.as_bytes(), false),
                    Err(Http1Error::StatusLine(_))
                ),
                "{bad}"
            );
        }
        for bad in [
            "HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n",
            "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
            "HTTP/1.1 200 OK\r\nBad Name: v\r\n\r\n",
        ] {
            assert!(
                matches!(
                    parse_response_head(bad.as_bytes(), false),
                    Err(Http1Error::HeaderLine(_))
                ),
                "{bad}"
            );
        }
        assert_eq!(
            parse_response_head(b"HTTP/1.1 101 Switching\r\n\r\n", false),
            Err(Http1Error::Switched)
        );
        // Codings: chunked alone (an empty element ignored); anything else refused.
        let h = head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, \r\n\r\n");
        assert_eq!(h.framing, Framing::Chunked);
        for bad in ["gzip, chunked", "gzip", "chunked, chunked"] {
            let text = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: {bad}\r\n\r\n");
            assert!(matches!(
                parse_response_head(text.as_bytes(), false),
                Err(Http1Error::TransferCoding(_))
            ));
        }
        // Suspect framing is read but its connection not reused; close wins over keep-alive.
        let h = head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n");
        assert_eq!((h.framing, h.keep_alive), (Framing::Chunked, false));
        let h =
            head("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert!(!h.keep_alive);
        let h =
            head("HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 1\r\n\r\n");
        assert!(!h.keep_alive);
        let h = head("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\n");
        assert!(h.keep_alive);
        // A later 1.x reads as 1.1; control characters in a value are refused.
        assert_eq!(head("HTTP/1.2 200 OK\r\n\r\n").minor_version, 1);
        assert!(matches!(
            parse_response_head(b"HTTP/1.1 200 OK\r\nA: b\rc\r\n\r\n", false),
            Err(Http1Error::HeaderLine(_))
        ));
    }

    #[test]
    fn a_head_is_awaited_until_complete_and_bounded() {
        assert_eq!(
            parse_response_head(b"HTTP/1.1 200 OK\r\nA: b\r\n", false),
            Ok(None)
        );
        let (h, used) = parse_response_head(b"HTTP/1.1 200 OK\r\n\r\nbody", true)
            .unwrap()
            .unwrap();
        assert_eq!((used, h.framing), (19, Framing::Empty));
        let mut endless = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
        endless.resize(MAX_HEAD + 10, b'a');
        assert_eq!(
            parse_response_head(&endless, false),
            Err(Http1Error::HeadTooLarge)
        );
        let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
        for _ in 0..=MAX_HEADERS {
            many.extend_from_slice(b"A: b\r\n");
        }
        many.extend_from_slice(b"\r\n");
        assert_eq!(
            parse_response_head(&many, false),
            Err(Http1Error::TooManyHeaders)
        );
    }

    #[test]
    fn bytes_that_are_not_http_are_refused_at_once() {
        for (bytes, shown) in [
            (&b"g"[..], "g"),
            (b"garbage\r\n\r\n", "garbage\r"),
            (b"HTTP/2 200\r\n", "HTTP/2 200\r"),
            (b"\r\nHTTP/1.1 200 OK\r\n\r\n", "\r"),
        ] {
            assert_eq!(
                HeadReader::default().read(bytes, false),
                Err(Http1Error::StatusLine(shown.into())),
                "{bytes:?}"
            );
        }
        // A prefix of a status line waits for more.
        for n in 0..=8 {
            assert_eq!(
                HeadReader::default().read(&b"HTTP/1.1 200 OK"[..n], false),
                Ok(None)
            );
        }
        let e = Http1Error::StatusLine("garbage".into()).to_string();
        assert!(e.contains("not HTTP/1.x"), "{e}");
    }

    #[test]
    fn interim_heads_count_against_the_head_cap() {
        let mut flood = Vec::new();
        while flood.len() <= MAX_HEAD {
            flood.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        let mut reader = HeadReader::default();
        let mut at = 0;
        let refused = loop {
            match reader.read(&flood[at..], false) {
                Ok(Some((head, used))) => {
                    assert!(head.is_interim());
                    at += used;
                }
                Ok(None) => panic!("a flood of complete heads never waits"),
                Err(e) => break e,
            }
        };
        assert_eq!(refused, Http1Error::HeadTooLarge);
        assert!(at <= MAX_HEAD);
        // A final head starts the count again.
        let mut reader = HeadReader::default();
        for _ in 0..3 {
            let text = b"HTTP/1.1 100 Continue\r\n\r\n";
            assert!(reader.read(text, false).unwrap().is_some());
        }
        let (head, _) = reader
            .read(b"HTTP/1.1 200 OK\r\n\r\n", false)
            .unwrap()
            .unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(reader.interim, 0);
    }

    #[test]
    fn a_head_fed_a_byte_at_a_time_is_found_once_complete() {
        let text = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\nA: b\n\nbody";
        let mut reader = HeadReader::default();
        let mut found = Vec::new();
        let mut from = 0;
        for n in 1..=text.len() {
            if let Some((head, used)) = reader.read(&text[from..n], false).unwrap() {
                found.push((head.status, from + used));
                from += used;
                if !head.is_interim() {
                    // The body follows: no more heads are read.
                    break;
                }
            }
        }
        assert_eq!(found, vec![(100, 25), (200, 47)]);
    }

    #[test]
    fn chunk_sizes_take_sixteen_hex_digits_and_name_the_limit_past_them() {
        assert_eq!(chunk_size(b"ffffffffffffffff"), Ok(u64::MAX));
        assert_eq!(chunk_size(b"0000000000000000000000a"), Ok(10));
        assert_eq!(chunk_size(b"7FFFFFFFFFFFFFFF\r"), Ok(i64::MAX as u64));
        assert_eq!(chunk_size(b"00"), Ok(0));
        let Err(Http1Error::Chunked(why)) = chunk_size(b"10000000000000000") else {
            panic!()
        };
        assert!(why.contains("16 hex digits"), "{why}");
        assert!(chunk_size(b"x").is_err());
        assert!(chunk_size(b"").is_err());
    }

    #[test]
    fn chunked_bodies_decode_in_any_pieces() {
        let body = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        for step in [1, 2, 3, 7, 64] {
            for max in [1, 4, 1024] {
                let (out, done) = decode_all(Framing::Chunked, body, step, max);
                assert_eq!(
                    (out.as_slice(), done),
                    (&b"hello world"[..], true),
                    "{step} {max}"
                );
            }
        }
        // What follows the body is left alone.
        let mut d = BodyDecoder::new(Framing::Chunked);
        let mut at = 0;
        while !d.is_done() {
            at += d.decode(&body[at..], usize::MAX).unwrap().consumed;
        }
        assert_eq!(&body[at..], b"NEXT");
        // Bare LFs are line ends too.
        let (out, done) = decode_all(Framing::Chunked, b"3\nabc\n0\n\n", 1, 9);
        assert_eq!((out.as_slice(), done), (&b"abc"[..], true));
    }

    #[test]
    fn broken_chunked_framing_is_refused_and_bounded() {
        for bad in [
            &b"zz\r\n"[..],
            b"5\r\nhelloXX",
            b"fffffffffffffffff\r\n",
            b"5 x\r\n",
        ] {
            let mut d = BodyDecoder::new(Framing::Chunked);
            let mut buf = bad;
            let err = loop {
                match d.decode(buf, usize::MAX) {
                    Err(e) => break Some(e),
                    Ok(r) if r.consumed == 0 => break None,
                    Ok(r) => buf = &buf[r.consumed..],
                }
            };
            assert!(
                matches!(err, Some(Http1Error::Chunked(_))),
                "{bad:?}: {err:?}"
            );
        }
        let long = vec![b'1'; MAX_CHUNK_LINE + 1];
        let mut d = BodyDecoder::new(Framing::Chunked);
        assert!(d.decode(&long, 1).is_err());
        let mut d = BodyDecoder::new(Framing::Chunked);
        d.decode(b"0\r\n", 1).unwrap();
        assert!(d.decode(&vec![b'x'; MAX_TRAILERS + 1], 1).is_err());
    }

    #[test]
    fn lengths_and_the_close_end_bodies() {
        let (out, done) = decode_all(Framing::Length(5), b"helloEXTRA", 3, 2);
        assert_eq!((out.as_slice(), done), (&b"hello"[..], true));
        let (out, done) = decode_all(Framing::UntilClose, b"all of it", 4, 3);
        assert_eq!((out.as_slice(), done), (&b"all of it"[..], false));
        let mut d = BodyDecoder::new(Framing::UntilClose);
        assert_eq!(d.end_of_input(), Ok(()));
        assert!(d.is_done());
        let mut d = BodyDecoder::new(Framing::Length(3));
        d.decode(b"ab", 9).unwrap();
        assert_eq!(d.end_of_input(), Err(Http1Error::CutShort));
        assert!(BodyDecoder::new(Framing::Empty).is_done());
    }
}
