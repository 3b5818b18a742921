//! The flow's words: its configuration, the credentials it ends with, its errors, what it asks
//! of its driver, and the exchanges it has in flight.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use url::Url;

use crate::oauth::discovery::{DiscoveryError, Revision};
use crate::oauth::grants::Grant;
use crate::oauth::pkce::CallbackError;
use crate::oauth::register::{IdentityError, PreRegisteredClient, RegisterError, RegisteredClient};
use crate::oauth::token::{
    ClientAuth, HttpRequestSpec, OAuthError, Resource, TokenError, TokenSet,
};

/// What the flow needs to know about the client and the server it reaches.
#[derive(Debug, Clone)]
pub struct FlowConfig {
    /// The MCP endpoint that answered `401`.
    pub server_url: Url,
    /// The authorization rules in force (the protocol version spoken, or aimed at). Without
    /// Protected Resource Metadata the 2025-03-26 rules of discovery apply whatever this says
    /// (the server's origin is the authorization base). A server with no metadata at all gets
    /// the 2025-03-26 default endpoints (`/register`, then `/authorize` and `/token` at its
    /// origin) when this is [`Revision::V2025_03_26`], or, under any other, when its `401`
    /// challenged with `Bearer` (a 2025-03-26 server may publish no metadata; the wire tells,
    /// the revision need not be known) and the user can be asked to sign in; a refusal at the
    /// default registration endpoint then ends the flow with [`FlowError::NoOAuth`], nothing
    /// registered and no browser opened. Otherwise (another challenge, or none) the flow ends
    /// with [`FlowError::NoOAuth`] without registering anything.
    pub revision: Revision,
    /// `client_name` for dynamic registration.
    pub client_name: String,
    /// The redirect URI, verbatim (the authorization and token requests repeat this string).
    pub redirect_uri: String,
    /// Credentials configured for the authorization server this flow will reach (the caller
    /// keys them by issuer); used before anything else.
    pub pre_registered: Option<PreRegisteredClient>,
    /// Clients kept from earlier flows (a dynamic registration, with its secret), by issuer:
    /// used after [`pre_registered`](Self::pre_registered) when discovery leads to one's
    /// issuer and, for a registration, it lists [`redirect_uri`](Self::redirect_uri).
    pub known_clients: Vec<KnownClient>,
    /// The client's metadata-document URL (CIMD), used as `client_id` where the authorization
    /// server supports it.
    pub client_id_metadata_url: Option<Url>,
    /// Scopes to request when the challenge names none (before the PRM's `scopes_supported`).
    pub scopes: Option<Vec<String>>,
    /// Whether to add `offline_access` when the authorization server lists it (SEP-2207).
    pub offline_access: bool,
    /// How long one HTTP exchange may take (default 30 s; one too long to add to `now` means
    /// no deadline).
    pub exchange_timeout: Duration,
    /// How long the user may take to authorize (default 5 min).
    pub authorization_timeout: Duration,
    /// How many authorizations one logical request may cause, step-ups included (default 3,
    /// oauth.md §1.9, §5 trap (e)).
    pub max_authorizations: u32,
    /// How tokens are had (default: the authorization-code flow, with the user). The other
    /// grants do the same discovery, then their own token requests (see [`Grant`]).
    pub grant: Grant,
    /// Why the user cannot be asked to sign in, when they cannot (a host with no terminal, or
    /// told not to ask). Then the authorization-code flow ends after discovery with
    /// [`FlowError::SignInUnavailable`] carrying these words: no client is registered (a
    /// registration exists only for a sign-in) and no authorization URL is made. Grants
    /// without a user are not affected. Default `None`: the user can be asked.
    pub no_sign_in: Option<String>,
}

impl FlowConfig {
    /// A configuration with the defaults: no pre-registered client, no metadata document, no
    /// configured scopes, `offline_access` when offered, 30 s per exchange, 5 min for the
    /// user, 3 authorizations.
    pub fn new(
        server_url: Url,
        revision: Revision,
        client_name: &str,
        redirect_uri: &str,
    ) -> FlowConfig {
        FlowConfig {
            server_url,
            revision,
            client_name: client_name.to_owned(),
            redirect_uri: redirect_uri.to_owned(),
            pre_registered: None,
            known_clients: Vec::new(),
            client_id_metadata_url: None,
            scopes: None,
            offline_access: true,
            exchange_timeout: Duration::from_secs(30),
            authorization_timeout: Duration::from_secs(300),
            max_authorizations: 3,
            grant: Grant::AuthorizationCode,
            no_sign_in: None,
        }
    }
}

