//! OAuth end to end through the public API, over an in-memory HTTP backend that plays an MCP
//! server guarded by bearer tokens and its authorization server (metadata, registration, the
//! authorization endpoint's redirect, the token endpoint with refresh). Deterministic: no
//! network, no browser.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire::core::{HttpMethod, HttpRequest};
use mcpwire::oauth::{AuthorizeError, Authorizer, MemoryTokenStore, OAuthOptions, Url};
use mcpwire::{
    BoxFuture, ConnectOptions, Era, HttpBackend, HttpExchangeNote, HttpFailure, HttpResponse,
    ServerConfig,
};
use serde_json::{json, Value};

const MCP: &str = "http://127.0.0.1:9/mcp";
const AS: &str = "http://127.0.0.1:9/as";
const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// The server side: which tokens it takes, and what it saw.
#[derive(Default)]
struct Server {
    /// Tokens the MCP endpoint takes.
    valid: Vec<String>,
    issued: usize,
    /// `expires_in` of the tokens issued.
    lifetime: u64,
    /// Refresh tokens the token endpoint takes.
    refreshable: Vec<String>,
    registrations: usize,
    authorizations: usize,
    code_grants: usize,
    refresh_grants: usize,
    /// Every header value any request carried, and every URL.
    seen: Vec<String>,
    /// Each MCP request's method and whether it carried a valid token.
    mcp: Vec<(String, bool)>,
}

#[derive(Clone, Default)]
struct Fake {
    server: Arc<Mutex<Server>>,
}

fn response(status: u16, headers: &[(&str, &str)], body: Vec<u8>) -> HttpResponse {
    let headers = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    HttpResponse::new(
        status,
        headers,
        Box::pin(futures_lite::io::Cursor::new(body)),
    )
}

fn json_response(value: Value) -> HttpResponse {
    let body = value.to_string().into_bytes();
    response(200, &[("Content-Type", "application/json")], body)
}

fn form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

impl Fake {
    fn serve(&self, r: HttpRequest) -> HttpResponse {
        let mut s = self.server.lock().unwrap();
        s.seen.push(r.url.clone());
        s.seen.extend(r.headers.iter().map(|(_, v)| v.clone()));
        s.seen.push(String::from_utf8_lossy(&r.body).into_owned());
        let path = r.url.split('?').next().unwrap().to_owned();
        match (r.method, path.as_str()) {
            (_, MCP) => {
                let token = r
                    .header("authorization")
                    .and_then(|v| v.strip_prefix("Bearer "));
                let ok = token.is_some_and(|t| s.valid.iter().any(|v| v == t));
                let message: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
                let method = message["method"].as_str().unwrap_or("").to_owned();
                s.mcp.push((method.clone(), ok));
                if !ok {
                    let challenge = r#"Bearer error="invalid_token", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp""#;
                    return response(401, &[("WWW-Authenticate", challenge)], b"{}".to_vec());
                }
                drop(s);
                mcp_answer(r.method, &message)
            }
            (HttpMethod::Get, "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp") => {
                json_response(json!({"resource": MCP, "authorization_servers": [AS],
                    "scopes_supported": ["mcp:tools"]}))
            }
            (HttpMethod::Get, "http://127.0.0.1:9/.well-known/oauth-authorization-server/as") => {
                json_response(json!({"issuer": AS,
                    "authorization_endpoint": format!("{AS}/authorize"),
                    "token_endpoint": format!("{AS}/token"),
                    "registration_endpoint": format!("{AS}/register"),
                    "code_challenge_methods_supported": ["S256"],
                    "scopes_supported": ["mcp:tools", "offline_access"],
                    "token_endpoint_auth_methods_supported": ["client_secret_post"]}))
            }
            (HttpMethod::Post, "http://127.0.0.1:9/as/register") => {
                s.registrations += 1;
                let asked: Value = serde_json::from_slice(&r.body).unwrap();
                json_response(json!({"client_id": "client-1", "client_secret": "secret-1",
                    "token_endpoint_auth_method": "client_secret_post",
                    "redirect_uris": asked["redirect_uris"]}))
            }
            (HttpMethod::Post, "http://127.0.0.1:9/as/token") => {
                let f = form(&r.body);
                let refused = || {
                    let body = br#"{"error":"invalid_grant"}"#.to_vec();
                    response(400, &[("Content-Type", "application/json")], body)
                };
                match f.get("grant_type").map(String::as_str) {
                    Some("authorization_code") => s.code_grants += 1,
                    Some("refresh_token") => {
                        let known = f
                            .get("refresh_token")
                            .is_some_and(|t| s.refreshable.contains(t));
                        if !known {
                            return refused();
                        }
                        s.refresh_grants += 1;
                    }
                    _ => return refused(),
                }
                assert_eq!(f.get("resource").map(String::as_str), Some(MCP));
                s.issued += 1;
                let token = format!("access-{}", s.issued);
                s.valid = vec![token.clone()];
                s.refreshable = vec![format!("refresh-{}", s.issued)];
                json_response(json!({"access_token": token, "token_type": "Bearer",
                    "expires_in": s.lifetime, "refresh_token": format!("refresh-{}", s.issued)}))
            }
            _ => response(404, &[], Vec::new()),
        }
    }

