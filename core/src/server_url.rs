//! The rule a server's URL must meet before anything is sent: `http://` or `https://` (in any
//! case), a host, a port that is a number up to 65535 when one is written, and no character a
//! URL cannot carry as it is (a space, a control character, anything outside ASCII). Checked
//! by [`Connection::http`](crate::Connection::http), and by the adapter before any IO, so
//! that `127.0.0.1:8000/mcp`, `htp://…` or a trailing space fail with words that say what is
//! wrong instead of an HTTP client's ("invalid format", "the response head is not HTTP",
//! "invalid uri character").

/// A server URL that breaks the rule: which URL (its credentials and secret-looking query
/// values redacted) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{url}` cannot be a server's URL: {}", problem_text(url, problem))]
#[non_exhaustive]
pub struct UrlError {
    /// The URL as it may be shown (see [`redact_url`](crate::error::redact_url)).
    pub url: String,
    /// What is wrong with it.
    pub problem: UrlProblem,
}

/// What is wrong with a server URL.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlProblem {
    /// The URL is empty.
    Empty,
    /// No scheme: `127.0.0.1:8000/mcp`, `localhost:8000/mcp`.
    NoScheme,
    /// A scheme other than `http` or `https` (`ftp`, `htp`, `ws`).
    Scheme(String),
    /// No host: `http:///mcp`, `http://:8000/mcp`, `http:/host/mcp`.
    NoHost,
    /// A port that is not a number from 0 to 65535.
    Port(String),
    /// A character a URL cannot carry as it is, at this character offset (from 0).
    Character {
        /// The character.
        character: char,
        /// Its offset, in characters.
        at: usize,
    },
}

fn problem_text(url: &str, problem: &UrlProblem) -> String {
    const RULE: &str = "a server's URL is http:// or https:// and a host, such as \
                        http://127.0.0.1:8000/mcp";
    match problem {
        UrlProblem::Empty => format!("it is empty ({RULE})"),
        UrlProblem::NoScheme => {
            format!("it has no scheme: write http://{url} (or https://{url} for TLS)")
        }
        UrlProblem::Scheme(scheme) => {
            format!("its scheme `{scheme}` is neither http nor https ({RULE})")
        }
        UrlProblem::NoHost => format!("it names no host ({RULE})"),
        UrlProblem::Port(port) => {
            format!("its port `{port}` is not a number from 0 to 65535")
        }
        UrlProblem::Character { character, at } => {
            let what = match character {
                ' ' => "a space".to_owned(),
                c if c.is_whitespace() || c.is_control() => format!("{c:?}"),
                c => format!("`{c}` (U+{:04X})", u32::from(*c)),
            };
            let chars = url.chars().count();
            if *at == 0 {
                format!("it starts with {what}: remove it")
            } else if *at + 1 >= chars && (character.is_whitespace() || character.is_control()) {
                format!("it ends with {what}: remove it")
            } else {
                format!(
                    "it holds {what} at character {}, which a URL cannot carry as it is \
                     (percent-encode it)",
                    at + 1
                )
            }
        }
    }
}

/// Checks `url` against the rule of the module: `Ok` for a URL an HTTP client can be given.
pub fn check_url(url: &str) -> Result<(), UrlError> {
    problem_of(url).map_or(Ok(()), |problem| {
        Err(UrlError {
            url: crate::error::redact_url(url),
            problem,
        })
    })
}

