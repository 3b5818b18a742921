//! Transcripts of the grants without a user (oauth.md §1.10, §1.11): every request exact, the
//! client assertion's header and claims decoded and its signature verified, time moved by the
//! test.

use std::time::Instant;

use serde_json::{json, Value};
use url::Url;

use super::*;
use crate::oauth::discovery::Revision;
use crate::oauth::grants::tests::{fields, pairs};
use crate::oauth::grants::Grant;
use crate::oauth::grants::{
    ClientCredential, EnterpriseManaged, ID_JAG, ID_TOKEN, JWT_BEARER, TOKEN_EXCHANGE,
};
use crate::oauth::jwt::tests::{verified, TEST_PEM};
use crate::oauth::jwt::{Es256Key, CLIENT_ASSERTION_TYPE};
use crate::oauth::token::{ClientAuth, HttpRequestSpec};

const SERVER: &str = "http://localhost:3000/mcp";
const AS: &str = "http://localhost:4000";
const IDP_TOKEN: &str = "http://localhost:5000/token";
const PRM_PATH: &str = "http://localhost:3000/.well-known/oauth-protected-resource/mcp";
const ASM_ROOT: &str = "http://localhost:4000/.well-known/oauth-authorization-server";
const UNIX: u64 = 1_800_000_000;
const RANDOM: [u8; 48] = [7; 48];
/// `jti` of an assertion made from [`RANDOM`] (the 16 bytes `state` would use).
const JTI: &str = "BwcHBwcHBwcHBwcHBwcHBw";

fn challenge() -> String {
    format!(r#"Bearer error="invalid_token", resource_metadata="{PRM_PATH}""#)
}

fn prm() -> Value {
    json!({"resource": SERVER, "authorization_servers": [AS]})
}

/// The metadata of an authorization server for the grants without a user: no authorization
/// or registration endpoint needed.
fn asm(grant_types: &[&str], methods: &[&str]) -> Value {
    json!({
        "issuer": AS,
        "authorization_endpoint": format!("{AS}/authorize"),
        "token_endpoint": format!("{AS}/token"),
        "code_challenge_methods_supported": ["S256"],
        "grant_types_supported": grant_types,
        "token_endpoint_auth_methods_supported": methods,
    })
}

fn config(grant: Grant) -> FlowConfig {
    let mut config = FlowConfig::new(
        Url::parse(SERVER).unwrap(),
        Revision::V2026_07_28,
        "mcpwire",
        "http://127.0.0.1:5555/callback",
    );
    config.grant = grant;
    config
}

/// Drives a flow: each request checked against the expected method and URL, answered, and
/// logged.
struct T {
    flow: OAuthFlow,
    now: Instant,
    unix: u64,
}

impl T {
    fn start(grant: Grant, unix: u64) -> T {
        let now = crate::test_support::epoch();
        let flow = OAuthFlow::start(now, config(grant), &[&challenge()], &RANDOM);
        T { flow, now, unix }
    }

    /// Answers the next request, which must be `method url`; returns it.
    fn answer(&mut self, method: &str, url: &str, status: u16, body: &Value) -> HttpRequestSpec {
        let (exchange, request) = match self.flow.poll_output() {
            Some(FlowOutput::Http { exchange, request }) => (exchange, request),
            other => panic!("expected {method} {url}, got {other:?}"),
        };
        assert_eq!((request.method, request.url.as_str()), (method, url));
        let body = body.to_string().into_bytes();
        self.flow
            .handle_response(self.now, exchange, status, &[], &body, self.unix);
        request
    }

    /// The discovery every grant makes: the PRM the challenge names, then the AS metadata.
    fn discover(&mut self, metadata: &Value) {
        self.answer("GET", PRM_PATH, 200, &prm());
        self.answer("GET", ASM_ROOT, 200, metadata);
    }

    fn end(&mut self) -> FlowOutput {
        let end = self.flow.poll_output().expect("an end");
        assert_eq!(self.flow.poll_output(), None, "nothing after the end");
        assert!(self.flow.is_finished());
        end
    }

    fn done(&mut self) -> Credentials {
        match self.end() {
            FlowOutput::Done(credentials) => *credentials,
            other => panic!("expected Done, got {other:?}"),
        }
    }
}

fn token_response(token: &str) -> Value {
    json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600})
}

fn secret_grant() -> Grant {
    Grant::ClientCredentials {
        client_id: "conformance-test-client".into(),
        credential: ClientCredential::Secret("conformance-test-secret".into()),
    }
}