    fn revoke(&self) {
        self.server.lock().unwrap().valid.clear();
    }
}

/// What the MCP endpoint answers (handshake era, JSON bodies).
fn mcp_answer(method: HttpMethod, message: &Value) -> HttpResponse {
    if method != HttpMethod::Post {
        return response(405, &[], Vec::new());
    }
    let id = message["id"].clone();
    let result = match message["method"].as_str() {
        Some("initialize") => {
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "guarded", "version": "1"}})
        }
        Some("tools/list") => {
            json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
        }
        Some("tools/call") => json!({"content": [{"type": "text", "text": "done"}]}),
        Some("ping") => json!({}),
        _ if id.is_null() => return response(202, &[], Vec::new()),
        _ => {
            return json_response(json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "no such method"}}))
        }
    };
    json_response(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

impl HttpBackend for Fake {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
        let answer = self.serve(request);
        Box::pin(async move { Ok(answer) })
    }
}

/// The user: approves at once (or declines), redirecting with the code and the `state`.
struct User {
    fake: Fake,
    decline: Arc<AtomicUsize>,
}

impl Authorizer for User {
    fn authorize(&self, url: &Url) -> BoxFuture<Result<String, AuthorizeError>> {
        self.fake.server.lock().unwrap().authorizations += 1;
        let state = url
            .query_pairs()
            .find(|(k, _)| k == "state")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        let declined = self.decline.load(Ordering::SeqCst) > 0;
        if declined {
            self.decline.fetch_sub(1, Ordering::SeqCst);
        }
        Box::pin(async move {
            if declined {
                return Err(AuthorizeError("the user declined".into()));
            }
            Ok(format!("{REDIRECT}?code=the-code&state={state}"))
        })
    }
}

struct Setup {
    fake: Fake,
    decline: Arc<AtomicUsize>,
    store: Arc<MemoryTokenStore>,
    notes: Arc<Mutex<Vec<String>>>,
}

impl Setup {
    fn new(lifetime: u64) -> Setup {
        let fake = Fake::default();
        fake.server.lock().unwrap().lifetime = lifetime;
        Setup {
            fake,
            decline: Arc::new(AtomicUsize::new(0)),
            store: Arc::new(MemoryTokenStore::default()),
            notes: Arc::default(),
        }
    }

    fn options(&self) -> ConnectOptions {
        let user = User {
            fake: self.fake.clone(),
            decline: self.decline.clone(),
        };
        let mut oauth = OAuthOptions::new(user, REDIRECT);
        oauth.store = self.store.clone();
        let notes = self.notes.clone();
        ConnectOptions {
            era: Era::Handshake,
            http_backend: Some(Arc::new(self.fake.clone())),
            oauth: Some(oauth),
            on_http_exchange: Some(Arc::new(move |n: &HttpExchangeNote| {
                notes.lock().unwrap().push(format!("{n:?}"));
            })),
            ..ConnectOptions::default()
        }
    }

    fn server(&self) -> std::sync::MutexGuard<'_, Server> {
        self.fake.server.lock().unwrap()
    }
}

