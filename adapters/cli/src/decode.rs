//! `mcpwire decode`: the receiving side's acceptance check for one captured HTTP response body.
//!
//! The body is decoded by its content type, never by sniffing: `text/event-stream` with the SSE
//! decoders the client uses, `application/json` as one JSON text. Each event and each JSON-RPC
//! message is listed, with whether it answers the request. An event stream is then decoded again
//! with other byte splits (1 byte, 7 bytes, pseudo-random) and other line endings (LF, CRLF, CR):
//! the result must not depend on them. The check passes when the body yields the response to the
//! request (a result or an error: both are final) and every decoding agrees.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::exit_codes;
use crate::failure::Failure;

mod decoding;
mod report;

use decoding::{decode_json, decode_sse, Format, Wanted};
use report::{json_report, text_report, Verdict};

/// Arguments of `mcpwire decode`.
#[derive(Args, Debug)]
pub struct DecodeArgs {
    /// The body's Content-Type: `text/event-stream` or `application/json` (parameters such as
    /// `; charset=utf-8` allowed). It alone chooses the parser.
    #[arg(long, value_name = "TYPE")]
    content_type: String,
    /// The id of the request the body should answer. An integer also matches the same number
    /// echoed as a string. Without it, any response passes.
    #[arg(long, value_name = "ID")]
    request_id: Option<String>,
    /// Print a JSON report (items and a summary) instead of lines.
    #[arg(long)]
    pub(crate) json: bool,
    /// The captured body, exactly as received after any transfer encoding (default: stdin).
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
}

/// Runs `decode` and turns its outcome into the exit code.
pub fn main(args: &DecodeArgs) -> ExitCode {
    match run(args) {
        Ok(code) => ExitCode::from(code),
        // With --json, the report already says the body yields no response.
        Err(f) => {
            let json = args.json && f.code != exit_codes::NO_RESPONSE;
            crate::failure::finish(f, json)
        }
    }
}

fn run(args: &DecodeArgs) -> Result<u8, Failure> {
    let format = Format::of(&args.content_type)?;
    let wanted = Wanted::parse(args.request_id.as_deref());
    let body = read_body(args.file.as_ref())?;
    let report = match format {
        Format::Sse => decode_sse(&body),
        Format::Json => decode_json(&body),
    };
    let verdict = Verdict::of(&report, &wanted);
    if args.json {
        let v = json_report(&report, &wanted, &verdict, &args.content_type, body.len());
        crate::output::json(&v);
    } else {
        out!(
            "{}",
            text_report(&report, &wanted, &verdict, format, body.len())
        );
    }
    let mut problems = Vec::new();
    if verdict.answer.is_none() {
        problems.push(match &wanted {
            Wanted::Any => "the body yields no response".to_owned(),
            w => format!("the body yields no response for request {}", w.label()),
        });
    }
    if !report.split_differences.is_empty() || !report.line_end_differences.is_empty() {
        problems.push("its decoding depends on how the bytes were split or ended".to_owned());
    }
    if problems.is_empty() {
        Ok(exit_codes::OK)
    } else {
        Err(Failure::new(
            exit_codes::NO_RESPONSE,
            format!("decode: {}", problems.join("; ")),
        ))
    }
}

fn read_body(file: Option<&PathBuf>) -> Result<Vec<u8>, Failure> {
    match file {
        Some(path) => std::fs::read(path).map_err(|e| {
            Failure::new(
                exit_codes::USAGE,
                format!("decode: cannot read {}: {e}", path.display()),
            )
        }),
        None => {
            let mut body = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut body)
                .map_err(|e| {
                    Failure::new(exit_codes::USAGE, format!("decode: cannot read stdin: {e}"))
                })?;
            Ok(body)
        }
    }
}
