//! The token endpoint (RFC 6749 §3.2, OAuth 2.1): client authentication, the requests of the
//! `authorization_code`, `refresh_token` and `client_credentials` grants, the RFC 8707
//! `resource`, and the parsed response with its expiry.
//!
//! Also the vocabulary the other parts share: [`HttpRequestSpec`] (a request for the driver to
//! make, whose `Debug` hides every secret), [`Resource`] (the resource indicator, kept verbatim)
//! and [`OAuthError`] (the RFC 6749 §5.2 error body, also used by authorization responses and
//! registration).
//!
//! Time is an argument: a response is parsed with the Unix time it was received at, and expiry
//! is decided at the Unix time the caller passes.

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{Map, Value};
use url::form_urlencoded;
use url::Url;

/// Form fields and JSON members whose values never appear in `Debug` output.
const SECRET_FIELDS: &[&str] = &[
    "code",
    "code_verifier",
    "client_secret",
    "refresh_token",
    "access_token",
    "id_token",
    "assertion",
    "client_assertion",
    "subject_token",
    "actor_token",
    "registration_access_token",
    "software_statement",
];

/// What `Debug` prints in place of a secret.
pub(crate) const REDACTED: &str = "***";

/// An HTTP request for the driver to make: the token, registration or metadata request,
/// complete (the driver adds only `Content-Length`).
///
/// Its `Debug` hides the `Authorization` header and the values of secret form fields and JSON
/// members (`code`, `code_verifier`, `client_secret`, `refresh_token`, `access_token`,
/// `assertion`, `client_assertion`, `subject_token`, …), so a request can be logged.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequestSpec {
    /// `GET` or `POST`.
    pub method: &'static str,
    /// The URL.
    pub url: Url,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body (empty for `GET`).
    pub body: Vec<u8>,
}

impl HttpRequestSpec {
    /// A `POST` of `fields` as `application/x-www-form-urlencoded`, asking for JSON.
    pub(crate) fn form(
        url: &Url,
        fields: &[(&str, &str)],
        authorization: Option<String>,
    ) -> HttpRequestSpec {
        let mut body = form_urlencoded::Serializer::new(String::new());
        for (name, value) in fields {
            body.append_pair(name, value);
        }
        let mut headers = vec![
            (
                "Content-Type".to_owned(),
                "application/x-www-form-urlencoded".to_owned(),
            ),
            ("Accept".to_owned(), "application/json".to_owned()),
        ];
        if let Some(value) = authorization {
            headers.push(("Authorization".to_owned(), value));
        }
        HttpRequestSpec {
            method: "POST",
            url: url.clone(),
            headers,
            body: body.finish().into_bytes(),
        }
    }

    /// The value of header `name` (case-insensitive), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Debug for HttpRequestSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, String)> = self
            .headers
            .iter()
            .map(|(name, value)| {
                let shown = if name.eq_ignore_ascii_case("authorization") {
                    // Keep the scheme (`Basic`, `Bearer`): it tells which auth was used.
                    match value.split_once(' ') {
                        Some((scheme, _)) => format!("{scheme} {REDACTED}"),
                        None => REDACTED.to_owned(),
                    }
                } else {
                    value.clone()
                };
                (name.as_str(), shown)
            })
            .collect();
        f.debug_struct("HttpRequestSpec")
            .field("method", &self.method)
            .field("url", &crate::error::redact_url(self.url.as_str()))
            .field("headers", &headers)
            .field("body", &redacted_body(self))
            .finish()
    }
}

/// The body as text with secret values replaced, or its length when it is neither a form nor
/// JSON.
fn redacted_body(request: &HttpRequestSpec) -> String {
    if request.body.is_empty() {
        return String::new();
    }
    let content_type = request.header("content-type").unwrap_or("");
    if content_type.starts_with("application/json") {
        if let Ok(mut value) = serde_json::from_slice::<Value>(&request.body) {
            redact_json(&mut value);
            return value.to_string();
        }
    } else if content_type.starts_with("application/x-www-form-urlencoded") {
        let mut shown = form_urlencoded::Serializer::new(String::new());
        for (name, value) in form_urlencoded::parse(&request.body) {
            let value = if SECRET_FIELDS.contains(&name.as_ref()) {
                REDACTED.into()
            } else {
                value
            };
            shown.append_pair(&name, &value);
        }
        return shown.finish();
    }
    format!("<{} bytes>", request.body.len())
}

