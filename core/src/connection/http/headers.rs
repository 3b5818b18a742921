//! The headers of our requests: the transport's own (Accept, the session, the negotiated
//! version) and the configured ones, which never duplicate or replace the transport's.

use std::collections::BTreeMap;

/// Headers the transport always sets itself (with every `Mcp-Param-*`): a configured one of
/// these names is left out.
const OURS: [&str; 6] = [
    "accept",
    "content-type",
    "mcp-protocol-version",
    "last-event-id",
    "mcp-method",
    "mcp-name",
];

/// The configured headers (for example `Authorization`), in order, and the token's
/// `Authorization` once authorization gave one (it replaces a configured one).
#[derive(Clone, Default)]
pub(crate) struct Headers {
    configured: Vec<(String, String)>,
    authorization: Option<String>,
    /// Whether the configured headers name a `User-Agent` (it wins over ours).
    user_agent: bool,
}

impl std::fmt::Debug for Headers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values may be secrets: only the names show.
        let names: Vec<&str> = self.configured.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("Headers")
            .field("configured", &names)
            .field("token", &self.authorization.as_ref().map(|_| "***"))
            .finish()
    }
}

impl Headers {
    /// The headers a server entry configures.
    pub(crate) fn new(configured: &BTreeMap<String, String>) -> Self {
        Headers {
            configured: configured
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            authorization: None,
            user_agent: configured
                .keys()
                .any(|k| k.eq_ignore_ascii_case("user-agent")),
        }
    }

    /// Whether requests carry the `Authorization` header of the configuration (no token of
    /// an authorization in its place).
    pub(crate) fn sends_configured_token(&self) -> bool {
        self.authorization.is_none()
            && self
                .configured
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    }

    /// Why a response of `status` refused a request, in words: the token of the configuration
    /// refused (a `401` to a request that carried it), or the status alone.
    pub(crate) fn status_reason(
        &self,
        status: Option<u16>,
        challenge: Option<&crate::error::AuthChallenge>,
    ) -> String {
        match status {
            Some(401) if self.sends_configured_token() => crate::error::refused_token(challenge),
            _ => "unexpected status".into(),
        }
    }

    /// Sets the `Authorization` value every request carries from now on.
    pub(crate) fn set_authorization(&mut self, value: Option<String>) {
        self.authorization = value;
    }

    /// The headers of a request: `Accept` (SSE only for a GET), the session, the negotiated
    /// version, then the configured ones.
    pub(crate) fn request(
        &self,
        accept_sse_only: bool,
        session: Option<&str>,
        version: Option<&str>,
    ) -> Vec<(String, String)> {
        // Room for ours, the token, `Content-Type` and the stateless era's three.
        let mut h = Vec::with_capacity(self.configured.len() + 9);
        let accept = if accept_sse_only {
            "text/event-stream"
        } else {
            "application/json, text/event-stream"
        };
        h.push(("Accept".into(), accept.into()));
        if let Some(s) = session {
            h.push(("Mcp-Session-Id".into(), s.to_owned()));
        }
        if let Some(v) = version {
            h.push(("MCP-Protocol-Version".into(), v.to_owned()));
        }
        self.extend(&mut h, session.is_some());
        h
    }

    /// Adds `User-Agent: mcpwire/<version>` unless one is configured, then the configured
    /// headers, except those the transport itself sets: `Accept`,
    /// `Content-Type`, the version and `Last-Event-ID` are always ours, and a configured
    /// `Mcp-Session-Id` goes only until the server assigns a session of its own (`own_session`),
    /// so no header ever goes twice.
    pub(crate) fn extend(&self, h: &mut Vec<(String, String)>, own_session: bool) {
        let token = self.authorization.as_ref();
        if let Some(value) = token {
            h.push(("Authorization".into(), value.clone()));
        }
        if !self.user_agent {
            h.push(("User-Agent".into(), crate::header::USER_AGENT.into()));
        }
        h.extend(
            self.configured
                .iter()
                .filter(|(k, _)| !OURS.iter().any(|o| k.eq_ignore_ascii_case(o)))
                .filter(|(k, _)| !k.to_ascii_lowercase().starts_with("mcp-param-"))
                .filter(|(k, _)| !(own_session && k.eq_ignore_ascii_case("mcp-session-id")))
                .filter(|(k, _)| !(token.is_some() && k.eq_ignore_ascii_case("authorization")))
                .cloned(),
        );
    }
}
