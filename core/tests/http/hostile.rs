//! What a hostile server (or a careless configuration) puts in a request header never reaches
//! a backend: a session id, an event id, a token or a configured header that HTTP cannot carry
//! is refused where it enters, with an error naming the header.

use super::*;

use mcpwire_core::error::HttpErrorKind;
use mcpwire_core::header::HeaderError;
use mcpwire_core::{ClientError, Closed, Deadline};

/// Every request header of every exchange started so far passes the core's rule.
fn all_headers_sendable(h: &H) {
    for r in h.open.values() {
        for (k, v) in &r.headers {
            assert!(mcpwire_core::header::check(k, v).is_ok(), "{k}: {v:?}");
        }
    }
}

fn closed_reason(h: &H) -> Option<String> {
    h.events.iter().find_map(|e| match e {
        Event::Closed(Closed { reason }) => Some(reason.to_string()),
        _ => None,
    })
}

#[test]
fn a_session_id_http_cannot_carry_fails_the_handshake_naming_the_header() {
    // `caf\xe9` arrives from a backend as `caf\u{fffd}` (a lossy head), `café` in UTF-8 as it is.
    for bad in ["caf\u{fffd}", "caf\u{e9}", "a b", "", "x\u{1}y", "\u{7f}"] {
        let mut h = H::new();
        let init = h.find("POST initialize");
        h.initialize(init, Some(bad));
        assert!(h.c.is_closed(), "{bad:?}: {:?}", h.events);
        let reason = closed_reason(&h).unwrap_or_else(|| panic!("{bad:?}: {:?}", h.events));
        assert!(reason.contains("Mcp-Session-Id"), "{bad:?}: {reason}");
        assert_eq!(h.c.session(), None);
        assert!(
            h.log
                .iter()
                .all(|l| !l.contains("notifications/initialized")),
            "{:?}",
            h.log
        );
        all_headers_sendable(&h);
        // Nothing is left to finish: no DELETE for a session never taken.
        h.c.close(h.now);
        h.pump();
        assert!(h.c.is_finished(), "{bad:?}");
    }
}

#[test]
fn a_session_id_http_cannot_carry_in_a_renewal_ends_the_connection() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.answer(post, 404, &[], &[]);
    let init = h.find("POST initialize");
    h.initialize(init, Some("caf\u{e9}"));
    let Some(Err(CallError::Local(LocalError::SessionRenewalFailed { reason, .. }))) =
        h.outcome(call)
    else {
        panic!("{:?}", h.events)
    };
    assert!(reason.contains("Mcp-Session-Id"), "{reason}");
    assert!(h.c.is_closed());
    assert_eq!(
        h.log
            .iter()
            .filter(|l| l.starts_with("POST tools/call"))
            .count(),
        1,
        "nothing went in the unusable session: {:?}",
        h.log
    );
    all_headers_sendable(&h);
    h.advance_to_next_deadline_if_any();
    assert!(h.c.is_finished());
}

#[test]
fn configured_headers_http_cannot_carry_or_that_frame_the_message_are_refused() {
    for (name, value) in [
        ("X-Name", "caf\u{e9}"),
        ("X-Name", "a\r\nInjected: 1"),
        ("Bad Name", "x"),
        ("Content-Length", "5"),
        ("transfer-encoding", "chunked"),
        ("Connection", "close"),
        ("Upgrade", "h2c"),
        ("TE", "trailers"),
        ("Trailer", "x"),
        ("Keep-Alive", "timeout=5"),
        ("Proxy-Connection", "keep-alive"),
        ("Expect", "100-continue"),
        ("Host", "example.com"),
    ] {
        let mut server = endpoint();
        server.headers.insert(name.into(), value.into());
        for kind in [
            mcpwire_core::config::HttpKind::Streamable,
            mcpwire_core::config::HttpKind::Sse,
        ] {
            server.kind = kind;
            let err = Connection::http(
                Instant::now(),
                ClientConfig::default(),
                &server,
                HttpOptions::default(),
            )
            .expect_err(name);
            let ClientError::Header(e) = &err else {
                panic!("{name}: {err:?}")
            };
            assert_eq!(e.name(), name);
            assert!(err.to_string().contains(name), "{err}");
        }
    }
    let mut server = endpoint();
    server.headers.insert("Host".into(), "x".into());
    let err = Connection::http(
        Instant::now(),
        ClientConfig::default(),
        &server,
        HttpOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("set by the URL"), "{err}");
    assert!(matches!(
        err,
        ClientError::Header(HeaderError::Reserved { .. })
    ));
}

