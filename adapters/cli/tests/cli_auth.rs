//! `mcpwire auth` and signing in on demand, end to end against a Python MCP server that needs
//! OAuth (with its own authorization server): a command off a terminal says how to sign in;
//! `auth login` signs in through the loopback redirect (a browser stand-in follows the
//! authorization server's `302` itself) or with the address pasted on stdin; the sign-in is kept
//! and used by later commands; `auth list` shows it without a token; `auth logout` forgets it;
//! no token shows in any output, `--verbose` included; without a sign-in (off a terminal,
//! `--no-sign-in`) no client is registered. A server that wants credentials and offers no OAuth
//! at all: the failure says so and how to give a token, after the discovery it needs (and, for a
//! sign-in, the 2025-03-26 default registration endpoint a bare `Bearer` may mean), nothing
//! registered. Built with the `keychain` feature, where there is no OS keychain: one warning
//! line, and the sign-in kept in the state folder.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use common::peers::{python_oauth, skipped};
use common::{assert_contains, stderr, stdout, temp, BIN};

/// `mcpwire` with its sign-ins kept in `state`, and no OS keychain to find (no session bus:
/// built with the `keychain` feature, it falls back to `state`, never the developer's keychain).
fn mcpwire(state: &Path) -> Command {
    let mut command = common::command();
    command
        .env("MCPWIRE_STATE_DIR", state)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env("XDG_RUNTIME_DIR", state);
    command
}

/// Runs `mcpwire ARGS` with its sign-ins kept in `state`, stdin closed.
fn run(state: &Path, args: &[&str]) -> Output {
    mcpwire(state)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// A GET over plain HTTP/1.1: the status and the `Location`, if any.
fn get(url: &str) -> (u16, Option<String>, String) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut s = std::net::TcpStream::connect(host).expect("the server listens");
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let location = answer
        .lines()
        .find_map(|l| {
            l.strip_prefix("Location: ")
                .or(l.strip_prefix("location: "))
        })
        .map(str::to_owned);
    (status, location, answer)
}

/// The client ids the Python server's authorization server registered.
fn clients(url: &str) -> Vec<String> {
    let base = url.trim_end_matches("/mcp");
    let (_, _, answer) = get(&format!("{base}/clients"));
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("");
    serde_json::from_str(body).expect("the registered clients")
}

