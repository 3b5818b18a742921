//! OAuth end to end through the public API, over an in-memory HTTP backend that plays an MCP
//! server guarded by bearer tokens and its authorization server (metadata, registration, the
//! authorization endpoint's redirect, the token endpoint with refresh). Deterministic: no
//! network, no browser. The sign-ins through the terminal's listener and into files run on
//! every runtime (see `runtimes`): the listener, the flow's timers and the files' writes are
//! the runtime's.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire::core::{HttpMethod, HttpRequest};
use mcpwire::oauth::{
    AuthorizeError, Authorizer, Grant, MemoryTokenStore, OAuthOptions, TokenStore, Url,
};
use mcpwire::{
    BoxFuture, ConnectOptions, Era, HttpBackend, HttpExchangeNote, HttpFailure, HttpResponse,
    ServerConfig,
};
use serde_json::{json, Value};

#[macro_use]
mod runtimes;
use runtimes::Rt;

const MCP: &str = "http://127.0.0.1:9/mcp";
/// The same server's 2024-11-05 HTTP+SSE face: its stream, and where it takes messages.
const SSE: &str = "http://127.0.0.1:9/sse";
const MESSAGES: &str = "http://127.0.0.1:9/messages";
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
    client_credentials_grants: usize,
    /// Every header value any request carried, and every URL.
    seen: Vec<String>,
    /// Each MCP request's method and whether it carried a valid token.
    mcp: Vec<(String, bool)>,
    /// The open HTTP+SSE stream: where its events go.
    stream: Option<smol::channel::Sender<Vec<u8>>>,
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
            (_, SSE | MESSAGES) => {
                let token = r
                    .header("authorization")
                    .and_then(|v| v.strip_prefix("Bearer "));
                let ok = token.is_some_and(|t| s.valid.iter().any(|v| v == t));
                let message: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
                let method = match r.method {
                    HttpMethod::Get => "GET".to_owned(),
                    _ => message["method"].as_str().unwrap_or("").to_owned(),
                };
                s.mcp.push((method, ok));
                if !ok {
                    let challenge = r#"Bearer error="invalid_token", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/sse""#;
                    return response(401, &[("WWW-Authenticate", challenge)], b"{}".to_vec());
                }
                if r.method == HttpMethod::Get {
                    let (tx, rx) = smol::channel::unbounded();
                    let endpoint = b"event: endpoint\ndata: /messages?sessionId=1\n\n".to_vec();
                    tx.try_send(endpoint).unwrap();
                    s.stream = Some(tx);
                    let body = ChannelBody {
                        rx: Box::pin(rx),
                        buf: Vec::new(),
                        at: 0,
                    };
                    return HttpResponse::new(
                        200,
                        vec![("Content-Type".into(), "text/event-stream".into())],
                        Box::pin(body),
                    );
                }
                let answer = answer_of(&message);
                if let (Some(answer), Some(stream)) = (answer, &s.stream) {
                    let event = format!("event: message\ndata: {answer}\n\n");
                    let _ = stream.try_send(event.into_bytes());
                }
                response(202, &[], Vec::new())
            }
            (HttpMethod::Get, "http://127.0.0.1:9/.well-known/oauth-protected-resource/sse") => {
                json_response(json!({"resource": SSE, "authorization_servers": [AS],
                    "scopes_supported": ["mcp:tools"]}))
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
                    Some("client_credentials") => {
                        let known = f.get("client_id").map(String::as_str) == Some("service-1")
                            && f.get("client_secret").map(String::as_str) == Some("s3cret");
                        if !known {
                            return refused();
                        }
                        s.client_credentials_grants += 1;
                    }
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
                let resource = f.get("resource").map(String::as_str);
                assert!(matches!(resource, Some(MCP | SSE)), "{resource:?}");
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
    match answer_of(message) {
        Some(answer) => json_response(answer),
        None => response(202, &[], Vec::new()),
    }
}

/// The answer to one message (none to a notification).
fn answer_of(message: &Value) -> Option<Value> {
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
        _ if id.is_null() => return None,
        _ => {
            return Some(json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "no such method"}}))
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// An HTTP+SSE stream's body: the events the server sends, as they come.
struct ChannelBody {
    rx: std::pin::Pin<Box<smol::channel::Receiver<Vec<u8>>>>,
    buf: Vec<u8>,
    at: usize,
}

