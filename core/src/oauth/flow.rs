//! The authorization-code flow as a sans-IO state machine (oauth.md §1.14): from the `401`
//! that triggers it to the tokens, with the same verbs as [`crate::connection::Connection`].
//!
//! The driver feeds it and carries out what it asks:
//! - [`OAuthFlow::poll_output`] yields [`FlowOutput`]s: an HTTP request to make (redirects not
//!   followed) and report with [`OAuthFlow::handle_response`] or [`OAuthFlow::handle_failure`]
//!   under its `exchange` number; the authorization URL to send the user to, whose redirect
//!   comes back through [`OAuthFlow::handle_redirect`]; and at the end [`FlowOutput::Done`] or
//!   [`FlowOutput::Failed`], once.
//! - [`OAuthFlow::poll_timeout`] / [`OAuthFlow::handle_timeout`]: one deadline per HTTP exchange
//!   ([`FlowConfig::exchange_timeout`]) and one for the user's authorization
//!   ([`FlowConfig::authorization_timeout`]).
//!
//! Time, wall-clock and randomness are inputs: `now` ([`Instant`]) for deadlines, Unix seconds
//! for token expiry, and 48 random bytes (32 for the PKCE verifier, 16 for `state`).
//!
//! The steps, each one a building block of this module's siblings: Protected Resource Metadata
//! probed in the planned order and its `resource` checked before anything else; the
//! authorization server's metadata probed in order, its `issuer` and PKCE support checked per
//! [`Revision`] (no PRM: the 2025-03-26 rules, the server's origin as the authorization base
//! and, without metadata, its default endpoints when [`FlowConfig::revision`] is 2025-03-26 or
//! the `401` challenged with `Bearer`);
//! the client identity (pre-registered, a metadata document, or dynamic registration); the
//! scopes (oauth.md §1.9); the authorization URL; the redirect checked (`state`, RFC 9207
//! `iss`); the code exchanged.
//!
//! A server that asks for credentials and has no metadata anywhere offers no OAuth sign-in:
//! the flow ends with [`FlowError::NoOAuth`], which names the places looked at and says how to
//! give a token instead ([`STATIC_TOKEN_ADVICE`]). A client is registered only for a sign-in:
//! when the user cannot be asked ([`FlowConfig::no_sign_in`]) the flow ends after discovery
//! with [`FlowError::SignInUnavailable`], having registered nothing.
//!
//! Three entry points: [`OAuthFlow::start`] (after a `401`), [`OAuthFlow::step_up`] (after a
//! `403 insufficient_scope`) and [`OAuthFlow::refresh`]. Authorizations are counted in
//! [`Credentials::authorizations`], which a step-up continues, so that
//! [`FlowConfig::max_authorizations`] bounds every authorization made for one logical request
//! (oauth.md §5 trap (e)).
//!
//! [`FlowConfig::grant`] chooses how the tokens are had once the authorization server is known:
//! the authorization code (the default, with the user), or one of the extensions' grants with
//! no user ([`Grant`]: client credentials with a secret or a signed JWT, enterprise-managed
//! authorization, a workload's JWT). Those need no registration and no redirect; their
//! authorizations count against the same budget, and a client assertion is signed at the Unix
//! time of the response that led to it.
//!
//! [`Revision`]: super::discovery::Revision
//! [`Grant`]: super::grants::Grant

use std::fmt;
use std::time::{Duration, Instant};

mod steps;
mod words;
use steps::Authorization;
pub use words::{Credentials, FlowConfig, FlowError, FlowOutput, KnownClient, STATIC_TOKEN_ADVICE};
use words::{Io, Outcome, PRM};

use super::pkce::CallbackError;
use super::token::{self, OAuthErrorCode, TokenError};

enum Kind {
    Authorization(Box<Authorization>),
    Refresh(Box<Credentials>),
    Finished,
}

/// The OAuth flow, sans IO (see the module docs).
///
/// Its `Debug` shows where it is, never a token, secret, verifier or `state`.
pub struct OAuthFlow {
    io: Io,
    kind: Kind,
}

impl OAuthFlow {
    /// Starts from a `401` (or a `403` the caller treats as one): `challenges` are the
    /// `WWW-Authenticate` values of the response that triggered it, `random` 48 random bytes
    /// (32 for the PKCE verifier, 16 for `state`).
    pub fn start(
        now: Instant,
        config: FlowConfig,
        challenges: &[&str],
        random: &[u8; 48],
    ) -> OAuthFlow {
        OAuthFlow::begin(now, config, challenges, random, None)
    }

    /// Starts a step-up after a `403` with `error="insufficient_scope"` (oauth.md §1.9): the
    /// scopes requested are the union of those requested and granted for `previous` and the
    /// challenge's. Fails at once when the challenge adds no scope (asking again is futile) or
    /// when `previous.authorizations` already reached [`FlowConfig::max_authorizations`]. The
    /// client of `previous` is reused when discovery leads to the same issuer.
    pub fn step_up(
        now: Instant,
        config: FlowConfig,
        previous: &Credentials,
        challenges: &[&str],
        random: &[u8; 48],
    ) -> OAuthFlow {
        OAuthFlow::begin(now, config, challenges, random, Some(previous.clone()))
    }

    fn begin(
        now: Instant,
        config: FlowConfig,
        challenges: &[&str],
        random: &[u8; 48],
        previous: Option<Credentials>,
    ) -> OAuthFlow {
        let mut io = Io::new(config.exchange_timeout, PRM);
        let mut flow = Authorization::new(config, challenges, random, previous);
        let first = flow.begin(&mut io, now);
        let mut machine = OAuthFlow {
            io,
            kind: Kind::Authorization(Box::new(flow)),
        };
        machine.settle(first);
        machine
    }

    /// Refreshes `credentials` (oauth.md §1.8): a `refresh_token` grant with the same client
    /// authentication and `resource`. Ends [`FlowOutput::Done`] with the new tokens (the old
    /// refresh token and scopes kept where the response has none), or
    /// [`FlowOutput::Failed`]: [`FlowError::ReauthorizationRequired`] on `invalid_grant`,
    /// [`FlowError::NoRefreshToken`] at once when there is none.
    pub fn refresh(
        now: Instant,
        credentials: &Credentials,
        exchange_timeout: Duration,
    ) -> OAuthFlow {
        let mut flow = OAuthFlow {
            io: Io::new(exchange_timeout, "refresh"),
            kind: Kind::Refresh(Box::new(credentials.clone())),
        };
        match &credentials.tokens.refresh_token {
            None => flow.settle(Err(FlowError::NoRefreshToken)),
            Some(refresh_token) => {
                let request = token::refresh_request(
                    &credentials.token_endpoint,
                    &credentials.client_auth,
                    refresh_token,
                    None,
                    credentials.resource.as_ref(),
                );
                flow.io.send(now, "refresh", request);
            }
        }
        flow
    }

    /// The next thing to do, or the end ([`FlowOutput::Done`] or [`FlowOutput::Failed`],
    /// yielded once).
    pub fn poll_output(&mut self) -> Option<FlowOutput> {
        self.io.out.pop_front()
    }

    /// Whether the flow has ended (its last output may still be waiting in
    /// [`OAuthFlow::poll_output`]).
    pub fn is_finished(&self) -> bool {
        matches!(self.kind, Kind::Finished)
    }

    /// The response to request `exchange`, received at `now` and at Unix time `unix_now`.
    /// A response to anything but the request in flight is ignored. The headers are not used
    /// by the steps so far; pass them all.
    pub fn handle_response(
        &mut self,
        now: Instant,
        exchange: u64,
        status: u16,
        _headers: &[(String, String)],
        body: &[u8],
        unix_now: u64,
    ) {
        if self.io.in_flight != Some(exchange) {
            return;
        }
        self.io.in_flight = None;
        self.io.deadline = None;
        let outcome = match &mut self.kind {
            Kind::Authorization(flow) => {
                flow.on_response(&mut self.io, now, status, body, unix_now)
            }
            Kind::Refresh(previous) => refreshed(previous, status, body, unix_now),
            Kind::Finished => return,
        };
        self.settle(outcome);
    }

