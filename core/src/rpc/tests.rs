//! The request engine: every way a request ends, deadlines, progress, cancellation, the peer's
//! requests, caps, and what happens to responses that match nothing. Deterministic: one epoch per
//! test, every other instant an offset from it.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::error::Closed;
use crate::jsonrpc::{self, codes, ErrorObject, Id, Message, Notification, RawJson};
use crate::rpc::{
    AppNotification, Deadline, Diagnostic, EndedAs, Engine, EngineError, Limits, LocalError,
    Origin, Outcome, Output, ProgressToken, Reply, RequestOptions, Requester, Responded,
    ResponseFor,
};
use crate::test_support::Rng;

// ----- helpers -----

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn raw(text: &str) -> RawJson {
    RawJson::from_string(text.to_owned()).unwrap()
}

/// Drains the outputs, putting each request on the wire as a transport would.
fn drain(engine: &mut Engine) -> Vec<Output> {
    let out: Vec<Output> = std::iter::from_fn(|| engine.poll_output()).collect();
    for o in &out {
        if let Output::Send(Message::Request(r)) = o {
            engine.leave(r.id.as_i64().expect("our ids are integers"));
        }
    }
    out
}

fn parse_message(text: &str) -> Message {
    match jsonrpc::parse(text.as_bytes()).unwrap() {
        jsonrpc::Parsed::Single(m) => m,
        jsonrpc::Parsed::Batch(_) => panic!("unexpected batch"),
    }
}

/// Sends one request with the given options and drains its `Send`.
fn send(engine: &mut Engine, now: Instant, method: &'static str, opts: RequestOptions) -> i64 {
    let id = engine.request(now, method, None, opts).unwrap();
    let out = drain(engine);
    assert_eq!(out.len(), 1, "{out:?}");
    match &out[0] {
        Output::Send(Message::Request(r)) => {
            assert_eq!(r.id, Id::Num(id));
            assert_eq!(r.method, method);
        }
        other => panic!("expected the request on the wire, got {other:?}"),
    }
    id
}

/// The outcomes in `outputs`, by id.
fn completions(outputs: &[Output]) -> Vec<(i64, Outcome)> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Completed { id, outcome, .. } => Some((*id, outcome.clone())),
            _ => None,
        })
        .collect()
}

/// The `requestId`s of the `notifications/cancelled` in `outputs`.
fn cancels_sent(outputs: &[Output]) -> Vec<i64> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Send(Message::Notification(n)) if n.method == "notifications/cancelled" => {
                let v: serde_json::Value = n.params_as().unwrap();
                Some(v["requestId"].as_i64().unwrap())
            }
            _ => None,
        })
        .collect()
}

fn diagnostics(outputs: &[Output]) -> Vec<Diagnostic> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Diagnostic(d) => Some(d.clone()),
            _ => None,
        })
        .collect()
}

fn result_for(id: impl Into<Id>, text: &str) -> Message {
    Message::result(id.into(), raw(text))
}

fn progress(token: &str, value: f64) -> Message {
    Message::notification(
        "notifications/progress",
        Some(raw(&format!(
            r#"{{"progressToken":{token},"progress":{value},"total":100,"message":"working"}}"#
        ))),
    )
}

fn assert_nothing_left(engine: &Engine) {
    let stats = engine.stats();
    assert_eq!(stats.pending, 0, "{stats:?}");
    assert_eq!(stats.timers, 0, "{stats:?}");
    assert_eq!(stats.progress_tokens, 0, "{stats:?}");
    assert_eq!(engine.poll_timeout(), None);
}

#[test]
fn an_engine_can_move_to_another_thread() {
    fn assert_send<T: Send + 'static>() {}
    assert_send::<Engine>();
    assert_send::<Output>();
}

#[test]
fn local_errors_read_well() {
    let timeout = LocalError::Timeout {
        which: Deadline::Total,
        despite_progress: false,
        method: "tools/call".into(),
        after: ms(3_000),
    };
    assert_eq!(
        timeout.to_string(),
        "no answer to tools/call within 3 s (its maximum total time); it may have run"
    );
    // Progress kept coming, but the call did not ask for it to extend the timeout: the message
    // names that cause, not a silent server.
    let despite = LocalError::Timeout {
        which: Deadline::Idle,
        despite_progress: true,
        method: "tools/call".into(),
        after: ms(30_000),
    };
    assert!(
        despite.to_string().contains("progress kept coming"),
        "{despite}"
    );
    let cancelled = LocalError::Cancelled {
        reason: Some("stop".into()),
    };
    assert_eq!(cancelled.to_string(), "request cancelled: stop");
}

// ----- every way a request ends -----

