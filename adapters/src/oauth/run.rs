//! Carries out one [`OAuthFlow`]: its HTTP requests over the connection's backend (redirects
//! never followed, bodies read whole under a cap), the user's part through the
//! [`Authorizer`](super::Authorizer), each under the flow's own deadline.

use std::future::Future;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use futures_lite::{AsyncReadExt, FutureExt};
use mcpwire_core::error::HttpErrorKind;
use mcpwire_core::oauth::flow::{Credentials, FlowError, FlowOutput, OAuthFlow};
use mcpwire_core::oauth::token::HttpRequestSpec;
use mcpwire_core::{HttpMethod, HttpRequest};

use super::options::OAuthOptions;
use crate::http::backend::HttpBackend;
use crate::runtime::Runtime;

/// The largest metadata, registration or token response read (1 MiB).
const MAX_BODY: u64 = 1024 * 1024;

/// Seconds since the Unix epoch, for token expiry.
pub(super) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Runs `flow` to its end, its deadlines on `runtime`'s timers.
pub(super) async fn drive(
    mut flow: OAuthFlow,
    backend: Arc<dyn HttpBackend>,
    options: &OAuthOptions,
    runtime: &Runtime,
) -> Result<Credentials, FlowError> {
    loop {
        let Some(output) = flow.poll_output() else {
            // The flow always asks for something until it ends.
            return Err(FlowError::Transport {
                during: "authorization",
                reason: "the flow stopped without an outcome".into(),
            });
        };
        match output {
            FlowOutput::Done(credentials) => return Ok(*credentials),
            FlowOutput::Failed(error) => return Err(error),
            FlowOutput::Http { exchange, request } => {
                let deadline = flow.poll_timeout();
                let exchanged = exchange_http(&*backend, request, options);
                match within(runtime, deadline, exchanged).await {
                    None => timed_out(&mut flow, deadline),
                    Some(Ok((status, headers, body))) => {
                        let now = Instant::now();
                        flow.handle_response(now, exchange, status, &headers, &body, unix_now());
                    }
                    Some(Err(reason)) => flow.handle_failure(Instant::now(), exchange, &reason),
                }
            }
            FlowOutput::Authorize { url } => {
                let deadline = flow.poll_timeout();
                match within(runtime, deadline, options.authorizer.authorize(&url)).await {
                    None => timed_out(&mut flow, deadline),
                    Some(Ok(redirect)) => {
                        if let Err(error) = flow.handle_redirect(Instant::now(), &redirect) {
                            if !flow.is_finished() {
                                // Not the redirect this flow waits for (another `state`): with
                                // one answer from the authorizer there is no other to wait for.
                                return Err(FlowError::Callback(error));
                            }
                        }
                    }
                    Some(Err(error)) => {
                        return Err(FlowError::Transport {
                            during: "user's authorization",
                            reason: error.0,
                        })
                    }
                }
            }
        }
    }
}

/// The deadline passed: the flow is told at (or after) it.
fn timed_out(flow: &mut OAuthFlow, deadline: Option<Instant>) {
    let now = Instant::now();
    flow.handle_timeout(deadline.map_or(now, |d| d.max(now)));
}

/// `future`'s output, or `None` when `deadline` passes first (on `runtime`'s timer).
async fn within<T>(
    runtime: &Runtime,
    deadline: Option<Instant>,
    future: impl Future<Output = T>,
) -> Option<T> {
    let Some(deadline) = deadline else {
        return Some(future.await);
    };
    async { Some(future.await) }
        .or(async {
            runtime.sleep_until(deadline).await;
            None
        })
        .await
}

/// Whether `url` may be reached: `https`, or `http` on a loopback host (or anywhere when
/// allowed).
fn allowed(url: &url::Url, options: &OAuthOptions) -> Result<(), String> {
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback || options.allow_insecure_http => Ok(()),
        _ => Err(format!(
            "{} is not https (authorization servers must use TLS; \
             OAuthOptions::allow_insecure_http allows plain http)",
            mcpwire_core::error::redact_url(url.as_str())
        )),
    }
}