    /// Request `exchange` could not be carried out (connection refused, TLS, …): the flow
    /// fails with [`FlowError::Transport`].
    pub fn handle_failure(&mut self, _now: Instant, exchange: u64, reason: &str) {
        if self.io.in_flight != Some(exchange) || self.is_finished() {
            return;
        }
        let during = self.io.waiting_for;
        self.settle(Err(FlowError::Transport {
            during,
            reason: reason.to_owned(),
        }));
    }

    /// The redirect came back: a `Location` header, a URL, or a pasted query. It is checked
    /// (`state`, RFC 9207 `iss`, an error response) and its code exchanged (`Ok`).
    ///
    /// A redirect without the `state` sent is discarded (`Err`, oauth.md §1.4): the flow keeps
    /// waiting, so a stray or forged request to the redirect URI cannot end it. Any other
    /// refusal (`iss` mismatch, an error from the server, no code) ends the flow with
    /// [`FlowError::Callback`] and is returned too. Ignored (`Ok`) unless the flow waits for a
    /// redirect.
    pub fn handle_redirect(&mut self, now: Instant, location: &str) -> Result<(), CallbackError> {
        let Kind::Authorization(flow) = &mut self.kind else {
            return Ok(());
        };
        if !flow.waits_for_redirect() {
            return Ok(());
        }
        match flow.on_redirect(&mut self.io, now, location) {
            Err(FlowError::Callback(
                error @ (CallbackError::MissingState | CallbackError::StateMismatch),
            )) => Err(error),
            Err(FlowError::Callback(error)) => {
                self.settle(Err(FlowError::Callback(error.clone())));
                Err(error)
            }
            outcome => {
                self.settle(outcome);
                Ok(())
            }
        }
    }

    /// When [`OAuthFlow::handle_timeout`] must be called next, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.io.deadline
    }

    /// Time passed: at or after the deadline, the flow fails with [`FlowError::Timeout`].
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.io.deadline.is_some_and(|deadline| now >= deadline) && !self.is_finished() {
            let during = self.io.waiting_for;
            self.settle(Err(FlowError::Timeout { during }));
        }
    }

    /// Ends the flow on a result, or does nothing while it waits.
    fn settle(&mut self, outcome: Outcome) {
        let end = match outcome {
            Ok(None) => return,
            Ok(Some(credentials)) => FlowOutput::Done(Box::new(credentials)),
            Err(error) => FlowOutput::Failed(error),
        };
        self.io.in_flight = None;
        self.io.deadline = None;
        self.io.out.push_back(end);
        self.kind = Kind::Finished;
    }
}

impl fmt::Debug for OAuthFlow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("OAuthFlow");
        match &self.kind {
            Kind::Authorization(flow) => s.field("flow", flow),
            Kind::Refresh(previous) => s
                .field("step", &"refresh")
                .field("issuer", &previous.issuer),
            Kind::Finished => s.field("step", &"finished"),
        };
        s.field("in_flight", &self.io.in_flight)
            .field("pending", &self.io.out)
            .finish()
    }
}

/// The end of a refresh.
fn refreshed(previous: &Credentials, status: u16, body: &[u8], unix_now: u64) -> Outcome {
    match token::parse_token_response(status, body, unix_now) {
        Ok(tokens) => Ok(Some(Credentials {
            tokens: tokens.merged_refresh(&previous.tokens),
            ..previous.clone()
        })),
        Err(TokenError::OAuth { error, .. }) if error.code == OAuthErrorCode::InvalidGrant => {
            Err(FlowError::ReauthorizationRequired(error))
        }
        Err(error) => Err(error.into()),
    }
}

