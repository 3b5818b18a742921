//! JSON Web Tokens the client signs itself: compact ES256 JWS (RFC 7515, RFC 7518 §3.4) from a
//! P-256 key in a PKCS#8 PEM, and the RFC 7523 §2.2 client assertion of `private_key_jwt`
//! (oauth.md §1.10).
//!
//! Signing is deterministic (RFC 6979): the key and the input give the signature, so nothing
//! here reads randomness or a clock. The assertion's times come from the Unix time the caller
//! passes, its `jti` from random bytes the caller passes.

use std::fmt;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::DecodePrivateKey;
use serde_json::{json, Value};

/// `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
pub const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long a client assertion is valid (5 min).
pub const ASSERTION_LIFETIME_SECS: u64 = 300;

/// Why a key cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JwtError {
    /// The PEM is not a PKCS#8 P-256 private key.
    #[error("the key is not a PKCS#8 P-256 private key in PEM: {0}")]
    InvalidKey(String),
    /// The algorithm asked for is not one this client signs with.
    #[error("the signing algorithm {0:?} is not supported (only ES256 is)")]
    UnsupportedAlgorithm(String),
}

/// A P-256 private key that signs ES256 JWTs.
///
/// Its `Debug` shows nothing of the key.
#[derive(Clone)]
pub struct Es256Key {
    key: SigningKey,
}

impl Es256Key {
    /// The key of a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, a P-256 key).
    pub fn from_pkcs8_pem(pem: &str) -> Result<Es256Key, JwtError> {
        let key = SigningKey::from_pkcs8_pem(pem.trim())
            .map_err(|e| JwtError::InvalidKey(e.to_string()))?;
        Ok(Es256Key { key })
    }

    /// The key whose private scalar is `scalar` (32 bytes, big-endian); for keys made
    /// elsewhere and for tests.
    pub fn from_scalar(scalar: &[u8; 32]) -> Result<Es256Key, JwtError> {
        let key =
            SigningKey::from_slice(scalar).map_err(|e| JwtError::InvalidKey(e.to_string()))?;
        Ok(Es256Key { key })
    }

    /// The public key as a JWK (RFC 7518 §6.2: `kty`, `crv`, `x`, `y`), with no private part.
    pub fn public_jwk(&self) -> Value {
        let point = self.key.verifying_key().to_encoded_point(false);
        let coordinate = |c: Option<&p256::FieldBytes>| {
            c.map(|bytes| URL_SAFE_NO_PAD.encode(bytes))
                .unwrap_or_default()
        };
        json!({
            "kty": "EC",
            "crv": "P-256",
            "x": coordinate(point.x()),
            "y": coordinate(point.y()),
        })
    }

    /// The compact JWS of `claims` under `header` (whose `alg` should be `ES256`):
    /// `base64url(header) . base64url(claims) . base64url(r ‖ s)`.
    pub fn sign(&self, header: &Value, claims: &Value) -> String {
        let mut input = URL_SAFE_NO_PAD.encode(header.to_string());
        input.push('.');
        input.push_str(&URL_SAFE_NO_PAD.encode(claims.to_string()));
        let signature: Signature = self.key.sign(input.as_bytes());
        input.push('.');
        input.push_str(&URL_SAFE_NO_PAD.encode(signature.to_bytes()));
        input
    }

    /// The verifying half, for tests that check signatures.
    #[cfg(test)]
    pub(crate) fn verifying_key(&self) -> p256::ecdsa::VerifyingKey {
        *self.key.verifying_key()
    }
}

impl fmt::Debug for Es256Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Es256Key(***)")
    }
}

/// Checks a configured signing algorithm: `ES256` (any case) or none given.
pub fn check_algorithm(alg: Option<&str>) -> Result<(), JwtError> {
    match alg {
        None => Ok(()),
        Some(a) if a.eq_ignore_ascii_case("ES256") => Ok(()),
        Some(a) => Err(JwtError::UnsupportedAlgorithm(a.to_owned())),
    }
}

/// A `jti` from 16 random bytes (base64url, 22 characters).
pub fn jti_from_random(random: &[u8; 16]) -> String {
    URL_SAFE_NO_PAD.encode(random)
}

