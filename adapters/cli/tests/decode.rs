//! `mcpwire decode` on response bodies captured from real servers (the Python SDK's and
//! server-everything), on truncated copies of them, and on hand-made bodies: the parser chosen by
//! content type, the response found by request id, priming events recognised, the same result
//! with any byte split or line ending, and exit code 6 when the body yields no response.
//!
//! Fixtures in `fixtures/decode/`: `NAME.resp.headers.txt` + `NAME.resp.body.bin` pairs (curl
//! exchanges: status line and headers, then the exact de-chunked body) and `everything-http-*.txt`
//! (`curl -i` output: status, headers and body in one file).

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

use common::{assert_contains, mcpwire_with_stdin_maybe_unread, stderr, stdout};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/decode");

/// Runs `mcpwire ARGS`, with `stdin` as its standard input.
fn mcpwire(args: &[&str], stdin: &[u8]) -> Output {
    // The command reads all of stdin before it writes anything; one that fails on its
    // arguments reads none of it.
    mcpwire_with_stdin_maybe_unread(args, stdin)
}

/// `mcpwire decode --content-type TYPE [--request-id ID]` on `body`, given on stdin.
fn decode(content_type: &str, request_id: Option<&str>, body: &[u8]) -> Output {
    let mut args = vec!["decode", "--content-type", content_type];
    if let Some(id) = request_id {
        args.extend(["--request-id", id]);
    }
    mcpwire(&args, body)
}

/// Asserts the exit code, showing both streams when it is wrong.
#[track_caller]
fn assert_exit(o: &Output, code: i32, what: &str) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "{what}\n--- stdout:\n{}--- stderr:\n{}",
        stdout(o),
        stderr(o)
    );
}

/// One captured exchange: the response's status, content type and body.
#[derive(Debug)]
struct Capture {
    name: String,
    status: u16,
    content_type: Option<String>,
    content_length: Option<usize>,
    body: Vec<u8>,
}

