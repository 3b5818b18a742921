//! A stdio [`Connection`] driven by hand, as a driver would: bytes in and out, process actions,
//! the shutdown plan, the era probe's respawn, and time.

use std::time::{Duration, Instant};

use mcpwire_core::McpCall;
use mcpwire_core::{
    AuthorizationInput, CallError, CallOptions, ChosenEra, ClientConfig, ClientError, Closed,
    Connection, Diagnostic, Era, Event, HttpInput, LocalError, Output, ProcessAction, ProcessExit,
    StdioInput, StdioOptions, EXIT_AFTER_EOF_GRACE,
};

/// A connection and everything it handed out, drained after every step.
struct S {
    c: Connection,
    written: Vec<u8>,
    actions: Vec<ProcessAction>,
    events: Vec<Event>,
}

fn handshake() -> ClientConfig {
    ClientConfig {
        era: Era::Handshake,
        ..ClientConfig::default()
    }
}

impl S {
    fn new(t0: Instant, config: ClientConfig) -> S {
        S::with(Connection::stdio(t0, config, StdioOptions::default()))
    }

    fn with(c: Connection) -> S {
        let mut s = S {
            c,
            written: Vec::new(),
            actions: Vec::new(),
            events: Vec::new(),
        };
        s.drain();
        s
    }

    fn drain(&mut self) {
        while let Some(out) = self.c.poll_output() {
            match out {
                Output::Write(bytes) => self.written.extend_from_slice(&bytes),
                Output::Process(a) => self.actions.push(a),
                Output::Event(e) => self.events.push(e),
                other => panic!("not a stdio output: {other:?}"),
            }
        }
    }

    fn written(&mut self) -> String {
        String::from_utf8(std::mem::take(&mut self.written)).unwrap()
    }

    fn actions(&mut self) -> Vec<ProcessAction> {
        std::mem::take(&mut self.actions)
    }

    fn events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    fn stdout(&mut self, now: Instant, bytes: &[u8]) {
        self.c.handle_stdio(now, StdioInput::Stdout(bytes)).unwrap();
        self.drain();
    }

    fn timeout(&mut self, now: Instant) {
        self.c.handle_timeout(now);
        self.drain();
        assert!(
            self.c.poll_timeout().is_none_or(|t| t > now),
            "a deadline <= now stayed armed"
        );
    }
}

const INIT_ANSWER: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}\n";