fn jwt_grant() -> (Grant, Es256Key) {
    let key = Es256Key::from_pkcs8_pem(TEST_PEM).unwrap();
    let grant = Grant::ClientCredentials {
        client_id: "conformance-test-client".into(),
        credential: ClientCredential::PrivateKeyJwt(key.clone()),
    };
    (grant, key)
}

#[test]
fn client_credentials_with_a_secret_discovers_then_asks_the_token_endpoint_with_basic() {
    let mut t = T::start(secret_grant(), UNIX);
    t.discover(&asm(&["client_credentials"], &["client_secret_basic"]));
    let mut response = token_response("cc-token-1");
    response["refresh_token"] = json!("not kept");
    let request = t.answer("POST", "http://localhost:4000/token", 200, &response);
    assert_eq!(
        request.header("authorization"),
        Some("Basic Y29uZm9ybWFuY2UtdGVzdC1jbGllbnQ6Y29uZm9ybWFuY2UtdGVzdC1zZWNyZXQ=")
    );
    assert_eq!(
        request.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        fields(&request),
        pairs(&[("grant_type", "client_credentials"), ("resource", SERVER)])
    );
    let credentials = t.done();
    assert_eq!(credentials.tokens.access_token, "cc-token-1");
    assert_eq!(credentials.tokens.expires_at, Some(UNIX + 3600));
    // Fetched anew, never refreshed.
    assert_eq!(credentials.tokens.refresh_token, None);
    assert_eq!(credentials.client_auth.method(), "client_secret_basic");
    assert_eq!(credentials.issuer, AS);
    assert_eq!(
        credentials.token_endpoint.as_str(),
        "http://localhost:4000/token"
    );
    assert_eq!(credentials.authorizations, 1);
    assert_eq!(credentials.registration, None);
    // The secret never shows.
    assert!(!format!("{credentials:?} {request:?}").contains("conformance-test-secret"));
}

#[test]
fn client_credentials_with_a_secret_posts_it_where_only_post_is_listed() {
    let mut t = T::start(secret_grant(), UNIX);
    t.discover(&asm(&["client_credentials"], &["client_secret_post"]));
    let request = t.answer(
        "POST",
        "http://localhost:4000/token",
        200,
        &token_response("t"),
    );
    assert_eq!(request.header("authorization"), None);
    assert_eq!(
        fields(&request),
        pairs(&[
            ("grant_type", "client_credentials"),
            ("resource", SERVER),
            ("client_id", "conformance-test-client"),
            ("client_secret", "conformance-test-secret"),
        ])
    );
    assert_eq!(t.done().client_auth.method(), "client_secret_post");
}

#[test]
fn client_credentials_with_a_jwt_signs_for_the_issuer_at_the_time_given() {
    let (grant, key) = jwt_grant();
    let mut t = T::start(grant, UNIX);
    t.discover(&asm(&["client_credentials"], &["private_key_jwt"]));
    let request = t.answer(
        "POST",
        "http://localhost:4000/token",
        200,
        &token_response("cc-token-2"),
    );
    assert_eq!(request.header("authorization"), None);
    let fields = fields(&request);
    let assertion = fields[3].1.clone();
    assert_eq!(
        fields,
        pairs(&[
            ("grant_type", "client_credentials"),
            ("resource", SERVER),
            ("client_assertion_type", CLIENT_ASSERTION_TYPE),
            ("client_assertion", &assertion),
        ])
    );
    let (header, claims) = verified(&assertion, &key);
    assert_eq!(header, json!({"alg": "ES256", "typ": "JWT"}));
    assert_eq!(
        claims,
        json!({
            "iss": "conformance-test-client",
            "sub": "conformance-test-client",
            "aud": AS,
            "iat": UNIX,
            "exp": UNIX + 300,
            "jti": JTI,
        })
    );
    let credentials = t.done();
    assert_eq!(credentials.tokens.access_token, "cc-token-2");
    assert_eq!(credentials.client_auth.method(), "none");
    assert!(!format!("{request:?}").contains(&assertion));

    // An hour later the token is due (60 s ahead), and the flow run again signs anew, at the
    // new time.
    let later = UNIX + 3600 - 60;
    assert!(!credentials.tokens.needs_refresh(later - 1, 60));
    assert!(credentials.tokens.needs_refresh(later, 60));
    let (grant, _) = jwt_grant();
    let mut again = T::start(grant, later);
    again.discover(&asm(&["client_credentials"], &["private_key_jwt"]));
    let request = again.answer(
        "POST",
        "http://localhost:4000/token",
        200,
        &token_response("t2"),
    );
    let (_, claims) = verified(&self::fields(&request)[3].1, &key);
    assert_eq!(
        (claims["iat"].as_u64(), claims["exp"].as_u64()),
        (Some(later), Some(later + 300))
    );
    assert_eq!(again.done().tokens.expires_at, Some(later + 3600));
}