impl Capture {
    /// The media type, lowercased, without parameters.
    fn media_type(&self) -> Option<String> {
        self.content_type.as_ref().map(|t| {
            t.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
    }

    fn is_sse(&self) -> bool {
        self.media_type().as_deref() == Some("text/event-stream")
    }

    fn is_json(&self) -> bool {
        self.media_type().as_deref() == Some("application/json")
    }
}

/// Reads a status line and headers (CRLF or LF line ends).
fn parse_head(name: &str, head: &str) -> (u16, Option<String>, Option<usize>) {
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or("");
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{name}: no status in {status_line:?}"));
    let mut content_type = None;
    let mut content_length = None;
    for line in lines {
        let Some((field, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if field.eq_ignore_ascii_case("content-type") {
            content_type = Some(value.to_owned());
        } else if field.eq_ignore_ascii_case("content-length") {
            content_length = Some(value.parse().expect("a numeric content-length"));
        }
    }
    (status, content_type, content_length)
}

/// Every capture in the fixtures directory. Panics on a file it does not know how to read, so
/// that nothing there is skipped unseen.
fn captures() -> Vec<Capture> {
    let mut names: Vec<String> = std::fs::read_dir(FIXTURES)
        .expect("the fixtures directory")
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .into_string()
                .unwrap()
        })
        .collect();
    names.sort();
    let mut out = Vec::new();
    for file in &names {
        let path = Path::new(FIXTURES).join(file);
        if let Some(stem) = file.strip_suffix(".resp.headers.txt") {
            let head = std::fs::read_to_string(&path).unwrap();
            let body_file = format!("{stem}.resp.body.bin");
            let body = std::fs::read(Path::new(FIXTURES).join(&body_file))
                .unwrap_or_else(|e| panic!("{body_file}: {e}"));
            let (status, content_type, content_length) = parse_head(stem, &head);
            out.push(Capture {
                name: stem.to_owned(),
                status,
                content_type,
                content_length,
                body,
            });
        } else if let Some(stem) = file.strip_suffix(".resp.body.bin") {
            assert!(
                names.contains(&format!("{stem}.resp.headers.txt")),
                "{file} has no headers file"
            );
        } else if file.starts_with("everything-http-") && file.ends_with(".txt") {
            let raw = std::fs::read(&path).unwrap();
            let split = raw
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .unwrap_or_else(|| panic!("{file}: no blank line after the headers"));
            let head = String::from_utf8(raw[..split].to_vec()).unwrap();
            let stem = file.trim_end_matches(".txt").trim_end_matches(".sse");
            let (status, content_type, content_length) = parse_head(stem, &head);
            out.push(Capture {
                name: stem.to_owned(),
                status,
                content_type,
                content_length,
                body: raw[split + 4..].to_vec(),
            });
        } else {
            panic!("unexpected fixture {file}");
        }
    }
    out
}

fn capture(name: &str) -> Capture {
    captures()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no capture {name}"))
}

/// What decoding a capture must give.
enum Expect {
    /// The status and headers say there is no body (a 202, a 405 without one, a DELETE's empty
    /// 200); a client must not parse one.
    NoBody,
    /// Decoding with the request's id gives `exit` and prints every one of `lines` (each a whole
    /// output line, trimmed of indentation); decoding without an id gives `exit_any`.
    Decodes {
        request_id: Option<&'static str>,
        exit: i32,
        exit_any: i32,
        lines: &'static [&'static str],
    },
}

const fn ok(request_id: &'static str, lines: &'static [&'static str]) -> Expect {
    Expect::Decodes {
        request_id: Some(request_id),
        exit: 0,
        exit_any: 0,
        lines,
    }
}

/// An error response whose id is `null` (or missing): a response, but not to the request.
const fn null_id_error(request_id: &'static str, lines: &'static [&'static str]) -> Expect {
    Expect::Decodes {
        request_id: Some(request_id),
        exit: 6,
        exit_any: 0,
        lines,
    }
}

/// The expectation for every capture, by name. Every capture must be listed here.
const EXPECTED: &[(&str, Expect)] = &[
    // The Python SDK server, stateless era (2026-07-28).
    (
        "py-2026-07-28-01-server-discover",
        ok(
            "1",
            &[
                "body  application/json, 333 bytes, request id=1",
                "message response id=1 answers-request=yes result",
                "messages: 1, diagnostics: 0, splits: not applicable (a JSON body is parsed whole)",
                "answer: response id=1 (result)",
            ],
        ),
    ),
    (
        "py-2026-07-28-02-tools-list",
        ok("2", &["message response id=2 answers-request=yes result"]),
    ),
    (
        // SSE with CRLF line ends.
        "py-2026-07-28-03-tools-call-progress-sse",
        ok(
            "3",
            &[
                "body  text/event-stream, 592 bytes, request id=3",
                "event  type=message id=(none) data=126 bytes",
                "message notification method=notifications/progress",
                "event  type=message id=(none) data=262 bytes",
                "message response id=3 answers-request=yes result",
                "events: 3, messages: 3, diagnostics: 0, last-event-id: (none), retry: none, \
                 splits: identical, line-ends: identical",
                "answer: response id=3 (result)",
            ],
        ),
    ),
    (
        "py-2026-07-28-04-tools-call-input-required",
        ok("4", &["message response id=4 answers-request=yes result"]),
    ),
    // Error responses carrying the request's id answer it: an error is final.
    (
        "py-2026-07-28-05-missing-mcp-method-header",
        ok(
            "5",
            &[
                "message response id=5 answers-request=yes error -32020 mcp-method header does \
                 not match the request body's method",
            ],
        ),
    ),
    (
        "py-2026-07-28-06-missing-meta",
        ok("6", &["answer: response id=6 (error -32602 params._meta must be an object carrying the required 'io.modelcontextprotocol/protocolVersion' and 'io.modelcontextprotocol/clientCapabilities' envelope keys)"]),
    ),
    (
        "py-2026-07-28-07-unsupported-version",
        ok(
            "7",
            &["message response id=7 answers-request=yes error -32022 Unsupported protocol version"],
        ),
    ),
    (
        "py-2026-07-28-08-method-not-found",
        ok(
            "8",
            &["message response id=8 answers-request=yes error -32601 Method not found"],
        ),
    ),
    (
        "py-2026-07-28-09-initialize-at-modern-header",
        ok("1", &["answer: response id=1 (error -32602 params._meta must be an object carrying the required 'io.modelcontextprotocol/protocolVersion' and 'io.modelcontextprotocol/clientCapabilities' envelope keys)"]),
    ),
    ("py-2026-07-28-10-notification-202", Expect::NoBody),
    ("py-2026-07-28-11-get", Expect::NoBody),
    // The Python SDK server, handshake era, JSON response mode.
    (
        "py-json-2025-11-25-01-initialize",
        ok("1", &["message response id=1 answers-request=yes result"]),
    ),
    ("py-json-2025-11-25-02-notif-initialized", Expect::NoBody),
    (
        "py-json-2025-11-25-03-tools-list",
        ok("2", &["message response id=2 answers-request=yes result"]),
    ),
    (
        // JSON mode: the progress notifications are gone, only the result is left.
        "py-json-2025-11-25-04-tools-call-progress",
        ok(
            "3",
            &[
                "body  application/json, 159 bytes, request id=3",
                "message response id=3 answers-request=yes result",
                "messages: 1, diagnostics: 0, splits: not applicable (a JSON body is parsed whole)",
            ],
        ),
    ),
    (
        "py-json-2025-11-25-05-no-session-header",
        null_id_error(
            "4",
            &[
                "message response id=null answers-request=no error -32600 Bad Request: Missing \
                 session ID",
                "answer: none",
            ],
        ),
    ),
    (
        "py-json-2025-11-25-06-unknown-session",
        null_id_error(
            "5",
            &["message response id=null answers-request=no error -32600 Session not found"],
        ),
    ),
    ("py-json-2025-11-25-07-delete", Expect::NoBody),
    (
        "py-json-2025-11-25-08-after-delete",
        null_id_error(
            "6",
            &["message response id=null answers-request=no error -32600 Session not found"],
        ),
    ),
    (
        "py-nohdr-12-server-discover-without-version-header",
        null_id_error("12", &["answer: none"]),
    ),
    // The Python SDK server, handshake era, SSE response mode (CRLF line ends).
    (
        "py-sse-2025-11-25-01-initialize",
        ok(
            "1",
            &[
                "body  text/event-stream, 268 bytes, request id=1",
                "message response id=1 answers-request=yes result",
                "events: 1, messages: 1, diagnostics: 0, last-event-id: (none), retry: none, \
                 splits: identical, line-ends: identical",
            ],
        ),
    ),
    ("py-sse-2025-11-25-02-notif-initialized", Expect::NoBody),
    (
        "py-sse-2025-11-25-03-tools-list",
        ok("2", &["message response id=2 answers-request=yes result"]),
    ),
    (
        "py-sse-2025-11-25-04-tools-call-progress",
        ok(
            "3",
            &[
                "message notification method=notifications/progress",
                "message response id=3 answers-request=yes result",
                "events: 3, messages: 3, diagnostics: 0, last-event-id: (none), retry: none, \
                 splits: identical, line-ends: identical",
            ],
        ),
    ),
    (
        "py-sse-2025-11-25-05-no-session-header",
        null_id_error("4", &["answer: none"]),
    ),
    (
        "py-sse-2025-11-25-06-unknown-session",
        null_id_error("5", &["answer: none"]),
    ),
    ("py-sse-2025-11-25-07-delete", Expect::NoBody),
    (
        "py-sse-2025-11-25-08-after-delete",
        null_id_error("6", &["answer: none"]),
    ),
    // The Python SDK server, stateless handshake-era mode.
    (
        "py-stateless-json-2025-11-25-01-initialize",
        ok("1", &["message response id=1 answers-request=yes result"]),
    ),
    (
        "py-stateless-json-2025-11-25-02-tools-list-without-init",
        ok("2", &["message response id=2 answers-request=yes result"]),
    ),
    (
        "py-stateless-json-2025-11-25-03-elicit-no-backchannel",
        ok(
            "3",
            &["message response id=3 answers-request=yes error -32600 Cannot send 'elicitation/create': this transport context has no back-channel for server-initiated requests."],
        ),
    ),
    // server-everything (TS SDK): SSE with LF line ends, each stream opened by a priming event.
    (
        "everything-http-01-initialize-req-2026-07-28",
        ok(
            "1",
            &[
                "event  type=message id=a42dec47-83f3-472c-bdee-718b0cbdc74d data=0 bytes \
                 (priming: id only)",
                "event  type=message id=78e1a4a5-3543-412a-9f5e-47097c75caec data=2018 bytes",
                "message response id=1 answers-request=yes result",
                "events: 2, messages: 1, diagnostics: 0, \
                 last-event-id: 78e1a4a5-3543-412a-9f5e-47097c75caec, retry: none, \
                 splits: identical, line-ends: identical",
            ],
        ),
    ),
    ("everything-http-02-initialized-202", Expect::NoBody),
    (
        // The standalone GET stream: a server request (roots/list, id 0) and no response at all.
        "everything-http-03-get-stream",
        Expect::Decodes {
            request_id: None,
            exit: 6,
            exit_any: 6,
            lines: &[
                "event  type=message id=0825fbe7-a170-4628-a2ca-0cc968116ccf data=46 bytes",
                "message request id=0 method=roots/list",
                "events: 1, messages: 1, diagnostics: 0, \
                 last-event-id: 0825fbe7-a170-4628-a2ca-0cc968116ccf, retry: none, \
                 splits: identical, line-ends: identical",
                "answer: none",
            ],
        },
    ),
    (
        "everything-http-04-tools-list",
        ok(
            "2",
            &[
                "event  type=message id=60f96dc1-a53f-4ae1-a730-fe3071b685bb data=0 bytes \
                 (priming: id only)",
                "message response id=2 answers-request=yes result",
            ],
        ),
    ),
    (
        "everything-http-05-tools-call-progress",
        ok(
            "3",
            &[
                "event  type=message id=a423771c-9188-4063-aead-284afe838f5e data=0 bytes \
                 (priming: id only)",
                "event  type=message id=4d609168-8c8e-4dd6-a9ec-7183bf583025 data=106 bytes",
                "message notification method=notifications/progress",
                "message response id=3 answers-request=yes result",
                "events: 4, messages: 3, diagnostics: 0, \
                 last-event-id: 9f668d73-9836-4c1f-80c3-52d34c4d3fc4, retry: none, \
                 splits: identical, line-ends: identical",
            ],
        ),
    ),
    (
        // `application/json; charset=utf-8`, and an error response with no id member at all.
        "everything-http-06-unknown-session",
        null_id_error(
            "4",
            &[
                "message response id=null answers-request=no error -32000 Bad Request: No valid \
                 session ID provided",
            ],
        ),
    ),
    (
        "everything-http-07-bad-protocol-version-header",
        null_id_error("5", &["answer: none"]),
    ),
    (
        "everything-http-08-accept-json-only",
        null_id_error("6", &["answer: none"]),
    ),
    ("everything-http-09-delete-session", Expect::NoBody),
    (
        "everything-http-10-after-delete",
        null_id_error("7", &["answer: none"]),
    ),
    (
        // A probe whose request id the capture does not record: any response will do.
        "everything-http-11-server-discover-probe-2026-07-28",
        Expect::Decodes {
            request_id: None,
            exit: 0,
            exit_any: 0,
            lines: &[
                "message response id=null answers-request=yes error -32000 Bad Request: Server \
                 not initialized",
            ],
        },
    ),
    (
        "everything-http-12-server-discover-no-version-header",
        Expect::Decodes {
            request_id: None,
            exit: 0,
            exit_any: 0,
            lines: &["answer: response id=null (error -32000 Bad Request: Server not initialized)"],
        },
    ),
];

fn expected(name: &str) -> &'static Expect {
    &EXPECTED
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("capture {name} has no expectation in EXPECTED"))
        .1
}

/// The output's lines, indentation removed.
fn lines(o: &Output) -> Vec<String> {
    stdout(o).lines().map(|l| l.trim().to_owned()).collect()
}

#[track_caller]
fn assert_lines(o: &Output, wanted: &[&str], what: &str) {
    let got = lines(o);
    for line in wanted {
        assert!(
            got.iter().any(|l| l == line),
            "{what}: no line {line:?} in\n{}",
            stdout(o)
        );
    }
}

#[test]
fn every_capture_decodes_as_expected() {
    let all = captures();
    // Every capture has an expectation and every expectation a capture.
    let names: BTreeSet<&str> = all.iter().map(|c| c.name.as_str()).collect();
    let listed: BTreeSet<&str> = EXPECTED.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, listed);
    assert_eq!(all.len(), 43);
    let (mut sse, mut json, mut no_body) = (0, 0, 0);
    for c in &all {
        match expected(&c.name) {
            Expect::NoBody => {
                no_body += 1;
                assert!(c.body.is_empty(), "{}: a body after all", c.name);
                assert!(
                    c.status == 202 || c.content_length == Some(0) || c.content_type.is_none(),
                    "{}: the headers promise a body: {c:?}",
                    c.name
                );
                // A content type on an empty body says nothing: it is not a JSON text.
                if let Some(t) = &c.content_type {
                    let o = decode(t, None, &c.body);
                    assert_exit(&o, 6, &c.name);
                    assert_contains(&stdout(&o), "diagnostic not-a-message: not JSON");
                }
            }
            Expect::Decodes {
                request_id,
                exit,
                exit_any,
                lines: wanted,
            } => {
                let content_type = c.content_type.as_deref().unwrap_or_else(|| {
                    panic!("{}: a body without a content type", c.name);
                });
                assert!(!c.body.is_empty(), "{}: no body", c.name);
                let o = decode(content_type, *request_id, &c.body);
                assert_exit(&o, *exit, &c.name);
                assert_lines(&o, wanted, &c.name);
                let out = stdout(&o);
                if c.is_sse() {
                    sse += 1;
                    assert!(
                        out.contains("splits: identical, line-ends: identical"),
                        "{}: {out}",
                        c.name
                    );
                } else {
                    assert!(c.is_json(), "{}: {content_type}", c.name);
                    json += 1;
                    assert!(!out.contains("event  "), "{}: {out}", c.name);
                }
                if *exit == 6 {
                    assert!(
                        stderr(&o).contains("the body yields no response"),
                        "{}: {}",
                        c.name,
                        stderr(&o)
                    );
                }
                let o = decode(content_type, None, &c.body);
                assert_exit(&o, *exit_any, &format!("{} without --request-id", c.name));
            }
        }
    }
    assert_eq!((sse, json, no_body), (8, 27, 8));
}

