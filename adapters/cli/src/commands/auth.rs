//! Signing in to HTTP servers that need it: `mcpwire auth login|list|logout`, and the OAuth
//! options every command uses against an HTTP server.
//!
//! A server that answers `401` gets the OAuth flow: a token kept from an earlier sign-in (or
//! refreshed) when there is one, else, on a terminal, a sign-in in the browser (the page's
//! address on stderr; the redirect caught on 127.0.0.1, or pasted). Sign-ins are kept in the
//! user's state folder (`mcpwire::oauth::FileTokenStore`), or with the `keychain` feature in
//! the OS keychain when there is one (`mcpwire::oauth::KeychainTokenStore`). A static token (`--bearer-env`,
//! `--header "Authorization: …"`, a configuration file's headers) skips all of it.
//!
//! When no sign-in can happen (`--no-sign-in`, no terminal, servers run together), no client is
//! registered either: the failure says why and how to give a token instead. A server that
//! offers no OAuth at all says so, with the same advice in this command line's words.

use std::io::IsTerminal;
use std::sync::{Arc, OnceLock};

use clap::{Args, Subcommand};
use mcpwire::hosts::OAuthSettings;
#[cfg(feature = "keychain")]
use mcpwire::oauth::KeychainTokenStore;
use mcpwire::oauth::{
    AuthorizeError, Authorizer, FileTokenStore, LoopbackAuthorizer, MemoryTokenStore, OAuthOptions,
    StoreError, StoredSignIn, TokenStore, Url,
};
use mcpwire::{BoxFuture, ConnectOptions, ServerConfig};
use serde_json::json;

use crate::exit_codes;
use crate::failure::Failure;

/// How a sign-in may happen (for every command against an HTTP server).
#[derive(Args, Debug, Default)]
pub(crate) struct SignInArgs {
    /// Do not open a browser to sign in: only print the sign-in page's address.
    #[arg(long, global = true)]
    no_browser: bool,
    /// Never sign in: a server that asks for a sign-in fails the command (kept sign-ins are
    /// still used and refreshed).
    #[arg(long, global = true, conflicts_with = "no_browser")]
    no_sign_in: bool,
    /// The port on 127.0.0.1 the sign-in's redirect comes back to (default: any free port;
    /// set it for an authorization server that only takes a registered redirect URI).
    #[arg(long, global = true, value_name = "PORT")]
    redirect_port: Option<u16>,
}

/// `mcpwire auth …`.
#[derive(Args, Debug)]
pub(crate) struct AuthArgs {
    #[command(subcommand)]
    pub(crate) command: AuthCommand,
}

#[derive(Subcommand, Debug)]
pub(crate) enum AuthCommand {
    /// Signs in to the --http server (or --server NAME, --config FILE) now, forgetting any
    /// sign-in kept for it: the sign-in page opens in the browser (or its address is printed
    /// with --no-browser); paste the address the browser ends on if it cannot reach this
    /// machine.
    Login,
    /// The sign-ins kept: server, authorization server, expiry, scopes (never a token).
    List {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Forgets the sign-in kept for the --http server (or every one with --all).
    Logout {
        /// Forget every sign-in.
        #[arg(long)]
        all: bool,
    },
}

/// Where sign-ins are kept between runs.
#[derive(Clone)]
enum Kept {
    /// Files in the user's state folder.
    Files(FileTokenStore),
    /// The OS keychain, with its index in the state folder.
    #[cfg(feature = "keychain")]
    Keychain(KeychainTokenStore),
}

impl Kept {
    fn sign_ins(&self) -> Result<Vec<StoredSignIn>, StoreError> {
        match self {
            Kept::Files(s) => s.sign_ins(),
            #[cfg(feature = "keychain")]
            Kept::Keychain(s) => s.sign_ins(),
        }
    }

    fn token_store(&self) -> Arc<dyn TokenStore> {
        match self {
            Kept::Files(s) => Arc::new(s.clone()),
            #[cfg(feature = "keychain")]
            Kept::Keychain(s) => Arc::new(s.clone()),
        }
    }

    /// Where, in words.
    fn place(&self) -> String {
        match self {
            Kept::Files(s) => s.dir().display().to_string(),
            #[cfg(feature = "keychain")]
            Kept::Keychain(_) => "the OS keychain".into(),
        }
    }
}

/// Where sign-ins are kept, chosen once per run: the OS keychain when the `keychain` feature is
/// on and there is one, else the user's state folder (with a one-line warning when the
/// keychain was wanted).
fn kept() -> Result<Kept, StoreError> {
    static KEPT: OnceLock<Result<Kept, StoreError>> = OnceLock::new();
    KEPT.get_or_init(|| {
        let files = FileTokenStore::open_default()?;
        #[cfg(feature = "keychain")]
        match KeychainTokenStore::open_in(files.dir()) {
            Ok(keychain) => return Ok(Kept::Keychain(keychain)),
            Err(e) => errln!(
                "mcpwire: {}; keeping sign-ins in {}",
                e.0,
                files.dir().display()
            ),
        }
        Ok(Kept::Files(files))
    })
    .clone()
}

/// The store of sign-ins: the keychain or the user's state folder ([`kept`]), or (with a
/// warning) memory.
fn store() -> Arc<dyn TokenStore> {
    match kept() {
        Ok(kept) => kept.token_store(),
        Err(e) => {
            errln!("mcpwire: {e}; this sign-in will not be kept");
            Arc::new(MemoryTokenStore::default())
        }
    }
}

/// How to give an `--http` server a token, in this command line's words.
const TOKEN_FLAGS: &str = "--bearer-env VAR (the token read from that environment variable) or \
    --header 'Authorization: Bearer <token>'";

/// Cannot sign in, and says why and what to do instead: the flow then registers no client
/// and never asks.
struct NoSignIn(String);

impl Authorizer for NoSignIn {
    fn authorize(&self, _url: &Url) -> BoxFuture<Result<String, AuthorizeError>> {
        let why = self.0.clone();
        Box::pin(async move { Err(AuthorizeError(why)) })
    }

