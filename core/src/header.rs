//! The rules every request header obeys before any HTTP backend sees it.
//!
//! Header names and values reach a request from many hands: the user (`--header`, a host's
//! config file, [`HttpConfig::headers`](crate::config::HttpConfig::headers)), an authorization
//! (a token a server issued), and the server itself (its `Mcp-Session-Id`, an SSE event id sent
//! back as `Last-Event-ID`). Whoever gave it, a header that HTTP cannot carry is refused here,
//! with a [`HeaderError`] naming it, instead of being altered or reaching a backend that would
//! fail on it (libcurl's wrapper panics on a value that is not UTF-8; another client would
//! send a lone CR and start a second header).
//!
//! - [`check`]: a name is an HTTP token; a value holds visible ASCII, spaces and tabs only
//!   (RFC 9110 §5.5, without the obsolete non-ASCII bytes: they have no meaning a server can
//!   rely on, and MCP's own headers are ASCII).
//! - [`check_configured`]: the same, and not a header the HTTP client owns: the framing
//!   (`Content-Length`, `Transfer-Encoding`, …) and `Host`, which the URL sets. A user's
//!   `Content-Length: 5` would otherwise make a server read five bytes and take the rest as a
//!   second request.
//! - [`check_session_id`]: an `Mcp-Session-Id` is visible ASCII, 0x21–0x7E, as the
//!   specification says.

use std::fmt;

/// The `User-Agent` every request of mcpwire carries, unless the user gives their own.
pub const USER_AGENT: &str = concat!("mcpwire/", env!("CARGO_PKG_VERSION"));

/// Headers that frame a message or manage its connection: the HTTP client's own, never a
/// user's (RFC 9110 §7.6.1 and §6.4, RFC 9112 §6 and §9.6).
pub const FRAMING: [&str; 9] = [
    "Content-Length",
    "Transfer-Encoding",
    "Connection",
    "Upgrade",
    "TE",
    "Trailer",
    "Keep-Alive",
    "Proxy-Connection",
    "Expect",
];

/// A request header that cannot be sent as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderError {
    /// The name is empty or holds a byte that is not allowed in an HTTP token.
    #[error("the header name {} is not valid: {}", Shown(name), what)]
    Name {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        what: String,
    },
    /// The value holds a byte HTTP cannot carry (a control character, a non-ASCII
    /// character), or, for `Mcp-Session-Id`, a space or nothing at all.
    #[error("the value of header {} is not valid: {}", Shown(name), what)]
    Value {
        /// The header's name.
        name: String,
        /// What is wrong with the value, with the offending character made visible and its
        /// byte offset.
        what: String,
    },
    /// A header the HTTP client sets itself: one that frames the message or manages the
    /// connection (see [`FRAMING`]), or `Host`.
    #[error("the header {} cannot be set: {}", Shown(name), why)]
    Reserved {
        /// The header's name, as given.
        name: String,
        /// Why it is the client's own.
        why: &'static str,
    },
}

impl HeaderError {
    /// The name of the header refused.
    pub fn name(&self) -> &str {
        match self {
            HeaderError::Name { name, .. }
            | HeaderError::Value { name, .. }
            | HeaderError::Reserved { name, .. } => name,
        }
    }
}

/// A name or value shown in an error: printable ASCII as it is, anything else escaped, and at
/// most 80 characters, so that a header never drives the terminal that shows its error.
struct Shown<'a>(&'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.0.chars().enumerate() {
            if i == 80 {
                return f.write_str("…");
            }
            if c == ' ' || c.is_ascii_graphic() {
                write!(f, "{c}")?;
            } else {
                write!(f, "{}", c.escape_default())?;
            }
        }
        Ok(())
    }
}

/// A byte of an HTTP token (a header name, a method).
pub fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Checks a header any request may carry: a token for a name; visible ASCII, spaces and tabs
/// for a value.
pub fn check(name: &str, value: &str) -> Result<(), HeaderError> {
    check_name(name)?;
    check_value(name, value, |b| b == b'\t' || (0x20..0x7f).contains(&b))
}

/// Checks a header a user or a configuration gives: [`check`], and not one the HTTP client
/// sets itself (the framing of [`FRAMING`], and `Host`).
pub fn check_configured(name: &str, value: &str) -> Result<(), HeaderError> {
    check(name, value)?;
    if name.eq_ignore_ascii_case("host") {
        return Err(HeaderError::Reserved {
            name: name.to_owned(),
            why: "it is set by the URL: put the host in the URL instead",
        });
    }
    if FRAMING.iter().any(|f| f.eq_ignore_ascii_case(name)) {
        return Err(HeaderError::Reserved {
            name: name.to_owned(),
            why: "the HTTP client frames each message and manages its connections itself \
                  (a value given here would make the server read the bytes differently)",
        });
    }
    Ok(())
}

