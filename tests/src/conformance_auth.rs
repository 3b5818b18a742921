//! The conformance suite's authorization scenarios (`auth/*`), as the conformance client plays
//! them: mcpwire's public OAuth options, configured from the scenario's context (never from
//! the wire), with an [`Authorizer`] that does what the suite's authorization server expects of
//! a browser: it GETs the authorization URL and reads the `302`'s `Location` without
//! following it.

use std::sync::Arc;

use mcpwire::core::{HttpMethod, HttpRequest};
use mcpwire::oauth::{
    AuthorizeError, Authorizer, Grant, OAuthOptions, PreRegisteredClient, Revision, Url,
};
use mcpwire::{BoxFuture, HttpBackend, IsahcBackend};
use serde_json::Value;

/// The metadata-document URL the suite's authorization servers expect as `client_id` (fixed
/// by the suite).
pub const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Any absolute URL does: the suite never calls it, it only redirects to it.
pub const REDIRECT_URI: &str = "http://127.0.0.1:3000/callback";

/// Whether a scenario is one of the authorization scenarios.
pub fn is_auth(scenario: &str) -> bool {
    scenario.starts_with("auth/")
}

/// Whether the scenario expects the client to give up (a non-zero exit is its pass).
pub fn may_fail(scenario: &str) -> bool {
    matches!(
        scenario,
        "auth/scope-retry-limit" | "auth/resource-mismatch"
    )
}

/// A browser stand-in: GET the authorization URL, hand back the redirect's `Location`.
struct FollowOnce {
    backend: Arc<dyn HttpBackend>,
}

impl Authorizer for FollowOnce {
    fn authorize(&self, url: &Url) -> BoxFuture<Result<String, AuthorizeError>> {
        let request = HttpRequest {
            exchange: 0,
            method: HttpMethod::Get,
            url: url.to_string(),
            headers: Vec::new(),
            body: Vec::new(),
        };
        let sent = self.backend.send(request);
        Box::pin(async move {
            let response = sent.await.map_err(|f| AuthorizeError(f.message))?;
            let location = response
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("location"))
                .map(|(_, v)| v.clone());
            location.ok_or_else(|| {
                AuthorizeError(format!(
                    "the authorization endpoint answered {} without a redirect",
                    response.status
                ))
            })
        })
    }
}

/// Set (to `1`) by a run that plays a host meeting the server: the client is told no spec
/// version, whatever the suite says (0.2.0 always names one, 2025-11-25 by default). It detects
/// the era and leaves the authorization rules to its defaults and to what the wire shows.
pub const NO_VERSION_VAR: &str = "MCPWIRE_CONFORMANCE_NO_VERSION";

/// The spec version under test (`MCP_CONFORMANCE_PROTOCOL_VERSION`), unless the suite names
/// none (0.1.16) or the run asks the client to know none ([`NO_VERSION_VAR`]).
pub fn version_under_test() -> Option<String> {
    if std::env::var(NO_VERSION_VAR).is_ok_and(|v| v == "1") {
        return None;
    }
    std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").ok()
}

/// The OAuth options for an authorization scenario, from its context (`MCP_CONFORMANCE_CONTEXT`)
/// and the spec version under test ([`version_under_test`]); with none, the revision is left as
/// a host leaves it (the default), never read from the scenario's name.
pub fn options() -> Result<OAuthOptions, String> {
    let backend: Arc<dyn HttpBackend> = Arc::new(IsahcBackend::new()?);
    let mut options = OAuthOptions::new(FollowOnce { backend }, REDIRECT_URI);
    options.client_name = "mcpwire conformance client".into();
    options.client_id_metadata_url = Some(Url::parse(CLIENT_METADATA_URL).expect("valid"));
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match version_under_test().as_deref() {
        Some("2026-07-28") => options.revision = Revision::V2026_07_28,
        Some("2025-03-26") => options.revision = Revision::V2025_03_26,
        Some(_) => options.revision = Revision::V2025_11_25,
        None => {}
    }
    // DPoP scenarios (RFC 9449): tokens bound to the connection's key.
    options.dpop = scenario.starts_with("auth/dpop");
    if let Some(context) = context()? {
        let field = |name: &str| context.get(name).and_then(Value::as_str).map(str::to_owned);
        let scenario = field("name").unwrap_or_default();
        match grant(&scenario, &field)? {
            Some(grant) => options.grant = grant,
            None => {
                if let Some(client_id) = field("client_id") {
                    options.pre_registered = Some(PreRegisteredClient {
                        client_id,
                        client_secret: field("client_secret"),
                    });
                }
            }
        }
    }
    Ok(options)
}

/// The grant without a user an extension scenario's context calls for (oauth.md §2.1), or
/// `None` for the authorization code:
/// - `client-credentials-*`: `client_id` with `private_key_pem` (and `signing_algorithm`
///   ES256) or `client_secret`;
/// - enterprise-managed (`cross-app-access-complete-flow` in 0.1.16): the `idp_*` fields, the
///   ID token the identity provider would have given at sign-in, and `client_id` and
///   `client_secret` at the authorization server;
/// - `wif-jwt-bearer`: `client_id` and the workload's `valid_jwt`.
fn grant(scenario: &str, field: &dyn Fn(&str) -> Option<String>) -> Result<Option<Grant>, String> {
    let need = |name: &str| field(name).ok_or_else(|| format!("the context has no {name}"));
    if scenario.contains("client-credentials") {
        let client_id = need("client_id")?;
        if let Some(pem) = field("private_key_pem") {
            match field("signing_algorithm").as_deref() {
                None | Some("ES256") => {}
                Some(other) => return Err(format!("signing algorithm {other} is not supported")),
            }
            return Grant::private_key_jwt(&client_id, &pem)
                .map(Some)
                .map_err(|e| e.to_string());
        }
        return Ok(Some(Grant::client_secret(
            &client_id,
            &need("client_secret")?,
        )));
    }
    if let Some(endpoint) = field("idp_token_endpoint") {
        let endpoint = Url::parse(&endpoint).map_err(|e| format!("idp_token_endpoint: {e}"))?;
        return Ok(Some(Grant::enterprise_managed(
            endpoint,
            &need("idp_client_id")?,
            &need("idp_id_token")?,
            &need("client_id")?,
            &need("client_secret")?,
        )));
    }
    if let Some(jwt) = field("valid_jwt") {
        let client_id = field("client_id");
        return Ok(Some(Grant::workload_identity(client_id.as_deref(), &jwt)));
    }
    Ok(None)
}

/// The scenario's context, if the suite gave one.
fn context() -> Result<Option<Value>, String> {
    match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) if !text.is_empty() => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}")),
        _ => Ok(None),
    }
}