/// Starts `auth login` for `url`; reads the sign-in address it prints; `finish` plays the
/// browser (or the person pasting). Returns what the command printed and its exit code.
fn login(
    state: &Path,
    url: &str,
    finish: impl FnOnce(&str, &mut std::process::ChildStdin),
) -> Output {
    let mut child = mcpwire(state)
        .args(["--no-browser", "--http", url, "auth", "login"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let address = loop {
        let mut line = String::new();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "auth login ended without a sign-in address:\n{seen}"
        );
        seen.push_str(&line);
        if let Some(a) = line
            .trim()
            .strip_prefix("http://")
            .filter(|a| a.contains("/authorize?"))
        {
            break format!("http://{a}");
        }
    };
    finish(&address, &mut stdin);
    drop(stdin);
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let mut out = child.wait_with_output().unwrap();
    out.stderr = format!("{seen}{rest}").into_bytes();
    out
}

#[test]
fn sign_in_keep_use_list_and_sign_out_with_no_token_shown() {
    if skipped("sign_in_keep_use_list_and_sign_out_with_no_token_shown") {
        return;
    }
    let server = python_oauth();
    let url = server.url().to_owned();
    let state = temp("auth-state");
    let mut outputs = Vec::new();

    // Off a terminal, never signed in: a clear failure that says how to sign in.
    let o = run(&state, &["--http", &url, "tools"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_contains(&stderr(&o), "mcpwire auth login");
    assert_contains(&stderr(&o), "--bearer-env VAR");
    // A client is registered only for a sign-in.
    assert_eq!(clients(&url), Vec::<String>::new());
    outputs.push(o);

    // Signing in: the browser follows the authorization server's redirect to the listener.
    let o = login(&state, &url, |address, _| {
        let (status, location, _) = get(address);
        assert_eq!(status, 302);
        let location = location.expect("a redirect");
        assert!(location.starts_with("http://127.0.0.1:"), "{location}");
        let (status, _, page) = get(&location);
        assert_eq!(status, 200, "{page}");
        assert_contains(&page, "Signed in");
    });
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stdout(&o), &format!("Signed in to {url}"));
    outputs.push(o);

    // Later commands use the kept sign-in, with nothing asked.
    let o = run(&state, &["--verbose", "--http", &url, "call", "whoami"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "signed in");
    outputs.push(o);

    let o = run(&state, &["auth", "list"]);
    assert_contains(&stdout(&o), &url);
    assert_contains(&stdout(&o), "refreshable");
    outputs.push(o);
    let o = run(&state, &["auth", "list", "--json"]);
    let list: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(list.as_array().map(Vec::len), Some(1));
    assert_eq!(list[0]["server"], url.as_str());
    outputs.push(o);

    // Servers run together from a configuration file use the kept sign-in too.
    let config = state.join("servers.json");
    let file = serde_json::json!({"mcpServers": {
        "guarded": {"type": "http", "url": url},
        "demo": {"command": BIN, "args": ["serve-demo"]}
    }});
    std::fs::write(&config, file.to_string()).unwrap();
    let config = config.to_str().unwrap().to_owned();
    let o = run(&state, &["--config", &config, "tools"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stdout(&o), "guarded__whoami");
    assert_contains(&stdout(&o), "demo__echo");
    outputs.push(o);

    // Signing in again, by pasting the address the browser ended on.
    let o = login(&state, &url, |address, stdin| {
        let (_, location, _) = get(address);
        writeln!(stdin, "{}", location.expect("a redirect")).unwrap();
    });
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    outputs.push(o);

    // Signing out: forgotten, and the next command needs a sign-in again.
    let o = run(&state, &["--http", &url, "auth", "logout"]);
    assert_contains(&stdout(&o), &format!("signed out of {url}"));
    outputs.push(o);
    let o = run(&state, &["auth", "list"]);
    assert_contains(&stdout(&o), "no sign-ins kept");
    outputs.push(o);
    let registered = clients(&url);
    let o = run(&state, &["--no-sign-in", "--http", &url, "tools"]);
    assert_eq!(o.status.code(), Some(3));
    for part in [
        "the server asks for a sign-in (authorization server http://127.0.0.1:",
        "--no-sign-in forbids one",
        "--bearer-env VAR",
        "--header 'Authorization: Bearer <token>'",
    ] {
        assert_contains(&stderr(&o), part);
    }
    assert_eq!(
        clients(&url),
        registered,
        "no registration with --no-sign-in"
    );
    outputs.push(o);
    // Run together, the server that needs a sign-in says how to give it; the others answer.
    let o = run(&state, &["--config", &config, "tools"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stdout(&o), "demo__echo");
    assert_contains(&format!("{}{}", stdout(&o), stderr(&o)), "auth login");
    outputs.push(o);

    // No token the server issued shows anywhere.
    let base = url.trim_end_matches("/mcp");
    let (_, _, issued) = get(&format!("{base}/issued"));
    let body = issued.split("\r\n\r\n").nth(1).unwrap_or("");
    let tokens: Vec<String> = serde_json::from_str(body).expect("the issued tokens");
    assert_eq!(tokens.len(), 2);
    for o in &outputs {
        let all = format!("{}{}", stdout(o), stderr(o));
        for t in &tokens {
            assert!(!all.contains(t.as_str()), "a token in the output:\n{all}");
        }
    }
    let _ = std::fs::remove_dir_all(&state);
}

#[cfg(unix)]
#[test]
fn ctrl_c_cancels_a_sign_in_as_a_typed_outcome() {
    if skipped("ctrl_c_cancels_a_sign_in_as_a_typed_outcome") {
        return;
    }
    let server = python_oauth();
    let state = temp("auth-ctrl-c");
    let mut child = mcpwire(&state)
        .args(["--no-browser", "--http", server.url(), "auth", "login"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("/authorize?") {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "{seen}");
        seen.push_str(&line);
    }
    // SAFETY: kill(2) signals the child this test started, by its PID.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    // Interrupted: 130, as after any Ctrl-C.
    assert_eq!(status.code(), Some(130), "{seen}{rest}");
    assert_contains(&rest, "the sign-in was cancelled (Ctrl-C)");
    // Nothing was kept.
    let o = run(&state, &["auth", "list"]);
    assert_contains(&stdout(&o), "no sign-ins kept");
    let _ = std::fs::remove_dir_all(&state);
}

/// The lines of `text` that are the keychain fallback's warning.
#[cfg(feature = "keychain")]
fn keychain_warnings(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("mcpwire: no OS keychain"))
        .collect()
}

#[cfg(feature = "keychain")]
#[test]
fn keychain_absent_one_warning_line_and_the_sign_in_kept_in_files() {
    let state = temp("auth-keychain");
    let folder = state.join("oauth");
    let o = run(&state, &["auth", "list"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    let line = err.trim_end();
    assert!(line.starts_with("mcpwire: no OS keychain ("), "{line}");
    let tail = format!("); keeping sign-ins in {}", folder.display());
    assert!(line.ends_with(&tail), "{line}");
    assert_contains(
        &stdout(&o),
        &format!("no sign-ins kept (in {})", folder.display()),
    );

    if skipped("keychain_absent_one_warning_line_and_the_sign_in_kept_in_files") {
        let _ = std::fs::remove_dir_all(&state);
        return;
    }
    let server = python_oauth();
    let url = server.url().to_owned();
    // `auth login` opens the store more than once (forgetting, then signing in): one warning.
    let o = login(&state, &url, |address, _| {
        let (_, location, _) = get(address);
        let (status, _, page) = get(&location.expect("a redirect"));
        assert_eq!(status, 200, "{page}");
    });
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(keychain_warnings(&stderr(&o)).len(), 1, "{}", stderr(&o));
    // Kept in the file store's folder, nothing in the keychain index.
    let tokens: Vec<_> = std::fs::read_dir(folder.join("tokens"))
        .expect("the file store's tokens")
        .flatten()
        .collect();
    assert_eq!(tokens.len(), 1, "{tokens:?}");
    assert!(!folder.join("keychain").exists());
    let o = run(&state, &["auth", "list"]);
    assert_contains(&stdout(&o), &url);
    assert_eq!(keychain_warnings(&stderr(&o)).len(), 1, "{}", stderr(&o));
    let o = run(&state, &["--http", &url, "auth", "logout"]);
    assert_contains(&stdout(&o), &format!("signed out of {url}"));
    let _ = std::fs::remove_dir_all(&state);
}

/// A server on 127.0.0.1 that wants credentials and offers no OAuth: `401` with
/// `WWW-Authenticate: Bearer` to every POST to `/mcp`, `404` to anything else. Each request's
/// method and target go to the log.
fn no_oauth_server() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = log.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { return };
            let seen = seen.clone();
            std::thread::spawn(move || serve_no_oauth(conn, &seen));
        }
    });
    (url, log)
}

/// One connection of [`no_oauth_server`], kept alive for as many requests as come.
fn serve_no_oauth(conn: std::net::TcpStream, log: &std::sync::Mutex<Vec<String>>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut conn = conn;
    loop {
        let mut head = Vec::new();
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) if line == "\r\n" => break,
                Ok(_) => head.push(line),
            }
        }
        let Some(request_line) = head.first() else {
            return;
        };
        let mut words = request_line.split_whitespace();
        let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        let length = head
            .iter()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        log.lock().unwrap().push(format!("{method} {target}"));
        let answer = if method == "POST" && target == "/mcp" {
            "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\nContent-Length: 0\r\n\r\n"
        } else {
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
        };
        if conn.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

#[test]
fn a_server_that_offers_no_oauth_says_how_to_give_a_token_and_nothing_is_registered() {
    let state = temp("auth-no-oauth");
    // Off a terminal, with --no-sign-in, and `auth login` (which may sign in).
    for sign_in in [
        &["tools"][..],
        &["--no-sign-in", "tools"],
        &["--no-browser", "auth", "login"],
    ] {
        let (url, log) = no_oauth_server();
        let mut args = vec!["--proxy", "", "--http", url.as_str()];
        args.extend(sign_in);
        let o = run(&state, &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(3), "{sign_in:?}: {err}");
        for part in [
            "the server wants credentials (HTTP 401) but offers no OAuth sign-in",
            &format!(
                "(no metadata at {}/.well-known/oauth-protected-resource/mcp, ",
                url.trim_end_matches("/mcp")
            ),
            "give it a token with --bearer-env VAR",
            "--header 'Authorization: Bearer <token>'",
        ] {
            assert_contains(&err, part);
        }
        // The command line's words, not the library's.
        assert!(!err.contains("HttpConfig::headers"), "{err}");
        let log = log.lock().unwrap().clone();
        // A bare `Bearer` with no metadata may be a 2025-03-26 server's: where a sign-in may
        // be made (`auth login`), its default registration endpoint is tried, and its 404 ends
        // it (nothing registered, no browser); without a sign-in nothing is tried.
        let may_sign_in = sign_in.contains(&"login");
        let registrations = log.iter().filter(|l| *l == "POST /register").count();
        assert_eq!(
            registrations,
            usize::from(may_sign_in),
            "{sign_in:?}: {log:?}"
        );
        if may_sign_in {
            assert_contains(
                &err,
                &format!(
                    "no registration endpoint at {}/register",
                    url.trim_end_matches("/mcp")
                ),
            );
        }
        assert!(!log.iter().any(|l| l.contains("authorize")), "{log:?}");
        let well_known: Vec<&String> = log.iter().filter(|l| l.contains("/.well-known/")).collect();
        assert_eq!(
            well_known,
            [
                "GET /.well-known/oauth-protected-resource/mcp",
                "GET /.well-known/oauth-protected-resource",
                "GET /.well-known/oauth-authorization-server",
                "GET /.well-known/openid-configuration",
            ],
            "{sign_in:?}: {log:?}"
        );
        assert_eq!(
            log.len(),
            5 + registrations,
            "one MCP request, the discovery and the registration tried: {log:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&state);
}
