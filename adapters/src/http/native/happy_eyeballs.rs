//! Happy Eyeballs (RFC 8305, sections 4 and 5, simplified as libcurl does): the TCP connect of
//! the HTTP/1.1 client to a host with several addresses.
//!
//! Trying one address after another waits out each one that never answers (a dead IPv6 route
//! holds the connection until the connect timeout). Here the addresses are tried in an order
//! where the families alternate, and each attempt has a short delay to succeed before the next
//! one starts beside it; one that fails starts the next at once. The first connection made wins
//! and the attempts still running are dropped, which closes their sockets. The caller bounds the
//! whole with its own connect timeout.

use std::io;
use std::net::SocketAddr;
use std::task::Poll;
use std::time::{Duration, Instant};

use crate::future::BoxFuture;
use crate::runtime::net::Socket;
use crate::runtime::Runtime;

/// How long an attempt runs alone before the next one starts beside it: RFC 8305's
/// recommended Connection Attempt Delay, long enough for a nearby server to answer on the first
/// address, short enough not to be felt when it does not.
const ATTEMPT_DELAY: Duration = Duration::from_millis(250);

/// Connects to the first of `addrs` (in the resolver's order) to answer, with
/// [`ATTEMPT_DELAY`] between the starts of the attempts, on `runtime` (its sockets and its
/// timer); the last error when none does.
pub(crate) async fn connect(runtime: &Runtime, addrs: Vec<SocketAddr>) -> io::Result<Socket> {
    connect_with_delay(runtime, addrs, ATTEMPT_DELAY).await
}

/// [`connect`] with `delay` between the starts of the attempts (the tests use a short one).
async fn connect_with_delay(
    runtime: &Runtime,
    addrs: Vec<SocketAddr>,
    delay: Duration,
) -> io::Result<Socket> {
    race(runtime, interleave(addrs), delay, |addr| {
        let runtime = runtime.clone();
        Box::pin(async move { runtime.connect_tcp(addr).await })
    })
    .await
}

/// The first of the attempts `attempt` makes for `addrs`, in this order, to succeed: the next
/// starts when one has failed or the latest has run for `delay`, and the rest are dropped once
/// one succeeds. The last error when all fail. Apart from the sockets, so the tests can make
/// an attempt that never ends wherever they run; `runtime`'s timer.
async fn race<T>(
    runtime: &Runtime,
    addrs: Vec<SocketAddr>,
    delay: Duration,
    mut attempt: impl FnMut(SocketAddr) -> BoxFuture<io::Result<T>>,
) -> io::Result<T> {
    let mut waiting = addrs.into_iter();
    // The attempts in progress, oldest first (boxed: each stays put while the list changes).
    let mut attempts: Vec<BoxFuture<io::Result<T>>> = Vec::new();
    // When the latest attempt has had its delay; set as each attempt starts.
    let mut timer = runtime.timer();
    let mut last = None;
    std::future::poll_fn(|cx| loop {
        // How many new attempts are due: one for each that failed, one when none runs.
        let mut due = 0;
        let mut i = 0;
        while i < attempts.len() {
            match attempts[i].as_mut().poll(cx) {
                // Returning drops the other attempts, which closes their sockets.
                Poll::Ready(Ok(won)) => return Poll::Ready(Ok(won)),
                Poll::Ready(Err(e)) => {
                    last = Some(e);
                    drop(attempts.remove(i));
                    due += 1;
                }
                Poll::Pending => i += 1,
            }
        }
        if attempts.is_empty() {
            due = due.max(1);
        } else if due == 0 && timer.poll(cx).is_ready() {
            // The latest attempt has had its delay without an answer.
            due = 1;
        }
        let mut started = false;
        for addr in waiting.by_ref().take(due) {
            attempts.push(attempt(addr));
            started = true;
        }
        if started {
            timer.set_at(Instant::now() + delay);
            // Poll the new attempts and the timer so they can wake this task.
            continue;
        }
        if attempts.is_empty() {
            let e = last
                .take()
                .unwrap_or_else(|| io::Error::other("no address to connect to"));
            return Poll::Ready(Err(e));
        }
        return Poll::Pending;
    })
    .await
}

