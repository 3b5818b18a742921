//! Authorization over Streamable HTTP, in memory: a refusal parks the request and asks once;
//! the token goes on every request; what waited goes again with its own id; a refusal of the
//! authorization ends what waited and the connection lives on.

use super::*;

const STEP_UP: &str = r#"Bearer scope="mcp:basic mcp:write", resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp", error="insufficient_scope""#;

fn authorizing() -> HttpOptions {
    HttpOptions {
        authorization: true,
        ..HttpOptions::default()
    }
}

fn refuse(h: &mut H, x: ExchangeId, status: u16, challenge: &str) {
    h.answer(x, status, &[("WWW-Authenticate", challenge)], &[b"{}"]);
}

/// Completes the handshake of a connection whose `initialize` goes unauthenticated.
fn ready_authorizing() -> H {
    H::ready_with(authorizing(), 405)
}

#[test]
fn a_refused_initialize_waits_for_the_token_and_goes_again_with_its_own_id() {
    let mut h = H::with(endpoint(), authorizing());
    let init = h.find("POST initialize");
    assert_eq!(h.request(init).header("authorization"), None);
    refuse(&mut h, init, 401, CHALLENGE);
    assert!(h.aborted.contains(&init));
    let asked = refusals(&h);
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].status, 401);
    assert!(!asked[0].is_step_up());
    assert_eq!(asked[0].challenges, [CHALLENGE]);
    assert_eq!(
        asked[0].challenge.as_ref().unwrap().param("error"),
        Some("invalid_token")
    );
    assert!(!h.c.is_closed(), "{:?}", h.events);
    assert_eq!(h.log, ["POST initialize #0"], "nothing goes while waiting");

    h.c.handle_authorization(h.now, AuthorizationInput::Token("tok-1"))
        .unwrap();
    h.pump();
    assert_eq!(h.log, ["POST initialize #0", "POST initialize #0"]);
    let again = h.find("POST initialize");
    assert_ne!(again, init);
    assert_eq!(
        h.request(again).header("authorization"),
        Some("Bearer tok-1")
    );
    h.initialize(again, Some("sess-1"));
    assert!(h.c.is_ready(), "{:?}", h.events);
    // Every later request carries the token: the notification, the GET stream, the DELETE.
    let n = h.find("POST notifications/initialized");
    assert_eq!(h.request(n).header("authorization"), Some("Bearer tok-1"));
    h.accepted(n);
    let get = h.find("GET");
    assert_eq!(h.request(get).header("authorization"), Some("Bearer tok-1"));
    h.c.close(h.now);
    h.pump();
    let delete = h.find("DELETE");
    assert_eq!(
        h.request(delete).header("authorization"),
        Some("Bearer tok-1")
    );
    // Never in the URL, never in a Debug.
    assert!(!h.request(delete).url.contains("tok-1"));
    let shown = format!("{:?} {:?}", h.request(delete), h.c);
    assert!(!shown.contains("tok-1"), "{shown}");
}

#[test]
fn a_hundred_refused_calls_ask_once_and_each_goes_again_once() {
    let mut h = ready_authorizing();
    let calls: Vec<CallId> = (0..100)
        .map(|_| h.call("x", CallOptions::default()))
        .collect();
    let posts: Vec<ExchangeId> = {
        let mut v: Vec<_> = h.open.keys().copied().collect();
        v.sort_unstable();
        v
    };
    assert_eq!(posts.len(), 100);
    let ids: Vec<Id> = posts.iter().map(|x| h.request_id(*x)).collect();
    for x in &posts {
        refuse(&mut h, *x, 401, CHALLENGE);
    }
    assert_eq!(refusals(&h).len(), 1, "one authorization for all");
    assert!(h.open.is_empty());
    // A call made while waiting waits too.
    let late = h.call("x", CallOptions::default());
    assert!(h.open.is_empty());

    h.c.handle_authorization(h.now, AuthorizationInput::Token("tok-1"))
        .unwrap();
    h.pump();
    assert_eq!(h.open.len(), 101);
    let mut again: Vec<Id> = h.open.keys().map(|x| h.request_id(*x)).collect();
    for r in h.open.values() {
        assert_eq!(r.header("authorization"), Some("Bearer tok-1"));
    }
    again.sort_by_key(|i| i.as_i64());
    let mut expected = ids.clone();
    expected.push(Id::Num(101));
    expected.sort_by_key(|i| i.as_i64());
    assert_eq!(again, expected, "the same ids, each once");
    let open: Vec<ExchangeId> = h.open.keys().copied().collect();
    for x in open {
        let id = h.request_id(x).as_i64().unwrap();
        h.json(x, serde_json::from_str(&result_line(id)).unwrap());
    }
    for call in calls.iter().chain([&late]) {
        assert!(matches!(h.outcome(*call), Some(Ok(_))));
    }
}