#[test]
fn shutdown_escalates_and_ends_pending_calls() {
    let t0 = Instant::now();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let tap = seen.clone();
    let mut c = Connection::stdio(t0, handshake(), StdioOptions::default());
    // Installed before the first drain, the tap sees every frame, the first one included.
    c.set_observer(Box::new(move |d, b: &[u8]| {
        tap.lock()
            .unwrap()
            .push((d, String::from_utf8_lossy(b).into_owned()))
    }));
    let mut s = S::with(c);
    let written = s.written();
    assert!(
        written.ends_with('\n')
            && written.starts_with("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"")
    );
    // The server answers in two pieces, with some noise before.
    s.stdout(t0, b"booting...\n{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\",");
    s.stdout(
        t0,
        b"\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"x\",\"version\":\"1\"}}}\n",
    );
    let events = s.events();
    assert!(matches!(events[0], Event::Diagnostic(Diagnostic::Frame(_))));
    assert!(matches!(
        events[1],
        Event::Ready {
            era: ChosenEra::Handshake,
            ..
        }
    ));
    let call =
        s.c.call(
            t0,
            &McpCall::call_tool("slow", None),
            CallOptions::default(),
        )
        .unwrap();
    s.drain();
    let out = s.written();
    assert_eq!(out.lines().count(), 2, "initialized, then the call: {out}");
    s.c.close(t0);
    s.drain();
    let events = s.events();
    assert!(events.iter().any(|e| matches!(e, Event::CallDone { call: c, outcome: Err(CallError::Local(LocalError::Closed(_))) } if *c == call)));
    assert!(matches!(events.last(), Some(Event::Closed(_))));
    assert_eq!(s.actions(), [ProcessAction::CloseStdin]);
    assert_eq!(s.c.poll_timeout(), Some(t0 + Duration::from_secs(2)));
    s.timeout(t0 + Duration::from_secs(2));
    assert_eq!(s.actions(), [ProcessAction::Terminate]);
    s.timeout(t0 + Duration::from_secs(4));
    assert_eq!(s.actions(), [ProcessAction::Kill]);
    assert_eq!(s.c.poll_timeout(), None);
    assert!(!s.c.is_finished());
    let exit = ProcessExit {
        code: None,
        signal: Some(9),
    };
    s.c.handle_stdio(
        t0 + Duration::from_secs(4),
        StdioInput::Exit {
            exit,
            stderr_tail: "",
        },
    )
    .unwrap();
    s.drain();
    assert!(s.c.is_finished());
    let seen = seen.lock().unwrap();
    let dirs: Vec<_> = seen
        .iter()
        .map(|(d, b)| format!("{d:?} {}", &b[..b.len().min(30)]))
        .collect();
    // initialize, the noise line, the answer, initialized and the call.
    assert_eq!(dirs.len(), 5, "{dirs:?}");
}

#[test]
fn the_process_exiting_mid_request_ends_it_with_the_exit_status_and_stderr() {
    let t0 = Instant::now();
    let mut s = S::new(t0, handshake());
    let exit = ProcessExit {
        code: Some(3),
        signal: None,
    };
    s.c.handle_stdio(
        t0,
        StdioInput::Exit {
            exit,
            stderr_tail: "Error: cannot find module\n",
        },
    )
    .unwrap();
    s.drain();
    let events = s.events();
    let Event::HandshakeFailed(CallError::Local(LocalError::Closed(Closed { reason }))) =
        &events[0]
    else {
        panic!("{events:?}")
    };
    assert!(
        reason.contains("exit code 3") && reason.contains("cannot find module"),
        "{reason}"
    );
    assert!(matches!(events.last(), Some(Event::Closed(_))));
    assert_eq!(s.actions(), [], "an exited process needs no shutdown");
    assert!(s.c.is_finished());
}

#[test]
fn stdout_eof_waits_briefly_for_the_exit_status_then_ends_calls_without_it() {
    let t0 = Instant::now();
    let mut s = S::new(t0, handshake());
    s.c.handle_stdio(t0, StdioInput::StdoutEof).unwrap();
    s.drain();
    assert_eq!(s.events(), [], "nothing ends before the grace runs out");
    let t1 = s.c.poll_timeout().unwrap();
    assert_eq!(t1, t0 + EXIT_AFTER_EOF_GRACE);
    s.timeout(t1);
    let events = s.events();
    let Event::HandshakeFailed(CallError::Local(LocalError::Closed(Closed { reason }))) =
        &events[0]
    else {
        panic!("{events:?}")
    };
    assert!(reason.contains("closed its stdout"));
    assert_eq!(s.actions(), [ProcessAction::CloseStdin]);
    assert!(s.c.poll_timeout().unwrap() > t1);
}

#[test]
fn a_server_that_never_answers_gets_the_handshake_on_a_new_process() {
    let t0 = Instant::now();
    let mut s = S::new(t0, ClientConfig::default());
    assert!(s.written().contains("server/discover"));
    // The probe timeout (10 s by default) passes in silence.
    let deadline = s.c.poll_timeout().unwrap();
    assert_eq!(deadline, t0 + Duration::from_secs(10));
    s.timeout(deadline);
    assert_eq!(
        s.actions(),
        [ProcessAction::Kill, ProcessAction::SpawnAgain]
    );
    assert!(!s.c.is_finished(), "a new process is coming");
    // Whatever was queued for the old process is not for the new one.
    s.written();
    s.c.handle_stdio(deadline, StdioInput::Respawned).unwrap();
    s.drain();
    let out = s.written();
    assert_eq!(
        out.lines().count(),
        1,
        "only initialize, no stale cancel: {out}"
    );
    assert!(out.contains("\"method\":\"initialize\""), "{out}");
    s.stdout(deadline, INIT_ANSWER);
    assert!(s.c.is_ready());
    assert_eq!(s.c.era(), Some(ChosenEra::Handshake));
}

#[test]
fn a_server_that_exits_on_the_probe_gets_the_handshake_on_a_new_process() {
    let t0 = Instant::now();
    let mut s = S::new(t0, ClientConfig::default());
    s.written();
    s.c.handle_stdio(t0, StdioInput::StdoutEof).unwrap();
    let exit = ProcessExit {
        code: Some(1),
        signal: None,
    };
    s.drain();
    assert_eq!(s.actions(), [], "its exit is awaited first");
    s.c.handle_stdio(
        t0,
        StdioInput::Exit {
            exit,
            stderr_tail: "unexpected request before initialize",
        },
    )
    .unwrap();
    s.drain();
    // It blamed the probe: it is started again for the handshake.
    assert_eq!(s.actions(), [ProcessAction::SpawnAgain]);
    // No call failed: the connection goes on, and says it starts the server again.
    let events = s.events();
    assert!(
        matches!(events.as_slice(), [Event::Restarting { reason }] if reason.contains("server/discover")),
        "{events:?}"
    );
    s.c.handle_stdio(t0, StdioInput::Respawned).unwrap();
    s.drain();
    assert!(s.written().contains("initialize"));
}

#[test]
fn a_server_that_fails_to_start_during_the_probe_is_not_started_again() {
    let t0 = Instant::now();
    let mut s = S::new(t0, ClientConfig::default());
    s.written();
    s.c.handle_stdio(t0, StdioInput::StdoutEof).unwrap();
    let exit = ProcessExit {
        code: Some(1),
        signal: None,
    };
    s.c.handle_stdio(
        t0,
        StdioInput::Exit {
            exit,
            stderr_tail: "Error: Cannot find module 'express'",
        },
    )
    .unwrap();
    s.drain();
    assert!(
        !s.actions().contains(&ProcessAction::SpawnAgain),
        "a start-up failure is not started again"
    );
    let events = s.events();
    let Some(Event::HandshakeFailed(CallError::Local(LocalError::Closed(Closed { reason })))) =
        events.first()
    else {
        panic!("{events:?}")
    };
    assert!(reason.contains("exit code 1"), "{reason}");
    assert!(reason.contains("before answering anything"), "{reason}");
    assert!(reason.contains("Cannot find module"), "{reason}");
    assert!(s.c.is_closed());
    assert!(!events.iter().any(|e| matches!(e, Event::Restarting { .. })));
}

#[test]
fn a_server_that_exits_cleanly_or_only_closes_stdout_during_the_probe_is_started_again() {
    let t0 = Instant::now();
    // Exit code 0: it chose to end on the probe.
    let mut s = S::new(t0, ClientConfig::default());
    s.written();
    let exit = ProcessExit {
        code: Some(0),
        signal: None,
    };
    s.c.handle_stdio(
        t0,
        StdioInput::Exit {
            exit,
            stderr_tail: "",
        },
    )
    .unwrap();
    s.drain();
    assert_eq!(s.actions(), [ProcessAction::SpawnAgain]);
    // Its stdout closed and it did not exit within the grace: it is killed, then started again.
    let mut s = S::new(t0, ClientConfig::default());
    s.written();
    s.c.handle_stdio(t0, StdioInput::StdoutEof).unwrap();
    s.drain();
    assert_eq!(s.actions(), []);
    let t1 = s.c.poll_timeout().unwrap();
    assert_eq!(t1, t0 + EXIT_AFTER_EOF_GRACE);
    s.timeout(t1);
    assert_eq!(
        s.actions(),
        [ProcessAction::Kill, ProcessAction::SpawnAgain]
    );
    assert!(matches!(s.events().as_slice(), [Event::Restarting { .. }]));
}

#[test]
fn commands_refuse_misuse_at_once() {
    let t0 = Instant::now();
    let mut s = S::new(t0, handshake());
    // Before the handshake only ping may go.
    assert_eq!(
        s.c.call(
            t0,
            &McpCall::call_tool("echo", None),
            CallOptions::default()
        ),
        Err(ClientError::NotReady)
    );
    assert!(s
        .c
        .call(t0, &McpCall::ping(), CallOptions::default())
        .is_ok());
    s.drain();
    s.written();
    s.stdout(
        t0,
        b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}\n",
    );
    assert!(s.c.is_ready());
    // The server offers no tools.
    assert_eq!(
        s.c.call(t0, &McpCall::list_tools(), CallOptions::default()),
        Err(ClientError::NotSupported("tools"))
    );
    s.c.close(t0);
    s.drain();
    assert_eq!(
        s.c.call(
            t0,
            &McpCall::request("tools/list", None),
            CallOptions::default()
        ),
        Err(ClientError::Closed(Closed::new("closed by the client")))
    );
    assert!(s.c.is_closed());
}

