//! The grants without a user, once discovery is done (oauth.md §1.10, §1.11): the token
//! request of `client_credentials` (a secret or a signed assertion), the identity provider's
//! token exchange then the JWT-bearer grant (enterprise-managed), or the JWT-bearer grant with
//! the workload's JWT.

use std::time::Instant;

use super::{Authorization, Step};
use crate::oauth::flow::{FlowError, Io, Outcome};
use crate::oauth::grants::{self, ClientCredential, Grant, ID_JAG};
use crate::oauth::jwt;
use crate::oauth::token::{self, ClientAuth};

impl Authorization {
    /// The first request of the configured grant, within the authorization budget.
    pub(super) fn machine_grant(&mut self, io: &mut Io, now: Instant, unix_now: u64) -> Outcome {
        if self.authorizations >= self.config.max_authorizations {
            return Err(FlowError::TooManyAuthorizations {
                limit: self.config.max_authorizations,
            });
        }
        let Some(endpoints) = &self.endpoints else {
            return Ok(None);
        };
        self.authorizations += 1;
        let token_endpoint = &endpoints.token;
        let resource = self.resource.as_ref();
        let scopes = &self.scopes;
        let (request, auth) = match &self.config.grant {
            Grant::AuthorizationCode => return Ok(None),
            Grant::ClientCredentials {
                client_id,
                credential: ClientCredential::Secret(secret),
            } => {
                let auth =
                    token::choose_client_auth(client_id, Some(secret), None, self.as_methods());
                let request = token::client_credentials_request(
                    token_endpoint,
                    &auth,
                    Some(scopes),
                    resource,
                );
                (request, auth)
            }
            Grant::ClientCredentials {
                client_id,
                credential: ClientCredential::PrivateKeyJwt(key),
            } => {
                // The assertion's audience is the issuer, not the token endpoint (oauth.md
                // §5.6); its `jti` comes from the random bytes `state` would use.
                let issuer = self.recorded_issuer();
                let assertion =
                    jwt::client_assertion(key, client_id, issuer, unix_now, &self.state);
                let request = grants::client_credentials_jwt_request(
                    token_endpoint,
                    &assertion,
                    scopes,
                    resource,
                );
                let auth = ClientAuth::None {
                    client_id: client_id.clone(),
                };
                (request, auth)
            }
            Grant::EnterpriseManaged(grant) => {
                let request = grants::id_jag_exchange_request(
                    grant,
                    self.recorded_issuer(),
                    scopes,
                    resource,
                );
                self.client_auth = Some(grant.client.clone());
                io.send(now, "token exchange", request);
                self.step = Step::Exchange;
                return Ok(None);
            }
            Grant::JwtBearer {
                client_id,
                assertion,
            } => {
                let auth = ClientAuth::None {
                    client_id: client_id.clone().unwrap_or_default(),
                };
                let with = client_id.as_ref().map(|_| &auth);
                let request =
                    grants::jwt_bearer_request(token_endpoint, assertion, scopes, resource, with);
                (request, auth)
            }
        };
        self.client_auth = Some(auth);
        io.send(now, "token", request);
        self.step = Step::Token;
        Ok(None)
    }

    /// The identity provider answered the token exchange: its ID-JAG goes to the authorization
    /// server in the JWT-bearer grant, with the client's authentication there.
    pub(super) fn on_id_jag(
        &mut self,
        io: &mut Io,
        now: Instant,
        status: u16,
        body: &[u8],
        unix_now: u64,
    ) -> Outcome {
        let issued = token::parse_token_response(status, body, unix_now)?;
        if let Some(got) = issued.issued_token_type.filter(|t| t != ID_JAG) {
            return Err(FlowError::UnexpectedTokenType {
                expected: ID_JAG,
                got,
            });
        }
        let Some(endpoints) = &self.endpoints else {
            return Ok(None);
        };
        let request = grants::jwt_bearer_request(
            &endpoints.token,
            &issued.access_token,
            &self.scopes,
            self.resource.as_ref(),
            self.client_auth.as_ref(),
        );
        io.send(now, "token", request);
        self.step = Step::Token;
        Ok(None)
    }
}