#[test]
fn the_first_refusal_runs_the_flow_and_every_request_after_carries_the_token() {
    let setup = Setup::new(3600);
    smol::block_on(async {
        let client = mcpwire::connect_smol(&ServerConfig::http(MCP), setup.options())
            .await
            .expect("connected");
        let result = client.call_tool("echo", json!({})).await.expect("called");
        assert_eq!(result.text(), "done");
        let debug = format!("{client:?}");
        client.close().await;
        let s = setup.server();
        assert_eq!(
            (s.registrations, s.authorizations, s.code_grants),
            (1, 1, 1)
        );
        // The refused `initialize` went again, with the token; everything after carried it.
        assert_eq!(s.mcp[0], ("initialize".to_owned(), false));
        assert!(s.mcp[1..].iter().all(|(_, ok)| *ok), "{:?}", s.mcp);
        assert!(s.mcp.iter().any(|(m, _)| m == "tools/call"));
        // The token is on the wire, never in what the host sees of the exchanges.
        assert!(s.seen.iter().any(|v| v == "Bearer access-1"));
        let notes = setup.notes.lock().unwrap().join("\n");
        assert!(
            !notes.contains("access-1") && !debug.contains("access-1"),
            "{notes}"
        );
    });
}

#[test]
fn a_hundred_calls_refused_together_cause_one_refresh() {
    let setup = Setup::new(3600);
    smol::block_on(async {
        let client = mcpwire::connect_smol(&ServerConfig::http(MCP), setup.options())
            .await
            .expect("connected");
        setup.fake.revoke();
        let calls = (0..100).map(|_| client.call_tool("echo", json!({})));
        let results = join_all(calls.collect()).await;
        assert!(results.iter().all(Result::is_ok), "{results:?}");
        client.close().await;
        let s = setup.server();
        assert_eq!(s.refresh_grants, 1, "one refresh for all the waiting calls");
        assert_eq!(
            s.authorizations, 1,
            "no new sign-in: the refresh token sufficed"
        );
    });
}

#[test]
fn a_declined_authorization_ends_what_waited_and_the_next_call_asks_again() {
    let setup = Setup::new(3600);
    smol::block_on(async {
        let client = mcpwire::connect_smol(&ServerConfig::http(MCP), setup.options())
            .await
            .expect("connected");
        setup.fake.revoke();
        setup.decline.store(1, Ordering::SeqCst);
        break_refresh(&setup);
        let error = client
            .call_tool("echo", json!({}))
            .await
            .expect_err("refused");
        let text = format!("{error} {error:?}");
        assert!(text.contains("the user declined"), "{text}");
        assert!(
            !text.contains("access-1") && !text.contains("refresh-1"),
            "{text}"
        );
        // The connection lives on: the next call signs in again.
        let result = client.call_tool("echo", json!({})).await.expect("called");
        assert_eq!(result.text(), "done");
        client.close().await;
        assert_eq!(setup.server().authorizations, 3);
    });
}

#[test]
fn a_second_connection_uses_the_stored_token_without_signing_in() {
    let setup = Setup::new(3600);
    smol::block_on(async {
        let first = mcpwire::connect_smol(&ServerConfig::http(MCP), setup.options())
            .await
            .expect("connected");
        let second = mcpwire::connect_smol(&ServerConfig::http(MCP), setup.options())
            .await
            .expect("connected");
        second.call_tool("echo", json!({})).await.expect("called");
        first.close().await;
        second.close().await;
        let s = setup.server();
        assert_eq!((s.authorizations, s.registrations), (1, 1));
    });
}

#[test]
fn a_token_is_refreshed_ahead_of_its_expiry() {
    // Expires in 61 s; refreshed 60 s ahead, so about a second after it is had.
    let setup = Setup::new(61);
    smol::block_on(async {
        let client = mcpwire::connect_smol(&ServerConfig::http(MCP), setup.options())
            .await
            .expect("connected");
        for _ in 0..200 {
            if setup.server().refresh_grants > 0 {
                break;
            }
            async_io::Timer::after(Duration::from_millis(50)).await;
        }
        assert_eq!(setup.server().refresh_grants, 1);
        // The refreshed token is the one in use (the old one is no longer taken).
        client.call_tool("echo", json!({})).await.expect("called");
        client.close().await;
        assert_eq!(setup.server().authorizations, 1);
    });
}

/// The server forgets the refresh tokens it gave, and the store what it kept: only a new
/// sign-in will do.
fn break_refresh(setup: &Setup) {
    setup.server().refreshable.clear();
    let store = setup.store.clone();
    smol::block_on(mcpwire::oauth::TokenStore::remove(&*store, MCP)).unwrap();
}

/// Polls every future until all are ready.
async fn join_all<T>(futures: Vec<impl std::future::Future<Output = T>>) -> Vec<T> {
    let mut futures: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, slot) in futures.iter_mut().zip(out.iter_mut()) {
            if slot.is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *slot = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().map(Option::unwrap).collect()
}
