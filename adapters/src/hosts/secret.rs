//! Keeping secrets out of what is printed: which headers carry credentials, and the redacted
//! view of a loaded server kept beside its values.

use std::collections::BTreeMap;

/// What stands in for a secret in anything printed.
pub(crate) const REDACTED: &str = "***";

/// Whether a header's value is a credential by its name alone (`Authorization`, cookies, API
/// keys, tokens), whatever it holds.
pub fn is_credential_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    const PARTS: [&str; 8] = [
        "auth",
        "token",
        "secret",
        "key",
        "passw",
        "cookie",
        "credential",
        "session",
    ];
    PARTS.iter().any(|p| name.contains(p)) || name.ends_with("-sig") || name == "signature"
}

/// The printable form of the fields whose value was expanded from the environment, an input
/// or a file, by field (`url`, `args[1]`, `headers.X-Team`). Fields not listed hold only what
/// the file said.
pub(crate) type Shown = BTreeMap<String, String>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_headers_are_known_by_name() {
        for h in [
            "Authorization",
            "proxy-authorization",
            "X-API-Key",
            "Cookie",
            "X-Goog-Api-Key",
            "X-Auth-Token",
            "Mcp-Session-Id",
        ] {
            assert!(is_credential_header(h), "{h}");
        }
        for h in ["X-Team", "Accept", "User-Agent", "X-Region"] {
            assert!(!is_credential_header(h), "{h}");
        }
    }
}
