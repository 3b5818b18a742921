//! Session renewal under load, in memory: every request answered 404 in a forgotten session is
//! sent once more in the new one; streams of the old session finish on their own; new requests
//! wait for the new session; renewals that do not hold have a budget, and spending it closes
//! the connection with a typed reason.

use super::*;

use mcpwire_core::{ClientError, Closed};

fn error_for(h: &H, call: CallId) -> LocalError {
    match h.outcome(call) {
        Some(Err(CallError::Local(e))) => e.clone(),
        other => panic!("call {call:?}: {other:?}: {:?}", h.events),
    }
}

/// The session header of each `tools/call` POST of request `id`, in the order sent.
fn sessions_of(h: &H, id: i64) -> Vec<Option<String>> {
    h.log
        .iter()
        .zip(&h.sessions)
        .filter(|(line, _)| **line == format!("POST tools/call #{id}"))
        .map(|(_, s)| s.clone())
        .collect()
}

fn expire(h: &mut H, post: ExchangeId) {
    h.answer(
        post,
        404,
        &[("Content-Type", "application/json")],
        &[EXPIRED],
    );
}

fn initializes(h: &H) -> usize {
    h.log
        .iter()
        .filter(|l| l.starts_with("POST initialize"))
        .count()
}

#[test]
fn new_requests_wait_for_the_new_session() {
    let mut h = H::ready(405);
    let first = h.call("x", CallOptions::default());
    let post = h.find("POST tools/call #1");
    expire(&mut h, post);
    let init = h.find("POST initialize");
    let second = h.call("y", CallOptions::default());
    assert!(
        !h.log.iter().any(|l| l == "POST tools/call #3"),
        "a new request went out before the new session: {:?}",
        h.log
    );
    h.renewed(init, "sess-2");
    for call in [first, second] {
        let post = h.find(&format!("POST tools/call #{}", call.0));
        assert_eq!(h.request(post).header("mcp-session-id"), Some("sess-2"));
        h.json(post, serde_json::from_str(&result_line(call.0)).unwrap());
        assert!(matches!(h.outcome(call), Some(Ok(_))), "{:?}", h.events);
    }
    assert_eq!(initializes(&h), 1);
}

/// What happens around the renewal, in some order: a 404 to one of the calls, the new
/// session's `initialize` head, its body.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    Expire(usize),
    InitHead,
    InitBody,
}

fn orders(steps: &[Step]) -> Vec<Vec<Step>> {
    if steps.is_empty() {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let mut rest = steps.to_vec();
        rest.remove(i);
        for mut tail in orders(&rest) {
            tail.insert(0, *s);
            out.push(tail);
        }
    }
    out
}

/// Every order of `steps` in which the head comes before the body.
fn head_before_body(steps: &[Step]) -> Vec<Vec<Step>> {
    let mut all = orders(steps);
    all.retain(|o| {
        let head = o.iter().position(|s| *s == Step::InitHead);
        let body = o.iter().position(|s| *s == Step::InitBody);
        head < body
    });
    all
}

