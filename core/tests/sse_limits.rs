//! The SSE decoder's bounds: linear work however the input is split, memory bounded by the cap
//! under hostile input, and the allocations per event (none borrowed, one owned), counted by an
//! allocator that tallies per thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use mcpwire_core::codec::sse::{SseDecoder, SseError};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counter is a
// const-initialised thread local that never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's arguments.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Pushes `body` in chunks of `chunk`, draining borrowed events after each push; returns the
/// number of events and the largest `buffered()` seen after a drain.
fn drain_all(dec: &mut SseDecoder, body: &[u8], chunk: usize) -> (usize, usize) {
    let (mut events, mut peak) = (0, 0);
    for piece in body.chunks(chunk) {
        dec.push(piece);
        while let Some(item) = dec.next_event_ref() {
            if item.is_ok() {
                events += 1;
            }
        }
        peak = peak.max(dec.buffered());
    }
    (events, peak)
}

#[test]
fn a_one_mebibyte_line_in_seven_byte_pushes_is_linear() {
    let payload = "x".repeat(1 << 20);
    let body = format!("data: {payload}\n\n");
    let mut dec = SseDecoder::new();
    let mut data_len = 0;
    for piece in body.as_bytes().chunks(7) {
        dec.push(piece);
        while let Some(item) = dec.next_event_ref() {
            data_len = item.unwrap().data.len();
        }
    }
    assert_eq!(data_len, payload.len());
    let work = dec.work();
    let n = body.len() as u64;
    assert_eq!(work.pushed, n);
    assert!(work.scanned <= n, "scanned {} of {n} bytes", work.scanned);
    // Appended once; the line is never moved while it grows, and handed out in place.
    assert!(
        work.copied <= n + 16,
        "copied {} for {n} bytes",
        work.copied
    );
}

#[test]
fn many_lines_in_tiny_pushes_are_linear() {
    let mut body = String::new();
    for i in 0..20_000 {
        body.push_str(&format!(
            "id: {i}\r\ndata: {{\"n\":{i}}}\r\ndata: more\r\n\r\n"
        ));
    }
    for chunk in [1, 7, 64, 1460] {
        let mut dec = SseDecoder::new();
        let (events, _) = drain_all(&mut dec, body.as_bytes(), chunk);
        assert_eq!(events, 20_000);
        let work = dec.work();
        let n = body.len() as u64;
        assert!(work.scanned <= n, "chunk {chunk}: scanned {}", work.scanned);
        assert!(
            work.copied <= 3 * n,
            "chunk {chunk}: copied {}",
            work.copied
        );
    }
}

#[test]
fn an_endless_line_stays_within_the_cap_and_recovers() {
    let cap = 64 * 1024;
    let mut dec = SseDecoder::with_max_event_size(cap);
    dec.push(b"id: before\ndata: ");
    let mut errors = Vec::new();
    let chunk = vec![b'x'; 16 * 1024];
    for _ in 0..640 {
        dec.push(&chunk);
        while let Some(item) = dec.next_event() {
            errors.push(item.unwrap_err());
        }
        assert!(dec.buffered() <= cap + 5, "buffered {}", dec.buffered());
    }
    assert_eq!(errors, [SseError::EventTooLarge { limit: cap }]);
    dec.push(b"\nid: after\n\ndata: ok\n\n");
    let ev = dec.next_event().unwrap().unwrap();
    assert_eq!(ev.data, "ok");
    assert_eq!(dec.last_event_id(), "after");
    assert!(dec.buffered() < 64);
}

#[test]
fn an_endless_event_stays_within_the_cap() {
    let cap = 64 * 1024;
    let mut dec = SseDecoder::with_max_event_size(cap);
    let lines = "data: 0123456789abcdef0123456789abcdef\n".repeat(500);
    let mut errors = 0;
    for _ in 0..100 {
        dec.push(lines.as_bytes());
        while let Some(item) = dec.next_event_ref() {
            assert!(item.is_err());
            errors += 1;
        }
        assert!(dec.buffered() <= cap + 5, "buffered {}", dec.buffered());
    }
    assert_eq!(errors, 1);
    dec.push(b"\ndata: ok\n\n");
    assert_eq!(dec.next_event().unwrap().unwrap().data, "ok");
}

#[test]
fn an_endless_comment_holds_nothing() {
    let mut dec = SseDecoder::with_max_event_size(1024);
    dec.push(b": ");
    let chunk = vec![b'c'; 4096];
    for _ in 0..1000 {
        dec.push(&chunk);
        assert!(dec.next_event_ref().is_none());
        assert_eq!(dec.buffered(), 0);
    }
    dec.push(b"\ndata: ok\n\n");
    assert_eq!(dec.next_event().unwrap().unwrap().data, "ok");
}

#[test]
fn one_mebibyte_events_at_network_chunk_sizes() {
    let payload = "{\"x\":\"".to_owned() + &"y".repeat((1 << 20) - 8) + "\"}";
    let body = format!("event: message\r\ndata: {payload}\r\n\r\n").repeat(4);
    for chunk in [1460, 16 * 1024, 7] {
        let mut dec = SseDecoder::new();
        let mut seen = 0;
        for piece in body.as_bytes().chunks(chunk) {
            dec.push(piece);
            while let Some(item) = dec.next_event_ref() {
                assert_eq!(item.unwrap().data, payload);
                seen += 1;
            }
        }
        assert_eq!(seen, 4);
        assert!(dec.work().scanned <= body.len() as u64);
    }
}

/// A stream of small MCP-like events with ids, as a server writes them.
fn small_events(count: usize) -> String {
    let mut body = String::new();
    for i in 0..count {
        body.push_str(&format!(
            "event: message\nid: {:08}\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{{\"i\":{i}}}}}\n\n",
            i % 100_000_000
        ));
    }
    body
}

#[test]
fn borrowed_events_allocate_nothing() {
    let body = small_events(2000);
    for chunk in [7, 64, 1460, 16 * 1024] {
        let mut dec = SseDecoder::new();
        // Warm up: the buffers grow to their working size once.
        drain_all(&mut dec, body.as_bytes(), chunk);
        let before = allocations();
        let (events, _) = drain_all(&mut dec, body.as_bytes(), chunk);
        assert_eq!(events, 2000);
        assert_eq!(allocations() - before, 0, "chunk {chunk}");
    }
}

#[test]
fn owned_events_allocate_once_each() {
    let body = small_events(2000);
    for chunk in [7, 64, 1460, 16 * 1024] {
        let mut dec = SseDecoder::new();
        drain_all(&mut dec, body.as_bytes(), chunk);
        let mut kept = Vec::with_capacity(2000);
        let before = allocations();
        for piece in body.as_bytes().chunks(chunk) {
            dec.push(piece);
            while let Some(item) = dec.next_event() {
                kept.push(item.unwrap());
            }
        }
        assert_eq!(kept.len(), 2000);
        assert_eq!(allocations() - before, 2000, "chunk {chunk}");
        assert!(kept.iter().all(|e| e.is_message()));
    }
}