#[test]
fn a_refusal_of_a_request_sent_before_the_token_goes_again_without_asking() {
    let mut h = ready_authorizing();
    h.call("a", CallOptions::default());
    h.call("b", CallOptions::default());
    let mut posts: Vec<ExchangeId> = h.open.keys().copied().collect();
    posts.sort_unstable();
    refuse(&mut h, posts[0], 401, CHALLENGE);
    h.c.handle_authorization(h.now, AuthorizationInput::Token("tok-1"))
        .unwrap();
    h.pump();
    assert_eq!(h.open.len(), 2);
    // The second was sent without the token: its refusal is no news.
    refuse(&mut h, posts[1], 401, CHALLENGE);
    assert_eq!(refusals(&h).len(), 1);
    assert_eq!(h.open.len(), 2);
    for r in h.open.values() {
        assert_eq!(r.header("authorization"), Some("Bearer tok-1"));
    }
    // A refusal of one sent with the current token asks again (the token expired).
    let x = *h.open.keys().next().unwrap();
    refuse(&mut h, x, 401, CHALLENGE);
    assert_eq!(refusals(&h).len(), 2);
}

#[test]
fn a_failed_authorization_ends_what_waited_and_the_connection_lives_on() {
    let mut h = ready_authorizing();
    let call = h.call("x", CallOptions::default());
    let x = h.find("POST tools/call");
    refuse(&mut h, x, 401, CHALLENGE);
    h.c.notify(h.now, "notifications/roots/list_changed", None)
        .unwrap();
    h.pump();
    assert!(h.outcome(call).is_none());
    h.c.handle_authorization(h.now, AuthorizationInput::Failed("the user declined"))
        .unwrap();
    h.pump();
    let Some(Err(CallError::Local(LocalError::Http(e)))) = h.outcome(call) else {
        panic!("{:?}", h.events)
    };
    assert_eq!(e.kind, mcpwire_core::error::HttpErrorKind::Unauthorized);
    assert_eq!(e.status, Some(401));
    assert!(e.to_string().contains("the user declined"), "{e}");
    assert!(h.events.iter().any(|e| matches!(e,
        Event::Diagnostic(Diagnostic::Http(n)) if n.contains("waiting for authorization"))));
    assert!(!h.c.is_closed());
    // The next call goes, and a refusal asks again.
    h.call("y", CallOptions::default());
    let y = h.find("POST tools/call");
    refuse(&mut h, y, 401, CHALLENGE);
    assert_eq!(refusals(&h).len(), 2);
}

#[test]
fn a_403_for_a_scope_is_a_step_up_and_other_403s_end_the_request() {
    let mut h = ready_authorizing();
    h.c.handle_authorization(h.now, AuthorizationInput::Token("tok-1"))
        .unwrap();
    let call = h.call("x", CallOptions::default());
    let x = h.find("POST tools/call");
    refuse(&mut h, x, 403, STEP_UP);
    let asked = refusals(&h);
    assert_eq!(asked.len(), 1);
    assert!(asked[0].is_step_up());
    h.c.handle_authorization(h.now, AuthorizationInput::Token("tok-2"))
        .unwrap();
    h.pump();
    let x = h.find("POST tools/call");
    assert_eq!(h.request(x).header("authorization"), Some("Bearer tok-2"));
    h.json(x, serde_json::from_str(&result_line(1)).unwrap());
    assert!(matches!(h.outcome(call), Some(Ok(_))));

    // A 403 without `insufficient_scope` (an Origin check) is no authorization matter.
    let call = h.call("y", CallOptions::default());
    let y = h.find("POST tools/call");
    refuse(&mut h, y, 403, r#"Bearer error="invalid_request""#);
    assert_eq!(refusals(&h).len(), 1);
    assert!(matches!(
        h.outcome(call),
        Some(Err(CallError::Local(LocalError::Http(_))))
    ));
}

#[test]
fn a_call_that_times_out_while_waiting_is_never_sent() {
    let mut h = ready_authorizing();
    let opts = CallOptions {
        timeout: Duration::from_secs(5),
        ..CallOptions::default()
    };
    let call = h.call("x", opts);
    let x = h.find("POST tools/call");
    refuse(&mut h, x, 401, CHALLENGE);
    h.advance_to_next_deadline();
    assert!(matches!(h.outcome(call), Some(Err(_))), "{:?}", h.events);
    h.log.clear();
    h.c.handle_authorization(h.now, AuthorizationInput::Token("tok-1"))
        .unwrap();
    h.pump();
    assert!(
        !h.log.iter().any(|l| l.starts_with("POST tools/call")),
        "{:?}",
        h.log
    );
}

#[test]
fn the_token_replaces_a_configured_authorization_header() {
    let mut server = endpoint();
    server
        .headers
        .insert("Authorization".into(), "Bearer static".into());
    server.headers.insert("X-Team".into(), "blue".into());
    let mut h = H::with(server, authorizing());
    let init = h.find("POST initialize");
    assert_eq!(
        h.request(init).header("authorization"),
        Some("Bearer static")
    );
    refuse(&mut h, init, 401, CHALLENGE);
    h.c.handle_authorization(h.now, AuthorizationInput::Token("fresh"))
        .unwrap();
    h.pump();
    let init = h.find("POST initialize");
    let r = h.request(init);
    let auth: Vec<_> = r
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("authorization"))
        .collect();
    assert_eq!(auth.len(), 1);
    assert_eq!(auth[0].1, "Bearer fresh");
    assert_eq!(r.header("x-team"), Some("blue"));
}

