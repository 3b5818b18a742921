//! DPoP (RFC 9449) for every request of a connection and of its authorization: an
//! [`HttpBackend`] around the connection's own that adds a fresh proof (the core's
//! [`proof`](mcpwire_core::oauth::dpop::proof)) to each token request and each request that
//! carries the access token, presents that token with the `DPoP` scheme, and, when a server
//! asks for a nonce (`400` or `401` with a new `DPoP-Nonce`), sends the request once more with
//! it. The key is made from the system's randomness, one per server in the process, and never
//! leaves it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use mcpwire_core::oauth::dpop::{self, ProofTarget};
use mcpwire_core::oauth::jwt::Es256Key;
use mcpwire_core::HttpRequest;
use url::Url;

use super::run::unix_now;
use crate::future::BoxFuture;
use crate::http::backend::{HttpBackend, HttpFailure, HttpResponse};

/// The connection's key and the nonces servers gave.
struct State {
    inner: Arc<dyn HttpBackend>,
    key: Es256Key,
    /// The last nonce each origin gave.
    nonces: Mutex<HashMap<String, String>>,
}

/// `inner` with DPoP proofs (see the module docs), under the key of `server` in this process.
pub(crate) fn dpop_backend(
    inner: Arc<dyn HttpBackend>,
    server: &str,
) -> Result<Arc<dyn HttpBackend>, String> {
    let state = State {
        inner,
        key: key_for(server)?,
        nonces: Mutex::new(HashMap::new()),
    };
    Ok(Arc::new(Dpop(Arc::new(state))))
}

/// One key per server in this process, made when first needed: connections to the same
/// server share tokens (through the store), and a token is bound to the key it was issued
/// for; another server never sees the key.
fn key_for(server: &str) -> Result<Es256Key, String> {
    static KEYS: OnceLock<Mutex<HashMap<String, Es256Key>>> = OnceLock::new();
    let keys = KEYS.get_or_init(Default::default);
    let mut keys = keys.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(key) = keys.get(server) {
        return Ok(key.clone());
    }
    // A random scalar is a valid key but for odds of about 2^-128; try again then.
    for _ in 0..4 {
        if let Ok(key) = Es256Key::from_scalar(&random::<32>()?) {
            keys.insert(server.to_owned(), key.clone());
            return Ok(key);
        }
    }
    Err("no DPoP key could be made".into())
}

/// `N` random bytes from the system.
fn random<const N: usize>() -> Result<[u8; N], String> {
    let mut bytes = [0u8; N];
    getrandom::getrandom(&mut bytes).map_err(|e| format!("no randomness from the system: {e}"))?;
    Ok(bytes)
}

struct Dpop(Arc<State>);

/// The origin a nonce belongs to.
fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

impl State {
    /// `request` with a proof, or `None` when it needs none (no access token, and not a token
    /// request: a form `POST`).
    fn with_proof(&self, request: &HttpRequest, url: &Url) -> Result<Option<HttpRequest>, String> {
        let mut request = request.clone();
        let mut access_token = None;
        for (name, value) in request.headers.iter_mut() {
            if !name.eq_ignore_ascii_case("authorization") {
                continue;
            }
            if let Some((scheme, token)) = value.split_once(' ') {
                if scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("dpop") {
                    access_token = Some(token.trim().to_owned());
                    *value = format!("DPoP {}", token.trim());
                }
            }
        }
        let token_request = request.method.as_str() == "POST"
            && header(&request.headers, "content-type")
                .is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"));
        if access_token.is_none() && !token_request {
            return Ok(None);
        }
        let nonce = self
            .nonces
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&origin(url))
            .cloned();
        let jti = mcpwire_core::oauth::jwt::jti_from_random(&random::<16>()?);
        let target = ProofTarget {
            method: request.method.as_str(),
            url,
        };
        let proof = dpop::proof(
            &self.key,
            target,
            unix_now(),
            &jti,
            access_token.as_deref(),
            nonce.as_deref(),
        );
        request
            .headers
            .retain(|(k, _)| !k.eq_ignore_ascii_case("dpop"));
        request.headers.push(("DPoP".to_owned(), proof));
        Ok(Some(request))
    }

    /// Keeps the nonce `response` gives, if any; whether it is a new one.
    fn learn_nonce(&self, url: &Url, response: &HttpResponse) -> bool {
        let Some(nonce) = header(&response.headers, "dpop-nonce") else {
            return false;
        };
        let mut nonces = self.nonces.lock().unwrap_or_else(|e| e.into_inner());
        nonces.insert(origin(url), nonce.to_owned()).as_deref() != Some(nonce)
    }
}