#[test]
fn poll_timeout_moves_past_now_through_a_call_and_a_shutdown() {
    let t0 = Instant::now();
    let mut s = S::new(t0, handshake());
    let mut now = t0;
    // Only time passes: the handshake times out, the shutdown escalates, and after every
    // handle_timeout no deadline <= now is left.
    let mut steps = 0;
    while let Some(t) = s.c.poll_timeout() {
        assert!(t >= now, "a deadline in the past");
        now = t;
        s.timeout(now);
        steps += 1;
        assert!(steps < 10, "time never settles");
    }
    assert!(s
        .events()
        .iter()
        .any(|e| matches!(e, Event::HandshakeFailed(_))));
}

#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "drive rule")]
fn a_driver_that_never_drains_is_caught() {
    let t0 = Instant::now();
    let mut c = Connection::stdio(t0, handshake(), StdioOptions::default());
    for _ in 0..2_000 {
        c.handle_stdio(t0, StdioInput::Stdout(b"noise\n")).unwrap();
    }
}

#[test]
fn a_server_that_dies_mid_call_ends_the_call_as_maybe_executed() {
    let t0 = Instant::now();
    let mut s = S::new(t0, handshake());
    s.written();
    s.stdout(
        t0,
        b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}\n",
    );
    let call =
        s.c.call(
            t0,
            &McpCall::call_tool("charge_card", None),
            CallOptions::default(),
        )
        .unwrap();
    s.drain();
    assert!(s.written().contains("charge_card"));
    let exit = ProcessExit {
        code: None,
        signal: Some(9),
    };
    s.c.handle_stdio(
        t0,
        StdioInput::Exit {
            exit,
            stderr_tail: "killed",
        },
    )
    .unwrap();
    s.drain();
    let events = s.events();
    let outcome = events.iter().find_map(|e| match e {
        Event::CallDone { call: c, outcome } if *c == call => Some(outcome.clone()),
        _ => None,
    });
    // The call was written: the server may have run it before it died. It is not sent again.
    let Some(Err(CallError::Local(LocalError::MaybeExecuted { reason, .. }))) = outcome else {
        panic!("{events:?}")
    };
    assert!(
        reason.contains("signal 9") && reason.contains("killed"),
        "{reason}"
    );
    assert!(matches!(events.last(), Some(Event::Closed(_))));
    assert_eq!(s.written(), "", "nothing sent again");
}