#[test]
fn result_reply_ends_the_request_with_the_result() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(&mut engine, t0, "tools/list", RequestOptions::new());
    engine.handle_message(t0 + ms(5), result_for(id, r#"{"tools":[]}"#));
    let out = drain(&mut engine);
    assert_eq!(
        out,
        vec![Output::Completed {
            id,
            method: "tools/list".into(),
            origin: Origin::CALLER,
            outcome: Ok(Reply::Result(raw(r#"{"tools":[]}"#))),
        }]
    );
    assert_nothing_left(&engine);
}

#[test]
fn server_error_is_a_reply_not_a_local_error() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(&mut engine, t0, "tools/call", RequestOptions::new());
    let error = ErrorObject::new(codes::INVALID_PARAMS, "no such tool");
    engine.handle_message(t0 + ms(5), Message::error(Some(Id::Num(id)), error.clone()));
    let out = drain(&mut engine);
    assert_eq!(completions(&out), vec![(id, Ok(Reply::Error(error)))]);
    assert_nothing_left(&engine);
}

#[test]
fn idle_timeout_ends_the_request_sends_the_cancel_and_removes_the_entry() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(&mut engine, t0, "tools/call", RequestOptions::new());
    assert_eq!(engine.poll_timeout(), Some(t0 + Duration::from_secs(30)));
    engine.handle_timeout(t0 + ms(29_999));
    assert!(drain(&mut engine).is_empty());
    assert!(engine.is_pending(id));

    engine.handle_timeout(t0 + Duration::from_secs(30));
    let out = drain(&mut engine);
    assert_eq!(cancels_sent(&out), vec![id]);
    assert_eq!(
        completions(&out),
        vec![(
            id,
            Err(LocalError::Timeout {
                which: Deadline::Idle,
                despite_progress: false,
                method: "tools/call".into(),
                after: ms(30_000),
            })
        )]
    );
    assert!(!engine.is_pending(id));
    assert_nothing_left(&engine);
}

#[test]
fn total_deadline_fires_with_no_progress_at_all() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let opts = RequestOptions::new()
        .timeout(ms(10_000))
        .max_total(ms(3_000))
        .reset_on_progress(true);
    let id = send(&mut engine, t0, "tools/call", opts);
    assert_eq!(engine.poll_timeout(), Some(t0 + ms(3_000)));
    engine.handle_timeout(t0 + ms(3_000));
    let out = drain(&mut engine);
    assert_eq!(cancels_sent(&out), vec![id]);
    assert_eq!(
        completions(&out),
        vec![(
            id,
            Err(LocalError::Timeout {
                which: Deadline::Total,
                despite_progress: false,
                method: "tools/call".into(),
                after: ms(3_000),
            })
        )]
    );
    assert_nothing_left(&engine);
}

#[test]
fn cancel_ends_the_request_and_sends_cancelled_with_the_reason() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(&mut engine, t0, "tools/call", RequestOptions::new());
    engine
        .cancel(t0 + ms(1), id, Some("user pressed stop".into()))
        .unwrap();
    let out = drain(&mut engine);
    let Output::Send(Message::Notification(n)) = &out[0] else {
        panic!("{out:?}")
    };
    assert_eq!(n.method, "notifications/cancelled");
    assert_eq!(
        n.params.as_ref().unwrap().get(),
        format!(r#"{{"requestId":{id},"reason":"user pressed stop"}}"#)
    );
    assert_eq!(
        completions(&out),
        vec![(
            id,
            Err(LocalError::Cancelled {
                reason: Some("user pressed stop".into())
            })
        )]
    );
    assert_nothing_left(&engine);
}

#[test]
fn stream_lost_ends_the_request_and_sends_nothing() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(&mut engine, t0, "tools/call", RequestOptions::new());
    engine.fail(t0 + ms(1), id, LocalError::StreamLost).unwrap();
    let out = drain(&mut engine);
    assert_eq!(out.len(), 2, "only the withdrawal and the outcome: {out:?}");
    assert_eq!(out[0], Output::Withdraw { id });
    assert_eq!(completions(&out), vec![(id, Err(LocalError::StreamLost))]);
    assert_nothing_left(&engine);
}

#[test]
fn session_expired_ends_the_request() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(&mut engine, t0, "resources/read", RequestOptions::new());
    engine
        .fail(t0 + ms(1), id, LocalError::SessionExpired)
        .unwrap();
    let out = drain(&mut engine);
    assert_eq!(
        completions(&out),
        vec![(id, Err(LocalError::SessionExpired))]
    );
    assert_nothing_left(&engine);
}

#[test]
fn close_ends_everything_pending_exactly_once_and_later_requests_fail_with_closed() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let mut ids = vec![send(
        &mut engine,
        t0,
        "tools/call",
        RequestOptions::new().progress_token(7),
    )];
    ids.extend((0..4).map(|_| send(&mut engine, t0, "tools/call", RequestOptions::new())));
    engine.handle_message(
        t0,
        Message::request(Id::from("s-1"), "sampling/createMessage", None),
    );
    drain(&mut engine);

    engine.close(t0 + ms(10), "server exited with status 1");
    let out = drain(&mut engine);
    let done = completions(&out);
    assert_eq!(done.iter().map(|(id, _)| *id).collect::<Vec<_>>(), ids);
    for (_, outcome) in &done {
        assert_eq!(
            outcome,
            &Err(LocalError::Closed(Closed::new(
                "server exited with status 1"
            )))
        );
    }
    assert_eq!(
        out.last(),
        Some(&Output::Closed(Closed::new("server exited with status 1")))
    );
    assert!(cancels_sent(&out).is_empty(), "a close sends nothing");
    assert!(engine.is_closed());
    assert_nothing_left(&engine);
    assert_eq!(engine.stats().inbound, 0);

    // Sticky: commands fail, saying why it closed; inputs are reported; nothing ends twice.
    let closed = EngineError::Closed(Closed::new("server exited with status 1"));
    assert_eq!(
        engine.request(t0 + ms(11), "ping", None, RequestOptions::new()),
        Err(closed.clone())
    );
    assert_eq!(
        engine.notify(t0 + ms(11), "notifications/initialized", None),
        Err(closed.clone())
    );
    assert_eq!(
        engine.cancel(t0 + ms(11), ids[0], None),
        Err(closed.clone())
    );
    assert_eq!(
        engine.respond(t0 + ms(11), &Id::from("s-1"), Ok(raw("{}"))),
        Err(closed.clone())
    );
    engine.close(t0 + ms(12), "again");
    engine.handle_timeout(t0 + Duration::from_secs(60));
    engine.handle_message(t0 + ms(13), result_for(ids[1], "{}"));
    engine.handle_message(t0 + ms(13), progress("7", 1.0));
    let out = drain(&mut engine);
    assert!(completions(&out).is_empty());
    assert_eq!(
        diagnostics(&out),
        vec![
            Diagnostic::UnmatchedResponse {
                id: Id::Num(ids[1]),
                status: ResponseFor::Ended(EndedAs::Closed),
                error: None,
            },
            Diagnostic::AfterClose(progress("7", 1.0)),
        ]
    );
}