/// How to give a token to a server that offers no OAuth sign-in, in the library's words: the
/// end of [`FlowError::NoOAuth`]'s message. A host with its own way to give one (a command
/// line's options) may put its words in place of these.
pub const STATIC_TOKEN_ADVICE: &str = "give it a token yourself, as a static \
    `Authorization: Bearer <token>` header among the server's headers (`HttpConfig::headers` \
    of its `ServerConfig`, or the `headers` of its entry in a host's configuration file)";

/// A client identity kept for an authorization server: what a flow's [`Credentials`] say of
/// the client, to use again at the same issuer.
///
/// Its `Debug` hides the client secret.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KnownClient {
    /// The authorization server's issuer.
    pub issuer: String,
    /// How the client authenticates there (its identity, with any secret).
    pub client_auth: ClientAuth,
    /// The dynamic registration that made it, if one did.
    pub registration: Option<RegisteredClient>,
}

impl KnownClient {
    /// The client of `credentials`.
    pub fn of(credentials: &Credentials) -> KnownClient {
        KnownClient {
            issuer: credentials.issuer.clone(),
            client_auth: credentials.client_auth.clone(),
            registration: credentials.registration.clone(),
        }
    }
}

/// What a successful flow yields: the tokens and everything needed to use, refresh and
/// step them up. Keep it per (issuer, resource).
///
/// Its `Debug` hides the tokens and the client secret.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Credentials {
    /// The tokens.
    pub tokens: TokenSet,
    /// How the client authenticates at the token endpoint (its identity, with any secret).
    pub client_auth: ClientAuth,
    /// The dynamic registration that gave the client, to keep for this issuer.
    pub registration: Option<RegisteredClient>,
    /// The authorization server's issuer: the validated metadata `issuer`, or the
    /// authorization base on the 2025-03-26 fallback without metadata.
    pub issuer: String,
    /// The RFC 8707 resource the tokens are for (sent again on refresh).
    pub resource: Option<Resource>,
    /// Where tokens are refreshed.
    pub token_endpoint: Url,
    /// The scopes requested in the authorization that gave these tokens.
    pub requested_scopes: Vec<String>,
    /// How many authorizations were made for the logical request that got these tokens (1
    /// after [`OAuthFlow::start`](super::OAuthFlow::start), one more per [`OAuthFlow::step_up`](super::OAuthFlow::step_up)).
    pub authorizations: u32,
}

