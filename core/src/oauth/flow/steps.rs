//! The steps of the authorization-code flow: discovery, the client identity, the scopes, the
//! authorization request, the redirect and the code exchange (oauth.md §1.14).

use std::fmt;
use std::time::Instant;

use url::Url;

mod machine;

use super::words::{Credentials, FlowConfig, FlowError, FlowOutput, Io, Outcome, ASM, PRM};
use crate::oauth::challenge::{bearer, parse_challenges, Challenge};
use crate::oauth::discovery::{
    self, AuthorizationServerMetadata, DiscoveryError, Probe, ProtectedResourceMetadata, Revision,
};
use crate::oauth::pkce::{self, AuthorizationRequest, Pkce};
use crate::oauth::register::{self, ClientRegistration, IdentityError, RegisteredClient};
use crate::oauth::token::{self, ClientAuth, Resource, TokenSet};

/// Where the authorization-code flow is.
pub(super) enum Step {
    /// Probing PRM `urls`; the one in flight is `urls[next - 1]`.
    Prm { urls: Vec<Url>, next: usize },
    /// Probing AS metadata `urls`; the one in flight is `urls[next - 1]`.
    AsMetadata { urls: Vec<Url>, next: usize },
    /// Waiting for the registration response.
    Register,
    /// Waiting for [`super::OAuthFlow::handle_redirect`].
    Redirect,
    /// Waiting for the identity provider's token exchange (enterprise-managed).
    Exchange,
    /// Waiting for the token response.
    Token,
}

/// The endpoints in use.
struct Endpoints {
    authorization: Url,
    token: Url,
    registration: Option<Url>,
}

/// The authorization-code flow's state.
pub(super) struct Authorization {
    config: FlowConfig,
    challenge: Option<Challenge>,
    step: Step,
    pkce: Pkce,
    state: String,
    /// No PRM was found: the 2025-03-26 rules.
    legacy: bool,
    /// The metadata URLs that answered a 4xx, in order (without credentials).
    tried: Vec<String>,
    /// The issuer the AS metadata is looked up for, as given (the PRM entry, or the base).
    issuer: String,
    prm: Option<ProtectedResourceMetadata>,
    metadata: Option<AuthorizationServerMetadata>,
    endpoints: Option<Endpoints>,
    resource: Option<Resource>,
    scopes: Vec<String>,
    client_auth: Option<ClientAuth>,
    registration: Option<RegisteredClient>,
    /// The credentials a step-up builds on.
    previous: Option<Credentials>,
    /// Authorizations made so far for the logical request.
    authorizations: u32,
}

/// `url` as errors show it: without credentials.
fn redact(url: &Url) -> String {
    crate::error::redact_url(url.as_str())
}

/// `scopes` with `more` added, in order, without repeats.
fn union<'a>(scopes: &mut Vec<String>, more: impl IntoIterator<Item = &'a String>) {
    for scope in more {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
}

impl fmt::Debug for Authorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorization")
            .field("step", &self.step_name())
            .field(
                "server_url",
                &crate::error::redact_url(self.config.server_url.as_str()),
            )
            .field("issuer", &self.issuer)
            .field("legacy", &self.legacy)
            .field("scopes", &self.scopes)
            .field("client_auth", &self.client_auth)
            .field("authorizations", &self.authorizations)
            .finish()
    }
}

impl Authorization {
    /// The flow before its first request (see [`super::OAuthFlow::start`] and
    /// [`super::OAuthFlow::step_up`]).
    pub(super) fn new(
        config: FlowConfig,
        challenges: &[&str],
        random: &[u8; 48],
        previous: Option<Credentials>,
    ) -> Authorization {
        let challenge = bearer(&parse_challenges(challenges)).cloned();
        let (verifier, state) = random.split_at(32);
        let pkce = Pkce::from_random(verifier.try_into().unwrap_or(&[0; 32]));
        let state = pkce::state_from_random(state.try_into().unwrap_or(&[0; 16]));
        let urls = discovery::protected_resource_metadata_urls(
            &config.server_url,
            challenge.as_ref().and_then(Challenge::resource_metadata),
        );
        Authorization {
            challenge,
            step: Step::Prm { urls, next: 1 },
            pkce,
            state,
            legacy: false,
            tried: Vec::new(),
            issuer: String::new(),
            prm: None,
            metadata: None,
            endpoints: None,
            resource: None,
            scopes: Vec::new(),
            client_auth: None,
            registration: None,
            authorizations: previous.as_ref().map_or(0, |p| p.authorizations),
            previous,
            config,
        }
    }

