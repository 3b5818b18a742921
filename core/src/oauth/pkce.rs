//! The authorization request and its response: PKCE S256 (RFC 7636), `state`, the URL the user
//! opens (RFC 6749 §4.1.1, RFC 8707 `resource`), and the checks of the redirect that brings the
//! code back (`state`, RFC 9207 `iss`, the error response).
//!
//! Random bytes are inputs: the driver draws them from the OS and passes them in.

use std::fmt;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};
use url::{form_urlencoded, Url};

use super::discovery::Revision;
use super::token::{OAuthError, OAuthErrorCode, Resource, REDACTED};

/// A PKCE pair (RFC 7636) with the `S256` method, the only one used (oauth.md §1.4).
///
/// Its `Debug` hides the verifier.
#[derive(Clone, PartialEq, Eq)]
pub struct Pkce {
    /// `code_verifier`: 32 random bytes, base64url without padding (43 characters, RFC 7636
    /// §4.1). Sent only to the token endpoint.
    pub verifier: String,
    /// `code_challenge`: `base64url(SHA-256(verifier))` without padding (RFC 7636 §4.2).
    pub challenge: String,
}

impl Pkce {
    /// The `code_challenge_method` sent with [`Pkce::challenge`].
    pub const METHOD: &'static str = "S256";

    /// The pair for 32 random bytes.
    pub fn from_random(bytes: &[u8; 32]) -> Pkce {
        let verifier = URL_SAFE_NO_PAD.encode(bytes);
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        Pkce {
            verifier,
            challenge,
        }
    }
}

impl fmt::Debug for Pkce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pkce")
            .field("verifier", &REDACTED)
            .field("challenge", &self.challenge)
            .finish()
    }
}

/// A `state` value for 16 random bytes: base64url without padding (22 characters).
pub fn state_from_random(bytes: &[u8; 16]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// An authorization request (RFC 6749 §4.1.1 with PKCE, RFC 7636 §4.3, and RFC 8707): what
/// [`AuthorizationRequest::url`] sends the user to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationRequest {
    /// The authorization server's `authorization_endpoint`. A query it already has is kept.
    pub authorization_endpoint: Url,
    /// The client identifier.
    pub client_id: String,
    /// The redirect URI, verbatim: the token request must repeat the same string.
    pub redirect_uri: String,
    /// The scopes to request; none means `scope` is omitted (oauth.md §1.9, §5.4: an empty
    /// `scope` is a warning in the conformance suite).
    pub scopes: Vec<String>,
    /// The `state` to send and to expect back ([`state_from_random`]).
    pub state: String,
    /// The PKCE `code_challenge` ([`Pkce::challenge`]).
    pub code_challenge: String,
    /// The RFC 8707 resource indicator: the MCP server (oauth.md §1.5).
    pub resource: Option<Resource>,
}

impl AuthorizationRequest {
    /// The URL to open: the endpoint with `response_type=code`, `client_id`, `redirect_uri`,
    /// `code_challenge`, `code_challenge_method=S256`, `state`, `resource` when given and
    /// `scope` (space-joined) when there are scopes, appended to its query and form-encoded.
    /// A fragment on the endpoint is dropped (RFC 6749 §3.1 forbids it).
    pub fn url(&self) -> Url {
        let mut url = self.authorization_endpoint.clone();
        url.set_fragment(None);
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &self.client_id)
                .append_pair("redirect_uri", &self.redirect_uri)
                .append_pair("code_challenge", &self.code_challenge)
                .append_pair("code_challenge_method", Pkce::METHOD)
                .append_pair("state", &self.state);
            if let Some(resource) = &self.resource {
                query.append_pair("resource", resource.as_str());
            }
            if !self.scopes.is_empty() {
                query.append_pair("scope", &self.scopes.join(" "));
            }
        }
        url
    }
}

