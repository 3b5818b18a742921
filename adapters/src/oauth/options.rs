//! What a connection's OAuth is told: the host's part (an [`Authorizer`]) and the
//! [`OAuthOptions`] a connection gets its tokens with. A leaf of the folder: it imports the token
//! stores' types and nothing of the flow's running.

use std::sync::Arc;
use std::time::Duration;

use mcpwire_core::oauth::discovery::Revision;
use mcpwire_core::oauth::grants::Grant;
use mcpwire_core::oauth::register::PreRegisteredClient;
use url::Url;

use super::store::{KnownClient, MemoryTokenStore, TokenStore};
use crate::future::BoxFuture;
#[cfg(doc)]
use mcpwire_core::oauth::flow::FlowError;

/// Why the user's part of an authorization did not come back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AuthorizeError(pub String);

/// The user's part of an authorization: send them (their browser) to the authorization
/// server's page, and hand back where it redirected them.
pub trait Authorizer: Send + Sync + 'static {
    /// Sends the user to `url`. Resolves with the redirect that came back to the redirect URI:
    /// the whole URL, or its query (`code=…&state=…`); its `state` and `iss` are checked.
    fn authorize(&self, url: &Url) -> BoxFuture<Result<String, AuthorizeError>>;

    /// Whether the user can be asked at all (default: yes). A host that cannot ask (no
    /// terminal, or told never to) says why: then a refusal that no kept or refreshed token
    /// answers ends after discovery with [`FlowError::SignInUnavailable`] and these words,
    /// [`authorize`](Authorizer::authorize) is never called, and no client is registered (a
    /// registration exists only for a sign-in). Tokens already kept are still used and
    /// refreshed.
    fn can_sign_in(&self) -> Result<(), AuthorizeError> {
        Ok(())
    }
}

/// How a connection gets tokens (see the module docs).
#[derive(Clone)]
pub struct OAuthOptions {
    /// The user's part.
    pub authorizer: Arc<dyn Authorizer>,
    /// Where tokens and registrations are kept (default: in memory, for this process).
    pub store: Arc<dyn TokenStore>,
    /// The redirect URI, verbatim (the authorizer must catch what comes back to it).
    pub redirect_uri: String,
    /// `client_name` in a dynamic registration (default `mcpwire`).
    pub client_name: String,
    /// A client registered beforehand at the server's authorization server; used before
    /// anything else.
    pub pre_registered: Option<PreRegisteredClient>,
    /// The client's metadata document URL (CIMD), used as `client_id` where the authorization
    /// server supports it.
    pub client_id_metadata_url: Option<Url>,
    /// Scopes to ask for when the server names none.
    pub scopes: Option<Vec<String>>,
    /// Whether to ask for `offline_access` (a refresh token) when the server offers it
    /// (default yes).
    pub offline_access: bool,
    /// Which authorization rules apply (default: those of the latest revision). A server
    /// without Protected Resource Metadata is discovered by the 2025-03-26 rules whatever this
    /// says (its authorization server metadata at its origin). One with no metadata at all gets
    /// the 2025-03-26 default endpoints (`/register`, then `/authorize` and `/token` at its
    /// origin) when this is [`Revision::V2025_03_26`], or under any revision when its `401`
    /// challenged with `Bearer` (a 2025-03-26 server may publish no metadata, so the client
    /// needs no revision to find it) and the user can be asked to sign in; a refusal at the
    /// default `/register` (a `404`) then fails with [`FlowError::NoOAuth`], nothing registered
    /// and no browser opened. A `401` with another challenge, or none, and no metadata fails
    /// with [`FlowError::NoOAuth`].
    pub revision: Revision,
    /// How long each HTTP exchange of the flow may take (default 30 s).
    pub exchange_timeout: Duration,
    /// How long the user may take (default 5 min).
    pub authorization_timeout: Duration,
    /// How many authorizations one refusal may lead to, step-ups included (default 3).
    pub max_authorizations: u32,
    /// How long before its expiry a token is refreshed (default 60 s).
    pub refresh_margin: Duration,
    /// Whether authorization servers may be reached over plain `http` on hosts other than
    /// loopback ones (default no: the spec requires HTTPS; `http://localhost`, `127.0.0.1`
    /// and `[::1]` are always allowed).
    pub allow_insecure_http: bool,
    /// How tokens are had (default [`Grant::AuthorizationCode`], with the user). With a grant
    /// without a user (client credentials, enterprise-managed, workload identity) the
    /// authorizer is never asked, and a refused or expired token is simply fetched again.
    pub grant: Grant,
    /// Whether tokens are bound to a key (DPoP, RFC 9449; default no; one key per server in
    /// the process): each token request and each request with the token carries a fresh proof,
    /// the token goes with the `DPoP` scheme, and a server's nonce is honoured (the request
    /// sent once more).
    pub dpop: bool,
}