#[test]
fn client_credentials_scopes_come_from_the_challenge_without_offline_access() {
    let now = crate::test_support::epoch();
    let challenge = format!(r#"Bearer scope="mcp:read mcp:write", resource_metadata="{PRM_PATH}""#);
    let flow = OAuthFlow::start(now, config(secret_grant()), &[&challenge], &RANDOM);
    let mut t = T {
        flow,
        now,
        unix: UNIX,
    };
    let mut metadata = asm(&["client_credentials"], &["client_secret_basic"]);
    metadata["scopes_supported"] = json!(["mcp:read", "mcp:write", "offline_access"]);
    t.discover(&metadata);
    let request = t.answer(
        "POST",
        "http://localhost:4000/token",
        200,
        &token_response("t"),
    );
    assert_eq!(
        fields(&request),
        pairs(&[
            ("grant_type", "client_credentials"),
            ("scope", "mcp:read mcp:write"),
            ("resource", SERVER),
        ])
    );
    assert_eq!(t.done().requested_scopes, ["mcp:read", "mcp:write"]);
}

#[test]
fn a_refused_client_credentials_request_ends_the_flow() {
    let mut t = T::start(secret_grant(), UNIX);
    t.discover(&asm(&["client_credentials"], &["client_secret_basic"]));
    let refusal = json!({"error": "invalid_client", "error_description": "no"});
    t.answer("POST", "http://localhost:4000/token", 401, &refusal);
    match t.end() {
        FlowOutput::Failed(FlowError::Token(TokenError::OAuth { status: 401, error })) => {
            assert_eq!(error.code, OAuthErrorCode::InvalidClient);
        }
        other => panic!("expected the refusal, got {other:?}"),
    }
}

#[test]
fn client_credentials_without_metadata_use_the_default_token_endpoint_under_2025_03_26() {
    let mut config = config(secret_grant());
    config.revision = Revision::V2025_03_26;
    let now = crate::test_support::epoch();
    let flow = OAuthFlow::start(now, config, &[&challenge()], &RANDOM);
    let mut t = T {
        flow,
        now,
        unix: UNIX,
    };
    // No PRM where the challenge says: the 2025-03-26 rules, the server's origin as the
    // authorization base; no metadata there either: its default token endpoint (those rules
    // only: under later ones the server offers no OAuth, see the flow's tests).
    t.answer("GET", PRM_PATH, 404, &json!({}));
    t.answer(
        "GET",
        "http://localhost:3000/.well-known/oauth-authorization-server",
        404,
        &json!({}),
    );
    t.answer(
        "GET",
        "http://localhost:3000/.well-known/openid-configuration",
        404,
        &json!({}),
    );
    let request = t.answer(
        "POST",
        "http://localhost:3000/token",
        200,
        &token_response("t"),
    );
    assert!(request
        .header("authorization")
        .unwrap()
        .starts_with("Basic "));
    assert_eq!(t.done().issuer, "http://localhost:3000");
}

fn enterprise() -> Grant {
    Grant::EnterpriseManaged(Box::new(EnterpriseManaged {
        idp_token_endpoint: Url::parse(IDP_TOKEN).unwrap(),
        idp_client: ClientAuth::None {
            client_id: "conformance-test-idp-client".into(),
        },
        id_token: "the-id-token".into(),
        client: ClientAuth::SecretBasic {
            client_id: "conformance-test-xaa-client".into(),
            secret: "conformance-test-xaa-secret".into(),
        },
    }))
}

#[test]
fn enterprise_managed_exchanges_the_id_token_then_presents_the_id_jag() {
    let mut t = T::start(enterprise(), UNIX);
    t.discover(&asm(&[JWT_BEARER], &["client_secret_basic"]));
    let jag =
        json!({"access_token": "the-id-jag", "issued_token_type": ID_JAG, "token_type": "N_A"});
    let exchange = t.answer("POST", IDP_TOKEN, 200, &jag);
    assert_eq!(exchange.header("authorization"), None);
    assert_eq!(
        fields(&exchange),
        pairs(&[
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG),
            ("subject_token", "the-id-token"),
            ("subject_token_type", ID_TOKEN),
            ("audience", AS),
            ("resource", SERVER),
            ("client_id", "conformance-test-idp-client"),
        ])
    );
    let grant = t.answer(
        "POST",
        "http://localhost:4000/token",
        200,
        &token_response("test-token-3"),
    );
    assert_eq!(
        grant.header("authorization"),
        Some("Basic Y29uZm9ybWFuY2UtdGVzdC14YWEtY2xpZW50OmNvbmZvcm1hbmNlLXRlc3QteGFhLXNlY3JldA==")
    );
    assert_eq!(
        fields(&grant),
        pairs(&[
            ("grant_type", JWT_BEARER),
            ("assertion", "the-id-jag"),
            ("resource", SERVER),
        ])
    );
    let credentials = t.done();
    assert_eq!(credentials.tokens.access_token, "test-token-3");
    assert_eq!(credentials.client_auth.method(), "client_secret_basic");
    assert_eq!(credentials.issuer, AS);
    let shown = format!("{:?} {exchange:?} {grant:?}", t.flow);
    assert!(
        !shown.contains("the-id-token") && !shown.contains("the-id-jag"),
        "{shown}"
    );
}

