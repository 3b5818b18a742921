//! The client's identity at an authorization server (oauth.md §1.3): pre-registered, a Client
//! ID Metadata Document (CIMD) URL, or dynamic client registration (RFC 7591), and the
//! registration request and response.
//!
//! Credentials belong to one authorization server: the caller keys what it keeps by the
//! server's `issuer` and never offers one server's registration to another (2026-07-28).

use std::fmt;

use serde_json::{Map, Value};
use url::Url;

use super::token::{choose_client_auth, ClientAuth, HttpRequestSpec, OAuthError, REDACTED};

/// The metadata a client registers with (RFC 7591 §2), posted as JSON by
/// [`ClientRegistration::request`].
#[derive(Debug, Clone, PartialEq)]
pub struct ClientRegistration {
    /// `client_name`, shown to the user by the authorization server.
    pub client_name: String,
    /// `redirect_uris`.
    pub redirect_uris: Vec<String>,
    /// `grant_types`; `refresh_token` among them asks for refresh tokens (SEP-2207, oauth.md
    /// §1.8).
    pub grant_types: Vec<String>,
    /// `response_types`.
    pub response_types: Vec<String>,
    /// `token_endpoint_auth_method`; omitted, the server chooses (RFC 7591 §2 default:
    /// `client_secret_basic`) and says which in its response.
    pub token_endpoint_auth_method: Option<String>,
    /// `scope`, space-separated; omitted when `None`.
    pub scope: Option<String>,
    /// `application_type` (OpenID Connect Dynamic Registration): `native` or `web`. 2026-07-28
    /// requires it (`native` for CLI, desktop and loopback clients, oauth.md §1.3); servers
    /// that do not know it ignore it (RFC 7591 §2), so it is sent at every revision.
    pub application_type: Option<String>,
    /// `client_uri`, if any.
    pub client_uri: Option<String>,
    /// `software_id`, if any.
    pub software_id: Option<String>,
    /// `software_version`, if any.
    pub software_version: Option<String>,
    /// More metadata members; the fields above win over members of the same name.
    pub extra: Map<String, Value>,
}

impl ClientRegistration {
    /// The registration of an authorization-code client with one redirect URI (oauth.md §1.3):
    /// `grant_types` `authorization_code` and `refresh_token`, `response_types` `code`, and
    /// `application_type` `native` unless the redirect is `https` to a host other than a
    /// loopback one (then `web`).
    pub fn authorization_code(
        client_name: &str,
        redirect_uri: &str,
        scope: Option<&str>,
    ) -> ClientRegistration {
        ClientRegistration {
            client_name: client_name.to_owned(),
            redirect_uris: vec![redirect_uri.to_owned()],
            grant_types: vec!["authorization_code".to_owned(), "refresh_token".to_owned()],
            response_types: vec!["code".to_owned()],
            token_endpoint_auth_method: None,
            scope: scope.filter(|s| !s.is_empty()).map(str::to_owned),
            application_type: Some(application_type_for(redirect_uri).to_owned()),
            client_uri: None,
            software_id: None,
            software_version: None,
            extra: Map::new(),
        }
    }

    /// The registration request: `POST` of the metadata as JSON to `registration_endpoint`.
    pub fn request(&self, registration_endpoint: &Url) -> HttpRequestSpec {
        let mut body = self.extra.clone();
        let strings = |items: &[String]| Value::from(items.to_vec());
        body.insert("client_name".into(), self.client_name.clone().into());
        body.insert("redirect_uris".into(), strings(&self.redirect_uris));
        body.insert("grant_types".into(), strings(&self.grant_types));
        body.insert("response_types".into(), strings(&self.response_types));
        let optional = [
            (
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            ),
            ("scope", &self.scope),
            ("application_type", &self.application_type),
            ("client_uri", &self.client_uri),
            ("software_id", &self.software_id),
            ("software_version", &self.software_version),
        ];
        for (name, value) in optional {
            match value {
                Some(value) => body.insert(name.into(), value.clone().into()),
                None => body.remove(name),
            };
        }
        HttpRequestSpec {
            method: "POST",
            url: registration_endpoint.clone(),
            headers: vec![
                ("Content-Type".to_owned(), "application/json".to_owned()),
                ("Accept".to_owned(), "application/json".to_owned()),
            ],
            body: Value::Object(body).to_string().into_bytes(),
        }
    }
}