impl OAuthOptions {
    /// Options with `authorizer`, `redirect_uri` and the defaults.
    pub fn new(authorizer: impl Authorizer, redirect_uri: &str) -> OAuthOptions {
        OAuthOptions {
            authorizer: Arc::new(authorizer),
            store: Arc::new(MemoryTokenStore::default()),
            redirect_uri: redirect_uri.to_owned(),
            client_name: "mcpwire".to_owned(),
            pre_registered: None,
            client_id_metadata_url: None,
            scopes: None,
            offline_access: true,
            revision: Revision::V2026_07_28,
            exchange_timeout: Duration::from_secs(30),
            authorization_timeout: Duration::from_secs(300),
            max_authorizations: 3,
            refresh_margin: Duration::from_secs(60),
            allow_insecure_http: false,
            grant: Grant::AuthorizationCode,
            dpop: false,
        }
    }

    /// Options for a grant without a user (see [`OAuthOptions::grant`]), with the defaults.
    pub fn without_user(grant: Grant) -> OAuthOptions {
        let mut options = OAuthOptions::new(NoUser, "http://127.0.0.1/unused");
        options.grant = grant;
        options
    }

    /// Takes what a host's file says about the server's OAuth client: its client id (and
    /// secret) as the [pre-registered](OAuthOptions::pre_registered) client, and its scopes.
    /// The file's redirect URI is the authorizer's to listen on: give it to
    /// [`OAuthOptions::new`] with an authorizer that catches it (the command line binds its
    /// loopback listener to it).
    pub fn use_file_settings(&mut self, file: &crate::hosts::OAuthSettings) {
        if let Some(client_id) = &file.client_id {
            self.pre_registered = Some(PreRegisteredClient {
                client_id: client_id.clone(),
                client_secret: file.client_secret.clone(),
            });
        }
        if let Some(scopes) = &file.scopes {
            self.scopes = Some(scopes.clone());
        }
    }

    /// The flow's configuration for `server_url`, with the clients kept for known issuers.
    pub(super) fn flow_config(
        &self,
        server_url: Url,
        known_clients: Vec<KnownClient>,
    ) -> mcpwire_core::oauth::flow::FlowConfig {
        let mut config = mcpwire_core::oauth::flow::FlowConfig::new(
            server_url,
            self.revision,
            &self.client_name,
            &self.redirect_uri,
        );
        config.pre_registered = self.pre_registered.clone();
        config.known_clients = known_clients;
        config.client_id_metadata_url = self.client_id_metadata_url.clone();
        config.scopes = self.scopes.clone();
        config.offline_access = self.offline_access;
        config.exchange_timeout = self.exchange_timeout;
        config.authorization_timeout = self.authorization_timeout;
        config.max_authorizations = self.max_authorizations;
        config.grant = self.grant.clone();
        config.no_sign_in = self.authorizer.can_sign_in().err().map(|e| e.0);
        config
    }
}

/// The authorizer of options without a user: never asked (the grant has no user's part).
struct NoUser;

impl Authorizer for NoUser {
    fn authorize(&self, _url: &Url) -> BoxFuture<Result<String, AuthorizeError>> {
        Box::pin(async { Err(AuthorizeError("no user to authorize".into())) })
    }

    fn can_sign_in(&self) -> Result<(), AuthorizeError> {
        Err(AuthorizeError("no user to authorize".into()))
    }
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("pre_registered", &self.pre_registered)
            .field("client_id_metadata_url", &self.client_id_metadata_url)
            .field("scopes", &self.scopes)
            .field("revision", &self.revision)
            .field("grant", &self.grant)
            .field("dpop", &self.dpop)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_client_and_scopes_feed_the_authorization() {
        let file = crate::hosts::OAuthSettings {
            client_id: Some("gemini-client".into()),
            client_secret: Some("s3cret".into()),
            scopes: Some(vec!["read".into(), "write".into()]),
            ..Default::default()
        };
        let mut options = OAuthOptions::without_user(Grant::AuthorizationCode);
        options.use_file_settings(&file);
        let config =
            options.flow_config(Url::parse("https://mcp.example.com/mcp").unwrap(), vec![]);
        let pre = config.pre_registered.expect("the file's client");
        assert_eq!(pre.client_id, "gemini-client");
        assert_eq!(pre.client_secret.as_deref(), Some("s3cret"));
        assert_eq!(
            config.scopes,
            Some(vec!["read".to_owned(), "write".to_owned()])
        );
    }
}