    /// The step, for people.
    fn step_name(&self) -> &'static str {
        match self.step {
            Step::Prm { .. } => PRM,
            Step::AsMetadata { .. } => ASM,
            Step::Register => "registration",
            Step::Redirect => "authorization",
            Step::Exchange => "token exchange",
            Step::Token => "token",
        }
    }

    /// Whether the flow waits for [`super::OAuthFlow::handle_redirect`].
    pub(super) fn waits_for_redirect(&self) -> bool {
        matches!(self.step, Step::Redirect)
    }

    /// The rules in force: 2025-03-26 without PRM.
    fn revision(&self) -> Revision {
        if self.legacy {
            Revision::V2025_03_26
        } else {
            self.config.revision
        }
    }

    fn as_methods(&self) -> Option<&[String]> {
        self.metadata
            .as_ref()
            .and_then(|m| m.token_endpoint_auth_methods_supported.as_deref())
    }

    /// The issuer the credentials belong to: the metadata's, else the lookup base.
    fn recorded_issuer(&self) -> &str {
        self.metadata.as_ref().map_or(&self.issuer, |m| &m.issuer)
    }

    /// The end of a flow that found no OAuth at the server: the places looked at, and the
    /// default registration endpoint that was not there either (2025-03-26 rules).
    fn no_oauth(&mut self, registration: Option<String>) -> FlowError {
        // A `403` asks for credentials with `insufficient_scope` (RFC 6750 §3.1).
        let step_up = self
            .challenge
            .as_ref()
            .is_some_and(Challenge::is_insufficient_scope);
        FlowError::NoOAuth {
            status: if step_up { 403 } else { 401 },
            tried: std::mem::take(&mut self.tried),
            registration,
        }
    }

    /// Whether a server with no metadata anywhere gets the 2025-03-26 default endpoints: under
    /// those rules always; otherwise when its `401` challenged with `Bearer` and named no
    /// `resource_metadata` (which came after 2025-03-26), as a 2025-03-26 server does while
    /// publishing no metadata (the revision need not be known: the wire tells), for a sign-in
    /// the user can be asked for. The default registration endpoint then decides: a refusal
    /// there ends as "no OAuth sign-in", before any browser is opened.
    fn may_guess_endpoints(&self) -> bool {
        let bearer = self
            .challenge
            .as_ref()
            .is_some_and(|c| c.is_scheme("Bearer") && c.resource_metadata().is_none());
        let sign_in = self.config.grant.is_interactive() && self.config.no_sign_in.is_none();
        self.config.revision == Revision::V2025_03_26 || (bearer && sign_in)
    }

    /// The checks a step-up makes before any request, then the first PRM probe.
    pub(super) fn begin(&mut self, io: &mut Io, now: Instant) -> Outcome {
        if let Some(previous) = &self.previous {
            if previous.authorizations >= self.config.max_authorizations {
                return Err(FlowError::TooManyAuthorizations {
                    limit: self.config.max_authorizations,
                });
            }
            let asked = self
                .challenge
                .as_ref()
                .and_then(Challenge::scope)
                .unwrap_or_default();
            let mut had = previous.requested_scopes.clone();
            union(&mut had, previous.tokens.scopes.iter().flatten());
            if asked.iter().all(|s| had.contains(s)) {
                return Err(FlowError::ScopeNotGrantable { scopes: asked });
            }
        }
        let Step::Prm { urls, .. } = &self.step else {
            return Ok(None);
        };
        let Some(first) = urls.first().cloned() else {
            return Err(FlowError::InvalidServerUrl(crate::error::redact_url(
                self.config.server_url.as_str(),
            )));
        };
        io.get(now, PRM, first);
        Ok(None)
    }

    pub(super) fn on_response(
        &mut self,
        io: &mut Io,
        now: Instant,
        status: u16,
        body: &[u8],
        unix_now: u64,
    ) -> Outcome {
        match self.step {
            Step::Prm { .. } => self.on_prm(io, now, status, body),
            Step::AsMetadata { .. } => self.on_metadata(io, now, status, body, unix_now),
            Step::Register => {
                let guessed = self.legacy && self.metadata.is_none();
                // Guessed on the wire's evidence (a `Bearer` challenge), any refusal tells.
                let refused = match self.config.revision {
                    Revision::V2025_03_26 => matches!(status, 404 | 405),
                    _ => (400..500).contains(&status),
                };
                if guessed && refused {
                    // The 2025-03-26 default registration endpoint is not there either, or
                    // refuses: no OAuth sign-in here, and nothing was registered.
                    let registration = self
                        .endpoints
                        .as_ref()
                        .and_then(|e| e.registration.as_ref())
                        .map(redact);
                    return Err(self.no_oauth(registration));
                }
                let registered = register::parse_registration(status, body)?;
                self.client_auth = Some(registered.client_auth(self.as_methods()));
                self.registration = Some(registered);
                self.authorize(io, now)
            }
            Step::Exchange => self.on_id_jag(io, now, status, body, unix_now),
            Step::Token => {
                let mut tokens = token::parse_token_response(status, body, unix_now)?;
                if self.config.grant.is_client_credentials() {
                    // A new token is fetched instead (RFC 6749 §4.4.3: none should be issued).
                    tokens.refresh_token = None;
                }
                Ok(Some(self.credentials(tokens)))
            }
            Step::Redirect => Ok(None),
        }
    }

    /// A PRM probe answered: use it, try the next URL, or fall back to the legacy rules.
    fn on_prm(&mut self, io: &mut Io, now: Instant, status: u16, body: &[u8]) -> Outcome {
        let Step::Prm { urls, next } = &mut self.step else {
            return Ok(None);
        };
        match discovery::probe_status(status) {
            Probe::Use => {
                let prm = ProtectedResourceMetadata::from_json(body)?;
                discovery::check_resource(&prm, &self.config.server_url)?;
                let resource = Resource::parse(&prm.resource).map_err(|_| {
                    DiscoveryError::InvalidResource {
                        resource: prm.resource.clone(),
                        reason: "not an absolute URI",
                    }
                })?;
                let issuer = prm
                    .authorization_server()
                    .ok_or(DiscoveryError::NoAuthorizationServers)?
                    .to_owned();
                let issuer_url = discovery::parse_issuer(&issuer)?;
                self.resource = Some(resource);
                self.prm = Some(prm);
                self.issuer = issuer;
                self.probe_metadata(
                    io,
                    now,
                    discovery::authorization_server_metadata_urls(&issuer_url),
                )
            }
            Probe::TryNext if *next < urls.len() => {
                self.tried.push(redact(&urls[*next - 1]));
                let url = urls[*next].clone();
                *next += 1;
                io.get(now, PRM, url);
                Ok(None)
            }
            Probe::TryNext => {
                // No PRM: the 2025-03-26 rules (oauth.md §1.12).
                self.tried.push(redact(&urls[*next - 1]));
                let server = &self.config.server_url;
                let base = discovery::legacy_authorization_base(server)
                    .ok_or_else(|| FlowError::InvalidServerUrl(server.to_string()))?;
                let resource = discovery::canonical_resource(server);
                self.resource = Some(Resource::parse(&resource).map_err(|_| {
                    DiscoveryError::InvalidResource {
                        resource,
                        reason: "not an absolute URI",
                    }
                })?);
                self.legacy = true;
                self.issuer = discovery::canonical_resource(&base);
                self.probe_metadata(
                    io,
                    now,
                    discovery::authorization_server_metadata_urls(&base),
                )
            }
            Probe::Stop => Err(FlowError::MetadataStatus {
                document: PRM,
                url: urls[*next - 1].to_string(),
                status,
            }),
        }
    }

    fn probe_metadata(&mut self, io: &mut Io, now: Instant, urls: Vec<Url>) -> Outcome {
        let Some(first) = urls.first().cloned() else {
            return Err(FlowError::NoAuthorizationServerMetadata {
                issuer: self.issuer.clone(),
            });
        };
        io.get(now, ASM, first);
        self.step = Step::AsMetadata { urls, next: 1 };
        Ok(None)
    }

    /// An AS metadata probe answered: check and use it, try the next URL, or (legacy only)
    /// use the default endpoints.
    fn on_metadata(
        &mut self,
        io: &mut Io,
        now: Instant,
        status: u16,
        body: &[u8],
        unix_now: u64,
    ) -> Outcome {
        let revision = self.revision();
        let Step::AsMetadata { urls, next } = &mut self.step else {
            return Ok(None);
        };
        match discovery::probe_status(status) {
            Probe::Use => {
                let metadata = AuthorizationServerMetadata::from_json(body)?;
                discovery::check_issuer(&metadata, &self.issuer, revision)?;
                discovery::check_pkce(Some(&metadata), revision)?;
                let endpoint = |value: &Option<String>, name| {
                    value
                        .as_deref()
                        .and_then(|s| Url::parse(s).ok())
                        .ok_or(FlowError::MissingEndpoint(name))
                };
                let registration = match &metadata.registration_endpoint {
                    None => None,
                    some => Some(endpoint(some, "registration_endpoint")?),
                };
                self.endpoints = Some(Endpoints {
                    authorization: endpoint(
                        &metadata.authorization_endpoint,
                        "authorization_endpoint",
                    )?,
                    token: endpoint(&metadata.token_endpoint, "token_endpoint")?,
                    registration,
                });
                self.metadata = Some(metadata);
                self.choose_client(io, now, unix_now)
            }
            Probe::TryNext if *next < urls.len() => {
                self.tried.push(redact(&urls[*next - 1]));
                let url = urls[*next].clone();
                *next += 1;
                io.get(now, ASM, url);
                Ok(None)
            }
            Probe::TryNext if self.legacy => {
                self.tried.push(redact(&urls[*next - 1]));
                if !self.may_guess_endpoints() {
                    // No metadata anywhere: the server offers no OAuth sign-in. Only the
                    // 2025-03-26 rules guess endpoints; later revisions have no such fallback,
                    // and registering at a guessed place would only meet a 404.
                    return Err(self.no_oauth(None));
                }
                // No metadata either: the default endpoints, and no PKCE gate (trap (b)).
                discovery::check_pkce(None, revision)?;
                let (authorization, token, registration) =
                    discovery::legacy_fallback_endpoints(&self.config.server_url);
                self.endpoints = Some(Endpoints {
                    authorization,
                    token,
                    registration: Some(registration),
                });
                self.choose_client(io, now, unix_now)
            }
            Probe::TryNext => Err(FlowError::NoAuthorizationServerMetadata {
                issuer: self.issuer.clone(),
            }),
            Probe::Stop => Err(FlowError::MetadataStatus {
                document: ASM,
                url: urls[*next - 1].to_string(),
                status,
            }),
        }
    }

    /// The scopes to request (oauth.md §1.8, §1.9); `offline_access` only when `offline` (a
    /// grant with a user).
    fn choose_scopes(&mut self, with_offline: bool) {
        let challenged = self.challenge.as_ref().and_then(Challenge::scope);
        let mut scopes = Vec::new();
        if let Some(previous) = &self.previous {
            union(&mut scopes, &previous.requested_scopes);
            union(&mut scopes, previous.tokens.scopes.iter().flatten());
            union(&mut scopes, challenged.iter().flatten());
        } else if let Some(chosen) = challenged
            .or_else(|| self.config.scopes.clone())
            .or_else(|| self.prm.as_ref().and_then(|p| p.scopes_supported.clone()))
        {
            union(&mut scopes, &chosen);
        }
        let offline = "offline_access".to_owned();
        let offered = self
            .metadata
            .as_ref()
            .is_some_and(|m| m.supports_scope(&offline));
        if with_offline && self.config.offline_access && offered {
            union(&mut scopes, [&offline]);
        }
        self.scopes = scopes;
    }

    /// The client identity: the previous one at the same issuer, pre-registered, one kept for
    /// the issuer, a metadata document, or a registration request. A grant without a user goes
    /// its own way from here.
    fn choose_client(&mut self, io: &mut Io, now: Instant, unix_now: u64) -> Outcome {
        if !self.config.grant.is_interactive() {
            self.choose_scopes(false);
            return self.machine_grant(io, now, unix_now);
        }
        if let Some(reason) = &self.config.no_sign_in {
            // A client is registered (and the user sent anywhere) only for a sign-in.
            return Err(FlowError::SignInUnavailable {
                issuer: self.recorded_issuer().to_owned(),
                reason: reason.clone(),
            });
        }
        self.choose_scopes(true);
        if let Some(previous) = self
            .previous
            .as_ref()
            .filter(|p| p.issuer == self.recorded_issuer())
        {
            self.client_auth = Some(previous.client_auth.clone());
            self.registration.clone_from(&previous.registration);
            return self.authorize(io, now);
        }
        let issuer = self.recorded_issuer();
        let redirect_uri = &self.config.redirect_uri;
        let known = self.config.known_clients.iter().find(|k| {
            k.issuer == issuer
                && k.registration.as_ref().is_none_or(|r| {
                    r.redirect_uris.is_empty() || r.redirect_uris.contains(redirect_uri)
                })
        });
        if let (None, Some(known)) = (&self.config.pre_registered, known) {
            self.client_auth = Some(known.client_auth.clone());
            self.registration.clone_from(&known.registration);
            return self.authorize(io, now);
        }
        let Some(endpoints) = &self.endpoints else {
            return Ok(None);
        };
        let identity = register::choose_identity(
            self.config.pre_registered.clone(),
            self.config.client_id_metadata_url.as_ref(),
            self.metadata
                .as_ref()
                .is_some_and(|m| m.client_id_metadata_document_supported),
            endpoints.registration.is_some(),
        )?;
        if let Some(auth) = identity.client_auth(self.as_methods()) {
            self.client_auth = Some(auth);
            return self.authorize(io, now);
        }
        let Some(registration_endpoint) = &endpoints.registration else {
            return Err(IdentityError::NoIdentity.into());
        };
        let scope = (!self.scopes.is_empty()).then(|| self.scopes.join(" "));
        let registration = ClientRegistration::authorization_code(
            &self.config.client_name,
            &self.config.redirect_uri,
            scope.as_deref(),
        );
        io.send(
            now,
            "registration",
            registration.request(registration_endpoint),
        );
        self.step = Step::Register;
        Ok(None)
    }

    /// Sends the user to the authorization endpoint, within the budget.
    fn authorize(&mut self, io: &mut Io, now: Instant) -> Outcome {
        if self.authorizations >= self.config.max_authorizations {
            return Err(FlowError::TooManyAuthorizations {
                limit: self.config.max_authorizations,
            });
        }
        let (Some(endpoints), Some(auth)) = (&self.endpoints, &self.client_auth) else {
            return Ok(None);
        };
        self.authorizations += 1;
        let request = AuthorizationRequest {
            authorization_endpoint: endpoints.authorization.clone(),
            client_id: auth.client_id().to_owned(),
            redirect_uri: self.config.redirect_uri.clone(),
            scopes: self.scopes.clone(),
            state: self.state.clone(),
            code_challenge: self.pkce.challenge.clone(),
            resource: self.resource.clone(),
        };
        io.out
            .push_back(FlowOutput::Authorize { url: request.url() });
        io.deadline = now.checked_add(self.config.authorization_timeout);
        io.waiting_for = "authorization";
        self.step = Step::Redirect;
        Ok(None)
    }

    /// Checks the redirect and exchanges its code.
    pub(super) fn on_redirect(&mut self, io: &mut Io, now: Instant, location: &str) -> Outcome {
        let params = pkce::callback_params(location);
        let metadata = self.metadata.as_ref();
        let code = pkce::check_callback(
            &params,
            &self.state,
            metadata.map(|m| m.issuer.as_str()),
            metadata.is_some_and(|m| m.authorization_response_iss_parameter_supported),
            self.revision(),
        )?;
        let (Some(endpoints), Some(auth)) = (&self.endpoints, &self.client_auth) else {
            return Ok(None);
        };
        let request = token::authorization_code_request(
            &endpoints.token,
            auth,
            &code,
            &self.config.redirect_uri,
            &self.pkce.verifier,
            self.resource.as_ref(),
        );
        io.send(now, "token", request);
        self.step = Step::Token;
        Ok(None)
    }

    fn credentials(&self, tokens: TokenSet) -> Credentials {
        let token_endpoint = match &self.endpoints {
            Some(endpoints) => endpoints.token.clone(),
            None => self.config.server_url.clone(),
        };
        Credentials {
            tokens,
            client_auth: self.client_auth.clone().unwrap_or(ClientAuth::None {
                client_id: String::new(),
            }),
            registration: self.registration.clone(),
            issuer: self.recorded_issuer().to_owned(),
            resource: self.resource.clone(),
            token_endpoint,
            requested_scopes: self.scopes.clone(),
            authorizations: self.authorizations,
        }
    }
}
