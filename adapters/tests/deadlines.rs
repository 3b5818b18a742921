//! A call's deadline never depends on the driver's health: the driver dropped mid-call, its
//! executor shut down, or nothing running the connection at all (the driver never polled and
//! the caller holding the connection gone idle) — every waiting call ends on time with a typed
//! error, and later calls fail at once; on every runtime (see `runtimes`).

mod common;

use std::time::{Duration, Instant};

use futures_lite::future;
use mcpwire::{CallOptions, ConnectOptions, Error};
use serde_json::json;

#[macro_use]
mod runtimes;
use common::demo;
use runtimes::Rt;

/// `fut`, or `None` after `limit` (so that a regression fails instead of hanging).
async fn within<T>(
    rt: &Rt,
    limit: Duration,
    fut: impl std::future::Future<Output = T>,
) -> Option<T> {
    future::or(async { Some(fut.await) }, async {
        rt.sleep(limit).await;
        None
    })
    .await
}

fn a_call_waiting_when_the_driver_is_dropped_ends_at_once(rt: &Rt) {
    let (tx, rx) = smol::channel::bounded::<()>(1);
    let (client, driver) = rt
        .connect_with_driver(&demo(), ConnectOptions::default())
        .unwrap();
    std::thread::scope(|s| {
        // The driver runs until told to stop, then is dropped.
        let executor = s.spawn(move || {
            rt.block_on(future::or(driver, async {
                let _ = rx.recv().await;
            }))
        });
        rt.block_on(async {
            client.ready().await.unwrap();
            let started = Instant::now();
            let slow = client.call_tool("slow", json!({"steps": 100, "interval_ms": 100}));
            let stop = async {
                rt.sleep(Duration::from_millis(300)).await;
                tx.send(()).await.unwrap();
                future::pending::<()>().await;
            };
            let outcome = within(
                rt,
                Duration::from_secs(5),
                future::or(slow, async {
                    stop.await;
                    unreachable!()
                }),
            )
            .await
            .expect("the waiting call must end when the driver goes");
            let waited = started.elapsed();
            assert!(waited < Duration::from_secs(2), "{waited:?}");
            match outcome.unwrap_err() {
                Error::Closed(closed) => {
                    assert_eq!(&*closed.reason, "the connection driver was dropped")
                }
                other => panic!("{other:?}"),
            }
            // Later calls fail at once, typed.
            let started = Instant::now();
            let e = within(
                rt,
                Duration::from_secs(5),
                client.call_tool("echo", json!({"message": "x"})),
            )
            .await
            .expect("a call after the driver went must not hang")
            .unwrap_err();
            assert!(matches!(e, Error::Closed(_)), "{e:?}");
            assert!(started.elapsed() < Duration::from_millis(500));
            let e = client.ping().await.unwrap_err();
            assert!(matches!(e, Error::Closed(_)), "{e:?}");
        });
        executor.join().unwrap();
    });
}

fn a_call_waiting_when_the_driver_s_executor_shuts_down_ends_at_once(rt: &Rt) {
    let (tx, rx) = smol::channel::bounded::<()>(1);
    // The driver is a task of an executor that is shut down (dropped with its tasks).
    let (client, executor) =
        rt.connect_on_an_executor_shut_down_later(&demo(), ConnectOptions::default(), rx);
    rt.block_on(async {
        client.ready().await.unwrap();
        let calls: Vec<_> = (0..3)
            .map(|_| client.call_tool("slow", json!({"steps": 100, "interval_ms": 100})))
            .collect();
        let started = Instant::now();
        let all = async {
            let mut outcomes = Vec::new();
            for call in calls {
                outcomes.push(call.await);
            }
            outcomes
        };
        let stop = async {
            rt.sleep(Duration::from_millis(300)).await;
            tx.send(()).await.unwrap();
            future::pending::<Vec<_>>().await
        };
        let outcomes = within(rt, Duration::from_secs(5), future::or(all, stop))
            .await
            .expect("every waiting call must end when the executor goes");
        assert!(started.elapsed() < Duration::from_secs(2));
        for outcome in outcomes {
            match outcome.unwrap_err() {
                Error::Closed(closed) => assert!(closed.reason.contains("driver"), "{closed}"),
                other => panic!("{other:?}"),
            }
        }
        let e = within(rt, Duration::from_secs(5), client.list_tools())
            .await
            .expect("no hang")
            .unwrap_err();
        assert!(matches!(e, Error::Closed(_)), "{e:?}");
    });
    executor.join().unwrap();
}

fn a_call_s_timeout_fires_when_nothing_runs_the_connection(rt: &Rt) {
    // The driver is never polled; a first caller runs the connection, then stops being polled
    // (its future kept, as in a `select!` that went the other way): nothing runs the
    // connection. A second call still ends at its own timeout.
    let (client, driver) = rt
        .connect_with_driver(&demo(), ConnectOptions::default())
        .unwrap();
    rt.block_on(async {
        client.ready().await.unwrap();
        let mut idle =
            Box::pin(client.call_tool("slow", json!({"steps": 100, "interval_ms": 100})));
        assert!(future::poll_once(&mut idle).await.is_none());
        let started = Instant::now();
        let opts = CallOptions::default().timeout(Duration::from_millis(300));
        let outcome = within(
            rt,
            Duration::from_secs(5),
            client.call_tool_with("slow", json!({"steps": 100, "interval_ms": 100}), opts),
        )
        .await
        .expect("the call's own timeout must fire with nothing running the connection");
        let waited = started.elapsed();
        let e = outcome.unwrap_err();
        assert!(e.is_timeout(), "{e}");
        assert!(
            waited < Duration::from_millis(300 + 500),
            "the call outlived its timeout: {waited:?}"
        );
        // The connection is fine: a call made now is answered (this caller runs it).
        let r = client
            .call_tool("echo", json!({"message": "after"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "after");
        drop(idle);
    });
    drop(driver);
}

on_every_runtime!(
    a_call_waiting_when_the_driver_is_dropped_ends_at_once,
    a_call_waiting_when_the_driver_s_executor_shuts_down_ends_at_once,
    a_call_s_timeout_fires_when_nothing_runs_the_connection,
);