impl futures_lite::AsyncRead for ChannelBody {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        out: &mut [u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        use futures_lite::Stream;
        loop {
            if self.at < self.buf.len() {
                let n = out.len().min(self.buf.len() - self.at);
                let at = self.at;
                out[..n].copy_from_slice(&self.buf[at..at + n]);
                self.at += n;
                return std::task::Poll::Ready(Ok(n));
            }
            match self.rx.as_mut().poll_next(cx) {
                std::task::Poll::Ready(Some(bytes)) => {
                    self.buf = bytes;
                    self.at = 0;
                }
                std::task::Poll::Ready(None) => return std::task::Poll::Ready(Ok(0)),
                std::task::Poll::Pending => return std::task::Poll::Pending,
            }
        }
    }
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

    /// A client of the guarded server with these options.
    async fn connect(&self, rt: &Rt) -> mcpwire::Client {
        rt.connect(&ServerConfig::http(MCP), self.options())
            .await
            .expect("connected")
    }

    fn server(&self) -> std::sync::MutexGuard<'_, Server> {
        self.fake.server.lock().unwrap()
    }
}

fn the_first_refusal_runs_the_flow_and_every_request_after_carries_the_token(rt: &Rt) {
    let setup = Setup::new(3600);
    rt.block_on(async {
        let client = setup.connect(rt).await;
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

on_every_runtime!(the_first_refusal_runs_the_flow_and_every_request_after_carries_the_token);

/// The 2024-11-05 HTTP+SSE transport is authorized as Streamable HTTP is: its refused stream
/// waits for the sign-in and opens with the token; a message refused later (the token revoked)
/// waits for a new one and goes again.
fn the_http_sse_transport_is_authorized_when_its_stream_or_a_message_is_refused(rt: &Rt) {
    let setup = Setup::new(3600);
    rt.block_on(async {
        let mut config = ServerConfig::http(SSE);
        if let ServerConfig::Http(h) = &mut config {
            h.kind = mcpwire::core::config::HttpKind::Sse;
        }
        let client = rt
            .connect(&config, setup.options())
            .await
            .expect("connected");
        let result = client.call_tool("echo", json!({})).await.expect("called");
        assert_eq!(result.text(), "done");
        {
            let s = setup.server();
            assert_eq!((s.registrations, s.authorizations), (1, 1));
            assert_eq!(s.mcp[0], ("GET".to_owned(), false));
            assert!(s.mcp[1..].iter().all(|(_, ok)| *ok), "{:?}", s.mcp);
        }
        // The token revoked: the next message is refused, a new token had (by the refresh
        // token), and it goes again.
        setup.fake.revoke();
        let result = client
            .call_tool("echo", json!({}))
            .await
            .expect("called again");
        assert_eq!(result.text(), "done");
        {
            let s = setup.server();
            assert_eq!((s.authorizations, s.refresh_grants), (1, 1), "{:?}", s.mcp);
            let calls: Vec<bool> = s
                .mcp
                .iter()
                .filter(|(m, _)| m == "tools/call")
                .map(|(_, ok)| *ok)
                .collect();
            assert_eq!(calls, [true, false, true]);
        }
        client.close().await;
    });
}

on_every_runtime!(the_http_sse_transport_is_authorized_when_its_stream_or_a_message_is_refused);

fn client_credentials_get_a_token_without_the_user_and_a_new_one_when_refused(rt: &Rt) {
    let setup = Setup::new(3600);
    let mut options = setup.options();
    if let Some(oauth) = options.oauth.as_mut() {
        oauth.grant = Grant::client_secret("service-1", "s3cret");
    }
    rt.block_on(async {
        let client = rt
            .connect(&ServerConfig::http(MCP), options)
            .await
            .expect("connected");
        client.call_tool("echo", json!({})).await.expect("called");
        setup.fake.revoke();
        client.call_tool("echo", json!({})).await.expect("called");
        client.close().await;
        {
            let s = setup.server();
            // No registration, no user, no refresh (a client-credentials token is fetched anew).
            assert_eq!(
                (
                    s.registrations,
                    s.authorizations,
                    s.code_grants,
                    s.refresh_grants
                ),
                (0, 0, 0, 0)
            );
            assert_eq!(s.client_credentials_grants, 2);
            assert!(s.seen.iter().any(|v| v == "Bearer access-2"));
        }
        // Its client is no client for a sign-in to reuse.
        assert!(setup.store.clients().await.unwrap().is_empty());
    });
}

on_every_runtime!(client_credentials_get_a_token_without_the_user_and_a_new_one_when_refused);

fn a_hundred_calls_refused_together_cause_one_refresh(rt: &Rt) {
    let setup = Setup::new(3600);
    rt.block_on(async {
        let client = setup.connect(rt).await;
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

on_every_runtime!(a_hundred_calls_refused_together_cause_one_refresh);

fn a_declined_authorization_ends_what_waited_and_the_next_call_asks_again(rt: &Rt) {
    let setup = Setup::new(3600);
    rt.block_on(async {
        let client = setup.connect(rt).await;
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

on_every_runtime!(a_declined_authorization_ends_what_waited_and_the_next_call_asks_again);

fn a_second_connection_uses_the_stored_token_without_signing_in(rt: &Rt) {
    let setup = Setup::new(3600);
    rt.block_on(async {
        let first = setup.connect(rt).await;
        let second = setup.connect(rt).await;
        second.call_tool("echo", json!({})).await.expect("called");
        first.close().await;
        second.close().await;
        let s = setup.server();
        assert_eq!((s.authorizations, s.registrations), (1, 1));
    });
}

on_every_runtime!(a_second_connection_uses_the_stored_token_without_signing_in);

/// The refresh ahead of expiry waits on the connection's runtime's timer.
fn a_token_is_refreshed_ahead_of_its_expiry(rt: &Rt) {
    // Expires in 2 s, refreshed 1 s ahead (the margin is never more than half the token's
    // life, so a short-lived token is not refreshed over and over).
    let setup = Setup::new(2);
    let mut options = setup.options();
    options.oauth.as_mut().unwrap().refresh_margin = Duration::from_secs(1);
    rt.block_on(async {
        let client = rt
            .connect(&ServerConfig::http(MCP), options)
            .await
            .expect("connected");
        for _ in 0..200 {
            if setup.server().refresh_grants > 0 {
                break;
            }
            rt.sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(setup.server().refresh_grants, 1);
        // The refreshed token is the one in use (the old one is no longer taken).
        client.call_tool("echo", json!({})).await.expect("called");
        client.close().await;
        assert_eq!(setup.server().authorizations, 1);
    });
}

on_every_runtime!(a_token_is_refreshed_ahead_of_its_expiry);

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

// ---- stores and the terminal's sign-in ----

/// A fresh folder under the system's temporary folder, removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!(
            "mcpwire-oauth-test-{}-{name}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        }
        out.push(p);
    }
    out
}

fn a_sign_in_is_kept_in_files_and_survives_a_restart_with_an_expired_token_refreshed(rt: &Rt) {
    let tmp = TempDir::new("restart");
    // Tokens that are already stale when the next run starts.
    let setup = Setup::new(30);
    let file_store = || Arc::new(mcpwire::oauth::FileTokenStore::new(&tmp.0));
    let options = |setup: &Setup| {
        let mut o = setup.options();
        o.oauth.as_mut().unwrap().store = file_store();
        o
    };
    rt.block_on(async {
        let client = rt
            .connect(&ServerConfig::http(MCP), options(&setup))
            .await
            .expect("connected");
        client.call_tool("echo", json!({})).await.expect("called");
        client.close().await;
    });
    // The layout: a 0700 folder, 0600 files named by hashes, no token or URL in a name.
    let files = files_under(&tmp.0);
    let names: Vec<String> = files
        .iter()
        .map(|p| p.strip_prefix(&tmp.0).unwrap().display().to_string())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("tokens/")), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("clients/")), "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| !n.contains("access") && !n.contains("127.0.0.1")),
        "{names:?}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&tmp.0), 0o700);
        for f in files.iter().filter(|p| p.is_file()) {
            assert_eq!(mode(f), 0o600, "{}", f.display());
        }
    }
    let sign_ins = file_store().sign_ins().unwrap();
    assert_eq!(sign_ins.len(), 1);
    assert_eq!(
        (sign_ins[0].server.as_str(), sign_ins[0].issuer.as_str()),
        (MCP, AS)
    );
    assert!(sign_ins[0].refreshable);

    // The next run: the server no longer takes the old token; the kept refresh token does,
    // with no sign-in and no registration.
    setup.fake.revoke();
    rt.block_on(async {
        let client = rt
            .connect(&ServerConfig::http(MCP), options(&setup))
            .await
            .expect("connected");
        client.call_tool("echo", json!({})).await.expect("called");
        client.close().await;
    });
    let s = setup.server();
    assert_eq!(
        (s.authorizations, s.registrations, s.refresh_grants),
        (1, 1, 1)
    );
    drop(s);
    // Logging out forgets the tokens, not the client.
    rt.block_on(mcpwire::oauth::TokenStore::remove(&*file_store(), MCP))
        .unwrap();
    assert!(file_store().sign_ins().unwrap().is_empty());
}

on_every_runtime!(
    a_sign_in_is_kept_in_files_and_survives_a_restart_with_an_expired_token_refreshed
);

/// Run by the crash test as a child: saves credentials in a loop until killed.
#[test]
#[ignore = "a child process of a_write_killed_halfway_leaves_the_old_token_whole"]
fn store_writer_child() {
    let Some(dir) = std::env::var_os("MCPWIRE_TEST_STORE_DIR") else {
        panic!("MCPWIRE_TEST_STORE_DIR is not set: this runs as a child of the crash test");
    };
    let store = mcpwire::oauth::FileTokenStore::new(dir);
    let big = "x".repeat(256 * 1024);
    for i in 0u64.. {
        let mut c = sample_credentials(&format!("token-{i}"));
        c.tokens.extra.insert("padding".into(), json!(big));
        smol::block_on(mcpwire::oauth::TokenStore::save(&store, MCP, c)).unwrap();
        if i == 0 {
            println!("first written");
        }
    }
}

fn sample_credentials(token: &str) -> mcpwire::oauth::Credentials {
    let tokens = serde_json::from_value(json!({"access_token": token, "token_type": "Bearer",
        "expires_at": 4_000_000_000u64, "refresh_token": "r", "scopes": ["a"], "id_token": null,
        "issued_token_type": null}))
    .unwrap();
    mcpwire::oauth::Credentials {
        tokens,
        client_auth: serde_json::from_value(json!({"method": "none", "client_id": "c"})).unwrap(),
        registration: None,
        issuer: AS.into(),
        resource: None,
        token_endpoint: Url::parse("http://127.0.0.1:9/as/token").unwrap(),
        requested_scopes: vec!["a".into()],
        authorizations: 1,
    }
}

#[test]
fn a_write_killed_halfway_leaves_the_old_token_whole() {
    use std::io::BufRead;
    let tmp = TempDir::new("crash");
    let store = mcpwire::oauth::FileTokenStore::new(&tmp.0);
    for round in 0..10u64 {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", "store_writer_child", "--nocapture"])
            .env("MCPWIRE_TEST_STORE_DIR", &tmp.0)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the test binary runs again");
        // Wait until it has written once, then kill it at some point of a later write.
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while !line.contains("first written") {
            line.clear();
            assert!(
                out.read_line(&mut line).unwrap() > 0,
                "the writer ended early"
            );
        }
        std::thread::sleep(Duration::from_millis(5 + round * 7));
        child.kill().unwrap();
        child.wait().unwrap();
        let loaded = smol::block_on(mcpwire::oauth::TokenStore::load(&store, MCP))
            .unwrap()
            .expect("a whole token after the kill");
        assert!(loaded.tokens.access_token.starts_with("token-"));
        assert_eq!(
            loaded.tokens.extra["padding"].as_str().map(str::len),
            Some(256 * 1024)
        );
    }
}

fn the_terminal_sign_in_catches_the_redirect_and_ignores_stray_requests(rt: &Rt) {
    use std::io::{Read, Write};
    let setup = Setup::new(3600);
    let authorizer = mcpwire::oauth::LoopbackAuthorizer::bind(0)
        .expect("a port on 127.0.0.1")
        .open_browser(false);
    let redirect = authorizer.redirect_uri();
    assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"));
    let port: u16 = redirect
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/callback")
        .parse()
        .unwrap();
    // A browser that follows the authorization server's redirect itself: stray requests
    // first, then the redirect with the code.
    let statuses = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = statuses.clone();
    // The browser's thread, joined before its statuses are read (it records the last one
    // after the sign-in it completes may already have let the call finish).
    let browsers = Arc::new(Mutex::new(Vec::<std::thread::JoinHandle<()>>::new()));
    let started = browsers.clone();
    let authorizer = authorizer.show_url(move |url: &Url| {
        let state = url
            .query_pairs()
            .find(|(k, _)| k == "state")
            .map(|(_, v)| v.into_owned())
            .unwrap();
        let redirect_uri = url
            .query_pairs()
            .find(|(k, _)| k == "redirect_uri")
            .map(|(_, v)| v.into_owned())
            .unwrap();
        let seen = seen.clone();
        let browser = std::thread::spawn(move || {
            let get = |target: &str| {
                let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
                write!(s, "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
                let mut answer = String::new();
                s.read_to_string(&mut answer).unwrap();
                let status = answer.lines().next().unwrap_or("").to_owned();
                seen.lock().unwrap().push(status);
            };
            get("/favicon.ico");
            get("/callback?code=forged&state=not-yours");
            // The `302` the authorization server answers, followed.
            let location = format!("{redirect_uri}?code=the-code&state={state}");
            let target = location.trim_start_matches(&format!("http://127.0.0.1:{port}"));
            get(target);
        });
        started.lock().unwrap().push(browser);
    });
    let mut options = setup.options();
    let mut oauth = OAuthOptions::new(authorizer, &redirect);
    oauth.store = setup.store.clone();
    options.oauth = Some(oauth);
    rt.block_on(async {
        let client = rt
            .connect(&ServerConfig::http(MCP), options)
            .await
            .expect("connected");
        client.call_tool("echo", json!({})).await.expect("called");
        client.close().await;
    });
    for browser in std::mem::take(&mut *browsers.lock().unwrap()) {
        browser.join().unwrap();
    }
    let statuses = statuses.lock().unwrap().clone();
    assert_eq!(
        statuses,
        [
            "HTTP/1.1 404 Not Found",
            "HTTP/1.1 400 Bad Request",
            "HTTP/1.1 200 OK"
        ]
    );
    assert_eq!(setup.server().code_grants, 1);
}

on_every_runtime!(the_terminal_sign_in_catches_the_redirect_and_ignores_stray_requests);

// ---- a server that offers no OAuth, and hosts that cannot sign in ----

/// A server that wants credentials and offers no OAuth: `401` with a bare `Bearer` challenge at
/// the MCP endpoint, `404` everywhere else (the 2025-03-26 default `/register` too). Keeps
/// `METHOD URL` of every request.
#[derive(Clone, Default)]
struct NoOAuthServer(Arc<Mutex<Vec<String>>>);

impl HttpBackend for NoOAuthServer {
    fn send(&self, r: HttpRequest) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
        self.0
            .lock()
            .unwrap()
            .push(format!("{} {}", r.method.as_str(), r.url));
        let answer = if r.url == MCP {
            response(401, &[("WWW-Authenticate", "Bearer")], Vec::new())
        } else {
            response(404, &[], Vec::new())
        };
        Box::pin(async move { Ok(answer) })
    }
}

/// A host that cannot ask the user (no terminal): says so up front.
struct CannotAsk(Arc<AtomicUsize>);

impl Authorizer for CannotAsk {
    fn authorize(&self, _url: &Url) -> BoxFuture<Result<String, AuthorizeError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err(AuthorizeError("asked anyway".into())) })
    }

    fn can_sign_in(&self) -> Result<(), AuthorizeError> {
        Err(AuthorizeError("this host has no one to ask".into()))
    }
}

fn a_server_without_oauth_says_so_and_nothing_is_registered(rt: &Rt) {
    let well_known = [
        "GET http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp",
        "GET http://127.0.0.1:9/.well-known/oauth-protected-resource",
        "GET http://127.0.0.1:9/.well-known/oauth-authorization-server",
        "GET http://127.0.0.1:9/.well-known/openid-configuration",
    ];
    for (era, can_ask) in [
        (Era::Handshake, true),
        (Era::Auto, true),
        (Era::Handshake, false),
    ] {
        let server = NoOAuthServer::default();
        let asked = Arc::new(AtomicUsize::new(0));
        let oauth = if can_ask {
            let fake = Fake::default();
            let user = User {
                fake: fake.clone(),
                decline: Arc::default(),
            };
            OAuthOptions::new(user, REDIRECT)
        } else {
            OAuthOptions::new(CannotAsk(asked.clone()), REDIRECT)
        };
        let options = ConnectOptions {
            era,
            http_backend: Some(Arc::new(server.clone())),
            oauth: Some(oauth),
            ..ConnectOptions::default()
        };
        let error = rt
            .block_on(rt.connect(&ServerConfig::http(MCP), options))
            .expect_err("no token to be had");
        let words = error.to_string();
        for part in [
            "the server wants credentials (HTTP 401) but offers no OAuth sign-in",
            &format!(
                "no metadata at {}",
                well_known[0].trim_start_matches("GET ")
            ),
            "give it a token yourself, as a static `Authorization: Bearer <token>` header",
            "`HttpConfig::headers` of its `ServerConfig`",
        ] {
            assert!(words.contains(part), "{era:?}: {part:?} is not in: {words}");
        }
        // Library words only: no command line's flags.
        assert!(!words.contains("--"), "{words}");
        let log = server.0.lock().unwrap().clone();
        // The MCP request refused, the four places discovery looks at, and, a bare `Bearer`
        // being what a 2025-03-26 server without metadata says, its default registration
        // endpoint when a sign-in can be made (its 404 ends it): nothing registered, no user
        // asked, no authorization endpoint visited.
        assert_eq!(
            log.iter()
                .filter(|l| l.starts_with("GET "))
                .collect::<Vec<_>>(),
            well_known,
            "{era:?}: {log:?}"
        );
        let registration = "POST http://127.0.0.1:9/register";
        let posts: Vec<&String> = log.iter().filter(|l| *l == registration).collect();
        assert_eq!(posts.len(), usize::from(can_ask), "{era:?}: {log:?}");
        if can_ask {
            assert!(
                words.contains("no registration endpoint at http://127.0.0.1:9/register"),
                "{words}"
            );
        }
        assert!(!log.iter().any(|l| l.contains("authorize")), "{log:?}");
        assert_eq!(
            log.iter().filter(|l| l.ends_with(MCP)).count(),
            1,
            "{era:?}: {log:?}"
        );
        assert_eq!(asked.load(Ordering::SeqCst), 0);
    }
}

on_every_runtime!(a_server_without_oauth_says_so_and_nothing_is_registered);

fn a_host_that_cannot_ask_registers_nothing_and_still_uses_a_kept_sign_in(rt: &Rt) {
    let setup = Setup::new(3600);
    let asked = Arc::new(AtomicUsize::new(0));
    let cannot_ask = |setup: &Setup| {
        let mut options = setup.options();
        let mut oauth = OAuthOptions::new(CannotAsk(asked.clone()), REDIRECT);
        oauth.store = setup.store.clone();
        options.oauth = Some(oauth);
        options
    };
    // Never signed in: discovery, then the host's reason; no registration, no authorization.
    let error = rt
        .block_on(rt.connect(&ServerConfig::http(MCP), cannot_ask(&setup)))
        .expect_err("no sign-in to be had");
    let words = error.to_string();
    assert!(
        words.contains(&format!(
            "the server asks for a sign-in (authorization server {AS}) and none can be made: \
             this host has no one to ask"
        )),
        "{words}"
    );
    {
        let s = setup.server();
        assert_eq!((s.registrations, s.authorizations), (0, 0));
    }
    assert_eq!(asked.load(Ordering::SeqCst), 0);

    // Signed in once (by a host that can ask), the sign-in kept is used and refreshed.
    rt.block_on(async {
        let client = setup.connect(rt).await;
        client.call_tool("echo", json!({})).await.expect("called");
        client.close().await;
        let client = rt
            .connect(&ServerConfig::http(MCP), cannot_ask(&setup))
            .await
            .expect("connected with the kept token");
        setup.fake.revoke();
        client
            .call_tool("echo", json!({}))
            .await
            .expect("refreshed");
        client.close().await;
    });
    let s = setup.server();
    assert_eq!((s.registrations, s.authorizations), (1, 1));
    assert_eq!(s.refresh_grants, 1);
    assert_eq!(asked.load(Ordering::SeqCst), 0);
}

on_every_runtime!(a_host_that_cannot_ask_registers_nothing_and_still_uses_a_kept_sign_in);