#[test]
fn concurrent_404s_in_any_order_around_the_initialize_each_go_once_more() {
    let all = head_before_body(&[
        Step::Expire(1),
        Step::Expire(2),
        Step::Expire(3),
        Step::InitHead,
        Step::InitBody,
    ]);
    assert_eq!(all.len(), 60);
    for order in all {
        let mut h = H::ready(405);
        let calls: Vec<CallId> = (0..4)
            .map(|i| {
                let now = h.now;
                let c = h.c.call(
                    now,
                    &McpCall::call_tool(&format!("t{i}"), Some(json!({}))),
                    CallOptions::default(),
                );
                h.pump();
                c.unwrap()
            })
            .collect();
        let posts: Vec<ExchangeId> = calls
            .iter()
            .map(|c| h.find(&format!("POST tools/call #{}", c.0)))
            .collect();
        // The first 404 starts the renewal.
        expire(&mut h, posts[0]);
        h.pump();
        let init = h.find("POST initialize");
        for step in &order {
            match *step {
                Step::Expire(i) => {
                    h.answer(
                        posts[i],
                        404,
                        &[("Content-Type", "application/json")],
                        &[EXPIRED],
                    );
                }
                Step::InitHead => {
                    let headers = [
                        ("content-type".to_string(), "application/json".to_string()),
                        ("mcp-session-id".to_string(), "sess-2".to_string()),
                    ];
                    h.c.handle_http(
                        h.now,
                        init,
                        HttpInput::Head {
                            status: 200,
                            headers: &headers,
                        },
                    )
                    .unwrap();
                }
                Step::InitBody => {
                    let id = match mcpwire_core::jsonrpc::parse(&h.request(init).body) {
                        Ok(Parsed::Single(Message::Request(r))) => r.id,
                        _ => unreachable!(),
                    };
                    let body = json!({"jsonrpc": "2.0", "id": id, "result": {
                        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                        "serverInfo": {"name": "s", "version": "1"}}});
                    h.c.handle_http(h.now, init, HttpInput::Body(body.to_string().as_bytes()))
                        .unwrap();
                    h.c.handle_http(h.now, init, HttpInput::End).unwrap();
                    h.open.remove(&init);
                }
            }
            h.pump();
        }
        assert_eq!(initializes(&h), 1, "{order:?}: {:?}", h.log);
        for c in &calls {
            assert_eq!(h.outcome(*c), None, "{order:?}: nothing ended yet");
            assert_eq!(
                sessions_of(&h, c.0),
                [Some("sess-1".to_string()), Some("sess-2".to_string())],
                "{order:?}: {:?}",
                h.log
            );
            let post = h.find(&format!("POST tools/call #{}", c.0));
            h.json(post, serde_json::from_str(&result_line(c.0)).unwrap());
            assert!(matches!(h.outcome(*c), Some(Ok(_))), "{order:?}");
        }
        // The connection goes on in the new session.
        let later = h.call("z", CallOptions::default());
        let post = h.find(&format!("POST tools/call #{}", later.0));
        assert_eq!(h.request(post).header("mcp-session-id"), Some("sess-2"));
        assert_eq!(initializes(&h), 1, "{order:?}");
    }
}

#[test]
fn a_second_expiry_renews_again_and_the_request_goes_in_the_third_session() {
    let mut h = H::ready(405);
    let now = h.now;
    let call =
        h.c.call(
            now,
            &McpCall::call_tool("x", Some(json!({}))),
            CallOptions::default(),
        )
        .unwrap();
    h.pump();
    for next in ["sess-2", "sess-3"] {
        let post = h.find(&format!("POST tools/call #{}", call.0));
        expire(&mut h, post);
        h.pump();
        let init = h.find("POST initialize");
        h.renewed(init, next);
        h.pump();
    }
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.json(post, serde_json::from_str(&result_line(call.0)).unwrap());
    assert!(matches!(h.outcome(call), Some(Ok(_))));
    assert_eq!(
        sessions_of(&h, call.0),
        ["sess-1", "sess-2", "sess-3"].map(|s| Some(s.to_string()))
    );
}