#[cfg(test)]
mod grant_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::discovery::{DiscoveryError, Revision};
    use crate::oauth::grants::Grant;
    use crate::oauth::pkce::{self, Pkce};
    use crate::oauth::register::{IdentityError, PreRegisteredClient, RegisteredClient};
    use crate::oauth::token::{ClientAuth, HttpRequestSpec, Resource};
    use serde_json::{json, Value};
    use url::Url;

    const SERVER: &str = "http://localhost:3000/mcp";
    const AS: &str = "http://localhost:4000";
    const REDIRECT: &str = "http://127.0.0.1:5555/callback";
    const PRM_PATH: &str = "http://localhost:3000/.well-known/oauth-protected-resource/mcp";
    const PRM_ROOT: &str = "http://localhost:3000/.well-known/oauth-protected-resource";
    const ASM_ROOT: &str = "http://localhost:4000/.well-known/oauth-authorization-server";
    const OIDC_ROOT: &str = "http://localhost:4000/.well-known/openid-configuration";
    const UNIX: u64 = 1_800_000_000;
    const RANDOM: [u8; 48] = [7; 48];

    fn config(revision: Revision) -> FlowConfig {
        FlowConfig::new(Url::parse(SERVER).unwrap(), revision, "mcpwire", REDIRECT)
    }

    fn challenge_for(prm: &str) -> String {
        format!(r#"Bearer error="invalid_token", resource_metadata="{prm}""#)
    }

    fn prm(resource: &str, issuer: &str) -> Value {
        json!({"resource": resource, "authorization_servers": [issuer]})
    }

    /// AS metadata at issuer `issuer` with endpoints under `base`, and `extra` members.
    fn asm(issuer: &str, base: &str, extra: Value) -> Value {
        let mut doc = json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{base}/authorize"),
            "token_endpoint": format!("{base}/token"),
            "registration_endpoint": format!("{base}/register"),
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
        });
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                doc.as_object_mut().unwrap().remove(k);
            } else {
                doc[k] = v.clone();
            }
        }
        doc
    }

    fn state() -> String {
        pkce::state_from_random(&[7; 16])
    }

    fn pkce_pair() -> Pkce {
        Pkce::from_random(&[7; 32])
    }

    /// Drives a flow and keeps the transcript: `GET url`, `POST url`, `AUTHORIZE url`.
    struct T {
        flow: OAuthFlow,
        now: Instant,
        log: Vec<String>,
    }

    impl T {
        fn start(config: FlowConfig, challenge: &str) -> T {
            let now = crate::test_support::epoch();
            T::new(OAuthFlow::start(now, config, &[challenge], &RANDOM), now)
        }

        fn new(flow: OAuthFlow, now: Instant) -> T {
            T {
                flow,
                now,
                log: Vec::new(),
            }
        }

        fn http(&mut self) -> (u64, HttpRequestSpec) {
            match self.flow.poll_output() {
                Some(FlowOutput::Http { exchange, request }) => {
                    self.log.push(format!("{} {}", request.method, request.url));
                    (exchange, request)
                }
                other => panic!("expected a request, got {other:?}"),
            }
        }

        /// Answers the next request, which must be `method url`; returns it.
        fn answer(
            &mut self,
            method: &str,
            url: &str,
            status: u16,
            body: &Value,
        ) -> HttpRequestSpec {
            let (exchange, request) = self.http();
            assert_eq!((request.method, request.url.as_str()), (method, url));
            let body = if body.is_null() {
                Vec::new()
            } else {
                body.to_string().into_bytes()
            };
            self.flow
                .handle_response(self.now, exchange, status, &[], &body, UNIX);
            request
        }

        fn get(&mut self, url: &str, status: u16, body: &Value) {
            self.answer("GET", url, status, body);
        }

        fn authorize(&mut self) -> Url {
            match self.flow.poll_output() {
                Some(FlowOutput::Authorize { url }) => {
                    self.log.push(format!("AUTHORIZE {}", url.path()));
                    url
                }
                other => panic!("expected the authorization URL, got {other:?}"),
            }
        }

        /// Authorizes and brings the code back with the right state.
        fn authorize_ok(&mut self) -> Url {
            let url = self.authorize();
            let location = format!("{REDIRECT}?code=test-auth-code&state={}", state());
            assert_eq!(self.flow.handle_redirect(self.now, &location), Ok(()));
            url
        }

        fn end(&mut self) -> FlowOutput {
            let end = self.flow.poll_output().expect("an end");
            assert!(
                matches!(end, FlowOutput::Done(_) | FlowOutput::Failed(_)),
                "{end:?}"
            );
            assert_eq!(self.flow.poll_output(), None, "nothing after the end");
            assert!(self.flow.is_finished());
            assert_eq!(self.flow.poll_timeout(), None);
            end
        }

        fn done(&mut self) -> Credentials {
            match self.end() {
                FlowOutput::Done(credentials) => *credentials,
                other => panic!("expected Done, got {other:?}"),
            }
        }

        fn failed(&mut self) -> FlowError {
            match self.end() {
                FlowOutput::Failed(error) => error,
                other => panic!("expected Failed, got {other:?}"),
            }
        }
    }

    fn query(url: &Url, name: &str) -> Option<String> {
        url.query_pairs()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.into_owned())
    }

    fn field(request: &HttpRequestSpec, name: &str) -> Option<String> {
        url::form_urlencoded::parse(&request.body)
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.into_owned())
    }

    fn token_ok() -> Value {
        json!({"access_token": "test-token-1", "token_type": "Bearer", "expires_in": 3600})
    }

    /// The token request of a standard flow: the fields every grant of code must carry.
    fn assert_code_exchange(request: &HttpRequestSpec, resource: &str) {
        assert_eq!(
            field(request, "grant_type").as_deref(),
            Some("authorization_code")
        );
        assert_eq!(field(request, "code").as_deref(), Some("test-auth-code"));
        assert_eq!(field(request, "redirect_uri").as_deref(), Some(REDIRECT));
        assert_eq!(field(request, "code_verifier"), Some(pkce_pair().verifier));
        assert_eq!(field(request, "resource").as_deref(), Some(resource));
    }

    #[test]
    fn metadata_default_uses_the_header_prm_alone_then_registers() {
        let mut t = T::start(config(Revision::V2025_11_25), &challenge_for(PRM_PATH));
        t.get(PRM_PATH, 200, &prm(SERVER, AS));
        t.get(ASM_ROOT, 200, &asm(AS, AS, json!({})));
        let registration = t.answer(
            "POST",
            "http://localhost:4000/register",
            201,
            &json!({"client_id": "dcr-client"}),
        );
        let body: Value = serde_json::from_slice(&registration.body).unwrap();
        assert_eq!(body["redirect_uris"], json!([REDIRECT]));
        assert_eq!(
            body["grant_types"],
            json!(["authorization_code", "refresh_token"])
        );
        assert_eq!(body["application_type"], "native");
        assert!(body.get("scope").is_none());
        let url = t.authorize_ok();
        assert_eq!(
            url.as_str().split('?').next(),
            Some("http://localhost:4000/authorize")
        );
        assert_eq!(query(&url, "response_type").as_deref(), Some("code"));
        assert_eq!(query(&url, "client_id").as_deref(), Some("dcr-client"));
        assert_eq!(query(&url, "redirect_uri").as_deref(), Some(REDIRECT));
        assert_eq!(query(&url, "code_challenge"), Some(pkce_pair().challenge));
        assert_eq!(
            query(&url, "code_challenge_method").as_deref(),
            Some("S256")
        );
        assert_eq!(query(&url, "state"), Some(state()));
        assert_eq!(query(&url, "resource").as_deref(), Some(SERVER));
        assert_eq!(query(&url, "scope"), None, "scope omitted when undefined");
        let token = t.answer("POST", "http://localhost:4000/token", 200, &token_ok());
        assert_code_exchange(&token, SERVER);
        assert_eq!(field(&token, "client_id").as_deref(), Some("dcr-client"));
        assert_eq!(token.header("authorization"), None);
        let credentials = t.done();
        assert_eq!(credentials.tokens.access_token, "test-token-1");
        assert_eq!(credentials.tokens.expires_at, Some(UNIX + 3600));
        assert_eq!(credentials.issuer, AS);
        assert_eq!(
            credentials.resource.as_ref().map(Resource::as_str),
            Some(SERVER)
        );
        assert_eq!(credentials.authorizations, 1);
        assert_eq!(
            credentials
                .registration
                .as_ref()
                .map(|r| r.client_id.as_str()),
            Some("dcr-client")
        );
        // Trap (c): no root PRM probe, no other well-known.
        assert_eq!(
            t.log,
            [
                format!("GET {PRM_PATH}"),
                format!("GET {ASM_ROOT}"),
                "POST http://localhost:4000/register".into(),
                "AUTHORIZE /authorize".into(),
                "POST http://localhost:4000/token".into(),
            ]
        );
    }

    #[test]
    fn metadata_var1_probes_the_path_prm_then_falls_to_openid_configuration() {
        let mut t = T::start(
            config(Revision::V2025_11_25),
            r#"Bearer error="invalid_token""#,
        );
        t.get(PRM_PATH, 200, &prm(SERVER, AS));
        t.get(ASM_ROOT, 404, &Value::Null);
        t.get(
            OIDC_ROOT,
            200,
            &asm(AS, AS, json!({"jwks_uri": "http://localhost:4000/jwks"})),
        );
        t.answer(
            "POST",
            "http://localhost:4000/register",
            201,
            &json!({"client_id": "c"}),
        );
        t.authorize_ok();
        t.answer("POST", "http://localhost:4000/token", 200, &token_ok());
        t.done();
        assert_eq!(
            &t.log[..3],
            [
                format!("GET {PRM_PATH}"),
                format!("GET {ASM_ROOT}"),
                format!("GET {OIDC_ROOT}")
            ]
        );
    }

    #[test]
    fn metadata_var2_root_prm_with_origin_resource_and_a_path_issuer() {
        let issuer = "http://localhost:4000/tenant1";
        let mut t = T::start(config(Revision::V2026_07_28), "Bearer");
        t.get(PRM_PATH, 404, &Value::Null);
        t.get(PRM_ROOT, 200, &prm("http://localhost:3000", issuer));
        t.get(
            "http://localhost:4000/.well-known/oauth-authorization-server/tenant1",
            200,
            &asm(issuer, issuer, json!({})),
        );
        t.answer(
            "POST",
            "http://localhost:4000/tenant1/register",
            201,
            &json!({"client_id": "c"}),
        );
        let url = t.authorize_ok();
        assert_eq!(
            query(&url, "resource").as_deref(),
            Some("http://localhost:3000"),
            "verbatim, no slash added"
        );
        let token = t.answer(
            "POST",
            "http://localhost:4000/tenant1/token",
            200,
            &token_ok(),
        );
        assert_code_exchange(&token, "http://localhost:3000");
        assert_eq!(t.done().issuer, issuer);
    }

    #[test]
    fn metadata_var3_custom_prm_and_path_appended_oidc_and_never_the_root() {
        let custom = "http://localhost:3000/custom/metadata/location.json";
        let issuer = "http://localhost:4000/tenant1";
        let plan = [
            "http://localhost:4000/.well-known/oauth-authorization-server/tenant1",
            "http://localhost:4000/.well-known/openid-configuration/tenant1",
            "http://localhost:4000/tenant1/.well-known/openid-configuration",
        ];
        let mut t = T::start(config(Revision::V2025_11_25), &challenge_for(custom));
        t.get(custom, 200, &prm(SERVER, issuer));
        t.get(plan[0], 404, &Value::Null);
        t.get(plan[1], 404, &Value::Null);
        t.get(plan[2], 200, &asm(issuer, issuer, json!({})));
        t.answer(
            "POST",
            "http://localhost:4000/tenant1/register",
            201,
            &json!({"client_id": "c"}),
        );
        t.authorize_ok();
        t.answer(
            "POST",
            "http://localhost:4000/tenant1/token",
            200,
            &token_ok(),
        );
        t.done();

        // All three missing: fail, without probing the root (trap (c)).
        let mut t = T::start(config(Revision::V2025_11_25), &challenge_for(custom));
        t.get(custom, 200, &prm(SERVER, issuer));
        for url in plan {
            t.get(url, 404, &Value::Null);
        }
        assert_eq!(
            t.failed(),
            FlowError::NoAuthorizationServerMetadata {
                issuer: issuer.into()
            }
        );
        assert_eq!(t.log.len(), 4);
    }

    #[test]
    fn legacy_endpoint_fallback_uses_default_endpoints_with_pkce() {
        // Trap (b): no PRM, no metadata: the origin's /register, /authorize, /token (the
        // 2025-03-26 rules only).
        let mut t = T::start(config(Revision::V2025_03_26), r#"Bearer realm="mcp""#);
        t.get(PRM_PATH, 404, &Value::Null);
        t.get(PRM_ROOT, 404, &Value::Null);
        t.get(
            "http://localhost:3000/.well-known/oauth-authorization-server",
            404,
            &Value::Null,
        );
        t.get(
            "http://localhost:3000/.well-known/openid-configuration",
            404,
            &Value::Null,
        );
        t.answer(
            "POST",
            "http://localhost:3000/register",
            201,
            &json!({"client_id": "legacy", "client_secret": "s3cret"}),
        );
        let url = t.authorize_ok();
        assert_eq!(
            url.as_str().split('?').next(),
            Some("http://localhost:3000/authorize")
        );
        assert_eq!(
            query(&url, "code_challenge_method").as_deref(),
            Some("S256")
        );
        assert_eq!(query(&url, "resource").as_deref(), Some(SERVER));
        let token = t.answer(
            "POST",
            "http://localhost:3000/token",
            200,
            &json!({"access_token": "test-token"}),
        );
        assert_code_exchange(&token, SERVER);
        // No metadata lists no methods: a secret goes with Basic (RFC 8414 default).
        assert!(token
            .header("authorization")
            .is_some_and(|h| h.starts_with("Basic ")));
        let credentials = t.done();
        assert_eq!(credentials.issuer, "http://localhost:3000");
        assert_eq!(
            credentials.token_endpoint.as_str(),
            "http://localhost:3000/token"
        );
    }

    /// Answers the four discovery probes of a server with no metadata anywhere with 404.
    fn nothing_anywhere(t: &mut T) {
        for url in [
            PRM_PATH,
            PRM_ROOT,
            "http://localhost:3000/.well-known/oauth-authorization-server",
            "http://localhost:3000/.well-known/openid-configuration",
        ] {
            t.get(url, 404, &Value::Null);
        }
    }

    #[test]
    fn no_metadata_anywhere_is_no_oauth_and_nothing_is_registered() {
        // A 401 with no challenge, or one OAuth cannot answer: no 2025-03-26 server's.
        for (revision, challenge) in [
            (Revision::V2025_11_25, ""),
            (Revision::V2026_07_28, ""),
            (Revision::V2026_07_28, r#"Basic realm="x""#),
        ] {
            let mut t = T::start(config(revision), challenge);
            nothing_anywhere(&mut t);
            let error = t.failed();
            assert_eq!(
                error,
                FlowError::NoOAuth {
                    status: 401,
                    tried: vec![
                        PRM_PATH.into(),
                        PRM_ROOT.into(),
                        "http://localhost:3000/.well-known/oauth-authorization-server".into(),
                        "http://localhost:3000/.well-known/openid-configuration".into(),
                    ],
                    registration: None,
                }
            );
            // The four GETs discovery needs, and nothing more: no registration.
            assert_eq!(t.log.len(), 4, "{:?}", t.log);
            assert!(t.log.iter().all(|l| l.starts_with("GET ")), "{:?}", t.log);
            let words = error.to_string();
            assert!(
                words.starts_with(
                    "the server wants credentials (HTTP 401) but offers no OAuth sign-in \
                     (no metadata at http://localhost:3000/.well-known/oauth-protected-resource/mcp, "
                ),
                "{words}"
            );
            assert!(words.ends_with(STATIC_TOKEN_ADVICE), "{words}");
            assert!(words.contains("Authorization: Bearer"), "{words}");
        }

        // A user's grant or not, the same: there is no authorization server to ask.
        let mut machine = config(Revision::V2026_07_28);
        machine.grant = Grant::client_secret("svc", "s3cret");
        let mut t = T::start(machine, "Bearer");
        nothing_anywhere(&mut t);
        assert!(matches!(t.failed(), FlowError::NoOAuth { .. }));

        // A challenge that names a PRM URL that is not there: that URL, then the origin's AS
        // metadata, and the places are named (without credentials).
        let named = "http://user:pw@localhost:3000/prm";
        let mut t = T::start(config(Revision::V2026_07_28), &challenge_for(named));
        t.get(named, 404, &Value::Null);
        t.get(
            "http://localhost:3000/.well-known/oauth-authorization-server",
            404,
            &Value::Null,
        );
        t.get(
            "http://localhost:3000/.well-known/openid-configuration",
            410,
            &Value::Null,
        );
        let FlowError::NoOAuth { tried, .. } = t.failed() else {
            panic!("expected NoOAuth")
        };
        assert_eq!(tried.len(), 3);
        assert!(tried.iter().all(|u| !u.contains("pw")), "{tried:?}");
    }

    #[test]
    fn under_2025_03_26_a_default_registration_endpoint_that_is_not_there_is_no_oauth() {
        let mut t = T::start(config(Revision::V2025_03_26), "Bearer");
        nothing_anywhere(&mut t);
        t.answer("POST", "http://localhost:3000/register", 404, &Value::Null);
        let error = t.failed();
        assert!(
            matches!(&error, FlowError::NoOAuth { tried, registration: Some(r), .. }
                if tried.len() == 4 && r == "http://localhost:3000/register"),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .contains(", no registration endpoint at http://localhost:3000/register): "),
            "{error}"
        );
        // Under those rules, any other refusal of the registration is its own failure.
        let mut t = T::start(config(Revision::V2025_03_26), "Bearer");
        nothing_anywhere(&mut t);
        t.answer("POST", "http://localhost:3000/register", 400, &Value::Null);
        assert!(matches!(t.failed(), FlowError::Registration(_)));
    }

    /// Not knowing the revision, a `Bearer` challenge with no metadata anywhere may be a
    /// 2025-03-26 server's: its default registration endpoint is tried, and the flow goes on to
    /// the default authorization endpoint; a `404` (or any refusal) there is no OAuth sign-in,
    /// nothing registered and no user sent anywhere.
    #[test]
    fn a_bearer_challenge_with_no_metadata_tries_the_2025_03_26_defaults() {
        for revision in [Revision::V2025_11_25, Revision::V2026_07_28] {
            let mut t = T::start(config(revision), "Bearer");
            nothing_anywhere(&mut t);
            let registered = json!({"client_id": "c-1", "redirect_uris": [REDIRECT]});
            t.answer("POST", "http://localhost:3000/register", 201, &registered);
            let url = t.authorize();
            assert!(
                url.as_str().starts_with("http://localhost:3000/authorize?"),
                "{revision:?}: {url}"
            );
            assert_eq!(query(&url, "client_id").as_deref(), Some("c-1"));

            for status in [404, 400, 401, 405] {
                let mut t = T::start(config(revision), "Bearer");
                nothing_anywhere(&mut t);
                t.answer(
                    "POST",
                    "http://localhost:3000/register",
                    status,
                    &Value::Null,
                );
                let error = t.failed();
                assert!(
                    matches!(&error, FlowError::NoOAuth { tried, registration: Some(r), .. }
                        if tried.len() == 4 && r == "http://localhost:3000/register"),
                    "{status}: {error:?}"
                );
                assert!(
                    error.to_string().starts_with(
                        "the server wants credentials (HTTP 401) but offers no OAuth sign-in"
                    ),
                    "{error}"
                );
                assert!(
                    !t.log.iter().any(|l| l.contains("/authorize")),
                    "{:?}",
                    t.log
                );
            }
        }
    }

    #[test]
    fn without_a_sign_in_nothing_is_registered_and_no_user_is_sent_anywhere() {
        let why = "the host may not ask the user";
        let no_sign_in = |revision| {
            let mut c = config(revision);
            c.no_sign_in = Some(why.into());
            c
        };
        // The server offers OAuth: discovery, then the end, before registration.
        let mut t = discovered(no_sign_in(Revision::V2026_07_28), json!({}));
        let error = t.failed();
        assert_eq!(
            error,
            FlowError::SignInUnavailable {
                issuer: AS.into(),
                reason: why.into()
            }
        );
        assert_eq!(t.log.len(), 2, "{:?}", t.log);
        assert_eq!(
            error.to_string(),
            format!(
                "the server asks for a sign-in (authorization server {AS}) and none can be \
                 made: {why}"
            )
        );
        // A client already had (pre-registered) needs the user all the same.
        let mut configured = no_sign_in(Revision::V2025_11_25);
        configured.pre_registered = Some(PreRegisteredClient {
            client_id: "pre".into(),
            client_secret: None,
        });
        let mut t = discovered(configured, json!({}));
        assert!(matches!(t.failed(), FlowError::SignInUnavailable { .. }));
        // Under the 2025-03-26 rules, no guessed registration either.
        let mut t = T::start(no_sign_in(Revision::V2025_03_26), "Bearer");
        nothing_anywhere(&mut t);
        assert!(matches!(t.failed(), FlowError::SignInUnavailable { .. }));
        assert!(t.log.iter().all(|l| l.starts_with("GET ")), "{:?}", t.log);
        // A server with no OAuth says so, sign-in or not.
        let mut t = T::start(no_sign_in(Revision::V2026_07_28), "Bearer");
        nothing_anywhere(&mut t);
        assert!(matches!(t.failed(), FlowError::NoOAuth { .. }));
        // A grant without a user is not affected.
        let mut machine = no_sign_in(Revision::V2026_07_28);
        machine.grant = Grant::client_secret("svc", "s3cret");
        let mut t = discovered(machine, json!({}));
        let (_, request) = t.http();
        assert_eq!(request.url.as_str(), "http://localhost:4000/token");
    }

    #[test]
    fn legacy_metadata_backcompat_does_not_check_the_issuer() {
        // Trap (a): the 0.1.16 mock says issuer <origin>/oauth at the root well-known.
        let origin = "http://localhost:3000";
        let mut t = T::start(config(Revision::V2026_07_28), "Bearer");
        t.get(PRM_PATH, 404, &Value::Null);
        t.get(PRM_ROOT, 404, &Value::Null);
        let doc = asm(
            "http://localhost:3000/oauth",
            "http://localhost:3000/oauth",
            json!({}),
        );
        t.get(
            &format!("{origin}/.well-known/oauth-authorization-server"),
            200,
            &doc,
        );
        t.answer(
            "POST",
            "http://localhost:3000/oauth/register",
            201,
            &json!({"client_id": "c"}),
        );
        t.authorize_ok();
        t.answer(
            "POST",
            "http://localhost:3000/oauth/token",
            200,
            &token_ok(),
        );
        assert_eq!(t.done().issuer, "http://localhost:3000/oauth");
    }

    #[test]
    fn issuer_mismatch_fails_at_2026_and_passes_at_2025_11_25() {
        let doc = asm("http://localhost:4000/", AS, json!({}));
        let mut t = T::start(config(Revision::V2026_07_28), &challenge_for(PRM_PATH));
        t.get(PRM_PATH, 200, &prm(SERVER, AS));
        t.get(ASM_ROOT, 200, &doc);
        assert!(matches!(
            t.failed(),
            FlowError::Discovery(DiscoveryError::IssuerMismatch { .. })
        ));
        assert_eq!(t.log.len(), 2, "nothing after the mismatch");

        let mut t = T::start(config(Revision::V2025_11_25), &challenge_for(PRM_PATH));
        t.get(PRM_PATH, 200, &prm(SERVER, AS));
        t.get(ASM_ROOT, 200, &doc);
        t.answer(
            "POST",
            "http://localhost:4000/register",
            201,
            &json!({"client_id": "c"}),
        );
        t.authorize();
    }

    #[test]
    fn pkce_absent_fails_and_resource_mismatch_makes_no_authorization() {
        let mut t = T::start(config(Revision::V2025_11_25), &challenge_for(PRM_PATH));
        t.get(PRM_PATH, 200, &prm(SERVER, AS));
        t.get(
            ASM_ROOT,
            200,
            &asm(AS, AS, json!({"code_challenge_methods_supported": null})),
        );
        assert_eq!(
            t.failed(),
            FlowError::Discovery(DiscoveryError::PkceNotSupported {
                advertised: "absent".into()
            })
        );

        let mut t = T::start(config(Revision::V2025_11_25), &challenge_for(PRM_PATH));
        t.get(PRM_PATH, 200, &prm("https://evil.example.com/mcp", AS));
        assert!(matches!(
            t.failed(),
            FlowError::Discovery(DiscoveryError::ResourceMismatch { .. })
        ));
        assert_eq!(t.log, [format!("GET {PRM_PATH}")]);

        // A 5xx stops discovery.
        let mut t = T::start(config(Revision::V2025_11_25), "Bearer");
        t.get(PRM_PATH, 503, &Value::Null);
        assert_eq!(
            t.failed(),
            FlowError::MetadataStatus {
                document: PRM,
                url: PRM_PATH.into(),
                status: 503
            }
        );
    }

    /// Runs discovery with AS metadata `extra` and config `config`, up to the first request
    /// after the metadata.
    fn discovered(config: FlowConfig, extra: Value) -> T {
        let mut t = T::start(config, &challenge_for(PRM_PATH));
        t.get(PRM_PATH, 200, &prm(SERVER, AS));
        t.get(ASM_ROOT, 200, &asm(AS, AS, extra));
        t
    }

    #[test]
    fn a_kept_client_for_the_issuer_is_used_unless_registered_for_another_redirect() {
        let registered = |uris: &[&str]| RegisteredClient {
            client_id: "kept-client".into(),
            client_secret: Some("kept-secret".into()),
            client_id_issued_at: None,
            client_secret_expires_at: None,
            token_endpoint_auth_method: Some("client_secret_post".into()),
            redirect_uris: uris.iter().map(|u| u.to_string()).collect(),
            grant_types: Vec::new(),
            registration_access_token: None,
            registration_client_uri: None,
            extra: Default::default(),
        };
        let kept = |issuer: &str, uris: &[&str]| KnownClient {
            issuer: issuer.into(),
            client_auth: ClientAuth::SecretPost {
                client_id: "kept-client".into(),
                secret: "kept-secret".into(),
            },
            registration: Some(registered(uris)),
        };
        // Kept for this issuer and this redirect URI: no registration.
        let mut c = config(Revision::V2025_11_25);
        c.known_clients = vec![kept("http://elsewhere", &[REDIRECT]), kept(AS, &[REDIRECT])];
        let mut t = discovered(c.clone(), json!({}));
        let url = t.authorize_ok();
        assert_eq!(query(&url, "client_id").as_deref(), Some("kept-client"));
        let token = t.answer("POST", "http://localhost:4000/token", 200, &token_ok());
        assert_eq!(
            field(&token, "client_secret").as_deref(),
            Some("kept-secret")
        );
        assert!(t.log.iter().all(|l| !l.contains("register")), "{:?}", t.log);
        let done = t.done();
        assert_eq!(done.registration, Some(registered(&[REDIRECT])));

        // Registered for another redirect URI, or kept for another issuer: registers anew.
        for known in [
            kept(AS, &["http://127.0.0.1:1/other"]),
            kept("http://elsewhere", &[REDIRECT]),
        ] {
            c.known_clients = vec![known];
            let mut t = discovered(c.clone(), json!({}));
            let (_, request) = t.http();
            assert_eq!(request.url.as_str(), "http://localhost:4000/register");
        }
    }

    #[test]
    fn identity_pre_registered_then_cimd_then_dcr() {
        // pre-registration: no registration endpoint, Basic with the configured pair.
        let mut c = config(Revision::V2025_11_25);
        c.pre_registered = Some(PreRegisteredClient {
            client_id: "pre-registered-client".into(),
            client_secret: Some("pre-registered-secret".into()),
        });
        c.client_id_metadata_url =
            Some(Url::parse("https://conformance-test.local/client-metadata.json").unwrap());
        let extra = json!({"registration_endpoint": null, "token_endpoint_auth_methods_supported": ["client_secret_basic"], "client_id_metadata_document_supported": true});
        let mut t = discovered(c.clone(), extra.clone());
        assert_eq!(
            query(&t.authorize_ok(), "client_id").as_deref(),
            Some("pre-registered-client")
        );
        let token = t.answer("POST", "http://localhost:4000/token", 200, &token_ok());
        let basic = ClientAuth::SecretBasic {
            client_id: "pre-registered-client".into(),
            secret: "pre-registered-secret".into(),
        };
        assert_eq!(
            token.header("authorization"),
            basic.basic_header().as_deref()
        );
        assert_eq!(field(&token, "client_secret"), None);
        assert_eq!(field(&token, "client_id"), None);
        t.done();

        // CIMD: the URL is the client_id; no registration, auth none.
        c.pre_registered = None;
        let mut t = discovered(
            c.clone(),
            json!({"client_id_metadata_document_supported": true}),
        );
        let cimd = "https://conformance-test.local/client-metadata.json";
        assert_eq!(query(&t.authorize_ok(), "client_id").as_deref(), Some(cimd));
        let token = t.answer("POST", "http://localhost:4000/token", 200, &token_ok());
        assert_eq!(field(&token, "client_id").as_deref(), Some(cimd));
        assert_eq!(token.header("authorization"), None);
        assert!(t.log.iter().all(|l| !l.contains("register")));

        // Neither configured nor a registration endpoint: a typed failure.
        c.client_id_metadata_url = None;
        let mut t = discovered(c, json!({"registration_endpoint": null}));
        assert_eq!(t.failed(), FlowError::Identity(IdentityError::NoIdentity));
    }

    #[test]
    fn token_endpoint_auth_basic_post_and_none() {
        let dcr = |method: &str| json!({"client_id": "dcr", "client_secret": "dcr-secret", "token_endpoint_auth_method": method});
        for (method, basic, body_secret) in [
            ("client_secret_basic", true, false),
            ("client_secret_post", false, true),
            ("none", false, false),
        ] {
            let mut t = discovered(
                config(Revision::V2025_11_25),
                json!({"token_endpoint_auth_methods_supported": [method]}),
            );
            t.answer("POST", "http://localhost:4000/register", 201, &dcr(method));
            let url = t.authorize_ok();
            let token = t.answer("POST", "http://localhost:4000/token", 200, &token_ok());
            assert_eq!(token.header("authorization").is_some(), basic, "{method}");
            assert_eq!(
                field(&token, "client_secret").is_some(),
                body_secret,
                "{method}"
            );
            assert_eq!(field(&token, "client_id").is_some(), !basic, "{method}");
            // resource identical in both requests.
            assert_eq!(query(&url, "resource"), field(&token, "resource"));
            assert_eq!(t.done().client_auth.method(), method);
        }
    }

    #[test]
    fn callback_with_wrong_state_or_mismatching_iss_is_refused_before_any_token_request() {
        let mut t = discovered(config(Revision::V2026_07_28), json!({}));
        t.answer(
            "POST",
            "http://localhost:4000/register",
            201,
            &json!({"client_id": "c"}),
        );
        t.authorize();
        // A forged or stray redirect is discarded; the flow keeps waiting for the real one.
        let forged = format!("{REDIRECT}?code=x&state=forged");
        assert_eq!(
            t.flow.handle_redirect(t.now, &forged),
            Err(CallbackError::StateMismatch)
        );
        let stray = format!("{REDIRECT}?code=x");
        assert_eq!(
            t.flow.handle_redirect(t.now, &stray),
            Err(CallbackError::MissingState)
        );
        assert_eq!(t.flow.poll_output(), None);
        assert!(!t.flow.is_finished());
        assert!(
            t.flow.poll_timeout().is_some(),
            "still bounded by the authorization deadline"
        );
        let right = format!("{REDIRECT}?code=test-auth-code&state={}", state());
        assert_eq!(t.flow.handle_redirect(t.now, &right), Ok(()));
        assert_code_exchange(
            &t.answer("POST", "http://localhost:4000/token", 200, &token_ok()),
            SERVER,
        );
        t.done();

        // The server's refusal, with the right state, ends the flow.
        let mut t = discovered(config(Revision::V2026_07_28), json!({}));
        t.answer(
            "POST",
            "http://localhost:4000/register",
            201,
            &json!({"client_id": "c"}),
        );
        t.authorize();
        let denied = format!("{REDIRECT}?error=access_denied&state={}", state());
        assert!(matches!(
            t.flow.handle_redirect(t.now, &denied),
            Err(CallbackError::Refused(_))
        ));
        assert!(
            matches!(t.failed(), FlowError::Callback(CallbackError::Refused(e)) if e.code == OAuthErrorCode::AccessDenied)
        );

        let mut t = discovered(
            config(Revision::V2026_07_28),
            json!({"authorization_response_iss_parameter_supported": true}),
        );
        t.answer(
            "POST",
            "http://localhost:4000/register",
            201,
            &json!({"client_id": "c"}),
        );
        t.authorize();
        let location = format!(
            "{REDIRECT}?code=x&state={}&iss=http%3A%2F%2Fevil.example",
            state()
        );
        assert!(t.flow.handle_redirect(t.now, &location).is_err());
        assert_eq!(
            t.failed(),
            FlowError::Callback(CallbackError::IssuerMismatch {
                expected: AS.into(),
                received: "http://evil.example".into()
            })
        );
        assert!(t.log.iter().all(|l| !l.ends_with("/token")));

        // The right iss, as a pasted bare query, passes.
        let mut t = discovered(
            config(Revision::V2026_07_28),
            json!({"authorization_response_iss_parameter_supported": true}),
        );
        t.answer(
            "POST",
            "http://localhost:4000/register",
            201,
            &json!({"client_id": "c"}),
        );
        t.authorize();
        let pasted = format!(
            "code=test-auth-code&state={}&iss=http%3A%2F%2Flocalhost%3A4000",
            state()
        );
        assert_eq!(t.flow.handle_redirect(t.now, &pasted), Ok(()));
        assert_code_exchange(
            &t.answer("POST", "http://localhost:4000/token", 200, &token_ok()),
            SERVER,
        );
        t.done();
    }

    #[test]
    fn a_token_error_fails_the_flow() {
        let mut t = discovered(config(Revision::V2025_11_25), json!({}));
        t.answer(
            "POST",
            "http://localhost:4000/register",
            201,
            &json!({"client_id": "c"}),
        );
        t.authorize_ok();
        t.answer(
            "POST",
            "http://localhost:4000/token",
            400,
            &json!({"error": "invalid_grant", "error_description": "bad code"}),
        );
        let FlowError::Token(TokenError::OAuth { status: 400, error }) = t.failed() else {
            panic!("expected a token error");
        };
        assert_eq!(error.code, OAuthErrorCode::InvalidGrant);

        // A registration refusal is typed too.
        let mut t = discovered(config(Revision::V2025_11_25), json!({}));
        t.answer(
            "POST",
            "http://localhost:4000/register",
            400,
            &json!({"error": "invalid_redirect_uri"}),
        );
        assert!(matches!(t.failed(), FlowError::Registration(e) if e.is_redirect_uri_rejection()));
    }

    /// Credentials from a complete flow with scope `mcp:basic` and a refresh token.
    fn first_credentials() -> Credentials {
        let challenge = format!(r#"Bearer scope="mcp:basic", resource_metadata="{PRM_PATH}""#);
        let mut t = T::start(config(Revision::V2026_07_28), &challenge);
        t.get(PRM_PATH, 200, &prm(SERVER, AS));
        t.get(
            ASM_ROOT,
            200,
            &asm(
                AS,
                AS,
                json!({"token_endpoint_auth_methods_supported": ["client_secret_post"]}),
            ),
        );
        let reg = json!({"client_id": "dcr", "client_secret": "dcr-secret", "token_endpoint_auth_method": "client_secret_post"});
        let registration = t.answer("POST", "http://localhost:4000/register", 201, &reg);
        let body: Value = serde_json::from_slice(&registration.body).unwrap();
        assert_eq!(body["scope"], "mcp:basic");
        assert_eq!(
            query(&t.authorize_ok(), "scope").as_deref(),
            Some("mcp:basic")
        );
        let tokens = json!({"access_token": "at-1", "token_type": "bearer", "refresh_token": "rt-1", "scope": "mcp:basic"});
        t.answer("POST", "http://localhost:4000/token", 200, &tokens);
        t.done()
    }

    #[test]
    fn refresh_keeps_the_old_refresh_token_and_invalid_grant_asks_for_the_full_flow() {
        let credentials = first_credentials();
        let now = crate::test_support::epoch();
        let mut t = T::new(
            OAuthFlow::refresh(now, &credentials, Duration::from_secs(30)),
            now,
        );
        let request = t.answer(
            "POST",
            "http://localhost:4000/token",
            200,
            &json!({"access_token": "at-2", "expires_in": 60}),
        );
        assert_eq!(
            field(&request, "grant_type").as_deref(),
            Some("refresh_token")
        );
        assert_eq!(field(&request, "refresh_token").as_deref(), Some("rt-1"));
        assert_eq!(field(&request, "resource").as_deref(), Some(SERVER));
        assert_eq!(
            field(&request, "client_secret").as_deref(),
            Some("dcr-secret")
        );
        let refreshed = t.done();
        assert_eq!(refreshed.tokens.access_token, "at-2");
        assert_eq!(refreshed.tokens.refresh_token.as_deref(), Some("rt-1"));
        assert_eq!(refreshed.tokens.scopes, Some(vec!["mcp:basic".to_owned()]));
        assert_eq!(refreshed.issuer, credentials.issuer);

        let mut t = T::new(
            OAuthFlow::refresh(now, &credentials, Duration::from_secs(30)),
            now,
        );
        t.answer(
            "POST",
            "http://localhost:4000/token",
            400,
            &json!({"error": "invalid_grant"}),
        );
        assert!(
            matches!(t.failed(), FlowError::ReauthorizationRequired(e) if e.code == OAuthErrorCode::InvalidGrant)
        );

        let mut without = credentials;
        without.tokens.refresh_token = None;
        let mut t = T::new(
            OAuthFlow::refresh(now, &without, Duration::from_secs(30)),
            now,
        );
        assert_eq!(t.failed(), FlowError::NoRefreshToken);
    }

    fn step_up_challenge(scope: &str) -> String {
        format!(
            r#"Bearer scope="{scope}", resource_metadata="{PRM_PATH}", error="insufficient_scope""#
        )
    }

    /// A step-up from `previous` to a 403 with `scope`, completed.
    fn stepped_up(previous: &Credentials, scope: &str) -> (T, Url) {
        let now = crate::test_support::epoch();
        let challenge = step_up_challenge(scope);
        let flow = OAuthFlow::step_up(
            now,
            config(Revision::V2026_07_28),
            previous,
            &[challenge.as_str()],
            &RANDOM,
        );
        let mut t = T::new(flow, now);
        t.get(PRM_PATH, 200, &prm(SERVER, AS));
        t.get(
            ASM_ROOT,
            200,
            &asm(
                AS,
                AS,
                json!({"token_endpoint_auth_methods_supported": ["client_secret_post"]}),
            ),
        );
        let url = t.authorize_ok();
        t.answer(
            "POST",
            "http://localhost:4000/token",
            200,
            &json!({"access_token": "at-up"}),
        );
        (t, url)
    }

    #[test]
    fn step_up_requests_the_union_reuses_the_client_and_counts_authorizations() {
        let first = first_credentials();
        let (mut t, url) = stepped_up(&first, "mcp:basic mcp:write");
        // The same client at the same issuer: no new registration.
        assert!(t.log.iter().all(|l| !l.contains("register")));
        assert_eq!(query(&url, "client_id").as_deref(), Some("dcr"));
        assert_eq!(query(&url, "scope").as_deref(), Some("mcp:basic mcp:write"));
        let second = t.done();
        assert_eq!(second.authorizations, 2);
        assert_eq!(second.requested_scopes, ["mcp:basic", "mcp:write"]);

        // Trap (e): a third authorization is allowed, a fourth is not (no request made).
        let (mut t, url) = stepped_up(&second, "mcp:admin");
        assert_eq!(
            query(&url, "scope").as_deref(),
            Some("mcp:basic mcp:write mcp:admin")
        );
        let third = t.done();
        assert_eq!(third.authorizations, 3);
        let now = crate::test_support::epoch();
        let challenge = step_up_challenge("mcp:root");
        let flow = OAuthFlow::step_up(
            now,
            config(Revision::V2026_07_28),
            &third,
            &[challenge.as_str()],
            &RANDOM,
        );
        let mut t = T::new(flow, now);
        assert_eq!(t.failed(), FlowError::TooManyAuthorizations { limit: 3 });

        // Asking again for what was already requested is futile.
        let challenge = step_up_challenge("mcp:write");
        let flow = OAuthFlow::step_up(
            now,
            config(Revision::V2026_07_28),
            &second,
            &[challenge.as_str()],
            &RANDOM,
        );
        let mut t = T::new(flow, now);
        assert_eq!(
            t.failed(),
            FlowError::ScopeNotGrantable {
                scopes: vec!["mcp:write".into()]
            }
        );
    }

    #[test]
    fn step_up_to_another_issuer_registers_again() {
        // 2026-07-28: credentials are bound to their issuer; another AS means a new client.
        let first = first_credentials();
        let now = crate::test_support::epoch();
        let challenge = step_up_challenge("mcp:write");
        let flow = OAuthFlow::step_up(
            now,
            config(Revision::V2026_07_28),
            &first,
            &[challenge.as_str()],
            &RANDOM,
        );
        let mut t = T::new(flow, now);
        let other = "http://localhost:4001";
        t.get(PRM_PATH, 200, &prm(SERVER, other));
        t.get(
            "http://localhost:4001/.well-known/oauth-authorization-server",
            200,
            &asm(other, other, json!({})),
        );
        t.answer(
            "POST",
            "http://localhost:4001/register",
            201,
            &json!({"client_id": "other-client"}),
        );
        let url = t.authorize_ok();
        assert_eq!(query(&url, "client_id").as_deref(), Some("other-client"));
        assert_eq!(query(&url, "scope").as_deref(), Some("mcp:basic mcp:write"));
        let token = t.answer("POST", "http://localhost:4001/token", 200, &token_ok());
        assert_eq!(
            field(&token, "client_secret"),
            None,
            "the first AS's secret stays there"
        );
        let second = t.done();
        assert_eq!((second.issuer.as_str(), second.authorizations), (other, 2));
    }

    #[test]
    fn scopes_from_prm_and_offline_access_only_when_the_as_lists_it() {
        let mut t = T::start(config(Revision::V2026_07_28), &challenge_for(PRM_PATH));
        let mut doc = prm(SERVER, AS);
        doc["scopes_supported"] = json!(["mcp:basic", "mcp:read", "mcp:write"]);
        t.get(PRM_PATH, 200, &doc);
        t.get(
            ASM_ROOT,
            200,
            &asm(
                AS,
                AS,
                json!({"scopes_supported": ["mcp:basic", "offline_access"]}),
            ),
        );
        t.answer(
            "POST",
            "http://localhost:4000/register",
            201,
            &json!({"client_id": "c"}),
        );
        assert_eq!(
            query(&t.authorize(), "scope").as_deref(),
            Some("mcp:basic mcp:read mcp:write offline_access")
        );

        let mut t = T::start(config(Revision::V2026_07_28), &challenge_for(PRM_PATH));
        t.get(PRM_PATH, 200, &doc);
        t.get(
            ASM_ROOT,
            200,
            &asm(
                AS,
                AS,
                json!({"scopes_supported": ["mcp:basic", "mcp:read"]}),
            ),
        );
        t.answer(
            "POST",
            "http://localhost:4000/register",
            201,
            &json!({"client_id": "c"}),
        );
        assert_eq!(
            query(&t.authorize(), "scope").as_deref(),
            Some("mcp:basic mcp:read mcp:write")
        );
    }

    #[test]
    fn timeouts_and_failures_end_the_flow() {
        let mut t = T::start(config(Revision::V2025_11_25), &challenge_for(PRM_PATH));
        let (exchange, _) = t.http();
        let deadline = t.now + Duration::from_secs(30);
        assert_eq!(t.flow.poll_timeout(), Some(deadline));
        t.flow.handle_timeout(deadline - Duration::from_millis(1));
        assert_eq!(t.flow.poll_output(), None);
        t.flow.handle_timeout(deadline);
        assert_eq!(t.failed(), FlowError::Timeout { during: PRM });
        // A late response changes nothing.
        t.flow
            .handle_response(deadline, exchange, 200, &[], b"{}", UNIX);
        assert_eq!(t.flow.poll_output(), None);

        // The user's time is bounded too.
        let mut t = discovered(config(Revision::V2025_11_25), json!({}));
        t.answer(
            "POST",
            "http://localhost:4000/register",
            201,
            &json!({"client_id": "c"}),
        );
        t.authorize();
        let deadline = t.now + Duration::from_secs(300);
        assert_eq!(t.flow.poll_timeout(), Some(deadline));
        t.flow.handle_timeout(deadline);
        assert_eq!(
            t.failed(),
            FlowError::Timeout {
                during: "authorization"
            }
        );

        // The token exchange times out on its own deadline.
        let mut t = discovered(config(Revision::V2025_11_25), json!({}));
        t.answer(
            "POST",
            "http://localhost:4000/register",
            201,
            &json!({"client_id": "c"}),
        );
        t.authorize_ok();
        let (exchange, _) = t.http();
        // A response to another exchange is ignored.
        t.flow
            .handle_response(t.now, exchange + 1, 200, &[], b"{}", UNIX);
        assert_eq!(t.flow.poll_output(), None);
        t.flow.handle_timeout(t.now + Duration::from_secs(30));
        assert_eq!(t.failed(), FlowError::Timeout { during: "token" });

        // A timeout too long to represent is no deadline, not a panic.
        let mut forever = config(Revision::V2025_11_25);
        forever.exchange_timeout = Duration::MAX;
        let mut t = T::start(forever, "Bearer");
        t.http();
        assert_eq!(t.flow.poll_timeout(), None);

        // A transport failure.
        let mut t = T::start(config(Revision::V2025_11_25), "Bearer");
        let (exchange, _) = t.http();
        t.flow.handle_failure(t.now, exchange, "connection refused");
        assert_eq!(
            t.failed(),
            FlowError::Transport {
                during: PRM,
                reason: "connection refused".into()
            }
        );
    }

    #[test]
    fn debug_shows_no_token_or_secret() {
        let secrets = ["dcr-secret", "at-1", "rt-1", "test-auth-code", "at-2"];
        let verifier = pkce_pair().verifier;
        let mut seen = String::new();
        let challenge = format!(r#"Bearer scope="mcp:basic", resource_metadata="{PRM_PATH}""#);
        let mut t = T::start(config(Revision::V2026_07_28), &challenge);
        let step =
            |t: &mut T, seen: &mut String, method: &str, url: &str, status: u16, body: Value| {
                seen.push_str(&format!("{:?}", t.flow));
                let (exchange, request) = t.http();
                assert_eq!((request.method, request.url.as_str()), (method, url));
                seen.push_str(&format!("{request:?}"));
                t.flow.handle_response(
                    t.now,
                    exchange,
                    status,
                    &[],
                    body.to_string().as_bytes(),
                    UNIX,
                );
                seen.push_str(&format!("{:?}", t.flow));
            };
        step(&mut t, &mut seen, "GET", PRM_PATH, 200, prm(SERVER, AS));
        let doc = asm(
            AS,
            AS,
            json!({"token_endpoint_auth_methods_supported": ["client_secret_post"]}),
        );
        step(&mut t, &mut seen, "GET", ASM_ROOT, 200, doc);
        let reg = json!({"client_id": "dcr", "client_secret": "dcr-secret", "token_endpoint_auth_method": "client_secret_post"});
        step(
            &mut t,
            &mut seen,
            "POST",
            "http://localhost:4000/register",
            201,
            reg,
        );
        t.authorize_ok();
        let tokens = json!({"access_token": "at-1", "refresh_token": "rt-1"});
        step(
            &mut t,
            &mut seen,
            "POST",
            "http://localhost:4000/token",
            200,
            tokens,
        );
        let end = t.flow.poll_output().unwrap();
        seen.push_str(&format!("{end:?}"));
        let FlowOutput::Done(credentials) = end else {
            panic!("expected Done")
        };
        let mut t = T::new(
            OAuthFlow::refresh(t.now, &credentials, Duration::from_secs(1)),
            t.now,
        );
        step(
            &mut t,
            &mut seen,
            "POST",
            "http://localhost:4000/token",
            200,
            json!({"access_token": "at-2"}),
        );
        seen.push_str(&format!("{:?}", t.flow.poll_output()));
        let mut configured = config(Revision::V2025_11_25);
        configured.pre_registered = Some(PreRegisteredClient {
            client_id: "pre".into(),
            client_secret: Some("pre-secret".into()),
        });
        seen.push_str(&format!("{configured:?}"));
        let mut t = discovered(
            configured,
            json!({"token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
        );
        t.authorize_ok();
        let (_, request) = t.http();
        seen.push_str(&format!("{request:?} {:?}", t.flow));
        assert!(request.header("authorization").is_some());
        for secret in secrets
            .iter()
            .copied()
            .chain([verifier.as_str(), "pre-secret"])
        {
            assert!(!seen.contains(secret), "{secret} leaked: {seen}");
        }
        assert!(seen.contains("dcr") && seen.contains("client_secret_post"));
    }
}