/// Replaces the values of secret members, at any depth.
fn redact_json(value: &mut Value) {
    match value {
        Value::Object(members) => {
            for (name, member) in members.iter_mut() {
                if SECRET_FIELDS.contains(&name.as_str()) {
                    *member = Value::String(REDACTED.to_owned());
                } else {
                    redact_json(member);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_json),
        _ => {}
    }
}

/// An RFC 8707 resource indicator: the MCP server's canonical URI, **kept verbatim**.
///
/// The `url` crate would turn `http://host:8080` into `http://host:8080/`, and an authorization
/// server that compares exactly rejects the added `/` (oauth.md §1.5, §5.7), so the string the
/// Protected Resource Metadata gave (or the server URL, on the legacy path) is sent as is, in the
/// authorization request and in every token request alike.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Resource(String);

impl TryFrom<String> for Resource {
    type Error = InvalidResource;

    fn try_from(raw: String) -> Result<Resource, InvalidResource> {
        Resource::parse(&raw)
    }
}

impl From<Resource> for String {
    fn from(resource: Resource) -> String {
        resource.0
    }
}

/// Why a string cannot be a resource indicator (RFC 8707 §2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidResource {
    /// Not an absolute URI (or with spaces around it).
    #[error("the resource indicator {0:?} is not an absolute URI")]
    NotAbsolute(String),
    /// RFC 8707 §2: it "MUST NOT include a fragment component".
    #[error("the resource indicator {0:?} has a fragment")]
    Fragment(String),
}

impl Resource {
    /// Checks `raw` (an absolute URI without a fragment, RFC 8707 §2) and keeps it unchanged.
    pub fn parse(raw: &str) -> Result<Resource, InvalidResource> {
        if raw.trim() != raw || Url::parse(raw).is_err() {
            return Err(InvalidResource::NotAbsolute(raw.to_owned()));
        }
        if raw.contains('#') {
            return Err(InvalidResource::Fragment(raw.to_owned()));
        }
        Ok(Resource(raw.to_owned()))
    }

    /// The indicator, exactly as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How the client authenticates at the token endpoint (RFC 6749 §2.3, OAuth 2.1 §2.4).
///
/// Serialized (for a token store) with its method as `"method"`: `none`, `secret_basic`,
/// `secret_post`.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ClientAuth {
    /// A public client (`none`): `client_id` in the body, no secret anywhere.
    None {
        /// The client identifier.
        client_id: String,
    },
    /// `client_secret_basic`: `Authorization: Basic base64(urlenc(id) ":" urlenc(secret))`,
    /// nothing in the body.
    SecretBasic {
        /// The client identifier.
        client_id: String,
        /// The client secret.
        secret: String,
    },
    /// `client_secret_post`: `client_id` and `client_secret` in the body, no `Authorization`.
    SecretPost {
        /// The client identifier.
        client_id: String,
        /// The client secret.
        secret: String,
    },
}

impl ClientAuth {
    /// The client identifier, whatever the method.
    pub fn client_id(&self) -> &str {
        match self {
            ClientAuth::None { client_id }
            | ClientAuth::SecretBasic { client_id, .. }
            | ClientAuth::SecretPost { client_id, .. } => client_id,
        }
    }

    /// The method's registered name (`none`, `client_secret_basic`, `client_secret_post`).
    pub fn method(&self) -> &'static str {
        match self {
            ClientAuth::None { .. } => "none",
            ClientAuth::SecretBasic { .. } => "client_secret_basic",
            ClientAuth::SecretPost { .. } => "client_secret_post",
        }
    }

    /// The `Authorization` header value of `client_secret_basic` (RFC 6749 §2.3.1: the id and
    /// the secret are form-urlencoded before they are joined with `:` and base64-encoded).
    pub fn basic_header(&self) -> Option<String> {
        match self {
            ClientAuth::SecretBasic { client_id, secret } => {
                let pair = format!("{}:{}", form_encode(client_id), form_encode(secret));
                Some(format!("Basic {}", STANDARD.encode(pair)))
            }
            _ => None,
        }
    }

    /// Adds this method's body fields to `fields`.
    pub(crate) fn body_fields<'a>(&'a self, fields: &mut Vec<(&'static str, &'a str)>) {
        match self {
            ClientAuth::None { client_id } => fields.push(("client_id", client_id)),
            ClientAuth::SecretPost { client_id, secret } => {
                fields.push(("client_id", client_id));
                fields.push(("client_secret", secret));
            }
            ClientAuth::SecretBasic { .. } => {}
        }
    }
}

impl fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct(self.method());
        s.field("client_id", &self.client_id());
        if !matches!(self, ClientAuth::None { .. }) {
            s.field("secret", &REDACTED);
        }
        s.finish()
    }
}

/// `application/x-www-form-urlencoded` encoding of one value (space as `+`).
fn form_encode(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// Chooses the token-endpoint authentication method (oauth.md §1.7, the TypeScript SDK's
/// `selectClientAuthMethod`, which the conformance suite passes):
///
/// 1. the method the registration returned (`registered_method`), when the authorization
///    server lists it or lists nothing, and the client has what it needs (a secret for the
///    secret methods);
/// 2. otherwise, with a secret: `client_secret_basic`, then `client_secret_post`, whichever the
///    server lists;
/// 3. otherwise `none`.
///
/// A server that lists no methods (`as_methods` absent or empty) defaults to
/// `client_secret_basic` (RFC 8414 §2), so a client with a secret uses Basic and one without
/// uses `none`. A secret the server offers no way to send is not sent (oauth.md §5.10: DCR may
/// return a secret to a server that lists only `none`). An empty secret counts as none.
pub fn choose_client_auth(
    client_id: &str,
    client_secret: Option<&str>,
    registered_method: Option<&str>,
    as_methods: Option<&[String]>,
) -> ClientAuth {
    let secret = client_secret.filter(|s| !s.is_empty());
    let methods = as_methods.filter(|m| !m.is_empty());
    let supports = |method: &str| methods.is_none_or(|m| m.iter().any(|x| x == method));
    let registered = registered_method.filter(|m| supports(m));
    let method = match (registered, secret) {
        (Some("none"), _) => "none",
        (Some(m @ ("client_secret_basic" | "client_secret_post")), Some(_)) => m,
        (_, Some(_)) if supports("client_secret_basic") => "client_secret_basic",
        (_, Some(_)) if supports("client_secret_post") => "client_secret_post",
        _ => "none",
    };
    let client_id = client_id.to_owned();
    match (method, secret) {
        ("client_secret_basic", Some(secret)) => ClientAuth::SecretBasic {
            client_id,
            secret: secret.to_owned(),
        },
        ("client_secret_post", Some(secret)) => ClientAuth::SecretPost {
            client_id,
            secret: secret.to_owned(),
        },
        _ => ClientAuth::None { client_id },
    }
}

/// A token request: the grant's fields, then `resource`, then the client's, posted as a form.
fn token_request<'a>(
    token_endpoint: &Url,
    auth: &'a ClientAuth,
    mut fields: Vec<(&'static str, &'a str)>,
    resource: Option<&'a Resource>,
) -> HttpRequestSpec {
    if let Some(resource) = resource {
        fields.push(("resource", resource.as_str()));
    }
    auth.body_fields(&mut fields);
    HttpRequestSpec::form(token_endpoint, &fields, auth.basic_header())
}

