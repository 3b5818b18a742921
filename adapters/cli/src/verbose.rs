//! What `--verbose` prints of a connection: every frame in and out, the server's stderr, each
//! step of a stdio server's close as it is taken, and each HTTP exchange: `⇢ POST
//! http://host/mcp` as it goes out and `⇠ 200 text/event-stream session=1f2e3d4c… (POST)` when
//! its response head comes. The URL comes without credentials, no header is shown, and the
//! session id is cut short. And `--max-message-size`, the other option of every connection.

use std::sync::Arc;

use mcpwire::core::tap::Direction;
use mcpwire::{ConnectOptions, HttpExchangeNote, HttpVersion, ProcessAction, ShutdownTimeouts};

use crate::output;

/// Sets the connection's `--verbose` hooks: every frame in and out, the server's stderr
/// (dimmed on a terminal), each HTTP exchange, each step of a stdio server's close. `who`
/// names the server on each line when several run at once.
pub(crate) fn observe(o: &mut ConnectOptions, who: Option<&str>) {
    let dim = output::stderr_is_terminal();
    let framed = who.map(|w| format!("{w} ")).unwrap_or_default();
    o.observer = Some(Box::new(move |d: Direction, b: &[u8]| {
        let arrow = match d {
            Direction::Outgoing => "→",
            Direction::Incoming => "←",
        };
        errln!("{framed}{arrow} {}", String::from_utf8_lossy(b));
    }));
    let stderr = format!("{}: ", who.unwrap_or("server"));
    o.on_stderr = Some(Arc::new(move |line: &str| {
        output::errln_dim(&format!("{stderr}{line}"), dim);
    }));
    let named = who.map(|w| format!("{w}: ")).unwrap_or_default();
    let exchange = named.clone();
    o.on_http_exchange = Some(Arc::new(move |note: &HttpExchangeNote| {
        if let Some(line) = exchange_line(note) {
            errln!("{exchange}{line}");
        }
    }));
    let waits = o.shutdown;
    o.on_process_action = Some(Arc::new(move |action| {
        if let Some(line) = process_step(action, waits) {
            errln!("· {named}{line}");
        }
    }));
}

/// `--max-message-size`: the longest stdio line, JSON body and SSE event taken.
pub(crate) fn cap_messages(o: &mut ConnectOptions, max: Option<usize>) {
    if let Some(max) = max {
        o.max_line = max;
        o.http.max_json_body = max;
        o.http.max_event = max;
    }
}

/// The line for one step of an exchange.
pub(crate) fn exchange_line(note: &HttpExchangeNote) -> Option<String> {
    Some(match note {
        HttpExchangeNote::Request {
            method,
            url,
            session,
        } => format!("⇢ {method} {url}{}", session_part(session.as_deref())),
        HttpExchangeNote::Response {
            method,
            status,
            content_type,
            session,
            version,
            reused_connection,
            ..
        } => {
            let kind = content_type
                .as_deref()
                .map(|c| format!(" {}", c.split(';').next().unwrap_or("").trim()))
                .unwrap_or_default();
            let session = session_part(session.as_deref());
            let version = match version {
                Some(HttpVersion::Http2) => ", HTTP/2",
                Some(HttpVersion::Http3) => ", HTTP/3",
                _ => "",
            };
            let reused = if *reused_connection {
                ", reused connection"
            } else {
                ""
            };
            format!("⇠ {status}{kind}{session} ({method}{version}{reused})")
        }
        HttpExchangeNote::Queued {
            method,
            url,
            waiting,
        } => format!("⋯ {method} {url} waits for a free connection ({waiting} waiting)"),
        HttpExchangeNote::Failed {
            method, message, ..
        } => format!("⇠ {method} failed: {message}"),
        _ => return None,
    })
}

/// ` session=` and the id's first eight characters (enough to tell sessions apart).
fn session_part(session: Option<&str>) -> String {
    match session {
        Some(id) if id.chars().count() > 8 => {
            format!(" session={}…", id.chars().take(8).collect::<String>())
        }
        Some(id) => format!(" session={id}"),
        None => String::new(),
    }
}

/// The `--verbose` line for a step a stdio connection took with its server process, as it is
/// taken: the close's escalation (stdin's end, SIGTERM, SIGKILL) and a new start.
pub(crate) fn process_step(action: ProcessAction, waits: ShutdownTimeouts) -> Option<String> {
    Some(match action {
        ProcessAction::CloseStdin => format!(
            "stdin closed (end of file): the server has {:?} to exit",
            waits.after_close_stdin
        ),
        ProcessAction::Terminate if cfg!(windows) => {
            "the server is still running: its job object ended (every process in it)".into()
        }
        ProcessAction::Terminate => format!(
            "the server is still running: SIGTERM sent to its process group, {:?} before SIGKILL",
            waits.after_terminate
        ),
        ProcessAction::Kill if cfg!(windows) => "the server's job object ended".into(),
        ProcessAction::Kill => "SIGKILL sent to the server's process group".into(),
        // A new process is started only when the era probe went unanswered (or the server
        // exited during it): told here, before its frames, whether or not it then answers.
        ProcessAction::SpawnAgain => "restarting the server: it did not answer the era probe \
                                      (server/discover); a new process gets initialize"
            .into(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_step_of_an_exchange_in_one_line() {
        let request = HttpExchangeNote::Request {
            method: "POST",
            url: "http://host/mcp".into(),
            session: Some("0123456789abcdef".into()),
        };
        assert_eq!(
            exchange_line(&request).unwrap(),
            "⇢ POST http://host/mcp session=01234567…"
        );
        let response = HttpExchangeNote::Response {
            method: "POST",
            url: "http://host/mcp".into(),
            status: 200,
            content_type: Some("text/event-stream; charset=utf-8".into()),
            session: Some("abc".into()),
            version: Some(mcpwire::HttpVersion::Http2),
            reused_connection: true,
        };
        assert_eq!(
            exchange_line(&response).unwrap(),
            "⇠ 200 text/event-stream session=abc (POST, HTTP/2, reused connection)"
        );
        let bare = HttpExchangeNote::Response {
            method: "GET",
            url: "http://host/mcp".into(),
            status: 405,
            content_type: None,
            session: None,
            version: None,
            reused_connection: false,
        };
        assert_eq!(exchange_line(&bare).unwrap(), "⇠ 405 (GET)");
        let failed = HttpExchangeNote::Failed {
            method: "DELETE",
            url: "http://host/mcp".into(),
            message: "connection refused".into(),
        };
        assert_eq!(
            exchange_line(&failed).unwrap(),
            "⇠ DELETE failed: connection refused"
        );
    }

    #[test]
    #[cfg(unix)]
    fn each_step_of_a_close_in_words() {
        let waits = ShutdownTimeouts::default();
        assert_eq!(
            process_step(ProcessAction::CloseStdin, waits).as_deref(),
            Some("stdin closed (end of file): the server has 2s to exit")
        );
        assert_eq!(
            process_step(ProcessAction::Terminate, waits).as_deref(),
            Some(
                "the server is still running: SIGTERM sent to its process group, \
                 2s before SIGKILL"
            )
        );
        assert_eq!(
            process_step(ProcessAction::Kill, waits).as_deref(),
            Some("SIGKILL sent to the server's process group")
        );
    }
}