/// The parameters of a redirect's query (form-decoded, in order, repeats kept): from a
/// `Location` header, a pasted URL, or a bare query (`code=…&state=…`, with or without `?`).
/// The fragment is ignored.
pub fn callback_params(location_or_url: &str) -> Vec<(String, String)> {
    let text = location_or_url.trim();
    let text = text.split_once('#').map_or(text, |(before, _)| before);
    let query = match text.split_once('?') {
        Some((_, query)) => query,
        // No `?`: a bare query, unless it looks like a URL or a path without one.
        None if text.contains('=') && !text.contains("://") && !text.starts_with('/') => text,
        None => "",
    };
    form_urlencoded::parse(query.as_bytes())
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect()
}

/// Why an authorization response is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallbackError {
    /// No `state`: the response is discarded (oauth.md §1.4).
    #[error("the authorization response has no state")]
    MissingState,
    /// A `state` other than the one sent: discarded (CSRF, RFC 6749 §10.12).
    #[error("the authorization response's state is not the one sent")]
    StateMismatch,
    /// A parameter that may appear once appeared more than once (RFC 6749 §3.1).
    #[error("the authorization response repeats the parameter {0}")]
    Repeated(String),
    /// RFC 9207: `iss` differs from the issuer the request went to (a mix-up); the response is
    /// neither used nor shown.
    #[error("the authorization response comes from issuer {received:?}, not {expected:?}")]
    IssuerMismatch {
        /// The issuer the request was sent to.
        expected: String,
        /// The `iss` received.
        received: String,
    },
    /// RFC 9207: the server advertises `authorization_response_iss_parameter_supported` but
    /// the response has no `iss` (rejected at 2026-07-28).
    #[error(
        "the authorization response has no iss, though the authorization server says it sends one"
    )]
    MissingIssuer,
    /// The authorization server answered with an error (`access_denied`, …).
    #[error("the authorization server refused: {0}")]
    Refused(OAuthError),
    /// Neither `code` nor `error`.
    #[error("the authorization response has no code")]
    MissingCode,
}

