//! Sessions under load: 20 calls in flight against a server that expires sessions at random,
//! drops and resumes streams, resets connections, answers late, twice, or to unknown ids.
//!
//! Asserted: no call fails because of a session it did not lose; no message is processed
//! twice; no call gets another's answer; every call ends within its deadline; after the run a
//! call still succeeds. Every failure must match what the server knows it did to that call.
//!
//! CI runs a short soak (600 calls). `MCPWIRE_SOAK=1` runs a long one (20 000 calls, or
//! `MCPWIRE_SOAK_CALLS`), printing its counts.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::core::{CallError, LocalError};
use mcpwire::{CallOptions, ConnectOptions, Era, Error, ServerConfig};
use mcpwire_tests::scenario::Runtime;
use mcpwire_tests::session_soak::{Faults, Lost, SoakServer};
use serde_json::json;

const IN_FLIGHT: usize = 20;
/// Each call's timeout; a late answer comes after 1.5 times it.
const TIMEOUT: Duration = Duration::from_secs(2);
/// How far past its timeout a call may end (scheduling on a loaded machine).
const SLACK: Duration = Duration::from_secs(2);

fn calls() -> usize {
    if std::env::var_os("MCPWIRE_SOAK").is_some_and(|v| v == "1") {
        std::env::var("MCPWIRE_SOAK_CALLS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(20_000)
    } else {
        600
    }
}

/// How a call ended, as the test classifies it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Ok,
    MaybeExecuted,
    SessionExpired,
    Timeout,
    Http500,
    Other(String),
}

#[test]
fn sessions_under_load_fail_no_call_for_a_session_it_did_not_lose() {
    let total = calls();
    let faults = Faults {
        late_by: TIMEOUT + TIMEOUT / 2,
        ..Faults::default()
    };
    let seed = std::env::var("MCPWIRE_SOAK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_2026);
    let server = SoakServer::start(faults, seed);
    let outcomes: Arc<Mutex<Vec<(String, Kind, Duration)>>> = Arc::default();
    let started = Instant::now();
    let rt = Runtime::from_env();
    let final_call = rt.block_on(future::or(
        async {
            let mut options = ConnectOptions {
                era: Era::Handshake,
                ..ConnectOptions::default()
            };
            options.http.renewal_budget = 5;
            let config = ServerConfig::http(server.url());
            let client = Arc::new(
                rt.connect(&config, options)
                    .await
                    .unwrap_or_else(|e| panic!("connect: {e}")),
            );
            let next = Arc::new(AtomicUsize::new(0));
            let workers: Vec<_> = (0..IN_FLIGHT)
                .map(|_| {
                    let client = client.clone();
                    let next = next.clone();
                    let outcomes = outcomes.clone();
                    rt.spawn(async move {
                        loop {
                            let k = next.fetch_add(1, Ordering::Relaxed);
                            if k >= total {
                                break;
                            }
                            let token = format!("call-{k}");
                            let opts = CallOptions::default().timeout(TIMEOUT);
                            let start = Instant::now();
                            let r = client
                                .call_tool_with("echo", json!({ "token": token }), opts)
                                .await;
                            let kind = classify(&token, r);
                            let took = start.elapsed();
                            outcomes.lock().unwrap().push((token, kind, took));
                        }
                    })
                })
                .collect();
            for w in workers {
                w.await;
            }
            server.calm();
            let r = client
                .call_tool_with(
                    "echo",
                    json!({"token": "after"}),
                    CallOptions::default().timeout(Duration::from_secs(10)),
                )
                .await;
            let text = r.map(|r| r.text());
            client.close().await;
            text
        },
        async {
            rt.sleep(Duration::from_secs(60 + total as u64 / 10)).await;
            panic!("the soak did not end in time")
        },
    ));
    let outcomes = outcomes.lock().unwrap().clone();
    let counts = server.counts();
    let mut kinds: BTreeMap<Kind, usize> = BTreeMap::new();
    let mut violations = Vec::new();
    for (token, kind, took) in &outcomes {
        *kinds.entry(kind.clone()).or_default() += 1;
        let runs = server.executions(token);
        let lost = server.lost(token);
        let explained = match kind {
            Kind::Ok => runs == 1,
            Kind::MaybeExecuted => lost == Some(Lost::Reset),
            Kind::SessionExpired => lost == Some(Lost::SessionExpired),
            Kind::Timeout => lost == Some(Lost::Late),
            Kind::Http500 => lost == Some(Lost::Error500) && runs == 0,
            Kind::Other(_) => false,
        };
        if !explained {
            violations.push(format!("{token}: {kind:?} (server: {lost:?}, ran {runs}×)"));
        }
        if runs > 1 {
            violations.push(format!("{token}: processed {runs} times"));
        }
        if *took > TIMEOUT + SLACK {
            violations.push(format!("{token}: took {took:?}"));
        }
    }
    eprintln!(
        "session soak: {} calls in {:.1?}, seed {seed:#x}; outcomes {kinds:?}; server: \
         {} sessions ({} renewals), {} expiries, {} 404s, {} resumes, {} processed, {} twice",
        outcomes.len(),
        started.elapsed(),
        counts.initializes,
        counts.initializes.saturating_sub(1),
        counts.expiries,
        counts.not_found,
        counts.resumes,
        counts.processed,
        counts.twice,
    );
    assert_eq!(outcomes.len(), total, "every call ended");
    assert!(
        violations.is_empty(),
        "{} violations: {violations:#?}",
        violations.len()
    );
    assert_eq!(counts.twice, 0, "a message reached the server twice");
    assert_eq!(final_call.as_deref().ok(), Some("after"), "{final_call:?}");
    assert!(
        counts.expiries > 0 && counts.initializes > 1,
        "the soak expired no session: it proved nothing"
    );
    assert!(
        kinds.get(&Kind::Ok).copied().unwrap_or(0) > total / 2,
        "most calls succeed: {kinds:?}"
    );
}

fn classify(token: &str, r: Result<mcpwire::CallToolResult, Error>) -> Kind {
    match r {
        Ok(r) if r.text() == token => Kind::Ok,
        Ok(r) => Kind::Other(format!("misrouted: got {:?}", r.text())),
        Err(Error::MaybeExecuted { .. }) => Kind::MaybeExecuted,
        Err(Error::Call(CallError::Local(LocalError::SessionExpired))) => Kind::SessionExpired,
        Err(e) if e.is_timeout() => Kind::Timeout,
        Err(Error::Call(CallError::Local(LocalError::Http(h)))) if h.status == Some(500) => {
            Kind::Http500
        }
        Err(e) => Kind::Other(e.to_string()),
    }
}