impl HttpBackend for Dpop {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
        let state = self.0.clone();
        Box::pin(async move {
            let Ok(url) = Url::parse(&request.url) else {
                return state.inner.send(request).await;
            };
            let proofed = state
                .with_proof(&request, &url)
                .map_err(HttpFailure::maybe_sent)?;
            let Some(proofed) = proofed else {
                return state.inner.send(request).await;
            };
            let response = state.inner.send(proofed).await?;
            let asked = matches!(response.status, 400 | 401) && state.learn_nonce(&url, &response);
            if !asked {
                return Ok(response);
            }
            // The server wants its nonce in the proof (RFC 9449 §8, §9): it refused the
            // request without acting on it, so it goes once more.
            drop(response);
            match state
                .with_proof(&request, &url)
                .map_err(HttpFailure::maybe_sent)?
            {
                Some(again) => state.inner.send(again).await,
                None => state.inner.send(request).await,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpwire_core::HttpMethod;
    use std::sync::Mutex as StdMutex;

    /// A status and headers to answer with.
    type Answer = (u16, Vec<(String, String)>);

    /// Answers from a script and keeps what it was sent.
    struct Script {
        sent: StdMutex<Vec<HttpRequest>>,
        answers: StdMutex<Vec<Answer>>,
    }

    impl HttpBackend for Script {
        fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
            self.sent.lock().unwrap().push(request);
            let (status, headers) = self.answers.lock().unwrap().remove(0);
            Box::pin(async move {
                Ok(HttpResponse::new(
                    status,
                    headers,
                    Box::pin(futures_lite::io::empty()),
                ))
            })
        }
    }

    fn claims(proof: &str) -> serde_json::Value {
        use base64::Engine;
        let part = proof.split('.').nth(1).unwrap();
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(part)
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    fn post(url: &str, headers: &[(&str, &str)]) -> HttpRequest {
        HttpRequest {
            exchange: 1,
            method: HttpMethod::Post,
            url: url.into(),
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: b"{}".to_vec(),
        }
    }

    #[test]
    fn a_token_goes_with_the_dpop_scheme_a_fresh_proof_and_the_nonce_asked_for() {
        let script = Arc::new(Script {
            sent: StdMutex::new(Vec::new()),
            answers: StdMutex::new(vec![
                (401, vec![("DPoP-Nonce".into(), "n-1".into())]),
                (200, vec![]),
                (200, vec![]),
                (200, vec![]),
            ]),
        });
        let backend = dpop_backend(script.clone(), "http://localhost:3000/mcp").unwrap();
        let request = post(
            "http://localhost:3000/mcp",
            &[
                ("Authorization", "Bearer tok"),
                ("Content-Type", "application/json"),
            ],
        );
        let status = futures_lite::future::block_on(backend.send(request.clone()))
            .unwrap()
            .status;
        assert_eq!(status, 200);
        let status = futures_lite::future::block_on(backend.send(request))
            .unwrap()
            .status;
        assert_eq!(status, 200);
        // Not a token request and no token: as is.
        futures_lite::future::block_on(backend.send(post("http://localhost:3000/other", &[])))
            .unwrap();

        let sent = script.sent.lock().unwrap();
        assert_eq!(
            sent.len(),
            4,
            "the refusal asking for a nonce, then once more"
        );
        let proofs: Vec<serde_json::Value> = sent[..3]
            .iter()
            .map(|r| {
                assert_eq!(header(&r.headers, "authorization"), Some("DPoP tok"));
                claims(header(&r.headers, "dpop").unwrap())
            })
            .collect();
        assert_eq!(proofs[0].get("nonce"), None);
        assert_eq!(proofs[1]["nonce"], "n-1");
        assert_eq!(proofs[2]["nonce"], "n-1", "kept for the next request");
        for p in &proofs {
            assert_eq!(p["htm"], "POST");
            assert_eq!(p["htu"], "http://localhost:3000/mcp");
            assert_eq!(p["ath"], dpop::ath("tok"));
        }
        assert_ne!(proofs[0]["jti"], proofs[1]["jti"]);
        assert_ne!(proofs[1]["jti"], proofs[2]["jti"]);
        assert_eq!(header(&sent[3].headers, "dpop"), None);
    }

    #[test]
    fn connections_to_one_server_share_its_key_and_no_other_server_sees_it() {
        let a = key_for("http://a/mcp").unwrap();
        assert_eq!(
            a.public_jwk(),
            key_for("http://a/mcp").unwrap().public_jwk()
        );
        assert_ne!(
            a.public_jwk(),
            key_for("http://b/mcp").unwrap().public_jwk()
        );
    }

    #[test]
    fn a_token_request_gets_a_proof_without_ath_and_its_basic_auth_stays() {
        let script = Arc::new(Script {
            sent: StdMutex::new(Vec::new()),
            answers: StdMutex::new(vec![(200, vec![])]),
        });
        let backend = dpop_backend(script.clone(), "http://localhost:3000/mcp").unwrap();
        let request = post(
            "http://localhost:4000/token?x=1",
            &[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Authorization", "Basic abc"),
            ],
        );
        futures_lite::future::block_on(backend.send(request)).unwrap();
        let sent = script.sent.lock().unwrap();
        assert_eq!(header(&sent[0].headers, "authorization"), Some("Basic abc"));
        let proof = claims(header(&sent[0].headers, "dpop").unwrap());
        assert_eq!(proof["htu"], "http://localhost:4000/token");
        assert_eq!(proof.get("ath"), None);
    }
}
