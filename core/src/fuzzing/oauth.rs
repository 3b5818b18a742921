//! The OAuth parsers and planners over hostile input: `WWW-Authenticate` headers, metadata
//! documents, token and registration responses, redirect locations and server URLs. None may
//! panic; what they give back keeps its promises (lower-case parameter names, plans only of
//! http(s) URLs without fragments, secrets absent from `Debug`).

use std::time::Duration;

use url::Url;

use crate::oauth::challenge::parse_challenges;
use crate::oauth::discovery::Revision;
use crate::oauth::discovery::{
    authorization_server_metadata_urls, check_resource, protected_resource_metadata_urls,
    AuthorizationServerMetadata, ProtectedResourceMetadata,
};
use crate::oauth::flow::{FlowConfig, FlowOutput, OAuthFlow};
use crate::oauth::pkce::callback_params;
use crate::oauth::register::parse_registration;
use crate::oauth::token::parse_token_response;

/// A secret the fuzzer cannot guess, planted in token responses to check `Debug`.
const PLANTED: &str = "planted-secret-7f3a";

/// OAuth: the first byte picks a part; the rest is its input.
pub fn oauth(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    if which % 8 >= 6 {
        return flow(rest);
    }
    match which % 6 {
        0 => {
            let lines: Vec<&str> = text.split('\n').collect();
            for c in parse_challenges(&lines) {
                for (name, _) in &c.params {
                    assert_eq!(name, &name.to_ascii_lowercase(), "a name kept its case");
                }
                let _ = (c.scope(), c.resource_metadata(), c.error());
            }
        }
        1 => {
            let (server, challenge) = text.split_once('\n').unwrap_or((&text, ""));
            if let Ok(server) = Url::parse(server) {
                let given = (!challenge.is_empty()).then_some(challenge);
                for u in protected_resource_metadata_urls(&server, given) {
                    assert!(matches!(u.scheme(), "http" | "https"), "{u}");
                    assert!(u.fragment().is_none(), "{u}");
                }
                for u in authorization_server_metadata_urls(&server) {
                    assert!(u.fragment().is_none() && u.query().is_none(), "{u}");
                }
            }
        }
        2 => {
            if let Ok(prm) = ProtectedResourceMetadata::from_json(rest) {
                let server = Url::parse("https://mcp.example/mcp").expect("valid");
                let _ = check_resource(&prm, &server);
            }
            let _ = AuthorizationServerMetadata::from_json(rest);
        }
        3 => {
            for status in [200u16, 400] {
                let _ = parse_token_response(status, rest, u64::MAX / 2);
            }
            // A planted access token never shows in `Debug`, whatever surrounds it.
            let body = format!(
                "{{\"access_token\":\"{PLANTED}\",\"token_type\":\"bearer\",\"x\":{}}}",
                serde_json::Value::String(text.into_owned())
            );
            if let Ok(tokens) = parse_token_response(200, body.as_bytes(), 0) {
                let shown = format!("{tokens:?}");
                assert!(!shown.contains(PLANTED), "a token in Debug: {shown}");
            }
        }
        4 => {
            let _ = parse_registration(201, rest);
        }
        _ => {
            let _ = callback_params(&text);
        }
    }
}

/// Canned bodies the flow's requests are answered with (picked by the input), so that the
/// fuzzer reaches the later steps; the input's own bytes are answers too.
const BODIES: [&str; 6] = [
    r#"{"resource":"http://localhost:3000/mcp","authorization_servers":["http://localhost:4000"],"scopes_supported":["a","b"]}"#,
    r#"{"issuer":"http://localhost:4000","authorization_endpoint":"http://localhost:4000/authorize","token_endpoint":"http://localhost:4000/token","registration_endpoint":"http://localhost:4000/register","code_challenge_methods_supported":["S256"]}"#,
    r#"{"client_id":"c","client_secret":"s"}"#,
    r#"{"access_token":"planted-secret-7f3a","token_type":"Bearer","expires_in":60,"refresh_token":"r"}"#,
    r#"{"error":"invalid_grant"}"#,
    "",
];