/// Checks the `Mcp-Session-Id` a server assigned: one or more visible ASCII characters,
/// 0x21–0x7E.
pub fn check_session_id(value: &str) -> Result<(), HeaderError> {
    const NAME: &str = "Mcp-Session-Id";
    if value.is_empty() {
        return Err(HeaderError::Value {
            name: NAME.into(),
            what: "it is empty (a session id is visible ASCII, 0x21-0x7E)".into(),
        });
    }
    check_value(NAME, value, |b| (0x21..0x7f).contains(&b)).map_err(|e| match e {
        HeaderError::Value { name, what } => HeaderError::Value {
            name,
            what: format!("{what} (a session id is visible ASCII, 0x21-0x7E)"),
        },
        other => other,
    })
}

fn check_name(name: &str) -> Result<(), HeaderError> {
    if name.is_empty() {
        return Err(HeaderError::Name {
            name: String::new(),
            what: "it is empty".into(),
        });
    }
    match name
        .char_indices()
        .find(|(_, c)| !c.is_ascii() || !is_token_byte(*c as u8))
    {
        None => Ok(()),
        Some((at, c)) => Err(HeaderError::Name {
            name: name.to_owned(),
            what: format!(
                "{} at byte {at} (a name is letters, digits and !#$%&'*+-.^_`|~)",
                described(c)
            ),
        }),
    }
}

fn check_value(name: &str, value: &str, allowed: impl Fn(u8) -> bool) -> Result<(), HeaderError> {
    match value
        .char_indices()
        .find(|(_, c)| !c.is_ascii() || !allowed(*c as u8))
    {
        None => Ok(()),
        Some((at, c)) => Err(HeaderError::Value {
            name: name.to_owned(),
            what: format!("{} at byte {at}", described(c)),
        }),
    }
}

/// A character in words, escaped so that it prints as itself on no terminal.
fn described(c: char) -> String {
    match c {
        ' ' => "a space".into(),
        c if c.is_ascii_control() => format!("the control character {:?}", c),
        c if c.is_ascii() => format!("{c:?}"),
        // What a backend reads from a byte that is not UTF-8 (a raw Latin-1 `0xE9`, say).
        '\u{fffd}' => "a byte outside ASCII that is not UTF-8 (read as U+FFFD)".into(),
        c => format!(
            "the non-ASCII character U+{:04X} (header values are ASCII: encode it first)",
            c as u32
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_tokens() {
        assert!(check("X-Team", "a").is_ok());
        for bad in ["", "X Team", "X:Team", "X\u{e9}", "X\r\nY", "(x)"] {
            let e = check(bad, "a").unwrap_err();
            assert!(matches!(e, HeaderError::Name { .. }), "{bad:?}: {e}");
        }
    }

    #[test]
    fn values_are_visible_ascii_spaces_and_tabs() {
        assert!(check("X", "a b\tc ~!").is_ok());
        assert!(check("X", "").is_ok());
        for bad in [
            "caf\u{e9}",
            "a\rb",
            "a\nb",
            "a\0",
            "\u{7f}",
            "\u{85}",
            "\u{1b}]0;t\u{7}",
        ] {
            let e = check("X-Name", bad).unwrap_err();
            assert!(matches!(e, HeaderError::Value { .. }), "{bad:?}: {e}");
            assert_eq!(e.name(), "X-Name");
            // The message never carries the raw control or non-ASCII character.
            let shown = e.to_string();
            assert!(
                shown
                    .chars()
                    .all(|c| c == ' ' || c.is_ascii_graphic() || c == '…'),
                "{shown}"
            );
        }
        let e = check("X-Name", "caf\u{e9}").unwrap_err().to_string();
        assert!(e.contains("U+00E9 ") && e.contains("byte 3"), "{e}");
    }

    #[test]
    fn framing_and_host_are_the_clients_own() {
        for name in FRAMING
            .iter()
            .chain(&["host", "HOST", "content-length", "te"])
        {
            let e = check_configured(name, "5").unwrap_err();
            assert!(matches!(e, HeaderError::Reserved { .. }), "{name}");
        }
        let host = check_configured("Host", "example.com")
            .unwrap_err()
            .to_string();
        assert!(host.contains("set by the URL"), "{host}");
        assert!(check_configured("Authorization", "Bearer x").is_ok());
        assert!(check_configured("X-Team", "caf\u{e9}").is_err());
    }

    #[test]
    fn session_ids_are_visible_ascii() {
        assert!(check_session_id("abc-123_~!").is_ok());
        for bad in [
            "",
            "a b",
            "a\tb",
            "caf\u{e9}",
            "caf\u{fffd}",
            "\u{7f}",
            "x\u{0}",
        ] {
            let e = check_session_id(bad).unwrap_err();
            assert_eq!(e.name(), "Mcp-Session-Id");
            assert!(e.to_string().contains("0x21-0x7E"), "{e}");
        }
    }

    #[test]
    fn every_byte_is_judged_without_panicking() {
        for b in 0u8..=255 {
            let s = String::from_utf8_lossy(&[b'a', b, b'z']).into_owned();
            let ok = b == b'\t' || (0x20..0x7f).contains(&b);
            assert_eq!(check("X", &s).is_ok(), ok, "byte {b:#04x}");
            assert_eq!(check(&s, "v").is_ok(), is_token_byte(b), "byte {b:#04x}");
            assert_eq!(check_session_id(&s).is_ok(), (0x21..0x7f).contains(&b));
        }
    }
}
