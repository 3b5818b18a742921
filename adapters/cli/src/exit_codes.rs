//! The exit codes, each with the kind `--json` names it by, and their table in `--help`.

/// Success.
pub(crate) const OK: u8 = 0;
/// The tool ran and reported an error (an `isError` result).
pub(crate) const TOOL_ERROR: u8 = 1;
/// Bad arguments, or a tool the server does not list.
pub(crate) const USAGE: u8 = 2;
/// The server could not be started, or its handshake failed or timed out.
pub(crate) const CONNECT: u8 = 3;
/// The call failed, or stdout could not be written.
pub(crate) const CALL: u8 = 4;
/// The call timed out.
pub(crate) const TIMEOUT: u8 = 5;
/// `decode`: the body yields no response for the request.
pub(crate) const NO_RESPONSE: u8 = 6;
/// A skill's file, or a result, does not match what it must.
pub(crate) const UNVERIFIED: u8 = 7;
/// SIGHUP: the terminal closed.
pub(crate) const HUNG_UP: u8 = 129;
/// Ctrl-C.
pub(crate) const INTERRUPTED: u8 = 130;
/// SIGTERM.
pub(crate) const TERMINATED: u8 = 143;

/// The table `--help` shows after the commands: each code, its kind and what it means.
pub(crate) const EXIT_CODES: &str = "\
Exit codes, each with its kind in --json's {\"error\": {\"kind\", \"message\"}}:
    0               success
    1               the tool ran and reported an error (an isError result)
    2  usage        bad arguments, or a tool the server does not list
    3  connect      the server could not be started, or its handshake failed or timed out
    4  call         the call failed (the connection ended, it was refused before it was
                    sent, it may have run and was not sent again), or stdout could not be
                    written; a JSON-RPC error from the server is printed as it came,
                    {\"error\": {\"code\", \"message\", \"data\"}}, in place of a kind
    5  timeout      the call timed out, or it waited for the server to answer
                    notifications/initialized and was never sent
    6  no-response  decode: the body yields no response for the request (or decodes
                    differently when split another way)
    7  unverified   skills NAME: a file of the skill does not match the skill's entry (size,
                    digest, SKILL.md frontmatter); nothing of the skill is printed. call: the
                    result breaks the tool's outputSchema (no structuredContent, or one that
                    does not match it)
  129  hung-up      SIGHUP, the terminal closed (on Windows the console): as after Ctrl-C
  130  interrupted  Ctrl-C, after a call in flight was cancelled (notifications/cancelled, or
                    tasks/cancel for a task) and the server was closed gracefully; any second
                    request to stop ends at once (watch, which runs until Ctrl-C, exits 0)
  141               stdout's reader went away (as head does once it has its lines): the
                    server was closed gracefully, then the command ended by SIGPIPE, as
                    other tools do
  143  terminated   SIGTERM (kill, timeout, a supervisor; on Windows Ctrl-Break): as after
                    Ctrl-C

What a server sends (tool text, error messages, log messages, its stderr, an HTTP error
body) is printed with its control characters made visible (\\x1b, \\r, \\u{85}, bidi and
zero-width characters), on a terminal or not; --json escapes them (\\u0085); a body that is
not text is summarised, never dumped.

With --config FILE, `servers` starts its enabled servers and tells each one's state as it
settles (exit 0 whatever they are). With several enabled servers there (and no --server),
`tools` lists them all as SERVER__TOOL, each server's as it gets ready, and `call
SERVER__TOOL` (or SERVER/TOOL) starts that server alone: a server that fails is told with its
reason, its command line or URL and the end of its stderr, and `tools` exits 0 when at least
one server answered, else 3.

With no --stdio or --http, commands run against the demo server built into this binary;
demo takes a guided tour of it.
decode reads a captured response body and connects to no server.";

/// The kind of failure an exit code is, as `--json` names it (`{"error": {"kind", …}}`).
pub(crate) fn kind(code: u8) -> &'static str {
    match code {
        USAGE => "usage",
        CONNECT => "connect",
        TIMEOUT => "timeout",
        NO_RESPONSE => "no-response",
        UNVERIFIED => "unverified",
        INTERRUPTED => "interrupted",
        TERMINATED => "terminated",
        HUNG_UP => "hung-up",
        _ => "call",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kind `--json` gives a failure is the one the exit codes' table gives its code.
    #[test]
    fn each_code_s_kind_is_the_one_help_lists() {
        let rows = EXIT_CODES
            .lines()
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .filter(|l| !l[..5].trim().is_empty());
        let mut checked = 0;
        for row in rows {
            let code: u8 = row[..5].trim().parse().expect("a code");
            let kind = row[5..20].trim();
            if !kind.is_empty() {
                assert_eq!(super::kind(code), kind, "{row}");
                checked += 1;
            }
        }
        assert_eq!(checked, 9);
    }
}