#[test]
fn enterprise_managed_refuses_a_token_that_is_not_an_id_jag() {
    let mut t = T::start(enterprise(), UNIX);
    t.discover(&asm(&[JWT_BEARER], &["client_secret_basic"]));
    let other = json!({
        "access_token": "x",
        "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
        "token_type": "Bearer",
    });
    t.answer("POST", IDP_TOKEN, 200, &other);
    assert_eq!(
        t.end(),
        FlowOutput::Failed(FlowError::UnexpectedTokenType {
            expected: ID_JAG,
            got: "urn:ietf:params:oauth:token-type:access_token".into(),
        })
    );
}

#[test]
fn enterprise_managed_ends_on_the_identity_providers_refusal() {
    let mut t = T::start(enterprise(), UNIX);
    t.discover(&asm(&[JWT_BEARER], &["client_secret_basic"]));
    let refusal = json!({"error": "invalid_grant", "error_description": "Invalid ID token"});
    t.answer("POST", IDP_TOKEN, 400, &refusal);
    assert!(matches!(
        t.end(),
        FlowOutput::Failed(FlowError::Token(TokenError::OAuth { status: 400, .. }))
    ));
}

fn workload(client_id: Option<&str>) -> Grant {
    Grant::JwtBearer {
        client_id: client_id.map(str::to_owned),
        assertion: "workload.jwt.sig".into(),
    }
}

#[test]
fn workload_identity_presents_the_jwt_in_the_jwt_bearer_grant() {
    let mut t = T::start(workload(Some("conformance-wif-workload")), UNIX);
    t.discover(&asm(&[JWT_BEARER], &["none"]));
    let request = t.answer(
        "POST",
        "http://localhost:4000/token",
        200,
        &token_response("wif"),
    );
    assert_eq!(request.header("authorization"), None);
    assert_eq!(
        fields(&request),
        pairs(&[
            ("grant_type", JWT_BEARER),
            ("assertion", "workload.jwt.sig"),
            ("resource", SERVER),
            ("client_id", "conformance-wif-workload"),
        ])
    );
    assert_eq!(t.done().tokens.access_token, "wif");
}

#[test]
fn workload_identity_gives_up_on_a_refusal_without_another_request() {
    let mut t = T::start(workload(None), UNIX);
    t.discover(&asm(&[JWT_BEARER], &["none"]));
    let refusal = json!({"error": "invalid_grant", "error_description": "expired"});
    let request = t.answer("POST", "http://localhost:4000/token", 400, &refusal);
    assert!(!fields(&request).iter().any(|(n, _)| n == "client_id"));
    match t.end() {
        FlowOutput::Failed(FlowError::Token(TokenError::OAuth { error, .. })) => {
            assert_eq!(error.code, OAuthErrorCode::InvalidGrant);
        }
        other => panic!("expected the refusal, got {other:?}"),
    }
}

#[test]
fn grants_without_a_user_count_against_the_authorization_budget() {
    let mut t = T::start(secret_grant(), UNIX);
    t.discover(&asm(&["client_credentials"], &["client_secret_basic"]));
    t.answer(
        "POST",
        "http://localhost:4000/token",
        200,
        &token_response("t"),
    );
    let mut previous = t.done();
    previous.authorizations = 3;
    let now = crate::test_support::epoch();
    let challenge = format!(
        r#"Bearer error="insufficient_scope", scope="more", resource_metadata="{PRM_PATH}""#
    );
    let mut flow = OAuthFlow::step_up(
        now,
        config(secret_grant()),
        &previous,
        &[&challenge],
        &RANDOM,
    );
    assert_eq!(
        flow.poll_output(),
        Some(FlowOutput::Failed(FlowError::TooManyAuthorizations {
            limit: 3
        }))
    );
}
