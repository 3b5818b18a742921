//! Where Protected Resource Metadata (RFC 9728) and authorization-server metadata (RFC 8414,
//! OpenID Connect Discovery) are looked for, in which order, and how what comes back is checked.
//!
//! The plan is strict and short, because the conformance suite traps extra probes:
//! - PRM: the challenge's `resource_metadata` URL alone when there is one; otherwise the
//!   path-aware well-known URL, then the root one (only for a server with a path).
//! - AS metadata: for an issuer with a path, three path-aware URLs and never the root ones;
//!   for an issuer without, the two root ones.
//! - Probe one URL at a time, in order: a 2xx is used, a 4xx moves on, anything else stops
//!   ([`probe_status`]). Never race or prefetch the candidates.
//!
//! Then [`check_resource`] (before anything else is done with the PRM), [`check_issuer`] and
//! [`check_pkce`]. With no PRM at all, the 2025-03-26 rules apply: the server's origin is the
//! authorization base ([`legacy_authorization_base`]), and without metadata the default
//! endpoints of [`legacy_fallback_endpoints`] are used.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use url::Url;

/// The authorization rules in force: which spec revision's discovery checks apply.
///
/// The legacy path (no Protected Resource Metadata found) follows [`Revision::V2025_03_26`]
/// whatever protocol version is spoken later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Revision {
    /// 2025-03-26 (and 2024-11-05): no PRM; the server's origin is the authorization base.
    V2025_03_26,
    /// 2025-06-18 and 2025-11-25: PRM, RFC 8414 / OIDC discovery, the PKCE gate.
    V2025_11_25,
    /// 2026-07-28: as 2025-11-25, plus the exact `issuer` match (RFC 8414 §3.3).
    V2026_07_28,
}

impl Revision {
    /// The rules for an MCP protocol version (`YYYY-MM-DD`); versions after 2026-07-28 get
    /// its rules. `None` for anything that is not a date.
    pub fn from_protocol_version(version: &str) -> Option<Revision> {
        let b = version.as_bytes();
        let shape = b.len() == 10
            && b.iter().enumerate().all(|(i, c)| match i {
                4 | 7 => *c == b'-',
                _ => c.is_ascii_digit(),
            });
        if !shape {
            return None;
        }
        Some(if version < "2025-06-18" {
            Revision::V2025_03_26
        } else if version < "2026-07-28" {
            Revision::V2025_11_25
        } else {
            Revision::V2026_07_28
        })
    }