/// One request of the flow: its status, headers and whole body.
async fn exchange_http(
    backend: &dyn HttpBackend,
    spec: HttpRequestSpec,
    options: &OAuthOptions,
) -> Result<(u16, Vec<(String, String)>, Vec<u8>), String> {
    allowed(&spec.url, options)?;
    let method = match spec.method {
        "POST" => HttpMethod::Post,
        "DELETE" => HttpMethod::Delete,
        _ => HttpMethod::Get,
    };
    let mut headers = spec.headers;
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("user-agent"))
    {
        headers.push(("User-Agent".into(), mcpwire_core::header::USER_AGENT.into()));
    }
    let request = HttpRequest {
        exchange: 0,
        method,
        url: spec.url.to_string(),
        headers,
        body: spec.body,
    };
    let response = match backend.send(request.clone()).await {
        // A discovery GET that met a pooled connection the server had closed goes once more,
        // on a new one: reading metadata twice does no harm. A POST never does (an
        // authorization code is good for one use).
        Err(f) if f.kind == HttpErrorKind::StaleConnection && method == HttpMethod::Get => {
            backend.send(request).await
        }
        sent => sent,
    };
    let response = response.map_err(|f| f.message)?;
    let mut body = Vec::new();
    response
        .body
        .take(MAX_BODY)
        .read_to_end(&mut body)
        .await
        .map_err(|e| format!("reading the response: {e}"))?;
    Ok((response.status, response.headers, body))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use mcpwire_core::error::HttpErrorKind;
    use mcpwire_core::oauth::token::HttpRequestSpec;

    use super::exchange_http;
    use crate::future::BoxFuture;
    use crate::http::backend::{HttpBackend, HttpFailure, HttpResponse};
    use crate::oauth::options::OAuthOptions;
    use mcpwire_core::oauth::grants::Grant;

    /// Fails each request's first attempt as a stale pooled connection, then answers `200 {}`;
    /// remembers each method it was asked.
    #[derive(Default)]
    struct StaleOnce(Mutex<Vec<&'static str>>);

    impl HttpBackend for StaleOnce {
        fn send(
            &self,
            request: mcpwire_core::HttpRequest,
        ) -> BoxFuture<Result<HttpResponse, HttpFailure>> {
            let mut seen = self.0.lock().unwrap();
            seen.push(request.method.as_str());
            let first = seen.len() % 2 == 1;
            Box::pin(async move {
                if first {
                    return Err(HttpFailure::new(
                        HttpErrorKind::StaleConnection,
                        "the request went on a reused connection and the server had closed it",
                        false,
                    ));
                }
                let body = futures_lite::io::Cursor::new(b"{}".to_vec());
                Ok(HttpResponse::new(200, Vec::new(), Box::pin(body)))
            })
        }
    }

    #[test]
    fn a_discovery_get_goes_once_more_after_a_stale_connection_a_token_post_never() {
        let options = OAuthOptions::without_user(Grant::JwtBearer {
            client_id: None,
            assertion: "a".into(),
        });
        let url =
            url::Url::parse("http://127.0.0.1:1/.well-known/oauth-protected-resource").unwrap();
        let backend = StaleOnce::default();
        let get = HttpRequestSpec {
            method: "GET",
            url: url.clone(),
            headers: Vec::new(),
            body: Vec::new(),
        };
        let got = futures_lite::future::block_on(exchange_http(&backend, get, &options));
        assert_eq!(got.map(|(status, _, _)| status), Ok(200));
        assert_eq!(*backend.0.lock().unwrap(), ["GET", "GET"]);

        let backend = StaleOnce::default();
        let post = HttpRequestSpec {
            method: "POST",
            url,
            headers: Vec::new(),
            body: b"grant_type=authorization_code&code=x".to_vec(),
        };
        let got = futures_lite::future::block_on(exchange_http(&backend, post, &options));
        assert!(got.unwrap_err().contains("reused connection"));
        assert_eq!(*backend.0.lock().unwrap(), ["POST"]);
    }
}
