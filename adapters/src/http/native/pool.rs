//! The pool of mcpwire's own HTTP/1.1 client: idle keep-alive connections by server, each
//! looked at before it is reused ([`Conn::is_open`]: a connection the peer closed is never
//! reused), and the buffers finished requests and responses gave back, so that a request
//! allocates nothing for its bytes or its response's.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::conn::Conn;
use crate::http::tls_diagnosis;

/// The most idle connections kept per host.
const MAX_IDLE_PER_HOST: usize = 32;

/// The most buffers kept for reuse, and the largest kept.
const SPARE_BUFFERS: usize = 8;
const SPARE_CAPACITY: usize = 64 * 1024;

/// Idle connections by server (a [`Target`](super::target::Target)'s key), and spare buffers.
#[derive(Default)]
pub(super) struct Pool {
    idle: Mutex<HashMap<String, Vec<Idle>>>,
    /// Buffers a finished request or response gave back, for the next one: no allocation a
    /// request for its bytes or its response's.
    spare: Mutex<Vec<Vec<u8>>>,
    lifetime: Duration,
    /// The servers (`host:port`) that have answered in HTTP.
    pub(super) answered: tls_diagnosis::Answered,
}

struct Idle {
    conn: Conn,
    since: Instant,
}

impl Pool {
    /// An empty pool whose idle connections live `lifetime`.
    pub(super) fn new(lifetime: Duration) -> Pool {
        Pool {
            lifetime,
            ..Pool::default()
        }
    }

    /// An empty buffer, one given back if there is one.
    pub(super) fn buffer(&self) -> Vec<u8> {
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        spare.pop().unwrap_or_default()
    }

    /// Keeps `buf` for another request, unless it is large or enough are kept.
    pub(super) fn recycle(&self, mut buf: Vec<u8>) {
        if buf.capacity() > SPARE_CAPACITY || buf.capacity() == 0 {
            return;
        }
        buf.clear();
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        if spare.len() < SPARE_BUFFERS {
            spare.push(buf);
        }
    }

    /// An idle connection to `authority` that is still open, if there is one.
    pub(super) fn take(&self, authority: &str) -> Option<Conn> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = idle.get_mut(authority)?;
        while let Some(mut conn) = list.pop() {
            if conn.since.elapsed() < self.lifetime && conn.conn.is_open() {
                return Some(conn.conn);
            }
        }
        None
    }

    pub(super) fn put(&self, authority: &str, conn: Conn) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if !idle.contains_key(authority) {
            idle.insert(authority.to_owned(), Vec::new());
        }
        let Some(list) = idle.get_mut(authority) else {
            return;
        };
        if list.len() < MAX_IDLE_PER_HOST {
            list.push(Idle {
                conn,
                since: Instant::now(),
            });
        }
    }
}
