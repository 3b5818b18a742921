//! DPoP (RFC 9449): proofs of possession of the client's key, one per HTTP request, so that a
//! token bound to that key is of no use to anyone else.
//!
//! A proof is an ES256 JWT with `typ` `dpop+jwt` and the public key (`jwk`) in its header, and
//! claims `jti` (unique per request), `htm` (the method), `htu` (the URL without query and
//! fragment), `iat`, and, when it goes with an access token, `ath` (the token's SHA-256,
//! base64url); a server may demand a `nonce` it hands out in a `DPoP-Nonce` header (RFC 9449 §8,
//! §9), after which the request is made again, once, with it.
//!
//! Time and randomness are inputs: the Unix time and the `jti` come from the caller.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use url::Url;

use super::jwt::Es256Key;

/// The error code of a server that wants a (new) nonce in the proof (RFC 9449 §8, §9).
pub const USE_DPOP_NONCE: &str = "use_dpop_nonce";

/// What a proof is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProofTarget<'a> {
    /// The HTTP method (`POST`, `GET`, …).
    pub method: &'a str,
    /// The request URL (its query and fragment are left out of `htu`).
    pub url: &'a Url,
}

/// `htu`: the URL without its query and fragment (RFC 9449 §4.2).
pub fn htu(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// `ath`: the access token's SHA-256, base64url without padding (RFC 9449 §4.2).
pub fn ath(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(access_token.as_bytes()))
}

/// A DPoP proof for one request, signed with `key` at Unix time `unix_now` with `jti` (unique
/// per proof): `ath` when the request carries `access_token`, `nonce` when the server gave one.
pub fn proof(
    key: &Es256Key,
    target: ProofTarget<'_>,
    unix_now: u64,
    jti: &str,
    access_token: Option<&str>,
    nonce: Option<&str>,
) -> String {
    let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": key.public_jwk()});
    let mut claims = json!({
        "jti": jti,
        "htm": target.method,
        "htu": htu(target.url),
        "iat": unix_now,
    });
    if let Value::Object(members) = &mut claims {
        if let Some(token) = access_token {
            members.insert("ath".into(), Value::String(ath(token)));
        }
        if let Some(nonce) = nonce {
            members.insert("nonce".into(), Value::String(nonce.to_owned()));
        }
    }
    key.sign(&header, &claims)
}

/// The JWK SHA-256 thumbprint of `key` (RFC 7638: the required members in lexicographic order,
/// no spaces), which a DPoP-bound token names in `cnf.jkt`.
pub fn thumbprint(key: &Es256Key) -> String {
    let jwk = key.public_jwk();
    let text = |name: &str| jwk[name].as_str().unwrap_or_default().to_owned();
    let canonical = format!(
        r#"{{"crv":"{}","kty":"{}","x":"{}","y":"{}"}}"#,
        text("crv"),
        text("kty"),
        text("x"),
        text("y")
    );
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::jwt::tests::{verified, TEST_PEM};

    #[test]
    fn a_proof_binds_the_method_the_url_the_time_and_the_token() {
        let key = Es256Key::from_pkcs8_pem(TEST_PEM).unwrap();
        let url = Url::parse("http://localhost:3000/mcp?x=1#f").unwrap();
        let target = ProofTarget {
            method: "POST",
            url: &url,
        };
        let jwt = proof(&key, target, 1_800_000_000, "j-1", Some("tok"), Some("n-1"));
        let (header, claims) = verified(&jwt, &key);
        assert_eq!(
            header,
            json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": key.public_jwk()})
        );
        assert!(header["jwk"].get("d").is_none(), "no private part");
        assert_eq!(
            claims,
            json!({
                "jti": "j-1",
                "htm": "POST",
                "htu": "http://localhost:3000/mcp",
                "iat": 1_800_000_000u64,
                // SHA-256("tok"), base64url.
                "ath": "GnZ0607njffhrEOak8P6jjyUV4TU3sn9jjARc4svHWI",
                "nonce": "n-1",
            })
        );
    }

    #[test]
    fn a_token_request_proof_has_no_ath_and_no_nonce_until_asked() {
        let key = Es256Key::from_pkcs8_pem(TEST_PEM).unwrap();
        let url = Url::parse("http://localhost:4000/token").unwrap();
        let target = ProofTarget {
            method: "POST",
            url: &url,
        };
        let (_, claims) = verified(&proof(&key, target, 5, "j", None, None), &key);
        assert_eq!(
            claims,
            json!({"jti": "j", "htm": "POST", "htu": "http://localhost:4000/token", "iat": 5})
        );
    }

    #[test]
    fn the_thumbprint_follows_rfc_7638() {
        // RFC 7638 §3.1's canonical form, for this key.
        let key = Es256Key::from_pkcs8_pem(TEST_PEM).unwrap();
        let jwk = key.public_jwk();
        let canonical = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            jwk["x"].as_str().unwrap(),
            jwk["y"].as_str().unwrap()
        );
        let expected = URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()));
        assert_eq!(thumbprint(&key), expected);
        assert_eq!(thumbprint(&key).len(), 43);
    }
}
