//! The grants of the authorization extensions, where no user takes part (oauth.md §1.10, §1.11):
//! how a flow gets its tokens ([`Grant`]) and the token requests each one makes.
//!
//! - `client_credentials` (`io.modelcontextprotocol/oauth-client-credentials`, SEP-1046): the
//!   client authenticates as itself with a secret (`client_secret_basic`, else
//!   `client_secret_post`: [`super::token::client_credentials_request`]) or with a signed JWT
//!   (`private_key_jwt`, RFC 7523 §2.2).
//! - Enterprise-managed authorization (SEP-990): an RFC 8693 token exchange at the enterprise
//!   identity provider turns the user's ID token into an ID-JAG, which the RFC 7523 JWT-bearer
//!   grant then trades for an access token at the MCP server's authorization server.
//! - Workload identity federation (SEP-1933): the JWT-bearer grant with a JWT the workload's
//!   platform issued.
//!
//! The flow ([`super::flow::OAuthFlow`]) does the discovery the same way for every grant; these
//! are the requests after it.

use std::fmt;

use url::Url;

use super::jwt::{self, Es256Key};
use super::token::{ClientAuth, HttpRequestSpec, Resource, REDACTED};

/// `grant_type` of the RFC 8693 token exchange.
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// `grant_type` of the RFC 7523 JWT-bearer grant.
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// The token type of an Identity Assertion JWT Authorization Grant (ID-JAG, SEP-990).
pub const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The token type of an OpenID Connect ID token (RFC 8693 §3).
pub const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

/// How a flow gets its tokens.
///
/// Its `Debug` hides every secret, key, ID token and assertion.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum Grant {
    /// The authorization-code flow, with the user (the default).
    #[default]
    AuthorizationCode,
    /// `client_credentials`: the client as itself, no user (oauth.md §1.10).
    ClientCredentials {
        /// The client identifier, registered beforehand at the authorization server.
        client_id: String,
        /// How it proves it.
        credential: ClientCredential,
    },
    /// Enterprise-managed authorization (oauth.md §1.11): the ID token exchanged at the
    /// identity provider for an ID-JAG, then the JWT-bearer grant.
    EnterpriseManaged(Box<EnterpriseManaged>),
    /// The JWT-bearer grant with an assertion the host got elsewhere (workload identity
    /// federation, SEP-1933): `assertion` is sent as is, `client_id` (if any) with it, and a
    /// refusal is final (no retry, no other grant).
    JwtBearer {
        /// The client identifier to send, if the authorization server wants one.
        client_id: Option<String>,
        /// The JWT (its audience should be the authorization server's issuer).
        assertion: String,
    },
}

/// How a `client_credentials` client proves who it is.
#[derive(Clone)]
#[non_exhaustive]
pub enum ClientCredential {
    /// A client secret, sent as `client_secret_basic` (or `client_secret_post` where the
    /// authorization server lists only that).
    Secret(String),
    /// `private_key_jwt`: a client assertion signed with this key (ES256).
    PrivateKeyJwt(Es256Key),
}

/// What enterprise-managed authorization needs (oauth.md §1.11).
#[derive(Clone)]
pub struct EnterpriseManaged {
    /// The identity provider's token endpoint (where the token exchange goes).
    pub idp_token_endpoint: Url,
    /// How the client authenticates at the identity provider (commonly `none` with its
    /// `client_id` there).
    pub idp_client: ClientAuth,
    /// The user's ID token from the identity provider (single sign-on is the host's part).
    pub id_token: String,
    /// How the client authenticates at the MCP server's authorization server (commonly
    /// `client_secret_basic`).
    pub client: ClientAuth,
}

impl fmt::Debug for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Grant::AuthorizationCode => f.write_str("AuthorizationCode"),
            Grant::ClientCredentials {
                client_id,
                credential,
            } => f
                .debug_struct("ClientCredentials")
                .field("client_id", client_id)
                .field("credential", credential)
                .finish(),
            Grant::EnterpriseManaged(e) => f.debug_tuple("EnterpriseManaged").field(e).finish(),
            Grant::JwtBearer { client_id, .. } => f
                .debug_struct("JwtBearer")
                .field("client_id", client_id)
                .field("assertion", &REDACTED)
                .finish(),
        }
    }
}

