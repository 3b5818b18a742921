//! What `--verbose` prints of each HTTP exchange: `⇢ POST http://host/mcp` as it goes out and
//! `⇠ 200 text/event-stream session=1f2e3d4c… (POST)` when its response head comes. The URL
//! comes without credentials, no header is shown, and the session id is cut short.

use mcpwire::{HttpExchangeNote, HttpVersion};

/// The line for one step of an exchange.
pub(super) fn exchange_line(note: &HttpExchangeNote) -> Option<String> {
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
}
