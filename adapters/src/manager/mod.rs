//! Many servers at once: the [`Manager`] connects them concurrently, isolates their failures,
//! restarts and reconnects them with backoff, caches their lists, and gives the host one
//! namespace of tools.
//!
//! Its decisions are small pure types, testable without IO: [`backoff`] (when to try again),
//! [`naming`] (one legal, collision-free name per tool), [`cache`] (what is served while a
//! server starts, and what is remembered between runs).

pub mod backoff;
pub mod cache;
pub mod naming;
