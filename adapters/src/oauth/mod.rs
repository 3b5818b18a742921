//! OAuth 2.1 for HTTP servers that answer `401`: the core's
//! [`OAuthFlow`](mcpwire_core::oauth::flow::OAuthFlow) driven over the connection's own HTTP
//! backend, the host's [`Authorizer`] for the user's part, a [`TokenStore`] for what is kept,
//! and one authorization at a time per server.
//!
//! Turn it on with [`ConnectOptions::oauth`](crate::ConnectOptions::oauth). Then a refusal
//! (`401`, or `403` with `error="insufficient_scope"`) parks the request in the core and this
//! module takes over: it uses a token another connection already stored, or refreshes the one
//! in use, or runs the whole flow (discovery, registration, the user's authorization, the code
//! exchanged), stores the result and hands the token to the connection, which sends what waited
//! again. When it cannot, the waiting requests end with
//! [`HttpErrorKind::Unauthorized`](mcpwire_core::error::HttpErrorKind::Unauthorized) and the
//! reason. Tokens are refreshed ahead of their expiry too.
//!
//! A server that asks for credentials and has no OAuth metadata anywhere offers no sign-in:
//! the reason is [`FlowError::NoOAuth`], which says how to give it a token instead (an
//! `Authorization` header in its [`ServerConfig`](crate::ServerConfig)). A client is registered
//! only for a sign-in: an [`Authorizer`] that cannot ask the user says so
//! ([`Authorizer::can_sign_in`]), and then nothing is registered.
//!
//! Tokens never appear in a URL, a log line, an error or a `Debug`.
//!
//! This module stands below the connection: the connection's driver runs its session, and
//! nothing here calls the [`Client`](crate::Client) or the driver; it reaches servers only
//! through an [`HttpBackend`](crate::HttpBackend).

mod dpop;
mod file_store;
#[cfg(feature = "keychain")]
mod keychain_store;
mod loopback;
mod options;
mod run;
mod session;
mod store;

pub(crate) use dpop::dpop_backend;
pub use file_store::{FileTokenStore, StoredSignIn};
#[cfg(feature = "keychain")]
pub use keychain_store::KeychainTokenStore;
pub use loopback::{LoopbackAuthorizer, UrlShower};
pub use mcpwire_core::oauth::discovery::Revision;
pub use mcpwire_core::oauth::flow::{Credentials, FlowError, STATIC_TOKEN_ADVICE};
pub use mcpwire_core::oauth::grants::{ClientCredential, EnterpriseManaged, Grant};
pub use mcpwire_core::oauth::jwt::{Es256Key, JwtError};
pub use mcpwire_core::oauth::register::PreRegisteredClient;
pub use options::{AuthorizeError, Authorizer, OAuthOptions};
pub(crate) use session::{AuthOutcome, AuthSession};
pub use store::{KnownClient, MemoryTokenStore, StoreError, TokenStore};
/// URLs, as the authorization steps take them.
pub use url::Url;
