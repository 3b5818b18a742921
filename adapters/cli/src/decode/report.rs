//! `mcpwire decode`'s report: the text lines and the JSON document printed for one decoding.

use std::fmt::Write as _;

use mcpwire_core::jsonrpc::{Message, Response};
use serde_json::{json, Value};

use super::decoding::{describe_message, show_id, show_response_id, Format, Item, Report, Wanted};

fn outcome(r: &Response) -> String {
    match &r.outcome {
        Ok(_) => "result".to_owned(),
        Err(e) => format!("error {} {}", e.code, e.message),
    }
}

/// Whether an event with empty data is a priming event (it carries an id) or just empty.
fn empty_event_kind(id: &str) -> &'static str {
    if id.is_empty() {
        "empty, skipped"
    } else {
        "priming: id only"
    }
}

/// The outcome of the check.
pub(crate) struct Verdict {
    /// Index (in the trace's items) of the first response answering the request.
    pub(crate) answer: Option<usize>,
    /// How many responses answer it.
    answers: usize,
}

impl Verdict {
    pub(crate) fn of(report: &Report, wanted: &Wanted) -> Self {
        let mut answer = None;
        let mut answers = 0;
        for (i, item) in report.trace.items.iter().enumerate() {
            if let Item::Message(Message::Response(r)) = item {
                if wanted.matches(r) {
                    answer.get_or_insert(i);
                    answers += 1;
                }
            }
        }
        Verdict { answer, answers }
    }
}

fn count(items: &[Item]) -> (usize, usize, usize) {
    let mut n = (0, 0, 0);
    for item in items {
        match item {
            Item::Event { .. } => n.0 += 1,
            Item::Message(_) => n.1 += 1,
            Item::Diagnostic(_) => n.2 += 1,
        }
    }
    n
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

pub(crate) fn text_report(
    report: &Report,
    wanted: &Wanted,
    verdict: &Verdict,
    format: Format,
    len: usize,
) -> String {
    let mut out = String::new();
    let request = match wanted {
        Wanted::Any => "request: any (no --request-id)".to_owned(),
        w => format!("request id={}", w.label()),
    };
    let _ = match (format, report.batch) {
        (Format::Sse, _) => writeln!(out, "body  text/event-stream, {len} bytes, {request}"),
        (Format::Json, Some(n)) => writeln!(
            out,
            "body  application/json, {len} bytes, batch of {n}, {request}"
        ),
        (Format::Json, None) => writeln!(out, "body  application/json, {len} bytes, {request}"),
    };
    for item in &report.trace.items {
        let _ = match item {
            Item::Event {
                event_type,
                id,
                data,
            } => {
                let note = if data.is_empty() && event_type == "message" {
                    format!(" ({})", empty_event_kind(id))
                } else {
                    String::new()
                };
                writeln!(
                    out,
                    "event  type={event_type} id={} data={} bytes{note}",
                    show_id(id),
                    data.len()
                )
            }
            Item::Message(Message::Response(r)) => writeln!(
                out,
                "  message response id={} answers-request={} {}",
                show_response_id(r),
                yes_no(wanted.matches(r)),
                outcome(r)
            ),
            Item::Message(m) => writeln!(out, "  message {}", describe_message(m)),
            Item::Diagnostic(d) if d.is_stream() => {
                writeln!(out, "diagnostic  {}: {}", d.kind(), d.text())
            }
            Item::Diagnostic(d) => writeln!(out, "  diagnostic {}: {}", d.kind(), d.text()),
        };
    }
    let (events, messages, diagnostics) = count(&report.trace.items);
    let differences = |d: &[String]| {
        if d.is_empty() {
            "identical".to_owned()
        } else {
            format!("{} differ", d.len())
        }
    };
    let _ = match format {
        Format::Sse => writeln!(
            out,
            "events: {events}, messages: {messages}, diagnostics: {diagnostics}, \
             last-event-id: {}, retry: {}, splits: {}, line-ends: {}",
            show_id(&report.trace.last_event_id),
            report
                .trace
                .retry
                .map(|r| format!("{r} ms"))
                .unwrap_or_else(|| "none".to_owned()),
            differences(&report.split_differences),
            differences(&report.line_end_differences),
        ),
        Format::Json => writeln!(
            out,
            "messages: {messages}, diagnostics: {diagnostics}, splits: not applicable \
             (a JSON body is parsed whole)"
        ),
    };
    for d in report
        .split_differences
        .iter()
        .chain(&report.line_end_differences)
    {
        let _ = writeln!(out, "  differs: {d}");
    }
    let _ = match verdict.answer.map(|i| &report.trace.items[i]) {
        Some(Item::Message(Message::Response(r))) => {
            let more = if verdict.answers > 1 {
                format!(", {} responses match: the first is final", verdict.answers)
            } else {
                String::new()
            };
            writeln!(
                out,
                "answer: response id={} ({}){more}",
                show_response_id(r),
                outcome(r)
            )
        }
        _ => writeln!(out, "answer: none"),
    };
    out
}

pub(crate) fn json_report(
    report: &Report,
    wanted: &Wanted,
    verdict: &Verdict,
    content_type: &str,
    len: usize,
) -> Value {
    let items: Vec<Value> = report
        .trace
        .items
        .iter()
        .map(|item| match item {
            Item::Event {
                event_type,
                id,
                data,
            } => json!({
                "kind": "event",
                "type": event_type,
                "id": (!id.is_empty()).then_some(id),
                "dataBytes": data.len(),
                "priming": data.is_empty() && event_type == "message" && !id.is_empty(),
            }),
            Item::Message(m) => message_json(m, wanted),
            Item::Diagnostic(d) => json!({
                "kind": "diagnostic",
                "diagnostic": d.kind(),
                "text": d.text(),
            }),
        })
        .collect();
    let (events, messages, diagnostics) = count(&report.trace.items);
    let is_sse = report.compared > 0;
    let state = |d: &[String]| {
        if !is_sse {
            "not applicable"
        } else if d.is_empty() {
            "identical"
        } else {
            "differ"
        }
    };
    let differences: Vec<&String> = report
        .split_differences
        .iter()
        .chain(&report.line_end_differences)
        .collect();
    json!({
        "items": items,
        "summary": {
            "contentType": content_type,
            "bytes": len,
            "events": events,
            "messages": messages,
            "diagnostics": diagnostics,
            "batch": report.batch,
            "lastEventId": (!report.trace.last_event_id.is_empty())
                .then_some(&report.trace.last_event_id),
            "retryMs": report.trace.retry,
            "splits": state(&report.split_differences),
            "lineEnds": state(&report.line_end_differences),
            "decodingsCompared": report.compared,
            "differences": differences,
            "requestId": wanted.to_json(),
            "answered": verdict.answer.is_some(),
            "answerItem": verdict.answer,
            "answers": verdict.answers,
        },
    })
}

fn message_json(m: &Message, wanted: &Wanted) -> Value {
    match m {
        Message::Request(r) => json!({
            "kind": "message",
            "message": "request",
            "id": r.id,
            "method": r.method,
        }),
        Message::Notification(n) => json!({
            "kind": "message",
            "message": "notification",
            "method": n.method,
        }),
        Message::Response(r) => {
            let mut v = json!({
                "kind": "message",
                "message": "response",
                "id": r.id,
                "answersRequest": wanted.matches(r),
                "outcome": if r.outcome.is_ok() { "result" } else { "error" },
            });
            if let Err(e) = &r.outcome {
                v["error"] = json!({"code": e.code, "message": e.message});
            }
            v
        }
    }
}