#[test]
fn the_probe_never_waits_longer_than_a_third_of_the_start_up_budget() {
    let t0 = Instant::now();
    // (start-up budget, probe's own timeout) -> how long the probe waits: the probe's timeout,
    // or a third of the budget in whole seconds when less.
    let cases = [
        (30_000, 10_000, 10_000),
        (30_000, 5_000, 5_000),
        (20_000, 10_000, 6_000),
        (10_000, 10_000, 3_000),
        (9_000, 10_000, 3_000),
        (3_000, 10_000, 1_000),
    ];
    let ms = Duration::from_millis;
    let cases = cases.map(|(budget, probe, waits)| (ms(budget), ms(probe), ms(waits)));
    // Under a second, the third itself.
    let short = [(ms(2_000), ms(10_000), ms(2_000) / 3)];
    for (budget, probe, waits) in cases.into_iter().chain(short) {
        let config = ClientConfig {
            init_timeout: budget,
            probe_timeout: probe,
            ..ClientConfig::default()
        };
        let s = S::new(t0, config);
        let deadline = s.c.poll_timeout().unwrap();
        assert_eq!(deadline - t0, waits, "{budget:?} budget");
    }
}

#[test]
fn an_answer_over_the_cap_ends_its_call_at_once_and_says_how_to_raise_it() {
    let t0 = Instant::now();
    let options = StdioOptions {
        max_line: 256,
        ..StdioOptions::default()
    };
    let mut s = S::with(Connection::stdio(t0, handshake(), options));
    s.written();
    s.stdout(
        t0,
        b"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}\n",
    );
    let big =
        s.c.call(
            t0,
            &McpCall::call_tool("read", None),
            CallOptions::default(),
        )
        .unwrap();
    let other =
        s.c.call(
            t0,
            &McpCall::call_tool("other", None),
            CallOptions::default(),
        )
        .unwrap();
    s.drain();
    // The answer to the first call, far over the cap, arrives in pieces.
    s.stdout(t0, format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"", big.0).as_bytes());
    s.stdout(t0, &[b'x'; 1000]);
    s.stdout(t0, b"\"}]}}\n");
    let done = |events: &[Event], call| {
        events.iter().find_map(|e| match e {
            Event::CallDone { call: c, outcome } if *c == call => Some(outcome.clone()),
            _ => None,
        })
    };
    let events = s.events();
    let Some(Err(CallError::Local(LocalError::ResponseTooLarge { limit: 256 }))) =
        done(&events, big)
    else {
        panic!("{events:?}")
    };
    assert!(done(&events, other).is_none(), "only the call it answered");
    let message = LocalError::ResponseTooLarge { limit: 256 }.to_string();
    assert!(message.contains("256") && message.contains("--max-message-size"));
    // A request of the server's over the cap, with the id of a call of ours: it answered
    // nothing, and ends no call.
    s.stdout(
        t0,
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"sampling/createMessage\",\"params\":{{\"x\":\"", other.0).as_bytes(),
    );
    s.stdout(t0, &[b'z'; 1000]);
    s.stdout(t0, b"\"}}\n");
    let events = s.events();
    assert!(done(&events, other).is_none(), "{events:?}");
    // An answer over the cap whose id comes after its result: every call in flight is told.
    s.stdout(t0, b"{\"jsonrpc\":\"2.0\",\"result\":{\"text\":\"");
    s.stdout(t0, &[b'y'; 1000]);
    s.stdout(t0, b"\"},\"id\":9}\n");
    let events = s.events();
    assert!(matches!(
        done(&events, other),
        Some(Err(CallError::Local(LocalError::ResponseTooLarge { .. })))
    ));
}

