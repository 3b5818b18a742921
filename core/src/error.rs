//! Why an HTTP exchange failed, and the authentication challenge a server sent.

use std::fmt;

/// An HTTP exchange that did not give what the request needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    /// The status, when a response head arrived.
    pub status: Option<u16>,
    /// The response's content type, if any.
    pub content_type: Option<String>,
    /// The start of the body, as text (at most 512 bytes).
    pub body_excerpt: String,
    /// The parsed `WWW-Authenticate` challenge (401, 403).
    pub challenge: Option<AuthChallenge>,
    /// What went wrong, in words.
    pub reason: String,
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "HTTP {status}: {}", self.reason)?,
            None => write!(f, "HTTP exchange failed: {}", self.reason)?,
        }
        if !self.body_excerpt.is_empty() {
            write!(f, ": {}", self.body_excerpt)?;
        }
        Ok(())
    }
}

impl std::error::Error for HttpError {}

/// A `WWW-Authenticate` challenge: its scheme and parameters (for example
/// `Bearer resource_metadata="…", scope="a b", error="insufficient_scope"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthChallenge {
    /// The scheme (`Bearer`).
    pub scheme: String,
    /// The parameters, in order, names lower-cased.
    pub params: Vec<(String, String)>,
}

impl AuthChallenge {
    /// The value of parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Parses the first challenge of a `WWW-Authenticate` value.
    pub fn parse(value: &str) -> Option<AuthChallenge> {
        let value = value.trim();
        let (scheme, mut rest) = match value.find(char::is_whitespace) {
            Some(i) => (&value[..i], value[i..].trim_start()),
            None => (value, ""),
        };
        if scheme.is_empty() {
            return None;
        }
        let mut params = Vec::new();
        while !rest.is_empty() {
            let Some(eq) = rest.find('=') else { break };
            let name = rest[..eq]
                .trim()
                .trim_start_matches(',')
                .trim()
                .to_ascii_lowercase();
            rest = rest[eq + 1..].trim_start();
            let value;
            if let Some(quoted) = rest.strip_prefix('"') {
                let mut out = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, n)) = chars.next() {
                                out.push(n);
                            }
                        }
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => out.push(c),
                    }
                }
                value = out;
                rest = &quoted[end.min(quoted.len())..];
            } else {
                let end = rest.find(',').unwrap_or(rest.len());
                value = rest[..end].trim().to_owned();
                rest = &rest[end..];
            }
            rest = rest.trim_start().trim_start_matches(',').trim_start();
            if !name.is_empty() {
                params.push((name, value));
            }
        }
        Some(AuthChallenge {
            scheme: scheme.to_owned(),
            params,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bearer_challenges() {
        let c = AuthChallenge::parse(
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://x/.well-known/oauth-protected-resource", error_description="need \"more\"""#,
        )
        .unwrap();
        assert_eq!(c.scheme, "Bearer");
        assert_eq!(c.param("error"), Some("insufficient_scope"));
        assert_eq!(c.param("scope"), Some("files:read files:write"));
        assert_eq!(c.param("error_description"), Some("need \"more\""));
        assert!(c
            .param("resource_metadata")
            .unwrap()
            .ends_with("protected-resource"));
        let c = AuthChallenge::parse("Bearer realm=x, scope=a").unwrap();
        assert_eq!(c.param("realm"), Some("x"));
        assert_eq!(c.param("scope"), Some("a"));
        assert_eq!(AuthChallenge::parse("Basic").unwrap().params, vec![]);
        assert!(AuthChallenge::parse("").is_none());
    }
}