impl fmt::Debug for ClientCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientCredential::Secret(_) => f.write_str("Secret(***)"),
            ClientCredential::PrivateKeyJwt(_) => f.write_str("PrivateKeyJwt(***)"),
        }
    }
}

impl fmt::Debug for EnterpriseManaged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterpriseManaged")
            .field(
                "idp_token_endpoint",
                &crate::error::redact_url(self.idp_token_endpoint.as_str()),
            )
            .field("idp_client", &self.idp_client)
            .field("id_token", &REDACTED)
            .field("client", &self.client)
            .finish()
    }
}

impl Grant {
    /// `client_credentials` with a client secret.
    pub fn client_secret(client_id: &str, secret: &str) -> Grant {
        Grant::ClientCredentials {
            client_id: client_id.to_owned(),
            credential: ClientCredential::Secret(secret.to_owned()),
        }
    }

    /// `client_credentials` with `private_key_jwt`: assertions signed (ES256) with the P-256
    /// key of a PKCS#8 PEM.
    pub fn private_key_jwt(client_id: &str, pem: &str) -> Result<Grant, jwt::JwtError> {
        Ok(Grant::ClientCredentials {
            client_id: client_id.to_owned(),
            credential: ClientCredential::PrivateKeyJwt(Es256Key::from_pkcs8_pem(pem)?),
        })
    }

    /// Enterprise-managed authorization: `id_token` exchanged at `idp_token_endpoint` (as
    /// public client `idp_client_id` there), then the ID-JAG presented with
    /// `client_secret_basic` as `client_id`.
    pub fn enterprise_managed(
        idp_token_endpoint: Url,
        idp_client_id: &str,
        id_token: &str,
        client_id: &str,
        client_secret: &str,
    ) -> Grant {
        Grant::EnterpriseManaged(Box::new(EnterpriseManaged {
            idp_token_endpoint,
            idp_client: ClientAuth::None {
                client_id: idp_client_id.to_owned(),
            },
            id_token: id_token.to_owned(),
            client: ClientAuth::SecretBasic {
                client_id: client_id.to_owned(),
                secret: client_secret.to_owned(),
            },
        }))
    }

    /// The JWT-bearer grant with a workload's JWT (workload identity federation).
    pub fn workload_identity(client_id: Option<&str>, assertion: &str) -> Grant {
        Grant::JwtBearer {
            client_id: client_id.map(str::to_owned),
            assertion: assertion.to_owned(),
        }
    }

    /// Whether a user takes part (the authorization-code flow).
    pub fn is_interactive(&self) -> bool {
        matches!(self, Grant::AuthorizationCode)
    }

    /// Whether this is the `client_credentials` grant (whose tokens are fetched anew rather
    /// than refreshed).
    pub fn is_client_credentials(&self) -> bool {
        matches!(self, Grant::ClientCredentials { .. })
    }
}