    fn can_sign_in(&self) -> Result<(), AuthorizeError> {
        Err(AuthorizeError(self.0.clone()))
    }
}

/// Whether the server's configuration carries a token of its own.
fn static_token(config: &ServerConfig) -> bool {
    match config {
        ServerConfig::Http(h) => h
            .headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization")),
        _ => true,
    }
}

/// Sets `options.oauth` for an HTTP server without a static token. `login`: the command is
/// `auth login` (a sign-in is what it is for, on a terminal or not).
pub(crate) fn apply(
    args: &SignInArgs,
    config: &ServerConfig,
    file: Option<&OAuthSettings>,
    options: &mut ConnectOptions,
    login: bool,
) -> Result<(), Failure> {
    if static_token(config) {
        return Ok(());
    }
    let interactive = login || crate::output::stderr_is_terminal();
    let (authorizer, redirect): (Arc<dyn Authorizer>, String) = if args.no_sign_in {
        let why = format!("--no-sign-in forbids one; give it a token with {TOKEN_FLAGS} instead");
        (Arc::new(NoSignIn(why)), "http://127.0.0.1/callback".into())
    } else if !interactive {
        let why = format!(
            "run `mcpwire auth login` with the same server options on a terminal first, or \
             give it a token with {TOKEN_FLAGS}"
        );
        (Arc::new(NoSignIn(why)), "http://127.0.0.1/callback".into())
    } else {
        // The file's redirect URI, unless --redirect-port says otherwise.
        let listener = match (
            args.redirect_port,
            file.and_then(|f| f.redirect_uri.as_deref()),
        ) {
            (None, Some(uri)) => LoopbackAuthorizer::bind_redirect(uri),
            (port, _) => LoopbackAuthorizer::bind(port.unwrap_or(0)),
        };
        let listener = listener.map_err(|e| {
            Failure::new(
                exit_codes::CONNECT,
                format!("cannot listen on 127.0.0.1 for the sign-in's redirect: {e}"),
            )
        })?;
        let redirect = listener.redirect_uri();
        let listener = listener
            .open_browser(!args.no_browser)
            .read_stdin(login || std::io::stdin().is_terminal())
            .show_url(|url: &Url| {
                errln!("mcpwire: sign in at this address (or paste here where the browser ends):");
                errln!("  {url}");
            });
        (Arc::new(listener), redirect)
    };
    let authorizer: Arc<dyn Authorizer> = if login && !args.no_sign_in {
        // `auth login` waits for the person: Ctrl-C cancels the sign-in (a second one ends
        // the process at once).
        crate::stop::catch();
        Arc::new(Interruptible(authorizer))
    } else {
        authorizer
    };
    let mut oauth = OAuthOptions::new(Shared(authorizer), &redirect);
    oauth.store = store();
    oauth.client_name = "mcpwire (command line)".into();
    if let Some(file) = file {
        oauth.use_file_settings(file);
    }
    options.oauth = Some(oauth);
    Ok(())
}

/// The OAuth options of the servers a configuration file runs together (the Manager): kept
/// sign-ins are used and refreshed, but none is made (several servers cannot all ask at once)
/// and no client is registered; a server that needs one fails saying how to sign in to it.
pub(crate) fn for_manager(args: &SignInArgs) -> Option<OAuthOptions> {
    let in_file = "an `Authorization` header among its `headers` in the file";
    let why = if args.no_sign_in {
        format!("--no-sign-in forbids one; give it a token with {in_file} instead")
    } else {
        format!(
            "run `mcpwire auth login` with --config FILE --server NAME first, or give it a \
             token with {in_file}"
        )
    };
    let mut oauth = OAuthOptions::new(NoSignIn(why), "http://127.0.0.1/callback");
    oauth.store = store();
    oauth.client_name = "mcpwire (command line)".into();
    Some(oauth)
}

/// An authorizer chosen at run time.
struct Shared(Arc<dyn Authorizer>);

impl Authorizer for Shared {
    fn authorize(&self, url: &Url) -> BoxFuture<Result<String, AuthorizeError>> {
        self.0.authorize(url)
    }