/// `addrs` in the order to try them: the families alternate, starting with the first address's
/// (the resolver puts the one it prefers first), each family in the resolver's order. A family
/// that does not work then holds the other back by one attempt, not by all of its addresses.
fn interleave(addrs: Vec<SocketAddr>) -> Vec<SocketAddr> {
    let Some(first) = addrs.first() else {
        return addrs;
    };
    let first_v6 = first.is_ipv6();
    let len = addrs.len();
    let (preferred, other): (Vec<_>, Vec<_>) =
        addrs.into_iter().partition(|a| a.is_ipv6() == first_v6);
    let (mut preferred, mut other) = (preferred.into_iter(), other.into_iter());
    let mut out = Vec::with_capacity(len);
    loop {
        let (a, b) = (preferred.next(), other.next());
        if a.is_none() && b.is_none() {
            return out;
        }
        out.extend(a);
        out.extend(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::on_each;
    use futures_lite::{future, FutureExt};
    use std::future::Future;
    use std::net::TcpListener;
    use std::sync::Arc;

    /// A listener on 127.0.0.1 (the system completes connects to it without an `accept`).
    fn listener() -> (TcpListener, SocketAddr) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        (listener, addr)
    }

    /// An address on 127.0.0.1 where nothing listens: a connect to it is refused.
    fn refusing() -> SocketAddr {
        listener().1
    }

    /// `connecting` run to its end on `runtime`, failed after 10 s (a test that goes wrong
    /// does not hang).
    async fn within_10s<T>(
        runtime: &Runtime,
        connecting: impl Future<Output = io::Result<T>>,
    ) -> io::Result<T> {
        connecting
            .or(async {
                runtime.sleep(Duration::from_secs(10)).await;
                Err(io::Error::new(io::ErrorKind::TimedOut, "no end in 10 s"))
            })
            .await
    }

    fn peer(stream: &Socket) -> SocketAddr {
        let peer = match stream {
            #[cfg(feature = "smol")]
            Socket::Smol(stream) => stream.get_ref().get_ref().peer_addr(),
            #[cfg(feature = "tokio")]
            Socket::Tokio(stream) => stream.peer_addr(),
        };
        peer.unwrap()
    }

    #[test]
    fn the_families_alternate_starting_with_the_first_address() {
        let v6 = |n: u16| SocketAddr::from(([0x2001, 0xdb8, 0, 0, 0, 0, 0, n], 80));
        let v4 = |n: u8| SocketAddr::from(([192, 0, 2, n], 80));
        assert_eq!(
            interleave(vec![v6(1), v6(2), v4(1), v4(2)]),
            [v6(1), v4(1), v6(2), v4(2)]
        );
        assert_eq!(
            interleave(vec![v4(1), v6(1), v6(2), v6(3), v4(2)]),
            [v4(1), v6(1), v4(2), v6(2), v6(3)]
        );
        assert_eq!(interleave(vec![v4(1), v4(2)]), [v4(1), v4(2)]);
        assert_eq!(interleave(vec![v6(1)]), [v6(1)]);
        assert_eq!(interleave(vec![]), []);
    }

    #[test]
    fn an_attempt_that_never_ends_is_passed_after_the_delay() {
        on_each(|runtime| {
            Box::pin(async move {
                // The first attempt hangs wherever this runs (holding `held` until it is
                // dropped); the second is a real connect.
                let silent = SocketAddr::from(([192, 0, 2, 1], 9));
                let (_listener, live) = listener();
                let held = Arc::new(());
                let delay = Duration::from_millis(100);
                let started = Instant::now();
                let attempt = |addr| -> BoxFuture<io::Result<Socket>> {
                    if addr == silent {
                        let held = held.clone();
                        Box::pin(async move {
                            let _held = held;
                            future::pending().await
                        })
                    } else {
                        let runtime = runtime.clone();
                        Box::pin(async move { runtime.connect_tcp(addr).await })
                    }
                };
                let raced = race(&runtime, vec![silent, live], delay, attempt);
                let stream = within_10s(&runtime, raced).await.unwrap();
                assert_eq!(peer(&stream), live);
                // Not before the delay; long before any connect timeout.
                let took = started.elapsed();
                assert!(took >= delay && took < Duration::from_secs(3), "{took:?}");
                assert_eq!(
                    Arc::strong_count(&held),
                    1,
                    "the attempt that lost is dropped"
                );
            })
        });
    }

    #[test]
    fn an_address_that_never_answers_is_passed_after_the_delay() {
        on_each(|runtime| {
            Box::pin(async move {
                // Routed nowhere: a connect to it typically hangs. Where there is no route at
                // all it fails at once (this then shows the fallback only), and where something
                // on the way answers for every address (an intercepting proxy) it may win:
                // either is a success.
                let blackhole = SocketAddr::from(([10, 255, 255, 1], 9));
                let (_listener, live) = listener();
                let started = Instant::now();
                let delay = Duration::from_millis(100);
                let connecting = connect_with_delay(&runtime, vec![blackhole, live], delay);
                let stream = within_10s(&runtime, connecting).await.unwrap();
                assert!([live, blackhole].contains(&peer(&stream)));
                assert!(started.elapsed() < Duration::from_secs(3));
            })
        });
    }

    #[test]
    fn a_refused_address_passes_to_the_next_without_the_delay() {
        on_each(|runtime| {
            Box::pin(async move {
                // A delay longer than the cap: only the refusal can have started the second
                // attempt.
                let (_listener, live) = listener();
                let delay = Duration::from_secs(60);
                let connecting = connect_with_delay(&runtime, vec![refusing(), live], delay);
                let stream = within_10s(&runtime, connecting).await.unwrap();
                assert_eq!(peer(&stream), live);
            })
        });
    }

    #[test]
    fn all_refused_is_the_last_error() {
        on_each(|runtime| {
            Box::pin(async move {
                let delay = Duration::from_millis(100);
                let connecting = connect_with_delay(&runtime, vec![refusing(), refusing()], delay);
                let Err(err) = within_10s(&runtime, connecting).await else {
                    panic!("refused, yet connected");
                };
                assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused, "{err}");
                let none = connect_with_delay(&runtime, vec![], delay);
                assert!(within_10s(&runtime, none).await.is_err());
            })
        });
    }
}