#[test]
fn close_with_a_local_error_ends_pending_requests_with_it() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(&mut engine, t0, "tools/call", RequestOptions::new());
    engine.close_with(t0, LocalError::SessionExpired);
    let out = drain(&mut engine);
    assert_eq!(
        completions(&out),
        vec![(id, Err(LocalError::SessionExpired))]
    );
    assert!(matches!(out.last(), Some(Output::Closed(_))));
}

// ----- progress -----

#[test]
fn progress_is_routed_by_token_with_typed_fields() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let a = send(
        &mut engine,
        t0,
        "tools/call",
        RequestOptions::new().progress_token("a"),
    );
    let b = send(
        &mut engine,
        t0,
        "tools/call",
        RequestOptions::new().progress_token(1),
    );
    engine.handle_message(t0 + ms(1), progress("1", 10.0));
    engine.handle_message(t0 + ms(2), progress(r#""a""#, 2.5));
    let out = drain(&mut engine);
    let got: Vec<(i64, f64, Option<f64>, Option<String>)> = out
        .iter()
        .map(|o| match o {
            Output::Progress { id, progress: p } => (*id, p.progress, p.total, p.message.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (b, 10.0, Some(100.0), Some("working".into())),
            (a, 2.5, Some(100.0), Some("working".into())),
        ]
    );
    // The token `1` is not the token `"1"`.
    engine.handle_message(t0 + ms(3), progress(r#""1""#, 11.0));
    assert_eq!(
        diagnostics(&drain(&mut engine)),
        vec![Diagnostic::UnknownProgressToken {
            token: ProgressToken::from("1")
        }]
    );
}

#[test]
fn progress_resets_only_the_idle_deadline_and_only_when_asked() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let resetting = send(
        &mut engine,
        t0,
        "tools/call",
        RequestOptions::new()
            .timeout(ms(1_000))
            .max_total(ms(2_500))
            .reset_on_progress(true)
            .progress_token("r"),
    );
    let fixed = send(
        &mut engine,
        t0,
        "tools/call",
        RequestOptions::new().timeout(ms(1_000)).progress_token("f"),
    );

    // Progress at 900 ms: the resetting request's idle deadline moves to 1 900 ms; the other
    // request still times out at 1 000 ms.
    engine.handle_message(t0 + ms(900), progress(r#""r""#, 1.0));
    engine.handle_message(t0 + ms(900), progress(r#""f""#, 1.0));
    assert_eq!(drain(&mut engine).len(), 2);
    assert_eq!(engine.poll_timeout(), Some(t0 + ms(1_000)));
    engine.handle_timeout(t0 + ms(1_000));
    let out = drain(&mut engine);
    assert_eq!(
        completions(&out),
        vec![(
            fixed,
            Err(LocalError::Timeout {
                which: Deadline::Idle,
                despite_progress: true,
                method: "tools/call".into(),
                after: ms(1_000),
            })
        )]
    );
    assert!(engine.is_pending(resetting));
    assert_eq!(engine.poll_timeout(), Some(t0 + ms(1_900)));

    // More progress keeps it alive past its first idle deadlines, but the total deadline never
    // moves.
    engine.handle_message(t0 + ms(1_800), progress(r#""r""#, 2.0));
    engine.handle_message(t0 + ms(2_400), progress(r#""r""#, 3.0));
    drain(&mut engine);
    assert_eq!(engine.poll_timeout(), Some(t0 + ms(2_500)));
    engine.handle_timeout(t0 + ms(2_500));
    let out = drain(&mut engine);
    assert_eq!(
        completions(&out),
        vec![(
            resetting,
            Err(LocalError::Timeout {
                which: Deadline::Total,
                despite_progress: false,
                method: "tools/call".into(),
                after: ms(2_500),
            })
        )]
    );
    assert_nothing_left(&engine);
}

#[test]
fn progress_after_the_request_ended_is_a_diagnostic_and_its_token_is_free_again() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(
        &mut engine,
        t0,
        "tools/call",
        RequestOptions::new().progress_token(3),
    );
    assert_eq!(
        engine.request(
            t0,
            "tools/call",
            None,
            RequestOptions::new().progress_token(3)
        ),
        Err(EngineError::ProgressTokenInUse(ProgressToken::Num(3)))
    );
    engine.handle_message(t0 + ms(1), result_for(id, "{}"));
    engine.handle_message(t0 + ms(2), progress("3", 5.0));
    let out = drain(&mut engine);
    assert_eq!(
        diagnostics(&out),
        vec![Diagnostic::UnknownProgressToken {
            token: ProgressToken::Num(3)
        }]
    );
    send(
        &mut engine,
        t0,
        "tools/call",
        RequestOptions::new().progress_token(3),
    );
}

#[test]
fn progress_that_does_not_increase_is_a_diagnostic_and_extends_nothing() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(
        &mut engine,
        t0,
        "tools/call",
        RequestOptions::new()
            .progress_token(4)
            .timeout(Duration::from_millis(100))
            .reset_on_progress(true),
    );
    engine.handle_message(t0 + ms(50), progress("4", 10.0));
    engine.handle_message(t0 + ms(90), progress("4", 10.0));
    engine.handle_message(t0 + ms(95), progress("4", 3.0));
    let out = drain(&mut engine);
    let delivered: Vec<f64> = out
        .iter()
        .filter_map(|o| match o {
            Output::Progress { id: i, progress: p } if *i == id => Some(p.progress),
            _ => None,
        })
        .collect();
    assert_eq!(delivered, vec![10.0]);
    assert_eq!(
        diagnostics(&out),
        vec![
            Diagnostic::ProgressNotIncreasing {
                token: ProgressToken::Num(4),
                progress: 10.0,
                previous: 10.0
            },
            Diagnostic::ProgressNotIncreasing {
                token: ProgressToken::Num(4),
                progress: 3.0,
                previous: 10.0
            },
        ]
    );
    // Only the first update moved the idle deadline: 50 + 100 ms.
    assert_eq!(engine.poll_timeout(), Some(t0 + ms(150)));
}

#[test]
fn malformed_progress_is_a_diagnostic() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    send(
        &mut engine,
        t0,
        "tools/call",
        RequestOptions::new().progress_token(1),
    );
    engine.handle_message(
        t0,
        Message::notification(
            "notifications/progress",
            Some(raw(r#"{"progressToken":1}"#)),
        ),
    );
    engine.handle_message(t0, Message::notification("notifications/progress", None));
    let d = diagnostics(&drain(&mut engine));
    assert_eq!(d.len(), 2);
    assert!(d
        .iter()
        .all(|d| matches!(d, Diagnostic::MalformedProgress { .. })));
}

// ----- responses that match nothing -----

#[test]
fn late_response_after_timeout_is_reported_not_delivered() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(
        &mut engine,
        t0,
        "tools/call",
        RequestOptions::new().timeout(ms(100)),
    );
    engine.handle_timeout(t0 + ms(100));
    drain(&mut engine);
    engine.handle_message(t0 + ms(150), result_for(id, r#"{"late":true}"#));
    let out = drain(&mut engine);
    assert_eq!(
        out,
        vec![Output::Diagnostic(Diagnostic::UnmatchedResponse {
            id: Id::Num(id),
            status: ResponseFor::Ended(EndedAs::TimedOut(Deadline::Idle)),
            error: None,
        })]
    );
}

#[test]
fn response_after_cancel_is_reported_not_delivered() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(&mut engine, t0, "tools/call", RequestOptions::new());
    engine.cancel(t0, id, None).unwrap();
    drain(&mut engine);
    let error = ErrorObject::new(-32800, "request cancelled");
    engine.handle_message(t0 + ms(1), Message::error(Some(Id::Num(id)), error.clone()));
    assert_eq!(
        drain(&mut engine),
        vec![Output::Diagnostic(Diagnostic::UnmatchedResponse {
            id: Id::Num(id),
            status: ResponseFor::Ended(EndedAs::Cancelled),
            error: Some(error),
        })]
    );
}

#[test]
fn duplicate_response_is_reported_not_delivered() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(&mut engine, t0, "tools/list", RequestOptions::new());
    engine.handle_message(t0 + ms(1), result_for(id, "{}"));
    engine.handle_message(t0 + ms(2), result_for(id, "{}"));
    let out = drain(&mut engine);
    assert_eq!(completions(&out).len(), 1);
    assert_eq!(
        diagnostics(&out),
        vec![Diagnostic::UnmatchedResponse {
            id: Id::Num(id),
            status: ResponseFor::Ended(EndedAs::Answered),
            error: None,
        }]
    );
}

#[test]
fn response_for_an_id_never_sent_or_long_forgotten_says_so() {
    let t0 = crate::test_support::epoch();
    let config = Limits {
        ended_record: 2,
        ..Limits::default()
    };
    let mut engine = Engine::new(config);
    let ids: Vec<i64> = (0..3)
        .map(|_| send(&mut engine, t0, "ping", RequestOptions::new()))
        .collect();
    for &id in &ids {
        engine.handle_message(t0, result_for(id, "{}"));
    }
    drain(&mut engine);
    for id in [
        Id::Num(0),
        Id::Num(2),
        Id::Num(3),
        Id::Num(-1),
        Id::from("abc"),
    ] {
        engine.handle_message(t0, Message::result(id, raw("{}")));
    }
    let statuses: Vec<ResponseFor> = diagnostics(&drain(&mut engine))
        .into_iter()
        .map(|d| match d {
            Diagnostic::UnmatchedResponse { status, .. } => status,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        statuses,
        vec![
            ResponseFor::Forgotten,
            ResponseFor::Ended(EndedAs::Answered),
            ResponseFor::NeverSent,
            ResponseFor::NeverSent,
            ResponseFor::NeverSent,
        ]
    );
    assert_eq!(engine.stats().ended_remembered, 2);
}

#[test]
fn error_response_without_id_is_a_diagnostic_carrying_the_error() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(&mut engine, t0, "tools/list", RequestOptions::new());
    engine.handle_message(
        t0,
        parse_message(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#),
    );
    assert_eq!(
        drain(&mut engine),
        vec![Output::Diagnostic(Diagnostic::ResponseWithoutId {
            reply: Reply::Error(ErrorObject::new(codes::PARSE_ERROR, "bad")),
        })]
    );
    assert!(
        engine.is_pending(id),
        "it names no request, so it ends none"
    );
}

#[test]
fn numeric_id_echoed_as_a_string_matches_its_request() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    send(&mut engine, t0, "ping", RequestOptions::new());
    let id = send(&mut engine, t0, "tools/list", RequestOptions::new());
    engine.handle_message(
        t0,
        parse_message(&format!(r#"{{"jsonrpc":"2.0","id":"{id}","result":{{}}}}"#)),
    );
    assert_eq!(
        completions(&drain(&mut engine)),
        vec![(id, Ok(Reply::Result(raw("{}"))))]
    );
}

#[test]
fn a_batch_is_taken_element_by_element() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let a = send(&mut engine, t0, "ping", RequestOptions::new());
    let b = send(&mut engine, t0, "ping", RequestOptions::new());
    let parsed = jsonrpc::parse(
        format!(r#"[{{"jsonrpc":"2.0","id":{b},"result":{{}}}},7,{{"jsonrpc":"2.0","id":{a},"result":{{}}}}]"#)
            .as_bytes(),
    )
    .unwrap();
    engine.handle_parsed(t0, parsed);
    let out = drain(&mut engine);
    assert_eq!(
        completions(&out)
            .iter()
            .map(|(id, _)| *id)
            .collect::<Vec<_>>(),
        vec![b, a]
    );
    assert!(matches!(
        diagnostics(&out)[..],
        [Diagnostic::NotAMessage(_)]
    ));
}

// ----- ids and initialize -----

#[test]
fn initialize_is_never_cancelled_on_the_wire() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let protocol = RequestOptions::new().origin(Origin::PROTOCOL);
    let by_cancel = send(&mut engine, t0, "initialize", protocol.clone());
    engine
        .cancel(t0, by_cancel, Some("shutting down".into()))
        .unwrap();
    let out = drain(&mut engine);
    assert!(cancels_sent(&out).is_empty(), "{out:?}");
    assert_eq!(
        completions(&out),
        vec![(
            by_cancel,
            Err(LocalError::Cancelled {
                reason: Some("shutting down".into())
            })
        )]
    );

    let by_timeout = send(&mut engine, t0, "initialize", protocol.timeout(ms(50)));
    engine.handle_timeout(t0 + ms(50));
    let out = drain(&mut engine);
    assert!(cancels_sent(&out).is_empty(), "{out:?}");
    assert_eq!(
        completions(&out),
        vec![(
            by_timeout,
            Err(LocalError::Timeout {
                which: Deadline::Idle,
                despite_progress: false,
                method: "initialize".into(),
                after: ms(50),
            })
        )]
    );
    assert!(matches!(
        out[1],
        Output::Completed {
            origin: Origin {
                requester: Requester::Protocol,
                ..
            },
            ..
        }
    ));
}

#[test]
fn cancel_on_wire_off_ends_without_a_notification() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let opts = RequestOptions::new()
        .cancel_on_wire(false)
        .origin(Origin::CALLER.with_exchange(9))
        .timeout(ms(10));
    let a = send(&mut engine, t0, "tools/call", opts.clone());
    let b = send(&mut engine, t0, "tools/call", opts);
    engine.cancel(t0, a, None).unwrap();
    engine.handle_timeout(t0 + ms(10));
    let out = drain(&mut engine);
    assert!(cancels_sent(&out).is_empty());
    let ended: Vec<i64> = completions(&out).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ended, vec![a, b]);
    assert!(out.iter().all(|o| matches!(
        o,
        Output::Completed { origin, .. } if origin.exchange == Some(9)
    ) || matches!(o, Output::Withdraw { .. })));
}

#[test]
fn ids_are_unique_across_every_request_kind() {
    let t0 = crate::test_support::epoch();
    let config = Limits {
        max_pending: 3,
        ..Limits::default()
    };
    let mut engine = Engine::new(config);
    assert_eq!(engine.next_id(), 0);
    let mut seen = Vec::new();
    let kinds: [(&'static str, RequestOptions); 6] = [
        ("initialize", RequestOptions::new().origin(Origin::PROTOCOL)),
        ("ping", RequestOptions::new().origin(Origin::PROTOCOL)),
        ("tools/call", RequestOptions::new().progress_token(0)),
        (
            "server/discover",
            RequestOptions::new().origin(Origin::PROTOCOL),
        ),
        ("tools/list", RequestOptions::new().timeout(ms(1))),
        ("ping", RequestOptions::new().origin(Origin::PROTOCOL)),
    ];
    for round in 0..4 {
        for (method, opts) in kinds.iter().cloned() {
            let expected = engine.next_id();
            let id = loop {
                match engine.request(t0, method, None, opts.clone()) {
                    Ok(id) => break id,
                    // Refused requests use no id; end one and try again.
                    Err(EngineError::TooManyPending { limit: 3 }) => {
                        assert_eq!(engine.next_id(), expected);
                        let oldest = *seen.iter().find(|&&i| engine.is_pending(i)).unwrap();
                        if round % 2 == 0 {
                            engine.cancel(t0, oldest, None).unwrap();
                        } else {
                            engine.handle_message(t0, result_for(oldest, "{}"));
                        }
                        drain(&mut engine);
                    }
                    Err(e) => panic!("{e}"),
                }
            };
            assert_eq!(id, expected);
            seen.push(id);
            drain(&mut engine);
        }
    }
    let n = seen.len() as i64;
    assert_eq!(seen, (0..n).collect::<Vec<_>>());
}

// ----- time -----

#[test]
fn poll_timeout_moves_past_now_after_every_handle_timeout() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    for (timeout, total) in [
        (5, None),
        (5, Some(5)),
        (7, Some(3)),
        (0, None),
        (9, Some(20)),
    ] {
        let mut opts = RequestOptions::new().timeout(ms(timeout));
        if let Some(total) = total {
            opts = opts.max_total(ms(total));
        }
        send(&mut engine, t0, "ping", opts);
    }
    // Jump through instants that do and do not coincide with deadlines.
    for step in [0, 1, 3, 4, 5, 6, 8, 9, 10] {
        let now = t0 + ms(step);
        engine.handle_timeout(now);
        drain(&mut engine);
        assert!(engine.poll_timeout().is_none_or(|t| t > now), "at {step}");
    }
    assert_nothing_left(&engine);
}

#[test]
fn a_huge_timeout_means_no_deadline_rather_than_overflow() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = send(
        &mut engine,
        t0,
        "tools/call",
        RequestOptions::new()
            .timeout(Duration::MAX)
            .max_total(Duration::MAX),
    );
    assert_eq!(engine.poll_timeout(), None);
    engine.handle_message(t0, result_for(id, "{}"));
    drain(&mut engine);
    assert_nothing_left(&engine);
}

#[test]
fn hundred_thousand_pending_requests_fire_in_deadline_order_and_leave_nothing_behind() {
    const N: usize = 100_000;
    let t0 = crate::test_support::epoch();
    let config = Limits {
        max_pending: N,
        ..Limits::default()
    };
    let mut engine = Engine::new(config);
    let mut rng = Rng(0x5EED);
    let mut due: HashMap<i64, Instant> = HashMap::with_capacity(N);
    let mut answered = Vec::new();
    for i in 0..N {
        let idle = rng.below(60_000);
        let mut opts = RequestOptions::new().timeout(ms(idle));
        let mut fires = idle;
        if rng.below(3) == 0 {
            let total = rng.below(60_000);
            opts = opts.max_total(ms(total));
            fires = fires.min(total);
        }
        let id = engine.request(t0, "tools/call", None, opts).unwrap();
        assert_eq!(id, i as i64);
        drain(&mut engine);
        if rng.below(5) == 0 {
            answered.push(id);
        } else {
            due.insert(id, t0 + ms(fires));
        }
    }
    assert_eq!(engine.stats().pending, N);
    assert_eq!(
        engine.request(t0, "ping", None, RequestOptions::new()),
        Err(EngineError::TooManyPending { limit: N })
    );
    // A fifth are answered before any deadline: their heap entries go stale.
    for &id in &answered {
        engine.handle_message(t0, result_for(id, "{}"));
        drain(&mut engine);
    }
    assert!(engine.stats().timers <= 2 * 2 * (N - answered.len()) + 64);

    let mut last = t0;
    let mut fired = 0;
    while let Some(t) = engine.poll_timeout() {
        assert!(t >= last, "deadlines fire in order");
        last = t;
        engine.handle_timeout(t);
        assert!(engine.poll_timeout().is_none_or(|next| next > t));
        let out = drain(&mut engine);
        let done = completions(&out);
        assert!(!done.is_empty(), "a jump that fires nothing");
        assert_eq!(cancels_sent(&out).len(), done.len());
        for (id, outcome) in done {
            assert!(matches!(outcome, Err(LocalError::Timeout { .. })));
            assert_eq!(
                due.remove(&id),
                Some(t),
                "request {id} fired at its deadline"
            );
            fired += 1;
        }
    }
    assert!(due.is_empty());
    assert_eq!(fired + answered.len(), N);
    assert_nothing_left(&engine);
}

#[test]
fn memory_returns_to_baseline_after_a_burst() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    for round in 0..3u64 {
        let ids: Vec<i64> = (0..5_000)
            .map(|i| {
                let opts = RequestOptions::new()
                    .timeout(ms(100 + i))
                    .max_total(ms(10_000))
                    .reset_on_progress(true)
                    .progress_token(format!("tok-{round}-{i}"));
                let id = engine.request(t0, "tools/call", None, opts).unwrap();
                drain(&mut engine);
                id
            })
            .collect();
        for (i, &id) in ids.iter().enumerate() {
            engine.handle_message(t0 + ms(50), progress(&format!(r#""tok-{round}-{i}""#), 1.0));
            drain(&mut engine);
            match i % 3 {
                0 => engine.handle_message(t0 + ms(60), result_for(id, "{}")),
                1 => engine.cancel(t0 + ms(60), id, None).unwrap(),
                _ => {}
            }
            drain(&mut engine);
        }
        engine.handle_timeout(t0 + ms(60_000));
        drain(&mut engine);
        assert_nothing_left(&engine);
        assert_eq!(engine.stats().outputs, 0);
        assert!(engine.stats().ended_remembered <= 4_096);
    }
}

// ----- caps -----

#[test]
fn pending_cap_refuses_requests_with_too_many_pending_until_one_ends() {
    let t0 = crate::test_support::epoch();
    let config = Limits {
        max_pending: 2,
        ..Limits::default()
    };
    let mut engine = Engine::new(config);
    let a = send(&mut engine, t0, "ping", RequestOptions::new());
    send(&mut engine, t0, "ping", RequestOptions::new());
    assert_eq!(
        engine.request(t0, "ping", None, RequestOptions::new()),
        Err(EngineError::TooManyPending { limit: 2 })
    );
    assert!(drain(&mut engine).is_empty(), "a refusal queues nothing");
    engine.handle_message(t0, result_for(a, "{}"));
    drain(&mut engine);
    assert_eq!(send(&mut engine, t0, "ping", RequestOptions::new()), 2);
}

#[test]
fn default_caps_follow_the_design() {
    let config = Limits::default();
    assert_eq!(config.max_pending, 65_536);
    assert_eq!(config.max_inbound, 1_024);
    assert_eq!(config.max_notifications, 1_024);
    assert_eq!(RequestOptions::new().timeout, Duration::from_secs(30));
}

#[test]
fn misuse_is_an_error_not_a_panic() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    assert_eq!(engine.cancel(t0, 0, None), Err(EngineError::NotPending(0)));
    assert_eq!(
        engine.fail(t0, -5, LocalError::StreamLost),
        Err(EngineError::NotPending(-5))
    );
    let id = send(&mut engine, t0, "ping", RequestOptions::new());
    engine.cancel(t0, id, None).unwrap();
    drain(&mut engine);
    assert_eq!(
        engine.cancel(t0, id, None),
        Err(EngineError::NotPending(id))
    );
    assert_eq!(
        engine.respond(t0, &Id::Num(id), Ok(raw("{}"))),
        Err(EngineError::UnknownInbound(Id::Num(id)))
    );
    assert!(drain(&mut engine).is_empty());
}

// ----- the peer's requests -----

#[test]
fn inbound_request_is_surfaced_at_once_and_answered_exactly_once() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    // Our pending request 0 does not share an id space with the peer's request 0.
    let ours = send(&mut engine, t0, "tools/call", RequestOptions::new());
    let theirs = parse_message(r#"{"jsonrpc":"2.0","id":0,"method":"roots/list"}"#);
    engine.handle_message(t0, theirs.clone());
    let Message::Request(request) = theirs else {
        unreachable!()
    };
    assert_eq!(drain(&mut engine), vec![Output::InboundRequest(request)]);
    assert!(engine.is_pending(ours));

    assert_eq!(
        engine.respond(t0, &Id::Num(0), Ok(raw(r#"{"roots":[]}"#))),
        Ok(Responded::Sent)
    );
    assert_eq!(
        drain(&mut engine),
        vec![Output::Send(Message::result(
            Id::Num(0),
            raw(r#"{"roots":[]}"#)
        ))]
    );
    assert_eq!(
        engine.respond(t0, &Id::Num(0), Ok(raw("{}"))),
        Err(EngineError::UnknownInbound(Id::Num(0)))
    );
    assert!(drain(&mut engine).is_empty());
    assert!(engine.is_pending(ours));
    assert_eq!(engine.stats().inbound, 0);
}

#[test]
fn duplicate_inbound_id_still_pending_is_reported_not_answered() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    engine.handle_message(
        t0,
        Message::request(Id::from("x"), "elicitation/create", None),
    );
    drain(&mut engine);
    engine.handle_message(t0, Message::request(Id::from("x"), "ping", None));
    assert_eq!(
        drain(&mut engine),
        vec![Output::Diagnostic(Diagnostic::DuplicateInboundRequest {
            id: Id::from("x"),
            method: "ping".into(),
        })]
    );
    assert_eq!(
        engine.respond(t0, &Id::from("x"), Ok(raw("{}"))),
        Ok(Responded::Sent)
    );
    assert_eq!(drain(&mut engine).len(), 1);
}

#[test]
fn inbound_request_past_the_cap_is_answered_with_an_error() {
    let t0 = crate::test_support::epoch();
    let config = Limits {
        max_inbound: 2,
        ..Limits::default()
    };
    let mut engine = Engine::new(config);
    for i in 0..2 {
        engine.handle_message(t0, Message::request(i, "sampling/createMessage", None));
    }
    assert_eq!(drain(&mut engine).len(), 2);
    engine.handle_message(t0, Message::request(2, "sampling/createMessage", None));
    let out = drain(&mut engine);
    let [Output::Send(Message::Response(answer)), Output::Diagnostic(d)] = &out[..] else {
        panic!("{out:?}")
    };
    assert_eq!(answer.id, Some(Id::Num(2)));
    let error = answer.outcome.as_ref().unwrap_err();
    assert_eq!(error.code, codes::INTERNAL_ERROR);
    assert!(error.message.contains("limit 2"), "{}", error.message);
    assert_eq!(
        d,
        &Diagnostic::InboundRejected {
            id: Id::Num(2),
            method: "sampling/createMessage".into(),
            limit: 2,
        }
    );
    assert_eq!(engine.stats().inbound, 2);
    // Room again once one is answered.
    engine.respond(t0, &Id::Num(0), Ok(raw("{}"))).unwrap();
    engine.handle_message(t0, Message::request(3, "ping", None));
    assert!(matches!(
        drain(&mut engine)[..],
        [Output::Send(_), Output::InboundRequest(_)]
    ));
}

#[test]
fn inbound_cancelled_by_the_peer_is_reported_and_its_answer_is_not_sent() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    engine.handle_message(
        t0,
        Message::request(Id::from("e1"), "elicitation/create", None),
    );
    drain(&mut engine);
    engine.handle_message(
        t0,
        parse_message(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"e1","reason":"timeout"}}"#,
        ),
    );
    assert_eq!(
        drain(&mut engine),
        vec![Output::InboundCancelled {
            id: Id::from("e1"),
            reason: Some("timeout".into()),
        }]
    );
    assert_eq!(
        engine.respond(t0, &Id::from("e1"), Ok(raw("{}"))),
        Ok(Responded::SuppressedAfterCancel)
    );
    assert!(
        drain(&mut engine).is_empty(),
        "nothing is sent after a cancel"
    );
    assert_eq!(engine.stats().inbound, 0);

    // A cancel naming nothing of ours goes to the application as a notification.
    let stray = Message::notification(
        "notifications/cancelled",
        Some(raw(r#"{"requestId":"e1"}"#)),
    );
    engine.handle_message(t0, stray.clone());
    assert!(drain(&mut engine).is_empty());
    let Message::Notification(stray) = stray else {
        unreachable!()
    };
    assert_eq!(
        engine.poll_notification(),
        Some(AppNotification::Notification(stray))
    );
}

// ----- notifications for the application -----

#[test]
fn notifications_past_the_cap_drop_the_oldest_and_count_them() {
    let t0 = crate::test_support::epoch();
    let config = Limits {
        max_notifications: 3,
        ..Limits::default()
    };
    let mut engine = Engine::new(config);
    let id = send(&mut engine, t0, "tools/call", RequestOptions::new());
    let note = |i: u32| Notification {
        method: "notifications/message".into(),
        params: Some(raw(&format!(r#"{{"n":{i}}}"#))),
    };
    for i in 0..10 {
        engine.handle_message(t0, Message::Notification(note(i)));
        assert!(
            drain(&mut engine).is_empty(),
            "notifications are not outputs"
        );
    }
    // A slow reader does not hold up a response.
    engine.handle_message(t0, result_for(id, "{}"));
    assert_eq!(completions(&drain(&mut engine)).len(), 1);

    assert_eq!(engine.unread_notifications(), 4);
    assert_eq!(engine.stats().notifications, 3);
    let read: Vec<AppNotification> = std::iter::from_fn(|| engine.poll_notification()).collect();
    assert_eq!(
        read,
        vec![
            AppNotification::Dropped { count: 7 },
            AppNotification::Notification(note(7)),
            AppNotification::Notification(note(8)),
            AppNotification::Notification(note(9)),
        ]
    );
    assert_eq!(engine.stats().notifications_dropped, 7);
    assert_eq!(engine.unread_notifications(), 0);
}

// ----- at most once: a request goes on the wire only while it is pending -----

#[test]
fn a_request_that_ended_before_it_left_never_leaves_and_is_never_cancelled() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    // Made and queued, but the transport holds it (behind a gate): not yet on the wire.
    let timed = engine
        .request(t0, "tools/list", None, RequestOptions::new().timeout(ms(3)))
        .unwrap();
    let cancelled = engine
        .request(t0, "tools/call", None, RequestOptions::new())
        .unwrap();
    let _ = std::iter::from_fn(|| engine.poll_output()).count();
    engine.handle_timeout(t0 + ms(3));
    engine.cancel(t0 + ms(3), cancelled, None).unwrap();
    let out: Vec<Output> = std::iter::from_fn(|| engine.poll_output()).collect();
    assert!(cancels_sent(&out).is_empty(), "{out:?}");
    assert!(
        !out.iter().any(|o| matches!(o, Output::Withdraw { .. })),
        "nothing to withdraw: {out:?}"
    );
    assert_eq!(completions(&out).len(), 2);
    // The gate opens: neither may go.
    assert!(!engine.leave(timed));
    assert!(!engine.leave(cancelled));
    assert_nothing_left(&engine);
}

#[test]
fn a_request_that_left_and_ended_is_cancelled_and_withdrawn_once() {
    let t0 = crate::test_support::epoch();
    let mut engine = Engine::default();
    let id = engine
        .request(t0, "tools/call", None, RequestOptions::new().timeout(ms(3)))
        .unwrap();
    let _ = std::iter::from_fn(|| engine.poll_output()).count();
    assert!(engine.leave(id));
    engine.handle_timeout(t0 + ms(3));
    let out: Vec<Output> = std::iter::from_fn(|| engine.poll_output()).collect();
    assert_eq!(cancels_sent(&out), vec![id]);
    let withdrawn: Vec<_> = out
        .iter()
        .filter(|o| matches!(o, Output::Withdraw { .. }))
        .collect();
    assert_eq!(withdrawn, [&Output::Withdraw { id }]);
    // Answered: nothing to withdraw.
    let answered = send(&mut engine, t0, "ping", RequestOptions::new());
    engine.handle_message(
        t0,
        parse_message(&format!(
            r#"{{"jsonrpc":"2.0","id":{answered},"result":{{}}}}"#
        )),
    );
    let out = drain(&mut engine);
    assert!(
        !out.iter().any(|o| matches!(o, Output::Withdraw { .. })),
        "{out:?}"
    );
    // Closed: the transport withdraws everything itself.
    let _open = send(&mut engine, t0, "tools/call", RequestOptions::new());
    engine.close(t0, "bye");
    let out = drain(&mut engine);
    assert!(
        !out.iter().any(|o| matches!(o, Output::Withdraw { .. })),
        "{out:?}"
    );
}

#[test]
fn each_diagnostic_says_what_happened_in_words() {
    let said = |d: Diagnostic| d.to_string();
    let unmatched = |status| Diagnostic::UnmatchedResponse {
        id: Id::Num(7),
        status,
        error: None,
    };
    assert_eq!(
        said(unmatched(ResponseFor::Ended(EndedAs::TimedOut(
            Deadline::Idle
        )))),
        "a late response to request 7, which had timed out"
    );
    assert_eq!(
        said(unmatched(ResponseFor::Ended(EndedAs::Answered))),
        "a second response to request 7, already answered"
    );
    assert_eq!(
        said(Diagnostic::UnmatchedResponse {
            id: Id::Str("x".into()),
            status: ResponseFor::NeverSent,
            error: Some(ErrorObject::new(0, "no")),
        }),
        "a response to id \"x\", which no request of ours had: JSON-RPC error code 0: no"
    );
    assert_eq!(
        said(Diagnostic::ProgressNotIncreasing {
            token: ProgressToken::Num(3),
            progress: 1.0,
            previous: 2.5,
        }),
        "progress 1 for token 3 does not increase on 2.5; not delivered"
    );
    assert_eq!(
        said(Diagnostic::InboundRejected {
            id: Id::Num(4),
            method: "sampling/createMessage".into(),
            limit: 1024,
        }),
        "the server's request 4 (sampling/createMessage) was refused: 1024 of its requests are \
         already being served"
    );
    let late = Message::Notification(Notification {
        method: "notifications/message".into(),
        params: None,
    });
    assert_eq!(
        said(Diagnostic::AfterClose(late)),
        "notifications/message after the connection closed; ignored"
    );
}