/// The `private_key_jwt` client assertion (RFC 7523 §2.2, oauth.md §1.10): header
/// `{"alg":"ES256","typ":"JWT"}`, claims `iss` = `sub` = `client_id`, `aud` = `audience` (the
/// authorization server's issuer, not its token endpoint), `iat` = `unix_now`, `exp` = `iat` +
/// [`ASSERTION_LIFETIME_SECS`], and `jti`.
pub fn client_assertion(
    key: &Es256Key,
    client_id: &str,
    audience: &str,
    unix_now: u64,
    jti: &str,
) -> String {
    let header = json!({"alg": "ES256", "typ": "JWT"});
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": unix_now,
        "exp": unix_now.saturating_add(ASSERTION_LIFETIME_SECS),
        "jti": jti,
    });
    key.sign(&header, &claims)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier;

    /// A P-256 key made with `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`
    /// for these tests only.
    pub(crate) const TEST_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg39TmpFu+FWyrzBNl
AZcM2v9kxUVZe9R75OrCRqTFkJ2hRANCAARsvrMg2vIebY5bnLn+55iZawpyWG1d
1RG+yXbGDmyGOAtiFvhHgLxutsNMOWo67kdOxRTwL4dgxzIw4VH17kHE
-----END PRIVATE KEY-----
";

    /// The header and claims of a compact JWS, after checking its ES256 signature with `key`.
    pub(crate) fn verified(jwt: &str, key: &Es256Key) -> (Value, Value) {
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3, "three parts: {jwt}");
        let signature = URL_SAFE_NO_PAD
            .decode(parts[2])
            .expect("base64url signature");
        assert_eq!(signature.len(), 64, "r ‖ s, not DER");
        let signature = Signature::from_slice(&signature).expect("a signature");
        let input = format!("{}.{}", parts[0], parts[1]);
        key.verifying_key()
            .verify(input.as_bytes(), &signature)
            .expect("the signature verifies");
        let decode = |part: &str| -> Value {
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).expect("base64url")).unwrap()
        };
        (decode(parts[0]), decode(parts[1]))
    }

    #[test]
    fn a_pkcs8_pem_key_signs_an_assertion_that_verifies() {
        let key = Es256Key::from_pkcs8_pem(TEST_PEM).unwrap();
        let jti = jti_from_random(&[9; 16]);
        let jwt = client_assertion(
            &key,
            "client-1",
            "http://localhost:4000",
            1_800_000_000,
            &jti,
        );
        let (header, claims) = verified(&jwt, &key);
        assert_eq!(header, json!({"alg": "ES256", "typ": "JWT"}));
        assert_eq!(
            claims,
            json!({
                "iss": "client-1", "sub": "client-1", "aud": "http://localhost:4000",
                "iat": 1_800_000_000u64, "exp": 1_800_000_300u64, "jti": "CQkJCQkJCQkJCQkJCQkJCQ",
            })
        );
        // Deterministic: the same input signs the same.
        let again = client_assertion(
            &key,
            "client-1",
            "http://localhost:4000",
            1_800_000_000,
            &jti,
        );
        assert_eq!(jwt, again);
    }

    #[test]
    fn a_tampered_assertion_does_not_verify() {
        let key = Es256Key::from_pkcs8_pem(TEST_PEM).unwrap();
        let jwt = client_assertion(&key, "c", "http://as", 1, "j");
        let mut parts: Vec<String> = jwt.split('.').map(str::to_owned).collect();
        parts[1] = URL_SAFE_NO_PAD.encode(r#"{"iss":"someone-else"}"#);
        let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(&parts[2]).unwrap()).unwrap();
        let input = format!("{}.{}", parts[0], parts[1]);
        assert!(key
            .verifying_key()
            .verify(input.as_bytes(), &signature)
            .is_err());
    }

    #[test]
    fn keys_that_are_not_pkcs8_p256_are_refused() {
        for pem in [
            "",
            "not a key",
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
        ] {
            assert!(matches!(
                Es256Key::from_pkcs8_pem(pem),
                Err(JwtError::InvalidKey(_))
            ));
        }
        assert!(Es256Key::from_scalar(&[0; 32]).is_err());
        assert!(Es256Key::from_scalar(&[1; 32]).is_ok());
    }

    #[test]
    fn the_public_jwk_has_no_private_part_and_debug_shows_no_key() {
        let key = Es256Key::from_pkcs8_pem(TEST_PEM).unwrap();
        let jwk = key.public_jwk();
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert_eq!(jwk["x"].as_str().unwrap().len(), 43);
        assert_eq!(jwk["y"].as_str().unwrap().len(), 43);
        assert!(jwk.get("d").is_none());
        assert_eq!(format!("{key:?}"), "Es256Key(***)");
    }

    #[test]
    fn only_es256_is_accepted() {
        assert_eq!(check_algorithm(None), Ok(()));
        assert_eq!(check_algorithm(Some("ES256")), Ok(()));
        assert_eq!(
            check_algorithm(Some("RS256")),
            Err(JwtError::UnsupportedAlgorithm("RS256".into()))
        );
    }
}