/// The authorization-code exchange (RFC 6749 §4.1.3, RFC 7636 §4.5): `grant_type`, `code`,
/// `redirect_uri` (the same string as in the authorization request), `code_verifier`, the RFC
/// 8707 `resource` (identical to the authorization request's, oauth.md §1.5), and the client
/// authentication.
pub fn authorization_code_request(
    token_endpoint: &Url,
    auth: &ClientAuth,
    code: &str,
    redirect_uri: &str,
    verifier: &str,
    resource: Option<&Resource>,
) -> HttpRequestSpec {
    let fields = vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect_uri),
        ("code_verifier", verifier),
    ];
    token_request(token_endpoint, auth, fields, resource)
}

/// A refresh (RFC 6749 §6): `grant_type=refresh_token`, `refresh_token`, `scope` when `scopes`
/// is given and not empty (a refresh cannot widen scope; omitted, it means the scope granted
/// before), the RFC 8707 `resource` (oauth.md §1.5, §1.8), and the client authentication.
pub fn refresh_request(
    token_endpoint: &Url,
    auth: &ClientAuth,
    refresh_token: &str,
    scopes: Option<&[String]>,
    resource: Option<&Resource>,
) -> HttpRequestSpec {
    let scope = scopes.map(|s| s.join(" ")).filter(|s| !s.is_empty());
    let mut fields = vec![
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
    ];
    if let Some(scope) = &scope {
        fields.push(("scope", scope));
    }
    token_request(token_endpoint, auth, fields, resource)
}

/// The `client_credentials` grant (RFC 6749 §4.4; the MCP extension
/// `io.modelcontextprotocol/oauth-client-credentials`, oauth.md §1.10) with a client secret:
/// `grant_type`, `scope` when given and not empty, `resource`, and the client authentication.
pub fn client_credentials_request(
    token_endpoint: &Url,
    auth: &ClientAuth,
    scopes: Option<&[String]>,
    resource: Option<&Resource>,
) -> HttpRequestSpec {
    let scope = scopes.map(|s| s.join(" ")).filter(|s| !s.is_empty());
    let mut fields = vec![("grant_type", "client_credentials")];
    if let Some(scope) = &scope {
        fields.push(("scope", scope));
    }
    token_request(token_endpoint, auth, fields, resource)
}

/// An OAuth error code (RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2), typed where the client
/// acts on it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OAuthErrorCode {
    /// `invalid_request`.
    InvalidRequest,
    /// `invalid_client`: drop the registration and register again (oauth.md §1.7).
    InvalidClient,
    /// `invalid_grant`: the code or refresh token is no good; on refresh, drop the tokens and
    /// run the whole flow (oauth.md §1.7).
    InvalidGrant,
    /// `unauthorized_client`.
    UnauthorizedClient,
    /// `unsupported_grant_type`.
    UnsupportedGrantType,
    /// `invalid_scope`.
    InvalidScope,
    /// `access_denied` (authorization response): the user or the server said no.
    AccessDenied,
    /// `unsupported_response_type` (authorization response).
    UnsupportedResponseType,
    /// `server_error` (authorization response).
    ServerError,
    /// `temporarily_unavailable` (authorization response).
    TemporarilyUnavailable,
    /// `invalid_redirect_uri` (registration, RFC 7591): the server rejected the redirect URI.
    InvalidRedirectUri,
    /// `invalid_client_metadata` (registration, RFC 7591).
    InvalidClientMetadata,
    /// Any other code, as sent.
    Other(String),
}

impl OAuthErrorCode {
    /// The code for its wire name.
    pub fn from_name(name: &str) -> OAuthErrorCode {
        match name {
            "invalid_request" => OAuthErrorCode::InvalidRequest,
            "invalid_client" => OAuthErrorCode::InvalidClient,
            "invalid_grant" => OAuthErrorCode::InvalidGrant,
            "unauthorized_client" => OAuthErrorCode::UnauthorizedClient,
            "unsupported_grant_type" => OAuthErrorCode::UnsupportedGrantType,
            "invalid_scope" => OAuthErrorCode::InvalidScope,
            "access_denied" => OAuthErrorCode::AccessDenied,
            "unsupported_response_type" => OAuthErrorCode::UnsupportedResponseType,
            "server_error" => OAuthErrorCode::ServerError,
            "temporarily_unavailable" => OAuthErrorCode::TemporarilyUnavailable,
            "invalid_redirect_uri" => OAuthErrorCode::InvalidRedirectUri,
            "invalid_client_metadata" => OAuthErrorCode::InvalidClientMetadata,
            other => OAuthErrorCode::Other(other.to_owned()),
        }
    }

    /// The wire name.
    pub fn as_str(&self) -> &str {
        match self {
            OAuthErrorCode::InvalidRequest => "invalid_request",
            OAuthErrorCode::InvalidClient => "invalid_client",
            OAuthErrorCode::InvalidGrant => "invalid_grant",
            OAuthErrorCode::UnauthorizedClient => "unauthorized_client",
            OAuthErrorCode::UnsupportedGrantType => "unsupported_grant_type",
            OAuthErrorCode::InvalidScope => "invalid_scope",
            OAuthErrorCode::AccessDenied => "access_denied",
            OAuthErrorCode::UnsupportedResponseType => "unsupported_response_type",
            OAuthErrorCode::ServerError => "server_error",
            OAuthErrorCode::TemporarilyUnavailable => "temporarily_unavailable",
            OAuthErrorCode::InvalidRedirectUri => "invalid_redirect_uri",
            OAuthErrorCode::InvalidClientMetadata => "invalid_client_metadata",
            OAuthErrorCode::Other(name) => name,
        }
    }
}