#[test]
fn a_token_http_cannot_carry_fails_the_authorization_and_is_never_sent() {
    let options = HttpOptions {
        authorization: true,
        ..HttpOptions::default()
    };
    let mut h = H::with(endpoint(), options);
    let init = h.find("POST initialize");
    h.answer(init, 401, &[("WWW-Authenticate", "Bearer")], &[b"{}"]);
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, Event::AuthorizationRequired(_))));
    h.c.handle_authorization(h.now, AuthorizationInput::Token("tok\r\nX-Injected: 1"))
        .unwrap();
    h.pump();
    all_headers_sendable(&h);
    assert!(
        h.open.values().all(|r| r.header("authorization").is_none()),
        "{:?}",
        h.log
    );
    let failed = h.events.iter().any(|e| {
        matches!(e, Event::Closed(Closed { reason }) if reason.contains("access token") && reason.contains("Authorization"))
            || matches!(e, Event::CallDone { outcome: Err(CallError::Local(LocalError::Http(err))), .. }
                if err.kind == HttpErrorKind::Unauthorized && err.reason.contains("Authorization"))
    });
    assert!(failed, "{:?}", h.events);
}

#[test]
fn an_event_id_http_cannot_carry_is_never_sent_back() {
    let mut h = H::ready(200);
    // The standalone stream is open (the GET answered 200 with no body and ended): take the
    // GET opened again, or the first one.
    let call = h.call("x", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Head {
            status: 200,
            headers: &[("Content-Type".into(), "text/event-stream".into())],
        },
    )
    .unwrap();
    h.pump();
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Body(b"id: ok-1\ndata:\n\nid: caf\xc3\xa9\nretry: 10\ndata:\n\n"),
    )
    .unwrap();
    h.pump();
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Failure("the connection was reset".into()),
    )
    .unwrap();
    h.open.remove(&post);
    h.pump();
    for _ in 0..3 {
        if h.c.poll_timeout().is_none() {
            break;
        }
        h.advance_to_next_deadline_if_any();
    }
    all_headers_sendable(&h);
    assert!(
        !h.log.iter().any(|l| l.starts_with("GET last-event-id=")),
        "resumed from an id: {:?}",
        h.log
    );
    // Nothing to resume from: the call ends by the at-most-once rule, not with a resume
    // from the earlier id (that would replay what was already handled).
    assert!(maybe_executed(h.outcome(call)), "{:?}", h.events);
}

impl H {
    fn advance_to_next_deadline_if_any(&mut self) {
        if let Some(t) = self.c.poll_timeout() {
            self.now = self.now.max(t);
            self.c.handle_timeout(self.now);
            self.pump();
        }
    }
}

/// The handshake answered, `notifications/initialized` POSTed and not answered yet.
fn initialized_pending() -> (H, ExchangeId) {
    let mut h = H::new();
    let init = h.find("POST initialize");
    h.initialize(init, Some("sess-1"));
    let n = h.find("POST notifications/initialized");
    (h, n)
}

fn sent_after(h: &H, from: usize) -> Vec<String> {
    h.log[from..]
        .iter()
        .filter(|l| l.starts_with("POST tools/") || l.contains("cancelled"))
        .cloned()
        .collect()
}

