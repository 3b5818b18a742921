//! What an HTTP connection's exchanges did, counted: how many started, waited in the queue,
//! came back on a reused connection, or were sent once more after they surely never left.
//! The hidden states of the pool, readable without timing anything.

use std::collections::{HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcpwire_core::{ExchangeId, HttpRequest};

/// A snapshot of an HTTP connection's counters ([`Client::http_counters`](crate::Client::http_counters)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpCounters {
    /// Exchanges handed to the HTTP client so far.
    pub started: u64,
    /// Exchanges in flight now (sent, not yet ended).
    pub in_flight: usize,
    /// Exchanges waiting now for room under the connection limit
    /// ([`HttpClientOptions::max_connections_per_host`](crate::HttpClientOptions::max_connections_per_host)).
    pub queued: usize,
    /// Exchanges that ever had to wait in that queue.
    pub queued_total: u64,
    /// The most exchanges that waited at once.
    pub queued_peak: usize,
    /// Responses that came on a connection an earlier exchange had used (keep-alive or
    /// HTTP/2 reuse), judged by the local socket address.
    pub reused_connections: u64,
    /// Distinct connections seen.
    pub connections: u64,
    /// Responses that came over HTTP/2.
    pub http2_responses: u64,
    /// Exchanges that failed before any byte of them left (no connection, failed TLS
    /// handshake, a stream the server refused unprocessed): the connection may send those once
    /// more, which [`HttpCounters::started`] then counts again.
    pub unsent_failures: u64,
}

/// The live counters, shared by the driver (which updates them) and the client handles.
#[derive(Debug, Default)]
pub(crate) struct CounterCells {
    started: AtomicU64,
    in_flight: AtomicUsize,
    queued: AtomicUsize,
    queued_total: AtomicU64,
    queued_peak: AtomicUsize,
    reused: AtomicU64,
    connections: AtomicU64,
    http2: AtomicU64,
    unsent: AtomicU64,
    /// The local addresses of the connections seen, to tell a reused one.
    seen: Mutex<HashSet<SocketAddr>>,
}

impl CounterCells {
    pub(crate) fn snapshot(&self) -> HttpCounters {
        HttpCounters {
            started: self.started.load(Ordering::Relaxed),
            in_flight: self.in_flight.load(Ordering::Relaxed),
            queued: self.queued.load(Ordering::Relaxed),
            queued_total: self.queued_total.load(Ordering::Relaxed),
            queued_peak: self.queued_peak.load(Ordering::Relaxed),
            reused_connections: self.reused.load(Ordering::Relaxed),
            connections: self.connections.load(Ordering::Relaxed),
            http2_responses: self.http2.load(Ordering::Relaxed),
            unsent_failures: self.unsent.load(Ordering::Relaxed),
        }
    }

    /// A response head came on the connection with this local address; returns whether that
    /// connection was used before.
    pub(crate) fn response(&self, local: Option<SocketAddr>, http2: bool) -> bool {
        if http2 {
            self.http2.fetch_add(1, Ordering::Relaxed);
        }
        let Some(local) = local else { return false };
        let fresh = self.seen.lock().expect("not poisoned").insert(local);
        if fresh {
            self.connections.fetch_add(1, Ordering::Relaxed);
        } else {
            self.reused.fetch_add(1, Ordering::Relaxed);
        }
        !fresh
    }

    pub(crate) fn unsent(&self) {
        self.unsent.fetch_add(1, Ordering::Relaxed);
    }
}

/// The exchanges waiting for room, oldest first, and the room there is.
pub(crate) struct Admission {
    cells: Arc<CounterCells>,
    waiting: VecDeque<HttpRequest>,
    in_flight: usize,
    /// Exchanges one connection carries at once: 1 over HTTP/1.1, more once HTTP/2 is seen.
    per_connection: usize,
    max_connections: usize,
    streams_per_connection: usize,
}

impl Admission {
    pub(crate) fn new(
        cells: Arc<CounterCells>,
        max_connections: usize,
        streams_per_connection: usize,
    ) -> Self {
        Admission {
            cells,
            waiting: VecDeque::new(),
            in_flight: 0,
            per_connection: 1,
            max_connections: max_connections.max(1),
            streams_per_connection: streams_per_connection.max(1),
        }
    }

    fn room(&self) -> usize {
        self.max_connections * self.per_connection
    }

    /// Over HTTP/2 one connection carries many exchanges at once.
    pub(crate) fn saw_http2(&mut self) {
        self.per_connection = self.streams_per_connection;
    }

    /// `request` goes now (returned) or waits its turn.
    pub(crate) fn offer(&mut self, request: HttpRequest) -> Option<HttpRequest> {
        if self.waiting.is_empty() && self.in_flight < self.room() {
            return Some(self.admit(request));
        }
        self.waiting.push_back(request);
        let c = &self.cells;
        c.queued_total.fetch_add(1, Ordering::Relaxed);
        c.queued.store(self.waiting.len(), Ordering::Relaxed);
        c.queued_peak
            .fetch_max(self.waiting.len(), Ordering::Relaxed);
        None
    }

    fn admit(&mut self, request: HttpRequest) -> HttpRequest {
        self.in_flight += 1;
        self.cells.started.fetch_add(1, Ordering::Relaxed);
        self.cells
            .in_flight
            .store(self.in_flight, Ordering::Relaxed);
        request
    }

    /// An exchange in flight ended.
    pub(crate) fn ended(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.cells
            .in_flight
            .store(self.in_flight, Ordering::Relaxed);
    }

    /// Drops a waiting exchange (aborted before it went); returns whether it was waiting.
    pub(crate) fn withdraw(&mut self, id: ExchangeId) -> bool {
        let before = self.waiting.len();
        self.waiting.retain(|r| r.exchange != id);
        self.cells
            .queued
            .store(self.waiting.len(), Ordering::Relaxed);
        self.waiting.len() != before
    }

    /// How many exchanges wait.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// The next waiting exchange that now has room.
    pub(crate) fn next(&mut self) -> Option<HttpRequest> {
        if self.in_flight >= self.room() {
            return None;
        }
        let request = self.waiting.pop_front()?;
        self.cells
            .queued
            .store(self.waiting.len(), Ordering::Relaxed);
        Some(self.admit(request))
    }
}