/// An OAuth error as the server sent it: `error`, `error_description`, `error_uri`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}", code.as_str(), description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
pub struct OAuthError {
    /// `error`.
    pub code: OAuthErrorCode,
    /// `error_description`, if any.
    pub description: Option<String>,
    /// `error_uri`, if any.
    pub uri: Option<String>,
}

impl OAuthError {
    /// The error in a JSON object's `error` member (a string), if there is one.
    pub(crate) fn from_json(members: &Map<String, Value>) -> Option<OAuthError> {
        let code = members.get("error")?.as_str()?;
        let text = |name: &str| members.get(name).and_then(Value::as_str).map(str::to_owned);
        Some(OAuthError {
            code: OAuthErrorCode::from_name(code),
            description: text("error_description"),
            uri: text("error_uri"),
        })
    }
}

/// A token response that gave no tokens.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The server answered with an OAuth error (RFC 6749 §5.2), whatever the status.
    #[error("the token endpoint answered {status}: {error}")]
    OAuth {
        /// The HTTP status.
        status: u16,
        /// The error.
        error: OAuthError,
    },
    /// A non-2xx status without an OAuth error body.
    #[error("the token endpoint answered {status}")]
    Status {
        /// The HTTP status.
        status: u16,
    },
    /// The body is not JSON (or not a JSON object).
    #[error("the token endpoint answered {status} with a body that is not a JSON object")]
    NotJson {
        /// The HTTP status.
        status: u16,
    },
    /// A 2xx JSON object without a non-empty string `access_token`.
    #[error("the token response has no access_token")]
    MissingAccessToken,
}

/// The tokens of one token response.
///
/// Its `Debug` hides the access, refresh and ID tokens and the values of unknown members.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TokenSet {
    /// The access token.
    pub access_token: String,
    /// `token_type`: `Bearer` whatever its case on the wire (RFC 6749 §5.1 says it is
    /// case-insensitive), any other value as sent (the ID-JAG exchange returns `N_A`), `Bearer`
    /// when absent (some servers leave it out; the token is used as a bearer token anyway).
    pub token_type: String,
    /// When the access token expires, in Unix seconds (`received_at + expires_in`), if the
    /// response gave a positive lifetime.
    pub expires_at: Option<u64>,
    /// The refresh token, if one was issued (never assumed, oauth.md §1.8).
    pub refresh_token: Option<String>,
    /// The granted scopes from `scope`; `None` when absent, which means "as requested"
    /// (RFC 6749 §5.1).
    pub scopes: Option<Vec<String>>,
    /// `id_token`, when the server is also an OpenID provider.
    pub id_token: Option<String>,
    /// `issued_token_type` (RFC 8693 token exchange), if any.
    pub issued_token_type: Option<String>,
    /// Every other member, kept.
    #[serde(default)]
    pub extra: Map<String, Value>,
}

impl fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hidden = |token: &Option<String>| token.as_ref().map(|_| REDACTED);
        let extra: Vec<&String> = self.extra.keys().collect();
        f.debug_struct("TokenSet")
            .field("access_token", &REDACTED)
            .field("token_type", &self.token_type)
            .field("expires_at", &self.expires_at)
            .field("refresh_token", &hidden(&self.refresh_token))
            .field("scopes", &self.scopes)
            .field("id_token", &hidden(&self.id_token))
            .field("issued_token_type", &self.issued_token_type)
            .field("extra", &extra)
            .finish()
    }
}

impl TokenSet {
    /// Whether `token_type` is `Bearer` (any case).
    pub fn is_bearer(&self) -> bool {
        self.token_type.eq_ignore_ascii_case("bearer")
    }

    /// Whether the access token expires within `margin_secs` of `now_unix` (or has expired),
    /// so that it should be refreshed before the next request. A token of unknown lifetime is
    /// used until the server answers `401`.
    pub fn needs_refresh(&self, now_unix: u64, margin_secs: u64) -> bool {
        self.expires_at
            .is_some_and(|at| now_unix.saturating_add(margin_secs) >= at)
    }

    /// `self`, the response to a refresh, completed from `previous`: the old refresh token
    /// when the response has none (oauth.md §1.8: keep it; a rotated one replaces it), and the
    /// old granted scopes when the response states none (RFC 6749 §6: the scope is unchanged).
    pub fn merged_refresh(mut self, previous: &TokenSet) -> TokenSet {
        if self.refresh_token.is_none() {
            self.refresh_token.clone_from(&previous.refresh_token);
        }
        if self.scopes.is_none() {
            self.scopes.clone_from(&previous.scopes);
        }
        self
    }
}

