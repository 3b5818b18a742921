//! A command's failure: the exit code it ends with, its words on stderr and, with `--json`, its
//! JSON object on stdout; and the words of the library's errors as this command line says them.

use std::process::ExitCode;

use mcpwire::core::error::HttpError;
use mcpwire::core::{CallError, LocalError};
use mcpwire::Error;
use serde_json::{json, Value};

use crate::{exit_codes, output};

pub(crate) mod hints;

/// A failure with the exit code it maps to.
pub(crate) struct Failure {
    /// The exit code.
    pub(crate) code: u8,
    /// What went wrong, in words (nothing more is printed on stderr when it is empty).
    pub(crate) message: String,
    /// The server's JSON-RPC error, when that is what it was: with `--json`, printed as it is.
    pub(crate) error: Option<Value>,
    /// Already said on stderr as it happened (a stop request): the message is for `--json`.
    pub(crate) told: bool,
}

impl Failure {
    /// A failure with exit code `code` and `message`.
    pub(crate) fn new(code: u8, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
            error: None,
            told: false,
        }
    }

    /// What kind of failure, for `--json`, from its exit code.
    pub(crate) fn kind(&self) -> &'static str {
        exit_codes::kind(self.code)
    }

    /// The failure as `--json` prints it: `{"error": …}`, the server's JSON-RPC error as it
    /// came, any other with its kind and message.
    pub(crate) fn to_json(&self) -> Value {
        let error = match &self.error {
            Some(e) => e.clone(),
            None => json!({"kind": self.kind(), "message": self.message}),
        };
        json!({ "error": error })
    }
}

/// The exit code a command's outcome ends with.
pub(crate) fn code_of(outcome: &Result<u8, Failure>) -> u8 {
    match outcome {
        Ok(code) => *code,
        Err(f) => f.code,
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match &e {
            // A configuration this client cannot honour (a header it cannot send among them).
            Error::Client(
                mcpwire::core::ClientError::Config(_)
                | mcpwire::core::ClientError::Header(_)
                | mcpwire::core::ClientError::Url(_),
            )
            | Error::HttpOptions { .. }
            | Error::FeatureMissing { .. } => exit_codes::USAGE,
            Error::Spawn { .. } | Error::Handshake { .. } => exit_codes::CONNECT,
            Error::Schema { .. } => exit_codes::UNVERIFIED,
            e if e.is_timeout() => exit_codes::TIMEOUT,
            // Held until the server answered what had to go first (notifications/initialized)
            // and never sent: a timeout whichever one fired, the call's or that answer's.
            Error::Call(CallError::Local(LocalError::NotSent { .. })) => exit_codes::TIMEOUT,
            _ => exit_codes::CALL,
        };
        Failure {
            code,
            message: message_of(&e),
            error: e.server_error().and_then(|s| serde_json::to_value(s).ok()),
            told: false,
        }
    }
}

/// The words for an error: its own (how to give a token said with this command line's
/// options), with an HTTP error body's excerpt that is not text summarised instead of dumped.
pub(crate) fn message_of(e: &Error) -> String {
    let mut text = hints::token_in_cli_words(e.to_string());
    if e.is_timeout() {
        // The limit by the name a person gave it.
        text = text
            .replace("(its timeout)", "(--timeout)")
            .replace("; it may have run", "; the call may have run");
    }
    let text = match http_error(e) {
        Some(http) => match output::not_text(&http.body_excerpt) {
            Some(summary) => text.replace(http.body_excerpt.as_str(), summary),
            None => text,
        },
        None => text,
    };
    // A hint with this program's flags (`--cacert`) for the library's options.
    hints::in_cli_words(text, http_error(e))
}

/// The HTTP failure an error carries, if any.
fn http_error(e: &Error) -> Option<&HttpError> {
    match e {
        Error::Call(c) | Error::Handshake { error: c, .. } => match c {
            CallError::Local(LocalError::Http(h)) => Some(h),
            CallError::Local(LocalError::MaybeExecuted { http: Some(h), .. }) => Some(h),
            _ => None,
        },
        Error::MaybeExecuted { http: Some(h), .. } => Some(h),
        _ => None,
    }
}

/// Ends with `f`: its words on stderr and, with `json`, its JSON object on stdout.
pub(crate) fn finish(f: Failure, json: bool) -> ExitCode {
    if json {
        output::json(&f.to_json());
    }
    if !f.message.is_empty() && !f.told {
        errln!("mcpwire: {}", f.message);
    }
    ExitCode::from(f.code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_as_json_keeps_the_server_s_error_as_it_came() {
        let f = Failure::new(exit_codes::TIMEOUT, "the call timed out");
        assert_eq!(
            f.to_json(),
            json!({"error": {"kind": "timeout", "message": "the call timed out"}})
        );
        let rpc = mcpwire::core::jsonrpc::ErrorObject::new(-32602, "bad");
        let f = Failure::from(Error::Call(CallError::Server(rpc)));
        assert_eq!(f.code, exit_codes::CALL);
        assert_eq!(
            f.to_json(),
            json!({"error": {"code": -32602, "message": "bad"}})
        );
        assert_eq!(
            Failure::new(exit_codes::INTERRUPTED, "").to_json()["error"]["kind"],
            "interrupted"
        );
    }
}
