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

use super::token::{OAuthError, OAuthErrorCode, Resource, REDACTED};

/// Which authorization spec's client rules apply: they differ in the callback's `iss` check
/// (oauth.md §1.6, §1.13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Revision {
    /// 2025-11-25 (and the revisions before it): RFC 9207 is not among its standards.
    V2025_11_25,
    /// 2026-07-28 (and the draft): RFC 9207 `iss` validation is a MUST.
    V2026_07_28,
}

impl Revision {
    /// The rules for a negotiated MCP protocol version: 2026-07-28 and later (dates compare as
    /// strings; `DRAFT-…` counts as the newest) get [`Revision::V2026_07_28`], older dates
    /// [`Revision::V2025_11_25`].
    pub fn for_protocol_version(version: &str) -> Revision {
        if version.starts_with("DRAFT") || version >= "2026-07-28" {
            Revision::V2026_07_28
        } else {
            Revision::V2025_11_25
        }
    }
}

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
        None if text.contains('=') && !text.contains('/') => text,
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
///    | true | absent | [`CallbackError::MissingIssuer`] at 2026-07-28; accepted at 2025-11-25, which does not adopt RFC 9207 |
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