/// Checks an authorization response (oauth.md §1.6) and returns its `code`, in this order:
///
/// 1. `state`, `code`, `iss` and `error` each at most once (RFC 6749 §3.1);
/// 2. `state` present and equal to `expected_state` (checked first: a response without it is
///    discarded whatever else it says);
/// 3. RFC 9207 §2.4 `iss`, compared as plain strings (no normalization):
///
///    | `iss_supported` | `iss` | result |
///    |---|---|---|
///    | any | present | equal to `expected_issuer`, else [`CallbackError::IssuerMismatch`] |
///    | true | absent | [`CallbackError::MissingIssuer`] from [`Revision::V2026_07_28`] on; accepted before, as those revisions do not adopt RFC 9207 |
///    | false | absent | accepted |
///
///    `expected_issuer` is the validated `issuer` of the metadata the request was built from;
///    `None` (no metadata: the 2025-03-26 default endpoints) leaves nothing to compare a
///    received `iss` with, and it is ignored;
/// 4. `error` (with `error_description`, `error_uri`): [`CallbackError::Refused`], only once
///    the checks above passed (a mismatched response's error must not be acted on or shown);
/// 5. `code`, non-empty.
pub fn check_callback(
    params: &[(String, String)],
    expected_state: &str,
    expected_issuer: Option<&str>,
    iss_supported: bool,
    revision: Revision,
) -> Result<String, CallbackError> {
    let single = |name: &str| -> Result<Option<&str>, CallbackError> {
        let mut values = params.iter().filter(|(n, _)| n == name).map(|(_, v)| v);
        let first = values.next();
        if values.next().is_some() {
            return Err(CallbackError::Repeated(name.to_owned()));
        }
        Ok(first.map(String::as_str))
    };
    let state = single("state")?;
    let code = single("code")?;
    let iss = single("iss")?;
    let error = single("error")?;
    match state {
        None => return Err(CallbackError::MissingState),
        Some(state) if state != expected_state => return Err(CallbackError::StateMismatch),
        Some(_) => {}
    }
    match (iss, expected_issuer) {
        (Some(received), Some(expected)) if received != expected => {
            return Err(CallbackError::IssuerMismatch {
                expected: expected.to_owned(),
                received: received.to_owned(),
            })
        }
        (None, _) if iss_supported && revision >= Revision::V2026_07_28 => {
            return Err(CallbackError::MissingIssuer)
        }
        _ => {}
    }
    if let Some(error) = error {
        let text = |name: &str| {
            params
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        return Err(CallbackError::Refused(OAuthError {
            code: OAuthErrorCode::from_name(error),
            description: text("error_description"),
            uri: text("error_uri"),
        }));
    }
    match code {
        Some(code) if !code.is_empty() => Ok(code.to_owned()),
        _ => Err(CallbackError::MissingCode),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn rfc7636_appendix_b_vector() {
        let bytes = [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212,
            37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
        ];
        let pkce = Pkce::from_random(&bytes);
        assert_eq!(pkce.verifier, "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
        assert_eq!(
            pkce.challenge,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert_eq!(Pkce::METHOD, "S256");
    }

    #[test]
    fn verifier_and_state_are_unpadded_base64url_of_the_right_length() {
        let pkce = Pkce::from_random(&[0xff; 32]);
        assert_eq!(pkce.verifier.len(), 43);
        assert_eq!(pkce.challenge.len(), 43);
        let state = state_from_random(&[0xfb; 16]);
        assert_eq!(state.len(), 22);
        for text in [&pkce.verifier, &pkce.challenge, &state] {
            assert!(text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        }
        assert_ne!(state_from_random(&[1; 16]), state_from_random(&[2; 16]));
    }

    #[test]
    fn pkce_debug_hides_the_verifier() {
        let pkce = Pkce::from_random(&[7; 32]);
        let shown = format!("{pkce:?}");
        assert!(!shown.contains(&pkce.verifier), "{shown}");
        assert!(shown.contains(&pkce.challenge), "{shown}");
    }

    fn request() -> AuthorizationRequest {
        AuthorizationRequest {
            authorization_endpoint: Url::parse("https://as.example/authorize").unwrap(),
            client_id: "client 1&2".to_owned(),
            redirect_uri: "http://127.0.0.1:5555/callback?x=1&y=2".to_owned(),
            scopes: vec!["mcp:basic".to_owned(), "mcp:write".to_owned()],
            state: "st-ate_1".to_owned(),
            code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".to_owned(),
            resource: Some(Resource::parse("http://localhost:3000").unwrap()),
        }
    }

    fn pairs(url: &Url) -> Vec<(String, String)> {
        url.query_pairs()
            .map(|(n, v)| (n.into_owned(), v.into_owned()))
            .collect()
    }

    #[test]
    fn authorization_url_has_every_parameter_escaped() {
        let url = request().url();
        assert_eq!(
            pairs(&url),
            params(&[
                ("response_type", "code"),
                ("client_id", "client 1&2"),
                ("redirect_uri", "http://127.0.0.1:5555/callback?x=1&y=2"),
                (
                    "code_challenge",
                    "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
                ),
                ("code_challenge_method", "S256"),
                ("state", "st-ate_1"),
                ("resource", "http://localhost:3000"),
                ("scope", "mcp:basic mcp:write"),
            ])
        );
        let raw = url.as_str();
        assert!(raw.starts_with("https://as.example/authorize?response_type=code&"));
        assert!(raw.contains("client_id=client+1%262"), "{raw}");
        assert!(
            raw.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A5555%2Fcallback%3Fx%3D1%26y%3D2"),
            "{raw}"
        );
        // The resource goes verbatim: no `/` added to an origin-only URI.
        assert!(
            raw.contains("resource=http%3A%2F%2Flocalhost%3A3000&"),
            "{raw}"
        );
        assert!(raw.ends_with("&scope=mcp%3Abasic+mcp%3Awrite"), "{raw}");
    }

    #[test]
    fn authorization_url_omits_empty_scope_and_absent_resource() {
        let mut req = request();
        req.scopes.clear();
        req.resource = None;
        let names: Vec<String> = pairs(&req.url()).into_iter().map(|(n, _)| n).collect();
        assert!(!names.iter().any(|n| n == "scope" || n == "resource"));
        assert_eq!(names.len(), 6);
    }

    #[test]
    fn authorization_url_keeps_the_endpoint_query_and_drops_its_fragment() {
        let mut req = request();
        req.authorization_endpoint =
            Url::parse("https://as.example/oauth/authorize?tenant=a%20b#frag").unwrap();
        let url = req.url();
        assert!(url
            .as_str()
            .starts_with("https://as.example/oauth/authorize?tenant=a%20b&response_type=code&"));
        assert_eq!(url.fragment(), None);
        assert_eq!(pairs(&url)[0], ("tenant".to_owned(), "a b".to_owned()));
    }

    #[test]
    fn callback_params_from_location_url_path_or_bare_query() {
        let expected = params(&[("code", "a b/c"), ("state", "s+1"), ("iss", "https://as")]);
        for text in [
            "http://127.0.0.1:5555/callback?code=a+b%2Fc&state=s%2B1&iss=https%3A%2F%2Fas",
            "/callback?code=a%20b/c&state=s%2B1&iss=https://as#ignored",
            "?code=a+b%2Fc&state=s%2B1&iss=https%3A%2F%2Fas",
            "code=a+b%2Fc&state=s%2B1&iss=https%3A%2F%2Fas",
            "  code=a+b%2Fc&state=s%2B1&iss=https%3A%2F%2Fas\n",
        ] {
            assert_eq!(callback_params(text), expected, "{text}");
        }
        assert!(callback_params("http://127.0.0.1:5555/callback").is_empty());
        assert!(callback_params("/callback").is_empty());
        assert_eq!(
            callback_params("code=a/b&state=s"),
            params(&[("code", "a/b"), ("state", "s")])
        );
        assert!(callback_params("").is_empty());
        assert_eq!(
            callback_params("x?a=1&a=2"),
            params(&[("a", "1"), ("a", "2")])
        );
    }

    const AS: &str = "https://as.example/tenant";

    fn check(
        pairs: &[(&str, &str)],
        supported: bool,
        revision: Revision,
    ) -> Result<String, CallbackError> {
        check_callback(&params(pairs), "s1", Some(AS), supported, revision)
    }

    #[test]
    fn iss_present_and_equal_is_accepted_whatever_is_advertised() {
        for revision in [Revision::V2025_11_25, Revision::V2026_07_28] {
            for supported in [true, false] {
                let got = check(
                    &[("code", "c"), ("state", "s1"), ("iss", AS)],
                    supported,
                    revision,
                );
                assert_eq!(got, Ok("c".to_owned()));
            }
        }
    }

    #[test]
    fn iss_present_and_different_is_rejected_whatever_is_advertised() {
        for revision in [Revision::V2025_11_25, Revision::V2026_07_28] {
            for supported in [true, false] {
                let got = check(
                    &[
                        ("code", "c"),
                        ("state", "s1"),
                        ("iss", "https://evil.example"),
                    ],
                    supported,
                    revision,
                );
                assert_eq!(
                    got,
                    Err(CallbackError::IssuerMismatch {
                        expected: AS.to_owned(),
                        received: "https://evil.example".to_owned()
                    })
                );
            }
        }
    }

    #[test]
    fn iss_is_compared_without_normalization() {
        for received in [
            "https://as.example/tenant/",
            "HTTPS://as.example/tenant",
            "https://AS.example/tenant",
            "https://as.example:443/tenant",
            "https://as.example/%74enant",
        ] {
            let got = check(
                &[("code", "c"), ("state", "s1"), ("iss", received)],
                true,
                Revision::V2026_07_28,
            );
            assert!(
                matches!(got, Err(CallbackError::IssuerMismatch { .. })),
                "{received}"
            );
        }
    }

    #[test]
    fn iss_absent_while_advertised_is_rejected_at_2026_only() {
        let pairs = [("code", "c"), ("state", "s1")];
        assert_eq!(
            check(&pairs, true, Revision::V2026_07_28),
            Err(CallbackError::MissingIssuer)
        );
        for earlier in [Revision::V2025_11_25, Revision::V2025_03_26] {
            assert_eq!(check(&pairs, true, earlier), Ok("c".to_owned()));
        }
    }

    #[test]
    fn iss_absent_and_not_advertised_is_accepted() {
        for revision in [Revision::V2025_11_25, Revision::V2026_07_28] {
            assert_eq!(
                check(&[("code", "c"), ("state", "s1")], false, revision),
                Ok("c".to_owned())
            );
        }
    }

    #[test]
    fn iss_is_ignored_when_no_issuer_is_known() {
        let got = check_callback(
            &params(&[("code", "c"), ("state", "s1"), ("iss", "https://x")]),
            "s1",
            None,
            false,
            Revision::V2026_07_28,
        );
        assert_eq!(got, Ok("c".to_owned()));
    }

    #[test]
    fn state_is_checked_first() {
        let revision = Revision::V2026_07_28;
        assert_eq!(
            check(&[("code", "c"), ("iss", AS)], true, revision),
            Err(CallbackError::MissingState)
        );
        assert_eq!(
            check(
                &[("code", "c"), ("state", "s2"), ("iss", AS)],
                true,
                revision
            ),
            Err(CallbackError::StateMismatch)
        );
        // A wrong state wins over a missing iss and over an error.
        assert_eq!(
            check(
                &[("error", "access_denied"), ("state", "S1")],
                true,
                revision
            ),
            Err(CallbackError::StateMismatch)
        );
    }

    #[test]
    fn error_response_is_typed_after_state_and_iss_pass() {
        let got = check(
            &[
                ("error", "access_denied"),
                ("error_description", "the user said no"),
                ("error_uri", "https://as.example/help"),
                ("state", "s1"),
                ("iss", AS),
            ],
            true,
            Revision::V2026_07_28,
        );
        assert_eq!(
            got,
            Err(CallbackError::Refused(OAuthError {
                code: OAuthErrorCode::AccessDenied,
                description: Some("the user said no".to_owned()),
                uri: Some("https://as.example/help".to_owned()),
            }))
        );
        // From the wrong issuer, the error is neither acted on nor shown.
        let got = check(
            &[
                ("error", "access_denied"),
                ("error_description", "click https://phish"),
                ("state", "s1"),
                ("iss", "https://evil"),
            ],
            false,
            Revision::V2025_11_25,
        )
        .unwrap_err();
        assert!(matches!(got, CallbackError::IssuerMismatch { .. }));
        assert!(!got.to_string().contains("phish"));
    }

    #[test]
    fn repeated_or_missing_parameters_are_refused() {
        let revision = Revision::V2025_11_25;
        for name in ["state", "code", "iss", "error"] {
            let mut pairs = vec![("code", "c"), ("state", "s1"), ("iss", AS)];
            pairs.push((name, if name == "state" { "s1" } else { "x" }));
            if name == "error" {
                pairs.push(("error", "y"));
            }
            assert_eq!(
                check(&pairs, false, revision),
                Err(CallbackError::Repeated(name.to_owned())),
                "{name}"
            );
        }
        assert_eq!(
            check(&[("state", "s1")], false, revision),
            Err(CallbackError::MissingCode)
        );
        assert_eq!(
            check(&[("state", "s1"), ("code", "")], false, revision),
            Err(CallbackError::MissingCode)
        );
    }

    #[test]
    fn the_conformance_redirect_passes() {
        // oauth.md §0.2: `Location: <redirect_uri>?code=test-auth-code&state=<state>`, no iss.
        let location = "http://127.0.0.1:1/callback?code=test-auth-code&state=s1";
        let got = check_callback(
            &callback_params(location),
            "s1",
            Some("http://localhost:4000"),
            false,
            Revision::V2026_07_28,
        );
        assert_eq!(got, Ok("test-auth-code".to_owned()));
    }
}