#[test]
fn renewals_that_fail_are_tried_within_the_budget_then_the_connection_closes() {
    let mut h = H::ready(405);
    // A call streaming in the old session, and one that meets the 404; both outlast the
    // renewal's timeout.
    let long = || CallOptions {
        timeout: Duration::from_secs(300),
        ..CallOptions::default()
    };
    let streaming = h.call("slow", long());
    let stream = h.find("POST tools/call");
    let sse = [("content-type".to_string(), "text/event-stream".to_string())];
    h.c.handle_http(
        h.now,
        stream,
        HttpInput::Head {
            status: 200,
            headers: &sse,
        },
    )
    .unwrap();
    h.pump();
    let call = h.call("x", long());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    expire(&mut h, post);
    // The first renewal is refused, the second times out, the third is refused: the budget
    // (3) is spent.
    let init = h.find("POST initialize");
    h.answer(init, 500, &[("Content-Type", "text/plain")], &[b"down"]);
    assert!(!h.c.is_closed(), "{:?}", h.events);
    h.advance_to_next_deadline();
    assert!(!h.c.is_closed(), "{:?}", h.events);
    let init = h.find("POST initialize");
    h.answer(
        init,
        503,
        &[("Content-Type", "text/plain")],
        &[b"still down"],
    );
    assert_eq!(initializes(&h), 3, "{:?}", h.log);
    assert!(h.c.is_closed(), "{:?}", h.events);
    for c in [call, streaming] {
        let LocalError::SessionRenewalFailed { attempts, reason } = error_for(&h, c) else {
            panic!("{:?}", h.events)
        };
        assert_eq!(attempts, 3);
        assert!(reason.contains("503"), "{reason}");
    }
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, Event::Closed(Closed { reason }) if reason.contains("renewals"))));
    assert!(h.aborted.contains(&stream));
    let now = h.now;
    assert!(matches!(
        h.c.call(now, &McpCall::call_tool("x", None), CallOptions::default()),
        Err(ClientError::Closed(Closed { reason })) if reason.contains("renewals")
    ));
    assert!(!h.log.iter().any(|l| l == "DELETE"), "no session to delete");
}

#[test]
fn a_server_that_loses_every_new_session_ends_the_connection_instead_of_looping() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let mut session = 1;
    while !h.c.is_closed() {
        assert!(session < 10, "never gave up: {:?}", h.log);
        let post = h.find(&format!("POST tools/call #{}", call.0));
        expire(&mut h, post);
        if h.c.is_closed() {
            break;
        }
        session += 1;
        let init = h.find("POST initialize");
        h.renewed(init, &format!("sess-{session}"));
        // The session takes the `initialized` notification, then forgets itself again.
        let n = h.find("POST notifications/initialized");
        h.accepted(n);
    }
    assert_eq!(initializes(&h), 3, "{:?}", h.log);
    assert!(matches!(
        error_for(&h, call),
        LocalError::SessionRenewalFailed { attempts: 3, .. }
    ));
}

#[test]
fn a_resume_refused_after_a_renewal_ends_that_call_as_expired() {
    let mut h = H::ready(405);
    let resumed = h.call("slow", CallOptions::default());
    let stream = h.find("POST tools/call");
    h.answer(
        stream,
        200,
        &[("Content-Type", "text/event-stream")],
        &[b"id: ev-1\nretry: 10\ndata: \n\n"],
    );
    // The stream ended without the answer: a resume waits. Meanwhile the session is lost.
    let call = h.call("x", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    expire(&mut h, post);
    let init = h.find("POST initialize");
    h.renewed(init, "sess-2");
    h.advance_to_next_deadline();
    let get = h.find("GET last-event-id=ev-1");
    assert_eq!(h.request(get).header("mcp-session-id"), Some("sess-1"));
    h.answer(
        get,
        404,
        &[("Content-Type", "application/json")],
        &[EXPIRED],
    );
    assert_eq!(error_for(&h, resumed), LocalError::SessionExpired);
    assert_eq!(initializes(&h), 1, "a refused resume starts no renewal");
    let post = h.find(&format!("POST tools/call #{}", call.0));
    h.json(post, serde_json::from_str(&result_line(call.0)).unwrap());
    assert!(matches!(h.outcome(call), Some(Ok(_))));
}

#[test]
fn a_request_whose_deadline_passes_while_it_waits_is_not_sent() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    expire(&mut h, post);
    let init = h.find("POST initialize");
    let short = CallOptions {
        timeout: Duration::from_millis(50),
        ..CallOptions::default()
    };
    let waiting = h.call("y", short);
    h.advance_to_next_deadline();
    let error = error_for(&h, waiting);
    let LocalError::NotSent {
        which: Some(_),
        reason,
    } = &error
    else {
        panic!("{error:?}")
    };
    assert!(reason.contains("for a new session"), "{error}");
    h.renewed(init, "sess-2");
    assert!(
        !h.log
            .iter()
            .any(|l| *l == format!("POST tools/call #{}", waiting.0)),
        "{:?}",
        h.log
    );
    assert!(h
        .log
        .iter()
        .any(|l| *l == format!("POST tools/call #{}", call.0)));
}