/// `body` with every line end (CRLF, LF or lone CR) replaced by `end`.
fn with_line_ends(body: &[u8], end: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'\r' if body.get(i + 1) == Some(&b'\n') => {
                out.extend_from_slice(end);
                i += 2;
            }
            b'\r' | b'\n' => {
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

fn sse_captures() -> Vec<(Capture, Option<&'static str>)> {
    captures()
        .into_iter()
        .filter(|c| c.is_sse())
        .map(|c| {
            let id = match expected(&c.name) {
                Expect::Decodes { request_id, .. } => *request_id,
                Expect::NoBody => panic!("{}: an event stream without a body", c.name),
            };
            (c, id)
        })
        .collect()
}

#[test]
fn crlf_lf_and_cr_bodies_decode_identically() {
    let all = sse_captures();
    assert!(all
        .iter()
        .any(|(c, _)| c.body.windows(2).any(|w| w == b"\r\n")));
    assert!(all.iter().any(|(c, _)| !c.body.contains(&b'\r')));
    for (c, id) in all {
        let reference = decode(c.content_type.as_deref().unwrap(), id, &c.body);
        // The first line gives the body's length, which the line ends change.
        let rest = |o: &Output| lines(o)[1..].to_vec();
        for end in [&b"\n"[..], b"\r\n", b"\r"] {
            let variant = with_line_ends(&c.body, end);
            let o = decode("text/event-stream", id, &variant);
            assert_eq!(
                o.status.code(),
                reference.status.code(),
                "{} with {end:?}",
                c.name
            );
            assert_eq!(rest(&o), rest(&reference), "{} with {end:?}", c.name);
        }
    }
}

#[test]
fn an_event_stream_cut_inside_its_last_event_yields_no_response() {
    for (c, id) in sse_captures() {
        let body = &c.body;
        let end: &[u8] = if body.ends_with(b"\r\n\r\n") {
            b"\r\n"
        } else {
            assert!(
                body.ends_with(b"\n\n"),
                "{}: not ended by a blank line",
                c.name
            );
            b"\n"
        };
        // Where the blank line ending the last event starts, and where that event starts.
        let blank = body.len() - end.len();
        let separator = [end, end].concat();
        let start = body[..blank - end.len()]
            .windows(separator.len())
            .rposition(|w| w == separator.as_slice())
            .map_or(0, |p| p + separator.len());
        let middle = (start + blank) / 2;
        assert!(start < middle && middle < blank, "{}", c.name);
        let whole = decode("text/event-stream", id, body);
        let events = |o: &Output| lines(o).iter().filter(|l| l.starts_with("event  ")).count();
        // Cut in the middle of a line of the last event, and right before its blank line: the
        // last line is then complete, but the event is still not finished.
        for (cut, how) in [(middle, "mid-event"), (blank, "before the blank line")] {
            let what = format!("{} cut {how} at {cut}", c.name);
            let o = decode("text/event-stream", id, &body[..cut]);
            assert_exit(&o, 6, &what);
            let out = stdout(&o);
            assert!(
                out.contains("diagnostic  unfinished-event: SSE stream ended inside an event"),
                "{what}: {out}"
            );
            assert!(out.contains("answer: none"), "{what}: {out}");
            assert!(
                out.contains("splits: identical, line-ends: identical"),
                "{what}: {out}"
            );
            assert_eq!(events(&o), events(&whole) - 1, "{what}: {out}");
            assert!(
                stderr(&o).contains("the body yields no response"),
                "{what}: {}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn a_json_body_cut_short_is_a_parse_diagnostic() {
    let mut seen = 0;
    for c in captures() {
        if !c.is_json() || c.body.is_empty() {
            continue;
        }
        seen += 1;
        let cut = &c.body[..c.body.len() / 2];
        let o = decode(c.content_type.as_deref().unwrap(), None, cut);
        assert_exit(&o, 6, &c.name);
        let out = stdout(&o);
        assert!(
            out.contains("diagnostic not-a-message: not JSON: EOF while parsing"),
            "{}: {out}",
            c.name
        );
        assert!(out.contains("messages: 0, diagnostics: 1"), "{out}");
    }
    assert_eq!(seen, 27);
}

#[test]
fn only_a_response_to_another_request_is_no_response() {
    let c = capture("py-sse-2025-11-25-04-tools-call-progress");
    let o = decode("text/event-stream", Some("4"), &c.body);
    assert_exit(&o, 6, "SSE, other id");
    assert_lines(
        &o,
        &[
            "message response id=3 answers-request=no result",
            "answer: none",
        ],
        "SSE, other id",
    );
    assert_contains(&stderr(&o), "no response for request 4");
    let c = capture("py-2026-07-28-02-tools-list");
    let o = decode("application/json", Some("99"), &c.body);
    assert_exit(&o, 6, "JSON, other id");
    // A string id is not a number id, and a number is matched in its canonical spelling only.
    let body = b"data: {\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{}}\n\n";
    let o = decode("text/event-stream", Some("7"), body);
    assert_exit(&o, 0, "a numeric id echoed as a string");
    assert_lines(
        &o,
        &["message response id=\"7\" answers-request=yes result"],
        "",
    );
    assert_exit(&decode("text/event-stream", Some("007"), body), 6, "007");
    assert_exit(&decode("text/event-stream", Some("abc"), body), 6, "abc");
    let body = b"data: {\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":{}}\n\n";
    assert_exit(&decode("text/event-stream", Some("abc"), body), 0, "abc");
}

#[test]
fn an_error_response_for_the_request_is_its_answer() {
    let c = capture("py-2026-07-28-08-method-not-found");
    let o = decode("application/json", Some("8"), &c.body);
    assert_exit(&o, 0, "JSON error");
    // On an event stream too, after a notification (an error is final).
    let body = b": keep-alive\n\
        data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n\
        data: {\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32603,\"message\":\"boom\"}}\n\n";
    let o = decode("text/event-stream", Some("7"), body);
    assert_exit(&o, 0, "SSE error");
    assert_lines(
        &o,
        &[
            "message notification method=notifications/progress",
            "message response id=7 answers-request=yes error -32603 boom",
            "answer: response id=7 (error -32603 boom)",
        ],
        "SSE error",
    );
}

#[test]
fn the_content_type_alone_chooses_the_parser() {
    let sse = capture("py-sse-2025-11-25-04-tools-call-progress").body;
    for t in ["text/html", "text/plain", "application/json-seq", ""] {
        let o = decode(t, Some("3"), &sse);
        assert_exit(&o, 2, t);
        assert_contains(&stderr(&o), "unsupported content type");
        assert!(stdout(&o).is_empty());
    }
    assert_exit(&mcpwire(&["decode"], &sse), 2, "no --content-type");
    // Parameters and case do not matter.
    for t in [
        "Text/Event-Stream; charset=utf-8",
        "TEXT/EVENT-STREAM;charset=UTF-8",
    ] {
        assert_exit(&decode(t, Some("3"), &sse), 0, t);
    }
    // An event stream labelled as JSON is not sniffed and repaired: it is not a JSON text.
    let o = decode("application/json", Some("3"), &sse);
    assert_exit(&o, 6, "SSE labelled JSON");
    assert_contains(&stdout(&o), "diagnostic not-a-message: not JSON");
    // Nor is a JSON body an event stream: it has no blank line, so no event ends.
    let json = capture("py-2026-07-28-02-tools-list").body;
    let o = decode("text/event-stream", Some("2"), &json);
    assert_exit(&o, 6, "JSON labelled SSE");
    assert_contains(&stdout(&o), "unfinished-event");
}

#[test]
fn stream_details_batches_comments_and_other_event_types() {
    let body = b"\xEF\xBB\xBF: a comment\n\
        event: endpoint\ndata: /messages\n\n\
        id: ev-1\nretry: 300\ndata:\n\n\
        id: ev-2\ndata: [{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"},\n\
        data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}, 5]\n\n\
        data: {not json\n\n";
    let o = decode("text/event-stream", Some("1"), body);
    assert_exit(&o, 0, "details");
    assert_lines(
        &o,
        &[
            "event  type=endpoint id=(none) data=9 bytes",
            "diagnostic unexpected-event-type: event type \"endpoint\" is not a JSON-RPC message",
            "event  type=message id=ev-1 data=0 bytes (priming: id only)",
            "message notification method=notifications/message",
            "message response id=1 answers-request=yes result",
            "events: 4, messages: 2, diagnostics: 3, last-event-id: ev-2, retry: 300 ms, \
             splits: identical, line-ends: identical",
        ],
        "details",
    );
    // The batch's third element, and an event whose data is not JSON.
    let out = stdout(&o);
    assert!(
        out.contains("diagnostic not-a-message: not a JSON object; text: [{\"jsonrpc\""),
        "{out}"
    );
    assert!(
        out.contains("diagnostic not-a-message: not JSON: key must be a string"),
        "{out}"
    );
    // A JSON batch.
    let body = br#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"no"}}]"#;
    let o = decode("application/json", Some("2"), body);
    assert_exit(&o, 0, "batch");
    assert_lines(
        &o,
        &[
            "body  application/json, 91 bytes, batch of 2, request id=2",
            "message notification method=a",
            "message response id=2 answers-request=yes error 1 no",
        ],
        "batch",
    );
    // An empty event stream yields nothing.
    let o = decode("text/event-stream", None, b"");
    assert_exit(&o, 6, "empty");
    assert_lines(&o, &["answer: none"], "empty");
}

#[test]
fn a_file_argument_and_no_server_needed() {
    let file = Path::new(FIXTURES).join("py-sse-2025-11-25-04-tools-call-progress.resp.body.bin");
    let file = file.to_str().unwrap();
    let body = std::fs::read(file).unwrap();
    let from_stdin = decode("text/event-stream", Some("3"), &body);
    // A server that cannot start is never started.
    let o = mcpwire(
        &[
            "--stdio",
            "/nonexistent/server",
            "decode",
            "--content-type",
            "text/event-stream",
            "--request-id",
            "3",
            file,
        ],
        b"",
    );
    assert_exit(&o, 0, "from a file");
    assert_eq!(stdout(&o), stdout(&from_stdin));
    let o = mcpwire(
        &[
            "decode",
            "--content-type",
            "text/event-stream",
            "/nonexistent/body",
        ],
        b"",
    );
    assert_exit(&o, 2, "a missing file");
    assert_contains(&stderr(&o), "cannot read");
}

#[test]
fn json_report() {
    let c = capture("everything-http-05-tools-call-progress");
    let o = mcpwire(
        &[
            "decode",
            "--json",
            "--content-type",
            "text/event-stream",
            "--request-id",
            "3",
        ],
        &c.body,
    );
    assert_exit(&o, 0, "json");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let items = v["items"].as_array().unwrap();
    assert_eq!(items.len(), 7);
    assert_eq!(items[0]["kind"], "event");
    assert_eq!(items[0]["priming"], true);
    assert_eq!(items[0]["id"], "a423771c-9188-4063-aead-284afe838f5e");
    assert_eq!(items[2]["message"], "notification");
    assert_eq!(items[6]["message"], "response");
    assert_eq!(items[6]["id"], 3);
    assert_eq!(items[6]["answersRequest"], true);
    assert_eq!(items[6]["outcome"], "result");
    let s = &v["summary"];
    assert_eq!(s["events"], 4);
    assert_eq!(s["messages"], 3);
    assert_eq!(s["diagnostics"], 0);
    assert_eq!(s["lastEventId"], "9f668d73-9836-4c1f-80c3-52d34c4d3fc4");
    assert_eq!(s["retryMs"], Value::Null);
    assert_eq!(s["splits"], "identical");
    assert_eq!(s["lineEnds"], "identical");
    assert_eq!(s["requestId"], 3);
    assert_eq!(s["answered"], true);
    assert_eq!(s["answerItem"], 6);
    // A truncated body: not answered, the same exit code.
    let o = mcpwire(
        &["decode", "--json", "--content-type", "text/event-stream"],
        &c.body[..c.body.len() - 3],
    );
    assert_exit(&o, 6, "json, truncated");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["answered"], false);
    let last = v["items"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["diagnostic"], "unfinished-event");
}

#[test]
fn help_lists_decode_and_its_exit_code() {
    let o = mcpwire(&["--help"], b"");
    assert_exit(&o, 0, "help");
    let help = stdout(&o);
    assert!(help.contains("\n  decode "), "{help}");
    assert!(
        help.contains("\n    6  no-response  decode: the body yields no response"),
        "{help}"
    );
    let o = mcpwire(&["decode", "--help"], b"");
    assert_contains(&stdout(&o), "--request-id");
}