/// Why a flow failed for good.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FlowError {
    /// The server URL is not an `http(s)` URL with a host.
    #[error("the server URL {0} is not an http(s) URL")]
    InvalidServerUrl(String),
    /// A metadata document is malformed or fails a check (resource, issuer, PKCE).
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    /// A metadata probe answered a status that stops discovery (5xx, 3xx).
    #[error("the {document} at {url} answered {status}")]
    MetadataStatus {
        /// Which document was probed.
        document: &'static str,
        /// The URL probed.
        url: String,
        /// The status.
        status: u16,
    },
    /// The server asked for credentials and offers no OAuth sign-in: no Protected Resource
    /// Metadata (neither where its challenge points nor at the well-known places), no
    /// authorization server metadata at its origin and, under the 2025-03-26 rules, no
    /// registration endpoint at the default place. Nothing was registered. Its message ends
    /// with [`STATIC_TOKEN_ADVICE`].
    #[error("{}", no_oauth_words(.status, .tried, .registration))]
    NoOAuth {
        /// The status that asked for credentials (`401`; `403` for a scope).
        status: u16,
        /// The metadata URLs looked at, in order, each answered with a 4xx (without
        /// credentials).
        tried: Vec<String>,
        /// The default registration endpoint that answered `404` or `405`, under the
        /// 2025-03-26 rules (without credentials).
        registration: Option<String>,
    },
    /// A sign-in is needed and the user cannot be asked ([`FlowConfig::no_sign_in`]): no
    /// client was registered and no authorization URL made.
    #[error("the server asks for a sign-in (authorization server {issuer}) and none can be made: {reason}")]
    SignInUnavailable {
        /// The authorization server's issuer (or, without metadata, the authorization base).
        issuer: String,
        /// [`FlowConfig::no_sign_in`].
        reason: String,
    },
    /// None of the authorization server's metadata URLs had a document.
    #[error("no metadata found for the authorization server {issuer}")]
    NoAuthorizationServerMetadata {
        /// The issuer looked up.
        issuer: String,
    },
    /// The authorization server metadata lacks an endpoint, or it is not a URL.
    #[error("the authorization server metadata has no usable {0}")]
    MissingEndpoint(&'static str),
    /// No client identity for this authorization server.
    #[error(transparent)]
    Identity(#[from] IdentityError),
    /// Dynamic registration failed.
    #[error(transparent)]
    Registration(#[from] RegisterError),
    /// The redirect was refused (state, `iss`, an error from the server, no code).
    #[error(transparent)]
    Callback(#[from] CallbackError),
    /// The token endpoint gave no tokens.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The refresh token was refused (`invalid_grant`): drop the tokens and run the full flow.
    #[error("the refresh token was refused ({0}): the full authorization flow is needed")]
    ReauthorizationRequired(OAuthError),
    /// There is no refresh token: the full authorization flow is needed.
    #[error("no refresh token: the full authorization flow is needed")]
    NoRefreshToken,
    /// The authorization budget of the logical request is spent.
    #[error("gave up after {limit} authorizations")]
    TooManyAuthorizations {
        /// [`FlowConfig::max_authorizations`].
        limit: u32,
    },
    /// A step-up asks only for scopes already requested or granted: asking again is futile.
    #[error("the server asks for scopes {scopes:?} that were already requested or granted")]
    ScopeNotGrantable {
        /// The challenge's scopes.
        scopes: Vec<String>,
    },
    /// The identity provider's token exchange gave a token of another type than asked.
    #[error("the token exchange gave a {got} where {expected} was asked")]
    UnexpectedTokenType {
        /// The type asked for.
        expected: &'static str,
        /// The `issued_token_type` received.
        got: String,
    },
    /// No answer in time.
    #[error("no answer in time during the {during}")]
    Timeout {
        /// The step waited on.
        during: &'static str,
    },
    /// The driver could not carry out a request.
    #[error("the {during} request failed: {reason}")]
    Transport {
        /// The step.
        during: &'static str,
        /// The driver's reason.
        reason: String,
    },
}

/// [`FlowError::NoOAuth`] in words.
fn no_oauth_words(status: &u16, tried: &[String], registration: &Option<String>) -> String {
    let mut places = format!("no metadata at {}", tried.join(", "));
    if tried.is_empty() {
        places = "no metadata".to_owned();
    }
    if let Some(registration) = registration {
        places.push_str(&format!(", no registration endpoint at {registration}"));
    }
    format!(
        "the server wants credentials (HTTP {status}) but offers no OAuth sign-in ({places}): \
         {STATIC_TOKEN_ADVICE}"
    )
}

/// What the flow asks of the driver, or how it ended.
#[derive(Debug, Clone, PartialEq)]
pub enum FlowOutput {
    /// Carry out this request and report its response under `exchange` (redirects not
    /// followed).
    Http {
        /// The number to report the response under.
        exchange: u64,
        /// The request.
        request: HttpRequestSpec,
    },
    /// Send the user (or, for the conformance harness, an HTTP `GET` without following
    /// redirects) to this URL; report the redirect with [`OAuthFlow::handle_redirect`](super::OAuthFlow::handle_redirect).
    Authorize {
        /// The authorization URL.
        url: Url,
    },
    /// Done: the tokens, the client identity and registration to keep, the issuer and resource
    /// they belong to.
    Done(Box<Credentials>),
    /// Failed for good.
    Failed(FlowError),
}

/// The HTTP exchange in flight, the deadline, and the outputs not yet polled.
pub(crate) struct Io {
    pub(crate) out: VecDeque<FlowOutput>,
    pub(crate) next_exchange: u64,
    pub(crate) in_flight: Option<u64>,
    pub(crate) deadline: Option<Instant>,
    pub(crate) waiting_for: &'static str,
    pub(crate) exchange_timeout: Duration,
}

impl Io {
    pub(crate) fn new(exchange_timeout: Duration, waiting_for: &'static str) -> Io {
        Io {
            out: VecDeque::new(),
            next_exchange: 0,
            in_flight: None,
            deadline: None,
            waiting_for,
            exchange_timeout,
        }
    }

    pub(crate) fn send(&mut self, now: Instant, during: &'static str, request: HttpRequestSpec) {
        self.next_exchange += 1;
        let exchange = self.next_exchange;
        self.in_flight = Some(exchange);
        self.deadline = now.checked_add(self.exchange_timeout);
        self.waiting_for = during;
        self.out.push_back(FlowOutput::Http { exchange, request });
    }

    pub(crate) fn get(&mut self, now: Instant, during: &'static str, url: Url) {
        let request = HttpRequestSpec {
            method: "GET",
            url,
            headers: vec![("Accept".to_owned(), "application/json".to_owned())],
            body: Vec::new(),
        };
        self.send(now, during, request);
    }
}

pub(crate) const PRM: &str = "protected resource metadata";
pub(crate) const ASM: &str = "authorization server metadata";

/// A step's result: wait for more, finished with credentials, or failed.
pub(crate) type Outcome = Result<Option<Credentials>, FlowError>;
