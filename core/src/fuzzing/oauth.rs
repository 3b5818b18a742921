//! The OAuth parsers and planners over hostile input: `WWW-Authenticate` headers, metadata
//! documents, token and registration responses, redirect locations and server URLs. None may
//! panic; what they give back keeps its promises (lower-case parameter names, plans only of
//! http(s) URLs without fragments, secrets absent from `Debug`).

use url::Url;

use crate::oauth::challenge::parse_challenges;
use crate::oauth::discovery::{
    authorization_server_metadata_urls, check_resource, protected_resource_metadata_urls,
    AuthorizationServerMetadata, ProtectedResourceMetadata,
};
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
