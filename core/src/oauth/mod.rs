//! OAuth 2.1 for MCP servers, sans IO: what a client must parse, plan, build and check to reach
//! a server that answers `401` (the flow of the 2025-11-25 and 2026-07-28 authorization specs).
//! No IO, no clock, no randomness: time and random bytes are inputs.
//!
//! The parts, each pure and tested on its own: [`challenge`] (`WWW-Authenticate`, RFC 9110),
//! [`discovery`] (where Protected Resource Metadata and authorization-server metadata are
//! looked for, in order, and how they are checked), [`pkce`] (S256 and `state`), [`register`]
//! (dynamic client registration), [`token`] (token requests and responses, expiry), [`jwt`]
//! (ES256 JWTs the client signs: `private_key_jwt` assertions), [`dpop`] (proofs of possession,
//! RFC 9449), [`grants`] (the extensions' grants, with no user: client credentials,
//! enterprise-managed authorization, workload identity).
//! [`flow`] puts them together: the whole flow as a sans-IO state machine ([`flow::OAuthFlow`]).

pub mod challenge;
pub mod discovery;
pub mod dpop;
pub mod flow;
pub mod grants;
pub mod jwt;
pub mod pkce;
pub mod register;
pub mod token;