    /// The revision's date.
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why discovery cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoveryError {
    /// A metadata document is not JSON of the expected shape.
    #[error("the {document} is not valid metadata: {reason}")]
    Malformed {
        /// Which document (`protected resource metadata`, `authorization server metadata`).
        document: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The Protected Resource Metadata names no authorization server (MCP requires one).
    #[error("the protected resource metadata names no authorization server")]
    NoAuthorizationServers,
    /// The PRM `resource` is not a URL a resource can have (unparseable, or with a fragment).
    #[error("the protected resource metadata's resource {resource:?} is not a valid resource identifier: {reason}")]
    InvalidResource {
        /// The `resource` as sent.
        resource: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The PRM is for another resource than the server being reached (RFC 9728 §3.3); no
    /// authorization request may be made with it.
    #[error("the protected resource metadata is for {resource}, not for the server at {server}")]
    ResourceMismatch {
        /// The PRM's `resource`.
        resource: String,
        /// The server URL it was fetched for.
        server: String,
    },
    /// An authorization server identifier is not an `http(s)` URL without query or fragment.
    #[error("the authorization server {issuer:?} is not a valid issuer identifier: {reason}")]
    InvalidIssuer {
        /// The identifier as given.
        issuer: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The AS metadata's `issuer` is not the identifier its URL was built from (RFC 8414
    /// §3.3): the metadata must not be used.
    #[error("the authorization server metadata says issuer {found:?}, but it was looked up for {expected:?} (revision {revision})")]
    IssuerMismatch {
        /// The issuer the well-known URL was built from.
        expected: String,
        /// The `issuer` in the document.
        found: String,
        /// The rules applied.
        revision: Revision,
    },
    /// The AS does not advertise PKCE with S256: the client must not proceed.
    #[error("the authorization server does not support PKCE with S256 (code_challenge_methods_supported: {advertised})")]
    PkceNotSupported {
        /// What it advertised (`absent`, or the list).
        advertised: String,
    },
}

/// What a metadata probe's HTTP status means for the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// 2xx: parse and use this document; probe nothing more.
    Use,
    /// 4xx (404 in practice): try the next candidate, if any.
    TryNext,
    /// Anything else: stop discovery with an error. That includes 5xx and a 3xx the driver
    /// chose not to follow (following one for these credential-free GETs is the driver's call).
    Stop,
}

/// The plan's step after a metadata probe answered `status` (oauth.md §1.1, §1.2; the TS SDK).
pub fn probe_status(status: u16) -> Probe {
    match status {
        200..=299 => Probe::Use,
        400..=499 => Probe::TryNext,
        _ => Probe::Stop,
    }
}

const PRM_SUFFIX: &str = "/.well-known/oauth-protected-resource";
const RFC8414_SUFFIX: &str = "/.well-known/oauth-authorization-server";
const OIDC_SUFFIX: &str = "/.well-known/openid-configuration";

/// The origin of an `http(s)` URL, as a URL with path `/`, no credentials, query or fragment.
fn origin_of(url: &Url) -> Option<Url> {
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return None;
    }
    let mut origin = url.clone();
    // Credentials in the server URL are not sent to metadata endpoints.
    let _ = origin.set_username("");
    let _ = origin.set_password(None);
    origin.set_path("/");
    origin.set_query(None);
    origin.set_fragment(None);
    Some(origin)
}

/// `origin` with `path` (already percent-encoded) and `query`.
fn at(origin: &Url, path: &str, query: Option<&str>) -> Url {
    let mut url = origin.clone();
    url.set_path(path);
    url.set_query(query);
    url
}

/// The URL's path without one trailing `/` (`""` for the root).
fn trimmed_path(url: &Url) -> &str {
    let path = url.path();
    path.strip_suffix('/').unwrap_or(path)
}

/// Where to fetch the Protected Resource Metadata for `server_url`, in the order to try.
///
/// - With a `resource_metadata` URL from the `WWW-Authenticate` challenge: that URL **alone**
///   (spec: use it when present; the suite fails a client that also probes the root). It is
///   resolved against the server URL; a blank one, or one that is not `http(s)`, counts as
///   absent.
/// - Otherwise, RFC 9728 §3.1 and the MCP extension: the well-known suffix inserted between
///   the origin and the server's path (one trailing `/` removed; a query is kept, as RFC 9728
///   §3.1 says; the fragment dropped), then the root well-known URL. A server at the root has
///   only the one URL (the root fallback is for path-bearing endpoints).
///
/// Empty for a server URL that is not `http(s)`.
pub fn protected_resource_metadata_urls(
    server_url: &Url,
    from_challenge: Option<&str>,
) -> Vec<Url> {
    if let Some(given) = from_challenge.map(str::trim).filter(|s| !s.is_empty()) {
        if let Ok(mut url) = server_url.join(given) {
            if matches!(url.scheme(), "http" | "https") && url.host().is_some() {
                url.set_fragment(None);
                return vec![url];
            }
        }
    }
    let Some(origin) = origin_of(server_url) else {
        return Vec::new();
    };
    let path = trimmed_path(server_url);
    let query = server_url.query();
    let root = at(&origin, PRM_SUFFIX, None);
    if path.is_empty() {
        return vec![at(&origin, PRM_SUFFIX, query)];
    }
    vec![at(&origin, &format!("{PRM_SUFFIX}{path}"), query), root]
}

/// Parses and checks an authorization server identifier (an entry of the PRM's
/// `authorization_servers`): an `http(s)` URL with a host and no query or fragment (RFC 8414
/// §2). Whether plain `http` is allowed is the caller's policy.
pub fn parse_issuer(issuer: &str) -> Result<Url, DiscoveryError> {
    let invalid = |reason| DiscoveryError::InvalidIssuer {
        issuer: issuer.to_owned(),
        reason,
    };
    let url = Url::parse(issuer).map_err(|_| invalid("not a URL"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(invalid("not an http(s) URL with a host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("has a query or fragment"));
    }
    Ok(url)
}

/// Where to fetch the metadata of the authorization server `issuer`, in the order to try
/// (the MCP spec's list, from RFC 8414 §3.1 and §5):
///
/// - with a path (`https://as/tenant1`): `/.well-known/oauth-authorization-server/tenant1`,
///   `/.well-known/openid-configuration/tenant1`, `/tenant1/.well-known/openid-configuration`;
///   **never** the root ones (the suite traps them);
/// - without: `/.well-known/oauth-authorization-server`, `/.well-known/openid-configuration`.
///
/// One trailing `/` of the path is removed; query, fragment and credentials are dropped (an
/// issuer has none). Empty for an issuer that is not `http(s)`.
pub fn authorization_server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let Some(origin) = origin_of(issuer) else {
        return Vec::new();
    };
    let path = trimmed_path(issuer);
    if path.is_empty() {
        return vec![
            at(&origin, RFC8414_SUFFIX, None),
            at(&origin, OIDC_SUFFIX, None),
        ];
    }
    vec![
        at(&origin, &format!("{RFC8414_SUFFIX}{path}"), None),
        at(&origin, &format!("{OIDC_SUFFIX}{path}"), None),
        at(&origin, &format!("{path}{OIDC_SUFFIX}"), None),
    ]
}

/// The 2025-03-26 authorization base when no PRM is found: the server URL with its path
/// discarded (its origin). Its metadata URLs are
/// [`authorization_server_metadata_urls`] of it (the two root ones).
pub fn legacy_authorization_base(server_url: &Url) -> Option<Url> {
    origin_of(server_url)
}

/// The 2025-03-26 default endpoints when there is no PRM and no AS metadata:
/// `<origin>/authorize`, `<origin>/token`, `<origin>/register`, in that order.
///
/// A server URL that is not `http(s)` keeps its own scheme and host (there is nothing better).
pub fn legacy_fallback_endpoints(server_url: &Url) -> (Url, Url, Url) {
    let origin = origin_of(server_url).unwrap_or_else(|| server_url.clone());
    (
        at(&origin, "/authorize", None),
        at(&origin, "/token", None),
        at(&origin, "/register", None),
    )
}

/// The RFC 8707 `resource` for a server without PRM (the legacy path): the server URL
/// without fragment, and without the `/` the URL parser adds to an empty path (the spec's
/// SHOULD). With PRM, send the PRM's `resource` verbatim instead.
pub fn canonical_resource(server_url: &Url) -> String {
    let mut url = server_url.clone();
    url.set_fragment(None);
    let text = url.to_string();
    if url.path() == "/" && url.query().is_none() {
        if let Some(stripped) = text.strip_suffix('/') {
            return stripped.to_owned();
        }
    }
    text
}

/// A boolean field that tolerates `null` and `"true"`/`"false"` (absent is `false`).
fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Bool(b) => b,
        Value::String(s) => s.eq_ignore_ascii_case("true"),
        _ => false,
    })
}

/// OAuth 2.0 Protected Resource Metadata (RFC 9728 §2); unknown fields are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtectedResourceMetadata {
    /// The resource identifier, kept verbatim: it is sent as the RFC 8707 `resource`.
    pub resource: String,
    /// The authorization servers' issuer identifiers (MCP: at least one).
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource uses (the scope choice when the challenge names none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How a bearer token may be sent (`header`, `body`, `query`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    /// The resource's JWK Set URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// Documentation for developers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_documentation: Option<String>,
    /// Whether tokens must be DPoP-bound (RFC 9449).
    #[serde(
        default,
        deserialize_with = "flag",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub dpop_bound_access_tokens_required: bool,
    /// Every other field, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ProtectedResourceMetadata {
    /// Parses a PRM response body; it must have a non-empty `resource` and at least one
    /// authorization server (MCP: **MUST**).
    pub fn from_json(body: &[u8]) -> Result<Self, DiscoveryError> {
        let malformed = |reason: String| DiscoveryError::Malformed {
            document: "protected resource metadata",
            reason,
        };
        let prm: Self = serde_json::from_slice(body).map_err(|e| malformed(e.to_string()))?;
        if prm.resource.is_empty() {
            return Err(malformed("empty `resource`".into()));
        }
        if prm.authorization_servers.iter().all(|s| s.is_empty()) {
            return Err(DiscoveryError::NoAuthorizationServers);
        }
        Ok(prm)
    }

    /// The authorization server to use by default: the first one listed (RFC 9728 §7.6 leaves
    /// the choice to the client).
    pub fn authorization_server(&self) -> Option<&str> {
        self.authorization_servers
            .iter()
            .map(String::as_str)
            .find(|s| !s.is_empty())
    }
}

/// Checks that the PRM is for the server being reached (oauth.md §1.1): the `resource` must
/// be a URL without fragment, with the server's scheme, host and port, and a path that is a
/// segment prefix of the server's path (`/` ≈ any, `/mcp` ≈ `/mcp/x`, never `/mc` ≈ `/mcp`);
/// a query in `resource` must equal the server's.
///
/// This is the relaxed rule of draft-mcguinness-oauth-rfc9728bis (the TS SDK's
/// `checkResourceAllowed`) rather than RFC 9728 §3.3's exact match: the suite's
/// `metadata-var2` serves `resource: http://localhost:P` for `http://localhost:P/mcp`. Run it
/// before anything else is done with the PRM; on an error, make no authorization request.
pub fn check_resource(
    metadata: &ProtectedResourceMetadata,
    server_url: &Url,
) -> Result<(), DiscoveryError> {
    let invalid = |reason| DiscoveryError::InvalidResource {
        resource: metadata.resource.clone(),
        reason,
    };
    let resource = Url::parse(&metadata.resource).map_err(|_| invalid("not a URL"))?;
    if resource.fragment().is_some() {
        return Err(invalid("it has a fragment"));
    }
    let mut server = server_url.clone();
    server.set_fragment(None);
    let _ = server.set_username("");
    let _ = server.set_password(None);
    let same_origin = resource.scheme() == server.scheme()
        && resource.host() == server.host()
        && resource.port_or_known_default() == server.port_or_known_default();
    let with_slash = |p: &str| {
        if p.ends_with('/') {
            p.to_owned()
        } else {
            format!("{p}/")
        }
    };
    let path_ok = with_slash(server.path()).starts_with(&with_slash(resource.path()));
    let query_ok = resource.query().is_none() || resource.query() == server.query();
    if same_origin && path_ok && query_ok {
        Ok(())
    } else {
        Err(DiscoveryError::ResourceMismatch {
            resource: metadata.resource.clone(),
            server: server.to_string(),
        })
    }
}

/// OAuth 2.0 Authorization Server Metadata (RFC 8414 §2) or an OpenID Provider configuration;
/// unknown fields are kept in `extra`. Endpoints are kept as sent (parse them when used).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier, verbatim (compared as a string, see [`check_issuer`]).
    pub issuer: String,
    /// Where the user is sent to authorize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where codes, refresh tokens and assertions are exchanged for tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// Dynamic client registration (RFC 7591), if offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// The AS's JWK Set URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// Scopes the AS knows (`offline_access` is requested only when listed here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// `response_type` values (`code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types_supported: Option<Vec<String>>,
    /// Grant types (`authorization_code`, `client_credentials`, jwt-bearer…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// Client authentication methods at the token endpoint (absent: `client_secret_basic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// JWS algorithms for `private_key_jwt` and `client_secret_jwt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// PKCE methods (`S256`); see [`check_pkce`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether the AS accepts Client ID Metadata Document URLs as `client_id`.
    #[serde(
        default,
        deserialize_with = "flag",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub client_id_metadata_document_supported: bool,
    /// Whether authorization responses carry `iss` (RFC 9207 §3).
    #[serde(
        default,
        deserialize_with = "flag",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub authorization_response_iss_parameter_supported: bool,
    /// Every other field, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AuthorizationServerMetadata {
    /// Parses an AS metadata response body; it must have a non-empty `issuer`.
    pub fn from_json(body: &[u8]) -> Result<Self, DiscoveryError> {
        let malformed = |reason: String| DiscoveryError::Malformed {
            document: "authorization server metadata",
            reason,
        };
        let asm: Self = serde_json::from_slice(body).map_err(|e| malformed(e.to_string()))?;
        if asm.issuer.is_empty() {
            return Err(malformed("empty `issuer`".into()));
        }
        Ok(asm)
    }

    /// Whether `scope` is in `scopes_supported`.
    pub fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == scope))
    }
}

