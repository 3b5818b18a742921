//! The auth-schemes of `WWW-Authenticate` (and `Proxy-Authenticate`) values, read without the
//! OAuth feature: enough to tell a challenge OAuth can answer (`Bearer`, and `DPoP` for
//! DPoP-bound tokens) from any other (`Basic`, `Digest`, `Negotiate`). A `401` asking only for
//! another scheme is no OAuth server's: no OAuth discovery follows it. Through a proxy it may
//! be the proxy's own (tinyproxy asks for its credentials with a `401` and `Basic`).
//!
//! A list element that does not read `name=value` opens a challenge (RFC 9110 §11.6.1): its
//! first word is the scheme. Commas inside quoted strings separate nothing.

/// The schemes `value` names, in order.
pub fn schemes(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for element in elements(value) {
        let first = element.split([' ', '\t']).next().unwrap_or("");
        if !first.is_empty() && !first.contains('=') {
            out.push(first);
        }
    }
    out
}

/// Whether OAuth may answer challenges `values` (the header's values, in order): none at all
/// (a bare `401`), or one of them `Bearer` or `DPoP`.
pub fn invites_oauth<'a>(values: impl IntoIterator<Item = &'a str>) -> bool {
    let mut any = false;
    for value in values {
        for scheme in schemes(value) {
            if scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("dpop") {
                return true;
            }
            any = true;
        }
    }
    !any
}

/// The comma-separated elements of `value`, trimmed, commas in quoted strings kept.
fn elements(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in value.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                out.push(value[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(value[start..].trim());
    out.retain(|e| !e.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schemes_of_a_value_are_read_past_parameters_and_quoted_commas() {
        assert_eq!(schemes(r#"Basic realm="Tinyproxy""#), ["Basic"]);
        assert_eq!(
            schemes(r#"Basic realm="a, Bearer b", Bearer scope="x y", error="e""#),
            ["Basic", "Bearer"]
        );
        assert_eq!(schemes("Negotiate abc==, NTLM"), ["Negotiate", "NTLM"]);
        assert_eq!(schemes(""), Vec::<&str>::new());
        assert_eq!(schemes("realm=x"), Vec::<&str>::new());
    }

    #[test]
    fn only_bearer_dpop_or_no_challenge_invites_oauth() {
        assert!(invites_oauth([]));
        assert!(invites_oauth([""]));
        assert!(invites_oauth(["Bearer"]));
        assert!(invites_oauth([
            r#"bearer resource_metadata="https://s/prm""#
        ]));
        assert!(invites_oauth([r#"Basic realm="x""#, "DPoP algs=\"ES256\""]));
        assert!(invites_oauth([r#"Basic realm="x", Bearer"#]));
        assert!(!invites_oauth([r#"Basic realm="Tinyproxy""#]));
        assert!(!invites_oauth(["Negotiate", r#"Digest realm="r""#]));
        assert!(!invites_oauth([r#"Basic realm="Bearer x""#]));
    }
}
