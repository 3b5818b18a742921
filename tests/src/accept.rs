//! The accept loop the scripted servers share: a listener on a free port of 127.0.0.1 whose
//! connections are handed over one by one until the server stops.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A listener and its accept thread; [`Acceptor::stop`] ends the thread.
pub(crate) struct Acceptor {
    addr: SocketAddr,
    thread: Option<JoinHandle<()>>,
}

impl Acceptor {
    /// Listens on a free port of 127.0.0.1 and, on a thread named `name`, hands each accepted
    /// connection (with `TCP_NODELAY`) and its index to `each`, until `stopped` says so.
    pub(crate) fn start(
        name: &str,
        stopped: impl Fn() -> bool + Send + 'static,
        mut each: impl FnMut(TcpStream, usize) + Send + 'static,
    ) -> Acceptor {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                for (index, conn) in listener.incoming().enumerate() {
                    if stopped() {
                        return;
                    }
                    let Ok(stream) = conn else { continue };
                    let _ = stream.set_nodelay(true);
                    each(stream, index);
                }
            })
            .expect("spawn the accept thread");
        Acceptor {
            addr,
            thread: Some(thread),
        }
    }

    /// The address it listens on.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Wakes the blocking accept, which then sees that it is `stopped` (the caller has made it
    /// so), and waits for the thread to end.
    pub(crate) fn stop(&mut self) {
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(500));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Joins the connection threads that end by `deadline`; whatever is still running then is
/// detached. Whether all of them ended.
pub(crate) fn join_until(threads: Vec<JoinHandle<()>>, deadline: Instant) -> bool {
    let mut running = threads;
    while !running.is_empty() && Instant::now() < deadline {
        let (done, rest): (Vec<_>, Vec<_>) = running.into_iter().partition(|t| t.is_finished());
        for t in done {
            let _ = t.join();
        }
        running = rest;
        if !running.is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    running.is_empty()
}