#[test]
fn without_authorization_on_a_401_ends_the_request() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let x = h.find("POST tools/call");
    refuse(&mut h, x, 401, CHALLENGE);
    assert!(refusals(&h).is_empty());
    assert!(matches!(
        h.outcome(call),
        Some(Err(CallError::Local(LocalError::Http(_))))
    ));
}

#[test]
fn a_refused_probe_is_no_sign_of_the_era_it_goes_again_with_the_token() {
    let config = ClientConfig {
        capabilities: caps(),
        era: Era::Auto,
        ..ClientConfig::default()
    };
    let mut h = H::connect(config, endpoint(), authorizing());
    let probe = h.find("POST server/discover");
    let id = h.request_id(probe);
    refuse(&mut h, probe, 401, CHALLENGE);
    assert_eq!(refusals(&h).len(), 1);
    assert_eq!(h.c.era(), None);
    h.c.handle_authorization(h.now, AuthorizationInput::Token("tok-1"))
        .unwrap();
    h.pump();
    let again = h.find("POST server/discover");
    assert_eq!(h.request_id(again), id);
    assert_eq!(
        h.request(again).header("authorization"),
        Some("Bearer tok-1")
    );
    // A handshake-era server refuses the probe: `initialize` follows, with the token.
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"Method not found"}}}}"#
    );
    h.answer(
        again,
        200,
        &[("Content-Type", "application/json")],
        &[body.as_bytes()],
    );
    let init = h.find("POST initialize");
    assert_eq!(
        h.request(init).header("authorization"),
        Some("Bearer tok-1")
    );
}

#[test]
fn a_connection_that_ended_while_waiting_sends_nothing_when_the_token_comes() {
    let config = ClientConfig {
        capabilities: caps(),
        era: Era::Handshake,
        init_timeout: Duration::from_secs(5),
        ..ClientConfig::default()
    };
    let mut h = H::connect(config, endpoint(), authorizing());
    let init = h.find("POST initialize");
    refuse(&mut h, init, 401, CHALLENGE);
    h.advance_to_next_deadline();
    assert!(h.c.is_closed(), "{:?}", h.events);
    assert!(h.events.iter().any(|e| matches!(e, Event::Closed(_))));
    h.log.clear();
    h.c.handle_authorization(h.now, AuthorizationInput::Token("late"))
        .unwrap();
    h.c.handle_authorization(h.now, AuthorizationInput::Failed("late"))
        .unwrap();
    h.pump();
    assert!(h.log.is_empty(), "{:?}", h.log);
    assert!(!h
        .events
        .iter()
        .skip_while(|e| !matches!(e, Event::Closed(_)))
        .skip(1)
        .any(|e| !matches!(e, Event::Diagnostic(_))));
}

/// A `401` asking only for a scheme OAuth cannot answer (`Basic`, as a server that wants a
/// password does, or a proxy on the way) asks for no authorization: the call ends with the
/// `401`, whose words name the scheme and where such credentials go. One asking for `Bearer`
/// among others, or for nothing, still does.
#[test]
fn a_401_asking_for_basic_starts_no_authorization() {
    let mut h = ready_authorizing();
    let call = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call");
    refuse(&mut h, post, 401, r#"Basic realm="Tinyproxy""#);
    assert!(refusals(&h).is_empty(), "{:?}", h.events);
    let Some(Err(CallError::Local(LocalError::Http(e)))) = h.outcome(call) else {
        panic!("{:?}", h.events)
    };
    assert_eq!(e.status, Some(401));
    let words = e.to_string();
    assert!(
        words.contains("asks for Basic credentials, not for an OAuth sign-in")
            && words.contains("Authorization: Basic"),
        "{words}"
    );
    for asking in [r#"Basic realm="x", Bearer"#, ""] {
        let mut h = ready_authorizing();
        h.call("x", CallOptions::default());
        let post = h.find("POST tools/call");
        match asking {
            "" => h.answer(post, 401, &[], &[b"{}"]),
            challenge => refuse(&mut h, post, 401, challenge),
        }
        assert_eq!(refusals(&h).len(), 1, "{asking:?}: {:?}", h.events);
    }
}
