//! A server that needs OAuth: the connection finds its authorization server, registers, asks
//! the host to sign the user in, exchanges the code and sends every request with the token.
//! The host's part is an `Authorizer`: it shows the sign-in page and hands back where the
//! browser was redirected.
//!
//! ```sh
//! python3 tests/peers/py_oauth_server.py --port 8766 &    # approves every sign-in at once
//! cargo run -p mcpwire --example http_oauth -- http://127.0.0.1:8766/mcp
//! ```
//!
//! Here the "browser" fetches the sign-in page itself and reads its redirect, which is what the
//! repository's test authorization server expects; a real host opens a browser and catches the
//! redirect on `127.0.0.1`, as the command line does.

use std::sync::Arc;

use mcpwire::core::{HttpMethod, HttpRequest};
use mcpwire::oauth::{AuthorizeError, Authorizer, OAuthOptions, Url};
use mcpwire::{BoxFuture, ConnectOptions, HttpBackend, IsahcBackend, ServerConfig};

/// A stand-in for the user's browser: GETs the sign-in page and reads the redirect.
struct Browser {
    http: Arc<dyn HttpBackend>,
}

impl Authorizer for Browser {
    fn authorize(&self, url: &Url) -> BoxFuture<Result<String, AuthorizeError>> {
        println!(
            "sign in at {}",
            url.as_str().split('?').next().unwrap_or_default()
        );
        let request = HttpRequest {
            exchange: 0,
            method: HttpMethod::Get,
            url: url.to_string(),
            headers: Vec::new(),
            body: Vec::new(),
        };
        let sent = self.http.send(request);
        Box::pin(async move {
            let page = sent.await.map_err(|f| AuthorizeError(f.message))?;
            let redirect = page
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("location"));
            match redirect {
                Some((_, to)) => Ok(to.clone()),
                None => Err(AuthorizeError(format!("no redirect: HTTP {}", page.status))),
            }
        })
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(url) = std::env::args().nth(1) else {
        return Err("usage: http_oauth URL".into());
    };
    let browser = Browser {
        http: Arc::new(IsahcBackend::new()?),
    };
    let oauth = OAuthOptions::new(browser, "http://127.0.0.1:8976/callback");
    let options = ConnectOptions {
        oauth: Some(oauth),
        ..ConnectOptions::default()
    };
    smol::block_on(async {
        let client = mcpwire::connect_smol(&ServerConfig::http(url), options).await?;
        println!("signed in; era {:?}", client.era());
        for tool in client.list_tools().await? {
            println!("tool: {}", tool.name);
        }
        let who = client.call_tool("whoami", serde_json::json!({})).await?;
        println!("whoami: {}", who.text());
        client.close().await;
        Ok(())
    })
}