    fn can_sign_in(&self) -> Result<(), AuthorizeError> {
        self.0.can_sign_in()
    }
}

/// An authorizer that a stop request (Ctrl-C) cancels, as a typed outcome of the sign-in.
struct Interruptible(Arc<dyn Authorizer>);

impl Authorizer for Interruptible {
    fn authorize(&self, url: &Url) -> BoxFuture<Result<String, AuthorizeError>> {
        let sign_in = self.0.authorize(url);
        Box::pin(futures_lite::future::or(sign_in, async {
            let request = crate::stop::wait().await.name();
            Err(AuthorizeError(format!(
                "the sign-in was cancelled ({request})"
            )))
        }))
    }

    fn can_sign_in(&self) -> Result<(), AuthorizeError> {
        self.0.can_sign_in()
    }
}

/// Before `auth login` connects: the sign-in kept for the server is forgotten, so a new one
/// is made.
pub(crate) fn forget(config: &ServerConfig) -> Result<(), Failure> {
    let ServerConfig::Http(h) = config else {
        return Err(Failure::new(
            exit_codes::USAGE,
            "auth login needs an HTTP server (--http URL, or --server NAME / --config FILE)",
        ));
    };
    if static_token(config) {
        return Err(Failure::new(
            exit_codes::USAGE,
            "this server is given a token of its own (an Authorization header): nothing to sign in to",
        ));
    }
    smol::block_on(store().remove(&h.url))
        .map_err(|e| Failure::new(exit_codes::CONNECT, e.to_string()))
}

/// What `auth login` prints once connected: whether a sign-in happened.
pub(crate) fn logged_in(config: &ServerConfig) -> Result<u8, Failure> {
    let ServerConfig::Http(h) = config else {
        return Ok(exit_codes::OK);
    };
    let kept = kept().and_then(|s| s.sign_ins()).unwrap_or_default();
    match kept.iter().find(|s| s.server == h.url) {
        Some(s) => {
            outln!(
                "Signed in to {} (authorization server {}; {})",
                s.server,
                s.issuer,
                expiry(s.expires_at)
            );
        }
        None => outln!("{} did not ask for a sign-in", h.url),
    }
    Ok(exit_codes::OK)
}

/// `auth list` and `auth logout`, which connect to nothing.
pub(crate) fn offline(command: &AuthCommand, config: Option<&ServerConfig>) -> Result<u8, Failure> {
    let kept = kept().map_err(|e| Failure::new(exit_codes::USAGE, e.to_string()))?;
    match command {
        AuthCommand::List { json } => {
            let all = kept
                .sign_ins()
                .map_err(|e| Failure::new(exit_codes::CONNECT, e.to_string()))?;
            if *json {
                let items: Vec<_> = all
                    .iter()
                    .map(|s| {
                        json!({"server": s.server, "issuer": s.issuer, "expiresAt": s.expires_at,
                            "refreshable": s.refreshable, "scopes": s.scopes})
                    })
                    .collect();
                outln!("{}", serde_json::Value::Array(items));
            } else if all.is_empty() {
                outln!("no sign-ins kept (in {})", kept.place());
            } else {
                for s in &all {
                    let scopes = if s.scopes.is_empty() {
                        String::new()
                    } else {
                        format!("; scopes {}", s.scopes.join(" "))
                    };
                    let refresh = if s.refreshable { "; refreshable" } else { "" };
                    outln!(
                        "{}  (authorization server {}; {}{refresh}{scopes})",
                        s.server,
                        s.issuer,
                        expiry(s.expires_at)
                    );
                }
            }
            Ok(exit_codes::OK)
        }
        AuthCommand::Logout { all } => {
            let servers: Vec<String> = if *all {
                let mut v: Vec<String> = kept
                    .sign_ins()
                    .map_err(|e| Failure::new(exit_codes::CONNECT, e.to_string()))?
                    .into_iter()
                    .map(|s| s.server)
                    .collect();
                v.dedup();
                v
            } else {
                match config {
                    Some(ServerConfig::Http(h)) => vec![h.url.clone()],
                    _ => return Err(Failure::new(
                        exit_codes::USAGE,
                        "auth logout needs --http URL (or --server NAME, --config FILE), or --all",
                    )),
                }
            };
            let store = kept.token_store();
            for server in &servers {
                smol::block_on(store.remove(server))
                    .map_err(|e| Failure::new(exit_codes::CONNECT, e.to_string()))?;
                outln!("signed out of {server}");
            }
            Ok(exit_codes::OK)
        }
        AuthCommand::Login => unreachable!("auth login connects"),
    }
}

/// When a token expires, in words.
fn expiry(expires_at: Option<u64>) -> String {
    let Some(at) = expires_at else {
        return "no expiry given".into();
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    match at.checked_sub(now) {
        Some(left) if left >= 3600 => format!("expires in {} h", left / 3600),
        Some(left) if left >= 60 => format!("expires in {} min", left / 60),
        Some(left) => format!("expires in {left} s"),
        None => "expired (refreshed when next used)".into(),
    }
}
