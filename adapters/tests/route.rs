//! A caller waiting for its answer runs the connection itself; these tests hold the ways that
//! can go wrong: a caller that stops polling while it holds the claim, a caller dropped while it
//! holds it, and many callers on many threads sharing one connection; each on every runtime
//! (see `runtimes`).

use std::pin::pin;
use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::ConnectOptions;
use serde_json::json;

mod common;

#[macro_use]
mod runtimes;
use common::demo;
use runtimes::Rt;

/// A call that takes a while (two steps of 100 ms), so that its first poll cannot end it.
fn slow() -> serde_json::Value {
    json!({"steps": 2, "interval_ms": 100})
}

/// A call polled once (it claims the connection and sends its request) and then left unpolled
/// while another call is awaited: the other call still completes (the driver takes the claim
/// back), and so does the first when it is polled again.
async fn a_call_left_unpolled(rt: &Rt, client: &mcpwire::Client) {
    let mut first = pin!(client.call_tool("slow", slow()));
    assert!(future::poll_once(&mut first).await.is_none());
    let start = Instant::now();
    let second = rt
        .within(
            Duration::from_secs(5),
            "the second call",
            client.call_tool("echo", json!({"message": "second"})),
        )
        .await
        .unwrap();
    assert_eq!(second.text(), "second");
    // The driver's watch takes the claim back within its longest period (320 ms) and one short
    // one (20 ms); allow for a slow machine, but not for a wait on the request's own deadline
    // (60 s).
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    let first = rt
        .within(Duration::from_secs(5), "the first call", first)
        .await
        .unwrap();
    assert!(!first.is_error, "{first:?}");
}

fn a_call_left_unpolled_does_not_stall_the_others_driver_on_another_thread(rt: &Rt) {
    let (client, driver) = rt
        .connect_with_driver(&demo(), ConnectOptions::default())
        .unwrap();
    let executor = rt.drive_on_thread(driver);
    rt.block_on(async {
        client.ready().await.unwrap();
        a_call_left_unpolled(rt, &client).await;
    });
    drop(client);
    executor.join().unwrap();
}

fn a_call_left_unpolled_does_not_stall_the_others_on_one_thread(rt: &Rt) {
    rt.with_driver_on_one_executor(&demo(), ConnectOptions::default(), |client| async move {
        client.ready().await.unwrap();
        a_call_left_unpolled(rt, &client).await;
    });
}

fn a_call_dropped_while_it_runs_the_connection_hands_it_back(rt: &Rt) {
    rt.block_on(async {
        let client = rt
            .connect(&demo(), ConnectOptions::default())
            .await
            .unwrap();
        for i in 0..20 {
            let mut dropped = Box::pin(client.call_tool("slow", slow()));
            assert!(future::poll_once(&mut dropped).await.is_none());
            drop(dropped);
            let r = rt
                .within(
                    Duration::from_secs(5),
                    "the call after a dropped one",
                    client.call_tool("echo", json!({"message": format!("kept {i}")})),
                )
                .await
                .unwrap();
            assert_eq!(r.text(), format!("kept {i}"));
        }
        assert_eq!(client.calls_in_flight(), 0);
        client.close().await;
    });
}

fn callers_on_eight_threads_share_one_connection_and_each_gets_its_own_answers(rt: &Rt) {
    let client = rt
        .block_on(rt.connect(&demo(), ConnectOptions::default()))
        .unwrap();
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let client = client.clone();
                s.spawn(move || {
                    // Half the threads block in the runtime's `block_on` (smol's drives the IO
                    // reactor; tokio's current_thread one drives it while it holds the runtime),
                    // half in a plain `block_on` (which does not).
                    let run = async {
                        for i in 0..300 {
                            let message = format!("thread {t} call {i}");
                            let r = client
                                .call_tool("echo", json!({ "message": message }))
                                .await
                                .unwrap();
                            assert_eq!(r.text(), message);
                        }
                    };
                    let run = rt.within(Duration::from_secs(60), "a thread's calls", run);
                    if t % 2 == 0 {
                        rt.block_on(run);
                    } else {
                        future::block_on(run);
                    }
                })
            })
            .collect();
        // This thread runs the runtime meanwhile (a current_thread runtime's IO and timers
        // make progress only while some thread runs it).
        rt.block_on(async {
            while !threads.iter().all(|t| t.is_finished()) {
                rt.sleep(Duration::from_millis(10)).await;
            }
        });
        for t in threads {
            t.join().unwrap();
        }
    });
    assert_eq!(client.calls_in_flight(), 0);
    rt.block_on(client.close());
}

on_every_runtime!(
    a_call_left_unpolled_does_not_stall_the_others_driver_on_another_thread,
    a_call_left_unpolled_does_not_stall_the_others_on_one_thread,
    a_call_dropped_while_it_runs_the_connection_hands_it_back,
    callers_on_eight_threads_share_one_connection_and_each_gets_its_own_answers,
);