#[test]
fn a_request_that_timed_out_behind_the_initialized_notification_is_never_sent() {
    let (mut h, n) = initialized_pending();
    let start = h.now;
    let opts = CallOptions {
        timeout: Duration::from_secs(3),
        ..CallOptions::default()
    };
    let call = h.call("x", opts);
    let before = h.log.len();
    h.advance_to_next_deadline();
    assert_eq!(h.now - start, Duration::from_secs(3));
    let Some(Err(CallError::Local(
        e @ LocalError::NotSent {
            which: Some(_),
            reason,
        },
    ))) = h.outcome(call)
    else {
        panic!("{:?}", h.events)
    };
    assert!(reason.contains("notifications/initialized"), "{e}");
    assert!(e.to_string().contains("did not run"), "{e}");
    // The server answers the notification at 7 s: nothing of the call goes, not even a
    // cancellation.
    h.now = start + Duration::from_secs(7);
    h.accepted(n);
    assert_eq!(sent_after(&h, before), Vec::<String>::new(), "{:?}", h.log);
    // The connection lives on: a new call goes at once.
    let next = h.call("y", CallOptions::default());
    assert!(
        h.log.contains(&format!("POST tools/call #{}", next.0)),
        "{:?}",
        h.log
    );
}

#[test]
fn a_close_while_the_initialized_notification_waits_sends_nothing_that_ended() {
    let (mut h, _n) = initialized_pending();
    let call = h.call("x", CallOptions::default());
    let before = h.log.len();
    h.c.close(h.now);
    h.pump();
    assert!(
        matches!(h.outcome(call), Some(Err(CallError::Local(_)))),
        "{:?}",
        h.events
    );
    // The grace passes, the notification's POST is given up: still nothing goes but the
    // session's DELETE.
    for _ in 0..4 {
        if h.c.poll_timeout().is_none() {
            break;
        }
        h.advance_to_next_deadline();
    }
    assert_eq!(sent_after(&h, before), Vec::<String>::new(), "{:?}", h.log);
    if let Some(d) = h
        .open
        .keys()
        .copied()
        .find(|x| describe(&h.open[x]) == "DELETE")
    {
        h.answer(d, 200, &[], &[]);
    }
    assert!(h.c.is_finished(), "{:?}", h.log);
}

#[test]
fn a_request_held_behind_an_initialized_notification_never_answered_ends_saying_so() {
    let (mut h, _n) = initialized_pending();
    let opts = CallOptions {
        timeout: Duration::from_secs(120),
        ..CallOptions::default()
    };
    let call = h.call("x", opts);
    let before = h.log.len();
    // The notification's POST has no head within the head timeout (30 s): a timeout of the
    // wait, the same kind as a request's own deadline passing behind it.
    h.advance_to_next_deadline();
    let Some(Err(CallError::Local(
        e @ LocalError::NotSent {
            which: Some(Deadline::Idle),
            reason,
        },
    ))) = h.outcome(call)
    else {
        panic!("{:?}", h.events)
    };
    assert!(
        reason.contains("the server never answered notifications/initialized")
            && reason.contains("no response head within 30s"),
        "{e}"
    );
    assert_eq!(sent_after(&h, before), Vec::<String>::new(), "{:?}", h.log);
}

#[test]
fn behind_an_initialized_notification_the_callers_share_one_budget() {
    let (mut h, _n) = initialized_pending();
    let short = CallOptions {
        timeout: Duration::from_secs(3),
        ..CallOptions::default()
    };
    let first = h.call("x", short.clone());
    let before = h.log.len();
    // The first caller's deadline passes: it ends never sent.
    h.advance_to_next_deadline();
    assert!(
        matches!(
            h.outcome(first),
            Some(Err(CallError::Local(LocalError::NotSent {
                which: Some(Deadline::Idle),
                ..
            })))
        ),
        "{:?}",
        h.events
    );
    // A call made now ends at once, with the same kind, saying how long the server was waited
    // for: it does not wait a budget of its own behind the same notification.
    let second = h.call("y", short);
    let Some(Err(CallError::Local(LocalError::NotSent {
        which: Some(Deadline::Idle),
        reason,
    }))) = h.outcome(second)
    else {
        panic!("{:?}", h.events)
    };
    assert!(
        reason.contains(
            "the server has not answered notifications/initialized: tools/call waited for it \
             for 3 s (its timeout)"
        ),
        "{reason}"
    );
    assert_eq!(sent_after(&h, before), Vec::<String>::new(), "{:?}", h.log);
}