#[test]
fn the_era_probe_and_the_handshake_share_one_start_up_budget() {
    // A server that never answers: with a start-up timeout of 3 s the probe waits 1 s, the
    // handshake on a new process the rest, and the start fails after 3 s, not after the
    // probe's wait and then the handshake's, saying 3 s.
    let t0 = Instant::now();
    let config = ClientConfig {
        init_timeout: Duration::from_secs(3),
        probe_timeout: Duration::from_secs(10),
        ..ClientConfig::default()
    };
    let mut s = S::new(t0, config);
    assert!(s.written().contains("server/discover"));
    let probed = t0 + Duration::from_secs(1);
    assert_eq!(s.c.poll_timeout(), Some(probed));
    s.timeout(probed);
    assert_eq!(
        s.actions(),
        [ProcessAction::Kill, ProcessAction::SpawnAgain]
    );
    s.written();
    s.c.handle_stdio(probed, StdioInput::Respawned).unwrap();
    s.drain();
    assert!(s.written().contains("\"method\":\"initialize\""));
    assert_eq!(s.c.poll_timeout(), Some(t0 + Duration::from_secs(3)));
    s.timeout(t0 + Duration::from_secs(3));
    assert!(s.c.is_closed(), "{:?}", s.events());
    let closed = s.events().into_iter().find_map(|e| match e {
        Event::Closed(Closed { reason }) => Some(reason),
        _ => None,
    });
    let reason = closed.expect("closed");
    assert!(
        reason.contains("no answer to initialize within 3 s"),
        "{reason}"
    );

    // A probe answered at once leaves the handshake the rest of the budget.
    let config = ClientConfig {
        init_timeout: Duration::from_secs(3),
        ..ClientConfig::default()
    };
    let mut s = S::new(t0, config);
    s.written();
    let refused = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n";
    s.stdout(t0 + Duration::from_millis(500), refused);
    assert!(s.written().contains("initialize"));
    assert_eq!(s.c.poll_timeout(), Some(t0 + Duration::from_secs(3)));
}