#[test]
fn a_second_expiry_while_the_first_renewal_settles_renews_once_more() {
    let mut h = H::ready(405);
    let call = h.call("x", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    expire(&mut h, post);
    let init = h.find("POST initialize");
    h.renewed(init, "sess-2");
    // The new session is lost at once: its `initialized` notification meets a 404 (it is
    // dropped, not sent again), then the request sent once more in it does too.
    let initialized = h.find("POST notifications/initialized");
    let again = h.find(&format!("POST tools/call #{}", call.0));
    expire(&mut h, initialized);
    assert_eq!(initializes(&h), 2, "{:?}", h.log);
    expire(&mut h, again);
    assert_eq!(initializes(&h), 2, "one renewal for one lost session");
    assert_eq!(h.outcome(call), None);
    let init = h.find("POST initialize");
    h.renewed(init, "sess-3");
    let last = h.find(&format!("POST tools/call #{}", call.0));
    assert_eq!(h.request(last).header("mcp-session-id"), Some("sess-3"));
    h.json(last, serde_json::from_str(&result_line(call.0)).unwrap());
    assert!(matches!(h.outcome(call), Some(Ok(_))));
    assert_eq!(
        sessions_of(&h, call.0),
        ["sess-1", "sess-2", "sess-3"].map(|s| Some(s.to_string()))
    );
    assert!(h.events.iter().any(|e| matches!(e,
        Event::Diagnostic(Diagnostic::Http(m)) if m.contains("dropped"))));
}

#[test]
fn the_tap_sees_a_waiting_message_when_it_goes_out_not_when_it_is_queued() {
    let mut h = H::ready(405);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let tap = seen.clone();
    h.c.set_observer(Box::new(
        move |d: mcpwire_core::tap::Direction, b: &[u8]| {
            if d == mcpwire_core::tap::Direction::Outgoing {
                let v: Value = serde_json::from_slice(b).unwrap();
                let what = format!("{} #{}", v["method"].as_str().unwrap_or("?"), v["id"]);
                tap.lock().unwrap().push(what);
            }
        },
    ));
    let call = h.call("x", CallOptions::default());
    let post = h.find(&format!("POST tools/call #{}", call.0));
    expire(&mut h, post);
    let waiting = h.call("y", CallOptions::default());
    let queued = seen.lock().unwrap().clone();
    assert_eq!(queued, ["tools/call #1", "initialize #2"], "{queued:?}");
    let init = h.find("POST initialize");
    h.renewed(init, "sess-2");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "tools/call #1".to_string(),
            "initialize #2".into(),
            "notifications/initialized #null".into(),
            "tools/call #1".into(),
            format!("tools/call #{}", waiting.0),
        ]
    );
}

#[test]
fn a_request_refused_in_every_session_ends_without_renewing_forever() {
    let mut h = H::ready(405);
    let poison = h.call("poison", CallOptions::default());
    let mut session = 1;
    while h.outcome(poison).is_none() {
        assert!(session < 20, "renewed forever: {:?}", h.log);
        let post = h.find(&format!("POST tools/call #{}", poison.0));
        expire(&mut h, post);
        if h.outcome(poison).is_some() {
            break;
        }
        session += 1;
        let init = h.find("POST initialize");
        h.renewed(init, &format!("sess-{session}"));
        // Other calls succeed in every new session: the connection is healthy.
        let ok = h.call("fine", CallOptions::default());
        let post = h.find(&format!("POST tools/call #{}", ok.0));
        h.json(post, serde_json::from_str(&result_line(ok.0)).unwrap());
        assert!(matches!(h.outcome(ok), Some(Ok(_))));
    }
    assert_eq!(error_for(&h, poison), LocalError::SessionExpired);
    // Sent in 11 sessions: each of its 404s renewed the session (it was lost, for everyone);
    // after 10 renewals of its own it was not sent again.
    assert_eq!(initializes(&h), 11, "{:?}", h.log);
    assert_eq!(sessions_of(&h, poison.0).len(), 11);
    assert!(!h.c.is_closed());
}