/// Parses a token response (RFC 6749 §5.1, §5.2) received at `received_at_unix`.
///
/// A JSON object with a string `error` is an [`OAuthError`] whatever the status (some servers
/// answer errors with `200`). Tolerant where servers differ: `expires_in` as a number or a
/// numeric string (`0`, negative or unreadable means "not stated"; huge values saturate),
/// `scope` as a space-separated string or an array of strings, an empty `refresh_token` as
/// none, `token_type` as described on [`TokenSet::token_type`].
pub fn parse_token_response(
    status: u16,
    body: &[u8],
    received_at_unix: u64,
) -> Result<TokenSet, TokenError> {
    let Ok(Value::Object(mut members)) = serde_json::from_slice::<Value>(body) else {
        if (200..300).contains(&status) {
            return Err(TokenError::NotJson { status });
        }
        return Err(TokenError::Status { status });
    };
    if let Some(error) = OAuthError::from_json(&members) {
        return Err(TokenError::OAuth { status, error });
    }
    if !(200..300).contains(&status) {
        return Err(TokenError::Status { status });
    }
    let mut take_text = |name: &str| match members.remove(name) {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    };
    let access_token = take_text("access_token").ok_or(TokenError::MissingAccessToken)?;
    let token_type = match take_text("token_type") {
        Some(t) if !t.eq_ignore_ascii_case("bearer") => t,
        _ => "Bearer".to_owned(),
    };
    let refresh_token = take_text("refresh_token");
    let id_token = take_text("id_token");
    let issued_token_type = take_text("issued_token_type");
    let expires_at = members
        .remove("expires_in")
        .and_then(|v| lifetime(&v))
        .map(|secs| received_at_unix.saturating_add(secs));
    let scopes = match members.remove("scope") {
        Some(Value::String(s)) => Some(s.split_whitespace().map(str::to_owned).collect()),
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        ),
        _ => None,
    };
    Ok(TokenSet {
        access_token,
        token_type,
        expires_at,
        refresh_token,
        scopes,
        id_token,
        issued_token_type,
        extra: members,
    })
}