fn problem_of(url: &str) -> Option<UrlProblem> {
    if url.is_empty() {
        return Some(UrlProblem::Empty);
    }
    let bad = |c: char| c.is_whitespace() || c.is_control() || !c.is_ascii();
    if let Some((at, character)) = url.chars().enumerate().find(|(_, c)| bad(*c)) {
        return Some(UrlProblem::Character { character, at });
    }
    let Some((scheme, rest)) = url.split_once(':') else {
        return Some(UrlProblem::NoScheme);
    };
    let is_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    // `localhost:8000/mcp` reads as the scheme `localhost`: a port after the colon says it is
    // a host.
    let port_follows = rest.starts_with(|c: char| c.is_ascii_digit());
    if !is_scheme || (port_follows && !rest.starts_with("//")) {
        return Some(UrlProblem::NoScheme);
    }
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Some(UrlProblem::Scheme(scheme.to_owned()));
    }
    let Some(rest) = rest.strip_prefix("//") else {
        return Some(UrlProblem::NoHost);
    };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = match host_port.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((host, after)) => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None if after.is_empty() => (host, None),
                None => return Some(UrlProblem::NoHost),
            },
            None => return Some(UrlProblem::NoHost),
        },
        None => match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        },
    };
    if host.is_empty() {
        return Some(UrlProblem::NoHost);
    }
    // Empty means the scheme's default; otherwise digits only (no sign), up to 65535.
    let port_ok = |p: &str| {
        p.is_empty() || (p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok())
    };
    match port {
        Some(p) if !port_ok(p) => Some(UrlProblem::Port(p.to_owned())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_and_https_urls_with_a_host_pass() {
        for url in [
            "http://127.0.0.1:8000/mcp",
            "https://example.com/mcp",
            "HTTPS://Example.com",
            "http://[::1]:8080/mcp?x=1#f",
            "http://user:pw@h:1/",
            "http://h:/mcp",
            "https://h/a%20b",
        ] {
            assert_eq!(check_url(url), Ok(()), "{url}");
        }
    }

    #[test]
    fn each_broken_rule_is_named() {
        let cases = [
            ("", UrlProblem::Empty),
            ("127.0.0.1:8000/mcp", UrlProblem::NoScheme),
            ("localhost:8000/mcp", UrlProblem::NoScheme),
            ("example.com/mcp", UrlProblem::NoScheme),
            ("htp://h/mcp", UrlProblem::Scheme("htp".into())),
            ("ftp://h/mcp", UrlProblem::Scheme("ftp".into())),
            ("ws://h/mcp", UrlProblem::Scheme("ws".into())),
            ("http:///mcp", UrlProblem::NoHost),
            ("http://:8000/mcp", UrlProblem::NoHost),
            ("http:/h/mcp", UrlProblem::NoHost),
            ("http://[::1/mcp", UrlProblem::NoHost),
            ("http://h:99999/mcp", UrlProblem::Port("99999".into())),
            ("http://h:8o/mcp", UrlProblem::Port("8o".into())),
            ("http://h:+80/mcp", UrlProblem::Port("+80".into())),
            (
                "http://h/mcp ",
                UrlProblem::Character {
                    character: ' ',
                    at: 12,
                },
            ),
            (
                " http://h/mcp",
                UrlProblem::Character {
                    character: ' ',
                    at: 0,
                },
            ),
            (
                "http://h/a\u{e9}",
                UrlProblem::Character {
                    character: '\u{e9}',
                    at: 10,
                },
            ),
            (
                "http://h/\n",
                UrlProblem::Character {
                    character: '\n',
                    at: 9,
                },
            ),
        ];
        for (url, problem) in cases {
            let err = check_url(url).expect_err(url);
            assert_eq!(err.problem, problem, "{url}");
        }
    }

    #[test]
    fn the_words_name_the_url_and_the_rule_never_its_credentials() {
        let said = |url: &str| check_url(url).unwrap_err().to_string();
        let text = said("127.0.0.1:8000/mcp");
        assert!(
            text.starts_with("`127.0.0.1:8000/mcp` cannot be a server's URL"),
            "{text}"
        );
        assert!(text.contains("write http://127.0.0.1:8000/mcp"), "{text}");
        let text = said("ftp://user:secret@h/mcp");
        assert!(text.contains("`ftp`") && !text.contains("secret"), "{text}");
        assert!(text.contains("http:// or https://"), "{text}");
        let text = said("http://h/mcp ");
        assert!(text.contains("ends with a space"), "{text}");
        let text = said("http://h/a b");
        assert!(text.contains("a space at character 11"), "{text}");
    }
}