/// `scope` when there are scopes.
fn scope_of(scopes: &[String]) -> Option<String> {
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

/// A token request: the grant's `fields`, `scope`, `resource`, then the client's own fields
/// (and its Basic header), if any.
fn grant_request(
    endpoint: &Url,
    mut fields: Vec<(&'static str, String)>,
    scopes: &[String],
    resource: Option<&Resource>,
    auth: Option<&ClientAuth>,
) -> HttpRequestSpec {
    if let Some(scope) = scope_of(scopes) {
        fields.push(("scope", scope));
    }
    if let Some(resource) = resource {
        fields.push(("resource", resource.as_str().to_owned()));
    }
    let mut auth_fields = Vec::new();
    if let Some(auth) = auth {
        auth.body_fields(&mut auth_fields);
    }
    let mut all: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
    all.extend(auth_fields);
    HttpRequestSpec::form(endpoint, &all, auth.and_then(ClientAuth::basic_header))
}

/// The `client_credentials` request with `private_key_jwt` (RFC 7523 §2.2, oauth.md §1.10):
/// `grant_type`, `scope` (when any), `resource`, `client_assertion_type` and `assertion` (from
/// [`jwt::client_assertion`], fresh for this request).
pub fn client_credentials_jwt_request(
    token_endpoint: &Url,
    assertion: &str,
    scopes: &[String],
    resource: Option<&Resource>,
) -> HttpRequestSpec {
    let fields = vec![("grant_type", "client_credentials".to_owned())];
    let mut request = grant_request(token_endpoint, fields, scopes, resource, None);
    let mut tail = url::form_urlencoded::Serializer::new(String::new());
    tail.append_pair("client_assertion_type", jwt::CLIENT_ASSERTION_TYPE);
    tail.append_pair("client_assertion", assertion);
    request.body.push(b'&');
    request.body.extend_from_slice(tail.finish().as_bytes());
    request
}

/// The token exchange at the identity provider (RFC 8693 §2.1, SEP-990, oauth.md §1.11):
/// the ID token for an ID-JAG whose audience is the authorization server `issuer`, for the
/// MCP `resource`; `scope` when any; the client's authentication at the identity provider.
pub fn id_jag_exchange_request(
    grant: &EnterpriseManaged,
    issuer: &str,
    scopes: &[String],
    resource: Option<&Resource>,
) -> HttpRequestSpec {
    let fields = vec![
        ("grant_type", TOKEN_EXCHANGE.to_owned()),
        ("requested_token_type", ID_JAG.to_owned()),
        ("subject_token", grant.id_token.clone()),
        ("subject_token_type", ID_TOKEN.to_owned()),
        ("audience", issuer.to_owned()),
    ];
    grant_request(
        &grant.idp_token_endpoint,
        fields,
        scopes,
        resource,
        Some(&grant.idp_client),
    )
}

/// The JWT-bearer grant (RFC 7523 §2.1): `grant_type`, `assertion`, `scope` (when any),
/// `resource`, and the client authentication, if any.
pub fn jwt_bearer_request(
    token_endpoint: &Url,
    assertion: &str,
    scopes: &[String],
    resource: Option<&Resource>,
    auth: Option<&ClientAuth>,
) -> HttpRequestSpec {
    let fields = vec![
        ("grant_type", JWT_BEARER.to_owned()),
        ("assertion", assertion.to_owned()),
    ];
    grant_request(token_endpoint, fields, scopes, resource, auth)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::oauth::jwt::tests::{verified, TEST_PEM};
    use serde_json::json;

    /// A form request's fields, in order.
    pub(crate) fn fields(request: &HttpRequestSpec) -> Vec<(String, String)> {
        url::form_urlencoded::parse(&request.body)
            .map(|(n, v)| (n.into_owned(), v.into_owned()))
            .collect()
    }

    /// Owned name and value pairs.
    pub(crate) fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn resource() -> Resource {
        Resource::parse("http://localhost:3000/mcp").unwrap()
    }

    #[test]
    fn client_credentials_with_a_jwt_signs_an_assertion_for_the_issuer() {
        let key = Es256Key::from_pkcs8_pem(TEST_PEM).unwrap();
        let token = Url::parse("http://localhost:4000/token").unwrap();
        let assertion = jwt::client_assertion(
            &key,
            "conformance-test-client",
            "http://localhost:4000",
            1_800_000_000,
            "jti-1",
        );
        let request = client_credentials_jwt_request(&token, &assertion, &[], Some(&resource()));
        assert_eq!(request.header("authorization"), None);
        let fields = fields(&request);
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "grant_type",
                "resource",
                "client_assertion_type",
                "client_assertion"
            ]
        );
        assert_eq!(fields[2].1, jwt::CLIENT_ASSERTION_TYPE);
        let (header, claims) = verified(&fields[3].1, &key);
        assert_eq!(header, json!({"alg": "ES256", "typ": "JWT"}));
        assert_eq!(claims["aud"], "http://localhost:4000");
        assert_eq!(claims["iss"], "conformance-test-client");
        assert_eq!(claims["sub"], "conformance-test-client");
        assert_eq!(claims["exp"], 1_800_000_300u64);
        assert_eq!(claims["jti"], "jti-1");
        // The assertion never shows in `Debug`.
        assert!(!format!("{request:?}").contains(&fields[3].1));
    }

    #[test]
    fn the_id_jag_exchange_and_the_jwt_bearer_grant() {
        let grant = EnterpriseManaged {
            idp_token_endpoint: Url::parse("http://localhost:5000/token").unwrap(),
            idp_client: ClientAuth::None {
                client_id: "idp-client".into(),
            },
            id_token: "the-id-token".into(),
            client: ClientAuth::SecretBasic {
                client_id: "xaa".into(),
                secret: "s".into(),
            },
        };
        let exchange =
            id_jag_exchange_request(&grant, "http://localhost:4000", &[], Some(&resource()));
        assert_eq!(exchange.url.as_str(), "http://localhost:5000/token");
        assert_eq!(exchange.header("authorization"), None);
        assert_eq!(
            fields(&exchange),
            pairs(&[
                ("grant_type", TOKEN_EXCHANGE),
                ("requested_token_type", ID_JAG),
                ("subject_token", "the-id-token"),
                ("subject_token_type", ID_TOKEN),
                ("audience", "http://localhost:4000"),
                ("resource", "http://localhost:3000/mcp"),
                ("client_id", "idp-client"),
            ])
        );
        let debug = format!("{grant:?}");
        assert!(
            !debug.contains("the-id-token") && !debug.contains("\"s\""),
            "{debug}"
        );

        let token = Url::parse("http://localhost:4000/token").unwrap();
        let bearer =
            jwt_bearer_request(&token, "the-jag", &["a".into()], None, Some(&grant.client));
        assert_eq!(bearer.header("authorization"), Some("Basic eGFhOnM="));
        assert_eq!(
            fields(&bearer),
            pairs(&[
                ("grant_type", JWT_BEARER),
                ("assertion", "the-jag"),
                ("scope", "a")
            ])
        );
    }

    #[test]
    fn debug_hides_secrets_keys_and_assertions() {
        let key = Es256Key::from_pkcs8_pem(TEST_PEM).unwrap();
        let grants = [
            Grant::ClientCredentials {
                client_id: "c".into(),
                credential: ClientCredential::Secret("hunter2".into()),
            },
            Grant::ClientCredentials {
                client_id: "c".into(),
                credential: ClientCredential::PrivateKeyJwt(key),
            },
            Grant::JwtBearer {
                client_id: None,
                assertion: "eyJhbGciOi.secret.sig".into(),
            },
        ];
        for grant in grants {
            let debug = format!("{grant:?}");
            assert!(
                !debug.contains("hunter2") && !debug.contains("eyJhbGciOi"),
                "{debug}"
            );
        }
        assert_eq!(format!("{:?}", Grant::default()), "AuthorizationCode");
        let made = [
            Grant::client_secret("c", "hunter2"),
            Grant::private_key_jwt("c", TEST_PEM).unwrap(),
            Grant::enterprise_managed(
                Url::parse("http://idp/token").unwrap(),
                "i",
                "eyJhbGciOi.id.token",
                "c",
                "hunter2",
            ),
            Grant::workload_identity(Some("w"), "eyJhbGciOi.w.sig"),
        ];
        for grant in made {
            assert!(!grant.is_interactive());
            let debug = format!("{grant:?}");
            assert!(
                !debug.contains("hunter2") && !debug.contains("eyJhbGciOi"),
                "{debug}"
            );
        }
        assert!(Grant::private_key_jwt("c", "not a key").is_err());
    }
}