/// A server that ignores unknown methods (silent on the probe) with a start-up budget of 10 s
/// or less still gets `initialize`, and answers it; one that never answers fails with the
/// budget as it was set in the words (30 s, never the 20 s the probe left, nor 19.997 s).
#[test]
fn initialize_always_gets_its_chance_and_a_timeout_quotes_the_budget() {
    let t0 = Instant::now();
    for budget in [10u64, 5, 3] {
        let config = ClientConfig {
            init_timeout: Duration::from_secs(budget),
            ..ClientConfig::default()
        };
        let mut s = S::new(t0, config);
        s.written();
        let probed = s.c.poll_timeout().unwrap();
        s.timeout(probed);
        assert_eq!(
            s.actions(),
            [ProcessAction::Kill, ProcessAction::SpawnAgain]
        );
        s.written();
        s.c.handle_stdio(probed, StdioInput::Respawned).unwrap();
        s.drain();
        assert!(
            s.written().contains("\"method\":\"initialize\""),
            "{budget} s"
        );
        s.stdout(probed + Duration::from_millis(100), INIT_ANSWER);
        assert!(s.c.is_ready(), "{budget} s: {:?}", s.events());
    }

    let mut s = S::new(t0, ClientConfig::default());
    s.written();
    let probed = s.c.poll_timeout().unwrap();
    assert_eq!(probed, t0 + Duration::from_secs(10));
    // The new process comes a little late: what is left is not a whole number of seconds.
    let respawned = probed + Duration::from_millis(3);
    s.timeout(respawned);
    s.c.handle_stdio(respawned, StdioInput::Respawned).unwrap();
    s.drain();
    let deadline = s.c.poll_timeout().unwrap();
    assert_eq!(deadline, t0 + Duration::from_secs(30));
    s.timeout(deadline);
    let failed = s.events().into_iter().find_map(|e| match e {
        Event::HandshakeFailed(e) => Some(e.to_string()),
        _ => None,
    });
    let failed = failed.expect("the handshake failed");
    assert!(
        failed.contains("no answer to initialize within 30 s"),
        "{failed}"
    );
}

/// An input of the other transport is refused in every build, and changes nothing: no output,
/// the same deadline, the same calls in flight.
#[test]
fn http_and_authorization_inputs_are_refused_over_stdio() {
    let t0 = Instant::now();
    let mut s = S::new(t0, handshake());
    s.written();
    let deadline = s.c.poll_timeout();
    let pending = s.c.pending_requests();
    let headers = [("content-type".to_string(), "application/json".to_string())];
    let refused = [
        s.c.handle_http(
            t0,
            0,
            HttpInput::Head {
                status: 200,
                headers: &headers,
            },
        ),
        s.c.handle_http(t0, 0, HttpInput::Body(b"{}")),
        s.c.handle_http(t0, 0, HttpInput::End),
        s.c.handle_http(t0, 0, HttpInput::Failure("reset".into())),
        s.c.handle_http(t0, 0, HttpInput::Unsent("refused".into())),
        s.c.handle_http(t0, 0, HttpInput::Note("spoke HTTP/1.1")),
        s.c.handle_authorization(t0, AuthorizationInput::Token("tok")),
        s.c.handle_authorization(t0, AuthorizationInput::Failed("no")),
    ];
    for r in refused {
        assert!(
            matches!(
                r,
                Err(ClientError::WrongTransport {
                    transport: "stdio",
                    ..
                })
            ),
            "{r:?}"
        );
    }
    assert_eq!(
        s.c.handle_http(t0, 0, HttpInput::End)
            .unwrap_err()
            .to_string(),
        "the end of a response is no input of a connection over stdio"
    );
    assert!(
        s.c.poll_output().is_none(),
        "a refused input queued something"
    );
    assert_eq!(s.c.poll_timeout(), deadline);
    assert_eq!(s.c.pending_requests(), pending);
    // The connection lives on: the server's answer completes the handshake.
    let answer = String::from_utf8_lossy(INIT_ANSWER).replace("\"id\":1", "\"id\":0");
    s.stdout(t0, answer.as_bytes());
    assert!(s.c.is_ready());
}