/// A positive lifetime in seconds from a JSON number or numeric string.
fn lifetime(value: &Value) -> Option<u64> {
    let secs = match value {
        Value::Number(n) => match n.as_u64() {
            Some(n) => n,
            // Floats (3600.0, 1e30) are truncated and saturate; negatives are not a lifetime.
            None => n.as_f64().filter(|f| *f >= 1.0).map(|f| f as u64)?,
        },
        Value::String(s) => {
            let s = s.trim();
            match s.parse::<u64>() {
                Ok(n) => n,
                Err(_) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => u64::MAX,
                Err(_) => return None,
            }
        }
        _ => return None,
    };
    (secs > 0).then_some(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint() -> Url {
        Url::parse("https://as.example/token").unwrap()
    }

    fn form(request: &HttpRequestSpec) -> Vec<(String, String)> {
        form_urlencoded::parse(&request.body)
            .map(|(n, v)| (n.into_owned(), v.into_owned()))
            .collect()
    }

    fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
        fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn methods(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    fn basic(id: &str, secret: &str) -> ClientAuth {
        ClientAuth::SecretBasic {
            client_id: id.to_owned(),
            secret: secret.to_owned(),
        }
    }

    fn post(id: &str, secret: &str) -> ClientAuth {
        ClientAuth::SecretPost {
            client_id: id.to_owned(),
            secret: secret.to_owned(),
        }
    }

    fn none(id: &str) -> ClientAuth {
        ClientAuth::None {
            client_id: id.to_owned(),
        }
    }

    #[test]
    fn client_auth_follows_the_registered_method_when_listed_or_nothing_is_listed() {
        let listed = methods(&["client_secret_basic", "client_secret_post"]);
        let choose =
            |method, listed: Option<&[String]>| choose_client_auth("id", Some("s"), method, listed);
        assert_eq!(
            choose(Some("client_secret_post"), Some(&listed)),
            post("id", "s")
        );
        assert_eq!(choose(Some("client_secret_post"), None), post("id", "s"));
        assert_eq!(
            choose(Some("client_secret_basic"), Some(&listed)),
            basic("id", "s")
        );
        assert_eq!(choose(Some("none"), Some(&methods(&["none"]))), none("id"));
        // Registered but not listed: the server's own list decides.
        assert_eq!(
            choose(
                Some("client_secret_basic"),
                Some(&methods(&["client_secret_post"]))
            ),
            post("id", "s")
        );
        // A method this client cannot do falls through to the secret methods.
        assert_eq!(
            choose(
                Some("private_key_jwt"),
                Some(&methods(&["private_key_jwt", "client_secret_post"]))
            ),
            post("id", "s")
        );
    }

    #[test]
    fn client_auth_without_registered_method() {
        // Nothing listed (absent or empty): RFC 8414 default, Basic with a secret.
        assert_eq!(
            choose_client_auth("id", Some("s"), None, None),
            basic("id", "s")
        );
        assert_eq!(
            choose_client_auth("id", Some("s"), None, Some(&[])),
            basic("id", "s")
        );
        assert_eq!(choose_client_auth("id", None, None, None), none("id"));
        // Pre-registration scenario: only Basic listed.
        assert_eq!(
            choose_client_auth(
                "pre-registered-client",
                Some("pre-registered-secret"),
                None,
                Some(&methods(&["client_secret_basic"]))
            ),
            basic("pre-registered-client", "pre-registered-secret")
        );
        // Basic preferred over post when both are listed.
        assert_eq!(
            choose_client_auth(
                "id",
                Some("s"),
                None,
                Some(&methods(&["client_secret_post", "client_secret_basic"]))
            ),
            basic("id", "s")
        );
    }

    #[test]
    fn a_secret_the_server_cannot_take_is_not_sent() {
        // oauth.md §5.10: metadata lists only `none`, DCR returned a secret and no method.
        let only_none = methods(&["none"]);
        assert_eq!(
            choose_client_auth("id", Some("s"), None, Some(&only_none)),
            none("id")
        );
        assert_eq!(
            choose_client_auth("id", Some("s"), Some("none"), None),
            none("id")
        );
        // A secret method registered without a secret, or an empty secret: `none`.
        assert_eq!(
            choose_client_auth("id", None, Some("client_secret_basic"), None),
            none("id")
        );
        assert_eq!(choose_client_auth("id", Some(""), None, None), none("id"));
    }

    fn decoded_basic(auth: &ClientAuth) -> String {
        let header = auth.basic_header().unwrap();
        let encoded = header.strip_prefix("Basic ").unwrap();
        String::from_utf8(STANDARD.decode(encoded).unwrap()).unwrap()
    }

    #[test]
    fn basic_form_encodes_id_and_secret_before_base64() {
        let auth = basic("my client:1", "p%ss w:rd+/é");
        let pair = decoded_basic(&auth);
        assert_eq!(pair, "my+client%3A1:p%25ss+w%3Ard%2B%2F%C3%A9");
        // Exactly one `:` survives, so the server can split, then form-decode each half.
        let (id, secret) = pair.split_once(':').unwrap();
        assert!(!secret.contains(':'));
        let decode = |s: &str| -> String {
            form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .unwrap()
                .1
                .into_owned()
        };
        assert_eq!(decode(id), "my client:1");
        assert_eq!(decode(secret), "p%ss w:rd+/é");
        // Plain ids and secrets are unchanged (what the conformance servers compare).
        assert_eq!(
            decoded_basic(&basic("conformance-test-client", "conformance-test-secret")),
            "conformance-test-client:conformance-test-secret"
        );
        assert_eq!(post("a", "b").basic_header(), None);
        assert_eq!(none("a").basic_header(), None);
    }

    fn resource() -> Resource {
        Resource::parse("http://localhost:3000").unwrap()
    }

    #[test]
    fn authorization_code_request_per_client_auth() {
        let resource = resource();
        let make = |auth: &ClientAuth| {
            authorization_code_request(
                &endpoint(),
                auth,
                "the code",
                "http://127.0.0.1:5555/callback",
                "verifier-1",
                Some(&resource),
            )
        };
        let request = make(&basic("id", "secret"));
        assert_eq!(request.method, "POST");
        assert_eq!(request.url, endpoint());
        assert_eq!(
            request.header("content-type"),
            Some("application/x-www-form-urlencoded")
        );
        assert_eq!(request.header("ACCEPT"), Some("application/json"));
        assert!(request
            .header("authorization")
            .unwrap()
            .starts_with("Basic "));
        let fields = form(&request);
        assert_eq!(
            fields,
            vec![
                ("grant_type".to_owned(), "authorization_code".to_owned()),
                ("code".to_owned(), "the code".to_owned()),
                (
                    "redirect_uri".to_owned(),
                    "http://127.0.0.1:5555/callback".to_owned()
                ),
                ("code_verifier".to_owned(), "verifier-1".to_owned()),
                ("resource".to_owned(), "http://localhost:3000".to_owned()),
            ]
        );
        assert!(String::from_utf8(request.body.clone())
            .unwrap()
            .contains("code=the+code&"));

        let request = make(&post("id", "secret"));
        assert_eq!(request.header("authorization"), None);
        let fields = form(&request);
        assert_eq!(field(&fields, "client_id"), Some("id"));
        assert_eq!(field(&fields, "client_secret"), Some("secret"));

        let request = make(&none("id"));
        assert_eq!(request.header("authorization"), None);
        let fields = form(&request);
        assert_eq!(field(&fields, "client_id"), Some("id"));
        assert_eq!(field(&fields, "client_secret"), None);

        let request = authorization_code_request(&endpoint(), &none("id"), "c", "r", "v", None);
        assert_eq!(field(&form(&request), "resource"), None);
    }

    #[test]
    fn refresh_request_fields() {
        let resource = resource();
        let scopes = methods(&["mcp:basic", "offline_access"]);
        let request = refresh_request(
            &endpoint(),
            &basic("id", "s"),
            "rt-1",
            Some(&scopes),
            Some(&resource),
        );
        let fields = form(&request);
        assert_eq!(field(&fields, "grant_type"), Some("refresh_token"));
        assert_eq!(field(&fields, "refresh_token"), Some("rt-1"));
        assert_eq!(field(&fields, "scope"), Some("mcp:basic offline_access"));
        assert_eq!(field(&fields, "resource"), Some("http://localhost:3000"));
        assert_eq!(field(&fields, "client_id"), None);
        assert!(request.header("authorization").is_some());
        for scopes in [None, Some(&[][..])] {
            let request = refresh_request(&endpoint(), &none("id"), "rt", scopes, None);
            let fields = form(&request);
            assert_eq!(field(&fields, "scope"), None);
            assert_eq!(field(&fields, "client_id"), Some("id"));
        }
    }

    #[test]
    fn client_credentials_request_fields() {
        let resource = resource();
        let request = client_credentials_request(
            &endpoint(),
            &basic("conformance-test-client", "conformance-test-secret"),
            None,
            Some(&resource),
        );
        assert_eq!(
            form(&request),
            vec![
                ("grant_type".to_owned(), "client_credentials".to_owned()),
                ("resource".to_owned(), "http://localhost:3000".to_owned()),
            ]
        );
    }

    #[test]
    fn resource_is_kept_verbatim_and_checked() {
        for raw in [
            "http://localhost:3000",
            "https://mcp.example/mcp/",
            "https://mcp.example/mcp?tenant=1",
        ] {
            assert_eq!(Resource::parse(raw).unwrap().as_str(), raw);
        }
        assert_eq!(
            Resource::parse("https://mcp.example/mcp#x"),
            Err(InvalidResource::Fragment(
                "https://mcp.example/mcp#x".to_owned()
            ))
        );
        for raw in ["/mcp", "mcp.example/mcp", " https://mcp.example", ""] {
            assert!(
                matches!(Resource::parse(raw), Err(InvalidResource::NotAbsolute(_))),
                "{raw:?}"
            );
        }
    }

    const SECRETS: &[&str] = &[
        "S3CRET-code",
        "S3CRET-verifier",
        "S3CRET-client",
        "S3CRET-refresh",
        "S3CRET-access",
        "S3CRET-id-token",
    ];

    fn assert_hidden(shown: &str) {
        for secret in SECRETS {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        // Nor in the base64 of a Basic header.
        assert!(
            !shown.contains(&STANDARD.encode("id:S3CRET-client")[..8]),
            "{shown}"
        );
    }

    #[test]
    fn request_debug_hides_secrets() {
        let resource = resource();
        for auth in [
            basic("id", "S3CRET-client"),
            post("id", "S3CRET-client"),
            none("id"),
        ] {
            let request = authorization_code_request(
                &endpoint(),
                &auth,
                "S3CRET-code",
                "http://127.0.0.1:1/cb",
                "S3CRET-verifier",
                Some(&resource),
            );
            let shown = format!("{request:?}");
            assert_hidden(&shown);
            assert!(shown.contains("authorization_code"), "{shown}");
            assert!(shown.contains("code_verifier=***"), "{shown}");
            assert_hidden(&format!("{auth:?}"));
            let request = refresh_request(&endpoint(), &auth, "S3CRET-refresh", None, None);
            assert_hidden(&format!("{request:?}"));
        }
        let request = authorization_code_request(
            &endpoint(),
            &basic("id", "S3CRET-client"),
            "c",
            "r",
            "v",
            None,
        );
        assert!(format!("{request:?}").contains("\"Basic ***\""));
    }

    #[test]
    fn json_and_opaque_bodies_are_redacted_in_debug() {
        let mut request = HttpRequestSpec {
            method: "POST",
            url: endpoint(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: br#"{"client_name":"x","nested":[{"client_secret":"S3CRET-client"}],"access_token":"S3CRET-access"}"#.to_vec(),
        };
        let shown = format!("{request:?}");
        assert_hidden(&shown);
        assert!(shown.contains("client_name"), "{shown}");
        request.headers.clear();
        let shown = format!("{request:?}");
        assert_hidden(&shown);
        assert!(shown.contains("bytes"), "{shown}");
        request.url = Url::parse("https://as.example/token?access_token=S3CRET-access").unwrap();
        assert_hidden(&format!("{request:?}"));
    }

    fn parse(body: &str) -> Result<TokenSet, TokenError> {
        parse_token_response(200, body.as_bytes(), 1_000)
    }

    #[test]
    fn token_response_fields() {
        let set = parse(
            r#"{"access_token":"at","token_type":"Bearer","expires_in":3600,
                "refresh_token":"rt","scope":"mcp:basic  mcp:write","id_token":"it","x":1}"#,
        )
        .unwrap();
        assert_eq!(set.access_token, "at");
        assert!(set.is_bearer());
        assert_eq!(set.expires_at, Some(4_600));
        assert_eq!(set.refresh_token.as_deref(), Some("rt"));
        assert_eq!(set.scopes, Some(methods(&["mcp:basic", "mcp:write"])));
        assert_eq!(set.id_token.as_deref(), Some("it"));
        assert_eq!(set.extra.get("x"), Some(&Value::from(1)));
        // The conformance server's response: no refresh token, no scope.
        let set =
            parse(r#"{"access_token":"test-token-1","token_type":"Bearer","expires_in":3600}"#)
                .unwrap();
        assert_eq!(set.refresh_token, None);
        assert_eq!(set.scopes, None);
    }

    #[test]
    fn token_type_is_tolerant() {
        for (body, shown, bearer) in [
            (
                r#"{"access_token":"a","token_type":"bearer"}"#,
                "Bearer",
                true,
            ),
            (
                r#"{"access_token":"a","token_type":"BEARER"}"#,
                "Bearer",
                true,
            ),
            (r#"{"access_token":"a"}"#, "Bearer", true),
            (r#"{"access_token":"a","token_type":"N_A"}"#, "N_A", false),
            (r#"{"access_token":"a","token_type":"DPoP"}"#, "DPoP", false),
        ] {
            let set = parse(body).unwrap();
            assert_eq!(set.token_type, shown, "{body}");
            assert_eq!(set.is_bearer(), bearer, "{body}");
        }
        let set = parse(r#"{"access_token":"a","token_type":"N_A","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag"}"#).unwrap();
        assert_eq!(
            set.issued_token_type.as_deref(),
            Some("urn:ietf:params:oauth:token-type:id-jag")
        );
    }

    #[test]
    fn expires_in_in_every_shape() {
        for (expires_in, expected) in [
            ("", None),
            (r#","expires_in":0"#, None),
            (r#","expires_in":"0""#, None),
            (r#","expires_in":-5"#, None),
            (r#","expires_in":null"#, None),
            (r#","expires_in":"soon""#, None),
            (r#","expires_in":true"#, None),
            (r#","expires_in":60"#, Some(1_060)),
            (r#","expires_in":"60""#, Some(1_060)),
            (r#","expires_in":" 60 ""#, Some(1_060)),
            (r#","expires_in":60.9"#, Some(1_060)),
            (r#","expires_in":0.5"#, None),
            (r#","expires_in":18446744073709551615"#, Some(u64::MAX)),
            (r#","expires_in":99999999999999999999999"#, Some(u64::MAX)),
            (r#","expires_in":1e300"#, Some(u64::MAX)),
            (r#","expires_in":"99999999999999999999999""#, Some(u64::MAX)),
        ] {
            let body = format!(r#"{{"access_token":"a"{expires_in}}}"#);
            assert_eq!(parse(&body).unwrap().expires_at, expected, "{body}");
        }
    }

    #[test]
    fn scope_and_refresh_token_shapes() {
        let set = parse(r#"{"access_token":"a","scope":["a","b",3],"refresh_token":""}"#).unwrap();
        assert_eq!(set.scopes, Some(methods(&["a", "b"])));
        assert_eq!(set.refresh_token, None);
        let set = parse(r#"{"access_token":"a","scope":""}"#).unwrap();
        assert_eq!(set.scopes, Some(Vec::new()));
    }

    #[test]
    fn oauth_errors_are_typed_whatever_the_status() {
        let body =
            br#"{"error":"invalid_grant","error_description":"expired","error_uri":"https://e"}"#;
        for status in [400, 401, 200] {
            assert_eq!(
                parse_token_response(status, body, 0),
                Err(TokenError::OAuth {
                    status,
                    error: OAuthError {
                        code: OAuthErrorCode::InvalidGrant,
                        description: Some("expired".to_owned()),
                        uri: Some("https://e".to_owned()),
                    }
                })
            );
        }
        let err = parse_token_response(401, br#"{"error":"invalid_client"}"#, 0).unwrap_err();
        assert!(matches!(
            err,
            TokenError::OAuth {
                error: OAuthError {
                    code: OAuthErrorCode::InvalidClient,
                    ..
                },
                ..
            }
        ));
        assert_eq!(
            err.to_string(),
            "the token endpoint answered 401: invalid_client"
        );
        let err = parse_token_response(400, br#"{"error":"slow_down"}"#, 0).unwrap_err();
        assert!(matches!(
            err,
            TokenError::OAuth { error: OAuthError { code: OAuthErrorCode::Other(ref c), .. }, .. } if c == "slow_down"
        ));
        for name in [
            "invalid_request",
            "unauthorized_client",
            "unsupported_grant_type",
            "invalid_scope",
            "access_denied",
            "server_error",
            "invalid_redirect_uri",
        ] {
            assert_eq!(OAuthErrorCode::from_name(name).as_str(), name);
            assert!(!matches!(
                OAuthErrorCode::from_name(name),
                OAuthErrorCode::Other(_)
            ));
        }
    }

    #[test]
    fn garbage_and_incomplete_responses_are_typed() {
        assert_eq!(
            parse_token_response(200, b"<html>hi</html>", 0),
            Err(TokenError::NotJson { status: 200 })
        );
        assert_eq!(
            parse_token_response(200, b"[1,2]", 0),
            Err(TokenError::NotJson { status: 200 })
        );
        assert_eq!(
            parse_token_response(200, b"", 0),
            Err(TokenError::NotJson { status: 200 })
        );
        assert_eq!(
            parse_token_response(502, b"<html>bad gateway</html>", 0),
            Err(TokenError::Status { status: 502 })
        );
        assert_eq!(
            parse_token_response(500, br#"{"message":"oops"}"#, 0),
            Err(TokenError::Status { status: 500 })
        );
        for body in [r#"{}"#, r#"{"access_token":""}"#, r#"{"access_token":5}"#] {
            assert_eq!(parse(body), Err(TokenError::MissingAccessToken), "{body}");
        }
        assert_eq!(
            parse("{\"access_token\":\"a\"").unwrap_err(),
            TokenError::NotJson { status: 200 }
        );
    }

    #[test]
    fn refresh_is_due_within_the_margin_as_time_moves() {
        let set = parse(r#"{"access_token":"a","expires_in":3600}"#).unwrap();
        assert_eq!(set.expires_at, Some(4_600));
        let margin = 60;
        let mut now = 1_000;
        assert!(!set.needs_refresh(now, margin));
        now += 3_539;
        assert!(!set.needs_refresh(now, margin));
        now += 1;
        assert!(set.needs_refresh(now, margin));
        now += 10_000;
        assert!(set.needs_refresh(now, margin));
        assert!(set.needs_refresh(4_600, 0));
        assert!(!set.needs_refresh(4_599, 0));
        assert!(set.needs_refresh(u64::MAX, u64::MAX));
        let unknown = parse(r#"{"access_token":"a"}"#).unwrap();
        assert!(!unknown.needs_refresh(u64::MAX, u64::MAX));
    }

    #[test]
    fn a_refresh_keeps_what_its_response_leaves_out() {
        let previous =
            parse(r#"{"access_token":"a1","refresh_token":"r1","scope":"s1 s2"}"#).unwrap();
        let merged = parse(r#"{"access_token":"a2","expires_in":10}"#)
            .unwrap()
            .merged_refresh(&previous);
        assert_eq!(merged.access_token, "a2");
        assert_eq!(merged.refresh_token.as_deref(), Some("r1"));
        assert_eq!(merged.scopes, Some(methods(&["s1", "s2"])));
        assert_eq!(merged.expires_at, Some(1_010));
        let rotated = parse(r#"{"access_token":"a3","refresh_token":"r2","scope":"s1"}"#)
            .unwrap()
            .merged_refresh(&previous);
        assert_eq!(rotated.refresh_token.as_deref(), Some("r2"));
        assert_eq!(rotated.scopes, Some(methods(&["s1"])));
    }

    #[test]
    fn token_set_debug_hides_tokens() {
        let set = parse(
            r#"{"access_token":"S3CRET-access","refresh_token":"S3CRET-refresh",
                "id_token":"S3CRET-id-token","other":"S3CRET-code","expires_in":5}"#,
        )
        .unwrap();
        let shown = format!("{set:?}");
        assert_hidden(&shown);
        assert!(shown.contains("expires_at: Some(1005)"), "{shown}");
        assert!(shown.contains("other"), "{shown}");
        assert_hidden(&format!("{:?}", Err::<(), _>(parse("{}").unwrap_err())));
    }
}