/// `native` for a loopback or non-`https` (private-scheme) redirect, `web` for `https` to
/// another host (OpenID Connect Dynamic Registration §2, RFC 8252 §7).
fn application_type_for(redirect_uri: &str) -> &'static str {
    let Ok(url) = Url::parse(redirect_uri) else {
        return "native";
    };
    let loopback = match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => true,
    };
    if url.scheme() == "https" && !loopback {
        "web"
    } else {
        "native"
    }
}

/// A client as the authorization server registered it (RFC 7591 §3.2.1).
///
/// Its `Debug` hides the client secret and the registration access token.
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RegisteredClient {
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`; an empty one is none (oauth.md §1.3).
    pub client_secret: Option<String>,
    /// `client_id_issued_at`, Unix seconds.
    pub client_id_issued_at: Option<u64>,
    /// `client_secret_expires_at`, Unix seconds; `None` when absent or `0` ("does not
    /// expire", RFC 7591 §3.2.1).
    pub client_secret_expires_at: Option<u64>,
    /// `token_endpoint_auth_method`, if the server said (the 2025-03-26 fallback server does
    /// not).
    pub token_endpoint_auth_method: Option<String>,
    /// `redirect_uris` as registered.
    pub redirect_uris: Vec<String>,
    /// `grant_types` as registered.
    pub grant_types: Vec<String>,
    /// `registration_access_token` (RFC 7592), if any.
    pub registration_access_token: Option<String>,
    /// `registration_client_uri` (RFC 7592), if any.
    pub registration_client_uri: Option<String>,
    /// Every other member, kept.
    #[serde(default)]
    pub extra: Map<String, Value>,
}

impl fmt::Debug for RegisteredClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hidden = |value: &Option<String>| value.as_ref().map(|_| REDACTED);
        f.debug_struct("RegisteredClient")
            .field("client_id", &self.client_id)
            .field("client_secret", &hidden(&self.client_secret))
            .field("client_id_issued_at", &self.client_id_issued_at)
            .field("client_secret_expires_at", &self.client_secret_expires_at)
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .field("redirect_uris", &self.redirect_uris)
            .field("grant_types", &self.grant_types)
            .field(
                "registration_access_token",
                &hidden(&self.registration_access_token),
            )
            .field("registration_client_uri", &self.registration_client_uri)
            .field("extra", &self.extra.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl RegisteredClient {
    /// How to authenticate at the token endpoint, given the methods the authorization server
    /// lists ([`choose_client_auth`]).
    pub fn client_auth(&self, as_methods: Option<&[String]>) -> ClientAuth {
        choose_client_auth(
            &self.client_id,
            self.client_secret.as_deref(),
            self.token_endpoint_auth_method.as_deref(),
            as_methods,
        )
    }

    /// Whether the secret has expired at `now_unix` (then register again).
    pub fn secret_expired(&self, now_unix: u64) -> bool {
        self.client_secret_expires_at
            .is_some_and(|at| now_unix >= at)
    }
}

/// A registration that gave no client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegisterError {
    /// The server refused the metadata (RFC 7591 §3.2.2). [`RegisterError::is_redirect_uri_rejection`]
    /// tells a rejected redirect URI, which 2026-07-28 asks clients to explain.
    #[error("the registration was refused ({status}): {error}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// The error.
        error: OAuthError,
    },
    /// A non-2xx status without an OAuth error body.
    #[error("the registration endpoint answered {status}")]
    Status {
        /// The HTTP status.
        status: u16,
    },
    /// A 2xx body that is not a JSON object.
    #[error("the registration endpoint answered {status} with a body that is not a JSON object")]
    NotJson {
        /// The HTTP status.
        status: u16,
    },
    /// A 2xx JSON object without a non-empty string `client_id`.
    #[error("the registration response has no client_id")]
    MissingClientId,
}

impl RegisterError {
    /// Whether the server rejected the redirect URI (`invalid_redirect_uri`).
    pub fn is_redirect_uri_rejection(&self) -> bool {
        matches!(self, RegisterError::Refused { error, .. }
            if error.code == super::token::OAuthErrorCode::InvalidRedirectUri)
    }
}

/// Parses a registration response (RFC 7591 §3.2). Any 2xx is success (the RFC says `201`;
/// servers also answer `200`); a JSON object with a string `error` is a refusal whatever the
/// status.
pub fn parse_registration(status: u16, body: &[u8]) -> Result<RegisteredClient, RegisterError> {
    let Ok(Value::Object(mut members)) = serde_json::from_slice::<Value>(body) else {
        if (200..300).contains(&status) {
            return Err(RegisterError::NotJson { status });
        }
        return Err(RegisterError::Status { status });
    };
    if let Some(error) = OAuthError::from_json(&members) {
        return Err(RegisterError::Refused { status, error });
    }
    if !(200..300).contains(&status) {
        return Err(RegisterError::Status { status });
    }
    let mut text = |name: &str| match members.remove(name) {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    };
    let client_id = text("client_id").ok_or(RegisterError::MissingClientId)?;
    let client_secret = text("client_secret");
    let token_endpoint_auth_method = text("token_endpoint_auth_method");
    let registration_access_token = text("registration_access_token");
    let registration_client_uri = text("registration_client_uri");
    let mut time = |name: &str| members.remove(name).as_ref().and_then(unix_time);
    let client_id_issued_at = time("client_id_issued_at");
    let client_secret_expires_at = time("client_secret_expires_at").filter(|at| *at != 0);
    let mut strings = |name: &str| match members.remove(name) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    let redirect_uris = strings("redirect_uris");
    let grant_types = strings("grant_types");
    Ok(RegisteredClient {
        client_id,
        client_secret,
        client_id_issued_at,
        client_secret_expires_at,
        token_endpoint_auth_method,
        redirect_uris,
        grant_types,
        registration_access_token,
        registration_client_uri,
        extra: members,
    })
}

/// A Unix time from a non-negative JSON integer or numeric string.
fn unix_time(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Credentials configured for one authorization server (its `issuer`).
///
/// Its `Debug` hides the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct PreRegisteredClient {
    /// The client identifier.
    pub client_id: String,
    /// The client secret, for a confidential client.
    pub client_secret: Option<String>,
}

impl fmt::Debug for PreRegisteredClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreRegisteredClient")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| REDACTED),
            )
            .finish()
    }
}

/// How the client identifies itself to an authorization server (oauth.md §1.3).
#[derive(Clone, PartialEq, Eq)]
pub enum ClientIdentity {
    /// Configured credentials for this server.
    PreRegistered {
        /// The client identifier.
        client_id: String,
        /// The client secret, for a confidential client.
        client_secret: Option<String>,
    },
    /// A Client ID Metadata Document: the `client_id` is this `https` URL; no registration
    /// call and no secret (authentication `none`).
    MetadataDocument {
        /// The document's URL, which is the client identifier.
        client_id_url: Url,
    },
    /// Register now with RFC 7591 ([`ClientRegistration`]).
    Dynamic,
}

impl fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientIdentity::PreRegistered {
                client_id,
                client_secret,
            } => f
                .debug_struct("PreRegistered")
                .field("client_id", client_id)
                .field("client_secret", &client_secret.as_ref().map(|_| REDACTED))
                .finish(),
            ClientIdentity::MetadataDocument { client_id_url } => f
                .debug_struct("MetadataDocument")
                .field("client_id_url", &client_id_url.as_str())
                .finish(),
            ClientIdentity::Dynamic => f.write_str("Dynamic"),
        }
    }
}

impl ClientIdentity {
    /// How to authenticate at the token endpoint with this identity, given the methods the
    /// authorization server lists; `None` for [`ClientIdentity::Dynamic`], which has no
    /// client yet (use [`RegisteredClient::client_auth`] once registered).
    pub fn client_auth(&self, as_methods: Option<&[String]>) -> Option<ClientAuth> {
        match self {
            ClientIdentity::PreRegistered {
                client_id,
                client_secret,
            } => Some(choose_client_auth(
                client_id,
                client_secret.as_deref(),
                None,
                as_methods,
            )),
            ClientIdentity::MetadataDocument { client_id_url } => Some(ClientAuth::None {
                client_id: client_id_url.as_str().to_owned(),
            }),
            ClientIdentity::Dynamic => None,
        }
    }
}

/// Why no client identity could be chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// Nothing configured for this server, it does not support metadata documents (or none is
    /// configured), and it has no `registration_endpoint`: ask the user for a client id.
    #[error(
        "no client identity for this authorization server: it has no registration endpoint \
         and no client id is configured for it"
    )]
    NoIdentity,
    /// The configured metadata-document URL breaks the CIMD rules: `https`, a path, no
    /// fragment, no user or password.
    #[error("the client metadata document URL {0:?} must be https, with a path, and without a fragment or credentials")]
    BadMetadataDocumentUrl(String),
}

/// Chooses the client identity in the order of oauth.md §1.3: the credentials configured for
/// this server (`pre`), then the metadata document at `cimd_url` when the authorization server
/// has `client_id_metadata_document_supported: true`, then dynamic registration when it has a
/// `registration_endpoint` (on the 2025-03-26 fallback, the default `/register` counts).
pub fn choose_identity(
    pre: Option<PreRegisteredClient>,
    cimd_url: Option<&Url>,
    as_supports_cimd: bool,
    has_registration_endpoint: bool,
) -> Result<ClientIdentity, IdentityError> {
    if let Some(pre) = pre {
        return Ok(ClientIdentity::PreRegistered {
            client_id: pre.client_id,
            client_secret: pre.client_secret.filter(|s| !s.is_empty()),
        });
    }
    if let (Some(url), true) = (cimd_url, as_supports_cimd) {
        let valid = url.scheme() == "https"
            && url.path() != "/"
            && url.fragment().is_none()
            && url.username().is_empty()
            && url.password().is_none();
        if !valid {
            return Err(IdentityError::BadMetadataDocumentUrl(url.to_string()));
        }
        return Ok(ClientIdentity::MetadataDocument {
            client_id_url: url.clone(),
        });
    }
    if has_registration_endpoint {
        return Ok(ClientIdentity::Dynamic);
    }
    Err(IdentityError::NoIdentity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::token::OAuthErrorCode;

    fn body(request: &HttpRequestSpec) -> Map<String, Value> {
        match serde_json::from_slice(&request.body).unwrap() {
            Value::Object(members) => members,
            other => panic!("{other}"),
        }
    }

    #[test]
    fn registration_request_body() {
        let registration = ClientRegistration::authorization_code(
            "mcpwire",
            "http://127.0.0.1:5555/callback",
            Some("mcp:basic offline_access"),
        );
        let endpoint = Url::parse("https://as.example/register").unwrap();
        let request = registration.request(&endpoint);
        assert_eq!(request.method, "POST");
        assert_eq!(request.url, endpoint);
        assert_eq!(request.header("content-type"), Some("application/json"));
        assert_eq!(request.header("accept"), Some("application/json"));
        assert_eq!(
            Value::Object(body(&request)),
            serde_json::json!({
                "client_name": "mcpwire",
                "redirect_uris": ["http://127.0.0.1:5555/callback"],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "scope": "mcp:basic offline_access",
                "application_type": "native",
            })
        );
        // No scope: omitted, not empty (oauth.md §5.4).
        for scope in [None, Some("")] {
            let registration =
                ClientRegistration::authorization_code("m", "http://[::1]:1/", scope);
            assert!(!body(&registration.request(&endpoint)).contains_key("scope"));
        }
    }

    #[test]
    fn extra_metadata_never_overrides_the_typed_fields() {
        let mut registration =
            ClientRegistration::authorization_code("m", "http://localhost:1/cb", None);
        registration
            .extra
            .insert("logo_uri".into(), "https://l".into());
        registration
            .extra
            .insert("client_name".into(), "other".into());
        registration.extra.insert("scope".into(), "sneaky".into());
        registration.software_id = Some("mcpwire-cli".into());
        let members = body(&registration.request(&Url::parse("https://as/r").unwrap()));
        assert_eq!(members["logo_uri"], "https://l");
        assert_eq!(members["client_name"], "m");
        assert_eq!(members["software_id"], "mcpwire-cli");
        assert!(!members.contains_key("scope"));
    }

    #[test]
    fn application_type_is_native_for_loopback_and_private_schemes() {
        for (redirect, expected) in [
            ("http://127.0.0.1:5555/callback", "native"),
            ("http://localhost:1/cb", "native"),
            ("http://[::1]:1/cb", "native"),
            ("https://127.0.0.1/cb", "native"),
            ("https://LOCALHOST/cb", "native"),
            ("com.example.app:/oauth2redirect", "native"),
            ("not a url", "native"),
            ("https://app.example/callback", "web"),
        ] {
            let registration = ClientRegistration::authorization_code("m", redirect, None);
            assert_eq!(
                registration.application_type.as_deref(),
                Some(expected),
                "{redirect}"
            );
        }
    }

    #[test]
    fn registration_response_fields() {
        let client = parse_registration(
            201,
            br#"{"client_id":"c1","client_secret":"s1","client_id_issued_at":1700000000,
                 "client_secret_expires_at":"1800000000","token_endpoint_auth_method":"client_secret_basic",
                 "redirect_uris":["http://127.0.0.1:1/cb"],"grant_types":["authorization_code"],
                 "registration_access_token":"rat","registration_client_uri":"https://as/r/c1",
                 "client_name":"m"}"#,
        )
        .unwrap();
        assert_eq!(client.client_id, "c1");
        assert_eq!(client.client_secret.as_deref(), Some("s1"));
        assert_eq!(client.client_id_issued_at, Some(1_700_000_000));
        assert_eq!(client.client_secret_expires_at, Some(1_800_000_000));
        assert!(!client.secret_expired(1_799_999_999));
        assert!(client.secret_expired(1_800_000_000));
        assert_eq!(
            client.token_endpoint_auth_method.as_deref(),
            Some("client_secret_basic")
        );
        assert_eq!(client.redirect_uris, vec!["http://127.0.0.1:1/cb"]);
        assert_eq!(client.grant_types, vec!["authorization_code"]);
        assert_eq!(client.registration_access_token.as_deref(), Some("rat"));
        assert_eq!(
            client.registration_client_uri.as_deref(),
            Some("https://as/r/c1")
        );
        assert_eq!(client.extra["client_name"], "m");

        // An empty secret is none; 0 means the secret does not expire; 200 is success too.
        let client = parse_registration(
            200,
            br#"{"client_id":"c2","client_secret":"","client_secret_expires_at":0}"#,
        )
        .unwrap();
        assert_eq!(client.client_secret, None);
        assert_eq!(client.client_secret_expires_at, None);
        assert!(!client.secret_expired(u64::MAX));
        assert_eq!(client.token_endpoint_auth_method, None);
    }

    #[test]
    fn registration_failures_are_typed() {
        let err = parse_registration(
            400,
            br#"{"error":"invalid_redirect_uri","error_description":"loopback only"}"#,
        )
        .unwrap_err();
        assert!(err.is_redirect_uri_rejection());
        assert_eq!(
            err.to_string(),
            "the registration was refused (400): invalid_redirect_uri: loopback only"
        );
        let err = parse_registration(400, br#"{"error":"invalid_client_metadata"}"#).unwrap_err();
        assert!(!err.is_redirect_uri_rejection());
        assert!(matches!(
            err,
            RegisterError::Refused {
                error: OAuthError {
                    code: OAuthErrorCode::InvalidClientMetadata,
                    ..
                },
                ..
            }
        ));
        assert_eq!(
            parse_registration(500, b"<html>"),
            Err(RegisterError::Status { status: 500 })
        );
        assert_eq!(
            parse_registration(404, br#"{"message":"no"}"#),
            Err(RegisterError::Status { status: 404 })
        );
        assert_eq!(
            parse_registration(201, b"ok"),
            Err(RegisterError::NotJson { status: 201 })
        );
        for body in [&br#"{}"#[..], br#"{"client_id":""}"#, br#"{"client_id":7}"#] {
            assert_eq!(
                parse_registration(201, body),
                Err(RegisterError::MissingClientId)
            );
        }
    }

    #[test]
    fn registered_client_auth_follows_the_server() {
        // token-endpoint-auth-basic: DCR returns the secret and the method; only Basic listed.
        let client = parse_registration(
            201,
            br#"{"client_id":"c","client_secret":"s","token_endpoint_auth_method":"client_secret_basic"}"#,
        )
        .unwrap();
        let basic = vec!["client_secret_basic".to_owned()];
        assert_eq!(
            client.client_auth(Some(&basic)).method(),
            "client_secret_basic"
        );
        // Default metadata lists only `none`; the DCR secret is not sent (oauth.md §5.10).
        let client = parse_registration(201, br#"{"client_id":"c","client_secret":"s"}"#).unwrap();
        let only_none = vec!["none".to_owned()];
        assert_eq!(
            client.client_auth(Some(&only_none)),
            ClientAuth::None {
                client_id: "c".to_owned()
            }
        );
    }

    fn pre() -> PreRegisteredClient {
        PreRegisteredClient {
            client_id: "pre-registered-client".to_owned(),
            client_secret: Some("S3CRET-pre".to_owned()),
        }
    }

    fn cimd() -> Url {
        Url::parse("https://conformance-test.local/client-metadata.json").unwrap()
    }

    #[test]
    fn identity_order_pre_registered_then_cimd_then_dynamic() {
        let cimd = cimd();
        for (supports, registration) in [(true, true), (false, false), (true, false)] {
            assert_eq!(
                choose_identity(Some(pre()), Some(&cimd), supports, registration),
                Ok(ClientIdentity::PreRegistered {
                    client_id: "pre-registered-client".to_owned(),
                    client_secret: Some("S3CRET-pre".to_owned()),
                })
            );
        }
        let metadata = Ok(ClientIdentity::MetadataDocument {
            client_id_url: cimd.clone(),
        });
        assert_eq!(choose_identity(None, Some(&cimd), true, true), metadata);
        assert_eq!(choose_identity(None, Some(&cimd), true, false), metadata);
        assert_eq!(
            choose_identity(None, Some(&cimd), false, true),
            Ok(ClientIdentity::Dynamic)
        );
        assert_eq!(
            choose_identity(None, None, true, true),
            Ok(ClientIdentity::Dynamic)
        );
        assert_eq!(
            choose_identity(None, Some(&cimd), false, false),
            Err(IdentityError::NoIdentity)
        );
        assert_eq!(
            choose_identity(None, None, false, false),
            Err(IdentityError::NoIdentity)
        );
        // A configured empty secret is a public client.
        let public = PreRegisteredClient {
            client_id: "p".to_owned(),
            client_secret: Some(String::new()),
        };
        assert_eq!(
            choose_identity(Some(public), None, false, false),
            Ok(ClientIdentity::PreRegistered {
                client_id: "p".to_owned(),
                client_secret: None
            })
        );
    }

    #[test]
    fn a_metadata_document_url_must_follow_the_cimd_rules() {
        for bad in [
            "http://conformance-test.local/client-metadata.json",
            "https://conformance-test.local/",
            "https://conformance-test.local",
            "https://conformance-test.local/m.json#x",
            "https://user:pw@conformance-test.local/m.json",
        ] {
            let url = Url::parse(bad).unwrap();
            assert!(
                matches!(
                    choose_identity(None, Some(&url), true, true),
                    Err(IdentityError::BadMetadataDocumentUrl(_))
                ),
                "{bad}"
            );
            // Unused when the server does not support CIMD: no error.
            assert_eq!(
                choose_identity(None, Some(&url), false, true),
                Ok(ClientIdentity::Dynamic)
            );
        }
    }

    #[test]
    fn identity_client_auth() {
        let cimd = ClientIdentity::MetadataDocument {
            client_id_url: cimd(),
        };
        assert_eq!(
            cimd.client_auth(Some(&["none".to_owned()])),
            Some(ClientAuth::None {
                client_id: "https://conformance-test.local/client-metadata.json".to_owned()
            })
        );
        let pre = choose_identity(Some(pre()), None, false, false).unwrap();
        let basic = vec!["client_secret_basic".to_owned()];
        assert_eq!(
            pre.client_auth(Some(&basic)).map(|a| a.method()),
            Some("client_secret_basic")
        );
        assert_eq!(ClientIdentity::Dynamic.client_auth(None), None);
    }

    #[test]
    fn debug_hides_client_secrets() {
        let client = parse_registration(
            201,
            br#"{"client_id":"c","client_secret":"S3CRET-pre","registration_access_token":"S3CRET-rat","x":"S3CRET-x"}"#,
        )
        .unwrap();
        let identity = choose_identity(Some(pre()), None, false, false).unwrap();
        for shown in [
            format!("{client:?}"),
            format!("{:?}", pre()),
            format!("{identity:?}"),
            format!("{:?}", client.client_auth(None)),
        ] {
            assert!(!shown.contains("S3CRET"), "{shown}");
            assert!(shown.contains("***"), "{shown}");
        }
        let mut registration =
            ClientRegistration::authorization_code("m", "http://127.0.0.1/", None);
        registration
            .extra
            .insert("software_statement".into(), "S3CRET-jwt".into());
        let shown = format!(
            "{:?}",
            registration.request(&Url::parse("https://as/r").unwrap())
        );
        assert!(!shown.contains("S3CRET"), "{shown}");
        assert!(shown.contains("client_name"), "{shown}");
    }
}