/// The whole authorization flow, its responses, redirects, failures and time chosen by the
/// input: no panic, an end reached within the input, nothing after the end, no deadline left
/// behind a timeout, no token in `Debug`.
fn flow(data: &[u8]) {
    let epoch = std::time::Instant::now();
    let mut input = data.iter().copied();
    let revision = match input.next().unwrap_or(0) % 3 {
        0 => Revision::V2025_03_26,
        1 => Revision::V2025_11_25,
        _ => Revision::V2026_07_28,
    };
    let server = Url::parse("http://localhost:3000/mcp").expect("valid");
    let config = FlowConfig::new(server, revision, "fuzz", "http://127.0.0.1:1/cb");
    let challenge = r#"Bearer resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp", scope="a""#;
    let mut flow = OAuthFlow::start(epoch, config, &[challenge], &[7u8; 48]);
    let mut now = epoch;
    let mut ended = false;
    let mut pending: Option<u64> = None;
    let mut authorize: Option<Url> = None;
    for _ in 0..64 {
        while let Some(out) = flow.poll_output() {
            assert!(!ended, "an output after the end: {out:?}");
            let shown = format!("{out:?}");
            assert!(!shown.contains(PLANTED), "a token in Debug: {shown}");
            match out {
                FlowOutput::Http { exchange, .. } => pending = Some(exchange),
                FlowOutput::Authorize { url } => authorize = Some(url),
                FlowOutput::Done(_) | FlowOutput::Failed(_) => ended = true,
            }
        }
        assert!(
            !format!("{flow:?}").contains(PLANTED),
            "a token in the flow's Debug"
        );
        let Some(op) = input.next() else { break };
        match op % 5 {
            0 | 1 => {
                if let Some(exchange) = pending.take() {
                    let status = [200u16, 201, 404, 400, 500][usize::from(op / 5) % 5];
                    let pick = usize::from(input.next().unwrap_or(0));
                    let own: Vec<u8> = input.by_ref().take(pick % 64).collect();
                    let body = match pick % 8 {
                        n if n < BODIES.len() => BODIES[n].as_bytes(),
                        _ => &own,
                    };
                    flow.handle_response(now, exchange, status, &[], body, 1_800_000_000);
                }
            }
            2 => {
                if let Some(url) = authorize.take() {
                    let state = url
                        .query_pairs()
                        .find(|(k, _)| k == "state")
                        .map(|(_, v)| v.into_owned())
                        .unwrap_or_default();
                    let location = match op / 5 % 3 {
                        0 => format!("http://127.0.0.1:1/cb?code=x&state={state}"),
                        1 => format!(
                            "http://127.0.0.1:1/cb?code=x&state={state}&iss=http%3A%2F%2Fevil"
                        ),
                        _ => "http://127.0.0.1:1/cb?error=access_denied".to_owned(),
                    };
                    let _ = flow.handle_redirect(now, &location);
                }
            }
            3 => {
                if let Some(exchange) = pending.take() {
                    flow.handle_failure(now, exchange, "refused");
                }
            }
            _ => {
                now += Duration::from_secs(u64::from(op / 5));
                flow.handle_timeout(now);
                assert!(
                    flow.poll_timeout().is_none_or(|t| t > now),
                    "a deadline <= now stayed armed"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::oauth;
    use crate::test_support::Rng;

    #[test]
    fn oauth_takes_fixed_and_pseudo_random_inputs() {
        for data in [
            &b""[..],
            b"\x00Bearer resource_metadata=\"https://x/.well-known/oauth-protected-resource\", scope=\"a b\"",
            b"\x01https://mcp.example/mcp?x=1\n/.well-known/oauth-protected-resource/mcp",
            b"\x02{\"resource\":\"https://mcp.example\",\"authorization_servers\":[\"https://as\"]}",
            b"\x03{\"access_token\":\"t\",\"expires_in\":\"1e999\"}",
            b"\x04{\"client_id\":\"c\",\"client_secret\":\"\"}",
            b"\x05https://app/cb?code=c&state=s&iss=https%3A%2F%2Fas",
        ] {
            oauth(data);
        }
        let mut rng = Rng(23);
        let alphabet = b"Bearer =,\"\\{}[]:/?#&%ab scope error_ https://x.y resource\n";
        for _ in 0..3_000 {
            let len = rng.below(120) as usize;
            let mut data = vec![rng.below(6) as u8];
            data.extend((0..len).map(|_| alphabet[rng.below(alphabet.len() as u64) as usize]));
            oauth(&data);
        }
    }
}