#[test]
fn the_exchange_of_a_request_that_ended_after_it_left_is_withdrawn() {
    // A POST the driver may still hold in its pool's queue, waiting for a connection: when its
    // request ends here, the exchange is aborted, so it never goes afterwards.
    let mut h = H::ready(405);
    let opts = CallOptions {
        timeout: Duration::from_secs(3),
        ..CallOptions::default()
    };
    let call = h.call("x", opts);
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.advance_to_next_deadline();
    assert!(
        matches!(
            h.outcome(call),
            Some(Err(CallError::Local(LocalError::Timeout { .. })))
        ),
        "{:?}",
        h.events
    );
    assert!(h.aborted.contains(&post), "{:?} {:?}", h.aborted, h.log);
    // In the handshake era the server is told.
    assert!(
        h.log.iter().any(|l| l == "POST notifications/cancelled"),
        "{:?}",
        h.log
    );
    // A cancel by the caller withdraws it the same way.
    let call = h.call("y", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.c.cancel(h.now, call, None).unwrap();
    h.pump();
    assert!(h.aborted.contains(&post), "{:?}", h.aborted);
}

#[test]
fn requests_say_who_sends_them_unless_the_user_does() {
    let mut h = H::ready(405);
    h.call("x", CallOptions::default());
    for r in h.open.values() {
        assert_eq!(
            r.header("user-agent"),
            Some(mcpwire_core::header::USER_AGENT),
            "{r:?}"
        );
    }
    assert!(mcpwire_core::header::USER_AGENT.starts_with("mcpwire/0."));
    let mut server = endpoint();
    server
        .headers
        .insert("user-agent".into(), "my-agent/2".into());
    let h = H::with(server, HttpOptions::default());
    let init = h.find("POST initialize");
    let agents: Vec<&str> = h
        .request(init)
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("user-agent"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(agents, ["my-agent/2"]);
}

/// Each byte 0x00-0xFF in the places a response head holds text.
fn heads_with_every_byte() -> Vec<Vec<u8>> {
    let mut heads = Vec::new();
    for b in 0u8..=255 {
        let templates: [&[u8]; 5] = [
            b"HTTP/1.1 200 O\xFFK\r\nContent-Length: 0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX-N\xFFame: v\r\nContent-Length: 0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nMcp-Session-Id: a\xFFb\r\nContent-Length: 0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\xFF\r\n\r\n",
            b"HTTP/1.\xFF 200 OK\r\nTransfer-Encoding: chun\xFFked\r\n\r\n",
        ];
        for t in templates {
            heads.push(t.iter().map(|&c| if c == 0xFF { b } else { c }).collect());
        }
    }
    heads
}

#[test]
fn a_response_head_with_any_byte_is_read_or_refused_never_a_panic() {
    use mcpwire_core::codec::http1::{parse_response_head, BodyDecoder};
    for head in heads_with_every_byte() {
        if let Ok(Some((h, _))) = parse_response_head(&head, false) {
            // What is read is text a header may carry on (no CR, no LF, no NUL).
            for (k, v) in &h.headers {
                assert!(!k.contains(['\r', '\n', '\0']) && !v.contains(['\r', '\n', '\0']));
            }
            let mut decoder = BodyDecoder::new(h.framing);
            let _ = decoder.decode(b"x\r\n0\r\n\r\n", 1 << 20);
        }
    }
}

#[test]
fn a_connection_takes_head_values_with_any_character_without_a_panic() {
    // As a backend hands them over: its bytes read lossily as UTF-8, so any char U+0000-U+00FF
    // and U+FFFD, in the headers the machine reads.
    for c in (0u32..=0xFF).filter_map(char::from_u32).chain(['\u{fffd}']) {
        let value = format!("a{c}b");
        for name in [
            "Mcp-Session-Id",
            "Content-Type",
            "WWW-Authenticate",
            "Location",
        ] {
            let mut h = H::new();
            let init = h.find("POST initialize");
            let headers = [("Content-Type", "application/json"), (name, value.as_str())];
            let status = if name == "Location" { 307 } else { 200 };
            let body = initialize_result(Id::Num(0)).to_string();
            h.answer(init, status, &headers, &[body.as_bytes()]);
            all_headers_sendable(&h);
            let sendable = mcpwire_core::header::check_session_id(&value).is_ok();
            if name == "Mcp-Session-Id" {
                assert_eq!(h.c.session().is_some(), sendable, "{value:?}");
            }
        }
    }
}

#[test]
fn an_error_status_is_reported_from_its_head_with_at_most_a_second_of_its_body() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    let start = h.now;
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Head {
            status: 500,
            headers: &[("Content-Type".into(), "text/plain".into())],
        },
    )
    .unwrap();
    h.pump();
    // The body dribbles: a byte every 100 ms, for ever.
    for _ in 0..30 {
        if h.outcome(call).is_some() {
            break;
        }
        h.now += Duration::from_millis(100);
        if h.c.poll_timeout().is_some_and(|t| t <= h.now) {
            h.c.handle_timeout(h.now);
        }
        h.c.handle_http(h.now, post, HttpInput::Body(b"x")).unwrap();
        h.pump();
    }
    let Some(Err(CallError::Local(LocalError::Http(e)))) = h.outcome(call) else {
        panic!("{:?}", h.events)
    };
    assert_eq!(e.status, Some(500));
    assert!(e.body_excerpt.starts_with("xxx"), "{e}");
    assert!(
        h.now - start <= Duration::from_millis(1100),
        "{:?}",
        h.now - start
    );
    assert!(h.aborted.contains(&post));
    // An error body that fills the excerpt ends it at once.
    let call = h.call("y", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Head {
            status: 503,
            headers: &[],
        },
    )
    .unwrap();
    h.c.handle_http(h.now, post, HttpInput::Body(&[b'z'; 600]))
        .unwrap();
    h.pump();
    assert!(matches!(
        h.outcome(call),
        Some(Err(CallError::Local(LocalError::Http(_))))
    ));
}