/// Checks the metadata's `issuer` against `expected`, the issuer identifier the well-known
/// URL was built from, **as the string it was given in** (the PRM entry; a parsed `Url` would
/// add a `/` to `http://as`):
///
/// - 2026-07-28: identical strings (RFC 8414 §3.3, made explicit by the spec: otherwise the
///   metadata **MUST NOT** be used);
/// - 2025-11-25: RFC 8414 applies by reference only; they must be the same URL once parsed
///   (so `https://as` and `https://as/` pass, another host or path does not);
/// - 2025-03-26 (no PRM): not checked. The suite's legacy AS serves `issuer: <origin>/oauth`
///   from the root (oauth.md §5 trap (a)).
///
/// On a mismatch, stop: the document is not used, and nothing in the spec asks for the next
/// candidate URL to be tried.
pub fn check_issuer(
    metadata: &AuthorizationServerMetadata,
    expected: &str,
    revision: Revision,
) -> Result<(), DiscoveryError> {
    let same = match revision {
        Revision::V2025_03_26 => true,
        Revision::V2025_11_25 => {
            metadata.issuer == expected
                || matches!(
                    (Url::parse(&metadata.issuer), Url::parse(expected)),
                    (Ok(a), Ok(b)) if a == b
                )
        }
        Revision::V2026_07_28 => metadata.issuer == expected,
    };
    if same {
        Ok(())
    } else {
        Err(DiscoveryError::IssuerMismatch {
            expected: expected.to_owned(),
            found: metadata.issuer.clone(),
            revision,
        })
    }
}