#[test]
fn a_json_body_declared_over_the_cap_is_refused_from_its_head() {
    let options = HttpOptions {
        max_json_body: 1024,
        ..HttpOptions::default()
    };
    let mut h = H::with(endpoint(), options);
    let init = h.find("POST initialize");
    h.c.handle_http(
        h.now,
        init,
        HttpInput::Head {
            status: 200,
            headers: &[
                ("Content-Type".into(), "application/json".into()),
                ("Content-Length".into(), "1099511627776".into()),
            ],
        },
    )
    .unwrap();
    h.pump();
    assert!(h.aborted.contains(&init));
    assert!(h.c.is_closed(), "{:?}", h.events);
    let reason = closed_reason(&h).unwrap();
    assert!(
        reason.contains("1099511627776") && reason.contains("1024-byte cap"),
        "{reason}"
    );
}

#[test]
fn a_proxys_407_whose_body_is_cut_is_the_proxys_not_a_call_that_may_have_run() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Head {
            status: 407,
            headers: &[("Content-Type".into(), "text/html".into())],
        },
    )
    .unwrap();
    h.c.handle_http(h.now, post, HttpInput::Body(b"<html>short"))
        .unwrap();
    h.c.handle_http(
        h.now,
        post,
        HttpInput::Failure("the body was cut short".into()),
    )
    .unwrap();
    h.open.remove(&post);
    h.pump();
    let Some(Err(CallError::Local(LocalError::Http(e)))) = h.outcome(call) else {
        panic!("{:?}", h.events)
    };
    assert!(matches!(e.kind, HttpErrorKind::Proxy(_)), "{e}");
    assert!(!e.to_string().contains("may have"), "{e}");
}