/// Whether the metadata lists PKCE method `S256`.
pub fn pkce_supported(metadata: &AuthorizationServerMetadata) -> bool {
    metadata
        .code_challenge_methods_supported
        .as_ref()
        .is_some_and(|m| m.iter().any(|x| x == "S256"))
}

/// The PKCE gate (oauth.md §1.2, §1.12, §5 trap (b)); S256 is always sent.
///
/// - No metadata at all (the 2025-03-26 endpoint fallback): proceed.
/// - 2025-11-25 and 2026-07-28: `code_challenge_methods_supported` must list `S256`; absent
///   means the client **MUST** refuse.
/// - 2025-03-26 with metadata: absent is tolerated (that revision has no gate), but a list
///   without `S256` is refused, since S256 is what will be sent.
pub fn check_pkce(
    metadata: Option<&AuthorizationServerMetadata>,
    revision: Revision,
) -> Result<(), DiscoveryError> {
    let Some(metadata) = metadata else {
        return Ok(());
    };
    if pkce_supported(metadata) {
        return Ok(());
    }
    match &metadata.code_challenge_methods_supported {
        None if revision == Revision::V2025_03_26 => Ok(()),
        None => Err(DiscoveryError::PkceNotSupported {
            advertised: "absent".into(),
        }),
        Some(list) => Err(DiscoveryError::PkceNotSupported {
            advertised: format!("{list:?}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn strs(urls: Vec<Url>) -> Vec<String> {
        urls.into_iter().map(String::from).collect()
    }

    #[test]
    fn prm_uses_the_challenge_url_alone() {
        let server = u("http://localhost:3000/mcp");
        // metadata-default: the header names the path PRM; the root one is a trap.
        let given = "http://localhost:3000/.well-known/oauth-protected-resource/mcp";
        assert_eq!(
            strs(protected_resource_metadata_urls(&server, Some(given))),
            [given]
        );
        // metadata-var3: a custom location, used as is.
        let given = "http://localhost:3000/custom/metadata/location.json";
        assert_eq!(
            strs(protected_resource_metadata_urls(&server, Some(given))),
            [given]
        );
        // Relative: resolved against the server URL; fragment dropped.
        assert_eq!(
            strs(protected_resource_metadata_urls(
                &server,
                Some("/custom/x.json#f")
            )),
            ["http://localhost:3000/custom/x.json"]
        );
        // Blank or not http(s): as if absent.
        for junk in ["", "  ", "mailto:a@b", "data:,x"] {
            assert_eq!(
                strs(protected_resource_metadata_urls(&server, Some(junk))),
                [
                    "http://localhost:3000/.well-known/oauth-protected-resource/mcp",
                    "http://localhost:3000/.well-known/oauth-protected-resource"
                ],
                "{junk:?}"
            );
        }
    }

    #[test]
    fn prm_well_known_order() {
        for (server, expected) in [
            // metadata-var1 / var2: path first, then root.
            (
                "http://localhost:3000/mcp",
                &[
                    "http://localhost:3000/.well-known/oauth-protected-resource/mcp",
                    "http://localhost:3000/.well-known/oauth-protected-resource",
                ][..],
            ),
            // One trailing slash is removed.
            (
                "https://h/mcp/",
                &[
                    "https://h/.well-known/oauth-protected-resource/mcp",
                    "https://h/.well-known/oauth-protected-resource",
                ],
            ),
            (
                "https://h:8443/a/b/mcp",
                &[
                    "https://h:8443/.well-known/oauth-protected-resource/a/b/mcp",
                    "https://h:8443/.well-known/oauth-protected-resource",
                ],
            ),
            // RFC 9728 §3.1 keeps a query (on the path-aware URL); fragment and credentials go.
            (
                "https://u:p@h/mcp?tenant=a#frag",
                &[
                    "https://h/.well-known/oauth-protected-resource/mcp?tenant=a",
                    "https://h/.well-known/oauth-protected-resource",
                ],
            ),
            (
                "https://h/a%20b",
                &[
                    "https://h/.well-known/oauth-protected-resource/a%20b",
                    "https://h/.well-known/oauth-protected-resource",
                ],
            ),
            // A server at the root: one URL, no fallback.
            (
                "https://h",
                &["https://h/.well-known/oauth-protected-resource"],
            ),
            (
                "https://h/",
                &["https://h/.well-known/oauth-protected-resource"],
            ),
            (
                "https://h/?x=1",
                &["https://h/.well-known/oauth-protected-resource?x=1"],
            ),
            // Default ports vanish in the parser, others stay.
            (
                "https://h:443/mcp",
                &[
                    "https://h/.well-known/oauth-protected-resource/mcp",
                    "https://h/.well-known/oauth-protected-resource",
                ],
            ),
        ] {
            assert_eq!(
                strs(protected_resource_metadata_urls(&u(server), None)),
                expected,
                "{server}"
            );
        }
        assert!(protected_resource_metadata_urls(&u("file:///x/mcp"), None).is_empty());
    }

    #[test]
    fn as_metadata_order() {
        let path_ones = [
            "https://as/.well-known/oauth-authorization-server/tenant1",
            "https://as/.well-known/openid-configuration/tenant1",
            "https://as/tenant1/.well-known/openid-configuration",
        ];
        for issuer in [
            "https://as/tenant1",
            "https://as/tenant1/",
            "https://as/tenant1?x=1#f",
        ] {
            let urls = strs(authorization_server_metadata_urls(&u(issuer)));
            assert_eq!(urls, path_ones, "{issuer}");
            // metadata-var2/var3: the root ones are traps.
            assert!(urls
                .iter()
                .all(|x| !x.ends_with("/.well-known/oauth-authorization-server")
                    && x != "https://as/.well-known/openid-configuration"));
        }
        assert_eq!(
            strs(authorization_server_metadata_urls(&u(
                "http://localhost:3001/a/b"
            ))),
            [
                "http://localhost:3001/.well-known/oauth-authorization-server/a/b",
                "http://localhost:3001/.well-known/openid-configuration/a/b",
                "http://localhost:3001/a/b/.well-known/openid-configuration",
            ]
        );
        for issuer in ["http://localhost:3001", "http://localhost:3001/"] {
            assert_eq!(
                strs(authorization_server_metadata_urls(&u(issuer))),
                [
                    "http://localhost:3001/.well-known/oauth-authorization-server",
                    "http://localhost:3001/.well-known/openid-configuration",
                ]
            );
        }
        assert!(authorization_server_metadata_urls(&u("urn:x:y")).is_empty());
    }

    #[test]
    fn issuer_identifiers() {
        assert_eq!(
            parse_issuer("http://localhost:3001").unwrap().as_str(),
            "http://localhost:3001/"
        );
        assert!(parse_issuer("https://as/tenant1").is_ok());
        for bad in [
            "as.example.com",
            "ftp://as",
            "https://as?x=1",
            "https://as#f",
            "",
        ] {
            assert!(
                matches!(parse_issuer(bad), Err(DiscoveryError::InvalidIssuer { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn probe_statuses() {
        assert_eq!(probe_status(200), Probe::Use);
        assert_eq!(probe_status(203), Probe::Use);
        assert_eq!(probe_status(404), Probe::TryNext);
        assert_eq!(probe_status(401), Probe::TryNext);
        assert_eq!(probe_status(500), Probe::Stop);
        assert_eq!(probe_status(503), Probe::Stop);
        assert_eq!(probe_status(302), Probe::Stop);
        assert_eq!(probe_status(0), Probe::Stop);
    }

    fn prm(resource: &str) -> ProtectedResourceMetadata {
        ProtectedResourceMetadata::from_json(
            serde_json::json!({"resource": resource, "authorization_servers": ["https://as"]})
                .to_string()
                .as_bytes(),
        )
        .unwrap()
    }

    #[test]
    fn resource_match() {
        let server = u("http://localhost:3000/mcp");
        for ok in [
            "http://localhost:3000/mcp",
            "http://localhost:3000/mcp/",
            "http://localhost:3000",
            "http://localhost:3000/",
            "HTTP://LOCALHOST:3000/mcp",
        ] {
            assert_eq!(check_resource(&prm(ok), &server), Ok(()), "{ok}");
        }
        assert_eq!(
            check_resource(
                &prm("http://localhost:3000/mcp"),
                &u("http://localhost:3000/mcp/")
            ),
            Ok(())
        );
        assert_eq!(
            check_resource(&prm("https://h:443/a"), &u("https://h/a/b/mcp")),
            Ok(())
        );
        // resource-mismatch: another origin.
        let err = check_resource(&prm("https://evil.example.com/mcp"), &server).unwrap_err();
        assert_eq!(
            err,
            DiscoveryError::ResourceMismatch {
                resource: "https://evil.example.com/mcp".into(),
                server: "http://localhost:3000/mcp".into()
            }
        );
        assert!(err.to_string().contains("evil.example.com"));
        for bad in [
            "https://localhost:3000/mcp",
            "http://localhost:3001/mcp",
            "http://127.0.0.1:3000/mcp",
            "http://localhost:3000/mc",
            "http://localhost:3000/mcp/x",
            "http://localhost:3000/other",
        ] {
            assert!(
                matches!(
                    check_resource(&prm(bad), &server),
                    Err(DiscoveryError::ResourceMismatch { .. })
                ),
                "{bad}"
            );
        }
        for bad in ["not a url", "http://localhost:3000/mcp#frag"] {
            assert!(
                matches!(
                    check_resource(&prm(bad), &server),
                    Err(DiscoveryError::InvalidResource { .. })
                ),
                "{bad}"
            );
        }
        // Queries: a resource with one needs the same; without one, any.
        let server = u("https://h/mcp?t=a");
        assert_eq!(check_resource(&prm("https://h/mcp?t=a"), &server), Ok(()));
        assert_eq!(check_resource(&prm("https://h/mcp"), &server), Ok(()));
        assert!(check_resource(&prm("https://h/mcp?t=b"), &server).is_err());
        // Credentials and fragments of the server URL play no part.
        assert_eq!(
            check_resource(&prm("https://h/mcp"), &u("https://u:p@h/mcp#x")),
            Ok(())
        );
    }

    #[test]
    fn prm_parsing_keeps_unknown_fields() {
        let body = br#"{
            "resource": "http://localhost:3000/mcp",
            "authorization_servers": ["http://localhost:3001", "https://other"],
            "scopes_supported": ["mcp:basic", "mcp:read"],
            "bearer_methods_supported": ["header"],
            "resource_name": "Test",
            "dpop_bound_access_tokens_required": null,
            "x_custom": {"nested": [1, 2, {"a": null}]}
        }"#;
        let m = ProtectedResourceMetadata::from_json(body).unwrap();
        assert_eq!(m.resource, "http://localhost:3000/mcp");
        assert_eq!(m.authorization_server(), Some("http://localhost:3001"));
        assert_eq!(
            m.scopes_supported.as_deref().unwrap(),
            ["mcp:basic", "mcp:read"]
        );
        assert!(!m.dpop_bound_access_tokens_required);
        assert_eq!(m.extra["x_custom"]["nested"][2]["a"], Value::Null);
        assert_eq!(m.extra.len(), 1);
        let back: ProtectedResourceMetadata =
            serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);

        // The resource is kept verbatim (no `/` added).
        assert_eq!(
            prm("http://localhost:3000").resource,
            "http://localhost:3000"
        );

        for (body, why) in [
            (&br#"{"resource": "https://h/mcp"}"#[..], "no servers"),
            (
                br#"{"resource": "https://h/mcp", "authorization_servers": []}"#,
                "no servers",
            ),
            (
                br#"{"resource": "https://h/mcp", "authorization_servers": [""]}"#,
                "no servers",
            ),
        ] {
            assert_eq!(
                ProtectedResourceMetadata::from_json(body),
                Err(DiscoveryError::NoAuthorizationServers),
                "{why}"
            );
        }
        for body in [
            &br#"{"authorization_servers": ["https://as"]}"#[..],
            br#"{"resource": "", "authorization_servers": ["https://as"]}"#,
            br#"{"resource": 7, "authorization_servers": ["https://as"]}"#,
            br#"{"resource": "https://h", "authorization_servers": "https://as"}"#,
            br#"[]"#,
            b"",
            b"<html>not found</html>",
            b"\xff\xfe",
        ] {
            assert!(
                matches!(
                    ProtectedResourceMetadata::from_json(body),
                    Err(DiscoveryError::Malformed { .. })
                ),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    fn asm(extra: serde_json::Value) -> AuthorizationServerMetadata {
        let mut doc = serde_json::json!({
            "issuer": "http://localhost:3001",
            "authorization_endpoint": "http://localhost:3001/authorize",
            "token_endpoint": "http://localhost:3001/token",
            "registration_endpoint": "http://localhost:3001/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none"],
        });
        for (k, v) in extra.as_object().unwrap() {
            doc[k] = v.clone();
        }
        AuthorizationServerMetadata::from_json(doc.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn as_metadata_parsing() {
        let m = asm(serde_json::json!({
            "code_challenge_methods_supported": ["S256"],
            "client_id_metadata_document_supported": true,
            "authorization_response_iss_parameter_supported": "true",
            "scopes_supported": ["mcp:basic", "offline_access"],
            "jwks_uri": "http://localhost:3001/jwks",
            "subject_types_supported": ["public"],
            "authorization_grant_profiles_supported": ["urn:ietf:params:oauth:grant-profile:id-jag"]
        }));
        assert_eq!(m.issuer, "http://localhost:3001");
        assert_eq!(
            m.token_endpoint.as_deref(),
            Some("http://localhost:3001/token")
        );
        assert!(m.client_id_metadata_document_supported);
        assert!(m.authorization_response_iss_parameter_supported);
        assert!(m.supports_scope("offline_access"));
        assert!(!m.supports_scope("mcp:read"));
        assert!(pkce_supported(&m));
        assert_eq!(m.extra["subject_types_supported"][0], "public");
        assert_eq!(m.extra.len(), 2);
        let back: AuthorizationServerMetadata =
            serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);

        let m = asm(serde_json::json!({"client_id_metadata_document_supported": null}));
        assert!(!m.client_id_metadata_document_supported);
        assert!(!m.authorization_response_iss_parameter_supported);
        assert!(!m.supports_scope("offline_access"));

        for body in [
            &br#"{"token_endpoint": "https://as/token"}"#[..],
            br#"{"issuer": ""}"#,
            br#"{"issuer": null}"#,
            br#"{"issuer": "https://as", "scopes_supported": [1]}"#,
            b"null",
        ] {
            assert!(
                matches!(
                    AuthorizationServerMetadata::from_json(body),
                    Err(DiscoveryError::Malformed { .. })
                ),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn issuer_rules_per_revision() {
        let m = asm(serde_json::json!({}));
        let origin = "http://localhost:3001";
        for r in [
            Revision::V2025_03_26,
            Revision::V2025_11_25,
            Revision::V2026_07_28,
        ] {
            assert_eq!(check_issuer(&m, origin, r), Ok(()), "{r}");
        }
        // 2026-07-28: identical strings only; the URL parser's `/` is a mismatch.
        let parsed = Url::parse(origin).unwrap();
        let err = check_issuer(&m, parsed.as_str(), Revision::V2026_07_28).unwrap_err();
        assert_eq!(
            err,
            DiscoveryError::IssuerMismatch {
                expected: "http://localhost:3001/".into(),
                found: origin.into(),
                revision: Revision::V2026_07_28
            }
        );
        assert!(check_issuer(&m, "HTTP://localhost:3001", Revision::V2026_07_28).is_err());
        assert!(check_issuer(&m, "http://localhost:3001:80", Revision::V2026_07_28).is_err());
        // 2025-11-25: the same URL once parsed.
        assert_eq!(
            check_issuer(&m, parsed.as_str(), Revision::V2025_11_25),
            Ok(())
        );
        assert_eq!(
            check_issuer(&m, "HTTP://LOCALHOST:3001", Revision::V2025_11_25),
            Ok(())
        );
        // metadata-issuer-mismatch: another issuer is refused from 2025-11-25 on.
        let attacker = asm(serde_json::json!({"issuer": "https://attacker.example.com"}));
        for r in [Revision::V2025_11_25, Revision::V2026_07_28] {
            assert!(check_issuer(&attacker, origin, r).is_err(), "{r}");
        }
        let tenant = asm(serde_json::json!({"issuer": "http://localhost:3001/tenant2"}));
        assert!(check_issuer(
            &tenant,
            "http://localhost:3001/tenant1",
            Revision::V2025_11_25
        )
        .is_err());
        // Trap (a): the 0.1.16 legacy mock serves `<origin>/oauth` from the root.
        let legacy = asm(serde_json::json!({"issuer": "http://localhost:3000/oauth"}));
        assert_eq!(
            check_issuer(&legacy, "http://localhost:3000", Revision::V2025_03_26),
            Ok(())
        );
        assert!(check_issuer(&legacy, "http://localhost:3000", Revision::V2025_11_25).is_err());
    }

    #[test]
    fn pkce_gate() {
        let with = asm(serde_json::json!({"code_challenge_methods_supported": ["plain", "S256"]}));
        let without = asm(serde_json::json!({}));
        let plain = asm(serde_json::json!({"code_challenge_methods_supported": ["plain"]}));
        assert!(pkce_supported(&with));
        assert!(!pkce_supported(&without));
        assert!(!pkce_supported(&plain));
        for r in [
            Revision::V2025_03_26,
            Revision::V2025_11_25,
            Revision::V2026_07_28,
        ] {
            // Trap (b): no metadata at all (endpoint fallback) proceeds.
            assert_eq!(check_pkce(None, r), Ok(()));
            assert_eq!(check_pkce(Some(&with), r), Ok(()));
            assert!(check_pkce(Some(&plain), r).is_err());
        }
        assert_eq!(check_pkce(Some(&without), Revision::V2025_03_26), Ok(()));
        for r in [Revision::V2025_11_25, Revision::V2026_07_28] {
            let err = check_pkce(Some(&without), r).unwrap_err();
            assert!(err.to_string().contains("absent"), "{err}");
        }
    }

    #[test]
    fn revisions() {
        for (v, r) in [
            ("2024-11-05", Some(Revision::V2025_03_26)),
            ("2025-03-26", Some(Revision::V2025_03_26)),
            ("2025-06-18", Some(Revision::V2025_11_25)),
            ("2025-11-25", Some(Revision::V2025_11_25)),
            ("2026-07-28", Some(Revision::V2026_07_28)),
            ("2027-01-01", Some(Revision::V2026_07_28)),
            ("draft", None),
            ("2025-1-25", None),
            ("2025/11/25", None),
            ("", None),
        ] {
            assert_eq!(Revision::from_protocol_version(v), r, "{v}");
        }
        assert_eq!(Revision::V2025_11_25.to_string(), "2025-11-25");
        assert!(Revision::V2025_03_26 < Revision::V2026_07_28);
    }

    #[test]
    fn legacy_path() {
        let server = u("http://localhost:3000/mcp?x=1#f");
        let (authorize, token, register) = legacy_fallback_endpoints(&server);
        assert_eq!(authorize.as_str(), "http://localhost:3000/authorize");
        assert_eq!(token.as_str(), "http://localhost:3000/token");
        assert_eq!(register.as_str(), "http://localhost:3000/register");
        let base = legacy_authorization_base(&server).unwrap();
        assert_eq!(base.as_str(), "http://localhost:3000/");
        assert_eq!(
            strs(authorization_server_metadata_urls(&base)),
            [
                "http://localhost:3000/.well-known/oauth-authorization-server",
                "http://localhost:3000/.well-known/openid-configuration"
            ]
        );
        assert!(legacy_authorization_base(&u("file:///x")).is_none());
        let (a, _, _) = legacy_fallback_endpoints(&u("https://u:p@h:8443/a/b"));
        assert_eq!(a.as_str(), "https://h:8443/authorize");
    }

    #[test]
    fn canonical_resources() {
        for (server, resource) in [
            ("http://localhost:3000/mcp", "http://localhost:3000/mcp"),
            ("https://h", "https://h"),
            ("https://h/", "https://h"),
            ("https://h:8443", "https://h:8443"),
            ("https://h/mcp/", "https://h/mcp/"),
            ("https://h/mcp#frag", "https://h/mcp"),
            ("https://h/?q=1", "https://h/?q=1"),
        ] {
            assert_eq!(canonical_resource(&u(server)), resource, "{server}");
        }
    }

    #[test]
    fn hostile_json_is_refused_without_panic() {
        let deep = "[".repeat(100_000);
        let deep_obj = format!(
            r#"{{"resource": "https://h", "authorization_servers": ["https://as"], "x": {}}}"#,
            "[".repeat(50_000)
        );
        let nested_ok = format!(
            r#"{{"issuer": "https://as", "x": {}1{}}}"#,
            "[".repeat(100),
            "]".repeat(100)
        );
        for body in [
            deep.as_str(),
            &deep_obj,
            r#"{"resource": "\ud800"}"#,
            "1e999999",
        ] {
            assert!(ProtectedResourceMetadata::from_json(body.as_bytes()).is_err());
            assert!(AuthorizationServerMetadata::from_json(body.as_bytes()).is_err());
        }
        assert!(AuthorizationServerMetadata::from_json(nested_ok.as_bytes()).is_ok());
    }

    proptest! {
        #[test]
        fn metadata_parsers_never_panic(body in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = ProtectedResourceMetadata::from_json(&body);
            let _ = AuthorizationServerMetadata::from_json(&body);
        }

        #[test]
        fn planners_never_panic(s in "[a-z:/?#%@.\\[\\]0-9]{0,40}", h in any::<Option<String>>()) {
            if let Ok(url) = Url::parse(&s) {
                let prm_urls = protected_resource_metadata_urls(&url, h.as_deref());
                prop_assert!(prm_urls.len() <= 2);
                prop_assert!(authorization_server_metadata_urls(&url).len() <= 3);
                let _ = legacy_fallback_endpoints(&url);
                let _ = canonical_resource(&url);
                let _ = check_resource(&prm("https://h/mcp"), &url);
            }
            let _ = parse_issuer(&s);
        }
    }
}
